/* SPDX-License-Identifier: BSD-2-Clause */
/* route.h - one nue route() from the engine's side (route.c): the options it reads, what it
 * leaves in the result for path_sl, and the counts the engine logs. */
#ifndef NUE_ROUTE_H
#define NUE_ROUTE_H

#include <stdint.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>

struct nue_options {
	unsigned max_vls;         /* nue_max_num_vls: 0 = as many as every link has */
	int include_switches;     /* nue_include_switches */
	unsigned passes;          /* nue_passes: balancing passes after the first */
	unsigned trials;          /* nue_trials: 0 = as many as the work budget allows */
	unsigned threads;         /* 1 or more */
};

/* What route() keeps (immutable after it returns; the unit tests read it). */
struct nue_result {
	uint32_t generation;
	uint32_t layers;          /* virtual layers (VLs) the routes use */
	uint32_t vls;             /* data VLs every usable switch link has */
	uint32_t max_lid;
	uint8_t *lid_layer;       /* [max_lid + 1]: the layer (SL) of routes to the LID, 0xFF none */
	uint32_t dests;           /* destination LIDs routed */
	uint32_t switch_dests;    /* of them switch LIDs */
	uint32_t per_layer[16];   /* destination LIDs per layer */
	uint32_t escaped_dests;   /* destinations whose tree took escape paths (last pass) */
	uint64_t escaped_switches;/* (switch, destination) pairs on escape paths (last pass) */
	uint64_t refused;         /* turns the layers refused (all passes) */
	uint64_t unreachable;     /* (row, LID) pairs with no path in scope */
	uint64_t outside;         /* switch-LID routes left outside the layers (impasse, only when
				   * switches are not destinations like CAs) */
	int reserved;             /* the kept trial reserved its escape paths */
	int include_switches;     /* nue_include_switches was in force */
	uint32_t passes;          /* passes per trial (the first included) */
	uint32_t trials, kept_trial, threads;
	uint64_t load_max;        /* CA-pair routes on the busiest switch link */
	double load_mean;         /* mean over the usable directed switch links */
	uint64_t turns[16];       /* turns in each layer's dependency graph */
	int cyclic;               /* the engine's own final check found a cycle (never) */
	double seconds;
};

void nue_result_free(void *result);

/* Fills out->lft for the scope and res; < 0 with out->why set. */
int nue_route_scope(const struct ibsm_core *core, const struct ibsm_fabric *f,
		    const struct ibsm_scope *sc, const struct nue_options *o,
		    struct ibsm_routes *out, struct nue_result *res);

#endif
