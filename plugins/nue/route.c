/* SPDX-License-Identifier: BSD-2-Clause */
/* route.c - nue's route(). The destinations are every routed LID of every end port in scope;
 * each virtual layer gets a dependency graph and an escape tree. A trial routes them all: a
 * first pass as OpenSM's nue weighs links (shortest paths first, the load breaking ties), each
 * destination on the layer whose tree costs least, then balancing passes that take each
 * destination's tree out (its turns and its load) and route it again against the load of all
 * the others, hops and load weighed together. Which turns a layer admits depends on the order
 * the trees were built in and on its escape tree, and the balance that results varies widely
 * with them; so several trials run (on the engine's threads), each with escape trees from other
 * roots, and the tables with the least loaded busiest link are kept (ties: the first trial).
 * The switch LIDs come last, on the kept trial's layers, unless nue_include_switches makes them
 * destinations like the CAs. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine_dests.h"
#include "engine_glue.h"
#include "nue_parts.h"
#include "route.h"

#define CANCEL_EVERY 64
#define BALANCE_HOP_PERCENT 30 /* a hop weighs this share of the mean link load */
#define TURN_BACK_PERCENT 300  /* a turn backward in the layer's order costs this share of a hop */
#define MAX_TRIALS 32
#define LATE_ROOTS 8           /* other escape roots tried when a trial reserves late */
#define TRIAL_BUDGET 200000000ull /* work units (a destination's search ~ C + 8 S) for trials */

struct nue_dest {
	uint32_t sw;              /* destination switch */
	uint16_t lid;
	uint8_t exit;             /* port of sw toward it; 0 for the switch's own LID */
	uint8_t is_ca;
};

/* What every trial reads, and the best tables found so far (under lock). */
struct shared {
	const struct ibsm_core *core;
	const struct ibsm_fabric *f;
	const struct ibsm_scope *sc;
	const struct nue_options *o;
	struct nue_graph g;
	struct nue_dest *d;
	uint32_t nd, nca, nmain;  /* destinations; CA ones (first); routed in the passes */
	uint8_t *dest_sw;         /* [S] */
	uint32_t *central;        /* [ncomp] most central switch */
	uint32_t *members, *member_off; /* switches of each component, in a scrambled order */
	uint32_t nl, trials, next_trial, passes;
	int fallback_only;        /* two trials, the second only if the first failed */
	int layer_helper;         /* one trial at a time on several layers: a helper thread each */
	int optimistic_ok;        /* trial 0 finished without reserving from the start */
	uint32_t phase_end;       /* trials below it run in this phase */
	int stop;                 /* cancelled, or out of memory in a worker */
	pthread_mutex_t lock;
	uint8_t *lft;             /* the kept tables (the core's out->lft) */
	uint32_t stride;
	uint8_t *layer;           /* [nd] the kept layer of each destination */
	uint64_t best_max, best_sq;
	uint32_t best_trial, best_pass;
	int have_best;
	uint32_t best_escaped;
	uint64_t best_escaped_sw, refused;
};

/* One worker's trial state, reused from trial to trial. */
struct trial {
	struct shared *sh;
	struct nue_cdg cdg[NUE_MAX_LAYERS];
	struct nue_escape esc[NUE_MAX_LAYERS];
	struct nue_search srch[NUE_MAX_LAYERS];
	uint32_t *roots;          /* [nl * ncomp] */
	uint64_t *load, *w;       /* [C] CA-pair routes per channel; the search weights */
	uint64_t hop;
	uint8_t *lft;             /* the trial's own tables */
	uint8_t *layer;           /* [nd] */
	uint32_t per_layer[NUE_MAX_LAYERS];
	uint32_t escaped;
	uint64_t escaped_sw, refused, outside;
	struct layer_helper *helper; /* searches the odd layers, or NULL */
	int reserved;             /* the escape trees' turns are reserved (the guaranteed kind) */
	int late;                 /* reserved only after an impasse needed them */
	int failed;               /* an impasse the escape paths could not resolve */
} ENGINE_WORKER_ALIGNED;

static uint32_t mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

/* ---- destinations ----------------------------------------------------------------------- */

/* Every routed LID of every destination end port: CA LIDs first (switch by switch), then the
 * switch LIDs. 0 or -ENOMEM. */
