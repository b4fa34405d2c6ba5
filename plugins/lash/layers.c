/* SPDX-License-Identifier: BSD-2-Clause */
/* layers.c - LASH's virtual layers: each pair of switches gets one layer, the first whose
 * channel dependency graph (dag.h, kept acyclic with a topological order as dependencies come;
 * a channel is one directed switch link) stays acyclic with the pair's routes in it, so the routes of every layer are free of credit loops on the
 * layer's VL (pairs with the longest routes first); then pairs move from the fullest layer to
 * the emptiest (OpenSM's lash balances
 * the same way, picking pairs at random; here in a fixed order, so a fabric always gets the
 * same layers). A cycle needs a new dependency, so only the edges a pair adds are searched
 * from. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "dag.h"
#include "lash.h"

#define CANCEL_EVERY 256

/* The routes of one pair: path i is ch[off[i] .. off[i + 1]). */
struct unit {
	uint32_t *ch, *off;
	uint32_t n, len, cap_ch, cap_paths;
};

static int grow(uint32_t **v, uint32_t *cap, uint32_t need)
{
	if (need <= *cap)
		return 0;
	uint32_t c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	uint32_t *nv = realloc(*v, (size_t)c * sizeof(*nv));
	if (!nv)
		return -1;
	*v = nv;
	*cap = c;
	return 0;
}

/* Appends the channels of the route from switch a to destination d (none if unreachable). */
static int add_route(struct unit *u, const struct lash_graph *g, const struct lash_routes *r,
		     uint32_t a, uint32_t d)
{
	uint32_t S = g->S, x = a, start = u->len;
	if (grow(&u->off, &u->cap_paths, u->n + 2) < 0)
		return -1;
	for (uint32_t hop = 0; x != r->dsw[d] && hop <= S; hop++) {
		uint8_t li = r->nh[(size_t)d * S + x];
		if (li == LASH_NO_LINK || g->off[x] + li >= g->off[x + 1]) {
			u->len = start; /* no route: nothing of it */
			return 0;
		}
		uint32_t l = g->off[x] + li;
		if (grow(&u->ch, &u->cap_ch, u->len + 1) < 0)
			return -1;
		u->ch[u->len++] = l;
		x = g->peer[l];
	}
	if (x != r->dsw[d]) {
		u->len = start;
		return 0;
	}
	if (u->len - start >= 2) { /* one hop depends on nothing */
		u->off[u->n] = start;
		u->off[++u->n] = u->len;
	} else {
		u->len = start;
	}
	return 0;
}

/* The routes of the pair {a, b}: a to every destination on b, b to every one on a. */
static int unit_collect(struct unit *u, const struct lash_graph *g, const struct lash_routes *r,
			uint32_t a, uint32_t b)
{
	u->n = u->len = 0;
	if (grow(&u->off, &u->cap_paths, 1) < 0)
		return -1;
	u->off[0] = 0;
	for (uint32_t d = r->dfirst[b]; d < r->dfirst[b + 1]; d++)
		if (add_route(u, g, r, a, d) < 0)
			return -1;
	for (uint32_t d = r->dfirst[a]; d < r->dfirst[a + 1]; d++)
		if (add_route(u, g, r, b, d) < 0)
			return -1;
	return 0;
}

/* Takes out the dependencies of paths [0, paths) and of the first `edges` of path `paths`. */
static void unit_remove(struct dag *dg, const struct unit *u, uint32_t paths, uint32_t edges)
{
	for (uint32_t i = 0; i <= paths && i < u->n; i++) {
		const uint32_t *ch = u->ch + u->off[i];
		uint32_t n = u->off[i + 1] - u->off[i];
		for (uint32_t k = 0; k + 1 < n && (i < paths || k < edges); k++)
			dag_remove(dg, ch[k], ch[k + 1]);
	}
}

