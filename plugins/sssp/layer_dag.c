/* SPDX-License-Identifier: BSD-2-Clause */
/* layer_dag.c - one virtual layer's channel dependency graph, kept free of cycles as routes
 * are added: the channels (directed switch links) keep a topological order, and a new
 * dependency a -> b that goes against it is checked and the order repaired by Pearce and
 * Kelly's dynamic topological sort (JEA 2006): search forward from b among the channels
 * ordered up to a (reaching a means a cycle: refused), backward from a among those ordered
 * from b, and give the two sets the positions they held, the backward one first. A
 * dependency that follows the order costs nothing, which is most of them on a tree-like
 * fabric. Counts per dependency let routes be taken out again. Not thread-safe: one layer,
 * one thread. The slots: the dependencies out of channel a (into switch h = peer[a]) are the
 * links out of h, in order, from dbase[a]. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sssp.h"

#define LAYER_DAG_SEARCH_MAX 256 /* channels a search may visit */

struct layer_dag_space {
	const struct sssp_graph *g;
	uint32_t C;                /* channels: the graph's links */
	uint64_t D;                /* dependency slots */
	uint64_t *dbase;           /* [C] first slot of each channel's dependencies */
	/* search scratch */
	uint32_t *mark, epoch;     /* [C] */
	uint32_t *stack;           /* [C] */
	uint64_t *fset, *bset;     /* [C] (order << 32 | channel) of the two searches */
	uint32_t *pos;             /* [2C] positions to hand out */
	uint32_t *seed;            /* [C] the order a cleared layer starts from, or NULL */
	uint64_t visits;           /* channels the searches visited, all layers (the work done) */
};

struct layer_dag {
	struct layer_dag_space *sp;
	uint32_t *cnt;             /* [D] routes per dependency */
	uint32_t *ord;             /* [C] position of each channel in the topological order */
	int fixed;                 /* the order never changes: a dependency against it is refused */
};

struct layer_dag_space *layer_dag_space_new(const struct sssp_graph *g)
{
	struct layer_dag_space *sp = calloc(1, sizeof(*sp));
	if (!sp)
		return NULL;
	size_t C = g->L ? g->L : 1;
	sp->g = g;
	sp->C = g->L;
	sp->dbase = malloc(C * sizeof(*sp->dbase));
	sp->mark = calloc(C, sizeof(*sp->mark));
	sp->stack = malloc(C * sizeof(*sp->stack));
	sp->fset = malloc(C * sizeof(*sp->fset));
	sp->bset = malloc(C * sizeof(*sp->bset));
	sp->pos = malloc(2 * C * sizeof(*sp->pos));
	if (!sp->dbase || !sp->mark || !sp->stack || !sp->fset || !sp->bset || !sp->pos) {
		layer_dag_space_free(sp);
		return NULL;
	}
	uint64_t D = 0;
	for (uint32_t a = 0; a < g->L; a++) {
		uint32_t h = g->peer[a];
		sp->dbase[a] = D;
		D += g->off[h + 1] - g->off[h];
	}
	sp->D = D;
	return sp;
}

void layer_dag_space_free(struct layer_dag_space *sp)
{
	if (!sp)
		return;
	free(sp->dbase);
	free(sp->mark);
	free(sp->stack);
	free(sp->fset);
	free(sp->bset);
	free(sp->pos);
	free(sp->seed);
	free(sp);
}

uint64_t layer_dag_slots(const struct layer_dag_space *sp)
{
	return sp->D;
}

uint64_t layer_dag_visits(const struct layer_dag_space *sp)
{
	return sp->visits;
}

void layer_dag_fix(struct layer_dag *d, int fixed)
{
	d->fixed = fixed;
}

int layer_dag_seed(const struct layer_dag *d)
{
	struct layer_dag_space *sp = d->sp;
	if (!sp->seed && !(sp->seed = malloc((sp->C ? sp->C : 1) * sizeof(*sp->seed))))
		return -1;
	memcpy(sp->seed, d->ord, (size_t)sp->C * sizeof(*sp->seed));
	return 0;
}

void layer_dag_clear(struct layer_dag *d)
{
	memset(d->cnt, 0, (d->sp->D ? d->sp->D : 1) * sizeof(*d->cnt));
	for (uint32_t c = 0; c < d->sp->C; c++)
		d->ord[c] = d->sp->seed ? d->sp->seed[c] : c;
}

struct layer_dag *layer_dag_new(struct layer_dag_space *sp)
{
	struct layer_dag *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->sp = sp;
	d->cnt = malloc((sp->D ? sp->D : 1) * sizeof(*d->cnt));
	d->ord = malloc((sp->C ? sp->C : 1) * sizeof(*d->ord));
	if (!d->cnt || !d->ord) {
		layer_dag_free(d);
		return NULL;
	}
	layer_dag_clear(d);
	return d;
}

void layer_dag_free(struct layer_dag *d)
{
	if (!d)
		return;
	free(d->cnt);
	free(d->ord);
	free(d);
}