static int dests_build(struct shared *sh)
{
	struct engine_dests ed;
	if (engine_dests_build(sh->f, sh->sc, sh->stride, NULL, ENGINE_DESTS_BY_SWITCH, &ed) < 0)
		return -ENOMEM;
	uint32_t n = 0;
	for (uint32_t i = 0; i < ed.n; i++)
		n += ed.v[i].end - ed.v[i].first;
	sh->d = malloc((n ? n : 1) * sizeof(*sh->d));
	sh->layer = malloc(n ? n : 1);
	sh->dest_sw = calloc(sh->g.S ? sh->g.S : 1, 1);
	if (!sh->d || !sh->layer || !sh->dest_sw) {
		engine_dests_free(&ed);
		return -ENOMEM;
	}
	for (int pass = 1; pass >= 0; pass--)
		for (uint32_t i = 0; i < ed.n; i++) {
			const struct engine_dest *e = &ed.v[i];
			if (e->is_ca != pass || e->sw >= sh->g.S)
				continue;
			for (unsigned k = e->first; k < e->end; k++)
				sh->d[sh->nd++] = (struct nue_dest){ .sw = e->sw,
					.lid = (uint16_t)(e->base + k), .exit = e->exit,
					.is_ca = e->is_ca };
			sh->nca += e->is_ca ? e->end - e->first : 0;
			sh->dest_sw[e->sw] = 1;
		}
	engine_dests_free(&ed);
	memset(sh->layer, 0, n ? n : 1);
	sh->nmain = sh->o->include_switches ? sh->nd : sh->nca;
	return 0;
}

/* ---- one destination on a trial --------------------------------------------------------- */

static int counts_load(const struct shared *sh, const struct nue_dest *d)
{
	return d->is_ca || sh->o->include_switches;
}

static void weigh(struct trial *t, uint32_t ch)
{
	t->w[ch] = t->hop + t->load[ch];
}

static void set_hop(struct trial *t, uint64_t hop)
{
	t->hop = hop ? hop : 1;
	for (uint32_t ch = 0; ch < t->sh->g.C; ch++)
		weigh(t, ch);
	for (uint32_t l = 0; l < t->sh->nl; l++)
		t->srch[l].new_turn_back = t->reserved ? t->hop * TURN_BACK_PERCENT / 100 : 0;
}

/* Writes the tree of s into destination i's column of lft and, when it counts, its load. */
static void commit(struct trial *t, uint8_t *lft, uint32_t i, struct nue_search *s,
		   uint32_t layer)
{
	struct shared *sh = t->sh;
	const struct nue_graph *g = &sh->g;
	const struct nue_dest *d = &sh->d[i];
	int counts = counts_load(sh, d);
	nue_search_subtrees(s);
	for (uint32_t k = 0; k < s->norder; k++) {
		uint32_t v = s->order[k];
		if (g->row[v])
			lft[(size_t)v * sh->stride + d->lid] = k ? g->port[s->next[v]] : d->exit;
		if (k && counts) {
			t->load[s->next[v]] += s->sub[v];
			weigh(t, s->next[v]);
		}
	}
	t->layer[i] = (uint8_t)layer;
	t->per_layer[layer]++;
	t->escaped += s->escaped != 0;
	t->escaped_sw += s->escaped;
	t->refused += s->refused;
}

/* Takes destination i's tree (from its column of the trial's tables) out of its layer and out
 * of the load. */
static void uncommit(struct trial *t, uint32_t i)
{
	struct shared *sh = t->sh;
	const struct nue_dest *d = &sh->d[i];
	struct nue_search *s = &t->srch[0];
	nue_search_read(s, t->lft, sh->stride, sh->f, d->lid, d->sw);
	nue_search_unroute(s, &t->cdg[t->layer[i]]);
	if (counts_load(sh, d)) {
		nue_search_subtrees(s);
		for (uint32_t k = 1; k < s->norder; k++) {
			uint32_t ch = s->next[s->order[k]];
			t->load[ch] -= s->sub[s->order[k]];
			weigh(t, ch);
		}
	}
	t->per_layer[t->layer[i]]--;
}

/* Reserves every layer's escape tree in a trial that has not: its own roots, else up to
 * LATE_ROOTS others, as long as the layer's turns so far let one in whole. 0, or 1 when a
 * layer takes none (the trial cannot go on), or -ENOMEM. */
