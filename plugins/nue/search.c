/* SPDX-License-Identifier: BSD-2-Clause */
/* search.c - nue's routing step for one destination on one layer (Domke et al., HPDC 2016,
 * section 4; OpenSM 3.3.23's osm_ucast_nue.c): a Dijkstra from the destination switch outward
 * over the switches, where switch v may join through its neighbour u only when the turn from
 * channel (v -> u) into u's own channel toward the destination keeps the layer's dependency
 * graph acyclic. The turn is taken into the graph when v is settled, so every later step of
 * this and of every later destination is checked against it.
 *
 * The impasse (a switch every settled neighbour refuses) is resolved without giving up the
 * whole destination, as OpenSM does: the unreached switches take the escape tree's path, and so
 * do the switches on that path; a settled switch whose next hop changed that way keeps its own
 * hop if the layer accepts the new turn, else it joins the tree too. The tree's turns were
 * reserved in every layer before any route, so this always ends, at worst with the whole
 * component on the tree. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "nue_parts.h"

enum { ST_NEW = 0, ST_HEAP, ST_DONE, ST_ESCAPE };

int nue_search_init(struct nue_search *s, const struct nue_graph *g)
{
	memset(s, 0, sizeof(*s));
	s->g = g;
	size_t S = g->S ? g->S : 1, C = g->C ? g->C : 1;
	s->key = malloc(S * sizeof(*s->key));
	s->dist = malloc(S * sizeof(*s->dist));
	s->next = malloc(S * sizeof(*s->next));
	s->cand = malloc(S * sizeof(*s->cand));
	s->slot = malloc(S * sizeof(*s->slot));
	s->heap = malloc(S * sizeof(*s->heap));
	s->hpos = malloc(S * sizeof(*s->hpos));
	s->blocked = calloc(C, sizeof(*s->blocked));
	s->state = malloc(S);
	s->order = malloc(S * sizeof(*s->order));
	s->work = malloc(S * sizeof(*s->work));
	s->sub = malloc(S * sizeof(*s->sub));
	if (!s->key || !s->dist || !s->next || !s->cand || !s->slot || !s->heap || !s->hpos ||
	    !s->blocked || !s->state || !s->order || !s->work || !s->sub) {
		nue_search_free(s);
		return -ENOMEM;
	}
	return 0;
}

void nue_search_free(struct nue_search *s)
{
	free(s->key);
	free(s->dist);
	free(s->next);
	free(s->cand);
	free(s->slot);
	free(s->heap);
	free(s->hpos);
	free(s->blocked);
	free(s->state);
	free(s->order);
	free(s->work);
	free(s->sub);
	memset(s, 0, sizeof(*s));
}

/* ---- a binary heap of switches by key, then switch id (so ties never depend on history) -- */

static int heap_less(const struct nue_search *s, uint32_t a, uint32_t b)
{
	return s->key[a] < s->key[b] || (s->key[a] == s->key[b] && a < b);
}

static void heap_up(struct nue_search *s, uint32_t i)
{
	uint32_t x = s->heap[i];
	while (i) {
		uint32_t p = (i - 1) / 2;
		if (!heap_less(s, x, s->heap[p]))
			break;
		s->heap[i] = s->heap[p];
		s->hpos[s->heap[i]] = i;
		i = p;
	}
	s->heap[i] = x;
	s->hpos[x] = i;
}

static void heap_down(struct nue_search *s, uint32_t i)
{
	uint32_t x = s->heap[i];
	for (;;) {
		uint32_t l = 2 * i + 1, m;
		if (l >= s->hn)
			break;
		m = l + 1 < s->hn && heap_less(s, s->heap[l + 1], s->heap[l]) ? l + 1 : l;
		if (!heap_less(s, s->heap[m], x))
			break;
		s->heap[i] = s->heap[m];
		s->hpos[s->heap[i]] = i;
		i = m;
	}
	s->heap[i] = x;
	s->hpos[x] = i;
}

static void heap_push(struct nue_search *s, uint32_t v)
{
	s->heap[s->hn] = v;
	heap_up(s, s->hn++);
}

static uint32_t heap_pop(struct nue_search *s)
{
	uint32_t v = s->heap[0];
	s->heap[0] = s->heap[--s->hn];
	if (s->hn)
		heap_down(s, 0);
	return v;
}

/* ---- the search ------------------------------------------------------------------------ */

/* Offers every unsettled neighbour v of the settled switch u the channel (v -> u). A turn the
 * layer does not hold yet that goes backward in its order costs s->new_turn_back more: it
 * would move channels in the order, and so forbid more turns to every later route. */
