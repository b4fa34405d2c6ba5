/* SPDX-License-Identifier: BSD-2-Clause */
/* updn.c - the up/down routing engine: deadlock-free routes on any topology. Switches are
 * ranked by BFS from the roots (roots.c); every switch link gets one strict direction (toward
 * the lower rank, then the lower GUID), so "up" is a DAG orientation and no CA-to-CA route
 * may take an up step after a down step.
 *
 * Per destination switch t, a level-by-level BFS from t gives every switch its up/down
 * distance and its mode: DOWN when it reaches t by down steps only (so packets arriving from
 * above may pass it), UP otherwise (it goes up, and nobody above may route through it). A
 * switch's exit candidates follow its mode, so the tables are strictly up/down whatever
 * port is chosen. The choice balances link load by the number of CA sources behind each
 * route: per destination LID, switches decide farthest first, each adding the sources routed
 * through it to the load of the link it picks (the least loaded candidate).
 *
 * Switch LIDs that no up/down path reaches (a spine on a degraded tree) are routed anyway
 * through up-down-up turns, counted and logged; CA LIDs never are, except on switches with no
 * CA behind them, whose routes no CA-to-CA traffic can use. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>
#include "engine_dests.h"
#include "engine_glue.h"
#include "switch_links.h"
#include "updn.h"

/* One source, two engines (plugins/updn/ALIASES): updn.so and dnup.so */
#ifndef IBSM_PLUGIN_NAME
#define IBSM_PLUGIN_NAME "updn"
#endif
#define IS_DNUP (IBSM_PLUGIN_NAME[0] == 'd')

#define INF 0xFFFF
#define F_DOWN 0x1  /* reaches the destination by down steps only */
#define F_FREE 0x2  /* no direction rule (connect_roots destinations) */
#define F_FB   0x4  /* reached only by the fall-back (up-down-up) extension */
#define MAX_CENTRE 64  /* central switches the root search (or dnup's tie switch) draws on */
/* root sets routed to compare them: at most MAX_EVALS, and at most EVAL_BUDGET switches x
 * (links + switches) in all, so the search stays bounded on large fabrics */
#define EVAL_BUDGET 200000000ull
#define MAX_EVALS 1024
#define CANCEL_EVERY 64

struct ctx {
	const struct ibsm_core *core;
	const struct ibsm_fabric *f;
	const struct ibsm_scope *sc;
	struct updn_graph g;
	uint8_t *row_ok;       /* [S] row in scope */
	uint8_t *is_root;      /* [S] */
	uint32_t *rank;        /* [S] */
	uint32_t *ord;         /* [S] position in (rank, tie, GUID) order: smaller = higher */
	uint32_t *tie;         /* [S] second key of that order: 0, or with several fall-back roots
				* the hops from the first (so the roots hang together) */
	uint64_t *id;          /* [S] third key: the node GUID, or its ID from ids_guid_file */
	const uint8_t *hops;   /* the S x S hop matrix while roots are chosen, or NULL */
	uint32_t *rnode;       /* [L] node id at the far end */
	uint64_t *rsys;        /* [L] its system image GUID (node GUID if none) */
	uint32_t *comp_size;   /* [ncomp] */
	uint8_t *how;          /* [ncomp] enum updn_root_how */
	int connect_roots;
	int dnup;              /* dnup: ranks from the leaf switches, the higher rank is up */
	int fb_ca;             /* dnup with connect_roots: CA LIDs no down/up path reaches are
				* routed anyway, by any turn */
	struct engine_dests dests; /* grouped by switch (doff) */
	/* per destination switch scratch */
	uint16_t *dist;        /* [S] */
	uint8_t *flag;         /* [S] F_* */
	uint32_t *order;       /* [S] reached switches, t first, by distance */
	uint32_t nord, nstrict;
	uint32_t *cand_off;    /* [S] start of s's candidates in cand */
	uint8_t *cand_n;       /* [S] */
	uint32_t *cand;        /* [L] link ids */
	uint32_t *sub;         /* [S] CA sources routed through s */
	uint32_t *choice;      /* [128 * S] link chosen at s for offset k of the current dest */
	/* [L] routes per link: at most sources x LIDs < 49152^2 < 2^32 */
	uint32_t *load_ca, *load_sw, *load0;
	/* one destination switch's entries, [slot * S + s], before they go to the rows */
	uint8_t *gbuf;
	uint16_t *glid;        /* [slot] LID */
	uint32_t gslots;
	/* output */
	uint8_t *lft;
	uint32_t stride;
	uint64_t routed, udu, off_updn, ca_no_path;
};

/* ---- the switch graph of the scope ---- */

static void graph_free(struct updn_graph *g)
{
	free(g->off);
	free(g->peer);
	free(g->port);
	free(g->guid);
	free(g->ca_src);
	free(g->comp);
	free(g->outside);
	memset(g, 0, sizeof(*g));
}