static int reserve_late(struct trial *t)
{
	struct shared *sh = t->sh;
	const struct nue_graph *g = &sh->g;
	uint32_t nc = g->ncomp;
	for (uint32_t l = 0; l < sh->nl; l++) {
		int rc = 1;
		for (uint32_t k = 0; rc == 1 && k <= LATE_ROOTS; k++) {
			if (k)
				for (uint32_t c = 0; c < nc; c++) {
					uint32_t n = sh->member_off[c + 1] - sh->member_off[c];
					t->roots[l * nc + c] = sh->members[sh->member_off[c] +
						mix32(0x5bd1e995u + k * 64 + l) % n];
				}
			nue_escape_build(g, &t->esc[l], t->roots + l * nc, k * 64 + l, sh->dest_sw);
			rc = nue_escape_reserve(g, &t->esc[l], &t->cdg[l]);
		}
		if (rc)
			return rc;
	}
	t->reserved = 1;
	t->late = 1;
	set_hop(t, t->hop); /* the reserved kind's turn penalty */
	return 0;
}

/* ---- a helper thread for the layers of one trial -----------------------------------------
 * When a single trial runs (a large fabric) on several layers, a second thread searches the
 * odd layers of each destination while the trial's own thread searches the even ones: the
 * layers share nothing but the graph and the weights, which neither writes, so the tables do
 * not depend on it. */
struct layer_helper {
	pthread_t tid;
	pthread_mutex_t lock;
	pthread_cond_t cv;
	struct trial *t;
	const uint64_t *w;
	uint32_t sw, posted, done;
	int quit;
};

static void search_layers(struct trial *t, const uint64_t *w, uint32_t sw, uint32_t first,
			  uint32_t step)
{
	for (uint32_t l = first; l < t->sh->nl; l += step)
		nue_search_run(&t->srch[l], &t->cdg[l], &t->esc[l], w, sw);
}

static void *helper_main(void *arg)
{
	struct layer_helper *h = arg;
	pthread_mutex_lock(&h->lock);
	for (;;) {
		while (h->posted == h->done && !h->quit)
			pthread_cond_wait(&h->cv, &h->lock);
		if (h->quit)
			break;
		pthread_mutex_unlock(&h->lock);
		search_layers(h->t, h->w, h->sw, 1, 2);
		pthread_mutex_lock(&h->lock);
		h->done = h->posted;
		pthread_cond_broadcast(&h->cv);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

/* Starts t's helper; without a thread the trial searches every layer itself. */
static void helper_start(struct trial *t)
{
	struct layer_helper *h = calloc(1, sizeof(*h));
	if (!h)
		return;
	h->t = t;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->cv, NULL);
	if (pthread_create(&h->tid, NULL, helper_main, h) != 0) {
		pthread_mutex_destroy(&h->lock);
		pthread_cond_destroy(&h->cv);
		free(h);
		return;
	}
	t->helper = h;
}

static void helper_stop(struct trial *t)
{
	struct layer_helper *h = t->helper;
	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	h->quit = 1;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->lock);
	pthread_join(h->tid, NULL);
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->cv);
	free(h);
	t->helper = NULL;
}

/* Searches destination switch sw on every layer, with the helper when t has one. */
static void search_all_layers(struct trial *t, const uint64_t *w, uint32_t sw)
{
	struct layer_helper *h = t->helper;
	if (!h) {
		search_layers(t, w, sw, 0, 1);
		return;
	}
	pthread_mutex_lock(&h->lock);
	h->w = w;
	h->sw = sw;
	h->posted++;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->lock);
	search_layers(t, w, sw, 0, 2);
	pthread_mutex_lock(&h->lock);
	while (h->done != h->posted)
		pthread_cond_wait(&h->cv, &h->lock);
	pthread_mutex_unlock(&h->lock);
}

/* Routes destination i on every layer, keeps the cheapest tree (ties: the layer with fewer
 * destinations, then the lower one) and takes the others out again. */
