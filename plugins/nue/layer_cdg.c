/* SPDX-License-Identifier: BSD-2-Clause */
/* layer_cdg.c - one virtual layer's channel dependency graph, kept acyclic as routes add turns:
 * counted turns over the graph's dependency slots and a topological order of the channels
 * maintained incrementally (Pearce and Kelly, ACM JEA 11, 2006). A turn forward in the order
 * costs nothing; a backward one searches only the channels between its two ends in the order,
 * and either finds the cycle it would close (refused) or moves those channels so it fits. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "nue_parts.h"

static void forget_refusals(struct nue_cdg *d);

int nue_cdg_init(struct nue_cdg *d, const struct nue_graph *g)
{
	memset(d, 0, sizeof(*d));
	d->g = g;
	size_t C = g->C ? g->C : 1;
	d->count = calloc(g->D ? g->D : 1, sizeof(*d->count));
	d->refused_at = calloc(g->D ? g->D : 1, sizeof(*d->refused_at));
	d->born = calloc(g->D ? g->D : 1, sizeof(*d->born));
	d->rm_cap = 4 * (uint32_t)C + 1024;
	d->rm_time = malloc(d->rm_cap * sizeof(*d->rm_time));
	d->rm_born = malloc(d->rm_cap * sizeof(*d->rm_born));
	d->ord = malloc(C * sizeof(*d->ord));
	d->at = malloc(C * sizeof(*d->at));
	d->mark = calloc(C, sizeof(*d->mark));
	d->fwd = malloc(C * sizeof(*d->fwd));
	d->bwd = malloc(C * sizeof(*d->bwd));
	d->stack = malloc(C * sizeof(*d->stack));
	d->pos = malloc(2 * C * sizeof(*d->pos));
	if (!d->count || !d->refused_at || !d->born || !d->rm_time || !d->rm_born || !d->ord ||
	    !d->at || !d->mark || !d->fwd || !d->bwd || !d->stack || !d->pos) {
		nue_cdg_free(d);
		return -ENOMEM;
	}
	d->epoch = 1;
	nue_cdg_reset(d);
	return 0;
}

static int cmp_u64(const void *x, const void *y);

void nue_cdg_reset(struct nue_cdg *d)
{
	const struct nue_graph *g = d->g;
	memset(d->count, 0, (g->D ? g->D : 1) * sizeof(*d->count));
	d->turns = 0;
	forget_refusals(d);
	d->budget = NUE_SEARCH_BUDGET;
	uint64_t *key = (uint64_t *)(void *)d->pos; /* C keys of 64 bits */
	for (uint32_t c = 0; c < g->C; c++) {
		uint32_t x = g->height[g->tail[c]], y = g->height[g->head[c]];
		uint64_t k = y > x ? x : y == x ? 0x10000u : 0x20000u + (0xFFFFu - x);
		key[c] = k << 32 | c;
	}
	qsort(key, g->C, sizeof(*key), cmp_u64);
	for (uint32_t i = 0; i < g->C; i++) {
		d->ord[(uint32_t)key[i]] = i;
		d->at[i] = (uint32_t)key[i];
	}
}

void nue_cdg_free(struct nue_cdg *d)
{
	free(d->count);
	free(d->refused_at);
	free(d->born);
	free(d->rm_time);
	free(d->rm_born);
	free(d->ord);
	free(d->at);
	free(d->mark);
	free(d->fwd);
	free(d->bwd);
	free(d->stack);
	free(d->pos);
	memset(d, 0, sizeof(*d));
}

/* The clock of adds, refusals and removals; near its end every refusal is forgotten and it
 * restarts. */
static uint32_t tick(struct nue_cdg *d)
{
	if (d->clock >= UINT32_MAX - 4) {
		forget_refusals(d);
		memset(d->born, 0, (d->g->D ? d->g->D : 1) * sizeof(*d->born));
		d->clock = 1;
	}
	return ++d->clock;
}

/* Every refusal recorded so far is forgotten. */
static void forget_refusals(struct nue_cdg *d)
{
	memset(d->refused_at, 0, (d->g->D ? d->g->D : 1) * sizeof(*d->refused_at));
	d->rm_n = 0;
}

/* A refusal at time r saw a cycle through turns that were in the graph then; it still holds
 * unless one of those turns (born before r) has left since. The removals kept are those whose
 * birth is below every later removal's (a later, older turn's removal covers the rest), with
 * times and births both increasing: the first after r has the oldest birth of all after r. */
static int refusal_holds(const struct nue_cdg *d, uint32_t r)
{
	if (!r)
		return 0;
	uint32_t lo = 0, hi = d->rm_n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (d->rm_time[mid] > r)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo == d->rm_n || d->rm_born[lo] > r;
}

static void note_removal(struct nue_cdg *d, uint32_t born)
{
	uint32_t now = tick(d);
	while (d->rm_n && d->rm_born[d->rm_n - 1] >= born)
		d->rm_n--;
	if (d->rm_n == d->rm_cap) {
		forget_refusals(d); /* too many to keep: start over */
		return;
	}
	d->rm_time[d->rm_n] = now;
	d->rm_born[d->rm_n++] = born;
}

void nue_cdg_remove(struct nue_cdg *d, uint64_t slot)
{
	if (d->count[slot] && --d->count[slot] == 0) {
		d->turns--;
		note_removal(d, d->born[slot]);
	}
}