static int graph_build(const struct ibsm_fabric *f, const struct ibsm_scope *sc,
		       struct updn_graph *g)
{
	uint32_t S = f->n_switches, maxadj = 0;
	memset(g, 0, sizeof(*g));
	g->S = S;
	for (uint32_t s = 0; s < S; s++)
		maxadj = ibsm_switch_at(f, s)->nadj > maxadj ? ibsm_switch_at(f, s)->nadj : maxadj;
	g->off = malloc(((size_t)S + 1) * sizeof(*g->off));
	g->guid = malloc((S ? S : 1) * sizeof(*g->guid));
	g->ca_src = calloc(S ? S : 1, sizeof(*g->ca_src));
	g->comp = malloc((S ? S : 1) * sizeof(*g->comp));
	g->peer = malloc(((size_t)f->n_adj + 1) * sizeof(*g->peer));
	g->port = malloc((size_t)f->n_adj + 1);
	struct engine_link *tmp = malloc(((size_t)maxadj + 1) * sizeof(*tmp));
	if (!g->off || !g->guid || !g->ca_src || !g->comp || !g->peer || !g->port || !tmp) {
		free(tmp);
		graph_free(g);
		return -ENOMEM;
	}
	uint32_t L = 0;
	for (uint32_t s = 0; s < S; s++) {
		const struct ibsm_switch *sw = ibsm_switch_at(f, s);
		const struct ibsm_node *node = ibsm_node_at(f, sw->node);
		g->off[s] = L;
		g->guid[s] = node->guid;
		uint32_t n = engine_switch_links(f, sc, s, tmp);
		for (uint32_t i = 0; i < n; i++) {
			g->peer[L] = tmp[i].peer;
			g->port[L] = tmp[i].port;
			L++;
		}
		for (unsigned p = 1; p <= node->nports; p++)
			g->ca_src[s] += engine_ca_behind(f, sc, node->port0 + p) != IBSM_NONE;
	}
	g->off[S] = L;
	g->L = L;
	free(tmp);
	/* components */
	uint32_t *queue = malloc((S ? S : 1) * sizeof(*queue));
	if (!queue) {
		graph_free(g);
		return -ENOMEM;
	}
	for (uint32_t s = 0; s < S; s++)
		g->comp[s] = UINT32_MAX;
	for (uint32_t s0 = 0; s0 < S; s0++) {
		if (g->comp[s0] != UINT32_MAX)
			continue;
		uint32_t c = g->ncomp++, head = 0, n = 0;
		g->comp[s0] = c;
		queue[n++] = s0;
		while (head < n) {
			uint32_t x = queue[head++];
			for (uint32_t l = g->off[x]; l < g->off[x + 1]; l++)
				if (g->comp[g->peer[l]] == UINT32_MAX) {
					g->comp[g->peer[l]] = c;
					queue[n++] = g->peer[l];
				}
		}
	}
	free(queue);
	/* components without a switch of the scope (a routing chain step's part leaves the other
	 * switches alone): no roots to look for there */
	g->outside = malloc(g->ncomp ? g->ncomp : 1);
	if (!g->outside) {
		graph_free(g);
		return -ENOMEM;
	}
	memset(g->outside, 1, g->ncomp);
	for (uint32_t s = 0; s < S; s++)
		if (ibsm_bit(&sc->switches, s))
			g->outside[g->comp[s]] = 0;
	return 0;
}

/* ---- ranking ---- */

static int rank_cmp(const void *x, const void *y, void *arg)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	const struct ctx *c = arg;
	if (c->rank[a] != c->rank[b])
		return (c->rank[a] < c->rank[b]) != c->dnup ? -1 : 1;
	if (c->tie[a] != c->tie[b])
		return c->tie[a] < c->tie[b] ? -1 : 1;
	if (c->id[a] != c->id[b])
		return c->id[a] < c->id[b] ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* BFS from the roots; then the strict order (rank, tie, GUID) that orients every link (dnup:
 * the roots are the leaf switches and the higher rank comes first). */
static uint32_t rank_switches(struct ctx *c)
{
	uint32_t S = c->g.S, head = 0, n = 0, max_rank = 0;
	uint32_t *q = c->order; /* scratch */
	for (uint32_t s = 0; s < S; s++) {
		c->rank[s] = UINT32_MAX;
		if (c->is_root[s]) {
			c->rank[s] = 0;
			q[n++] = s;
		}
	}
	while (head < n) {
		uint32_t x = q[head++];
		for (uint32_t l = c->g.off[x]; l < c->g.off[x + 1]; l++) {
			uint32_t s = c->g.peer[l];
			if (c->rank[s] == UINT32_MAX) {
				c->rank[s] = c->rank[x] + 1;
				max_rank = c->rank[s] > max_rank ? c->rank[s] : max_rank;
				q[n++] = s;
			}
		}
	}
	uint32_t *tmp = q;
	for (uint32_t s = 0; s < S; s++)
		tmp[s] = s;
	qsort_r(tmp, S, sizeof(*tmp), rank_cmp, c);
	for (uint32_t i = 0; i < S; i++)
		c->ord[tmp[i]] = i;
	return max_rank;
}

/* ---- per destination switch: distances, modes, candidates ---- */

static void bfs(struct ctx *c, uint32_t t, int free_mode)
{
	const struct updn_graph *g = &c->g;
	for (uint32_t i = 0; i < c->nord; i++)
		c->dist[c->order[i]] = INF;
	uint32_t n = 0, head = 0;
	c->dist[t] = 0;
	c->flag[t] = F_DOWN | (free_mode ? F_FREE : 0);
	c->order[n++] = t;
	while (head < n) {
		uint32_t level_end = n;
		for (; head < level_end; head++) {
			uint32_t x = c->order[head];
			uint16_t d = c->dist[x];
			int x_down = c->flag[x] & F_DOWN;
			for (uint32_t l = g->off[x]; l < g->off[x + 1]; l++) {
				uint32_t s = g->peer[l];
				int up_step = c->ord[s] > c->ord[x]; /* packet s -> x goes up */
				if (!free_mode && !up_step && !x_down)
					continue; /* down into a switch that goes up again */
				if (c->dist[s] == INF) {
					c->dist[s] = (uint16_t)(d + 1);
					c->flag[s] = free_mode ? F_FREE | F_DOWN : 0;
					c->order[n++] = s;
				} else if (c->dist[s] != d + 1) {
					continue;
				}
				if (!up_step)
					c->flag[s] |= F_DOWN;
			}
		}
	}
	c->nord = c->nstrict = n;
}

/* Candidate exits of order[from .. nord). */
static void candidates(struct ctx *c, uint32_t from, uint32_t *pool_used)
{
	const struct updn_graph *g = &c->g;
	uint32_t used = *pool_used;
	for (uint32_t i = from; i < c->nord; i++) {
		uint32_t s = c->order[i];
		uint16_t d = c->dist[s];
		uint8_t fl = c->flag[s];
		c->cand_off[s] = used;
		uint32_t n = 0;
		if (d == 0) {
			c->cand_n[s] = 0;
			continue;
		}
		for (uint32_t l = g->off[s]; l < g->off[s + 1]; l++) {
			uint32_t x = g->peer[l];
			if (c->dist[x] != d - 1)
				continue;
			if (!(fl & (F_FREE | F_FB))) {
				if (fl & F_DOWN) {
					if (c->ord[x] < c->ord[s] || !(c->flag[x] & F_DOWN))
						continue;
				} else if (c->ord[x] > c->ord[s]) {
					continue;
				}
			}
			c->cand[used + n++] = l;
		}
		c->cand_n[s] = (uint8_t)(n > 255 ? 255 : n);
		used += n;
	}
	*pool_used = used;
}

