/* SPDX-License-Identifier: BSD-2-Clause */
/* records.h - the SA's records built from one fabric generation: each kind is a layout (its
 * components, sa/compmask.h) and a builder that appends every record of the generation; the
 * agent filters them by the request's component mask. */
#ifndef IBSM_SA_RECORDS_H
#define IBSM_SA_RECORDS_H

#include <glib.h>
#include "fabric/model.h"
#include "program/mft.h"
#include "program/vltables.h"
#include "routing/result.h"
#include "sa/compmask.h"
#include "sa/pkeys.h"
#include "sa/qos_match.h"

/* This SM as SMInfo shows it (sm/ tells the SA). */
struct sa_self {
	uint64_t sm_key;
	uint32_t act_count;
	uint8_t priority, state;
};

/* Another SM the last SMInfo poll found (its port's LID, what its SMInfo said). */
struct sa_remote_sm {
	uint64_t guid, sm_key;
	uint32_t act_count;
	uint16_t lid;
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
	/* rewrites the query (a copy, mask and record) before matching, or NULL: the readings
	 * OpenSM gives some components (a CA port's VLArb asked for as port 0) */
	void (*query)(const struct sa_view *v, uint64_t *mask, uint8_t *record);
	/* answered only to a requester presenting our SM_Key (else ERR_REQ_INVALID), as OpenSM
	 * does for P_KeyTableRecord: partition membership is not every port's business */
	int trusted_only;
};

/* The kind serving attribute attr, or NULL. The layouts are checked once (sa_kinds_check). */
const struct sa_kind *sa_kind_of(uint16_t attr);
/* Appends the records of kind k the requester of v may see: k->build, then (for the kinds
 * whose builder does not judge each port itself) only the records whose LID (and port number)
 * names a port the requester shares a partition with (sa_view_sees). */
void sa_kind_build(const struct sa_kind *k, const struct sa_view *v, int trusted, GByteArray *out);
/* 0 when every layout adds up to its record size; else -1 (and the kind's name in *bad). */
int sa_kinds_check(const char **bad);

#endif
