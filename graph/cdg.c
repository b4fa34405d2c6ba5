/* SPDX-License-Identifier: BSD-2-Clause */
/* cdg.c - channel dependency graphs (graph/cdg.h): per channel a small array of its outgoing
 * dependencies with their route counts; searches are iterative (no recursion depth to fear on
 * a large fabric) and reuse the graph's scratch arrays. */
#include <stdlib.h>
#include <string.h>
#include "graph/cdg.h"

struct dep {
	uint32_t to, count;
};

struct out {
	struct dep *d;
	uint32_t n, cap;
};

struct cdg {
	uint32_t n;
	uint64_t edges;
	struct out *out;
	/* scratch for the searches */
	uint32_t *mark, epoch;  /* mark[c] == epoch: seen in this search */
	uint32_t *stack;        /* channel ids */
	uint32_t *pos;          /* per stack entry: next dependency to follow */
	uint32_t *index, *low;  /* Tarjan */
	uint8_t *on_stack;
	uint32_t *scc_stack;
};

struct cdg *cdg_new(uint32_t n_channels)
{
	struct cdg *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	size_t n = n_channels ? n_channels : 1;
	g->n = n_channels;
	g->out = calloc(n, sizeof(*g->out));
	g->mark = calloc(n, sizeof(*g->mark));
	g->stack = malloc(n * sizeof(*g->stack));
	g->pos = malloc(n * sizeof(*g->pos));
	if (!g->out || !g->mark || !g->stack || !g->pos) {
		cdg_free(g);
		return NULL;
	}
	return g;
}

void cdg_free(struct cdg *g)
{
	if (!g)
		return;
	for (uint32_t c = 0; g->out && c < g->n; c++)
		free(g->out[c].d);
	free(g->out);
	free(g->mark);
	free(g->stack);
	free(g->pos);
	free(g->index);
	free(g->low);
	free(g->on_stack);
	free(g->scc_stack);
	free(g);
}

uint32_t cdg_channels(const struct cdg *g)
{
	return g->n;
}

uint64_t cdg_edges(const struct cdg *g)
{
	return g->edges;
}

static struct dep *find_dep(const struct cdg *g, uint32_t a, uint32_t b)
{
	const struct out *o = &g->out[a];
	for (uint32_t i = 0; i < o->n; i++)
		if (o->d[i].to == b)
			return &o->d[i];
	return NULL;
}

int cdg_add(struct cdg *g, uint32_t a, uint32_t b)
{
	if (a >= g->n || b >= g->n || a == b)
		return 0;
	struct dep *d = find_dep(g, a, b);
	if (d) {
		d->count++;
		return 0;
	}
	struct out *o = &g->out[a];
	if (o->n == o->cap) {
		uint32_t cap = o->cap ? o->cap * 2 : 4;
		struct dep *nd = realloc(o->d, cap * sizeof(*nd));
		if (!nd)
			return -1;
		o->d = nd;
		o->cap = cap;
	}
	o->d[o->n++] = (struct dep){ .to = b, .count = 1 };
	g->edges++;
	return 0;
}

void cdg_remove(struct cdg *g, uint32_t a, uint32_t b)
{
	if (a >= g->n || b >= g->n)
		return;
	struct dep *d = find_dep(g, a, b);
	if (!d || --d->count)
		return;
	struct out *o = &g->out[a];
	*d = o->d[--o->n];
	g->edges--;
}

int cdg_add_path(struct cdg *g, const uint32_t *ch, uint32_t n)
{
	for (uint32_t i = 0; i + 1 < n; i++)
		if (cdg_add(g, ch[i], ch[i + 1]) < 0) {
			while (i--)
				cdg_remove(g, ch[i], ch[i + 1]);
			return -1;
		}
	return 0;
}

void cdg_remove_path(struct cdg *g, const uint32_t *ch, uint32_t n)
{
	for (uint32_t i = 0; i + 1 < n; i++)
		cdg_remove(g, ch[i], ch[i + 1]);
}

/* A new search: every mark from before is stale (the counter wraps after 2^32 searches). */
static void new_search(struct cdg *g)
{
	if (++g->epoch == 0) {
		memset(g->mark, 0, (g->n ? g->n : 1) * sizeof(*g->mark));
		g->epoch = 1;
	}
}

int cdg_reaches(struct cdg *g, uint32_t from, uint32_t to)
{
	if (from >= g->n || to >= g->n)
		return 0;
	if (from == to)
		return 1;
	new_search(g);
	uint32_t sp = 0;
	g->stack[sp++] = from;
	g->mark[from] = g->epoch;
	while (sp) {
		const struct out *o = &g->out[g->stack[--sp]];
		for (uint32_t i = 0; i < o->n; i++) {
			uint32_t t = o->d[i].to;
			if (t == to)
				return 1;
			if (g->mark[t] != g->epoch) {
				g->mark[t] = g->epoch;
				g->stack[sp++] = t; /* each channel pushed once: n entries suffice */
			}
		}
	}
	return 0;
}

