/* SPDX-License-Identifier: BSD-2-Clause */
/* layers.c - dfsssp's virtual layers: every path (source switch, destination LID) through the
 * tables gets a layer (its SL, and the VL the SL2VL tables give it on every hop) so that the
 * channel dependency graph of each layer has no cycle; then no credit loop can form (Dally and
 * Seitz 1987; Domke et al. 2011).
 *
 * A path's layer is one per source switch, not per source port: every port behind a switch
 * (its CA ports, its own port 0) leaves it on the same channels, and the first channel (a CA
 * link) starts no dependency. So the table is switches x LIDs, not ports x LIDs.
 *
 * OpenSM (osm_ucast_dfsssp.c) puts every path on layer 0, and while a layer's graph has a
 * cycle, moves the paths of its weakest dependency (the fewest paths) to the next layer. Here
 * instead:
 *  1. the graph of all paths on one layer is built per destination in O(switches) (the paths
 *     to a LID form a tree); without a cycle nothing more is done. Else only dependencies
 *     within its strongly connected components matter from then on (no cycle of any layer
 *     passes another one);
 *  2. on a large fabric (millions of paths) whose routes between CA-switches alone have no
 *     cycle (trees: only the paths from or to a switch's own port 0 turn down then up), those
 *     stay on layer 0, whose order is then fixed, and only the others are placed as below,
 *     in one pass; when that needs more layers than there are, 3. and 4. place every path;
 *  3. else every path is placed, longest first, on the lowest layer whose dependency DAG
 *     takes it without a cycle (layer_dag.c keeps each layer acyclic under a topological
 *     order, so most checks cost nothing);
 *  4. then placed again, the previous pass's layers one by one in reverse order (iterated
 *     greedy: Culberson's argument for colourings holds, a pass never needs more layers than
 *     the one before), every third pass in a random order of them, while it helps and within
 *     a work budget; the best assignment is kept;
 *  5. then paths move from the layers carrying the most CA traffic to those carrying the
 *     least, where they fit, so that the VLs in use share the load.
 * On random irregular fabrics this needs markedly fewer layers than OpenSM's rule (measured in
 * doc/dfsssp.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "engine_glue.h"
#include "sssp.h"

#define PASS_MAX 32               /* improving passes at most */
#define PASS_PATIENCE 8           /* passes without a better assignment before giving up */
#define WORK_BUDGET 200000000ull  /* path hops walked and channels searched by all passes */
#define CANCEL_EVERY 4096
#define TREE_MODE_PATHS 4000000ull /* (switch, LID) paths from which 2. is tried */

struct lctx {
	const struct ibsm_core *core;
	const struct sssp_graph *g;
	const uint8_t *hops;
	const uint8_t *lft;
	uint32_t stride, S, cols;
	const uint32_t *port0;     /* [S] port id of each switch's port 0 */
	/* destination LIDs grouped by their switch */
	uint32_t *t_off;           /* [S + 1] */
	uint16_t *t_lid;           /* the LIDs */
	uint8_t *ca_lid;           /* [cols] the LID is a CA port's */
	uint8_t hmax;
	/* the layers being filled */
	struct layer_dag_space *sp;
	struct layer_dag *dag[SSSP_PASS_LAYERS];
	uint32_t max_layers;       /* layers a pass may open */
	int bulk0;                 /* 2.: the paths on layer 0 already (BULK_*) */
	const uint8_t *marks;      /* BULK_MARKED: the paths marked mark_value in this table */
	uint8_t mark_value;
	int sw_lids_only;          /* for_paths: only the paths to switch LIDs */
	uint32_t *bucket;          /* [S] switches at one distance from t */
	uint32_t *scc;             /* [L] a channel's strongly connected component, or IBSM_NONE */
	uint32_t ch[256];          /* one path's channels */
	uint32_t dep[512], ndep;   /* its dependencies that a cycle can pass (within a component) */
	uint64_t work, calls;
	int cancelled;
};

/* ---- paths ---------------------------------------------------------------------------------- */

/* The channels of the path from switch x to LID lid, h hops long, into c->ch, and those of
 * its dependencies that lie within a strongly connected component of the one-layer graph into
 * c->dep (no cycle of any layer can pass the others); 0 when the tables do not lead there in
 * h hops (then it has no layer of its own). */
