/* SPDX-License-Identifier: BSD-2-Clause */
/* records.h - the SA's records built from one fabric generation: each kind is a layout (its
 * components, sa/compmask.h) and a builder that appends every record of the generation, which
 * sa_kind_answer() shows the requester as far as its partitions allow and filters by the
 * request's component mask. The kinds are listed, with every other attribute the SA serves,
 * in the one table of sa/handlers.c. */
#ifndef IBSM_SA_RECORDS_H
#define IBSM_SA_RECORDS_H

#include <glib.h>
#include "fabric/model.h"
#include "program/mft.h"
#include "program/vltables.h"
#include "routing/result.h"
#include "sa/compmask.h"
#include "sa/index.h"
#include "sa/inputs.h"
#include "sa/pkeys.h"
#include "sa/qos_match.h"

/* This SM as SMInfo shows it (sm/ tells the SA). */
struct sa_self {
	uint64_t sm_key;
	uint32_t act_count;
	uint8_t priority, state;
};

/* What the records are built from: one routed generation, as programmed, and this SM. */
struct sa_view {
	const struct fabric *f;
	const struct routing_result *r;   /* its routes (the LFTs the switches hold) */
	const struct sa_pkeys *pk;        /* its P_Key tables (NULL: not known) */
	const struct mft_memory *mft;     /* what the switches' MFTs hold (NULL: not known) */
	const struct vlt_memory *vlt;     /* what SL2VL / VLArb tables hold (NULL: not known) */
	const struct qos_match *qos;      /* the QoS policy in force (NULL: none) */
	const uint8_t *part_sl;           /* [0x8000] partition SL + 1 by P_Key (NULL: none) */
	struct sa_self self;
	const struct sa_remote_sm *remote; /* the other SMs in the subnet */
	unsigned n_remote;
	uint32_t requester;               /* the port the request came from (IBSM_NONE: not known) */
	size_t answer_max;                /* record bytes an answer may carry (0: no limit): a
					   * builder of quadratic tables stops past it */
	const struct sa_index *ix;        /* f's indexes by LID and GUID (sa/index.h; NULL: the
					   * kinds scan every record) */
	uint8_t bitwise;                  /* the request's AttributeModifier bit 31: the layout's
					   * subset components (PortInfo CapabilityMask and
					   * CapabilityMask2) matched bit by bit, else exactly, as
					   * OpenSM's osm_sa_portinfo_record.c */
};

/* May the requester see port p of v->f: do they share a partition (sa_pkeys_share)? Every
 * record about a port is shown only then, as OpenSM 3.3.23 does (doc/sa-partitions.md). */
int sa_view_sees(const struct sa_view *v, uint32_t p);

struct sa_kind {
	struct sa_layout layout;
	/* fills layout.n and layout.width when they come from elsewhere (libibmad's field
	 * table), or NULL */
	int (*init)(struct sa_layout *l);
	/* appends every record of f (layout.size bytes each) to out; keys (M_Key, SM_Key) are
	 * zeroed unless trusted (the requester presented our SM_Key) */
	void (*build)(const struct sa_view *v, int trusted, GByteArray *out);
	/* when v->ix is there and mask fixes a component it indexes: appends what build would,
	 * in its order, less (some) records that do not match query under mask, and returns 1;
	 * else appends nothing and returns 0 (build then does). NULL: no index */
	int (*build_indexed)(const struct sa_view *v, int trusted, uint64_t mask, const uint8_t *query,
			     GByteArray *out);
	/* rewrites the query (a copy, mask and record) before matching, or NULL: the readings
	 * OpenSM gives some components (a CA port's VLArb asked for as port 0) */
	void (*query)(const struct sa_view *v, uint64_t *mask, uint8_t *record);
	/* rewrites a record answered (after matching), given the query as it came (mask and
	 * record), or NULL: what OpenSM echoes of a query (PortInfoRecord's Options) */
	void (*answer)(uint64_t mask, const uint8_t *query, uint8_t *record);
	/* answered only to a requester presenting our SM_Key (else ERR_REQ_INVALID), as OpenSM
	 * does for P_KeyTableRecord: partition membership is not every port's business */
	int trusted_only;
	/* who may see a record: by_lid 0, the builder judges each port itself; 1, the port the
	 * record's LID names (a switch's LID its port 0), or of a switch the port whose number is
	 * at byte port_at (0: none) */
	uint8_t by_lid, port_at;
};

/* Appends the records of kind k the requester of v may see: k->build, then (for the kinds
 * judged by LID) only the records whose LID (and port number) names a port the requester
 * shares a partition with (sa_view_sees). */
void sa_kind_build(const struct sa_kind *k, const struct sa_view *v, int trusted, GByteArray *out);
/* A Get or GetTable of kind k: the records the requester of v may see (none without a
 * generation) that match query (query_len bytes of it, as the request carries) under mask,
 * appended to out; read through k->build_indexed when it can, with the same answer. */
void sa_kind_answer(const struct sa_kind *k, const struct sa_view *v, int trusted, const uint8_t *query,
		    size_t query_len, uint64_t mask, GByteArray *out);

#endif
