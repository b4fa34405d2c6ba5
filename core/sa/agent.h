/* SPDX-License-Identifier: BSD-2-Clause */
/* agent.h - the SA agent (management class 0x03): answers Get and GetTable for the record
 * kinds of sa/records.h, and ClassPortInfo, from the last published generation, and only
 * while this SM is master (a standby drops SA requests, counted). */
#ifndef IBSM_SA_AGENT_H
#define IBSM_SA_AGENT_H

#include <glib.h>
#include <stdint.h>
#include "mad/dispatch.h"
#include "routing/result.h"
#include "policy/partitions.h"
#include "policy/qos_policy.h"
#include "program/mft.h"
#include "program/vltables.h"
#include "sa/mcast_groups.h"
#include "sa/pkeys.h"

struct sa;

struct sa_stats {
	uint64_t requests, answered, not_master, bad, bad_key, no_records, unsupported;
	uint64_t reports_sent, reports_acked, subscriptions;
	uint64_t busy;             /* requests answered BUSY (the queue was full) */
	uint64_t queued_max;       /* the most requests waiting at once */
	uint64_t mcast_changes;    /* joins and leaves done */
	uint64_t mcast_groups;     /* multicast groups now */
	uint64_t too_big;          /* tables refused TOO_MANY_RECORDS (over SA_ANSWER_MAX bytes) */
	uint64_t subscriptions_refused, joins_refused; /* NO_RESOURCES: a port's share, or all */
};

/* What a request is answered with: a status, or the records (rec_size bytes each; a Get's
 * one record, a GetTable's table). recs is the caller's. */
struct sa_answer {
	uint16_t status;
	uint8_t method;            /* the response's (GetResp, GetTableResp, DeleteResp) */
	int table;
	size_t rec_size;
	GByteArray *recs;
};

/* Registers the SA's methods with d (d NULL: an SA that only computes answers, for tests and
 * fuzzing). NULL if the record tables are inconsistent (logged). */
struct sa *sa_new(struct dispatch *d);
void sa_free(struct sa *sa);
/* The routed generation answers come from from now on (a reference is taken; NULL: none)
 * and its P_Key tables (taken over; NULL: not known): switched in one step, so a request
 * sees one generation whole. */
void sa_publish(struct sa *sa, struct routing_result *r, struct sa_pkeys *pk);
/* A trap the SM received (its SMP data: the Notice without IssuerGID), reported to the
 * subscribers it matches. */
void sa_report_trap(struct sa *sa, const uint8_t *smp_notice);
/* Multicast: changed(ctx, mlid) after every join and leave (the MFTs need the group's tree
 * again); the groups themselves; the groups a partition policy asks for made (NULL: the default
 * partition's), the number new; what the switches' MFTs hold, for MFTRecords. */
void sa_set_mcast_hook(struct sa *sa, void (*changed)(void *ctx, uint16_t mlid), void *ctx);
struct mc_groups *sa_mcast_groups(struct sa *sa);
unsigned sa_mcast_partitions(struct sa *sa, const struct part_policy *pp);
void sa_set_mft(struct sa *sa, const struct mft_memory *mft);
/* The QoS policy PathRecords and MultiPathRecords are shaped by (NULL: none, as without -Q);
 * pol must stay valid until replaced; pp gives partition names (copied). */
void sa_set_qos_policy(struct sa *sa, const struct qos_policy *pol, const struct part_policy *pp);
/* The partitions in force: the SL (sl=) of paths in each (copied), as OpenSM gives a path
 * whose QoS level names no SL. */
void sa_set_partitions(struct sa *sa, const struct part_policy *pp);
/* What the SL2VL and VLArb tables hold (program/vltables.h), for their records. */
void sa_set_vl_tables(struct sa *sa, const struct vlt_memory *vlt);
/* Our SM_Key: a request presenting it sees the keys in records (M_Key, SM_Key). */
void sa_set_sm_key(struct sa *sa, uint64_t sm_key);
/* What PathRecords carry from the configuration: GIDs' subnet prefix, PacketLifeTime. */
void sa_set_path_env(struct sa *sa, uint64_t subnet_prefix, uint8_t packet_life);
/* This SM's priority, state and ActCount, as SMInfoRecord shows them. */
void sa_set_self(struct sa *sa, uint8_t priority, uint8_t state, uint32_t act_count);
/* The other SMs the last SMInfo poll found (copied), for SMInfoRecord. */
struct sa_remote_sm;
void sa_set_remote_sms(struct sa *sa, const struct sa_remote_sm *sms, unsigned n);
/* Master or not: only a master answers. */
void sa_set_master(struct sa *sa, int master);
const struct sa_stats *sa_stats(struct sa *sa);
struct sa_request;
/* The answer to a decoded request from the published generation (no MAD sent); `now` in
 * seconds of a monotonic clock (service leases). */
void sa_compute(struct sa *sa, const struct sa_request *rq, double now, struct sa_answer *a);

#endif