static int walk(struct lctx *c, uint32_t x, uint32_t lid, unsigned h)
{
	const struct sssp_graph *g = c->g;
	for (unsigned i = 0; i < h; i++) {
		uint8_t p = c->lft[(size_t)x * c->stride + lid];
		uint32_t l = p == IBSM_NO_PORT ? IBSM_NONE : g->port_link[c->port0[x] + p];
		if (l == IBSM_NONE)
			return 0;
		c->ch[i] = l;
		x = g->peer[l];
	}
	c->ndep = 0;
	for (unsigned i = 0; i + 1 < h; i++) {
		uint32_t k = c->scc[c->ch[i]];
		if (k != IBSM_NONE && k == c->scc[c->ch[i + 1]]) {
			c->dep[2 * c->ndep] = c->ch[i];
			c->dep[2 * c->ndep + 1] = c->ch[i + 1];
			c->ndep++;
		}
	}
	return 1;
}

/* The path sets that 2. may put on layer 0 at once. */
enum { BULK_NONE, BULK_ALL, BULK_TO_CA, BULK_CA_TO_CA, BULK_MARKED };

/* Is path (x, lid) in the set? BULK_TO_CA: to a CA's LID; BULK_CA_TO_CA: to a CA's LID from a
 * switch with CAs (data traffic). */
static int in_bulk(const struct lctx *c, int set, uint32_t x, uint32_t lid)
{
	switch (set) {
	case BULK_ALL:
		return 1;
	case BULK_TO_CA:
		return c->ca_lid[lid];
	case BULK_CA_TO_CA:
		return c->g->src_w[x] && c->ca_lid[lid];
	case BULK_MARKED:
		return c->marks[(size_t)x * c->cols + lid] == c->mark_value;
	default:
		return 0;
	}
}

/* Calls fn(c, x, lid, h, arg) for every path of at least two hops (one dependency), longest
 * first: by length, destination switch, LID, source switch. Stops at fn's non-zero return. */
typedef int (*path_fn)(struct lctx *c, uint32_t x, uint32_t lid, unsigned h, void *arg);

static int for_paths(struct lctx *c, path_fn fn, void *arg)
{
	for (unsigned h = c->hmax; h >= 2; h--)
		for (uint32_t t = 0; t < c->S; t++) {
			if (c->t_off[t] == c->t_off[t + 1])
				continue;
			const uint8_t *row = c->hops + (size_t)t * c->S;
			uint32_t nx = 0;
			for (uint32_t x = 0; x < c->S; x++)
				if (row[x] == h)
					c->bucket[nx++] = x;
			for (uint32_t i = c->t_off[t]; i < c->t_off[t + 1]; i++)
				for (uint32_t j = 0; j < nx && !(c->sw_lids_only && c->ca_lid[c->t_lid[i]]); j++) {
					int rc = fn(c, c->bucket[j], c->t_lid[i], h, arg);
					if (rc)
						return rc;
				}
			if (++c->calls % CANCEL_EVERY == 0 && c->core->cancelled &&
			    c->core->cancelled(c->core)) {
				c->cancelled = 1;
				return -ECANCELED;
			}
		}
	return 0;
}

/* ---- one pass: every path on the lowest layer it fits ------------------------------------- */

struct pass {
	const uint8_t *prev;       /* the previous pass's layers (NULL: the first pass) */
	uint8_t cls;               /* place the paths of this previous layer now */
	uint8_t *out;              /* [S * cols] the layers given */
	uint32_t used;             /* layers opened */
};

static int place(struct lctx *c, uint32_t x, uint32_t lid, unsigned h, void *arg)
{
	struct pass *p = arg;
	size_t at = (size_t)x * c->cols + lid;
	if (p->prev && p->prev[at] != p->cls)
		return 0;
	if (in_bulk(c, c->bulk0, x, lid))
		return 0;
	c->work += h;
	if (!walk(c, x, lid, h) || !c->ndep) /* on layer 0: no cycle can pass it */
		return 0;
	for (uint32_t k = 0; k < c->max_layers; k++) {
		if (k == p->used) {
			if (!c->dag[k] && !(c->dag[k] = layer_dag_new(c->sp)))
				return -ENOMEM;
			if (k || !c->bulk0) /* 2.: layer 0 holds the bulk paths */
				layer_dag_clear(c->dag[k]);
			p->used++;
		}
		if (layer_dag_add_deps(c->dag[k], c->dep, c->ndep) == 0) {
			p->out[at] = (uint8_t)k;
			return 0;
		}
	}
	return -E2BIG;
}