static void route_dest(struct trial *t, uint8_t *lft, uint32_t i)
{
	struct shared *sh = t->sh;
	uint32_t best = NUE_NONE, sw = sh->d[i].sw;
	search_all_layers(t, t->w, sw);
	for (uint32_t l = 0; l < sh->nl; l++) {
		const struct nue_search *s = &t->srch[l];
		if (s->failed)
			continue;
		if (best == NUE_NONE || s->cost < t->srch[best].cost ||
		    (s->cost == t->srch[best].cost && t->per_layer[l] < t->per_layer[best]))
			best = l;
	}
	if (best == NUE_NONE && (sh->d[i].is_ca || sh->o->include_switches) && !t->reserved) {
		/* every layer met an impasse its escape paths could not resolve (they are not
		 * reserved yet): reserve them now, if the layers still take them, and route
		 * the destination again; else the trial fails */
		for (uint32_t l = 0; l < sh->nl; l++)
			nue_search_unroute(&t->srch[l], &t->cdg[l]);
		if (reserve_late(t) == 0) {
			route_dest(t, lft, i);
			return;
		}
		t->failed = 1;
	}
	if (best == NUE_NONE) {
		/* a switch LID whose impasse has no way out: layer 0's routes, outside its
		 * dependency graph where they were refused */
		best = 0;
		t->outside += t->srch[0].failed;
	}
	for (uint32_t l = 0; l < sh->nl; l++)
		if (l != best)
			nue_search_unroute(&t->srch[l], &t->cdg[l]);
	commit(t, lft, i, &t->srch[best], best);
}

/* ---- trials ----------------------------------------------------------------------------- */

static int stopping(struct shared *sh, uint32_t i)
{
	if (i % CANCEL_EVERY == 0 && sh->core->cancelled && sh->core->cancelled(sh->core))
		__atomic_store_n(&sh->stop, -ECANCELED, __ATOMIC_RELAXED);
	return __atomic_load_n(&sh->stop, __ATOMIC_RELAXED) != 0;
}

/* The destinations [from, to) routed for the first time (first) or again. 0, 1 stopped, or
 * 2 when the trial failed (an impasse without a way out). */
static int pass(struct trial *t, uint8_t *lft, uint32_t from, uint32_t to, int first)
{
	t->escaped = 0;
	t->escaped_sw = 0;
	for (uint32_t i = from; i < to; i++) {
		if (stopping(t->sh, i))
			return 1;
		if (!first)
			uncommit(t, i);
		route_dest(t, lft, i);
		if (t->failed)
			return 2;
	}
	return 0;
}

/* The escape roots of trial k, layer l: the most central switches for trials 0 and 1, else a
 * scrambled pick in each component (the same for trials 2j and 2j + 1). */
static void trial_roots(struct trial *t, uint32_t k)
{
	const struct shared *sh = t->sh;
	uint32_t nc = sh->g.ncomp;
	for (uint32_t l = 0; l < sh->nl; l++)
		for (uint32_t c = 0; c < nc; c++) {
			uint32_t n = sh->member_off[c + 1] - sh->member_off[c];
			t->roots[l * nc + c] = k / 2 == 0 ? sh->central[c] :
				sh->members[sh->member_off[c] + mix32(k / 2 * 64 + l) % n];
		}
}

/* Empties the layers and builds the escape trees of trial k. Trial 0 routes without reserving
 * their turns (the better routes, when no impasse forces the trees in, see reserve_late); if it
 * could finish so, odd trials reserve and even ones do not; else every later trial reserves. */
static int trial_reset(struct trial *t, uint32_t k)
{
	struct shared *sh = t->sh;
	const struct nue_graph *g = &sh->g;
	trial_roots(t, k);
	t->reserved = k && (!sh->optimistic_ok || (k & 1));
	t->late = 0;
	t->failed = 0;
	t->outside = 0;
	for (uint32_t l = 0; l < sh->nl; l++) {
		struct nue_cdg *d = &t->cdg[l];
		nue_cdg_reset(d);
		nue_escape_build(g, &t->esc[l], t->roots + l * g->ncomp, k * 64 + l, sh->dest_sw);
		if (t->reserved && nue_escape_reserve(g, &t->esc[l], d))
			return -EPROTO; /* a tree's up/down turns cannot close a cycle */
		t->per_layer[l] = 0;
	}
	memset(t->load, 0, (g->C ? g->C : 1) * sizeof(*t->load));
	return 0;
}

/* The busiest link's load and the sum of squares (the tie-break). */
static void score(const struct trial *t, uint64_t *mx, uint64_t *sq)
{
	*mx = *sq = 0;
	for (uint32_t ch = 0; ch < t->sh->g.C; ch++) {
		uint64_t x = t->load[ch];
		*mx = x > *mx ? x : *mx;
		*sq += x * x / 16;
	}
}

