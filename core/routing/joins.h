/* SPDX-License-Identifier: BSD-2-Clause */
/* joins.h - the routes between a routing chain's parts, spread over every link that joins them.
 *
 * A chain step on a part of the fabric (a topology) routes only its own destinations on its
 * own switches; the routes that reach a part from outside it are what a whole-fabric step (the
 * chain's first one, e.g. minhop) wrote, each outside switch choosing its shortest way in: so
 * the links that join two parts carry what the distances decide, one of them often most of it.
 * After the chain has run, the core takes those entries (and only those: an entry a step on a
 * part wrote for its own destination stays) and routes each destination LID of a part into it
 * over one of the part's joining links, the LIDs dealt out to the links in turn (CA and router
 * LIDs first, then the switches': so each joining link carries the routes of an equal share of
 * the part's LIDs of each kind), from every outside
 * switch along a shortest path over outside switches to that link (equal choices dealt out
 * in turn as well); the part's own routes take each packet on from there. */
#ifndef IBSM_ROUTING_JOINS_H
#define IBSM_ROUTING_JOINS_H

#include <glib.h>
#include <stdint.h>
#include <ibsm/routing.h>
#include "fabric/model.h"

/* The scopes of the steps that merged, in order: scope k is part k of the routes. */
struct chain_parts;
struct chain_parts *chain_parts_new(void);
void chain_parts_free(struct chain_parts *p);
void chain_parts_add(struct chain_parts *p, const struct ibsm_scope *scope, uint32_t step_id);
guint chain_parts_count(const struct chain_parts *p);

struct join_part_report {
	uint32_t step;              /* the step whose part it is */
	uint32_t links;             /* links that join it to the rest (directed, into it) */
	uint32_t lids;              /* its LIDs routed into it over them */
	uint64_t entries;           /* table entries written */
	uint32_t min_lids, max_lids;/* LIDs per joining link: fewest, most */
};

/* Rebalances lft (stride entries per switch row; lid_part[LID]: the part routing each LID, as
 * routing_result's) in place. Fills rep[0..max) for the parts that have joining links and
 * returns how many it filled (may exceed max: the rest not filled). */
guint joins_balance(const struct fabric *f, const struct chain_parts *p, const uint8_t *lid_part,
		    uint8_t *lft, uint32_t stride, struct join_part_report *rep, guint max);

#endif