/* One pass: the classes of prev in the order given (NULL prev: one class, every path). */
static int run_pass(struct lctx *c, const uint8_t *prev, const uint8_t *cls_order,
		    uint32_t ncls, uint8_t *out, uint32_t *used)
{
	struct pass p = { .prev = prev, .out = out, .used = c->bulk0 != BULK_NONE };
	memset(out, 0, (size_t)c->S * c->cols);
	int rc = 0;
	c->sw_lids_only = c->bulk0 == BULK_TO_CA;
	if (!prev)
		rc = for_paths(c, place, &p);
	for (uint32_t i = 0; prev && rc == 0 && i < ncls; i++) {
		p.cls = cls_order[i];
		rc = for_paths(c, place, &p);
	}
	c->sw_lids_only = 0;
	*used = p.used ? p.used : 1;
	return rc;
}

/* ---- bookkeeping -------------------------------------------------------------------------- */

static int count_path(struct lctx *c, uint32_t x, uint32_t lid, unsigned h, void *arg)
{
	(void)h;
	struct sssp_layers *l = arg;
	uint8_t k = l->layer[(size_t)x * c->cols + lid];
	if (k >= SSSP_MAX_LAYERS) /* a failed assignment: more layers than an IB port has VLs */
		return 0;
	l->paths[k]++;
	l->traffic[k] += c->g->src_w[x];
	return 0;
}

/* Paths and traffic per layer, the one-hop paths (on layer 0) included; with no table all
 * of them on layer 0, and with the paths to CAs put there at once (2.) those: counted per
 * destination switch. */
static void count_layers(struct lctx *c, struct sssp_layers *l)
{
	memset(l->paths, 0, sizeof(l->paths));
	memset(l->traffic, 0, sizeof(l->traffic));
	for (uint32_t t = 0; t < c->S; t++) {
		const uint8_t *row = c->hops + (size_t)t * c->S;
		uint32_t lids = 0, ca_lids = 0;
		for (uint32_t i = c->t_off[t]; i < c->t_off[t + 1]; i++) {
			lids++;
			ca_lids += c->ca_lid[c->t_lid[i]];
		}
		for (uint32_t x = 0; x < c->S && lids; x++) {
			if (row[x] == 0xFF || !row[x])
				continue;
			uint32_t n = row[x] == 1 || !l->layer ? lids :
				     c->bulk0 == BULK_TO_CA ? ca_lids : 0;
			l->paths[0] += n;
			l->traffic[0] += (uint64_t)n * c->g->src_w[x];
		}
	}
	c->sw_lids_only = c->bulk0 == BULK_TO_CA;
	if (l->layer && c->hmax >= 2)
		for_paths(c, count_path, l);
	c->sw_lids_only = 0;
}

/* Every layer's DAG holding exactly the paths the table gives it: their dependencies added
 * unchecked, then each layer sorted (Kahn) into a topological order, which exists as every
 * layer of the table is acyclic. */
static int add_assigned(struct lctx *c, uint32_t x, uint32_t lid, unsigned h, void *arg)
{
	const uint8_t *layer = arg;
	if (!walk(c, x, lid, h))
		return 0;
	struct layer_dag *d = c->dag[layer[(size_t)x * c->cols + lid]];
	for (uint32_t i = 0; i < c->ndep; i++)
		layer_dag_add_dep(d, c->dep[2 * i], c->dep[2 * i + 1], 1);
	return 0;
}

static int rebuild_dags(struct lctx *c, const uint8_t *layer, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		if (!c->dag[k] && !(c->dag[k] = layer_dag_new(c->sp)))
			return -ENOMEM;
		layer_dag_clear(c->dag[k]);
	}
	int rc = for_paths(c, add_assigned, (void *)layer);
	for (uint32_t k = 0; rc == 0 && k < n; k++)
		if (!layer_dag_sort(c->dag[k]))
			rc = -EDEADLK; /* a bug: the passes never make a cycle */
	return rc;
}

/* ---- 5. balance the traffic over the layers ----------------------------------------------- */

struct balance {
	uint8_t *layer;
	uint32_t n;
	uint64_t traffic[SSSP_MAX_LAYERS], target;
	uint64_t moved;
};

