/* SPDX-License-Identifier: BSD-2-Clause */
/* mhc_fill.c - the LFT fill loop shared by the min-hop engines (see mhc.h): destinations in
 * OpenSM's order, min-hop candidate ports cached per (row switch, destination switch) and
 * optionally narrowed by the engine (dor keeps one dimension), per-row balance counters,
 * LMC-aware choice, rows spread over worker threads.
 *
 * Cost model: the hop matrix is per switch pair (core->switch_hops), candidate ports are
 * computed once per (row switch, destination switch) and shared, with their balance hint, by
 * the destination switches reached by the same links, and every switch row is filled on its
 * own (its balance counters are its own), so rows run on worker threads and the tables do
 * not depend on the thread count. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>
#include "engine_dests.h"
#include "engine_glue.h"
#include "mhc.h"
#include "mhc_memo.h"
#include "switch_links.h"

#define MAX_THREADS 64
/* 16 bytes the compiler works on at once (GCC's and Clang's vector extension: SSE2 on x86-64) */
typedef uint8_t v16u8 __attribute__((vector_size(16)));
#define FILL_THREADS_WORK 1000000 /* (row, destination) pairs worth a second thread */
#define CANCEL_CHECK_ROWS 16

/* Read-only plan shared by the workers, plus the row dispatcher. */
struct plan {
	const struct ibsm_fabric *f;
	const struct ibsm_scope *scope;
	const uint8_t *hops;          /* [S * S] */
	uint32_t S;
	const struct engine_dest *dests;
	uint32_t ndests;
	uint8_t max_end;
	const uint32_t *rows;         /* switch ids in scope */
	uint32_t nrows;
	const uint8_t *exit_ignored;  /* [n_ports] or NULL */
	const uint8_t *weights;       /* [n_ports] or NULL (every link 1) */
	const uint8_t *search_rank;   /* [n_ports] or NULL (ports searched 1 to N) */
	uint8_t *lft;
	uint32_t stride;
	uint32_t max_nadj;
	mhc_narrow_fn narrow;         /* NULL: every min-hop port */
	const void *narrow_ctx;
	int port_shifting;            /* OpenSM's port_shifting (mhc_order.c) */
	uint64_t scatter_seed;        /* OpenSM's scatter_ports: 0 off */
	const struct mhc_memo *memo;  /* the last fill, when reuse is set */
	const uint8_t *memo_rows;     /* its rows: the memo's copy or the core's (last_rows) */
	const uint8_t *reuse;         /* [S] MHC_REUSE_* bits: what of the row is the memo's */
	uint64_t *row_routed, *row_unreachable; /* [S] each row's counts (for the next memo) */
	atomic_uint rows_reused, rows_part;
	atomic_uint next_row;
	atomic_int stop;
};

struct link {
	uint32_t peer_sw;
	uint8_t port;
	uint8_t weight;               /* hop_weights_file's (1 without) */
};

struct worker {
	struct plan *pl;
	const struct ibsm_core *core; /* set for the calling thread only: it polls cancelled() */
	uint64_t routed, unreachable;
	/* per-row scratch */
	uint32_t ca_count[256], sw_count[256];
	uint8_t exit_ignored[256];
	uint32_t remote_node[256];    /* node at the far end of each port, or IBSM_NONE */
	uint64_t remote_sys[256];     /* its system image GUID (node GUID if it has none) */
	struct link *links;           /* usable links of the row switch, by port */
	uint32_t nlinks;
	uint32_t row;                 /* the row switch being filled */
	uint64_t rng;                 /* scatter_ports: the row's generator, seeded per row */
	uint64_t *mask;               /* [S]: bit i = links[i] is a min-hop way to switch t */
	uint8_t *acc;                 /* [S]: eight links' bits of mask, while it is made */
	int have_mask;                /* mask is valid (at most 64 links) */
	/* Candidate sets of the row: destination switches whose min-hop ports are the same links
	 * share one (a leaf's remote leaves all go up by the same ports), so its balance hint
	 * follows every LID sent by them, not each switch's alone. */
	uint32_t *cand_set;           /* [S]: destination switch -> set, UINT32_MAX = not computed */
	uint32_t nsets;
	uint32_t *set_off;            /* [S]: offset in pool */
	uint8_t *set_n;               /* [S] */
	/* Per set and counter (CA, switch): every candidate's count is >= least and those before
	 * position hint are > least (counts only grow, whoever made them grow). */
	uint32_t *least[2];           /* [S] */
	uint8_t *hint[2];             /* [S] */
	struct set_slot *slots;       /* mask -> set, open addressing, valid when stamp matches */
	uint32_t slot_mask, stamp;
	uint8_t *pool;
	size_t pool_used;
} ENGINE_WORKER_ALIGNED;

