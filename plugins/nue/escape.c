/* SPDX-License-Identifier: BSD-2-Clause */
/* escape.c - the escape paths of nue's virtual layers: a shortest-path spanning tree of every
 * component, rooted at its most central switch, whose up/down turns toward the destination
 * switches go into each layer's dependency graph before any route (Domke et al., HPDC 2016,
 * section 4: escape paths). Up/down on a tree is free of cycles (no turn goes down then up),
 * and every later turn is checked against these, so a switch the search cannot reach can
 * always follow the tree to any destination switch. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "nue_parts.h"

void nue_escape_free(struct nue_escape *e)
{
	free(e->up);
	free(e->tin);
	free(e->tout);
	free(e->kid_off);
	free(e->kid);
	free(e->below);
	free(e->root);
	free(e->dist);
	free(e->queue);
	memset(e, 0, sizeof(*e));
}

/* BFS hop distances from s over the channels into dist [S] (UINT32_MAX: unreached). */
static void bfs(const struct nue_graph *g, uint32_t s, uint32_t *dist, uint32_t *queue)
{
	for (uint32_t x = 0; x < g->S; x++)
		dist[x] = UINT32_MAX;
	uint32_t head = 0, n = 0;
	dist[s] = 0;
	queue[n++] = s;
	while (head < n) {
		uint32_t x = queue[head++];
		for (uint32_t c = g->out_off[x]; c < g->out_off[x + 1]; c++)
			if (dist[g->head[c]] == UINT32_MAX) {
				dist[g->head[c]] = dist[x] + 1;
				queue[n++] = g->head[c];
			}
	}
}