static int move_path(struct lctx *c, uint32_t x, uint32_t lid, unsigned h, void *arg)
{
	struct balance *b = arg;
	size_t at = (size_t)x * c->cols + lid;
	uint8_t from = b->layer[at];
	uint64_t w = c->g->src_w[x];
	if (!w || b->traffic[from] <= b->target)
		return 0;
	if (!walk(c, x, lid, h))
		return 0;
	/* the emptiest layer, if it stays below the mean with it and takes it (one try) */
	uint32_t best = SSSP_MAX_LAYERS;
	for (uint32_t k = 0; k < b->n; k++)
		if (k != from && b->traffic[k] + w <= b->target &&
		    (best == SSSP_MAX_LAYERS || b->traffic[k] < b->traffic[best]))
			best = k;
	if (best == SSSP_MAX_LAYERS || layer_dag_add_deps(c->dag[best], c->dep, c->ndep))
		return 0;
	layer_dag_remove_deps(c->dag[from], c->dep, c->ndep);
	b->layer[at] = (uint8_t)best;
	b->traffic[from] -= w;
	b->traffic[best] += w;
	b->moved++;
	return 0;
}

static int balance_layers(struct lctx *c, struct sssp_layers *l)
{
	struct balance b = { .layer = l->layer, .n = l->n_layers };
	uint64_t total = 0;
	count_layers(c, l);
	for (uint32_t k = 0; k < b.n; k++) {
		b.traffic[k] = l->traffic[k];
		total += l->traffic[k];
	}
	b.target = total / b.n + 1;
	/* a path moves only where it follows the layer's order as it is: no search, a linear
	 * pass */
	for (uint32_t k = 0; k < b.n; k++)
		layer_dag_fix(c->dag[k], 1);
	int rc = for_paths(c, move_path, &b);
	l->moved = b.moved;
	return rc;
}

/* ---- 1. and 2.: the graph of all paths on one layer ---------------------------------------- */

/* Adds to d every path of the set (BULK_*), per destination: the paths to a LID form a tree,
 * so a switch's next dependency carries the paths of its whole subtree. 0 or -ENOMEM. */
static int bulk_build(struct lctx *c, struct layer_dag *d, int set)
{
	const struct sssp_graph *g = c->g;
	uint64_t *acc = malloc((c->S ? c->S : 1) * sizeof(*acc));
	uint32_t *order = malloc((c->S ? c->S : 1) * sizeof(*order));
	if (!acc || !order) {
		free(acc);
		free(order);
		return -ENOMEM;
	}
	layer_dag_clear(d);
	for (uint32_t t = 0; t < c->S; t++) {
		if (c->t_off[t] == c->t_off[t + 1])
			continue;
		const uint8_t *row = c->hops + (size_t)t * c->S;
		uint32_t count[257] = { 0 }, n;
		for (uint32_t s = 0; s < c->S; s++)
			if (row[s] != 0xFF)
				count[row[s] + 1]++;
		for (unsigned h = 1; h < 257; h++)
			count[h] += count[h - 1];
		n = count[256];
		for (uint32_t s = 0; s < c->S; s++)
			if (row[s] != 0xFF)
				order[count[row[s]]++] = s;
		for (uint32_t i = c->t_off[t]; i < c->t_off[t + 1]; i++) {
			uint32_t lid = c->t_lid[i];
			if ((set == BULK_TO_CA || set == BULK_CA_TO_CA) && !c->ca_lid[lid])
				continue;
			for (uint32_t j = 0; j < n; j++)
				acc[order[j]] = in_bulk(c, set, order[j], lid);
			for (uint32_t j = n; j-- > 1;) {
				uint32_t s = order[j];
				uint8_t p = c->lft[(size_t)s * c->stride + lid];
				uint32_t a = p == IBSM_NO_PORT ? IBSM_NONE : g->port_link[c->port0[s] + p];
				if (a == IBSM_NONE || !acc[s])
					continue;
				uint32_t u = g->peer[a];
				if (u == t)
					continue;
				uint8_t q = c->lft[(size_t)u * c->stride + lid];
				uint32_t b = q == IBSM_NO_PORT ? IBSM_NONE : g->port_link[c->port0[u] + q];
				if (b == IBSM_NONE)
					continue;
				layer_dag_add_dep(d, a, b, acc[s] > UINT32_MAX ? UINT32_MAX : (uint32_t)acc[s]);
				acc[u] += acc[s];
			}
		}
	}
	free(acc);
	free(order);
	return 0;
}

