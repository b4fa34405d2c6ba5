/* SPDX-License-Identifier: BSD-2-Clause */
/* multipath_record.h - MultiPathRecord (IBA 15.2.5.20, SA GetMulti): the paths between every
 * source GID and every destination GID the request lists, as PathRecords. Each (SGID, DGID)
 * pair is a PathRecord query with the request's other components (so only paths between
 * ports the requester shares a partition with, as OpenSM's osm_sa_multipath_record.c); the
 * answer takes the first path of every pair, then the second of every pair, ... up to
 * NumbPath in all (one per pair without NumbPath), so a LMC > 0 spreads the paths over
 * distinct LIDs. */
#ifndef IBSM_SA_MULTIPATH_RECORD_H
#define IBSM_SA_MULTIPATH_RECORD_H

#include <glib.h>
#include <stdint.h>
#include "sa/path_record.h"

#define MPR_FIXED 24               /* bytes before the GID list */
#define MPR_MAX_GIDS 11            /* GIDs that fit in one MAD's record (24 + 11 * 16 = 200) */

/* Component numbers (IBA order) */
enum {
	MPR_RAW, MPR_RESV0, MPR_FLOW, MPR_HOPLIMIT, MPR_TCLASS, MPR_REVERSIBLE, MPR_NUMBPATH,
	MPR_PKEY, MPR_QOS, MPR_SL, MPR_MTU_SEL, MPR_MTU, MPR_RATE_SEL, MPR_RATE, MPR_LIFE_SEL,
	MPR_LIFE, MPR_SID_MSB, MPR_INDEP_SEL, MPR_RESV1, MPR_SGID_COUNT, MPR_DGID_COUNT,
	MPR_SID_LSB, MPR_N
};

/* Answers a MultiPathRecord request (its record, len bytes of it, and mask) into out
 * (PR_SIZE bytes each). Returns 0, or the SA status: no SGIDs or DGIDs (insufficient
 * components), more GIDs than the record holds (invalid request), an unknown GID. */
uint16_t mpr_query(const struct sa_view *v, const struct pr_env *env, const uint8_t *req,
		   size_t len, uint64_t mask, GByteArray *out);

#endif