static void relax(struct nue_search *s, const struct nue_cdg *d, const uint64_t *w, uint32_t u)
{
	const struct nue_graph *g = s->g;
	uint32_t b = s->next[u];
	for (uint32_t i = g->in_off[u]; i < g->in_off[u + 1]; i++) {
		uint32_t a = g->in_ch[i], v = g->tail[a];
		if (s->state[v] >= ST_DONE || s->blocked[a] == s->stamp)
			continue;
		uint64_t nd = s->dist[u] + w[a];
		if (s->new_turn_back && b != NUE_NONE && d->ord[a] > d->ord[b] &&
		    !d->count[nue_slot(g, a, b)])
			nd += s->new_turn_back;
		if (s->state[v] == ST_NEW) {
			s->key[v] = nd;
			s->cand[v] = a;
			s->state[v] = ST_HEAP;
			heap_push(s, v);
		} else if (nd < s->key[v]) {
			s->key[v] = nd;
			s->cand[v] = a;
			heap_up(s, s->hpos[v]);
		}
	}
}

/* v joins through a = (v -> u) if the layer takes the turn a -> next(u) (none at the
 * destination switch). */
static int take(struct nue_search *s, struct nue_cdg *d, uint32_t v, uint32_t a)
{
	uint32_t b = s->next[s->g->head[a]];
	if (b == NUE_NONE) {
		s->slot[v] = UINT64_MAX;
		return 1;
	}
	if (nue_cdg_add(d, a, b))
		return 0;
	s->slot[v] = nue_slot(s->g, a, b);
	return 1;
}

/* v's best channel into a settled switch that was not refused: back into the heap, or left
 * for a later neighbour. */
static void retry(struct nue_search *s, const uint64_t *w, uint32_t v)
{
	const struct nue_graph *g = s->g;
	uint64_t best = UINT64_MAX;
	uint32_t bc = NUE_NONE;
	for (uint32_t c = g->out_off[v]; c < g->out_off[v + 1]; c++) {
		uint32_t x = g->head[c];
		if (s->state[x] != ST_DONE || s->blocked[c] == s->stamp)
			continue;
		uint64_t nd = s->dist[x] + w[c];
		if (nd < best) {
			best = nd;
			bc = c;
		}
	}
	if (bc == NUE_NONE) {
		s->state[v] = ST_NEW;
		return;
	}
	s->key[v] = best;
	s->cand[v] = bc;
	s->state[v] = ST_HEAP;
	heap_push(s, v);
}

/* ---- the impasse: escape paths ------------------------------------------------------------ */

/* Puts v and every switch on its escape path that is not there yet on the list work[*n]. */
static void escape_mark(struct nue_search *s, const struct nue_escape *e, uint32_t v,
			uint32_t t, uint32_t *n)
{
	while (v != t && s->state[v] != ST_ESCAPE) {
		s->state[v] = ST_ESCAPE;
		s->work[(*n)++] = v;
		v = s->g->head[nue_escape_next(s->g, e, v, t)];
	}
}

/* The switches work[from .. n) take the tree's channels (their old turns out, the reserved
 * ones in); then their settled neighbours routing through them take the new turn, or join. */
static uint32_t escape_round(struct nue_search *s, struct nue_cdg *d, const struct nue_escape *e,
			     uint32_t t, uint32_t from, uint32_t n)
{
	const struct nue_graph *g = s->g;
	for (uint32_t i = from; i < n; i++) {
		uint32_t x = s->work[i];
		if (s->slot[x] != UINT64_MAX)
			nue_cdg_remove(d, s->slot[x]);
		s->slot[x] = UINT64_MAX;
		s->next[x] = nue_escape_next(g, e, x, t);
	}
	for (uint32_t i = from; i < n; i++) {
		uint32_t x = s->work[i], a = s->next[x], b = s->next[g->head[a]];
		if (b == NUE_NONE)
			continue;
		/* a turn of the tree toward a destination switch: never refused once the tree is
		 * reserved; before that (route.c's first trial) it may be, and the search fails */
		if (nue_cdg_add(d, a, b) == 0)
			s->slot[x] = nue_slot(g, a, b);
		else
			s->failed++;
	}
	uint32_t m = n;
	for (uint32_t i = from; i < n; i++) {
		uint32_t x = s->work[i];
		for (uint32_t k = g->in_off[x]; k < g->in_off[x + 1]; k++) {
			uint32_t a = g->in_ch[k], w = g->tail[a];
			if (s->state[w] != ST_DONE || s->next[w] != a)
				continue;
			if (s->slot[w] != UINT64_MAX)
				nue_cdg_remove(d, s->slot[w]);
			s->slot[w] = UINT64_MAX;
			if (nue_cdg_add(d, a, s->next[x]) == 0)
				s->slot[w] = nue_slot(g, a, s->next[x]);
			else
				escape_mark(s, e, w, t, &m);
		}
	}
	return m;
}