/* 1.: 1 when every path fits on one layer; else 0 with the components and seed order set. */
static int one_layer_acyclic(struct lctx *c)
{
	if (!c->dag[0] && !(c->dag[0] = layer_dag_new(c->sp)))
		return -ENOMEM;
	int rc = bulk_build(c, c->dag[0], BULK_ALL);
	if (rc < 0)
		return rc;
	if (layer_dag_sort(c->dag[0]))
		return 1;
	if (layer_dag_cycles(c->dag[0], c->scc) < 0)
		return -ENOMEM;
	return 0;
}

/* 2.: 1 when the paths to CA LIDs (else those between CA-switches) have no cycle: they are
 * then layer 0, its order fixed and the seed of the others; 0 when both have one (layer 0
 * emptied); < 0. */
static int bulk_acyclic(struct lctx *c)
{
	for (int set = BULK_TO_CA; set <= BULK_CA_TO_CA; set++) {
		int rc = bulk_build(c, c->dag[0], set);
		if (rc < 0)
			return rc;
		if (!layer_dag_sort(c->dag[0]))
			continue;
		if (layer_dag_seed(c->dag[0]) < 0)
			return -ENOMEM;
		layer_dag_fix(c->dag[0], 1);
		c->bulk0 = set;
		return 1;
	}
	layer_dag_clear(c->dag[0]);
	return 0;
}

/* ---- 3. and 4.: the passes ---------------------------------------------------------------- */

static uint32_t rand_next(uint32_t *state)
{
	uint32_t x = *state;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *state = x;
}

/* The fewest layers and, among equals, the fewest paths on the last one. */
static int better(uint32_t n, uint64_t top, uint32_t best_n, uint64_t best_top)
{
	return n < best_n || (n == best_n && top < best_top);
}

static uint64_t top_paths(const struct lctx *c, const uint8_t *layer, uint32_t n)
{
	uint64_t k = 0;
	for (size_t i = 0; i < (size_t)c->S * c->cols; i++)
		k += layer[i] == n - 1;
	return k;
}

static uint64_t work_done(const struct lctx *c)
{
	return c->work + layer_dag_visits(c->sp);
}

/* The class order of an improving pass: the previous layers in reverse, every third pass
 * shuffled. */
static void class_order(uint8_t *order, uint32_t n, uint32_t pass, uint32_t *state)
{
	for (uint32_t k = 0; k < n; k++)
		order[k] = (uint8_t)(n - 1 - k);
	if (pass % 3 == 2)
		for (uint32_t k = n; k > 1; k--) {
			uint32_t j = rand_next(state) % k;
			uint8_t x = order[k - 1];
			order[k - 1] = order[j];
			order[j] = x;
		}
}

/* 2.: the paths marked `mark` go on layer `mark` where they follow its fixed order, else they
 * are marked mark + 1 (on layer 0 the paths left out of the bulk). */
struct mark_pass {
	uint8_t *table;
	uint8_t mark;
	uint64_t moved_on;
};

static int mark_path(struct lctx *c, uint32_t x, uint32_t lid, unsigned h, void *arg)
{
	struct mark_pass *m = arg;
	uint8_t *at = &m->table[(size_t)x * c->cols + lid];
	if (m->mark ? *at != m->mark : in_bulk(c, c->bulk0, x, lid))
		return 0;
	c->work += h;
	if (!walk(c, x, lid, h) || !c->ndep)
		return 0;
	if (layer_dag_add_deps(c->dag[m->mark], c->dep, c->ndep) == 0)
		return 0;
	*at = (uint8_t)(m->mark + 1);
	m->moved_on++;
	return 0;
}

/* 2.: the paths the bulk left out go on layer 0 where they follow its order; those left go on
 * layer 1 at once if they have no cycle among them, else where they follow an order of their
 * graph (its search's reverse finishing order: only the dependencies that close a cycle go
 * against it), the rest on to layer 2, and so on: linear work per layer. Returns the layers
 * with table filled and the DAGs matching it, 0 when layer *stuck took none of the paths
 * marked with it (place() goes on with them), -E2BIG beyond max_layers, < 0 otherwise. */