struct set_slot {
	uint64_t mask;
	uint32_t set, stamp;
};

static int link_cmp(const void *x, const void *y)
{
	const struct link *a = x, *b = y;
	return (int)a->port - (int)b->port;
}

/* The set of the row's links in mask, if this row has made it already; else a new set's slot
 * is claimed for it (*found 0). */
static uint32_t *set_of_mask(struct worker *w, uint64_t mask, int *found)
{
	uint64_t h = mask * 0x9E3779B97F4A7C15ull;
	for (uint32_t i = (uint32_t)(h >> 40) & w->slot_mask;; i = (i + 1) & w->slot_mask) {
		struct set_slot *sl = &w->slots[i];
		if (sl->stamp != w->stamp) {
			sl->stamp = w->stamp;
			sl->mask = mask;
			*found = 0;
			return &sl->set;
		}
		if (sl->mask == mask) {
			*found = 1;
			return &sl->set;
		}
	}
}

/* Min-hop exit ports (ascending) from the row switch toward switch t, h hops away; *set is the
 * candidate set they are. */
static const uint8_t *candidates(struct worker *w, uint32_t t, uint8_t h, uint8_t *n, uint32_t *set)
{
	const struct plan *pl = w->pl;
	uint32_t x = w->cand_set[t];
	if (x != UINT32_MAX) {
		*set = x;
		*n = w->set_n[x];
		return w->pool + w->set_off[x];
	}
	/* with the links as a mask and no narrowing by destination, the mask is the set */
	uint32_t *slot = NULL;
	if (w->have_mask && !pl->narrow) {
		int found;
		slot = set_of_mask(w, w->mask[t], &found);
		if (found) {
			w->cand_set[t] = *set = *slot;
			*n = w->set_n[*slot];
			return w->pool + w->set_off[*slot];
		}
	}
	size_t off = w->pool_used;
	uint8_t cnt = 0;
	if (w->have_mask) {
		for (uint64_t m = w->mask[t]; m; m &= m - 1)
			w->pool[off + cnt++] = w->links[__builtin_ctzll(m)].port;
	} else {
		for (uint32_t i = 0; i < w->nlinks; i++) {
			const struct link *l = &w->links[i];
			if ((unsigned)pl->hops[(size_t)l->peer_sw * pl->S + t] + l->weight == h)
				w->pool[off + cnt++] = l->port;
		}
	}
	if (pl->search_rank && cnt > 1) { /* port_search_ordering_file: its order, not 1 to N */
		const uint8_t *rank = pl->search_rank + ibsm_switch_node(pl->f, w->row)->port0;
		uint8_t *c = w->pool + off;
		for (unsigned i = 1; i < cnt; i++)
			for (unsigned j = i; j > 0 && rank[c[j]] < rank[c[j - 1]]; j--) {
				uint8_t x = c[j];
				c[j] = c[j - 1];
				c[j - 1] = x;
			}
	}
	if (pl->narrow && cnt > 1)
		cnt = (uint8_t)pl->narrow(pl->narrow_ctx, pl->f, w->row, t, w->pool + off, cnt);
	w->pool_used += cnt;
	x = w->nsets++;
	w->set_off[x] = (uint32_t)off;
	w->set_n[x] = cnt;
	for (int i = 0; i < 2; i++) {
		w->least[i][x] = 0;
		w->hint[i][x] = 0;
	}
	if (slot)
		*slot = x;
	w->cand_set[t] = *set = x;
	*n = cnt;
	return w->pool + off;
}