static void escape(struct nue_search *s, struct nue_cdg *d, const struct nue_escape *e,
		   uint32_t t)
{
	const struct nue_graph *g = s->g;
	uint32_t n = 0, from = 0;
	for (uint32_t v = 0; v < g->S; v++)
		if (v != t && g->comp[v] == g->comp[t] && s->state[v] != ST_DONE &&
		    s->state[v] != ST_ESCAPE)
			escape_mark(s, e, v, t, &n);
	while (from < n) {
		uint32_t m = escape_round(s, d, e, t, from, n);
		from = n;
		n = m;
	}
	s->escaped = n;
}

/* The tree from t outward (breadth first over the switches whose channel enters one already
 * listed), with every path's cost under w (NULL: not needed). */
static void tree_order(struct nue_search *s, const uint64_t *w, uint32_t t)
{
	const struct nue_graph *g = s->g;
	uint32_t n = 0, head = 0;
	s->order[n++] = t;
	s->dist[t] = 0;
	while (head < n) {
		uint32_t x = s->order[head++];
		for (uint32_t k = g->in_off[x]; k < g->in_off[x + 1]; k++) {
			uint32_t a = g->in_ch[k], v = g->tail[a];
			if (s->next[v] != a || v == t)
				continue;
			if (w)
				s->dist[v] = s->dist[x] + w[a];
			s->order[n++] = v;
		}
	}
	s->norder = n;
}

void nue_search_run(struct nue_search *s, struct nue_cdg *d, const struct nue_escape *e,
		    const uint64_t *w, uint32_t t)
{
	const struct nue_graph *g = s->g;
	if (++s->stamp == 0) {
		memset(s->blocked, 0, (g->C ? g->C : 1) * sizeof(*s->blocked));
		s->stamp = 1;
	}
	for (uint32_t v = 0; v < g->S; v++) {
		s->state[v] = ST_NEW;
		s->next[v] = NUE_NONE;
		s->slot[v] = UINT64_MAX;
	}
	s->escaped = s->refused = s->failed = 0;
	s->ran = 1;
	s->hn = 0;
	s->norder = 0;
	s->state[t] = ST_DONE;
	s->dist[t] = 0;
	s->order[s->norder++] = t;
	relax(s, d, w, t);
	while (s->hn) {
		uint32_t v = heap_pop(s), a = s->cand[v];
		if (!take(s, d, v, a)) {
			s->blocked[a] = s->stamp;
			s->refused++;
			retry(s, w, v);
			continue;
		}
		s->state[v] = ST_DONE;
		s->dist[v] = s->key[v];
		s->next[v] = a;
		s->order[s->norder++] = v;
		relax(s, d, w, v);
	}
	if (s->norder < g->comp_size[g->comp[t]]) {
		escape(s, d, e, t);
		tree_order(s, w, t);
	}
	s->cost = 0;
	for (uint32_t i = 1; i < s->norder; i++)
		s->cost += (uint64_t)g->src[s->order[i]] * s->dist[s->order[i]];
}

void nue_search_unroute(struct nue_search *s, struct nue_cdg *d)
{
	const struct nue_graph *g = s->g;
	for (uint32_t i = 1; i < s->norder; i++) {
		uint32_t v = s->order[i], a = s->next[v], b = s->next[g->head[a]];
		if (s->ran) { /* the turns the search took (an impasse may have left some out) */
			if (s->slot[v] != UINT64_MAX)
				nue_cdg_remove(d, s->slot[v]);
		} else if (b != NUE_NONE) {
			nue_cdg_remove(d, nue_slot(g, a, b));
		}
	}
}

void nue_search_read(struct nue_search *s, const uint8_t *lft, uint32_t stride,
		     const struct ibsm_fabric *f, uint32_t lid, uint32_t t)
{
	const struct nue_graph *g = s->g;
	s->ran = 0;
	for (uint32_t v = 0; v < g->S; v++) {
		s->next[v] = NUE_NONE;
		if (v == t || g->comp[v] != g->comp[t])
			continue;
		const struct ibsm_node *n = ibsm_switch_node(f, v);
		uint8_t p = lft[(size_t)v * stride + lid];
		if (p >= 1 && p <= n->nports)
			s->next[v] = g->chan_of_port[n->port0 + p];
	}
	tree_order(s, NULL, t);
}

void nue_search_subtrees(struct nue_search *s)
{
	const struct nue_graph *g = s->g;
	for (uint32_t i = 0; i < s->norder; i++)
		s->sub[s->order[i]] = g->src[s->order[i]];
	for (uint32_t i = s->norder; i-- > 1;) {
		uint32_t v = s->order[i];
		s->sub[g->head[s->next[v]]] += s->sub[v];
	}
}