/* The slot of dependency a -> b (b leaves the switch a enters). */
static inline uint64_t slot(const struct layer_dag_space *sp, uint32_t a, uint32_t b)
{
	return sp->dbase[a] + (b - sp->g->off[sp->g->peer[a]]);
}

void layer_dag_add_dep(struct layer_dag *d, uint32_t a, uint32_t b, uint32_t w)
{
	d->cnt[slot(d->sp, a, b)] += w;
}

int layer_dag_sort(struct layer_dag *d)
{
	struct layer_dag_space *sp = d->sp;
	const struct sssp_graph *g = sp->g;
	uint32_t *indeg = sp->mark, *queue = sp->stack, head = 0, n = 0;
	memset(indeg, 0, (sp->C ? sp->C : 1) * sizeof(*indeg));
	for (uint32_t a = 0; a < sp->C; a++) {
		uint32_t h = g->peer[a];
		for (uint32_t b = g->off[h]; b < g->off[h + 1]; b++)
			indeg[b] += d->cnt[slot(sp, a, b)] != 0;
	}
	for (uint32_t c = 0; c < sp->C; c++)
		if (!indeg[c])
			queue[n++] = c;
	while (head < n) {
		uint32_t a = queue[head], h = g->peer[a];
		d->ord[a] = head++;
		for (uint32_t b = g->off[h]; b < g->off[h + 1]; b++)
			if (d->cnt[slot(sp, a, b)] && --indeg[b] == 0)
				queue[n++] = b;
	}
	int acyclic = n == sp->C;
	if (!acyclic) /* the channels on or behind a cycle: after the others, any order */
		for (uint32_t c = 0; c < sp->C; c++)
			if (indeg[c])
				d->ord[c] = n++;
	memset(sp->mark, 0, (sp->C ? sp->C : 1) * sizeof(*sp->mark));
	sp->epoch = 0;
	return acyclic;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return a < b ? -1 : a > b;
}

static uint32_t next_epoch(struct layer_dag_space *sp)
{
	if (++sp->epoch == 0) {
		memset(sp->mark, 0, (sp->C ? sp->C : 1) * sizeof(*sp->mark));
		sp->epoch = 1;
	}
	return sp->epoch;
}

/* Channels reachable from b ordered up to ub into fset; 1 when a is among them (a cycle), or
 * when the search would visit more than LAYER_DAG_SEARCH_MAX channels (then the dependency is
 * refused as if it closed a cycle: the route tries the next layer, and a large cyclic fabric
 * is placed in bounded time). */
static int search_forward(struct layer_dag *d, uint32_t b, uint32_t a, uint32_t ub,
			  uint32_t *nf)
{
	struct layer_dag_space *sp = d->sp;
	const struct sssp_graph *g = sp->g;
	uint32_t ep = next_epoch(sp), top = 0, n = 0, looked = 0;
	sp->mark[b] = ep;
	sp->stack[top++] = b;
	while (top) {
		uint32_t v = sp->stack[--top], h = g->peer[v];
		looked += g->off[h + 1] - g->off[h];
		if (n == LAYER_DAG_SEARCH_MAX) {
			sp->visits += looked;
			return 1;
		}
		sp->fset[n++] = (uint64_t)d->ord[v] << 32 | v;
		for (uint32_t w = g->off[h]; w < g->off[h + 1]; w++) {
			if (!d->cnt[slot(sp, v, w)] || sp->mark[w] == ep || d->ord[w] > ub)
				continue;
			if (w == a)
				return 1;
			sp->mark[w] = ep;
			sp->stack[top++] = w;
		}
	}
	*nf = n;
	sp->visits += looked;
	return 0;
}

/* Channels reaching a ordered from lb into bset; 1 when that would visit more than
 * LAYER_DAG_SEARCH_MAX channels (refused, as above). */
static int search_backward(struct layer_dag *d, uint32_t a, uint32_t lb, uint32_t *nb)
{
	struct layer_dag_space *sp = d->sp;
	const struct sssp_graph *g = sp->g;
	uint32_t ep = next_epoch(sp), top = 0, n = 0, looked = 0;
	sp->mark[a] = ep;
	sp->stack[top++] = a;
	while (top) {
		uint32_t w = sp->stack[--top], u = g->tail[w];
		looked += g->in_off[u + 1] - g->in_off[u];
		if (n == LAYER_DAG_SEARCH_MAX) {
			sp->visits += looked;
			return 1;
		}
		sp->bset[n++] = (uint64_t)d->ord[w] << 32 | w;
		for (uint32_t i = g->in_off[u]; i < g->in_off[u + 1]; i++) {
			uint32_t v = g->in_link[i];
			if (!d->cnt[slot(sp, v, w)] || sp->mark[v] == ep || d->ord[v] < lb)
				continue;
			sp->mark[v] = ep;
			sp->stack[top++] = v;
		}
	}
	*nb = n;
	sp->visits += looked;
	return 0;
}

