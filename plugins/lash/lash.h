/* SPDX-License-Identifier: BSD-2-Clause */
/* lash.h - what the files of the lash engine share: the switch graph of a scope (graph.c), the
 * mesh analysis that orders its links by dimension (mesh.c), the virtual layers (layers.c) and
 * the result path_sl and sl2vl answer from (lash.c). LASH: Skeie, Lysne, Theiss, "Layered
 * Shortest Path (LASH) Routing in Irregular System Area Networks" (IPDPS 2002). */
#ifndef LASH_H
#define LASH_H

#include <stdint.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>

#define LASH_MAX_LAYERS 15 /* data VLs: SL 0..14, VL 15 is management's */
#define LASH_NO_LINK 0xFF  /* nh[]: no next link (the destination's own switch, or none) */

/* The switch graph of one scope: usable switch-to-switch links, sorted by local port. */
struct lash_graph {
	uint32_t S, L;        /* switches, directed links */
	uint32_t *off;        /* [S + 1]: links of s are [off[s], off[s + 1]) */
	uint32_t *peer;       /* [L] switch at the far end */
	uint8_t *port;        /* [L] local exit port */
	uint64_t *guid;       /* [S] node GUID */
	uint32_t *comp;       /* [S] connected component id */
	uint32_t *ca_src;     /* [S] CA ports hanging off s with their link in scope */
	uint32_t ncomp;
	uint8_t vls_code;     /* least OperVLs code (PortInfo encoding) the links will get */
};

int lash_graph_build(const struct ibsm_core *core, const struct ibsm_fabric *f,
		     const struct ibsm_scope *sc, struct lash_graph *g); /* 0 or -ENOMEM */
void lash_graph_free(struct lash_graph *g);

/* Mesh analysis (do_mesh_analysis): when the switch graph (parallel links as one) is a
 * Cartesian product of paths and rings (a mesh or torus of any size, OpenSM's osm_mesh.c
 * recognises sizes 2, 3, 5 and 6+), every directed link gets the dimension it runs in:
 * cls[l] = 0 .. dims - 1, in order of first appearance. Returns dims (>= 1), or 0 with *why
 * set when the graph is not such a product. cls has g->L entries. */
unsigned lash_mesh_classes(const struct lash_graph *g, uint8_t *cls, const char **why);

/* The routes as lash_layers sees them: per destination d (an end port), the local index of
 * the link switch s leaves by toward d, nh[d * S + s] (LASH_NO_LINK at d's own switch or when
 * unreachable); dsw[d] is d's switch. Destinations of one switch are dfirst[t] ..
 * dfirst[t + 1] - 1. */
struct lash_routes {
	uint32_t nd;
	const uint8_t *nh;
	const uint32_t *dsw;
	const uint32_t *dfirst; /* [S + 1] */
};

/* What the layer assignment did. */
struct lash_layer_stats {
	uint32_t layers;                        /* layers used */
	uint64_t units[LASH_MAX_LAYERS];        /* switch pairs per layer */
	uint64_t units_total, moved, tried;     /* pairs; moved by the balancing; acyclic tests */
};

/* LASH's layers: every pair of switches {a, b} (its routes a -> every destination on b and
 * b -> every destination on a, both ways on one layer, so one SL serves a connection both
 * ways) goes to the first layer whose channel dependency graph stays acyclic with it (a new
 * layer if none), the pairs with the longest routes first (by_id: in switch id order, as
 * OpenSM's lash); then pairs move from the fullest layer to the emptiest while they fit and
 * the counts differ by more than balance. layer[a * S + b] gets the layer (0xFF: no route
 * between them). Returns 0, -E2BIG (with *needed) when more than max_layers layers would be
 * needed, -ECANCELED, or -ENOMEM. */
int lash_layers(const struct ibsm_core *core, const struct lash_graph *g,
		const struct lash_routes *r, unsigned max_layers, unsigned balance, int by_id,
		uint8_t *layer, struct lash_layer_stats *st, unsigned *needed);

/* What route() leaves behind for path_sl and sl2vl (immutable; the unit tests read it). */
struct lash_result {
	uint32_t generation, S, max_lid;
	uint32_t *lid_sw;      /* [max_lid + 1] the switch a LID's port hangs off, or IBSM_NONE */
	uint8_t *layer;        /* [S * S] layer of the switch pair (symmetric), 0xFF none */
	uint8_t start_vl;      /* lash_start_vl: SL = start_vl + layer */
	uint8_t vls;           /* data VLs the switch links have */
	uint32_t layers;       /* layers used */
	uint64_t units[LASH_MAX_LAYERS];
	uint64_t moved;        /* pairs the balancing moved */
	unsigned mesh_dims;    /* dimensions the mesh analysis found (0: none or off) */
	unsigned tree_mode;    /* 0 a balanced tree per destination port, 1 per destination
				* switch, 2 the first shortest-path link by port (lash.c) */
	uint64_t load_max;     /* CA-port pairs on the busiest switch link */
	uint64_t routed;       /* LFT entries written */
	double seconds;
};

#endif
