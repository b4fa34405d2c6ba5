/* SPDX-License-Identifier: BSD-2-Clause */
/* nue_parts.h - what the files of the nue engine share: the switch graph of a scope with its
 * channels and the dependency slots between them (graph.c), one virtual layer's channel
 * dependency graph kept acyclic under an incremental topological order (layer_cdg.c), the
 * escape trees whose up/down turns a layer reserves (escape.c), and the per-destination search
 * on a layer's dependency graph (search.c); route.c puts them together.
 * Nue: Domke, Hoefler, Matsuoka, "Routing on the Dependency Graph: A New Approach to
 * Deadlock-Free High-Performance Routing", HPDC 2016. */
#ifndef NUE_PARTS_H
#define NUE_PARTS_H

#include <stdint.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>

#define NUE_NONE UINT32_MAX
#define NUE_MAX_LAYERS 15 /* data VLs 0..14 */
/* Channels the check of one backward turn may visit before it refuses the turn (refusing is
 * always safe; the routes only lose that turn). */
#define NUE_SEARCH_BUDGET 128

/* ---- the switch graph of one scope (graph.c) ----------------------------------------------
 * A channel is one direction of a usable switch-to-switch link (parallel links: one each).
 * The dependency slots of channel a = (v -> u) are one per channel leaving u, in u's order:
 * slot dep_off[a] + j is the turn a -> (out_off[u] + j). */
struct nue_graph {
	uint32_t S, C;            /* switches (all of the fabric's), channels */
	uint32_t *out_off;        /* [S + 1]: channels leaving s are out_off[s] .. out_off[s+1]-1 */
	uint32_t *in_off, *in_ch; /* [S + 1], [C]: the channels entering s */
	uint32_t *head, *tail;    /* [C]: the switch a channel enters, the one it leaves */
	uint32_t *rev;            /* [C]: the same link's other direction */
	uint8_t *port;            /* [C]: the exit port at the tail */
	uint32_t *dep_off;        /* [C + 1]: first dependency slot of each channel */
	uint64_t D;               /* dependency slots */
	uint32_t *chan_of_port;   /* [n_ports]: the channel leaving by a switch port, or NONE */
	uint32_t *src;            /* [S]: CA ports in scope behind the switch (traffic sources) */
	uint32_t *comp;           /* [S]: connected component over the usable links */
	uint32_t *comp_size;      /* [ncomp]: its switches */
	uint32_t ncomp;
	uint8_t *row;             /* [S]: the scope lets us write this switch's row */
	uint64_t *guid;           /* [S] */
	uint32_t *height;         /* [S]: hops from the nearest switch with CA sources */
	uint8_t vls;              /* data VLs every usable switch link will have (1, 2, 4, 8, 15) */
};

int nue_graph_build(const struct ibsm_core *core, const struct ibsm_fabric *f,
		    const struct ibsm_scope *sc, struct nue_graph *g);
void nue_graph_free(struct nue_graph *g);

/* The dependency slot of the turn a -> b (b leaves the switch a enters). */
static inline uint64_t nue_slot(const struct nue_graph *g, uint32_t a, uint32_t b)
{
	return g->dep_off[a] + (b - g->out_off[g->head[a]]);
}

/* ---- one layer's channel dependency graph (layer_cdg.c) -----------------------------------
 * Counted dependencies (a turn used by n routes has count n) and a topological order of the
 * channels that every dependency follows (Pearce and Kelly, "A Dynamic Topological Sort
 * Algorithm for Directed Acyclic Graphs", ACM JEA 2006): a new turn that goes forward in the
 * order is free; one that goes backward reorders the channels between its ends, or is refused
 * when the other end already reaches it (a cycle). Removing a turn never needs a check. */
struct nue_cdg {
	const struct nue_graph *g;
	uint32_t *count;          /* [D] */
	uint32_t *refused_at;     /* [D] clock when the turn was last refused (0: never) */
	uint32_t *born;           /* [D] clock when the turn last came in */
	uint32_t clock;           /* counts adds, refusals and removals */
	uint32_t *rm_time, *rm_born, rm_n, rm_cap; /* removals that may undo a refusal */
	uint32_t *ord, *at;       /* [C] position of each channel; channel at each position */
	uint32_t *mark, epoch;    /* [C] search marks */
	uint32_t *fwd, *bwd, *stack, *pos; /* [C] scratch */
	uint32_t budget;          /* channels a search may visit before it refuses */
	uint64_t turns;           /* dependencies with count > 0 */
	uint64_t reorders, refused;
};

int nue_cdg_init(struct nue_cdg *d, const struct nue_graph *g);
/* Empties d: no turn, the channels in their starting order (climbing away from the CAs first,
 * from the lowest; then level ones; then descending ones, from the highest), in which every
 * shortest route of a tree-like fabric (up to the spines and down) only turns forward. */
void nue_cdg_reset(struct nue_cdg *d);
void nue_cdg_free(struct nue_cdg *d);
/* One more route takes the turn a -> b: 0 (added), or 1 when it would close a cycle (nothing
 * changed). */
