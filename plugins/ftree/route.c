/* SPDX-License-Identifier: BSD-2-Clause */
/* route.c - fat-tree route assignment. Destinations are taken in the CA order (leaves in index
 * order, compute nodes by port, dummy slots up to the fullest leaf), then the other CAs, then
 * the switches. Each CA destination first gets its main path: from its switch up to a root,
 * at every step the up port group that carried the fewest main paths so far (first in port
 * order on ties), the least used port inside it. That greedy choice is what spreads the
 * destinations of a leaf and of a subtree over distinct up links (congestion-free shifts).
 * Then every switch gets its entry: ancestors of the destination go down (main path first),
 * the rest go up toward the lowest ancestor, preferring the one on the main path, so all CA
 * traffic to a destination funnels into its main path (up/down only: no credit loops).
 * Switch LIDs left without an up/down path are reached over any link (counted), and I/O
 * nodes may use up to max_reverse_hops down-then-up turns.
 *
 * Main paths are chosen sequentially (they depend on each other through the counters); the
 * per-destination columns are then independent and are filled by up to two threads, in
 * blocks, so the tables do not depend on the thread count. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine_glue.h"
#include "ftree.h"

#define BLOCK 32
#define MAX_THREADS 16
#define COLUMN_THREADS_WORK 2000000 /* (destination, switch) pairs worth a second thread */
#define F_ANC 1
#define F_CHAIN 2
#define F_VIA 4
#define NO_H 0xFFFF

struct dest {
	uint32_t t;        /* switch it hangs off (itself for a switch LID) */
	uint32_t chain;    /* first chain entry, or UINT32_MAX */
	uint32_t seq;      /* position in the routing order */
	uint16_t lid;
	uint8_t exit;      /* port of t toward it; 0 for a switch LID */
	uint8_t clen;
	uint8_t io, is_sw;
};

struct chain_ent {
	uint32_t sw;
	uint32_t turn;     /* main paths through sw before this one */
	uint8_t dport;     /* sw's port toward the previous chain switch */
	uint8_t cable;     /* which of the parallel links from the previous chain switch */
};

#define NO_CABLE 0xFF

struct plan {
	const struct ibsm_fabric *f;
	const struct ftree_topo *t;
	const struct dest *dests;
	uint32_t ndests;
	const struct chain_ent *chain;
	uint8_t *lft;
	uint32_t stride;
	unsigned max_rev;
	atomic_uint next_block;
	atomic_int stop;
};

struct worker {
	struct plan *pl;
	const struct ibsm_core *core;
	uint8_t *col;      /* [BLOCK * S] */
	uint16_t *h;       /* [S] */
	uint8_t *fl, *cidx;
	uint8_t *cable;    /* [max_rank + 1]: cable the main path took up into that rank */
	uint32_t *turn, *list, *list2;
	uint64_t entries;
	uint32_t non_updown, reverse, unrouted_leaf, mgmt_only;
} ENGINE_WORKER_ALIGNED;

static inline uint8_t group_port(const struct ftree_topo *t, const struct ftree_group *g,
				 uint32_t i)
{
	return t->ports[2 * (g->first + i % g->n)];
}

/* Among the groups [g0, g0 + n) of s whose peer is routed, the best next hop: fewest hops,
 * then (if prefer_via) through the main path, then rotation by rot among the ties. Returns the
 * group or NULL; *rot_rest gets rot / ties, what is left of the rotation for the choice of a
 * cable inside the group (the same value for both would pair group i with cable i and leave
 * the other cables of parallel links unused). */