static uint32_t mix(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

/* The most central switch of every component toward the destination switches: the least
 * largest distance to one, then the least sum, then the lowest GUID. On large fabrics only
 * an even sample of candidates is measured (a BFS each). */
static void pick_roots(const struct nue_graph *g, const uint8_t *dest_sw, uint32_t *root,
		       uint32_t *dist, uint32_t *queue)
{
	uint64_t *best = malloc((g->ncomp ? g->ncomp : 1) * 2 * sizeof(*best));
	uint32_t step = 1;
	uint64_t work = (uint64_t)g->S * (g->C + g->S);
	while (work / step > 200000000ull)
		step++;
	for (uint32_t k = 0; k < g->ncomp; k++)
		root[k] = NUE_NONE;
	for (uint32_t s = 0; s < g->S; s++) {
		uint32_t k = g->comp[s];
		if (root[k] != NUE_NONE && (s % step) && g->out_off[s + 1] > g->out_off[s])
			continue;
		bfs(g, s, dist, queue);
		uint64_t ecc = 0, sum = 0;
		for (uint32_t x = 0; x < g->S; x++)
			if (g->comp[x] == k && dest_sw[x]) {
				ecc = dist[x] > ecc ? dist[x] : ecc;
				sum += dist[x];
			}
		int better = root[k] == NUE_NONE;
		if (!better && best) {
			uint64_t e0 = best[2 * k], s0 = best[2 * k + 1];
			better = ecc < e0 || (ecc == e0 && (sum < s0 ||
							   (sum == s0 && g->guid[s] < g->guid[root[k]])));
		}
		if (better) {
			root[k] = s;
			if (best) {
				best[2 * k] = ecc;
				best[2 * k + 1] = sum;
			}
		}
	}
	free(best);
}


/* The parent of every switch: a neighbour one hop nearer the root, chosen among several by a
 * salted hash. */
static void parents(const struct nue_graph *g, struct nue_escape *e, uint32_t salt,
		    uint32_t *dist, uint32_t *queue)
{
	for (uint32_t s = 0; s < g->S; s++) {
		dist[s] = UINT32_MAX;
		e->up[s] = NUE_NONE;
	}
	uint32_t n = 0, head = 0;
	for (uint32_t k = 0; k < g->ncomp; k++) {
		dist[e->root[k]] = 0;
		queue[n++] = e->root[k];
	}
	while (head < n) {
		uint32_t x = queue[head++];
		for (uint32_t c = g->out_off[x]; c < g->out_off[x + 1]; c++)
			if (dist[g->head[c]] == UINT32_MAX) {
				dist[g->head[c]] = dist[x] + 1;
				queue[n++] = g->head[c];
			}
	}
	for (uint32_t s = 0; s < g->S; s++) {
		if (!dist[s])
			continue;
		uint32_t bh = 0;
		for (uint32_t c = g->out_off[s]; c < g->out_off[s + 1]; c++) {
			if (dist[g->head[c]] + 1 != dist[s])
				continue;
			uint32_t h = mix(c ^ salt * 0x9e3779b9U);
			if (e->up[s] == NUE_NONE || h < bh) {
				bh = h;
				e->up[s] = c;
			}
		}
	}
}

/* Children lists (by tin), the Euler intervals, and which subtrees hold a destination. */
static void intervals(const struct nue_graph *g, struct nue_escape *e, const uint8_t *dest_sw,
		      uint32_t *stack, uint32_t *pos)
{
	uint32_t S = g->S;
	memset(e->kid_off, 0, (S + 1) * sizeof(*e->kid_off));
	for (uint32_t s = 0; s < S; s++)
		if (e->up[s] != NUE_NONE)
			e->kid_off[g->head[e->up[s]] + 1]++;
	for (uint32_t s = 0; s < S; s++)
		e->kid_off[s + 1] += e->kid_off[s];
	for (uint32_t s = 0; s < S; s++)
		pos[s] = e->kid_off[s];
	for (uint32_t s = 0; s < S; s++)
		if (e->up[s] != NUE_NONE)
			e->kid[pos[g->head[e->up[s]]]++] = s;
	uint32_t t = 0;
	for (uint32_t k = 0; k < g->ncomp; k++) {
		uint32_t sp = 0;
		stack[sp] = e->root[k];
		pos[sp++] = e->kid_off[e->root[k]];
		e->tin[e->root[k]] = t++;
		while (sp) {
			uint32_t x = stack[sp - 1];
			if (pos[sp - 1] == e->kid_off[x + 1]) {
				e->tout[x] = t;
				sp--;
				continue;
			}
			uint32_t c = e->kid[pos[sp - 1]++];
			e->tin[c] = t++;
			stack[sp] = c;
			pos[sp++] = e->kid_off[c];
		}
	}
	/* below: a destination in the subtree (tin descending visits children first) */
	for (uint32_t s = 0; s < S; s++)
		e->below[s] = dest_sw[s] ? 1 : 0;
	for (uint32_t s = 0; s < S; s++)
		stack[e->tin[s]] = s;
	for (uint32_t i = S; i-- > 0;) {
		uint32_t s = stack[i];
		if (e->below[s] && e->up[s] != NUE_NONE)
			e->below[g->head[e->up[s]]] = 1;
	}
}

int nue_escape_central(const struct nue_graph *g, const uint8_t *dest_sw, uint32_t *root)
{
	size_t S = g->S ? g->S : 1;
	uint32_t *dist = malloc(S * sizeof(*dist)), *queue = malloc(S * sizeof(*queue));
	if (!dist || !queue) {
		free(dist);
		free(queue);
		return -ENOMEM;
	}
	pick_roots(g, dest_sw, root, dist, queue);
	free(dist);
	free(queue);
	return 0;
}

int nue_escape_init(struct nue_escape *e, const struct nue_graph *g)
{
	memset(e, 0, sizeof(*e));
	size_t S = g->S ? g->S : 1;
	e->up = malloc(S * sizeof(*e->up));
	e->tin = malloc(S * sizeof(*e->tin));
	e->tout = malloc(S * sizeof(*e->tout));
	e->kid_off = malloc((S + 1) * sizeof(*e->kid_off));
	e->kid = malloc(S * sizeof(*e->kid));
	e->below = malloc(S);
	e->root = malloc((g->ncomp ? g->ncomp : 1) * sizeof(*e->root));
	e->dist = malloc(S * sizeof(*e->dist));
	e->queue = malloc(S * sizeof(*e->queue));
	if (!e->up || !e->tin || !e->tout || !e->kid_off || !e->kid || !e->below || !e->root ||
	    !e->dist || !e->queue) {
		nue_escape_free(e);
		return -ENOMEM;
	}
	return 0;
}

void nue_escape_build(const struct nue_graph *g, struct nue_escape *e, const uint32_t *root,
		      uint32_t salt, const uint8_t *dest_sw)
{
	memcpy(e->root, root, (g->ncomp ? g->ncomp : 1) * sizeof(*e->root));
	parents(g, e, salt, e->dist, e->queue);
	intervals(g, e, dest_sw, e->dist, e->queue);
}

/* The channel from p down to its child c. */
static uint32_t down(const struct nue_graph *g, const struct nue_escape *e, uint32_t c)
{
	return g->rev[e->up[c]];
}

/* The tree's turns toward the destination switches, as (a, b) pairs into t (2 * n words), or
 * only counted when t is NULL. */
static uint64_t tree_turns(const struct nue_graph *g, const struct nue_escape *e, uint32_t *t)
{
	uint64_t n = 0;
#define TURN(x, y) do { if (t) { t[2 * n] = (x); t[2 * n + 1] = (y); } n++; } while (0)
	for (uint32_t v = 0; v < g->S; v++) {
		uint32_t a = e->up[v];
		if (a == NUE_NONE || g->rev[a] == NUE_NONE)
			continue;
		uint32_t p = g->head[a];
		if (e->up[p] != NUE_NONE)
			TURN(a, e->up[p]);                       /* up, up */
		for (uint32_t i = e->kid_off[p]; i < e->kid_off[p + 1]; i++)
			if (e->kid[i] != v && e->below[e->kid[i]])
				TURN(a, down(g, e, e->kid[i]));  /* up, down */
		for (uint32_t i = e->kid_off[v]; i < e->kid_off[v + 1]; i++)
			if (e->below[e->kid[i]])
				TURN(g->rev[a], down(g, e, e->kid[i])); /* down, down */
	}
#undef TURN
	return n;
}

int nue_escape_reserve(const struct nue_graph *g, const struct nue_escape *e, struct nue_cdg *d)
{
	uint64_t n = tree_turns(g, e, NULL);
	uint32_t *t = malloc((n ? n : 1) * 2 * sizeof(*t));
	if (!t)
		return -ENOMEM;
	tree_turns(g, e, t);
	uint64_t k = 0;
	uint32_t budget = d->budget;
	d->budget = UINT32_MAX; /* a tree is reserved at most a few times: check it whole */
	for (; k < n; k++)
		if (nue_cdg_add(d, t[2 * k], t[2 * k + 1]))
			break;
	d->budget = budget;
	int refused = k < n;
	while (refused && k-- > 0)
		nue_cdg_remove(d, nue_slot(g, t[2 * k], t[2 * k + 1]));
	free(t);
	return refused;
}

uint32_t nue_escape_next(const struct nue_graph *g, const struct nue_escape *e, uint32_t v,
			 uint32_t t)
{
	if (!(e->tin[v] <= e->tin[t] && e->tin[t] < e->tout[v]))
		return e->up[v];
	/* t lies below v: the child whose interval holds tin[t] (children sorted by tin) */
	uint32_t lo = e->kid_off[v], hi = e->kid_off[v + 1];
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (e->tin[e->kid[mid]] <= e->tin[t])
			lo = mid;
		else
			hi = mid;
	}
	return down(g, e, e->kid[lo]);
}
