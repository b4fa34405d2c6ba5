/* SPDX-License-Identifier: BSD-2-Clause */
/* inform.h - event subscriptions (InformInfo, IBA 13.4.8.3 and 15.2.5.12) and the Reports
 * they earn: a port subscribes with SubnAdmSet(InformInfo) Subscribe=1 to traps by number,
 * type and producer (0xFFFF / 0xFFFFFF: any) from a LID range or one GID, and unsubscribes
 * with Subscribe=0 naming the QPN it subscribed from. InformInfoRecords list the
 * subscriptions. A notice (traps 64/65 raised by the SA when end ports come and go, 128 and
 * the others the fabric sends the SM) is reported to every matching subscriber with
 * SubnAdmReport; a Report not acknowledged by a ReportResp is sent again, and a subscriber
 * that acknowledges none of SA_INFORM_MAX_FAILS reports in a row is dropped. This module
 * keeps the state; the agent sends the MADs (the send callback). */
#ifndef IBSM_SA_INFORM_H
#define IBSM_SA_INFORM_H

#include <glib.h>
#include <stdint.h>
#include "sa/compmask.h"

#define II_SIZE 36                 /* InformInfo */
#define IIR_SIZE 64                /* InformInfoRecord */
#define NOTICE_SIZE 80
#define SA_INFORM_MAX 4096         /* subscriptions at most (then NO_RESOURCES) */
#define SA_INFORM_MAX_PER_PORT 64  /* of one port not presenting the SM_Key: a host's event
				    * subscribers (the kernel's SA client, ibacm, a few daemons)
				    * take a handful; no host may take the SA's whole table */
#define SA_INFORM_RETRIES 3        /* sends of a Report after the first */
#define SA_INFORM_MAX_FAILS 3
#define NOTICE_TYPE_SUBNET_MGMT 3
#define NOTICE_PRODUCER_CLASS_MANAGER 4      /* unacknowledged Reports in a row before a subscriber goes */

struct sa_inform;

/* Who asks: the requester's port (GUID, LID, and the QPN its request came from). */
struct sa_requester {
	uint64_t guid, prefix;        /* its port GUID, and the GID prefix it is known by */
	uint16_t lid;
	uint32_t qpn;
	int trusted;                  /* presented our SM_Key */
};

/* Sends one Report (notice, NOTICE_SIZE bytes) with TID tid to lid/qpn. */
typedef void (*sa_report_send_fn)(void *ctx, uint16_t lid, uint32_t qpn, uint64_t tid,
				  const uint8_t *notice);

struct sa_inform_stats {
	uint64_t subscribed, unsubscribed, notices, reports_sent, reports_acked, reports_resent,
		 reports_failed, dropped_subscribers;
	uint64_t refused;             /* subscriptions refused NO_RESOURCES (a port's share, or all) */
};

struct sa_inform *sa_inform_new(sa_report_send_fn send, void *ctx);
void sa_inform_free(struct sa_inform *in);
const struct sa_layout *iir_layout(void);
/* Subscriptions of port guid. */
unsigned sa_inform_count_of(const struct sa_inform *in, uint64_t guid);
/* SubnAdmSet(InformInfo): ii (II_SIZE bytes) from rq. 0 and *answer (II_SIZE bytes, as
 * received), or an SA status: NO_RESOURCES beyond SA_INFORM_MAX subscriptions in all, or
 * SA_INFORM_MAX_PER_PORT of an untrusted requester's port. */
uint16_t sa_inform_set(struct sa_inform *in, const uint8_t *ii, const struct sa_requester *rq,
		       uint8_t *answer);
/* InformInfoRecords matching (rec, mask), appended to out; the QPN shows only to a trusted
 * requester. visible(ctx, subscriber GUID) filters (NULL: all). */
void sa_inform_records(struct sa_inform *in, const uint8_t *rec, uint64_t mask, int trusted,
		       int (*visible)(void *ctx, uint64_t guid), void *ctx, GByteArray *out);
/* Reports notice to every subscription it matches (subject: the port GUID the notice is about,
 * 0 for none; may_see(ctx, subscriber, subject) filters, NULL: all). now in seconds. Returns
 * the number of Reports sent. */
unsigned sa_inform_notice(struct sa_inform *in, const uint8_t *notice, uint64_t subject,
			  int (*may_see)(void *ctx, uint64_t subscriber, uint64_t subject), void *ctx,
			  double now);
/* A ReportResp with this TID arrived. */
void sa_inform_acked(struct sa_inform *in, uint64_t tid);
/* Sends Reports again whose time has come, drops subscribers that never answer. Returns the
 * number of Reports still waiting for their ReportResp. */
unsigned sa_inform_tick(struct sa_inform *in, double now);
/* Every subscription of the port with this GUID goes (it left the fabric). */
void sa_inform_forget(struct sa_inform *in, uint64_t guid);
unsigned sa_inform_count(const struct sa_inform *in);
const struct sa_inform_stats *sa_inform_stats(const struct sa_inform *in);

/* What a restart keeps (sa/sa_db.c): one subscription, its InformInfo as subscribed (II_SIZE
 * bytes, QPN the subscriber's), and where its Reports go. */
struct sa_inform_sub {
	uint64_t guid, prefix;        /* the subscriber's port GUID and GID prefix */
	uint16_t lid, enumv;          /* Reports go to LID; InformInfoRecord.Enum */
	uint32_t qpn;                 /* ... and QPN */
	const uint8_t *ii;
};
void sa_inform_foreach(const struct sa_inform *in,
		       void (*fn)(void *ctx, const struct sa_inform_sub *s), void *ctx);
/* A subscription as it was before a restart: 0 added, 1 the same one is there already (kept),
 * -1 SA_INFORM_MAX subscriptions are there. Its Enum is kept unless the port has another
 * subscription with it. */
int sa_inform_restore(struct sa_inform *in, const struct sa_inform_sub *x);

/* Builds a generic notice: trap number, type, producer type, issuer LID and GID, data
 * details (54 bytes, or NULL: zero). */
void sa_notice_build(uint8_t *notice, uint16_t trap, uint8_t type, uint32_t producer,
		     uint16_t issuer_lid, const uint8_t *issuer_gid, const uint8_t *details);

#endif