static const struct ftree_group *pick(const struct ftree_topo *t, const uint8_t *col,
				      const uint16_t *h, const uint8_t *fl, uint32_t g0, uint32_t n,
				      uint32_t rot, uint32_t only_flag, uint32_t *rot_rest)
{
	unsigned best = UINT32_MAX, ties = 0;
	for (uint32_t g = g0; g < g0 + n; g++) {
		uint32_t p = t->groups[g].peer;
		if (col[p] == IBSM_NO_PORT || (only_flag && !(fl[p] & only_flag)))
			continue;
		unsigned key = (unsigned)h[p] << 1 | !(fl[p] & F_VIA);
		if (key < best) {
			best = key;
			ties = 1;
		} else if (key == best) {
			ties++;
		}
	}
	if (!ties)
		return NULL;
	uint32_t k = rot % ties;
	*rot_rest = rot / ties;
	for (uint32_t g = g0; g < g0 + n; g++) {
		uint32_t p = t->groups[g].peer;
		if (col[p] == IBSM_NO_PORT || (only_flag && !(fl[p] & only_flag)))
			continue;
		if (((unsigned)h[p] << 1 | !(fl[p] & F_VIA)) == best && k-- == 0)
			return &t->groups[g];
	}
	return NULL;
}

/* Which of the parallel links from s up to p: the one the destination's main path took up into
 * p's rank (the fat tree's plane: main paths spread over cables by their link counters, and
 * every other switch follows), else by the main path's turn at p, else by the rest of the
 * rotation that chose the group (pick()). */
static uint32_t cable_choice(const struct worker *w, uint32_t s, uint32_t p, uint32_t rot_rest)
{
	const struct ftree_topo *t = w->pl->t;
	int32_t r = t->sw[p].rank;
	if (r >= 0 && t->sw[s].rank == r + 1 && (uint32_t)r <= t->max_rank && w->cable[r] != NO_CABLE)
		return w->cable[r];
	return (w->fl[p] & F_CHAIN) ? w->turn[p] : rot_rest;
}

/* s goes up (or over) to g's peer. The group decides where traffic funnels (into the main
 * path when the peer leads there); the cable inside it, among parallel links to the same
 * peer, only spreads load (cable_choice()). */
static void set_route(struct worker *w, uint8_t *col, uint32_t s, const struct ftree_group *g,
		      uint32_t rot_rest)
{
	uint32_t p = g->peer;
	w->h[s] = (uint16_t)(w->h[p] + 1);
	if (w->fl[p] & F_VIA) {
		w->fl[s] |= F_VIA;
		w->turn[s] = w->turn[p];
	}
	col[s] = group_port(w->pl->t, g, cable_choice(w, s, p, rot_rest));
}

/* Starts d's column: nothing routed, d's main path (chain) marked, d's own switch sending
 * it out of its port. Returns the chain, or NULL (a switch LID has none). */
static const struct chain_ent *start_column(struct worker *w, const struct dest *d,
					    uint8_t *col)
{
	const struct plan *pl = w->pl;
	uint8_t *fl = w->fl;
	memset(col, IBSM_NO_PORT, pl->t->S);
	memset(fl, 0, pl->t->S);
	const struct chain_ent *ch = d->chain != UINT32_MAX ? pl->chain + d->chain : NULL;
	memset(w->cable, NO_CABLE, pl->t->max_rank + 1);
	for (uint32_t i = 0; ch && i < d->clen; i++) {
		fl[ch[i].sw] |= F_CHAIN;
		w->cidx[ch[i].sw] = (uint8_t)i;
		int32_t r = pl->t->sw[ch[i].sw].rank;
		if (i && r >= 0 && (uint32_t)r <= pl->t->max_rank)
			w->cable[r] = ch[i].cable;
	}
	uint32_t s0 = d->t;
	col[s0] = d->exit;
	w->h[s0] = 0;
	fl[s0] |= F_ANC | F_CHAIN | F_VIA;
	w->turn[s0] = ch ? ch[0].turn : d->seq;
	return ch;
}

/* Ancestor p of the destination (not on the main path) goes down to an ancestor child: the
 * main path's if it is one, else the children rotate by destination and switch. */