/* Reaches the switches the up/down BFS missed, by any step (up-down-up turns). For CA
 * destinations (ca_only) only through switches without CA sources. */
static void extend(struct ctx *c, int ca_only, uint32_t *pool_used)
{
	const struct updn_graph *g = &c->g;
	for (uint32_t i = c->nstrict; i < c->nord; i++)
		c->dist[c->order[i]] = INF;
	c->nord = c->nstrict;
	uint32_t t = c->order[0];
	if (c->nstrict >= c->comp_size[g->comp[t]])
		return;
	uint32_t ia = 0, ib = c->nstrict, n = c->nstrict;
	while (ia < c->nstrict || ib < n) {
		uint32_t u;
		if (ib < n && (ia >= c->nstrict || c->dist[c->order[ib]] < c->dist[c->order[ia]]))
			u = c->order[ib++];
		else
			u = c->order[ia++];
		for (uint32_t l = g->off[u]; l < g->off[u + 1]; l++) {
			uint32_t s = g->peer[l];
			if (c->dist[s] != INF || (ca_only && g->ca_src[s]))
				continue;
			c->dist[s] = (uint16_t)(c->dist[u] + 1);
			c->flag[s] = F_FB;
			c->order[n++] = s;
		}
	}
	c->nord = n;
	candidates(c, c->nstrict, pool_used);
}

/* ---- one destination LID: the tree, farthest switches first ---- */

static uint32_t choose(const struct ctx *c, uint32_t s, const struct engine_dest *d, unsigned k,
		       const uint32_t *load)
{
	const uint32_t *cand = c->cand + c->cand_off[s];
	unsigned n = c->cand_n[s];
	if (n == 1)
		return cand[0];
	uint32_t S = c->g.S;
	if (k == d->first) {
		uint32_t best = cand[0], bl = load[best];
		for (unsigned i = 1; i < n; i++)
			if (load[cand[i]] < bl) {
				bl = load[cand[i]];
				best = cand[i];
			}
		return best;
	}
	/* LMC: prefer a far end on another system image, then another node, than the earlier
	 * LIDs of d took from this switch; then the least load */
	uint32_t best = cand[0];
	unsigned bcls = 3;
	uint32_t bl = UINT32_MAX;
	for (unsigned i = 0; i < n; i++) {
		uint32_t l = cand[i];
		unsigned cls = 0;
		for (unsigned j = d->first; j < k; j++) {
			uint32_t pl = c->choice[(size_t)j * S + s];
			if (pl == UINT32_MAX)
				continue;
			if (c->rnode[pl] == c->rnode[l])
				cls = 2;
			else if (c->rsys[pl] == c->rsys[l] && cls < 1)
				cls = 1;
		}
		if (cls < bcls || (cls == bcls && load[l] < bl)) {
			bcls = cls;
			bl = load[l];
			best = l;
		}
	}
	return best;
}

static void route_lid(struct ctx *c, const struct engine_dest *d, unsigned k, int write)
{
	const struct updn_graph *g = &c->g;
	uint32_t S = g->S;
	uint32_t *load = d->is_ca ? c->load_ca : c->load_sw;
	uint32_t *choice = c->choice + (size_t)k * S;
	for (uint32_t i = 0; i < c->nord; i++)
		c->sub[c->order[i]] = g->ca_src[c->order[i]];
	for (uint32_t i = c->nord; i-- > 1;) {
		uint32_t s = c->order[i];
		if (c->cand_n[s] == 0) {
			choice[s] = UINT32_MAX;
			continue;
		}
		uint32_t l = choose(c, s, d, k, load);
		choice[s] = l;
		load[l] += (uint32_t)c->sub[s];
		if (d->is_ca && k == 0)
			c->load0[l] += (uint32_t)c->sub[s];
		c->sub[g->peer[l]] += c->sub[s];
	}
	if (!write)
		return;
	/* the row entries go to the group buffer (written row by row: fewer cache misses) */
	uint8_t *col = c->gbuf + (size_t)c->gslots * S;
	c->glid[c->gslots++] = (uint16_t)(d->base + k);
	memset(col, IBSM_NO_PORT, S);
	for (uint32_t i = 0; i < c->nord; i++) {
		uint32_t s = c->order[i];
		if (i == 0) {
			col[s] = d->exit;
			continue;
		}
		if (choice[s] == UINT32_MAX)
			continue;
		col[s] = g->port[choice[s]];
		if ((c->flag[s] & F_FB) && c->row_ok[s]) {
			if (d->is_ca)
				c->off_updn++;
			else
				c->udu++;
		}
	}
}

/* Writes the buffered entries of one destination switch's LIDs, row by row. */
static void flush_group(struct ctx *c)
{
	uint32_t S = c->g.S, n = c->gslots;
	uint64_t routed = 0;
	const uint8_t *buf = c->gbuf;
	const uint16_t *lid = c->glid;
	for (uint32_t s = 0; s < S; s++) {
		if (!c->row_ok[s])
			continue;
		uint8_t *row = c->lft + (size_t)s * c->stride;
		for (uint32_t j = 0; j < n; j++) {
			uint8_t p = buf[(size_t)j * S + s];
			if (p != IBSM_NO_PORT) {
				row[lid[j]] = p;
				routed++;
			}
		}
	}
	c->routed += routed;
	c->gslots = 0;
}

/* CA sources that up/down cannot serve toward switch t's CA LIDs (logged). */
static uint64_t ca_unserved(const struct ctx *c, uint32_t t)
{
	uint64_t n = 0;
	if (c->nord >= c->comp_size[c->g.comp[t]])
		return 0;
	for (uint32_t s = 0; s < c->g.S; s++)
		n += c->row_ok[s] && c->g.ca_src[s] && c->dist[s] == INF &&
		     c->g.comp[s] == c->g.comp[t];
	return n;
}

