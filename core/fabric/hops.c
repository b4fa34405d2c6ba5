/* SPDX-License-Identifier: BSD-2-Clause */
/* hops.c - all-pairs switch hop counts (the switch_hops service of the core). Two methods give
 * identical results: a BFS per source for long thin fabrics (rings, lines), and a bit-parallel
 * level-by-level expansion of all sources at once for the short, dense ones (fat trees). */
#include <errno.h>
#include <string.h>
#include <glib.h>
#include "fabric/hops.h"

#define WORD_BITS 64 /* bits per uint64_t word of the bit-set method */

/* Usable switch-to-switch links as compressed rows: neighbours of u are nbr[off[u] ..
 * off[u + 1]), each at most once (parallel links collapse), no self links. */
struct graph {
	uint32_t n, m;
	uint32_t *off, *nbr;
};

static int graph_build(const struct ibsm_fabric *f, const struct ibsm_scope *s, struct graph *g)
{
	uint32_t n = f->n_switches;
	g->n = n;
	g->m = 0;
	g->off = g_try_new(uint32_t, (size_t)n + 1);
	g->nbr = g_try_new(uint32_t, f->n_adj ? f->n_adj : 1);
	uint32_t *seen = g_try_new(uint32_t, n ? n : 1);
	if (!g->off || !g->nbr || !seen) {
		g_free(seen);
		return -ENOMEM;
	}
	for (uint32_t u = 0; u < n; u++)
		seen[u] = IBSM_NONE;
	for (uint32_t u = 0; u < n; u++) {
		const struct ibsm_switch *sw = &f->switches[u];
		g->off[u] = g->m;
		for (uint32_t a = sw->adj0; a < sw->adj0 + sw->nadj && a < f->n_adj; a++) {
			const struct ibsm_adj *adj = &f->adj[a];
			uint32_t v = adj->peer_sw;
			if (v >= n || v == u || seen[v] == u || !ibsm_scope_link(f, s, u, adj))
				continue;
			seen[v] = u;
			g->nbr[g->m++] = v;
		}
	}
	g->off[n] = g->m;
	g_free(seen);
	return 0;
}

static void graph_free(struct graph *g)
{
	g_free(g->off);
	g_free(g->nbr);
}

/* Fills row[] (n bytes, all 0xFF on entry) with distances from src; returns the farthest
 * switch reached and its distance in *ecc. queue has room for n ids. */
static uint32_t bfs_row(const struct graph *g, uint32_t src, uint8_t *row, uint32_t *queue,
			uint32_t *ecc)
{
	uint32_t head = 0, tail = 0, last = src;
	row[src] = 0;
	queue[tail++] = src;
	while (head < tail) {
		uint32_t u = queue[head++];
		uint8_t d = row[u];
		last = u;
		if (d >= HOPS_MAX)
			continue;
		for (uint32_t i = g->off[u]; i < g->off[u + 1]; i++) {
			uint32_t v = g->nbr[i];
			if (row[v] == 0xFF) {
				row[v] = (uint8_t)(d + 1);
				queue[tail++] = v;
			}
		}
	}
	*ecc = row[last];
	return last;
}

static int hops_bfs(const struct graph *g, uint8_t *hops)
{
	uint32_t n = g->n, ecc;
	uint32_t *queue = g_try_new(uint32_t, n);
	if (!queue)
		return -ENOMEM;
	for (uint32_t src = 0; src < n; src++)
		bfs_row(g, src, hops + (size_t)src * n, queue, &ecc);
	g_free(queue);
	return 0;
}

/* reach[v] = switches within k hops of v; cur[v] = exactly k hops away. At level k + 1,
 * v's new set is the union of its neighbours' exact-k sets minus what v already reaches. */