/* Adds the pair's routes to dg unless they close a cycle: 0 added, 1 refused (dg as it was),
 * -1 out of memory (dg as it was). */
static int unit_add(struct dag *dg, struct unit *u, uint64_t *tried)
{
	for (uint32_t i = 0; i < u->n; i++) {
		const uint32_t *ch = u->ch + u->off[i];
		uint32_t n = u->off[i + 1] - u->off[i];
		for (uint32_t k = 0; k + 1 < n; k++) {
			(*tried)++;
			int rc = dag_add(dg, ch[k], ch[k + 1]);
			if (rc) {
				unit_remove(dg, u, i, k);
				return rc > 0 ? 1 : -1;
			}
		}
	}
	return 0;
}

static int cancelled(const struct ibsm_core *core)
{
	return core->cancelled && core->cancelled(core);
}

/* Moves pairs from the fullest layer to the emptiest while their counts differ by more than
 * balance and some pair of the fullest fits the emptiest. Tries are bounded (half the pairs in
 * all, and max(2048, pairs / 32) refusals in a row end the search): an even spread over the
 * VLs is worth less than the routing time it could take on a large fabric. */
static int balance_layers(const struct ibsm_core *core, const struct lash_graph *g,
			  const struct lash_routes *r, struct dag **cg, unsigned used,
			  unsigned balance, uint8_t *layer, struct unit *u,
			  struct lash_layer_stats *st)
{
	uint32_t S = g->S;
	uint64_t budget = st->units_total / 2 + 1024;
	uint64_t fruitless = st->units_total / 32 > 2048 ? st->units_total / 32 : 2048;
	size_t cursor = 0, npairs = (size_t)S * S;
	uint64_t refused = 0;
	while (used > 1 && budget) {
		unsigned M = 0, m = 0;
		for (unsigned v = 1; v < used; v++) {
			if (st->units[v] > st->units[M])
				M = v;
			if (st->units[v] < st->units[m])
				m = v;
		}
		if (st->units[M] - st->units[m] <= balance)
			break;
		int moved = 0;
		for (size_t k = 0; k < npairs && budget && !moved && refused < fruitless; k++) {
			size_t at = (cursor + k) % npairs;
			uint32_t a = (uint32_t)(at / S), b = (uint32_t)(at % S);
			if (a >= b || layer[at] != M)
				continue;
			budget--;
			if (budget % CANCEL_EVERY == 0 && cancelled(core))
				return -ECANCELED;
			if (unit_collect(u, g, r, a, b) < 0)
				return -ENOMEM;
			int rc = unit_add(cg[m], u, &st->tried);
			if (rc < 0)
				return -ENOMEM;
			if (rc) {
				refused++;
				continue;
			}
			refused = 0;
			unit_remove(cg[M], u, u->n, 0);
			layer[at] = layer[(size_t)b * S + a] = (uint8_t)m;
			st->units[M]--;
			st->units[m]++;
			st->moved++;
			cursor = at + 1;
			moved = 1;
		}
		if (!moved)
			break;
	}
	return 0;
}

struct pair {
	uint32_t a, b;
	uint32_t hops, ends;   /* the pair's distance, destinations on both switches */
};

/* Longest routes first: they have the most turns and place worst among the others' (fewer
 * layers than OpenSM's order by switch id); then more destinations; then by switch id. */
static int pair_cmp(const void *x, const void *y)
{
	const struct pair *p = x, *q = y;
	if (p->hops != q->hops)
		return p->hops > q->hops ? -1 : 1;
	if (p->ends != q->ends)
		return p->ends > q->ends ? -1 : 1;
	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return p->b < q->b ? -1 : p->b > q->b;
}

/* Every pair of switches of one component, in pair_cmp order (hops by BFS), or by switch id
 * (by_id: OpenSM's order). NULL without memory. */