static void route_down(struct worker *w, const struct dest *d, uint32_t p, uint8_t *col)
{
	const struct ftree_topo *t = w->pl->t;
	const struct ftree_sw *x = &t->sw[p];
	const uint8_t *fl = w->fl;
	const struct ftree_group *best = NULL;
	unsigned ties = 0;
	for (uint32_t g = x->down0; g < x->down0 + x->ndown; g++) {
		uint32_t c = t->groups[g].peer;
		if (!(fl[c] & F_ANC) || col[c] == IBSM_NO_PORT)
			continue;
		if (fl[c] & F_CHAIN) {
			best = &t->groups[g];
			ties = 0;
			break;
		}
		ties++;
	}
	uint32_t rot_rest = d->seq + p;
	if (!best && ties) {
		uint32_t k = (d->seq + p) % ties;
		rot_rest = (d->seq + p) / ties; /* the cable: what the child choice left (pick()) */
		for (uint32_t g = x->down0; g < x->down0 + x->ndown; g++) {
			uint32_t c = t->groups[g].peer;
			if ((fl[c] & F_ANC) && col[c] != IBSM_NO_PORT && k-- == 0) {
				best = &t->groups[g];
				break;
			}
		}
	}
	if (best) {
		w->h[p] = (uint16_t)(w->h[best->peer] + 1);
		col[p] = group_port(t, best, rot_rest);
	}
}

/* The destination's ancestors, rank by rank upward: down toward it, along the main path
 * where they are on it. */
static void route_ancestors(struct worker *w, const struct dest *d,
			    const struct chain_ent *ch, uint8_t *col)
{
	const struct ftree_topo *t = w->pl->t;
	uint8_t *fl = w->fl;
	uint32_t *cur = w->list, *nxt = w->list2, ncur = 1;
	cur[0] = d->t;
	while (ncur) {
		uint32_t nn = 0;
		for (uint32_t i = 0; i < ncur; i++) {
			const struct ftree_sw *x = &t->sw[cur[i]];
			for (uint32_t g = x->up0; g < x->up0 + x->nup; g++) {
				uint32_t p = t->groups[g].peer;
				if (fl[p] & F_ANC)
					continue;
				fl[p] |= F_ANC;
				nxt[nn++] = p;
			}
		}
		for (uint32_t i = 0; i < nn; i++) {
			uint32_t p = nxt[i];
			if (!(fl[p] & F_CHAIN)) {
				route_down(w, d, p, col);
				continue;
			}
			const struct chain_ent *c = &ch[w->cidx[p]];
			col[p] = c->dport;
			fl[p] |= F_VIA;
			w->turn[p] = c->turn;
			/* the chain's lower neighbour is an ancestor one hop closer */
			w->h[p] = (uint16_t)(w->h[ch[w->cidx[p] - 1].sw] + 1);
		}
		uint32_t *tmp = cur;
		cur = nxt;
		nxt = tmp;
		ncur = nn;
	}
}

/* Switches still without a route, roots first (down: leaves first), through their up (down)
 * groups toward a routed neighbour, main path preferred. Returns how many got one. */
static uint32_t route_unrouted(struct worker *w, const struct dest *d, uint8_t *col, int down)
{
	const struct ftree_topo *t = w->pl->t;
	uint32_t added = 0;
	for (uint32_t j = 0; j < t->nscope; j++) {
		uint32_t s = t->by_rank[down ? t->nscope - 1 - j : j];
		if (col[s] != IBSM_NO_PORT)
			continue;
		const struct ftree_sw *x = &t->sw[s];
		uint32_t rest = 0;
		const struct ftree_group *g =
			down ? pick(t, col, w->h, w->fl, x->down0, x->ndown, d->seq + s, 0, &rest)
			     : pick(t, col, w->h, w->fl, x->up0, x->nup, d->seq + s, 0, &rest);
		if (g) {
			set_route(w, col, s, g, rest);
			added++;
		}
	}
	return added;
}

/* I/O nodes: each round allows one more down-then-up turn. */
static void route_reverse(struct worker *w, const struct dest *d, uint8_t *col)
{
	for (unsigned r = 0; r < w->pl->max_rev; r++) {
		uint32_t added = route_unrouted(w, d, col, 1);
		added += route_unrouted(w, d, col, 0);
		w->reverse += added;
		if (!added)
			break;
	}
}

