/* SPDX-License-Identifier: BSD-2-Clause */
/* sssp.h - what the files of the sssp and dfsssp engines share (one folder, two engines:
 * ALIASES): the switch graph of a scope and the order of its destinations (graph.c), the
 * shortest paths balanced over all destinations (route.c), the virtual layers that make
 * dfsssp free of credit loops (layers.c, over the per-layer dependency DAGs of layer_dag.c),
 * and the result path_sl and sl2vl answer from (sssp.c; the unit tests read it here).
 * Domke, Hoefler, Nagel, "Deadlock-Free Oblivious Routing for Arbitrary Topologies",
 * IPDPS 2011; OpenSM 3.3.23's opensm/osm_ucast_dfsssp.c. */
#ifndef SSSP_H
#define SSSP_H

#include <stdint.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>
#include "engine_dests.h"

#define SSSP_MAX_LAYERS 15 /* data VLs an IB port can have (VL 0-14) */
#define SSSP_PASS_LAYERS 64 /* layers a first assignment pass may open (later ones need fewer) */

/* ---- the switch graph of one scope (graph.c) ---------------------------------------------- */

/* Directed switch-to-switch links both ends of which the scope may use; a link id doubles as
 * the channel id of the dependency graphs (one channel per link and layer). */
struct sssp_graph {
	uint32_t S, L;             /* switches of the fabric, directed links */
	uint32_t S_scope;          /* switches in the scope */
	uint32_t *off;             /* [S + 1]: the links out of s are off[s] .. off[s + 1] - 1 */
	uint32_t *tail, *peer;     /* [L]: the switch a link leaves, the switch it enters */
	uint8_t *port;             /* [L]: its port at the tail */
	uint32_t *in_off, *in_link;/* [S + 1], [L]: the links into s */
	uint32_t *port_link;       /* [n_ports]: the link leaving by that switch port, IBSM_NONE */
	uint32_t *src_w;           /* [S]: CA ports in scope behind s (the balance's sources) */
	uint8_t vl_code;           /* VLCap code every link's two ends share (1..5; 5 if none) */
};

int sssp_graph_build(const struct ibsm_fabric *f, const struct ibsm_scope *sc,
		     struct sssp_graph *g); /* 0 or -ENOMEM */
void sssp_graph_free(struct sssp_graph *g);

/* The destinations in routing order: CA ports (compute nodes of cn_guid_file first, then the
 * I/O nodes of io_guid_file, then the others; OpenSM's order within each: switches with the
 * most end ports first), then every switch's own LID. Unreadable files are logged and left
 * out. Returns 0 or -ENOMEM. */
int sssp_dests_order(const struct ibsm_core *core, const struct ibsm_fabric *f,
		     const struct ibsm_scope *sc, uint32_t stride, struct engine_dests *d,
		     uint32_t *cn_ports, uint32_t *io_ports);

/* ---- balanced shortest paths (route.c) ---------------------------------------------------- */

struct sssp_route_stats {
	uint64_t entries;          /* LFT entries written (all rows: layers.c walks them) */
	uint64_t unreachable;      /* (switch, LID) pairs with no path in scope */
	uint64_t load_max;         /* CA-to-CA routes (base LIDs) on the busiest switch link */
	double load_mean;          /* over the directed switch links */
	uint32_t lids;             /* destination LIDs routed */
};

/* Fills lft (every switch row: the layers walk them; the caller blanks the rows out of scope)
 * for every LID offset of every destination of d: offsets in turn (every destination's first
 * LID, then every second LID, ...), within an offset in d's order. For each LID, the path of
 * every switch is the shortest one (hops) whose links carry the fewest routes placed so far
 * (least sum over the path: one dynamic program over the min-hop DAG towards the LID's
 * switch), an LID after a port's first avoiding the exit ports its earlier LIDs took; then
 * the links of the CA LIDs' paths count the CA ports routed over them. Returns 0, or
 * -ECANCELED / -ENOMEM. */
int sssp_route(const struct ibsm_core *core, const struct sssp_graph *g, const uint8_t *hops,
	       const struct engine_dests *d, uint8_t *lft, uint32_t stride, struct sssp_route_stats *st);

/* ---- virtual layers (layers.c, layer_dag.c) ----------------------------------------------- */

/* One layer's channel dependency graph, kept acyclic with a topological order that every
 * insertion maintains (Pearce and Kelly, "A Dynamic Topological Sort Algorithm for Directed
 * Acyclic Graphs", JEA 2006). A dependency a -> b (route enters the head switch of link a and
 * leaves by link b) lives in slot dbase[a] + (b - off[peer[a]]). */
struct layer_dag;
struct layer_dag_space; /* the slot layout and the search scratch the layers share */