/* Keeps the trial's tables if they beat the kept ones (the order is total, so the result
 * never depends on which thread finished first). Returns the trial's busiest link load. */
static uint64_t offer(struct trial *t, uint32_t k, uint32_t p)
{
	struct shared *sh = t->sh;
	uint64_t mx, sq;
	score(t, &mx, &sq);
	pthread_mutex_lock(&sh->lock);
	int better = !sh->have_best || mx < sh->best_max ||
		     (mx == sh->best_max && (sq < sh->best_sq || (sq == sh->best_sq &&
		      (k < sh->best_trial || (k == sh->best_trial && p < sh->best_pass)))));
	if (better) {
		for (uint32_t s = 0; s < sh->g.S; s++)
			if (sh->g.row[s])
				memcpy(sh->lft + (size_t)s * sh->stride,
				       t->lft + (size_t)s * sh->stride, sh->stride);
		memcpy(sh->layer, t->layer, sh->nd ? sh->nd : 1);
		sh->best_max = mx;
		sh->best_sq = sq;
		sh->best_trial = k;
		sh->best_pass = p;
		sh->have_best = 1;
		sh->best_escaped = t->escaped;
		sh->best_escaped_sw = t->escaped_sw;
	}
	sh->refused += t->refused;
	t->refused = 0;
	pthread_mutex_unlock(&sh->lock);
	return mx;
}

/* Trial k: the first pass, then the balancing passes, each offered. */
static int run_trial(struct trial *t, uint32_t k)
{
	struct shared *sh = t->sh;
	int rc = trial_reset(t, k);
	if (rc < 0)
		return rc;
	uint64_t n = sh->nca ? sh->nca : 1;
	set_hop(t, n * n); /* OpenSM's nue: P^2 per hop, shortest paths first */
	if (pass(t, t->lft, 0, sh->nmain, 1))
		return 0;
	uint64_t best = offer(t, k, 0);
	for (unsigned p = 1; p <= sh->passes; p++) {
		uint64_t sum = 0;
		for (uint32_t ch = 0; ch < sh->g.C; ch++)
			sum += t->load[ch];
		set_hop(t, (sh->g.C ? sum / sh->g.C : 0) * BALANCE_HOP_PERCENT / 100);
		if (pass(t, t->lft, 0, sh->nmain, 0))
			return 0;
		uint64_t mx = offer(t, k, p);
		if (mx >= best)
			break; /* no better than the pass before: the balance has settled */
		best = mx;
	}
	return 0;
}

static void trial_free(struct trial *t)
{
	for (uint32_t l = 0; l < NUE_MAX_LAYERS; l++) {
		nue_cdg_free(&t->cdg[l]);
		nue_escape_free(&t->esc[l]);
		nue_search_free(&t->srch[l]);
	}
	free(t->roots);
	free(t->load);
	free(t->w);
	free(t->lft);
	free(t->layer);
}

/* A trial's state; with tables of its own (own_lft: the workers' trials; the one that routes
 * the switch LIDs writes into the kept tables), as the core gives them: no entry anywhere. */
static int trial_init(struct trial *t, struct shared *sh, int own_lft)
{
	const struct nue_graph *g = &sh->g;
	size_t C = g->C ? g->C : 1, rows = (size_t)g->S * sh->stride;
	t->sh = sh;
	t->roots = malloc((size_t)sh->nl * (g->ncomp ? g->ncomp : 1) * sizeof(*t->roots));
	t->load = calloc(C, sizeof(*t->load));
	t->w = malloc(C * sizeof(*t->w));
	t->lft = own_lft ? malloc(rows ? rows : 1) : NULL;
	t->layer = calloc(sh->nd ? sh->nd : 1, 1);
	if (!t->roots || !t->load || !t->w || (own_lft && !t->lft) || !t->layer)
		return -ENOMEM;
	if (own_lft)
		memset(t->lft, IBSM_NO_PORT, rows);
	for (uint32_t l = 0; l < sh->nl; l++)
		if (nue_cdg_init(&t->cdg[l], g) < 0 || nue_search_init(&t->srch[l], g) < 0 ||
		    nue_escape_init(&t->esc[l], g) < 0)
			return -ENOMEM;
	return 0;
}

