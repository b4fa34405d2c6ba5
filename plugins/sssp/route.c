/* SPDX-License-Identifier: BSD-2-Clause */
/* route.c - single-source shortest paths balanced over all destinations (SSSP; Domke et al.
 * 2011): destinations one LID at a time, each routed from every switch over the shortest path
 * whose links carry the fewest routes placed so far, and then those routes added to the links'
 * weights, so that later destinations go around the loaded links. OpenSM's dfsssp runs a
 * Dijkstra per LID with weights "P^2 + routes" (P: the LIDs of the fabric), which keeps the
 * paths shortest in practice; here the paths are shortest by construction: a dynamic program
 * over the min-hop DAG towards the LID's switch (hop matrix from the core), nearest switches
 * first, picks for each switch the next link minimising (weight of the link + the cost of the
 * rest of the path). Costs O(links) per LID, no heap.
 *
 * Weights count CA ports (the traffic sources; a switch's own port 0 sends no data), and only
 * routes to CA LIDs add weight: switch LIDs come last and follow the balance without changing
 * it. With LMC, every port's first LID is routed before any port's second, so the first LIDs
 * are balanced as without LMC, and a later LID of a port is steered away from the exit ports
 * its earlier LIDs took at each switch (disjoint paths where the fabric has them). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sssp.h"

#define CANCEL_EVERY 256

struct rctx {
	const struct sssp_graph *g;
	const uint8_t *hops;
	uint32_t S;
	uint8_t *lft;
	uint32_t stride;
	uint64_t *load;            /* [L] routes (CA sources) over each link, every LID */
	uint64_t *load0;           /* [L] the same for the first LIDs only (the statistics) */
	uint64_t total;            /* sum of load */
	/* the destination switch whose DAG is cached */
	uint32_t t;
	uint32_t *order;           /* [S] switches reaching t, by distance, t first */
	uint32_t nord;
	uint32_t *cand_off;        /* [S + 1] by position in order: candidates in cand */
	uint32_t *cand;            /* [L] links one hop nearer to t */
	/* per LID */
	uint64_t *cost;            /* [S] */
	uint32_t *choice;          /* [S] link taken */
	uint64_t *acc;             /* [S] sources routed through s */
	uint64_t unreachable;
};

/* The min-hop DAG towards t: switches by distance (counting sort), each one's links that step
 * one hop nearer. */
static void dag_towards(struct rctx *c, uint32_t t)
{
	const struct sssp_graph *g = c->g;
	const uint8_t *row = c->hops + (size_t)t * c->S;
	uint32_t count[257] = { 0 };
	for (uint32_t s = 0; s < c->S; s++)
		if (row[s] != 0xFF)
			count[row[s] + 1]++;
	for (unsigned h = 1; h < 257; h++)
		count[h] += count[h - 1];
	c->nord = count[256];
	for (uint32_t s = 0; s < c->S; s++)
		if (row[s] != 0xFF)
			c->order[count[row[s]]++] = s;
	uint32_t n = 0;
	for (uint32_t i = 0; i < c->nord; i++) {
		uint32_t s = c->order[i];
		c->cand_off[i] = n;
		if (!row[s])
			continue;
		for (uint32_t l = g->off[s]; l < g->off[s + 1]; l++)
			if (row[g->peer[l]] == row[s] - 1)
				c->cand[n++] = l;
	}
	c->cand_off[c->nord] = n;
	c->t = t;
}

/* Does switch s send an earlier LID offset of the port (base, offsets [first, k)) out of
 * `port`? */
static int port_taken(const struct rctx *c, uint32_t s, uint32_t base, unsigned first,
		      unsigned k, uint8_t port)
{
	const uint8_t *row = c->lft + (size_t)s * c->stride + base;
	for (unsigned j = first; j < k; j++)
		if (row[j] == port)
			return 1;
	return 0;
}