static int bulk_layers(struct lctx *c, uint8_t *table, uint32_t max_layers, uint32_t *stuck)
{
	uint32_t *scc = malloc((c->g->L ? c->g->L : 1) * sizeof(*scc));
	if (!scc)
		return -ENOMEM;
	memset(table, 0, (size_t)c->S * c->cols);
	c->marks = table;
	c->sw_lids_only = c->bulk0 == BULK_TO_CA;
	struct mark_pass m = { .table = table };
	int rc = for_paths(c, mark_path, &m);
	for (uint32_t k = 1; rc == 0 && m.moved_on; k++) {
		if (k >= max_layers) {
			rc = -E2BIG;
			break;
		}
		if (!c->dag[k] && !(c->dag[k] = layer_dag_new(c->sp))) {
			rc = -ENOMEM;
			break;
		}
		c->mark_value = (uint8_t)k;
		rc = bulk_build(c, c->dag[k], BULK_MARKED); /* the paths marked k */
		if (rc < 0)
			break;
		if (layer_dag_sort(c->dag[k])) { /* they all fit */
			rc = (int)k + 1;
			break;
		}
		if (layer_dag_cycles(c->dag[k], scc) < 0) {
			rc = -ENOMEM;
			break;
		}
		layer_dag_clear(c->dag[k]); /* from their graph's order, fixed */
		layer_dag_fix(c->dag[k], 1);
		uint64_t marked = m.moved_on;
		m.mark = (uint8_t)k;
		m.moved_on = 0;
		rc = for_paths(c, mark_path, &m);
		if (rc == 0 && m.moved_on == marked) { /* none taken */
			for (size_t i = 0; i < (size_t)c->S * c->cols; i++)
				if (table[i] == k + 1)
					table[i] = (uint8_t)k;
			*stuck = k;
			break;
		}
	}
	c->sw_lids_only = 0;
	free(scc);
	if (rc == 0 && !m.moved_on)
		rc = 1;
	return rc;
}

/* 2., when bulk_layers got stuck at layer k: the paths marked k placed one by one from layer k
 * on (layer_dag.c's searches). */
static int unstick(struct lctx *c, uint8_t *table, uint32_t k, uint32_t *used)
{
	struct pass p = { .prev = table, .cls = (uint8_t)k, .out = table, .used = k };
	if (c->dag[k])
		layer_dag_fix(c->dag[k], 0);
	c->sw_lids_only = c->bulk0 == BULK_TO_CA;
	int rc = for_paths(c, place, &p);
	c->sw_lids_only = 0;
	*used = p.used;
	return rc;
}

/* 3. and 4. into l (its table allocated here): each improving pass places the classes of the
 * pass before it (not of the best one: iterated greedy walks on, never needing more layers),
 * and the best assignment seen is kept; with bulk0 (2.) the first pass only. The first pass
 * gives up beyond twice max_layers (the later ones save some 20%). *dags_best: the DAGs hold
 * the best assignment. Returns 0, -E2BIG (l->n_layers: the layers the best pass needed, or
 * the first pass's limit + 1 with l->passes 0), -ENOMEM, -ECANCELED. */