struct worker {
	struct shared *sh;
	int rc;
} ENGINE_WORKER_ALIGNED;

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	struct trial t;
	memset(&t, 0, sizeof(t));
	w->rc = trial_init(&t, sh, 1);
	if (w->rc == 0 && sh->layer_helper)
		helper_start(&t);
	while (w->rc == 0 && !__atomic_load_n(&sh->stop, __ATOMIC_RELAXED)) {
		uint32_t k = __atomic_fetch_add(&sh->next_trial, 1, __ATOMIC_RELAXED);
		if (k >= sh->phase_end)
			break;
		if (sh->fallback_only && k == 1 && sh->have_best)
			break; /* the reserved trial only when the first one failed */
		w->rc = run_trial(&t, k);
	}
	if (w->rc < 0)
		__atomic_store_n(&sh->stop, w->rc, __ATOMIC_RELAXED);
	helper_stop(&t);
	trial_free(&t);
	return NULL;
}

/* ---- the kept tables, the switch LIDs --------------------------------------------------- */

/* A trial holding the kept tables: trial best_trial's escape trees, and every kept tree's
 * turns added again to fresh layers (never refused: they were acyclic together; refusals are
 * counted in *bad). */
static int restore(struct trial *t, uint32_t *bad)
{
	struct shared *sh = t->sh;
	const struct nue_graph *g = &sh->g;
	int rc = trial_reset(t, sh->best_trial);
	if (rc < 0)
		return rc;
	int late = !t->reserved;
	memcpy(t->layer, sh->layer, sh->nd ? sh->nd : 1);
	struct nue_search *s = &t->srch[0];
	for (uint32_t l = 0; l < sh->nl; l++)
		t->cdg[l].budget = UINT32_MAX; /* these turns went in together before */
	for (uint32_t i = 0; i < sh->nmain; i++) {
		const struct nue_dest *d = &sh->d[i];
		nue_search_read(s, sh->lft, sh->stride, sh->f, d->lid, d->sw);
		for (uint32_t k = 1; k < s->norder; k++) {
			uint32_t a = s->next[s->order[k]], b = s->next[g->head[a]];
			if (b != NUE_NONE && nue_cdg_add(&t->cdg[t->layer[i]], a, b))
				(*bad)++;
		}
		if (counts_load(sh, d)) {
			nue_search_subtrees(s);
			for (uint32_t k = 1; k < s->norder; k++)
				t->load[s->next[s->order[k]]] += s->sub[s->order[k]];
		}
		t->per_layer[t->layer[i]]++;
	}
	for (uint32_t l = 0; l < sh->nl; l++)
		t->cdg[l].budget = NUE_SEARCH_BUDGET;
	/* a trial that routed without reserving: its escape trees now, if the turns let them
	 * (else a switch LID at an impasse gets routes outside the layers) */
	if (late && reserve_late(t) < 0)
		return -ENOMEM;
	return 0;
}

/* The switch LIDs after the kept CA routes, straight into the kept tables. */
static int route_switches(struct trial *t)
{
	struct shared *sh = t->sh;
	uint64_t sum = 0;
	for (uint32_t ch = 0; ch < sh->g.C; ch++)
		sum += t->load[ch];
	set_hop(t, (sh->g.C ? sum / sh->g.C : 0) * BALANCE_HOP_PERCENT / 100);
	for (uint32_t i = sh->nmain; i < sh->nd; i++) {
		if (stopping(sh, i))
			return sh->stop;
		route_dest(t, sh->lft, i);
		sh->layer[i] = t->layer[i];
	}
	return 0;
}

/* ---- set-up ----------------------------------------------------------------------------- */

static void shared_free(struct shared *sh)
{
	nue_graph_free(&sh->g);
	free(sh->d);
	free(sh->layer);
	free(sh->dest_sw);
	free(sh->central);
	free(sh->members);
	free(sh->member_off);
	pthread_mutex_destroy(&sh->lock);
}

/* The layers: nue_max_num_vls (0: all the links have), at most the links' VLs and 15. */
static uint32_t layer_count(const struct shared *sh)
{
	uint32_t n = sh->o->max_vls ? sh->o->max_vls : sh->g.vls;
	if (n > sh->g.vls) {
		sh->core->log(sh->core, IBSM_LOG_INFO,
			      "nue_max_num_vls %u is more than the %u data VLs every switch link "
			      "has; using %u", sh->o->max_vls, sh->g.vls, sh->g.vls);
		n = sh->g.vls;
	}
	if (n > NUE_MAX_LAYERS)
		n = NUE_MAX_LAYERS;
	return n ? n : 1;
}