struct layer_dag_space *layer_dag_space_new(const struct sssp_graph *g);
void layer_dag_space_free(struct layer_dag_space *sp);
uint64_t layer_dag_slots(const struct layer_dag_space *sp);
uint64_t layer_dag_visits(const struct layer_dag_space *sp); /* channels the searches visited */
struct layer_dag *layer_dag_new(struct layer_dag_space *sp);
void layer_dag_free(struct layer_dag *d);
void layer_dag_clear(struct layer_dag *d); /* no dependency, the seed (or identity) order */
/* Fixed: the order no longer changes, a new dependency against it is refused (a check of
 * O(1) per dependency, for a layer that holds most routes of a tree-like fabric). */
void layer_dag_fix(struct layer_dag *d, int fixed);
/* The order of d becomes the one every layer starts from when cleared; -1 without memory. */
int layer_dag_seed(const struct layer_dag *d);
/* Adds the dependencies dep[2i] -> dep[2i + 1] (i < n) of one route unless they close a
 * cycle: 0 added, 1 refused (nothing added; also when checking a dependency would search more
 * than a bounded part of the layer: refusing is always safe). */
int layer_dag_add_deps(struct layer_dag *d, const uint32_t *dep, uint32_t n);
void layer_dag_remove_deps(struct layer_dag *d, const uint32_t *dep, uint32_t n);
/* Adds w routes over dependency a -> b without any check (the bulk build of a first layer). */
void layer_dag_add_dep(struct layer_dag *d, uint32_t a, uint32_t b, uint32_t w);
/* Is the graph as built acyclic (Kahn)? Its order is then reset to a topological one. */
int layer_dag_sort(struct layer_dag *d);
/* The strongly connected components of the graph as built (Tarjan): scc[c] numbers the
 * channels of each component of more than one channel (no cycle passes any other
 * dependency), IBSM_NONE elsewhere; the finishing order of the search, reversed, becomes the
 * order every layer starts from when cleared. Returns the components, -1 without memory. */
int layer_dag_cycles(struct layer_dag *d, uint32_t *scc);

struct sssp_layers {
	uint32_t n_layers;         /* virtual layers used (1: no cycle on one) */
	uint32_t cols;             /* LIDs per row of `layer`: max_lid + 1 */
	uint8_t *layer;            /* [S * cols]: the layer of the path (source switch, LID);
				    * NULL when every path is on layer 0 */
	uint64_t paths[SSSP_MAX_LAYERS];   /* (source switch, LID) paths per layer */
	uint64_t traffic[SSSP_MAX_LAYERS]; /* the same weighted by the CA ports at the source */
	uint32_t passes;           /* assignment passes run (1 + the improving ones; 0: the first
				    * gave up, needing more than twice the layers allowed) */
	uint32_t first_pass;       /* layers the first pass needed */
	uint64_t moved;            /* paths the layer balancing moved */
};

/* Gives every (source switch, destination LID) path through the tables lft a layer, so that
 * each layer's dependency graph has no cycle: none at all when the routes are acyclic as
 * they are; else paths longest first, each on the lowest layer it fits (the layer's
 * dependency DAG takes it without a cycle), then again with the previous layers in reverse
 * order while that lowers the count (iterated greedy, within a work budget), then paths moved
 * from the fullest layers to the emptier ones they fit. Fails with -E2BIG when more than
 * max_layers are needed (*needed: how many, or SSSP_PASS_LAYERS + 1 when even the first pass
 * gave up).
 * Returns 0, or -ENOMEM / -ECANCELED / -E2BIG. */
int sssp_layers_assign(const struct ibsm_core *core, const struct ibsm_fabric *f,
		       const struct sssp_graph *g, const uint8_t *hops,
		       const struct engine_dests *d, const uint8_t *lft, uint32_t stride,
		       uint32_t max_layers, uint32_t *needed, struct sssp_layers *out);
void sssp_layers_free(struct sssp_layers *l);

/* ---- the result (sssp.c) ------------------------------------------------------------------ */

struct sssp_result {
	uint32_t generation;
	int df;                    /* dfsssp: path SLs and SL2VL tables */
	int qos;                   /* -Q: a QoS level's SL is kept in blocks above the layers */
	uint32_t cols;             /* max_lid + 1 */
	uint32_t *lid_sw;          /* [cols]: the switch a LID's port hangs off, or IBSM_NONE */
	uint8_t *layer;            /* [S * cols] or NULL (sssp_layers.layer, taken over) */
	uint32_t n_layers, vls;    /* layers used; data VLs every switch link allows */
	uint32_t sls;              /* SLs the SL2VL tables map to their own VL (0: none) */
	uint8_t vl_base[SSSP_MAX_LAYERS], vl_count[SSSP_MAX_LAYERS]; /* layer -> VLs (spread) */
	struct sssp_route_stats route;
	struct sssp_layers layers; /* counts (its table moved to `layer`) */
	double seconds;
};

#endif