/* Channels reachable from b with an order below ub into fwd; 1 if a (at ub) is among them. */
static int search_forward(struct nue_cdg *d, uint32_t b, uint32_t a, uint32_t ub, uint32_t *nf)
{
	const struct nue_graph *g = d->g;
	uint32_t sp = 0, n = 0, seen = d->epoch;
	d->stack[sp++] = b;
	d->mark[b] = seen;
	while (sp) {
		uint32_t z = d->stack[--sp];
		if (n >= d->budget) {
			*nf = n;
			return 1; /* too far to tell: refused, which is always safe */
		}
		d->fwd[n++] = z;
		uint32_t u = g->head[z], first = g->out_off[u];
		const uint32_t *cnt = d->count + g->dep_off[z];
		for (uint32_t j = 0, deg = g->out_off[u + 1] - first; j < deg; j++) {
			if (!cnt[j])
				continue;
			uint32_t y = first + j;
			if (y == a) {
				*nf = n;
				return 1;
			}
			if (d->mark[y] != seen && d->ord[y] < ub) {
				d->mark[y] = seen;
				d->stack[sp++] = y;
			}
		}
	}
	*nf = n;
	return 0;
}

/* Channels that reach a with an order above lb into bwd. */
static uint32_t search_backward(struct nue_cdg *d, uint32_t a, uint32_t lb)
{
	const struct nue_graph *g = d->g;
	uint32_t sp = 0, n = 0, seen = d->epoch + 1;
	d->stack[sp++] = a;
	d->mark[a] = seen;
	while (sp) {
		uint32_t z = d->stack[--sp];
		d->bwd[n++] = z;
		uint32_t v = g->tail[z], j = z - g->out_off[v];
		for (uint32_t i = g->in_off[v]; i < g->in_off[v + 1]; i++) {
			uint32_t x = g->in_ch[i];
			if (!d->count[g->dep_off[x] + j])
				continue;
			if (d->mark[x] != seen && d->ord[x] > lb) {
				d->mark[x] = seen;
				d->stack[sp++] = x;
			}
		}
	}
	return n;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/* Gives the channels of bwd (nb) then those of fwd (nf), each kept in its order, the positions
 * they held between them. */
static void reorder(struct nue_cdg *d, uint32_t nb, uint32_t nf)
{
	uint64_t *key = (uint64_t *)(void *)d->pos; /* 2 * C words of 32 bits: C keys of 64 */
	uint32_t n = 0;
	for (uint32_t i = 0; i < nb; i++)
		key[n++] = (uint64_t)d->ord[d->bwd[i]] << 32 | d->bwd[i];
	qsort(key, nb, sizeof(*key), cmp_u64);
	for (uint32_t i = 0; i < nf; i++)
		key[n++] = (uint64_t)d->ord[d->fwd[i]] << 32 | d->fwd[i];
	qsort(key + nb, nf, sizeof(*key), cmp_u64);
	/* the positions, sorted: merge of the two sorted runs */
	uint32_t *slots = d->stack, i = 0, j = nb, k = 0;
	while (i < nb || j < n) {
		if (j >= n || (i < nb && key[i] < key[j]))
			slots[k++] = (uint32_t)(key[i++] >> 32);
		else
			slots[k++] = (uint32_t)(key[j++] >> 32);
	}
	for (k = 0; k < n; k++) {
		uint32_t c = (uint32_t)key[k];
		d->ord[c] = slots[k];
		d->at[slots[k]] = c;
	}
}

int nue_cdg_add(struct nue_cdg *d, uint32_t a, uint32_t b)
{
	uint64_t slot = nue_slot(d->g, a, b);
	if (d->count[slot]) {
		d->count[slot]++;
		return 0;
	}
	uint32_t lb = d->ord[b], ub = d->ord[a];
	if (ub > lb) {
		if (refusal_holds(d, d->refused_at[slot]))
			return 1; /* the cycle seen then is still there */
		if (d->epoch >= UINT32_MAX - 2) {
			memset(d->mark, 0, (d->g->C ? d->g->C : 1) * sizeof(*d->mark));
			d->epoch = 1;
		}
		uint32_t nf = 0;
		int cycle = search_forward(d, b, a, ub, &nf);
		if (cycle) {
			d->epoch += 2;
			d->refused++;
			d->refused_at[slot] = tick(d);
			return 1;
		}
		uint32_t nb = search_backward(d, a, lb);
		d->epoch += 2;
		reorder(d, nb, nf);
		d->reorders++;
	}
	d->count[slot] = 1;
	d->born[slot] = tick(d);
	d->turns++;
	return 0;
}

/* Kahn's algorithm over the turns with a count: 1 when some channel is left (a cycle). */
int nue_cdg_cyclic(struct nue_cdg *d)
{
	const struct nue_graph *g = d->g;
	uint32_t *indeg = calloc(g->C ? g->C : 1, sizeof(*indeg));
	uint32_t *queue = malloc((g->C ? g->C : 1) * sizeof(*queue));
	if (!indeg || !queue) {
		free(indeg);
		free(queue);
		return -ENOMEM;
	}
	for (uint32_t a = 0; a < g->C; a++)
		for (uint32_t s = g->dep_off[a]; s < g->dep_off[a + 1]; s++)
			if (d->count[s])
				indeg[g->out_off[g->head[a]] + (s - g->dep_off[a])]++;
	uint32_t n = 0, head = 0;
	for (uint32_t c = 0; c < g->C; c++)
		if (!indeg[c])
			queue[n++] = c;
	while (head < n) {
		uint32_t a = queue[head++];
		for (uint32_t s = g->dep_off[a]; s < g->dep_off[a + 1]; s++) {
			uint32_t b = g->out_off[g->head[a]] + (s - g->dep_off[a]);
			if (d->count[s] && --indeg[b] == 0)
				queue[n++] = b;
		}
	}
	free(indeg);
	free(queue);
	return n < g->C;
}