/* LMC-aware choice for offset k of d: prefer a port whose far side is a system image, then a
 * node, not used by the earlier LIDs of d on this switch; then the fewest LIDs counted; then
 * the fewest earlier LIDs of d toward that node; then the lowest port. All four folded into
 * one integer key per candidate, least key wins. */
static uint8_t choose_lmc(const struct worker *w, const uint8_t *row, const struct engine_dest *d,
			  unsigned k, const uint8_t *c, uint8_t n, const uint32_t *count)
{
	uint32_t used[128];
	uint64_t used_sys[128];
	unsigned nused = 0;
	for (unsigned j = d->first; j < k; j++) {
		uint8_t q = row[d->base + j];
		if (q != IBSM_NO_PORT && q != 0 && w->remote_node[q] != IBSM_NONE) {
			used[nused] = w->remote_node[q];
			used_sys[nused++] = w->remote_sys[q];
		}
	}
	uint64_t best = UINT64_MAX;
	if (nused == 1) { /* LMC 1, the common case: no inner loop */
		for (unsigned i = 0; i < n; i++) {
			uint64_t same_node = w->remote_node[c[i]] == used[0];
			uint64_t cls = same_node ? 2 : w->remote_sys[c[i]] == used_sys[0];
			uint64_t cnt = count[c[i]];
			if (cnt > 0xFFFFFFFFFull)
				cnt = 0xFFFFFFFFFull;
			uint64_t key = cls << 60 | cnt << 24 | same_node << 8 | i;
			best = key < best ? key : best;
		}
		return c[best & 0xFF];
	}
	for (unsigned i = 0; i < n; i++) {
		uint32_t rn = w->remote_node[c[i]];
		uint64_t sys = w->remote_sys[c[i]];
		uint64_t cls = 0, fwd = 0;
		for (unsigned j = 0; j < nused; j++) {
			unsigned same_node = used[j] == rn, same_sys = used_sys[j] == sys;
			fwd += same_node;
			cls |= same_sys | (uint64_t)same_node << 1;
		}
		cls = cls >= 2 ? 2 : cls;
		uint64_t cnt = count[c[i]];
		if (cnt > 0xFFFFFFFFFull)
			cnt = 0xFFFFFFFFFull;
		uint64_t key = cls << 60 | cnt << 24 | fwd << 8 | i;
		best = key < best ? key : best;
	}
	return c[best & 0xFF];
}

/* Index in c[0 .. n) of the lowest port with the least count. Amortised O(1): the first
 * candidate at or after the hint that still has the known least count is the answer;
 * only when none has it is the whole set scanned again. */
static unsigned least_loaded(struct worker *w, const struct engine_dest *d, uint32_t set,
			     const uint8_t *c, uint8_t n, const uint32_t *count)
{
	uint32_t *least = &w->least[d->is_ca][set];
	uint8_t *hint = &w->hint[d->is_ca][set];
	unsigned j = *hint;
	while (j < n && count[c[j]] != *least)
		j++;
	if (j == n) {
		uint32_t best = UINT32_MAX;
		for (unsigned i = 0; i < n; i++) {
			uint32_t v = count[c[i]];
			if (v < best) {
				best = v;
				j = i;
			}
		}
		*least = best;
	}
	*hint = (uint8_t)j;
	return j;
}

/* The row switch's ports: balance counters zeroed, what is at their far end, whether routes
 * leaving by them count. */