int nue_cdg_add(struct nue_cdg *d, uint32_t a, uint32_t b);
/* Adds a turn known to be in the graph already (count > 0). */
static inline void nue_cdg_again(struct nue_cdg *d, uint64_t slot)
{
	d->count[slot]++;
}
void nue_cdg_remove(struct nue_cdg *d, uint64_t slot);
/* Does the graph hold a cycle? Kahn's algorithm, independent of the order kept (the engine's
 * own last check of every layer). 1 yes, 0 no, -ENOMEM. */
int nue_cdg_cyclic(struct nue_cdg *d);

/* ---- the escape tree of a layer (escape.c) ------------------------------------------------
 * A shortest-path spanning tree per component from a given root. Once its up/down turns toward
 * every destination switch are in the layer's dependency graph (before any route, or when an
 * impasse first needs them: route.c), a switch the search cannot reach can always take the
 * tree's path. */
struct nue_escape {
	uint32_t *up;             /* [S]: channel to the parent, NONE at a root */
	uint32_t *tin, *tout;     /* [S]: the tree's Euler interval (descendants: tin in it) */
	uint32_t *kid_off, *kid;  /* [S + 1], [S]: the children, by tin */
	uint8_t *below;           /* [S]: a destination switch is in the subtree */
	uint32_t *root;           /* [ncomp] */
	uint32_t *dist, *queue;   /* [S] scratch */
};

/* The most central switch of every component toward the destination switches dest_sw [S]
 * into root [ncomp]. 0 or -ENOMEM. */
int nue_escape_central(const struct nue_graph *g, const uint8_t *dest_sw, uint32_t *root);
int nue_escape_init(struct nue_escape *e, const struct nue_graph *g);
void nue_escape_free(struct nue_escape *e);
/* The tree from root [ncomp]; salt varies the choice between equally near parents. */
void nue_escape_build(const struct nue_graph *g, struct nue_escape *e, const uint32_t *root,
		      uint32_t salt, const uint8_t *dest_sw);
/* Puts the tree's turns into d (count 1 each, never taken out): 0; 1 if d refused one (then
 * none was put: an empty graph takes them all, the turns are acyclic); -ENOMEM. */
int nue_escape_reserve(const struct nue_graph *g, const struct nue_escape *e, struct nue_cdg *d);
/* The channel switch v leaves by toward t on the tree (v != t, same component). */
uint32_t nue_escape_next(const struct nue_graph *g, const struct nue_escape *e, uint32_t v,
			 uint32_t t);

/* ---- the search for one destination (search.c) --------------------------------------------
 * From the destination switch t outward, a Dijkstra over switches whose every step v -> u is
 * taken only when the turn (v -> u) -> next(u) keeps the layer acyclic (or is already in it).
 * Switches it cannot reach take the escape tree's path, and so do, transitively, the switches
 * whose turn into a changed switch the layer refuses. The turns of the result are in the
 * layer's graph when nue_search_run returns, but for those the layer refused on an escape path
 * whose turns were not reserved (counted in failed). */
struct nue_search {
	const struct nue_graph *g;
	uint64_t *key;            /* [S] heap key */
	uint64_t *dist;           /* [S] cost of the switch's path */
	uint32_t *next;           /* [S] channel toward t, NONE at t or unreached */
	uint32_t *cand;           /* [S] candidate channel while in the heap */
	uint64_t *slot;           /* [S] the turn counted for the switch, or UINT64_MAX */
	uint32_t *heap, *hpos, hn;/* binary heap of switches by key */
	uint32_t *blocked, stamp; /* [C] channel refused for this destination (== stamp) */
	uint64_t new_turn_back;   /* extra cost of a turn not in the layer yet that goes backward
				   * in its order */
	uint8_t *state;           /* [S] 0 new, 1 in heap, 2 settled, 3 escape */
	uint32_t *order, norder;  /* [S] the tree from t outward (t first) */
	uint32_t *work;           /* [S] */
	uint64_t *sub;            /* [S] sources routed through */
	/* results of the last run */
	uint64_t cost;            /* sum over switches of sources x path cost */
	uint32_t escaped;         /* switches on the escape tree's path */
	uint32_t refused;         /* turns refused */
	uint32_t failed;          /* escape turns refused (only when they are not reserved) */
	int ran;                  /* next/slot come from nue_search_run, not nue_search_read */
};

int nue_search_init(struct nue_search *s, const struct nue_graph *g);
void nue_search_free(struct nue_search *s);
/* Routes the component of t toward t on layer d (weights w [C]); fills next/order/dist/cost. */
void nue_search_run(struct nue_search *s, struct nue_cdg *d, const struct nue_escape *e,
		    const uint64_t *w, uint32_t t);
/* Takes the turns of the tree in s (as nue_search_run left it) out of d. */
void nue_search_unroute(struct nue_search *s, struct nue_cdg *d);
/* Reads the tree toward t back from LFT column lid (rows of stride bytes) into s: next and
 * order (for nue_search_unroute and the loads). */
void nue_search_read(struct nue_search *s, const uint8_t *lft, uint32_t stride,
		     const struct ibsm_fabric *f, uint32_t lid, uint32_t t);
/* The sources behind each switch of the tree in s (sub), from the leaves in. */
void nue_search_subtrees(struct nue_search *s);

#endif