static int assign_paths(struct lctx *c, uint32_t max_layers, struct sssp_layers *l,
			int *dags_best)
{
	size_t cells = (size_t)c->S * c->cols;
	uint8_t *best = malloc(cells ? cells : 1), *prev = malloc(cells ? cells : 1);
	uint8_t *cur = malloc(cells ? cells : 1);
	if (!best || !prev || !cur) {
		free(best);
		free(prev);
		free(cur);
		return -ENOMEM;
	}
	c->max_layers = 2 * max_layers + 2 < SSSP_PASS_LAYERS ? 2 * max_layers + 2 : SSSP_PASS_LAYERS;
	uint32_t best_n = 0, prev_n = 0, n = 0, patience = 0, state = 0x9E3779B9u;
	c->work = 0;
	int rc = 0;
	if (c->bulk0) { /* 2.: layer by layer, no improving pass */
		uint32_t stuck = 0;
		rc = bulk_layers(c, best, c->max_layers, &stuck);
		if (rc == 0)
			rc = unstick(c, best, stuck, &prev_n);
		else if (rc > 0)
			prev_n = (uint32_t)rc, rc = 0;
		free(prev);
		free(cur);
		l->layer = best;
		l->passes = rc == 0;
		l->n_layers = l->first_pass = rc == -E2BIG ? c->max_layers + 1 : prev_n;
		*dags_best = 1;
		if (rc < 0 && rc != -E2BIG) {
			free(best);
			l->layer = NULL;
			return rc;
		}
		return rc == -E2BIG || l->n_layers > max_layers ? -E2BIG : 0;
	} else {
		rc = run_pass(c, NULL, NULL, 0, prev, &prev_n);
	}
	l->passes = rc == 0; /* 0: the first pass gave up */
	l->first_pass = prev_n;
	uint64_t best_top = rc == 0 ? top_paths(c, prev, prev_n) : 0;
	best_n = prev_n;
	memcpy(best, prev, cells);
	*dags_best = 1;
	uint64_t budget = 8 * (work_done(c) + 1);
	budget = budget < WORK_BUDGET ? WORK_BUDGET : budget;
	budget = budget > 4 * WORK_BUDGET ? 4 * WORK_BUDGET : budget;
	/* two layers are the fewest a cyclic graph needs */
	while (rc == 0 && !c->bulk0 && best_n > 2 && l->passes <= PASS_MAX &&
	       patience < PASS_PATIENCE && work_done(c) <= budget) {
		uint8_t order[SSSP_PASS_LAYERS];
		class_order(order, prev_n, l->passes, &state);
		c->max_layers = prev_n; /* a pass never needs more than the classes it places */
		rc = run_pass(c, prev, order, prev_n, cur, &n);
		l->passes++;
		*dags_best = 0;
		if (rc == -E2BIG) { /* cannot happen (Culberson), but never trust it: go on */
			rc = 0;
			patience++;
			continue;
		}
		if (rc < 0)
			break;
		uint64_t top = top_paths(c, cur, n);
		c->core->log(c->core, IBSM_LOG_DEBUG, "layer pass %u: %u layers, %llu paths on the "
			     "last", l->passes, n, (unsigned long long)top);
		if (better(n, top, best_n, best_top)) {
			patience = n < best_n ? 0 : patience + 1;
			best_n = n;
			best_top = top;
			memcpy(best, cur, cells);
			*dags_best = 1;
		} else {
			patience++;
		}
		uint8_t *x = prev;
		prev = cur;
		cur = x;
		prev_n = n;
	}
	free(cur);
	free(prev);
	if (rc < 0 && rc != -E2BIG) {
		free(best);
		return rc;
	}
	l->layer = best;
	l->n_layers = rc == -E2BIG ? c->max_layers + 1 : best_n;
	if (rc == -E2BIG || best_n > max_layers)
		return -E2BIG;
	return 0;
}

/* ---- the whole assignment ----------------------------------------------------------------- */

static void lctx_free(struct lctx *c)
{
	for (unsigned k = 0; k < SSSP_PASS_LAYERS; k++)
		layer_dag_free(c->dag[k]);
	layer_dag_space_free(c->sp);
	free((void *)c->port0);
	free(c->t_off);
	free(c->t_lid);
	free(c->ca_lid);
	free(c->bucket);
	free(c->scc);
}

/* The destination LIDs by switch, which are CAs', the longest path, port 0 of every switch. */
static int lctx_init(struct lctx *c, const struct ibsm_fabric *f, const struct engine_dests *d)
{
	size_t S = c->S ? c->S : 1;
	uint32_t *port0 = malloc(S * sizeof(*port0)), *at = malloc(S * sizeof(*at));
	c->port0 = port0;
	c->t_off = calloc(S + 1, sizeof(*c->t_off));
	c->ca_lid = calloc(c->cols, 1);
	c->bucket = malloc(S * sizeof(*c->bucket));
	c->scc = malloc((c->g->L ? c->g->L : 1) * sizeof(*c->scc));
	c->sp = layer_dag_space_new(c->g);
	uint32_t n = 0;
	for (uint32_t i = 0; i < d->n; i++)
		n += d->v[i].end - d->v[i].first;
	c->t_lid = malloc((n ? n : 1) * sizeof(*c->t_lid));
	if (!port0 || !at || !c->t_off || !c->ca_lid || !c->bucket || !c->scc || !c->sp ||
	    !c->t_lid) {
		free(at);
		return -ENOMEM;
	}
	for (uint32_t s = 0; s < c->S; s++)
		port0[s] = ibsm_switch_node(f, s)->port0;
	for (uint32_t i = 0; i < d->n; i++)
		c->t_off[d->v[i].sw + 1] += d->v[i].end - d->v[i].first;
	for (uint32_t s = 0; s < c->S; s++)
		c->t_off[s + 1] += c->t_off[s];
	memcpy(at, c->t_off, S * sizeof(*at));
	for (uint32_t i = 0; i < d->n; i++)
		for (unsigned k = d->v[i].first; k < d->v[i].end; k++) {
			uint32_t lid = d->v[i].base + k;
			c->t_lid[at[d->v[i].sw]++] = (uint16_t)lid;
			if (lid < c->cols)
				c->ca_lid[lid] = d->v[i].is_ca;
		}
	free(at);
	c->hmax = 0;
	for (uint32_t t = 0; t < c->S; t++) {
		if (c->t_off[t] == c->t_off[t + 1])
			continue;
		const uint8_t *row = c->hops + (size_t)t * c->S;
		for (uint32_t x = 0; x < c->S; x++)
			if (row[x] != 0xFF && row[x] > c->hmax)
				c->hmax = row[x];
	}
	return 0;
}