static int cmp_key(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/* The switches of every component in a scrambled (GUID hash) order, for the trials' roots. */
static int components_list(struct shared *sh)
{
	const struct nue_graph *g = &sh->g;
	size_t S = g->S ? g->S : 1;
	sh->members = malloc(S * sizeof(*sh->members));
	sh->member_off = calloc((size_t)g->ncomp + 1, sizeof(*sh->member_off));
	uint64_t *key = malloc(S * sizeof(*key));
	if (!sh->members || !sh->member_off || !key) {
		free(key);
		return -ENOMEM;
	}
	for (uint32_t s = 0; s < g->S; s++) {
		key[s] = (uint64_t)g->comp[s] << 40 |
			 (uint64_t)(mix32((uint32_t)g->guid[s] ^ (uint32_t)(g->guid[s] >> 32)) & 0xFF)
			 << 32 | s;
		sh->member_off[g->comp[s] + 1]++;
	}
	qsort(key, g->S, sizeof(*key), cmp_key);
	for (uint32_t k = 0; k < g->ncomp; k++)
		sh->member_off[k + 1] += sh->member_off[k];
	for (uint32_t i = 0; i < g->S; i++)
		sh->members[i] = (uint32_t)key[i];
	free(key);
	return 0;
}

/* How many trials (nue_trials, else as many as the work budget allows, 1 .. MAX_TRIALS) and
 * balancing passes (nue_passes; on a fabric too large for one trial within the budget, one
 * balancing pass at most, and none when a pass alone is over four budgets). */
static void trial_count(struct shared *sh)
{
	uint64_t unit = (uint64_t)sh->g.C + 8ull * sh->g.S + 1;
	uint64_t pass = unit * (sh->nmain ? sh->nmain : 1) * sh->nl;
	sh->passes = sh->o->passes;
	if (sh->o->trials) {
		sh->trials = sh->o->trials > MAX_TRIALS ? MAX_TRIALS : sh->o->trials;
		return;
	}
	uint64_t n = TRIAL_BUDGET / (pass * (1 + sh->passes));
	sh->trials = n < 1 ? 1 : n > MAX_TRIALS ? MAX_TRIALS : (uint32_t)n;
	if (n < 1 && sh->passes > 1)
		sh->passes = 1;
	if (pass > 4 * TRIAL_BUDGET)
		sh->passes = 0;
}

static int shared_init(struct shared *sh)
{
	pthread_mutex_init(&sh->lock, NULL);
	int rc = nue_graph_build(sh->core, sh->f, sh->sc, &sh->g);
	if (rc == 0)
		rc = dests_build(sh);
	if (rc < 0)
		return rc;
	sh->nl = layer_count(sh);
	sh->central = malloc((sh->g.ncomp ? sh->g.ncomp : 1) * sizeof(*sh->central));
	if (!sh->central || nue_escape_central(&sh->g, sh->dest_sw, sh->central) < 0)
		return -ENOMEM;
	rc = components_list(sh);
	trial_count(sh);
	if (sh->trials < 2) {
		sh->trials = 2;
		sh->fallback_only = 1;
	}
	return rc;
}

/* ---- the result ------------------------------------------------------------------------- */

void nue_result_free(void *result)
{
	struct nue_result *r = result;
	if (!r)
		return;
	free(r->lid_layer);
	free(r);
}

static int result_fill(struct shared *sh, struct trial *t, struct nue_result *res)
{
	res->layers = sh->nl;
	res->vls = sh->g.vls;
	res->max_lid = sh->f->max_lid;
	res->lid_layer = malloc((size_t)sh->f->max_lid + 1);
	if (!res->lid_layer)
		return -ENOMEM;
	memset(res->lid_layer, 0xFF, (size_t)sh->f->max_lid + 1);
	for (uint32_t i = 0; i < sh->nd; i++)
		res->lid_layer[sh->d[i].lid] = sh->layer[i];
	res->dests = sh->nd;
	res->switch_dests = sh->nd - sh->nca;
	res->trials = sh->trials;
	res->kept_trial = sh->best_trial;
	res->passes = 1 + sh->passes;
	for (uint32_t l = 0; l < sh->nl; l++) {
		res->per_layer[l] = t->per_layer[l];
		res->turns[l] = t->cdg[l].turns;
		if (nue_cdg_cyclic(&t->cdg[l]))
			res->cyclic = 1;
	}
	res->outside = t->outside;
	res->include_switches = sh->o->include_switches;
	res->reserved = t->reserved;
	res->escaped_dests = sh->best_escaped + t->escaped;
	res->escaped_switches = sh->best_escaped_sw + t->escaped_sw;
	res->refused = sh->refused + t->refused;
	uint64_t mx = 0, sum = 0;
	for (uint32_t ch = 0; ch < sh->g.C; ch++) {
		mx = t->load[ch] > mx ? t->load[ch] : mx;
		sum += t->load[ch];
	}
	res->load_max = mx;
	res->load_mean = sh->g.C ? (double)sum / sh->g.C : 0;
	for (uint32_t i = 0; i < sh->nd; i++)
		for (uint32_t s = 0; s < sh->g.S; s++)
			res->unreachable += sh->g.row[s] &&
				sh->lft[(size_t)s * sh->stride + sh->d[i].lid] == IBSM_NO_PORT;
	return 0;
}

/* The trials on the workers, then the kept tables restored for the switch LIDs and the
 * result. */
static int run_all(struct shared *sh, struct nue_result *res)
{
	unsigned nw = sh->o->threads < sh->trials - 1 ? sh->o->threads : sh->trials - 1;
	nw = nw && !sh->fallback_only ? nw : 1;
	sh->layer_helper = sh->fallback_only && sh->nl > 1 && sh->o->threads > 1;
	struct worker *w = engine_workers_alloc(nw, sizeof(*w));
	if (!w)
		return -ENOMEM;
	for (unsigned i = 0; i < nw; i++)
		w[i].sh = sh;
	/* trial 0 alone, then the others on every worker (knowing how trial 0 went) */
	sh->next_trial = 0;
	sh->phase_end = 1;
	worker_main(&w[0]);
	sh->optimistic_ok = sh->have_best;
	sh->next_trial = 1;
	sh->phase_end = sh->trials;
	res->threads = sh->layer_helper ? 2 : 1;
	if (w[0].rc == 0 && !sh->stop && sh->trials > 1) {
		unsigned ran = engine_run_workers(worker_main, w, sizeof(*w), nw);
		res->threads = ran > res->threads ? ran : res->threads;
	}
	int rc = 0;
	for (unsigned i = 0; i < nw; i++)
		rc = w[i].rc < 0 ? w[i].rc : rc;
	free(w);
	if (rc == 0 && sh->stop)
		rc = sh->stop;
	if (rc == 0 && !sh->have_best && sh->nmain)
		rc = -ECANCELED;
	struct trial t;
	memset(&t, 0, sizeof(t));
	if (rc == 0)
		rc = trial_init(&t, sh, 0);
	uint32_t bad = 0;
	if (rc == 0)
		rc = restore(&t, &bad);
	t.escaped = 0;
	t.escaped_sw = 0;
	if (rc == 0 && sh->nl > 1 && sh->o->threads > 1 && sh->nd > sh->nmain)
		helper_start(&t);
	if (rc == 0)
		rc = route_switches(&t);
	helper_stop(&t);
	if (rc == 0)
		rc = result_fill(sh, &t, res);
	if (bad)
		res->cyclic = 1;
	trial_free(&t);
	return rc;
}

int nue_route_scope(const struct ibsm_core *core, const struct ibsm_fabric *f,
		    const struct ibsm_scope *sc, const struct nue_options *o,
		    struct ibsm_routes *out, struct nue_result *res)
{
	struct shared sh = { .core = core, .f = f, .sc = sc, .o = o, .lft = out->lft,
			     .stride = out->stride };
	int rc = shared_init(&sh);
	if (rc == 0)
		rc = run_all(&sh, res);
	if (rc == -ECANCELED)
		rc = engine_fail(out, rc, "cancelled");
	else if (rc == -EPROTO)
		rc = engine_fail(out, rc, "an escape tree's turns were refused (internal error)");
	else if (rc < 0)
		rc = engine_fail(out, rc, "out of memory");
	shared_free(&sh);
	return rc;
}
