/* SPDX-License-Identifier: BSD-2-Clause */
/* carry.h - what a lossy sweep could not see is not torn down: a node of the last generation
 * that this discovery did not reach because SMPs to it failed (not because a link to it was
 * seen down, or something else answered in its place) is carried over into the new
 * generation as the last one knew it, LIDs and links included, so it keeps its routes; so is
 * a link between two nodes that were found (by other paths) but whose NodeInfo through it
 * failed. After CARRY_MAX_MISSES consecutive sweeps without reaching it, a node is dropped.
 *
 * Why 3: a sweep already sends NodeInfo again where it failed (DISCOVERY_ROUNDS), so a live
 * node is missed by one sweep only when every attempt of every round was lost (at 30 % loss
 * per switch crossed and ten crossings: about 0.4 %); three such sweeps in a row, about one
 * in 10^7. A node really gone shows itself sooner: its link is seen down, or another node
 * answers behind its port, and then it is dropped by the sweep that sees that. What remains
 * is a node whose SMA stopped answering with its link up: it loses its routes after three
 * sweeps (seconds to a minute with the loop's retry back-off), not at the first lost SMP. */
#ifndef IBSM_FABRIC_CARRY_H
#define IBSM_FABRIC_CARRY_H

#include <stdint.h>
#include "fabric/model.h"

#define CARRY_MAX_MISSES 3

struct carry_stats {
	uint32_t links;     /* links between nodes of b restored as prev had them */
	uint32_t carried;   /* nodes carried over */
	uint32_t dropped;   /* nodes not reached CARRY_MAX_MISSES times in a row: let go */
};

/* Links ports of b that lead nowhere (not seen down, no peer found) to the same peers prev
 * had behind them when b has that peer with its port likewise open; then adds to b the nodes
 * of prev that b lacks and that are behind a port of a node in b (found, or carried itself)
 * whose link was not seen down and leads to nothing else, linked as prev had them. Call it
 * only after a discovery in which SMPs failed for good: without failures, a node that was not
 * found is gone. */
void carry_over(struct model_builder *b, const struct fabric *prev, struct carry_stats *st);

#endif