/* 2. to 5. on routes with a cycle. */
static int assign_cyclic(struct lctx *c, uint32_t max_layers, struct sssp_layers *out)
{
	int dags_best = 0;
	double t0 = engine_now_seconds();
	int rc = (uint64_t)c->S * c->cols >= TREE_MODE_PATHS ? bulk_acyclic(c) : 0;
	double t1 = engine_now_seconds();
	if (rc >= 0)
		rc = assign_paths(c, max_layers, out, &dags_best);
	if (rc == -E2BIG && c->bulk0) {
		/* 2. needs more layers than there are (the routes from and to switches' port 0 do
		 * not fit over a fixed layer 0 on a large tree): every path placed by 3. and 4. */
		c->core->log(c->core, IBSM_LOG_VERBOSE, "layers: over the acyclic routes to CAs more "
			     "than %u layers are needed; placing every path", max_layers);
		sssp_layers_free(out);
		uint32_t cols = out->cols;
		memset(out, 0, sizeof(*out));
		out->cols = cols;
		for (uint32_t k = 0; k < SSSP_PASS_LAYERS; k++)
			if (c->dag[k]) {
				layer_dag_fix(c->dag[k], 0);
				layer_dag_clear(c->dag[k]);
			}
		c->bulk0 = BULK_NONE;
		dags_best = 0;
		rc = assign_paths(c, max_layers, out, &dags_best);
	}
	double t2 = engine_now_seconds();
	if (rc == 0 && out->n_layers > 1 && !dags_best)
		rc = rebuild_dags(c, out->layer, out->n_layers);
	if (rc == 0 && out->n_layers > 1 && !c->bulk0) /* 2.: the rest is (switch) management */
		rc = balance_layers(c, out);
	c->core->log(c->core, IBSM_LOG_VERBOSE, "layers: %s%.3f s, placing %.3f s, balancing "
		     "%.3f s (%llu paths moved)", c->bulk0 == BULK_TO_CA ? "routes to CAs acyclic, " :
		     c->bulk0 == BULK_CA_TO_CA ? "routes between CA switches acyclic, " : "",
		     t1 - t0, t2 - t1, engine_now_seconds() - t2, (unsigned long long)out->moved);
	return rc;
}

int sssp_layers_assign(const struct ibsm_core *core, const struct ibsm_fabric *f,
		       const struct sssp_graph *g, const uint8_t *hops,
		       const struct engine_dests *d, const uint8_t *lft, uint32_t stride,
		       uint32_t max_layers, uint32_t *needed, struct sssp_layers *out)
{
	struct lctx c = { .core = core, .g = g, .hops = hops, .lft = lft, .stride = stride,
			  .S = g->S, .cols = f->max_lid + 1 };
	memset(out, 0, sizeof(*out));
	out->cols = c.cols;
	*needed = 0;
	if (max_layers > SSSP_MAX_LAYERS)
		max_layers = SSSP_MAX_LAYERS;
	int rc = lctx_init(&c, f, d);
	if (rc == 0)
		rc = one_layer_acyclic(&c);
	if (rc == 1) { /* nothing to do: every path on layer 0 */
		out->n_layers = 1;
		out->passes = 1;
		out->first_pass = 1;
		*needed = 1;
		count_layers(&c, out);
		lctx_free(&c);
		return 0;
	}
	if (rc == 0)
		rc = assign_cyclic(&c, max_layers, out);
	*needed = out->n_layers;
	if (rc == 0 || rc == -E2BIG)
		count_layers(&c, out);
	if (c.cancelled)
		rc = -ECANCELED;
	lctx_free(&c);
	if (rc < 0 && rc != -E2BIG)
		sssp_layers_free(out);
	return rc;
}

void sssp_layers_free(struct sssp_layers *l)
{
	free(l->layer);
	l->layer = NULL;
}