static void row_ports(struct worker *w, uint32_t s)
{
	const struct plan *pl = w->pl;
	const struct ibsm_fabric *f = pl->f;
	const struct ibsm_node *node = ibsm_switch_node(f, s);
	memset(w->ca_count, 0, sizeof(w->ca_count));
	memset(w->sw_count, 0, sizeof(w->sw_count));
	memset(w->exit_ignored, 0, sizeof(w->exit_ignored));
	for (unsigned p = 0; p < 256; p++)
		w->remote_node[p] = IBSM_NONE;
	for (unsigned p = 1; p <= node->nports; p++) {
		uint32_t id = node->port0 + p, peer = ibsm_port_at(f, id)->peer;
		if (peer != IBSM_NONE) {
			const struct ibsm_node *rn = ibsm_node_at(f, ibsm_port_at(f, peer)->node);
			w->remote_node[p] = ibsm_port_at(f, peer)->node;
			w->remote_sys[p] = rn->sysimg_guid ? rn->sysimg_guid : rn->guid;
		}
		if (pl->exit_ignored)
			w->exit_ignored[p] = pl->exit_ignored[id];
	}
}

/* The row switch's usable links to other switches, by port. */
static void row_links(struct worker *w, uint32_t s)
{
	const struct plan *pl = w->pl;
	const struct ibsm_fabric *f = pl->f;
	const struct ibsm_switch *sw = ibsm_switch_at(f, s);
	w->nlinks = 0;
	for (uint32_t a = sw->adj0; a < sw->adj0 + sw->nadj && a < f->n_adj; a++) {
		const struct ibsm_adj *adj = ibsm_adj_at(f, a);
		if (adj->peer_sw >= pl->S || !engine_switch_link(f, pl->scope, s, adj))
			continue;
		w->links[w->nlinks].peer_sw = adj->peer_sw;
		w->links[w->nlinks].port = adj->port;
		w->links[w->nlinks].weight = pl->weights ?
			pl->weights[ibsm_switch_node(f, s)->port0 + adj->port] : 1;
		w->nlinks++;
	}
	qsort(w->links, w->nlinks, sizeof(*w->links), link_cmp);
}

/* Forgets the previous row's candidates; with at most 64 links, the candidate masks for all
 * destination switches at once: one sequential pass over each neighbour's hop row instead of
 * a random probe per (neighbour, switch). */
static void row_candidates_reset(struct worker *w, const uint8_t *hrow)
{
	const struct plan *pl = w->pl;
	memset(w->cand_set, 0xFF, (size_t)pl->S * sizeof(*w->cand_set));
	w->nsets = 0;
	if (++w->stamp == 0) { /* every slot's stamp is stale again: start over */
		memset(w->slots, 0, ((size_t)w->slot_mask + 1) * sizeof(*w->slots));
		w->stamp = 1;
	}
	w->pool_used = 0;
	w->have_mask = w->nlinks <= 64;
	if (!w->have_mask)
		return;
	memset(w->mask, 0, (size_t)pl->S * sizeof(*w->mask));
	/* eight links at a time as bits of a byte per switch, 16 switches a vector operation,
	 * widened into the masks once per eight links */
	uint8_t *acc = w->acc;
	for (uint32_t g = 0; g < w->nlinks; g += 8) {
		memset(acc, 0, pl->S);
		for (uint32_t i = g; i < w->nlinks && i < g + 8; i++) {
			const uint8_t *hn = pl->hops + (size_t)w->links[i].peer_sw * pl->S;
			unsigned wt = w->links[i].weight;
			if (wt > 254)
				continue; /* no hop count (at most 254) is reached over it */
			/* hn[t] + wt == hrow[t] for a reachable t (hop counts at most 254): hn[t] is at
			 * most 254 - wt (so neither 0xFF nor a sum that wraps) */
			uint8_t lim = (uint8_t)(254 - wt), w8 = (uint8_t)wt, bit = (uint8_t)(1u << (i - g));
			uint32_t t = 0;
			for (; t + sizeof(v16u8) <= pl->S; t += sizeof(v16u8)) {
				v16u8 h, r, a;
				memcpy(&h, hn + t, sizeof(h));
				memcpy(&r, hrow + t, sizeof(r));
				memcpy(&a, acc + t, sizeof(a));
				a |= (v16u8)((h <= lim) & (h + w8 == r)) & bit;
				memcpy(acc + t, &a, sizeof(a));
			}
			for (; t < pl->S; t++)
				acc[t] |= hn[t] <= lim && (uint8_t)(hn[t] + w8) == hrow[t] ? bit : 0;
		}
		for (uint32_t t = 0; t < pl->S; t++)
			w->mask[t] |= (uint64_t)acc[t] << g;
	}
}