/* Every destination; write = 0: only the CA loads of offset 0 (to compare roots). */
static int route_all(struct ctx *c, int write, int full)
{
	uint32_t S = c->g.S;
	memset(c->load_ca, 0, (size_t)c->g.L * sizeof(*c->load_ca));
	memset(c->load_sw, 0, (size_t)c->g.L * sizeof(*c->load_sw));
	memset(c->load0, 0, (size_t)c->g.L * sizeof(*c->load0));
	c->routed = c->udu = c->off_updn = c->ca_no_path = 0;
	c->nord = 0;
	for (uint32_t s = 0; s < S; s++)
		c->dist[s] = INF;
	for (uint32_t t = 0; t < S; t++) {
		uint32_t d0 = c->dests.doff[t], d1 = c->dests.doff[t + 1];
		if (d0 == d1)
			continue;
		if (write && t % CANCEL_EVERY == 0 && c->core->cancelled &&
		    c->core->cancelled(c->core))
			return -ECANCELED;
		uint32_t pool = 0;
		bfs(c, t, 0);
		uint64_t unserved = ca_unserved(c, t);
		candidates(c, 0, &pool);
		uint32_t strict_pool = pool;
		int extended = -1; /* -1 none, 1 CA-only, 0 all */
		for (uint32_t i = d0; i < d1; i++) {
			const struct engine_dest *d = &c->dests.v[i];
			if (!d->is_ca && !full)
				continue;
			if (!d->is_ca && c->connect_roots && !c->dnup && c->is_root[t]) {
				bfs(c, t, 1);
				pool = 0;
				candidates(c, 0, &pool);
				extended = -1;
			} else {
				int want = d->is_ca && !c->fb_ca ? 1 : 0;
				if (extended != want) {
					pool = strict_pool;
					extend(c, want, &pool);
					extended = want;
				}
			}
			unsigned end = full ? d->end : d->first + 1u;
			for (unsigned k = d->first; k < end; k++)
				route_lid(c, d, k, write);
			if (d->is_ca)
				c->ca_no_path += (end - d->first) * unserved;
		}
		if (write)
			flush_group(c);
	}
	return 0;
}

static void balance(const struct ctx *c, uint64_t *max, double *mean, double *ratio)
{
	uint64_t m = 0, sum = 0;
	for (uint32_t l = 0; l < c->g.L; l++) {
		sum += c->load0[l];
		m = c->load0[l] > m ? c->load0[l] : m;
	}
	*max = m;
	*mean = c->g.L ? (double)sum / c->g.L : 0;
	*ratio = *mean > 0 ? (double)m / *mean : 0;
}

/* What routing one candidate set costs, in steps: a BFS over the links and a look at every
 * switch per destination switch, a pass over the reached switches per CA destination. */
static uint64_t eval_cost(const struct ctx *c)
{
	uint64_t S = c->g.S, cas = 0;
	for (uint32_t i = 0; i < c->dests.n; i++)
		cas += c->dests.v[i].is_ca;
	return S * (c->g.L + S) + cas * S + 1;
}

/* Takes a root set (is_root as the search marks it: UPDN_FIRST_ROOT orders equal ranks by
 * the distance from that root) and ranks the switches from it. */
static void take_roots(struct ctx *c, const uint8_t *is_root)
{
	uint32_t S = c->g.S, first = UINT32_MAX;
	for (uint32_t s = 0; s < S && first == UINT32_MAX; s++)
		if (is_root[s] == UPDN_FIRST_ROOT)
			first = s;
	for (uint32_t s = 0; s < S; s++) {
		c->tie[s] = first == UINT32_MAX || !c->hops ? 0 : c->hops[(size_t)first * S + s];
		c->is_root[s] = is_root[s] != 0;
	}
}

/* The CA routes of every base LID from the order as it is now, and their loads. */
static void measure(struct ctx *c, struct updn_eval *e)
{
	rank_switches(c);
	route_all(c, 0, 0);
	e->max = e->sumsq = 0;
	for (uint32_t l = 0; l < c->g.L; l++) {
		uint64_t v = c->load0[l];
		e->max = v > e->max ? v : e->max;
		e->sumsq += v * v;
	}
	e->connected = c->ca_no_path == 0;
}

/* One candidate root set: ranks from it, the CA routes of every base LID, their loads. */
static void eval_roots(void *ctx, const uint8_t *is_root, struct updn_eval *e)
{
	struct ctx *c = ctx;
	take_roots(c, is_root);
	measure(c, e);
}

/* Fall-back roots, chosen by the routes they give: the detection's root, each of the most
 * central switches alone, then several together (roots.c). Logs what won and why. */
static void search_roots(struct ctx *c, const uint32_t *centre, uint32_t ncentre,
			 uint32_t max_evals, struct updn_result *res)
{
	struct updn_search st;
	uint8_t *set = malloc(c->g.S ? c->g.S : 1);
	if (!set)
		return;
	memcpy(set, c->is_root, c->g.S);
	uint32_t n = updn_search_roots(c->core, &c->g, centre, ncentre, max_evals, eval_roots, c,
				       set, &st);
	take_roots(c, set); /* eval_roots left the last trial in the context */
	free(set);
	if (!st.evals)
		return;
	res->roots_tried = st.evals;
	res->load_detected = st.detected.max;
	res->load_single = st.single.max;
	char list[512];
	size_t used = 0;
	unsigned shown = 0;
	list[0] = 0;
	for (uint32_t s = 0; s < c->g.S && used < sizeof(list); s++) {
		if (!c->is_root[s] || !ibsm_bit(&c->sc->switches, s))
			continue;
		if (shown++ == 8) {
			snprintf(list + used, sizeof(list) - used, ", ...");
			break;
		}
		int w = snprintf(list + used, sizeof(list) - used, "%s0x%016llx", used ? ", " : "",
				 (unsigned long long)c->g.guid[s]);
		if (w > 0)
			used += (size_t)w;
	}
	c->core->log(c->core, IBSM_LOG_INFO,
		     "roots by the routes they give: %u candidate sets (each of the %u most central "
		     "switches alone, then %u with more roots added one at a time); %u root%s%s "
		     "carry at most %llu CA routes on a switch link (the best root alone: %llu, the "
		     "most central: %llu): %s", st.evals, st.singles, st.evals - 1 - st.singles, n,
		     n == 1 ? "" : "s", st.by_distance ? " (equal ranks by distance from the first)"
		     : "", (unsigned long long)st.chosen.max, (unsigned long long)st.single.max,
		     (unsigned long long)st.detected.max, list);
}

