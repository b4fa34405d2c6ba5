/* SPDX-License-Identifier: BSD-2-Clause */
/* verify.h - the core's check of what a routing step produced, before anything is programmed:
 * every destination in the step's scope must be delivered from every switch of the scope that
 * can reach it over the scope's links, by walking the tables. An engine that leaves holes (no
 * entry, a loop, a port without a link, the wrong end port) has failed, whatever it returned. */
#ifndef IBSM_ROUTING_VERIFY_H
#define IBSM_ROUTING_VERIFY_H

#include <stdint.h>
#include <ibsm/routing.h>
#include "fabric/model.h"

enum hole_kind { HOLE_NO_ENTRY = 1, HOLE_LOOP, HOLE_DEAD_PORT, HOLE_WRONG_PORT };

struct routing_holes {
	uint64_t walks;            /* (switch, LID) pairs that had to be delivered */
	uint64_t holes;            /* of which not delivered */
	uint64_t by_kind[5];       /* by enum hole_kind */
	/* the first hole found, for the log */
	uint64_t lids_kept;        /* LIDs not walked: as last verified (routing_verify_since) */
	uint32_t first_switch;     /* switch id */
	uint32_t first_lid;
	uint32_t first_at;         /* switch id where the walk went wrong */
	enum hole_kind first_kind;
};

/* Walks tables lft (stride entries per switch row) for every LID the scope routes, from every
 * switch in scope->switches that can reach the LID's switch over links usable in the scope.
 * Fills *h; returns the number of holes. */
uint64_t routing_verify(const struct fabric *f, const struct ibsm_scope *scope, const uint8_t *lft,
			uint32_t stride, struct routing_holes *h);
/* The tables a step's last walk found whole, and what they were walked over, so the next walk
 * (a repair's: one link changed) walks only the LIDs whose entries or links changed. */
struct verify_memo;

/* As routing_verify, with *memo the step's last whole walk (NULL: none). A LID whose entries
 * on every switch, whose destination port and link, and every link its entries leave by, are
 * as in *memo, with the same switches, ports and components, is delivered as it was then and
 * is not walked again (h->lids_kept). Only a walk over the whole fabric (every bit of the
 * scope unset: -R, not a chain's step) is kept or used. *memo becomes this walk when it
 * found no hole (a copy of its tables only if they fit VERIFY_MEMO_MAX_BYTES), else NULL. */
uint64_t routing_verify_since(const struct fabric *f, const struct ibsm_scope *scope,
			      const uint8_t *lft, uint32_t stride, struct routing_holes *h,
			      struct verify_memo **memo);
/* What a kept memo holds of the tables walked: a copy (routing_verify_since), or, for tables
 * that are about to become a result's unchanged (-R: the step's buffer is the result's), the
 * caller's buffer itself until verify_memo_adopt() names that result. A borrowed memo not
 * adopted is never used. A copy is kept only within VERIFY_MEMO_MAX_BYTES (12 MB at 8192
 * hosts; 237 MB at 40k end ports, not kept); a borrowed memo costs its keys only, so it is
 * kept at any size. */
enum verify_keep { VERIFY_KEEP_COPY, VERIFY_KEEP_BORROW };
uint64_t routing_verify_keep(const struct fabric *f, const struct ibsm_scope *scope,
			     const uint8_t *lft, uint32_t stride, struct routing_holes *h,
			     struct verify_memo **memo, enum verify_keep keep);
/* lft is the buffer the walk borrowed, now a routing result's tables unchanged (one of
 * routing/tables.h): the memo takes a reference to them, never to the result (which holds the
 * step that holds this memo), until the next walk replaces it or it is freed. Else (no memo,
 * or not the buffer walked) nothing. */
void verify_memo_adopt(struct verify_memo *m, uint8_t *lft);
void verify_memo_free(struct verify_memo *m);
#define VERIFY_MEMO_MAX_BYTES (128u << 20)

/* "switch 0x... (desc) to LID n: no entry at switch 0x... (desc)" */
void routing_hole_text(const struct fabric *f, const struct routing_holes *h, char *buf, size_t len);

#endif