/* scatter_ports: among the least loaded candidates, one at random (OpenSM's scatter). */
static uint8_t scatter_pick(struct worker *w, const uint8_t *c, uint8_t n, const uint32_t *count)
{
	uint32_t least = UINT32_MAX;
	uint8_t eq[256], m = 0;
	for (unsigned i = 0; i < n; i++) {
		if (count[c[i]] < least) {
			least = count[c[i]];
			m = 0;
		}
		if (count[c[i]] == least)
			eq[m++] = c[i];
	}
	return eq[mhc_order_rand(&w->rng) % m];
}

/* port_shifting: the least loaded candidate, searched from an offset that is the candidates'
 * mean load (modulo their number), so equal tables do not all start at the lowest port. */
static uint8_t shifted_pick(const uint8_t *c, uint8_t n, const uint32_t *count)
{
	uint64_t total = 0;
	for (unsigned i = 0; i < n; i++)
		total += count[c[i]];
	unsigned start = (unsigned)((total / n) % n), best = start;
	for (unsigned i = 0; i < n; i++) {
		unsigned j = (start + i) % n;
		if (count[c[j]] < count[c[best]])
			best = j;
	}
	return c[best];
}

/* The exit of row switch s (LFT row `row`, hop row `hrow`) for LID offset k of d: its own
 * port if d hangs off s, else a min-hop port chosen for balance; IBSM_NO_PORT when no usable
 * path leads there. */
static inline uint8_t row_exit(struct worker *w, uint32_t s, const uint8_t *row,
			       const uint8_t *hrow, const struct engine_dest *d, unsigned k)
{
	if (d->sw == s)
		return d->exit;
	uint8_t h = hrow[d->sw], n;
	if (h == 0xFF || h == 0)
		return IBSM_NO_PORT;
	uint32_t set;
	const uint8_t *c = candidates(w, d->sw, h, &n, &set);
	if (n == 0)
		return IBSM_NO_PORT;
	const uint32_t *count = d->is_ca ? w->ca_count : w->sw_count;
	if (n == 1)
		return c[0];
	if (k > d->first)
		return choose_lmc(w, row, d, k, c, n, count);
	if (d->scatter && w->pl->scatter_seed)
		return scatter_pick(w, c, n, count);
	if (w->pl->port_shifting)
		return shifted_pick(c, n, count);
	return c[least_loaded(w, d, set, c, n, count)];
}

static void fill_row(struct worker *w, uint32_t s, uint8_t *row, const uint8_t *hrow,
		     const uint8_t *copy_row, uint8_t copy);

/* Fills switch s's row: offset by offset (every destination's first LID before any second),
 * each destination in order. */
static void route_row(struct worker *w, uint32_t s)
{
	struct plan *pl = w->pl;
	uint8_t *row = pl->lft + (size_t)s * pl->stride;
	const uint8_t *hrow = pl->hops + (size_t)s * pl->S;
	uint64_t routed0 = w->routed, unreachable0 = w->unreachable;
	uint8_t copy = pl->reuse ? pl->reuse[s] : 0;
	uint64_t r, u;
	if (copy == MHC_REUSE_ROW) {
		memcpy(row, mhc_memo_row(pl->memo, pl->memo_rows, s, &r, &u), pl->stride);
		w->routed += r;
		w->unreachable += u;
		atomic_fetch_add(&pl->rows_reused, 1);
	} else if (copy) {
		fill_row(w, s, row, hrow, mhc_memo_row(pl->memo, pl->memo_rows, s, &r, &u), copy);
		atomic_fetch_add(&pl->rows_part, 1);
	} else {
		fill_row(w, s, row, hrow, NULL, 0);
	}
	if (pl->row_routed) {
		pl->row_routed[s] = w->routed - routed0;
		pl->row_unreachable[s] = w->unreachable - unreachable0;
	}
}