static struct pair *pairs_sorted(const struct lash_graph *g, const struct lash_routes *r,
				 int by_id, uint64_t *np)
{
	uint32_t S = g->S;
	size_t cap = (size_t)S * (S > 0 ? S - 1 : 0) / 2;
	struct pair *v = malloc((cap ? cap : 1) * sizeof(*v));
	uint32_t *dist = malloc((S ? S : 1) * sizeof(*dist)), *q = malloc((S ? S : 1) * sizeof(*q));
	*np = 0;
	if (!v || !dist || !q) {
		free(v);
		free(dist);
		free(q);
		return NULL;
	}
	for (uint32_t a = 0; a < S; a++) {
		for (uint32_t s = 0; s < S; s++)
			dist[s] = UINT32_MAX;
		uint32_t head = 0, n = 0;
		dist[a] = 0;
		q[n++] = a;
		while (head < n) {
			uint32_t x = q[head++];
			for (uint32_t l = g->off[x]; l < g->off[x + 1]; l++)
				if (dist[g->peer[l]] == UINT32_MAX) {
					dist[g->peer[l]] = dist[x] + 1;
					q[n++] = g->peer[l];
				}
		}
		for (uint32_t b = a + 1; b < S; b++)
			if (dist[b] != UINT32_MAX)
				v[(*np)++] = (struct pair){
					.a = a, .b = b, .hops = dist[b],
					.ends = (r->dfirst[a + 1] - r->dfirst[a]) +
						(r->dfirst[b + 1] - r->dfirst[b]),
				};
	}
	free(dist);
	free(q);
	if (!by_id)
		qsort(v, *np, sizeof(*v), pair_cmp);
	return v;
}

int lash_layers(const struct ibsm_core *core, const struct lash_graph *g,
		const struct lash_routes *r, unsigned max_layers, unsigned balance, int by_id,
		uint8_t *layer, struct lash_layer_stats *st, unsigned *needed)
{
	uint32_t S = g->S;
	struct dag *cg[LASH_MAX_LAYERS] = { 0 };
	struct unit u = { 0 };
	unsigned used = 0;
	int rc = 0;
	memset(st, 0, sizeof(*st));
	memset(layer, 0xFF, (size_t)S * S);
	*needed = 0;
	if (max_layers > LASH_MAX_LAYERS)
		max_layers = LASH_MAX_LAYERS;
	uint64_t np;
	struct pair *pairs = pairs_sorted(g, r, by_id, &np);
	if (!pairs)
		rc = -ENOMEM;
	for (uint64_t i = 0; i < np && rc == 0; i++) {
		uint32_t a = pairs[i].a, b = pairs[i].b;
		if (i % CANCEL_EVERY == 0 && cancelled(core)) {
			rc = -ECANCELED;
			break;
		}
		{
			if (unit_collect(&u, g, r, a, b) < 0) {
				rc = -ENOMEM;
				break;
			}
			unsigned v = 0;
			for (; v < used; v++) {
				int add = unit_add(cg[v], &u, &st->tried);
				if (add < 0)
					rc = -ENOMEM;
				if (add <= 0)
					break;
			}
			if (rc)
				break;
			if (v == used) { /* a new layer; alone there, a pair's routes never cycle */
				if (used == max_layers) {
					*needed = used + 1;
					rc = -E2BIG;
					break;
				}
				cg[used] = dag_new(g->L);
				if (!cg[used] || unit_add(cg[used], &u, &st->tried) != 0) {
					rc = -ENOMEM;
					break;
				}
				used++;
			}
			layer[(size_t)a * S + b] = layer[(size_t)b * S + a] = (uint8_t)v;
			st->units[v]++;
			st->units_total++;
		}
	}
	free(pairs);
	if (rc == 0)
		rc = balance_layers(core, g, r, cg, used, balance, layer, &u, st);
	st->layers = used;
	for (unsigned v = 0; v < LASH_MAX_LAYERS; v++)
		dag_free(cg[v]);
	free(u.ch);
	free(u.off);
	return rc;
}