/* ---- the root file, read again only when it changed ---- */

static int load_roots(struct engine_inst *u, struct guid_list *rf, const char **path_out)
{
	const struct ibsm_core *core = u->core;
	const char *path = engine_config_path(core, "root_guid_file");
	*path_out = path;
	if (!path)
		return 0;
	int seen = guid_file_stamp_same(&u->stamp, path);
	int rc = updn_guids_load(core, path, seen ? IBSM_LOG_VERBOSE : IBSM_LOG_ERROR, rf);
	if (rc < 0)
		return rc;
	guid_file_stamp_note(&u->stamp, path);
	return 0;
}

/* ---- ids_guid_file: the IDs that order switches of one rank (updn only, as OpenSM) ---- */

static int load_ids(struct ctx *c, struct ibsm_routes *out)
{
	const char *path = engine_config_path(c->core, "ids_guid_file");
	if (!path)
		return 0;
	uint32_t matched = 0;
	char why[sizeof(out->why)];
	int rc = updn_ids_load(c->core, path, &c->g, c->id, &matched, why, sizeof(why));
	if (rc < 0)
		return engine_fail(out, rc, "%s", why);
	c->core->log(c->core, IBSM_LOG_VERBOSE, "ids_guid_file %s: %u switches ordered by their ID",
		     path, matched);
	return 0;
}

/* ---- the engine ---- */

static void ctx_free(struct ctx *c)
{
	graph_free(&c->g);
	free(c->row_ok);
	free(c->is_root);
	free(c->rank);
	free(c->ord);
	free(c->tie);
	free(c->id);
	free(c->rnode);
	free(c->rsys);
	free(c->comp_size);
	free(c->how);
	engine_dests_free(&c->dests);
	free(c->dist);
	free(c->flag);
	free(c->order);
	free(c->cand_off);
	free(c->cand_n);
	free(c->cand);
	free(c->sub);
	free(c->choice);
	free(c->load_ca);
	free(c->load_sw);
	free(c->load0);
	free(c->gbuf);
	free(c->glid);
}

static void result_free(void *result)
{
	struct updn_result *r = result;
	if (!r)
		return;
	free(r->rank);
	free(r->is_root);
	free(r->ord);
	free(r->how);
	free(r);
}

/* The arrays over the graph's switches, links and components. 0 or -ENOMEM. */
static int ctx_alloc(struct ctx *c)
{
	size_t S = c->g.S ? c->g.S : 1, L = c->g.L ? c->g.L : 1;
	size_t ncomp = c->g.ncomp ? c->g.ncomp : 1;
	c->row_ok = calloc(S, 1);
	c->is_root = calloc(S, 1);
	c->rank = malloc(S * sizeof(*c->rank));
	c->ord = malloc(S * sizeof(*c->ord));
	c->tie = calloc(S, sizeof(*c->tie));
	c->id = malloc(S * sizeof(*c->id));
	for (size_t s = 0; c->id && s < c->g.S; s++)
		c->id[s] = c->g.guid[s];
	c->rnode = malloc(L * sizeof(*c->rnode));
	c->rsys = malloc(L * sizeof(*c->rsys));
	c->comp_size = calloc(ncomp, sizeof(*c->comp_size));
	c->how = calloc(ncomp, 1);
	c->dist = malloc(S * sizeof(*c->dist));
	c->flag = calloc(S, 1);
	c->order = malloc(S * sizeof(*c->order));
	c->cand_off = malloc(S * sizeof(*c->cand_off));
	c->cand_n = calloc(S, 1);
	c->cand = malloc(L * sizeof(*c->cand));
	c->sub = malloc(S * sizeof(*c->sub));
	c->load_ca = malloc(L * sizeof(*c->load_ca));
	c->load_sw = malloc(L * sizeof(*c->load_sw));
	c->load0 = malloc(L * sizeof(*c->load0));
	int ok = c->row_ok && c->is_root && c->rank && c->ord && c->tie && c->id && c->rnode && c->rsys &&
		 c->comp_size && c->how && c->dist && c->flag && c->order && c->cand_off &&
		 c->cand_n && c->cand && c->sub && c->load_ca && c->load_sw && c->load0;
	return ok ? 0 : -ENOMEM;
}

/* Rows in scope, component sizes, and the node (and system) at the far end of each link. */
static void ctx_index(struct ctx *c, struct updn_result *res)
{
	const struct ibsm_fabric *f = c->f;
	for (uint32_t s = 0; s < c->g.S; s++) {
		c->row_ok[s] = (uint8_t)ibsm_bit(&c->sc->switches, s);
		res->rows += c->row_ok[s];
		c->comp_size[c->g.comp[s]]++;
	}
	for (uint32_t l = 0; l < c->g.L; l++) {
		const struct ibsm_node *rn = ibsm_switch_node(f, c->g.peer[l]);
		c->rnode[l] = ibsm_switch_at(f, c->g.peer[l])->node;
		c->rsys[l] = rn->sysimg_guid ? rn->sysimg_guid : rn->guid;
	}
}

/* The destinations (grouped by switch) and the buffers sized by them: the choices per LID
 * offset, one destination switch's entries. 0 or -ENOMEM. */