/* Computes switch s's row (see route_row); the entries of the destination classes in copy
 * (MHC_REUSE_CA, MHC_REUSE_SW) are taken from copy_row, the last fill's row. */
static void fill_row(struct worker *w, uint32_t s, uint8_t *row, const uint8_t *hrow,
		     const uint8_t *copy_row, uint8_t copy)
{
	const struct plan *pl = w->pl;
	w->row = s;
	/* one generator per row, from the seed and the switch GUID: the same tables for one
	 * seed whatever the thread count or the order rows are filled in */
	w->rng = pl->scatter_seed ^ (ibsm_switch_node(pl->f, s)->guid * 0x9E3779B97F4A7C15ull);
	row_ports(w, s);
	row_links(w, s);
	row_candidates_reset(w, hrow);
	/* counted in locals: the row's byte stores may alias anything the worker holds */
	uint64_t routed = 0, unreachable = 0;
	const struct engine_dest *dests = pl->dests;
	uint32_t ndests = pl->ndests, max_end = pl->max_end;
	for (unsigned k = 0; k < max_end; k++) {
		for (uint32_t i = 0; i < ndests; i++) {
			const struct engine_dest *d = &dests[i];
			if (k < d->first || k >= d->end)
				continue;
			uint8_t port = copy & (d->is_ca ? MHC_REUSE_CA : MHC_REUSE_SW) ?
				copy_row[d->base + k] : row_exit(w, s, row, hrow, d, k);
			if (port == IBSM_NO_PORT) {
				unreachable++;
				continue;
			}
			row[d->base + k] = port;
			routed++;
			if (!d->ignored && !w->exit_ignored[port])
				(d->is_ca ? w->ca_count : w->sw_count)[port]++;
		}
	}
	w->routed += routed;
	w->unreachable += unreachable;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct plan *pl = w->pl;
	unsigned done = 0;
	for (;;) {
		if (atomic_load_explicit(&pl->stop, memory_order_relaxed))
			break;
		if (w->core && w->core->cancelled && done % CANCEL_CHECK_ROWS == 0 &&
		    w->core->cancelled(w->core)) {
			atomic_store(&pl->stop, 1);
			break;
		}
		unsigned i = atomic_fetch_add(&pl->next_row, 1);
		if (i >= pl->nrows)
			break;
		route_row(w, pl->rows[i]);
		done++;
	}
	return NULL;
}

static int worker_init(struct worker *w, struct plan *pl)
{
	memset(w, 0, sizeof(*w));
	w->pl = pl;
	w->links = malloc(((size_t)pl->max_nadj + 1) * sizeof(*w->links));
	w->mask = malloc((size_t)pl->S * sizeof(*w->mask));
	w->acc = malloc(pl->S ? pl->S : 1);
	w->cand_set = malloc((size_t)pl->S * sizeof(*w->cand_set));
	w->set_off = malloc((size_t)pl->S * sizeof(*w->set_off));
	w->set_n = malloc(pl->S ? pl->S : 1);
	/* at most S sets a row: at least twice as many slots */
	w->slot_mask = 1;
	while (w->slot_mask < 2 * pl->S)
		w->slot_mask <<= 1;
	w->slots = calloc((size_t)w->slot_mask, sizeof(*w->slots));
	w->slot_mask--;
	w->pool = malloc((size_t)pl->S * pl->max_nadj + 1);
	int ok = w->links && w->mask && w->acc && w->cand_set && w->set_off && w->set_n && w->slots &&
		 w->pool;
	for (int i = 0; i < 2; i++) {
		w->least[i] = malloc((size_t)pl->S * sizeof(*w->least[i]));
		w->hint[i] = malloc(pl->S);
		ok = ok && w->least[i] && w->hint[i];
	}
	return ok ? 0 : -ENOMEM;
}