static int hops_bitset(const struct graph *g, uint8_t *hops)
{
	uint32_t n = g->n;
	size_t w = ((size_t)n + WORD_BITS - 1) / WORD_BITS;
	uint64_t *reach = g_try_new0(uint64_t, n * w);
	uint64_t *cur = g_try_new0(uint64_t, n * w);
	uint64_t *nxt = g_try_new0(uint64_t, n * w);
	uint8_t *cur_any = g_try_new0(uint8_t, n);
	uint8_t *nxt_any = g_try_new0(uint8_t, n);
	int rc = -ENOMEM;
	if (!reach || !cur || !nxt || !cur_any || !nxt_any)
		goto out;
	for (uint32_t v = 0; v < n; v++) {
		reach[v * w + v / WORD_BITS] |= 1ull << (v % WORD_BITS);
		cur[v * w + v / WORD_BITS] |= 1ull << (v % WORD_BITS);
		cur_any[v] = 1;
		hops[(size_t)v * n + v] = 0;
	}
	for (uint32_t k = 1; k <= HOPS_MAX; k++) {
		int any = 0;
		for (uint32_t v = 0; v < n; v++) {
			uint64_t *x = nxt + v * w, *r = reach + v * w;
			int got = 0;
			nxt_any[v] = 0;
			for (uint32_t i = g->off[v]; i < g->off[v + 1]; i++) {
				uint32_t u = g->nbr[i];
				if (!cur_any[u])
					continue;
				const uint64_t *c = cur + u * w;
				if (!got)
					memcpy(x, c, w * sizeof(*x));
				else
					for (size_t j = 0; j < w; j++)
						x[j] |= c[j];
				got = 1;
			}
			if (!got)
				continue;
			uint8_t *row = hops + (size_t)v * n;
			for (size_t j = 0; j < w; j++) {
				uint64_t fresh = x[j] & ~r[j];
				x[j] = fresh;
				if (!fresh)
					continue;
				r[j] |= fresh;
				nxt_any[v] = 1;
				while (fresh) {
					row[j * WORD_BITS + (size_t)__builtin_ctzll(fresh)] = (uint8_t)k;
					fresh &= fresh - 1;
				}
			}
			any |= nxt_any[v];
		}
		if (!any)
			break;
		uint64_t *t = cur;
		cur = nxt;
		nxt = t;
		uint8_t *ta = cur_any;
		cur_any = nxt_any;
		nxt_any = ta;
	}
	rc = 0;
out:
	g_free(reach);
	g_free(cur);
	g_free(nxt);
	g_free(cur_any);
	g_free(nxt_any);
	return rc;
}

/* Estimates both costs: BFS touches every node and edge once per source; the bitset method
 * touches (edges + nodes) * words once per level, and the levels are about the diameter,
 * guessed by a double sweep (BFS from switch 0, then from the farthest switch found). */
static enum hops_method hops_choose(const struct graph *g, uint8_t *scratch_row)
{
	uint32_t n = g->n, ecc = 0;
	if (n < WORD_BITS)
		return HOPS_BFS;
	uint32_t *queue = g_try_new(uint32_t, n);
	if (!queue)
		return HOPS_BFS;
	memset(scratch_row, 0xFF, n);
	uint32_t far = bfs_row(g, 0, scratch_row, queue, &ecc);
	memset(scratch_row, 0xFF, n);
	bfs_row(g, far, scratch_row, queue, &ecc);
	memset(scratch_row, 0xFF, n);
	g_free(queue);
	double words = (double)((n + WORD_BITS - 1) / WORD_BITS);
	double cost_bfs = 4.0 * n * ((double)n + g->m);   /* random byte accesses */
	double cost_bits = ((double)g->m + n) * words * (ecc + 2.0);
	return cost_bits < cost_bfs ? HOPS_BITSET : HOPS_BFS;
}

int switch_hops_method(const struct ibsm_fabric *f, const struct ibsm_scope *s, uint8_t *hops,
		       enum hops_method method)
{
	if (!f || !s || !hops)
		return -EINVAL;
	uint32_t n = f->n_switches;
	if (n == 0)
		return 0;
	struct graph g;
	int rc = graph_build(f, s, &g);
	if (rc < 0) {
		graph_free(&g);
		return rc;
	}
	if (method == HOPS_AUTO)
		method = hops_choose(&g, hops);
	memset(hops, 0xFF, (size_t)n * n);
	rc = method == HOPS_BITSET ? hops_bitset(&g, hops) : hops_bfs(&g, hops);
	graph_free(&g);
	return rc;
}

int switch_hops(const struct ibsm_fabric *f, const struct ibsm_scope *s, uint8_t *hops)
{
	return switch_hops_method(f, s, hops, HOPS_AUTO);
}