/* Routes LID base + k of destination d from every switch reaching it. */
static void route_lid(struct rctx *c, const struct engine_dest *d, unsigned k)
{
	const struct sssp_graph *g = c->g;
	uint32_t lid = d->base + k;
	uint64_t pen = k > d->first ? 2 * (c->g->L ? c->total / c->g->L : 0) + 1 : 0;
	c->cost[c->t] = 0;
	c->lft[(size_t)c->t * c->stride + lid] = d->exit;
	for (uint32_t i = 1; i < c->nord; i++) {
		uint32_t s = c->order[i], best = IBSM_NONE;
		uint64_t best_cost = UINT64_MAX;
		for (uint32_t j = c->cand_off[i]; j < c->cand_off[i + 1]; j++) {
			uint32_t l = c->cand[j];
			uint64_t v = c->cost[g->peer[l]] + c->load[l];
			if (pen && port_taken(c, s, d->base, d->first, k, g->port[l]))
				v += pen;
			if (v < best_cost || (v == best_cost && c->load[l] < c->load[best])) {
				best_cost = v;
				best = l;
			}
		}
		c->choice[s] = best;
		if (best == IBSM_NONE) { /* the hop matrix and the links disagree: no route */
			c->cost[s] = UINT64_MAX / 2;
			c->unreachable++;
			continue;
		}
		c->cost[s] = best_cost;
		c->lft[(size_t)s * c->stride + lid] = g->port[best];
	}
	c->unreachable += c->g->S_scope - c->nord; /* the switches in scope it does not reach */
	if (!d->is_ca)
		return;
	/* the CA ports of every switch routed over each link, farthest switches first */
	for (uint32_t i = 0; i < c->nord; i++)
		c->acc[c->order[i]] = g->src_w[c->order[i]];
	for (uint32_t i = c->nord; i-- > 1;) {
		uint32_t s = c->order[i], l = c->choice[s];
		if (l == IBSM_NONE)
			continue;
		c->load[l] += c->acc[s];
		c->total += c->acc[s];
		if (k == d->first)
			c->load0[l] += c->acc[s];
		c->acc[g->peer[l]] += c->acc[s];
	}
}

static void rctx_free(struct rctx *c)
{
	free(c->load);
	free(c->load0);
	free(c->order);
	free(c->cand_off);
	free(c->cand);
	free(c->cost);
	free(c->choice);
	free(c->acc);
}

static int rctx_alloc(struct rctx *c)
{
	size_t S = c->S ? c->S : 1, L = c->g->L ? c->g->L : 1;
	c->load = calloc(L, sizeof(*c->load));
	c->load0 = calloc(L, sizeof(*c->load0));
	c->order = malloc(S * sizeof(*c->order));
	c->cand_off = malloc((S + 1) * sizeof(*c->cand_off));
	c->cand = malloc(L * sizeof(*c->cand));
	c->cost = malloc(S * sizeof(*c->cost));
	c->choice = malloc(S * sizeof(*c->choice));
	c->acc = malloc(S * sizeof(*c->acc));
	return c->load && c->load0 && c->order && c->cand_off && c->cand && c->cost &&
	       c->choice && c->acc ? 0 : -ENOMEM;
}

int sssp_route(const struct ibsm_core *core, const struct sssp_graph *g, const uint8_t *hops,
	       const struct engine_dests *d, uint8_t *lft, uint32_t stride, struct sssp_route_stats *st)
{
	struct rctx c = { .g = g, .hops = hops, .S = g->S, .lft = lft, .stride = stride,
			  .t = IBSM_NONE };
	memset(st, 0, sizeof(*st));
	int rc = rctx_alloc(&c);
	uint32_t n = 0;
	for (unsigned k = 0; rc == 0 && k < d->max_end; k++)
		for (uint32_t i = 0; i < d->n; i++) {
			const struct engine_dest *dd = &d->v[i];
			if (k < dd->first || k >= dd->end)
				continue;
			if (++n % CANCEL_EVERY == 0 && core->cancelled && core->cancelled(core)) {
				rc = -ECANCELED;
				break;
			}
			if (dd->sw != c.t)
				dag_towards(&c, dd->sw);
			route_lid(&c, dd, k);
			st->entries += c.nord;
		}
	if (rc == 0) {
		uint64_t sum = 0;
		for (uint32_t l = 0; l < g->L; l++) {
			sum += c.load0[l];
			st->load_max = c.load0[l] > st->load_max ? c.load0[l] : st->load_max;
		}
		st->load_mean = g->L ? (double)sum / g->L : 0;
		st->unreachable = c.unreachable;
		st->lids = n;
	}
	rctx_free(&c);
	return rc;
}