static void worker_free(struct worker *w)
{
	free(w->links);
	free(w->mask);
	free(w->acc);
	free(w->cand_set);
	free(w->set_off);
	free(w->set_n);
	free(w->slots);
	for (int i = 0; i < 2; i++) {
		free(w->least[i]);
		free(w->hint[i]);
	}
	free(w->pool);
}

uint32_t *mhc_scope_rows(const struct ibsm_fabric *f, const struct ibsm_scope *sc, uint32_t *n)
{
	uint32_t S = f->n_switches;
	uint32_t *rows = malloc((S ? S : 1) * sizeof(*rows));
	*n = 0;
	if (!rows)
		return NULL;
	for (uint32_t s = 0; s < S; s++)
		if (ibsm_bit(&sc->switches, s))
			rows[(*n)++] = s;
	return rows;
}

/* Fills the rows of pl on nthreads workers and adds up their counts in st. Returns 0, or
 * -ENOMEM or -ECANCELED with out->why set. */
static int fill_rows(const struct ibsm_core *core, struct plan *pl, unsigned nthreads,
		     struct ibsm_routes *out, struct mhc_fill_stats *st)
{
	struct worker *workers = engine_workers_alloc(nthreads, sizeof(*workers));
	int rc = 0;
	if (!workers)
		return engine_fail(out, -ENOMEM, "out of memory");
	for (unsigned i = 0; i < nthreads && rc == 0; i++)
		if (worker_init(&workers[i], pl) < 0)
			rc = engine_fail(out, -ENOMEM, "out of memory for worker scratch");
	st->threads = nthreads;
	if (rc == 0) {
		workers[0].core = core;
		st->threads = engine_run_workers(worker_main, workers, sizeof(*workers), nthreads);
		if (atomic_load(&pl->stop))
			rc = engine_fail(out, -ECANCELED, "cancelled");
	}
	for (unsigned i = 0; i < nthreads; i++) {
		st->routed += workers[i].routed;
		st->unreachable += workers[i].unreachable;
		worker_free(&workers[i]);
	}
	free(workers);
	return rc;
}