static int ctx_dests(struct ctx *c)
{
	size_t S = c->g.S ? c->g.S : 1;
	if (engine_dests_build(c->f, c->sc, c->stride, NULL, ENGINE_DESTS_BY_SWITCH, &c->dests) < 0)
		return -ENOMEM;
	uint32_t maxgroup = 1;
	for (uint32_t t = 0; t < c->g.S; t++) {
		uint32_t n = 0;
		for (uint32_t i = c->dests.doff[t]; i < c->dests.doff[t + 1]; i++)
			n += c->dests.v[i].end - c->dests.v[i].first;
		maxgroup = n > maxgroup ? n : maxgroup;
	}
	c->choice = malloc((c->dests.max_end ? c->dests.max_end : 1) * S * sizeof(*c->choice));
	c->gbuf = malloc((size_t)maxgroup * S);
	c->glid = malloc((size_t)maxgroup * sizeof(*c->glid));
	return c->choice && c->gbuf && c->glid ? 0 : -ENOMEM;
}

/* Does the root file rf leave some component without a root (so roots must be detected
 * there, from the hop matrix)? Logged when it does. */
static int file_leaves_component(const struct ctx *c, const struct guid_list *rf,
				 const char *path)
{
	if (!rf->n)
		return 1;
	int need = 1;
	uint8_t *covered = calloc(c->g.ncomp, 1);
	if (covered) {
		uint32_t ncov = 0;
		for (uint32_t k = 0; k < c->g.ncomp; k++)
			if (c->g.outside[k]) { /* nothing to root there */
				covered[k] = 1;
				ncov++;
			}
		for (uint32_t s = 0; s < c->g.S; s++)
			for (uint32_t i = 0; i < rf->n; i++)
				if (rf->v[i] == c->g.guid[s] && !covered[c->g.comp[s]]) {
					covered[c->g.comp[s]] = 1;
					ncov++;
				}
		need = ncov < c->g.ncomp;
		free(covered);
	}
	if (need && path)
		c->core->log(c->core, IBSM_LOG_INFO,
			     "root GUID file %s leaves %s without a root; detecting there", path,
			     c->g.ncomp > 1 ? "some components" : "the fabric");
	return need;
}

/* Picks the roots (the file's, detection where it has none; centre_only: one central root
 * per component), compares the central candidates, ranks the switches. */
static void choose_roots(struct ctx *c, const uint8_t *hops, const struct guid_list *file,
			 int centre_only, struct updn_result *res)
{
	const struct ibsm_core *core = c->core;
	uint32_t S = c->g.S;
	uint32_t centre[MAX_CENTRE], ncentre = 0;
	uint64_t evals = EVAL_BUDGET / eval_cost(c);
	uint32_t max_evals = evals > MAX_EVALS ? MAX_EVALS : (uint32_t)evals;
	uint32_t max_centre = max_evals > MAX_CENTRE ? MAX_CENTRE : max_evals;
	res->nroots = updn_pick_roots(core, &c->g, hops, file, c->is_root, c->how, centre,
				      &ncentre, max_centre ? max_centre : 1, centre_only);
	memset(c->tie, 0, (size_t)S * sizeof(*c->tie));
	c->hops = hops;
	if (ncentre > 0 && !centre_only)
		search_roots(c, centre, ncentre, max_evals, res);
	res->nroots = 0;
	for (uint32_t s = 0; s < S; s++)
		res->nroots += c->is_root[s] && !c->g.outside[c->g.comp[s]];
	res->max_rank = rank_switches(c);
	core->log(core, IBSM_LOG_VERBOSE, "ranked %u switches from %u roots, max rank %u", S,
		  res->nroots, res->max_rank);
	if (c->connect_roots)
		core->log(core, IBSM_LOG_INFO,
			  "connect_roots: routes to the %u root switches' LIDs are plain min-hop",
			  res->nroots);
}

/* Routes every destination from the roots of attempt 0 (the file, detection where it has no
 * root), else 1 (detection), else 2 (one central root per component, which always connects
 * every pair): the next attempt while CA pairs are left without an up/down path. need_hops:
 * attempt 0 needs the hop matrix. Returns 0, or < 0 with out->why set. */
static int route_from_roots(struct ctx *c, struct ibsm_routes *out, const struct guid_list *rf,
			    int need_hops, struct updn_result *res)
{
	uint8_t *hops = NULL;
	int rc = 0;
	for (int attempt = 0;; attempt++) {
		if (attempt == 1 && !rf->n)
			attempt = 2;
		if ((attempt > 0 || need_hops) && !hops &&
		    (rc = engine_switch_hops(c->core, c->f, c->sc, out, &hops)) < 0)
			break;
		choose_roots(c, hops, attempt == 0 ? rf : NULL, attempt == 2, res);
		memset(c->choice, 0xFF, (size_t)(c->dests.max_end ? c->dests.max_end : 1) * c->g.S *
						sizeof(*c->choice));
		rc = route_all(c, 1, 1);
		if (rc < 0) {
			rc = engine_fail(out, rc, "cancelled");
			break;
		}
		if (!c->ca_no_path || attempt == 2)
			break;
		c->core->log(c->core, IBSM_LOG_ERROR,
			     "the roots %s leave %llu (switch with CAs, CA LID) pairs without an "
			     "up/down path; routing again with %s",
			     attempt == 0 ? "of the root GUID file" : "found by the hop histogram",
			     (unsigned long long)c->ca_no_path,
			     attempt == 0 && rf->n ? "detected roots" : "one central root");
		for (uint32_t s = 0; s < c->g.S; s++)
			if (c->row_ok[s])
				memset(c->lft + (size_t)s * c->stride, IBSM_NO_PORT, c->stride);
	}
	free(hops);
	return rc;
}

/* ---- dnup ---- */

/* dnup's second key: per component the hops from one switch (tr[component]). */
static void dnup_set_ties(struct ctx *c, const uint8_t *hops, const uint32_t *tr)
{
	uint32_t S = c->g.S;
	for (uint32_t s = 0; s < S; s++) {
		uint32_t t = tr[c->g.comp[s]];
		c->tie[s] = t == UINT32_MAX ? 0 : hops[(size_t)t * S + s];
	}
}

/* dnup orders switches of equal rank (equal distance from the leaves) by their distance from
 * one switch per component, so that a fabric of leaves alone is ranked as up/down from that
 * switch, which connects every pair. That switch is the most central one; in the component
 * with the most CAs, of the most central candidates the one whose routes load the busiest
 * switch link least. */
