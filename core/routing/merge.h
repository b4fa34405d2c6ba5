/* SPDX-License-Identifier: BSD-2-Clause */
/* merge.h - the core merges routes, not the engine (doc/design.md, "The routing-engine ABI"). */
#ifndef IBSM_ROUTING_MERGE_H
#define IBSM_ROUTING_MERGE_H

#include <stdint.h>
#include <ibsm/routing.h>
#include "fabric/model.h"

/* Merges one step's rows into final_lft. Entry (switch s, LID l) enters only if s is in
 * scope->switches, l's port is in scope->dests, l - base LID is in [path_bit_first,
 * path_bit_first + path_bit_count) (count 0 = all), and the entry is a route (no-route never
 * erases a route); it then overrides what earlier steps wrote, and lid_owner[l] (may be NULL)
 * becomes `owner`. Entries whose exit port is beyond the switch's port count are refused and
 * logged. Returns the number refused, or -EINVAL if step->stride != stride. */
int routing_merge(const struct fabric *f, const struct ibsm_scope *scope,
		  const struct ibsm_routes *step, uint8_t *final_lft, uint32_t stride,
		  uint8_t *lid_owner, uint8_t owner);

/* routing_merge() of step over tables with no route anywhere, done inside step->lft itself:
 * afterwards step->lft holds exactly what final_lft would (entries out of scope, refused or
 * not a route read IBSM_NO_PORT, LID 0 too), with the same log lines. Spares the second
 * n_switches x stride buffer on a single-step run. Returns as routing_merge(). */
int routing_merge_in_place(const struct fabric *f, const struct ibsm_scope *scope,
			   struct ibsm_routes *step);

#endif