int cdg_path_closes_cycle(struct cdg *g, const uint32_t *ch, uint32_t n)
{
	if (cdg_add_path(g, ch, n) < 0)
		return -1;
	int cycle = 0;
	for (uint32_t i = 0; i + 1 < n && !cycle; i++)
		cycle = ch[i] != ch[i + 1] && cdg_reaches(g, ch[i + 1], ch[i]);
	cdg_remove_path(g, ch, n);
	return cycle;
}

int cdg_add_path_acyclic(struct cdg *g, const uint32_t *ch, uint32_t n)
{
	if (cdg_add_path(g, ch, n) < 0)
		return -1;
	for (uint32_t i = 0; i + 1 < n; i++)
		if (ch[i] != ch[i + 1] && cdg_reaches(g, ch[i + 1], ch[i])) {
			cdg_remove_path(g, ch, n);
			return 1;
		}
	return 0;
}

/* Depth-first over every channel; a dependency into a channel still on the stack closes a
 * cycle, which is the stack from that channel up. mark: epoch-1 done, epoch on the stack. */
uint32_t cdg_find_cycle(struct cdg *g, uint32_t *cycle, uint32_t max)
{
	new_search(g);
	uint32_t on = g->epoch;
	new_search(g); /* g->epoch: done; on (= epoch - 1): on the stack */
	uint32_t done = g->epoch;
	for (uint32_t root = 0; root < g->n; root++) {
		if (g->mark[root] == done)
			continue;
		uint32_t sp = 0;
		g->stack[sp] = root;
		g->pos[sp++] = 0;
		g->mark[root] = on;
		while (sp) {
			uint32_t c = g->stack[sp - 1];
			const struct out *o = &g->out[c];
			if (g->pos[sp - 1] == o->n) {
				g->mark[c] = done;
				sp--;
				continue;
			}
			uint32_t t = o->d[g->pos[sp - 1]++].to;
			if (g->mark[t] == on) { /* the cycle: t .. c on the stack */
				uint32_t from = sp;
				while (g->stack[from - 1] != t)
					from--;
				uint32_t len = sp - (from - 1);
				for (uint32_t k = 0; k < len && k < max; k++)
					cycle[k] = g->stack[from - 1 + k];
				return len;
			}
			if (g->mark[t] != done) {
				g->mark[t] = on;
				g->stack[sp] = t;
				g->pos[sp++] = 0;
			}
		}
	}
	return 0;
}

/* Tarjan's strongly connected components, iterative; the channels in components of more than
 * one channel are counted (a channel depends on no channel of its own). */
uint32_t cdg_cyclic_channels(struct cdg *g)
{
	size_t n = g->n ? g->n : 1;
	if (!g->index) {
		g->index = malloc(n * sizeof(*g->index));
		g->low = malloc(n * sizeof(*g->low));
		g->on_stack = malloc(n);
		g->scc_stack = malloc(n * sizeof(*g->scc_stack));
		if (!g->index || !g->low || !g->on_stack || !g->scc_stack)
			return 0;
	}
	const uint32_t unvisited = UINT32_MAX;
	for (uint32_t c = 0; c < g->n; c++)
		g->index[c] = unvisited;
	memset(g->on_stack, 0, n);
	uint32_t next_index = 0, ssp = 0, cyclic = 0;
	for (uint32_t root = 0; root < g->n; root++) {
		if (g->index[root] != unvisited)
			continue;
		uint32_t sp = 0;
		g->stack[sp] = root;
		g->pos[sp++] = 0;
		g->index[root] = g->low[root] = next_index++;
		g->scc_stack[ssp++] = root;
		g->on_stack[root] = 1;
		while (sp) {
			uint32_t c = g->stack[sp - 1];
			const struct out *o = &g->out[c];
			if (g->pos[sp - 1] < o->n) {
				uint32_t t = o->d[g->pos[sp - 1]++].to;
				if (g->index[t] == unvisited) {
					g->index[t] = g->low[t] = next_index++;
					g->scc_stack[ssp++] = t;
					g->on_stack[t] = 1;
					g->stack[sp] = t;
					g->pos[sp++] = 0;
				} else if (g->on_stack[t] && g->index[t] < g->low[c]) {
					g->low[c] = g->index[t];
				}
				continue;
			}
			sp--;
			if (sp && g->low[c] < g->low[g->stack[sp - 1]])
				g->low[g->stack[sp - 1]] = g->low[c];
			if (g->low[c] != g->index[c])
				continue;
			uint32_t size = 0, x;
			do {
				x = g->scc_stack[--ssp];
				g->on_stack[x] = 0;
				size++;
			} while (x != c);
			if (size > 1)
				cyclic += size;
		}
	}
	return cyclic;
}