static void dnup_ties(struct ctx *c, const uint8_t *hops, uint32_t max_evals,
		      struct updn_result *res)
{
	uint32_t S = c->g.S, ncomp = c->g.ncomp, big = 0;
	uint32_t *tr = malloc((ncomp ? ncomp : 1) * sizeof(*tr));
	uint64_t *cas = calloc(ncomp ? ncomp : 1, sizeof(*cas));
	uint32_t cand[MAX_CENTRE];
	if (!tr || !cas) {
		free(tr);
		free(cas);
		memset(c->tie, 0, (size_t)S * sizeof(*c->tie));
		return;
	}
	for (uint32_t s = 0; s < S; s++)
		cas[c->g.comp[s]] += c->g.ca_src[s];
	for (uint32_t k = 0; k < ncomp; k++) {
		if (cas[k] > cas[big])
			big = k;
		if (updn_central(&c->g, hops, k, &tr[k], 1) != 1)
			tr[k] = UINT32_MAX;
	}
	uint32_t n = updn_central(&c->g, hops, big, cand, max_evals < MAX_CENTRE ? max_evals :
				  MAX_CENTRE), best = tr[big];
	struct updn_eval be = { 0 }, e, first = { 0 };
	for (uint32_t i = 0; n > 1 && i < n; i++) {
		tr[big] = cand[i];
		dnup_set_ties(c, hops, tr);
		measure(c, &e);
		if (i == 0)
			first = e;
		if (i == 0 || updn_eval_better(&e, &be)) {
			be = e;
			best = cand[i];
		}
	}
	tr[big] = best;
	dnup_set_ties(c, hops, tr);
	res->roots_tried = n > 1 ? n : 0;
	res->load_detected = first.max;
	if (best != UINT32_MAX && n > 1)
		c->core->log(c->core, IBSM_LOG_INFO,
			     "equal ranks ordered by the distance from 0x%016llx (of the %u most "
			     "central switches, the one whose routes carry the fewest CA routes on the "
			     "busiest switch link: %llu; the most central: %llu)",
			     (unsigned long long)c->g.guid[best], n, (unsigned long long)be.max,
			     (unsigned long long)first.max);
	else if (best != UINT32_MAX)
		c->core->log(c->core, IBSM_LOG_INFO,
			     "equal ranks ordered by the distance from 0x%016llx, the most central "
			     "switch", (unsigned long long)c->g.guid[best]);
	free(tr);
	free(cas);
}

/* dnup (OpenSM's -R dnup): the leaf switches (those with a CA in scope) are rank 0, the others
 * ranked by BFS from them, and a link goes up toward the higher rank: routes first move away
 * from the leaves and then back toward them. Equal ranks: dnup_ties, then GUID, so the order
 * is strict and the routes free of credit loops (OpenSM's dnup leaves equal ranks
 * unordered). Declines when CA pairs have no such path, unless connect_roots (as OpenSM's
 * dnup) routes them anyway. Returns 0, or < 0 with out->why set. */
static int route_dnup(struct ctx *c, struct ibsm_routes *out, struct updn_result *res)
{
	uint32_t S = c->g.S, leaves = 0;
	for (uint32_t s = 0; s < S; s++) {
		c->is_root[s] = c->g.ca_src[s] > 0;
		leaves += c->is_root[s];
	}
	if (!leaves)
		return engine_fail(out, -EINVAL, "dnup ranks the switches by their distance from "
				   "the leaf switches (those with a CA in scope), and there are none");
	uint8_t *hops = NULL;
	int rc = engine_switch_hops(c->core, c->f, c->sc, out, &hops);
	if (rc < 0)
		return rc;
	uint64_t evals = EVAL_BUDGET / eval_cost(c);
	dnup_ties(c, hops, evals > MAX_EVALS ? MAX_EVALS : (uint32_t)evals, res);
	free(hops);
	res->nroots = leaves;
	res->max_rank = rank_switches(c);
	for (int pass = 0; pass < 2; pass++) {
		memset(c->choice, 0xFF, (size_t)(c->dests.max_end ? c->dests.max_end : 1) * S *
						sizeof(*c->choice));
		if ((rc = route_all(c, 1, 1)) < 0)
			return engine_fail(out, rc, "cancelled");
		if (!c->ca_no_path || pass)
			break;
		if (!c->connect_roots)
			return engine_fail(out, -EINVAL,
					   "dnup: %llu (switch with CAs, CA LID) pairs have no path "
					   "that goes away from the leaf switches and then back; "
					   "declining (connect_roots routes them through turns that "
					   "may close credit loops)", (unsigned long long)c->ca_no_path);
		c->core->log(c->core, IBSM_LOG_ERROR,
			     "dnup: connect_roots: %llu (switch with CAs, CA LID) pairs have no "
			     "down/up path; routing them through turns that may close credit loops",
			     (unsigned long long)c->ca_no_path);
		c->fb_ca = 1;
		for (uint32_t s = 0; s < S; s++)
			if (c->row_ok[s])
				memset(c->lft + (size_t)s * c->stride, IBSM_NO_PORT, c->stride);
	}
	return 0;
}

/* The counts of the finished tables. */
static void result_counts(const struct ctx *c, struct updn_result *res)
{
	res->routed = c->routed;
	res->udu_entries = c->udu;
	res->off_updn = c->off_updn;
	res->ca_no_path = c->ca_no_path;
	balance(c, &res->load_max, &res->load_mean, &res->balance);
	uint64_t want = 0;
	for (uint32_t i = 0; i < c->dests.n; i++)
		want += c->dests.v[i].end - c->dests.v[i].first;
	want *= res->rows;
	res->unrouted = want > c->routed ? want - c->routed : 0;
}

/* Roots (the -a file, read again only when it changed; else detected), the tables, their
 * counts. Returns 0, or < 0 with out->why set. */
