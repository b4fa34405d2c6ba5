/* SPDX-License-Identifier: BSD-2-Clause */
/* inputs.h - everything the SA answers from, as one snapshot the SM fills and hands over whole
 * (sa_publish, sa/publish.h): the routed generation and its P_Key tables, what the switches'
 * MFTs and the ports' SL2VL / VLArb tables hold, the policies in force, the configuration
 * PathRecords carry, and this SM and the others. A request is answered from one snapshot,
 * never from parts of two. The SM keeps its own (struct sm) and changes it where its state
 * changes; the SA keeps a copy of the last one handed over. */
#ifndef IBSM_SA_INPUTS_H
#define IBSM_SA_INPUTS_H

#include <glib.h>
#include <stdint.h>

struct routing_result;
struct sa_pkeys;
struct mft_memory;
struct vlt_memory;
struct qos_policy;
struct part_policy;

/* Another SM the last SMInfo poll found (its port's LID, what its SMInfo said). */
struct sa_remote_sm {
	uint64_t guid, sm_key;
	uint32_t act_count;
	uint16_t lid;
	uint8_t priority, state;
};

struct sa_inputs {
	/* the routed generation (a reference; NULL: none yet) and its P_Key tables as the
	 * programming pass left them (a reference; NULL: not known): set together
	 * (sa_inputs_set_routes) */
	struct routing_result *r;
	struct sa_pkeys *pk;
	/* the programmer's memories, live (not copied; they outlive the SA): what the switches'
	 * MFTs hold (MFTRecords), what SL2VL and VLArb tables hold (their records); NULL: not
	 * known */
	const struct mft_memory *mft;
	const struct vlt_memory *vlt;
	/* the policies in force, not copied: each must stay valid until a snapshot without it
	 * has been handed over. qos: the QoS policy PathRecords are shaped by (-Q; NULL: none);
	 * parts: the partitions (the SL of their paths, their names in the QoS policy; NULL:
	 * none) */
	const struct qos_policy *qos;
	const struct part_policy *parts;
	uint64_t sm_key;           /* the SM's SM_Key (SMInfoRecords show it to trusted requesters) */
	/* sa_key (OpenSM's): a request with another non-zero SM_Key is dropped, so a non-zero one
	 * is trusted (keys in records, ServiceKeys, proxy joins, security traps); only a request
	 * presenting it exactly (0 too, when it is 0) gets P_KeyTableRecords */
	uint64_t sa_key;
	/* drop_event_subscriptions (OpenSM's): the subscriptions of an end port that left the
	 * fabric go with it (0: they stay, as OpenSM's default) */
	int drop_event_subs;
	int consolidate_snm;       /* consolidate_ipv6_snm_req: IPv6 SNM groups share an MLID */
	int qos_on;                /* -Q (qos): without it a partition's sl= is taken as 0 */
	uint64_t subnet_prefix;    /* of GIDs in PathRecords and notices */
	uint8_t packet_life;       /* PacketLifeTime of paths */
	/* what PathRecords to an off-subnet DGID (through a router) carry: rtr_pr_* */
	uint32_t rtr_flow_label;
	uint8_t rtr_tclass, rtr_sl, rtr_mtu, rtr_rate;
	/* prefix_routes_file (struct prefix_route, sa/prefix_routes.h; a reference): the router
	 * per off-subnet prefix; NULL: none read, every off-subnet DGID to the first router */
	GArray *prefix_routes;
	/* multicast: disable_multicast, ipoib_mcgroup_creation_validation, mcgroup_join_validation */
	int mc_disabled, mc_create_check, mc_join_check;
	int mfttop;                /* use_mfttop: the switches' MulticastFDBTop is programmed */
	int master;                /* only a master answers */
	uint8_t priority, state;   /* this SM, as SMInfoRecord shows it */
	uint32_t act_count;
	struct sa_remote_sm *remote; /* the other SMs (owned, n_remote of them) */
	unsigned n_remote;
};

/* The SA's defaults: no generation, not master, GID prefix fe80::/64, PacketLifeTime 18, SA_Key 1. */
void sa_inputs_init(struct sa_inputs *in);
/* The generation r (a reference is taken; NULL: none) and its P_Key tables pk (taken over;
 * NULL: not known), in place of those in holds. */
void sa_inputs_set_routes(struct sa_inputs *in, struct routing_result *r, struct sa_pkeys *pk);
/* The prefix routes (taken over; NULL: none), in place of those in holds. */
void sa_inputs_set_prefix_routes(struct sa_inputs *in, GArray *routes);
/* The other SMs (copied; n 0: none). */
void sa_inputs_set_remote_sms(struct sa_inputs *in, const struct sa_remote_sm *sms, unsigned n);
/* to becomes a copy of from with references of its own (what to held is not released: the
 * caller clears it first, or keeps it). */
void sa_inputs_copy(struct sa_inputs *to, const struct sa_inputs *from);
/* Drops what in holds (references, the other SMs) and leaves it as sa_inputs_init does. */
void sa_inputs_clear(struct sa_inputs *in);

#endif