/* Makes room for a -> b where ord[a] > ord[b]; 1 when it would close a cycle. */
static int reorder(struct layer_dag *d, uint32_t a, uint32_t b)
{
	struct layer_dag_space *sp = d->sp;
	uint32_t nf = 0, nb = 0;
	if (search_forward(d, b, a, d->ord[a], &nf))
		return 1;
	if (search_backward(d, a, d->ord[b], &nb))
		return 1;
	qsort(sp->fset, nf, sizeof(*sp->fset), cmp_u64);
	qsort(sp->bset, nb, sizeof(*sp->bset), cmp_u64);
	for (uint32_t i = 0; i < nb; i++)
		sp->pos[i] = (uint32_t)(sp->bset[i] >> 32);
	for (uint32_t i = 0; i < nf; i++)
		sp->pos[nb + i] = (uint32_t)(sp->fset[i] >> 32);
	qsort(sp->pos, nb + nf, sizeof(*sp->pos), cmp_u32);
	for (uint32_t i = 0; i < nb; i++)
		d->ord[(uint32_t)sp->bset[i]] = sp->pos[i];
	for (uint32_t i = 0; i < nf; i++)
		d->ord[(uint32_t)sp->fset[i]] = sp->pos[nb + i];
	return 0;
}

int layer_dag_add_deps(struct layer_dag *d, const uint32_t *dep, uint32_t n)
{
	struct layer_dag_space *sp = d->sp;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t a = dep[2 * i], b = dep[2 * i + 1];
		uint64_t s = slot(sp, a, b);
		if (!d->cnt[s] && d->ord[a] > d->ord[b] && (d->fixed || reorder(d, a, b))) {
			while (i--)
				d->cnt[slot(sp, dep[2 * i], dep[2 * i + 1])]--;
			return 1;
		}
		d->cnt[s]++;
	}
	return 0;
}

void layer_dag_remove_deps(struct layer_dag *d, const uint32_t *dep, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		d->cnt[slot(d->sp, dep[2 * i], dep[2 * i + 1])]--;
}

/* Tarjan's strongly connected components, iteratively: the channels of every component of
 * more than one channel (the only ones a cycle can pass) get its number in scc[], the others
 * IBSM_NONE; the reverse of the order the search finishes them in becomes the seed order of
 * the layers (every dependency between components goes forward in it). Returns the number
 * of such components, or -1 without memory. */
int layer_dag_cycles(struct layer_dag *d, uint32_t *scc)
{
	struct layer_dag_space *sp = d->sp;
	const struct sssp_graph *g = sp->g;
	size_t C = sp->C ? sp->C : 1;
	uint32_t *index = malloc(C * sizeof(*index)), *low = malloc(C * sizeof(*low));
	uint32_t *iter = malloc(C * sizeof(*iter)), *call = malloc(C * sizeof(*call));
	uint32_t *stack = sp->stack;
	uint8_t *on = calloc(C, 1);
	if (!sp->seed)
		sp->seed = malloc(C * sizeof(*sp->seed));
	if (!index || !low || !iter || !call || !on || !sp->seed) {
		free(index);
		free(low);
		free(iter);
		free(call);
		free(on);
		return -1;
	}
	uint32_t next = 0, top = 0, finished = 0, comps = 0;
	for (uint32_t c = 0; c < sp->C; c++)
		index[c] = IBSM_NONE;
	for (uint32_t root = 0; root < sp->C; root++) {
		if (index[root] != IBSM_NONE)
			continue;
		uint32_t depth = 0;
		call[depth++] = root;
		index[root] = low[root] = next++;
		iter[root] = g->off[g->peer[root]];
		stack[top++] = root;
		on[root] = 1;
		while (depth) {
			uint32_t v = call[depth - 1], h = g->peer[v];
			if (iter[v] < g->off[h + 1]) {
				uint32_t w = iter[v]++;
				if (!d->cnt[slot(sp, v, w)])
					continue;
				if (index[w] == IBSM_NONE) {
					index[w] = low[w] = next++;
					iter[w] = g->off[g->peer[w]];
					stack[top++] = w;
					on[w] = 1;
					call[depth++] = w;
				} else if (on[w] && index[w] < low[v]) {
					low[v] = index[w];
				}
				continue;
			}
			depth--;
			sp->seed[v] = sp->C - 1 - finished++;
			if (depth && low[v] < low[call[depth - 1]])
				low[call[depth - 1]] = low[v];
			if (low[v] != index[v])
				continue;
			uint32_t n = 0, w;
			do {
				w = stack[--top];
				on[w] = 0;
				scc[w] = comps;
				n++;
			} while (w != v);
			if (n == 1)
				scc[v] = IBSM_NONE;
			else
				comps++;
		}
	}
	free(index);
	free(low);
	free(iter);
	free(call);
	free(on);
	return (int)comps;
}