static int route_updn(struct ctx *c, struct engine_inst *inst, struct ibsm_routes *out,
		      struct updn_result *res)
{
	struct guid_list rf = { 0 };
	const char *path = NULL;
	if (load_roots(inst, &rf, &path) < 0)
		c->core->log(c->core, IBSM_LOG_ERROR, "root GUID file unreadable; detecting roots");
	int rc = route_from_roots(c, out, &rf, file_leaves_component(c, &rf, path), res);
	guid_list_clear(&rf);
	if (rc == 0)
		result_counts(c, res);
	return rc;
}

/* What the result keeps of the context: ranks, roots, and per switch how its component's
 * roots were chosen. 0 or -ENOMEM. */
static int result_keep(struct updn_result *res, struct ctx *c)
{
	res->rank = c->rank;
	res->is_root = c->is_root;
	res->ord = c->ord;
	c->rank = NULL;
	c->is_root = NULL;
	c->ord = NULL;
	res->how = malloc(c->g.S ? c->g.S : 1);
	if (!res->how)
		return -ENOMEM;
	for (uint32_t s = 0; s < c->g.S; s++)
		res->how[s] = c->how[c->g.comp[s]];
	return 0;
}

static void log_result(const struct ibsm_core *core, const struct updn_result *res)
{
	if (res->udu_entries)
		core->log(core, IBSM_LOG_INFO,
			  "%llu switch-LID routes (switch, LID entries) use up-down-up turns: no "
			  "up/down path reaches those switches",
			  (unsigned long long)res->udu_entries);
	if (res->off_updn)
		core->log(core, IBSM_LOG_VERBOSE,
			  "%llu CA-LID entries on switches without CAs leave up/down (no CA route "
			  "passes there)", (unsigned long long)res->off_updn);
	if (res->ca_no_path && !res->dnup)
		core->log(core, IBSM_LOG_ERROR,
			  "%llu (switch with CAs, CA LID) pairs have no up/down path; left unrouted",
			  (unsigned long long)res->ca_no_path);
	if (res->unrouted)
		core->log(core, IBSM_LOG_INFO, "%llu (switch, LID) pairs have no path in scope",
			  (unsigned long long)res->unrouted);
	core->log(core, IBSM_LOG_INFO,
		  "%s: %u %s, max rank %u; %llu LFT entries on %u switches to %u end "
		  "ports in %.3f s; switch-link load max %llu, max/mean %.2f",
		  res->dnup ? "down/up" : "up/down", res->nroots,
		  res->dnup ? "leaf switches" : "roots", res->max_rank, (unsigned long long)res->routed, res->rows,
		  res->dests, res->seconds, (unsigned long long)res->load_max, res->balance);
}

static const struct engine_run_spec updn_run = {
	.name = IBSM_PLUGIN_NAME, .result_size = sizeof(struct updn_result), .result_free = result_free,
};

static int updn_route(void *inst, const struct ibsm_fabric *f, const struct ibsm_scope *sc,
		      struct ibsm_routes *out, void **result)
{
	struct engine_run run;
	int rc = engine_run_begin(&run, &updn_run, inst, f, sc, out, result);
	if (rc < 0)
		return rc;
	struct ctx c = { .core = run.core, .f = f, .sc = sc, .lft = out->lft,
			 .stride = out->stride };
	struct updn_result *res = run.res;
	res->generation = f->generation;
	c.connect_roots = ibsm_config_bool(run.core, "connect_roots", 0);
	c.dnup = res->dnup = IS_DNUP;
	rc = graph_build(f, sc, &c.g);
	if (rc == 0)
		rc = ctx_alloc(&c);
	if (rc == 0) {
		res->S = c.g.S;
		ctx_index(&c, res);
		rc = ctx_dests(&c);
		res->dests = c.dests.n;
	}
	if (rc < 0)
		rc = engine_fail(out, rc, "out of memory");
	else if (!c.dnup && (rc = load_ids(&c, out)) < 0)
		; /* out->why says why */
	else if (res->rows && c.dests.n && c.g.S && c.dnup)
		rc = route_dnup(&c, out, res);
	else if (res->rows && c.dests.n && c.g.S)
		rc = route_updn(&c, run.inst, out, res);
	if (rc == 0 && c.dnup && res->rows && c.dests.n && c.g.S)
		result_counts(&c, res);
	res->seconds = engine_run_seconds(&run);
	if (rc == 0 && result_keep(res, &c) < 0)
		rc = engine_fail(out, -ENOMEM, "out of memory");
	ctx_free(&c);
	if (rc == 0)
		log_result(run.core, res);
	return engine_run_end(&run, rc);
}

static const struct ibsm_config_key dnup_keys[] = {
	{ "connect_roots", "FALSE", "dnup: route the CA pairs no down/up path joins anyway, "
	  "through turns that may close credit loops (else dnup declines such a fabric)" },
	{ NULL, NULL, NULL },
};

static const struct ibsm_config_key updn_keys[] = {
	{ "root_guid_file", NULL, "Root switch GUIDs, one a line (unset: OpenSM's hop histogram, "
	  "else the most central switch)" },
	{ "connect_roots", "FALSE", "Route to the root switches' LIDs by plain min-hop, so the "
	  "roots reach each other" },
	{ "ids_guid_file", NULL, "Switch GUID and ID a line: between switches of one rank the "
	  "lower ID is up (unset: the lower GUID; OpenSM's -m)" },
	{ NULL, NULL, NULL },
};

IBSM_ENGINE_EXPORT const struct ibsm_engine ibsm_engine = {
	IBSM_ENGINE_INIT(IBSM_PLUGIN_NAME),
	.caps = IBSM_CAP_LMC,
	.setup = engine_inst_setup,     /* engine_inst's stamp: the -a file as last read */
	.teardown = engine_inst_teardown,
	.route = updn_route,
	.result_free = result_free,
	.path_sl = engine_path_sl_hint,
	.dump = engine_dump_nothing,
	.config_keys = IS_DNUP ? dnup_keys : updn_keys,
	.summary = IS_DNUP ? "Down/up routing (OpenSM's dnup): ranks from the leaf switches, routes "
		   "away from the leaves and back; free of credit loops on any topology" :
		   "Up/down routing from root switches (file, hop histogram or chosen by the "
		   "balance of their routes): free of credit loops on any topology",
};