/* Whatever up/down could not reach goes over any link, nearest routed neighbour first; a wave
 * is chosen before it is written, so it points only at earlier waves (no loops). For a switch
 * LID every switch takes part; for a CA LID only switches without CAs (e.g. a root cut off
 * from the destination's leaf), whose entries carry their own management traffic only: no CA
 * route enters them toward that destination, so CA traffic stays up/down. Returns how many
 * switches got a route. */
static uint32_t route_any_link(struct worker *w, const struct dest *d, uint8_t *col, int no_ca_only)
{
	const struct ftree_topo *t = w->pl->t;
	uint32_t n = 0, routed = 0;
	for (uint32_t i = 0; i < t->nscope; i++) {
		uint32_t s = t->by_rank[i];
		if (col[s] == IBSM_NO_PORT && !(no_ca_only && t->sw[s].nca))
			w->list[n++] = s;
	}
	while (n) {
		uint32_t nn = 0, got = 0;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t s = w->list[i];
			const struct ftree_sw *x = &t->sw[s];
			/* groups of s are contiguous: up, down, same rank */
			uint32_t rest;
			const struct ftree_group *g = pick(t, col, w->h, w->fl, x->up0,
							   x->nup + x->ndown + x->nsib,
							   d->seq + s, 0, &rest);
			if (g) {
				w->list2[got++] = s;
				w->turn[s] = (uint32_t)(g - t->groups);
			} else {
				w->list[nn++] = s;
			}
		}
		if (!got)
			break;
		for (uint32_t i = 0; i < got; i++) {
			uint32_t s = w->list2[i];
			const struct ftree_group *g = &t->groups[w->turn[s]];
			col[s] = group_port(t, g, d->seq + s); /* management routes: any cable */
			w->h[s] = (uint16_t)(w->h[g->peer] + 1);
		}
		routed += got;
		n = nn;
	}
	return routed;
}

/* Fills col[0 .. S) for one destination. */
static void route_dest(struct worker *w, const struct dest *d, uint8_t *col)
{
	const struct ftree_topo *t = w->pl->t;
	const struct chain_ent *ch = start_column(w, d, col);
	route_ancestors(w, d, ch, col);
	/* everyone else, roots first: up toward the lowest ancestor, main path preferred */
	for (uint32_t i = 0; i < t->nscope; i++) {
		uint32_t s = t->by_rank[i];
		if (w->fl[s] & F_ANC)
			continue;
		const struct ftree_sw *x = &t->sw[s];
		uint32_t rest = 0;
		const struct ftree_group *g =
			pick(t, col, w->h, w->fl, x->up0, x->nup, d->seq + s, 0, &rest);
		if (g)
			set_route(w, col, s, g, rest);
	}
	if (d->io && w->pl->max_rev)
		route_reverse(w, d, col);
	if (d->is_sw) {
		w->non_updown += route_any_link(w, d, col, 0);
		return;
	}
	w->mgmt_only += route_any_link(w, d, col, 1);
	for (uint32_t i = 0; i < t->nleaves; i++) {
		uint32_t s = t->leaves[i];
		if (col[s] == IBSM_NO_PORT && t->sw[s].nca)
			w->unrouted_leaf++;
	}
}