int mhc_fill_routes(const struct ibsm_core *core, const struct ibsm_fabric *f,
		    const struct ibsm_scope *sc, struct ibsm_routes *out,
		    const struct mhc_fill *opt, struct mhc_fill_stats *st)
{
	uint8_t *own_hops = NULL;
	struct engine_dests dests = { 0 };
	uint32_t nrows = 0, S = f->n_switches;
	int rc = 0;

	memset(st, 0, sizeof(*st));
	uint32_t *rows = mhc_scope_rows(f, sc, &nrows);
	if (!rows) {
		rc = engine_fail(out, -ENOMEM, "out of memory");
		goto done;
	}
	rc = engine_dests_build(f, sc, out->stride, opt->dest_ignored, ENGINE_DESTS_OPENSM, &dests);
	if (rc < 0) {
		rc = engine_fail(out, rc, "out of memory");
		goto done;
	}
	if (opt->order && (rc = mhc_order_apply(core, f, opt->order, &dests, out)) < 0)
		goto done;
	if (nrows == 0 || dests.n == 0)
		goto done;
	if (!opt->hops && opt->weights) {
		if ((rc = mhc_weighted_hops(f, sc, opt->weights, &own_hops)) < 0) {
			rc = engine_fail(out, rc, "out of memory");
			goto done;
		}
	} else if (!opt->hops && (rc = engine_switch_hops(core, f, sc, out, &own_hops)) < 0) {
		goto done;
	}

	struct plan pl = {
		.f = f, .scope = sc, .hops = opt->hops ? opt->hops : own_hops, .S = S,
		.dests = dests.v, .ndests = dests.n, .max_end = dests.max_end, .rows = rows,
		.nrows = nrows, .exit_ignored = opt->exit_ignored, .lft = out->lft,
		.stride = out->stride, .narrow = opt->narrow, .narrow_ctx = opt->narrow_ctx,
		.port_shifting = opt->order && opt->order->port_shifting, .weights = opt->weights,
		.search_rank = opt->search_rank,
		.scatter_seed = opt->order ? opt->order->scatter_seed : 0,
	};
	for (uint32_t s = 0; s < S; s++)
		if (ibsm_switch_at(f, s)->nadj > pl.max_nadj)
			pl.max_nadj = ibsm_switch_at(f, s)->nadj;
	atomic_init(&pl.next_row, 0);
	atomic_init(&pl.stop, 0);
	atomic_init(&pl.rows_reused, 0);
	atomic_init(&pl.rows_part, 0);
	/* the last fill's rows whose inputs are unchanged are copied (mhc_memo.c) */
	int memo_ok = opt->memo_owner && !opt->narrow && !opt->exit_ignored && !opt->dest_ignored &&
		      !opt->order && !opt->weights && !opt->search_rank;
	uint8_t *reuse = NULL;
	/* ABI 1.4: the core keeps the rows it programmed (last_rows), so the memo need not */
	int core_rows = IBSM_CORE_HAS(core, struct ibsm_core, last_rows);
	if (memo_ok) {
		const struct mhc_memo *m = opt->memo_owner->memo;
		const uint8_t *memo_rows = mhc_memo_rows(m);
		if (m && !memo_rows && core_rows) {
			uint32_t kept_s = 0, kept_stride = 0;
			memo_rows = core->last_rows(core, &kept_s, &kept_stride);
			if (kept_s != S || kept_stride != out->stride)
				memo_rows = NULL; /* not the last fill's (or none kept): every row filled */
		}
		if (memo_rows)
			reuse = mhc_memo_reuse(m, f, sc, pl.hops, dests.v, dests.n, out->stride);
		pl.memo = m;
		pl.memo_rows = memo_rows;
		pl.reuse = reuse;
		pl.row_routed = calloc(S, sizeof(*pl.row_routed));
		pl.row_unreachable = calloc(S, sizeof(*pl.row_unreachable));
		if (!pl.row_routed || !pl.row_unreachable) {
			free(pl.row_routed);
			free(pl.row_unreachable);
			pl.row_routed = pl.row_unreachable = NULL;
			memo_ok = 0;
		}
	}
	unsigned nthreads = engine_thread_count(core, opt->threads_key, (uint64_t)nrows * dests.n,
						FILL_THREADS_WORK, MAX_THREADS);
	rc = fill_rows(core, &pl, nthreads < nrows ? nthreads : nrows, out, st);
	st->rows_reused = atomic_load(&pl.rows_reused);
	st->rows_part = atomic_load(&pl.rows_part);
	if (memo_ok) {
		/* the memo is this fill now (or none, if it failed or was cancelled) */
		if (rc == 0)
			mhc_memo_save(&opt->memo_owner->memo, f, sc, pl.hops, dests.v, dests.n,
				      core_rows ? NULL : out->lft, out->stride, rows, nrows,
				      pl.row_routed, pl.row_unreachable);
		else
			mhc_memo_free(opt->memo_owner->memo), opt->memo_owner->memo = NULL;
		opt->memo_owner->memo_free = mhc_memo_free;
	}
	free(reuse);
	free(pl.row_routed);
	free(pl.row_unreachable);
done:
	st->rows = nrows;
	st->dests = dests.n;
	free(own_hops);
	engine_dests_free(&dests);
	free(rows);
	return rc;
}

void mhc_fill_log(const struct ibsm_core *core, const struct mhc_fill_stats *st,
		  const char *detail, double seconds)
{
	if (st->unreachable)
		core->log(core, IBSM_LOG_INFO, "%llu (switch, LID) pairs have no path in scope",
			  (unsigned long long)st->unreachable);
	core->log(core, IBSM_LOG_VERBOSE,
		  "%llu LFT entries on %u switches (%u rows as the last fill left them, %u in part) "
		  "to %u end ports%s in %.3f s (%u threads)", (unsigned long long)st->routed,
		  st->rows, st->rows_reused, st->rows_part, st->dests, detail, seconds, st->threads);
}
