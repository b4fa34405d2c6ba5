/* SPDX-License-Identifier: BSD-2-Clause */
/* mhc_memo.h - the last fill of a min-hop engine instance (see struct mhc_memo in mhc.h): what
 * decides each row, and the rows, so a fill copies the rows whose inputs did not change. */
#ifndef MHC_MEMO_H
#define MHC_MEMO_H

#include <stdint.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>
#include "engine_dests.h"
#include "mhc.h"

/* What of row s a fill may copy from m: the entries of the CA (and router) destinations, those
 * of the switches' own LIDs (each class has its own balance counters, so each is decided by
 * the candidate ports toward its own destinations' switches), or both: the whole row. */
#define MHC_REUSE_CA 1
#define MHC_REUSE_SW 2
#define MHC_REUSE_ROW (MHC_REUSE_CA | MHC_REUSE_SW)

/* reuse[S] (malloc'd; MHC_REUSE_* bits of row s that may be copied from m), or NULL when m
 * does not apply at all (no memo, other nodes or ports, other destinations or stride). */
uint8_t *mhc_memo_reuse(const struct mhc_memo *m, const struct ibsm_fabric *f,
			const struct ibsm_scope *sc, const uint8_t *hops,
			const struct engine_dest *dests, uint32_t ndests, uint32_t stride);
/* m's own copy of the last fill's rows, or NULL when the core keeps them (ABI 1.4 last_rows:
 * the fill asks the core for them) or m is NULL. */
const uint8_t *mhc_memo_rows(const struct mhc_memo *m);
/* Row s of ROWS (m's own copy or the core's, m->stride bytes a row) and the counts it had. */
const uint8_t *mhc_memo_row(const struct mhc_memo *m, const uint8_t *rows, uint32_t s,
			    uint64_t *routed, uint64_t *unreachable);
/* *memo (freed first) becomes this fill: rows[0 .. nrows) were filled, routed[s] and
 * unreachable[s] their counts. lft: the rows filled, copied into the memo; NULL when the core
 * keeps them (last_rows), so the memo holds what decides each row only. Nothing is kept when
 * the hop matrix and the rows copied pass MHC_MEMO_MAX_BYTES. 0, or -1 without memory (no memo
 * then). */
int mhc_memo_save(void **memo, const struct ibsm_fabric *f, const struct ibsm_scope *sc,
		  const uint8_t *hops, const struct engine_dest *dests, uint32_t ndests,
		  const uint8_t *lft, uint32_t stride, const uint32_t *rows, uint32_t nrows,
		  const uint64_t *routed, const uint64_t *unreachable);

#endif