/* Writes the columns of dests [first, first + n) into the rows of the in-scope switches. */
static void write_block(struct worker *w, uint32_t first, uint32_t n)
{
	const struct plan *pl = w->pl;
	const struct ftree_topo *t = pl->t;
	for (uint32_t i = 0; i < t->nscope; i++) {
		uint32_t s = t->by_rank[i];
		uint8_t *row = pl->lft + (size_t)s * pl->stride;
		for (uint32_t j = 0; j < n; j++) {
			uint8_t v = w->col[(size_t)j * t->S + s];
			if (v != IBSM_NO_PORT) {
				row[pl->dests[first + j].lid] = v;
				w->entries++;
			}
		}
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct plan *pl = w->pl;
	const struct ftree_topo *t = pl->t;
	for (;;) {
		if (atomic_load_explicit(&pl->stop, memory_order_relaxed))
			break;
		if (w->core && w->core->cancelled && w->core->cancelled(w->core)) {
			atomic_store(&pl->stop, 1);
			break;
		}
		uint32_t b = atomic_fetch_add(&pl->next_block, 1);
		uint32_t first = b * BLOCK;
		if (first >= pl->ndests)
			break;
		uint32_t n = pl->ndests - first < BLOCK ? pl->ndests - first : BLOCK;
		for (uint32_t j = 0; j < n; j++)
			route_dest(w, &pl->dests[first + j], w->col + (size_t)j * t->S);
		write_block(w, first, n);
	}
	return NULL;
}

static int worker_init(struct worker *w, struct plan *pl)
{
	uint32_t S = pl->t->S;
	w->pl = pl;
	w->col = malloc((size_t)BLOCK * S + 1);
	w->h = malloc((S + 1) * sizeof(*w->h));
	w->fl = malloc(S + 1);
	w->cidx = malloc(S + 1);
	w->cable = malloc((size_t)pl->t->max_rank + 1);
	w->turn = malloc((S + 1) * sizeof(*w->turn));
	w->list = malloc((S + 1) * sizeof(*w->list));
	w->list2 = malloc((S + 1) * sizeof(*w->list2));
	int ok = w->col && w->h && w->fl && w->cidx && w->cable && w->turn && w->list && w->list2;
	return ok ? 0 : -ENOMEM;
}

static void worker_free(struct worker *w)
{
	free(w->col);
	free(w->h);
	free(w->fl);
	free(w->cidx);
	free(w->cable);
	free(w->turn);
	free(w->list);
	free(w->list2);
}

/* The LID routed for port p in this scope (one path bit), or 0 when p is not a destination
 * here. */
static uint16_t dest_lid(const struct ibsm_fabric *f, const struct ibsm_scope *sc,
			 uint32_t stride, uint32_t p)
{
	unsigned first, end;
	if (!ibsm_scope_lid_offsets(f, sc, stride, p, &first, &end))
		return 0;
	return (uint16_t)(ibsm_port_at(f, p)->lid + first);
}

struct counters {
	uint32_t *grp, *link, *thr;
};

/* The main path of a CA on switch s: appends to chain, moves the counters. */
static uint32_t make_chain(const struct ftree_topo *t, struct counters *k, uint32_t s,
			   struct chain_ent *chain, uint32_t *nchain, uint8_t *len)
{
	uint32_t first = *nchain;
	uint8_t n = 0;
	chain[*nchain].sw = s;
	chain[*nchain].turn = k->thr[s]++;
	chain[*nchain].dport = 0;
	chain[*nchain].cable = NO_CABLE;
	(*nchain)++;
	n++;
	for (;;) {
		const struct ftree_sw *x = &t->sw[s];
		if (!x->nup)
			break;
		uint32_t bg = x->up0;
		for (uint32_t g = x->up0 + 1; g < x->up0 + x->nup; g++)
			if (k->grp[g] < k->grp[bg])
				bg = g;
		const struct ftree_group *g = &t->groups[bg];
		uint32_t bl = g->first;
		for (uint32_t l = g->first + 1; l < g->first + g->n; l++)
			if (k->link[l] < k->link[bl])
				bl = l;
		k->grp[bg]++;
		k->link[bl]++;
		s = g->peer;
		chain[*nchain].sw = s;
		chain[*nchain].turn = k->thr[s]++;
		chain[*nchain].dport = t->ports[2 * bl + 1];
		chain[*nchain].cable = (uint8_t)(bl - g->first);
		(*nchain)++;
		n++;
	}
	*len = n;
	return first;
}

static int port_guid_cmp(const void *x, const void *y, void *arg)
{
	const struct ibsm_fabric *f = arg;
	const struct ftree_ca *a = x, *b = y;
	uint64_t ga = ibsm_port_at(f, a->port)->guid, gb = ibsm_port_at(f, b->port)->guid;
	return ga < gb ? -1 : ga > gb;
}

/* The routing order and the main paths, built one destination after the other: every main
 * path moves the counters the next one reads. */
struct order_build {
	const struct ibsm_fabric *f;
	const struct ibsm_scope *sc;
	const struct ftree_topo *t;
	uint32_t stride;
	struct dest *dests;   /* [ncas + nscope] */
	uint32_t nd, seq;
	struct chain_ent *chain;
	uint32_t nc;
	struct counters k;
};

static int order_build_init(struct order_build *b, const struct ibsm_fabric *f,
			    const struct ibsm_scope *sc, const struct ftree_topo *t,
			    uint32_t stride, struct ftree_order *order)
{
	uint32_t nslots = t->nleaves * t->max_cn_per_leaf;
	size_t chain_cap = ((size_t)nslots + t->ncas) * (t->max_rank + 1) + 1;
	*b = (struct order_build){ .f = f, .sc = sc, .t = t, .stride = stride };
	b->dests = malloc(((size_t)t->ncas + t->nscope + 1) * sizeof(*b->dests));
	b->chain = malloc(chain_cap * sizeof(*b->chain));
	b->k.grp = calloc(t->ngroups + 1, sizeof(uint32_t));
	b->k.link = calloc((size_t)t->nlinks + 1, sizeof(uint32_t));
	b->k.thr = calloc(t->S + 1, sizeof(uint32_t));
	memset(order, 0, sizeof(*order));
	order->port = malloc(((size_t)nslots + 1) * sizeof(*order->port));
	order->per_leaf = t->max_cn_per_leaf;
	int ok = b->dests && b->chain && b->k.grp && b->k.link && b->k.thr && order->port;
	return ok ? 0 : -ENOMEM;
}

static void order_build_free(struct order_build *b)
{
	free(b->dests);
	free(b->chain);
	free(b->k.grp);
	free(b->k.link);
	free(b->k.thr);
}

/* Makes CA ca's main path (moving the counters) and, if the scope routes to it, its
 * destination. */
static void add_ca(struct order_build *b, const struct ftree_ca *ca)
{
	uint8_t len;
	uint32_t first = make_chain(b->t, &b->k, ca->sw, b->chain, &b->nc, &len);
	uint16_t lid = dest_lid(b->f, b->sc, b->stride, ca->port);
	if (lid)
		b->dests[b->nd++] = (struct dest){ .t = ca->sw, .chain = first, .seq = b->seq,
						   .lid = lid, .exit = ca->exit, .clen = len,
						   .io = ca->io };
	b->seq++;
}

/* Compute nodes in CA order (leaves in index order, a leaf's by port), each leaf padded with
 * dummies (main paths of nobody) up to the fullest leaf. */
static void add_compute_nodes(struct order_build *b, struct ftree_order *order)
{
	const struct ftree_topo *t = b->t;
	for (uint32_t i = 0; i < t->nleaves; i++) {
		uint32_t s = t->leaves[i];
		const struct ftree_sw *x = &t->sw[s];
		uint32_t done = 0;
		for (uint32_t c = x->ca0; c < x->ca0 + x->nca; c++) {
			if (!t->cas[c].cn)
				continue;
			add_ca(b, &t->cas[c]);
			order->port[order->n++] = t->cas[c].port;
			done++;
		}
		for (; done < t->max_cn_per_leaf; done++) {
			uint8_t len;
			make_chain(t, &b->k, s, b->chain, &b->nc, &len);
			order->port[order->n++] = IBSM_NONE;
			b->seq++;
		}
	}
}

/* The other CAs by port GUID: main paths too, after the compute nodes. 0 or -ENOMEM. */
static int add_other_cas(struct order_build *b)
{
	const struct ftree_topo *t = b->t;
	struct ftree_ca *others = malloc(((size_t)t->ncas + 1) * sizeof(*others));
	uint32_t no = 0;
	if (!others)
		return -ENOMEM;
	for (uint32_t c = 0; c < t->ncas; c++)
		if (!t->cas[c].cn)
			others[no++] = t->cas[c];
	qsort_r(others, no, sizeof(*others), port_guid_cmp, (void *)b->f);
	for (uint32_t i = 0; i < no; i++)
		add_ca(b, &others[i]);
	free(others);
	return 0;
}

/* The switches' own LIDs, in rank order; they have no main path. */
static void add_switches(struct order_build *b, struct ftree_stats *st)
{
	const struct ftree_topo *t = b->t;
	for (uint32_t i = 0; i < t->nscope; i++) {
		uint32_t s = t->by_rank[i];
		uint16_t lid = dest_lid(b->f, b->sc, b->stride, ibsm_switch_node(b->f, s)->port0);
		if (lid) {
			b->dests[b->nd++] = (struct dest){ .t = s, .chain = UINT32_MAX,
							   .seq = b->seq, .lid = lid, .is_sw = 1 };
			st->sw_dests++;
		}
		b->seq++;
	}
}

/* Fills the columns of every destination of b on worker threads, adding up their counts in
 * st. Returns 0, or < 0 with out->why set. */
static int fill_columns(const struct ibsm_core *core, const struct order_build *b,
			const struct ftree_opts *o, struct ibsm_routes *out,
			struct ftree_stats *st)
{
	struct plan pl = { .f = b->f, .t = b->t, .dests = b->dests, .ndests = b->nd,
			   .chain = b->chain, .lft = out->lft, .stride = out->stride,
			   .max_rev = o->max_reverse_hops };
	atomic_init(&pl.next_block, 0);
	atomic_init(&pl.stop, 0);
	unsigned nthreads = engine_thread_count(core, "ftree_threads",
						(uint64_t)b->nd * b->t->nscope, COLUMN_THREADS_WORK,
						MAX_THREADS);
	uint32_t nblocks = (b->nd + BLOCK - 1) / BLOCK;
	if (nthreads > nblocks)
		nthreads = nblocks ? nblocks : 1;
	struct worker *workers = engine_workers_alloc(nthreads, sizeof(*workers));
	int rc = 0;
	if (!workers)
		return engine_fail(out, -ENOMEM, "out of memory");
	for (unsigned i = 0; i < nthreads && rc == 0; i++)
		if (worker_init(&workers[i], &pl) < 0)
			rc = engine_fail(out, -ENOMEM, "out of memory for worker scratch");
	if (rc == 0) {
		workers[0].core = core;
		st->threads = engine_run_workers(worker_main, workers, sizeof(*workers), nthreads);
		if (atomic_load(&pl.stop))
			rc = engine_fail(out, -ECANCELED, "cancelled");
	}
	for (unsigned i = 0; i < nthreads; i++) {
		st->entries += workers[i].entries;
		st->non_updown += workers[i].non_updown;
		st->reverse += workers[i].reverse;
		st->unrouted_leaf += workers[i].unrouted_leaf;
		st->mgmt_only += workers[i].mgmt_only;
		worker_free(&workers[i]);
	}
	free(workers);
	return rc;
}

int ftree_route_all(const struct ibsm_core *core, const struct ibsm_fabric *f,
		    const struct ibsm_scope *sc, const struct ftree_topo *t,
		    const struct ftree_opts *o, struct ibsm_routes *out,
		    struct ftree_order *order, struct ftree_stats *st)
{
	struct order_build b;
	int rc = order_build_init(&b, f, sc, t, out->stride, order);
	if (rc == 0) {
		add_compute_nodes(&b, order);
		rc = add_other_cas(&b);
	}
	if (rc < 0) {
		rc = engine_fail(out, rc, "out of memory");
	} else {
		st->ca_dests = b.nd;
		add_switches(&b, st);
		rc = fill_columns(core, &b, o, out, st);
	}
	order_build_free(&b);
	if (rc < 0) {
		free(order->port);
		memset(order, 0, sizeof(*order));
	}
	return rc;
}
