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
/* "switch 0x... (desc) to LID n: no entry at switch 0x... (desc)" */
void routing_hole_text(const struct fabric *f, const struct routing_holes *h, char *buf, size_t len);

#endif
