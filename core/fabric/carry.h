/* SPDX-License-Identifier: BSD-2-Clause */
/* carry.h - what a lossy sweep could not see is not torn down: a node of the last generation
 * that this discovery did not reach because SMPs to it failed (not because a link to it was
 * seen down, or something else answered in its place) is carried over into the new
 * generation as the last one knew it, LIDs and links included, so it keeps its routes. After
 * CARRY_MAX_MISSES consecutive sweeps without reaching it, it is dropped. */
#ifndef IBSM_FABRIC_CARRY_H
#define IBSM_FABRIC_CARRY_H

#include <stdint.h>
#include "fabric/model.h"

#define CARRY_MAX_MISSES 3

struct carry_stats {
	uint32_t carried;   /* nodes carried over */
	uint32_t dropped;   /* nodes not reached CARRY_MAX_MISSES times in a row: let go */
};

/* Adds to b the nodes of prev that b lacks and that are behind a port of a node in b (found,
 * or carried itself) whose link was not seen down and leads to nothing else; links them as
 * prev had them. Call it only after a discovery in which SMPs failed for good: without
 * failures, a node that was not found is gone. */
void carry_over(struct model_builder *b, const struct fabric *prev, struct carry_stats *st);

#endif
