/* SPDX-License-Identifier: BSD-2-Clause */
/* dag.c - lash's acyclic channel dependency graph (dag.h): counted edges in forward and
 * backward lists, and Pearce and Kelly's dynamic topological order. Adding a -> b when a comes
 * before b changes nothing; otherwise the channels reachable from b up to a's place and those
 * reaching a down to b's place are found (reaching a from b is the cycle), and the backward set
 * takes the first of their places, then the forward set. Searches are iterative. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>
#include "dag.h"

struct arc {
	uint32_t to, count;
};

struct list {
	struct arc *v;
	uint32_t n, cap;
};

struct dag {
	uint32_t n;
	uint64_t edges;
	struct list *out, *in;  /* in: count unused */
	uint32_t *ord, *at;     /* place of a channel; channel at a place */
	uint32_t *mark, epoch;
	uint32_t *stack, *fwd, *bwd, *places;
	uint32_t nf, nb;
};

struct dag *dag_new(uint32_t n)
{
	struct dag *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	size_t sz = n ? n : 1;
	d->n = n;
	d->out = calloc(sz, sizeof(*d->out));
	d->in = calloc(sz, sizeof(*d->in));
	d->ord = malloc(sz * sizeof(*d->ord));
	d->at = malloc(sz * sizeof(*d->at));
	d->mark = calloc(sz, sizeof(*d->mark));
	d->stack = malloc(sz * sizeof(*d->stack));
	d->fwd = malloc(sz * sizeof(*d->fwd));
	d->bwd = malloc(sz * sizeof(*d->bwd));
	d->places = malloc(2 * sz * sizeof(*d->places));
	if (!d->out || !d->in || !d->ord || !d->at || !d->mark || !d->stack || !d->fwd ||
	    !d->bwd || !d->places) {
		dag_free(d);
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++)
		d->ord[i] = d->at[i] = i;
	return d;
}

void dag_free(struct dag *d)
{
	if (!d)
		return;
	for (uint32_t i = 0; d->out && d->in && i < d->n; i++) {
		free(d->out[i].v);
		free(d->in[i].v);
	}
	free(d->out);
	free(d->in);
	free(d->ord);
	free(d->at);
	free(d->mark);
	free(d->stack);
	free(d->fwd);
	free(d->bwd);
	free(d->places);
	free(d);
}

uint64_t dag_edges(const struct dag *d)
{
	return d->edges;
}

static struct arc *find(struct list *l, uint32_t to)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (l->v[i].to == to)
			return &l->v[i];
	return NULL;
}

static int push(struct list *l, uint32_t to)
{
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 4;
		struct arc *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = (struct arc){ .to = to, .count = 1 };
	return 0;
}

static void drop(struct list *l, uint32_t to)
{
	struct arc *a = find(l, to);
	if (a)
		*a = l->v[--l->n];
}

static void new_epoch(struct dag *d)
{
	if (++d->epoch == 0) {
		memset(d->mark, 0, (d->n ? d->n : 1) * sizeof(*d->mark));
		d->epoch = 1;
	}
}

/* The channels reachable from b whose place is at most ub, into fwd; 1 when `a` is among
 * them (a cycle). */
static int forward(struct dag *d, uint32_t b, uint32_t a, uint32_t ub)
{
	uint32_t sp = 0;
	d->nf = 0;
	d->stack[sp++] = b;
	d->mark[b] = d->epoch;
	while (sp) {
		uint32_t x = d->stack[--sp];
		d->fwd[d->nf++] = x;
		const struct list *l = &d->out[x];
		for (uint32_t i = 0; i < l->n; i++) {
			uint32_t y = l->v[i].to;
			if (y == a)
				return 1;
			if (d->mark[y] != d->epoch && d->ord[y] < ub) {
				d->mark[y] = d->epoch;
				d->stack[sp++] = y;
			}
		}
	}
	return 0;
}

/* The channels reaching a whose place is at least lb, into bwd. */
static void backward(struct dag *d, uint32_t a, uint32_t lb)
{
	uint32_t sp = 0;
	d->nb = 0;
	d->stack[sp++] = a;
	d->mark[a] = d->epoch;
	while (sp) {
		uint32_t x = d->stack[--sp];
		d->bwd[d->nb++] = x;
		const struct list *l = &d->in[x];
		for (uint32_t i = 0; i < l->n; i++) {
			uint32_t y = l->v[i].to;
			if (d->mark[y] != d->epoch && d->ord[y] > lb) {
				d->mark[y] = d->epoch;
				d->stack[sp++] = y;
			}
		}
	}
}

static int by_place(const void *x, const void *y, void *ctx)
{
	const struct dag *d = ctx;
	uint32_t a = d->ord[*(const uint32_t *)x], b = d->ord[*(const uint32_t *)y];
	return a < b ? -1 : a > b;
}

static int u32_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return a < b ? -1 : a > b;
}

/* The places of bwd and fwd, ascending, to bwd (in its order) then fwd (in its order). */
static void reorder(struct dag *d)
{
	qsort_r(d->bwd, d->nb, sizeof(*d->bwd), by_place, d);
	qsort_r(d->fwd, d->nf, sizeof(*d->fwd), by_place, d);
	uint32_t k = 0;
	for (uint32_t i = 0; i < d->nb; i++)
		d->places[k++] = d->ord[d->bwd[i]];
	for (uint32_t i = 0; i < d->nf; i++)
		d->places[k++] = d->ord[d->fwd[i]];
	qsort(d->places, k, sizeof(*d->places), u32_cmp);
	k = 0;
	for (uint32_t i = 0; i < d->nb; i++, k++) {
		d->ord[d->bwd[i]] = d->places[k];
		d->at[d->places[k]] = d->bwd[i];
	}
	for (uint32_t i = 0; i < d->nf; i++, k++) {
		d->ord[d->fwd[i]] = d->places[k];
		d->at[d->places[k]] = d->fwd[i];
	}
}

int dag_add(struct dag *d, uint32_t a, uint32_t b)
{
	if (a >= d->n || b >= d->n || a == b)
		return 0;
	struct arc *e = find(&d->out[a], b);
	if (e) {
		e->count++;
		return 0;
	}
	if (d->ord[b] < d->ord[a]) { /* against the order: search the places between */
		uint32_t lb = d->ord[b], ub = d->ord[a];
		new_epoch(d);
		if (forward(d, b, a, ub))
			return 1;
		new_epoch(d);
		backward(d, a, lb);
		reorder(d);
	}
	if (push(&d->out[a], b) < 0)
		return -1;
	if (push(&d->in[b], a) < 0) {
		drop(&d->out[a], b);
		return -1;
	}
	d->edges++;
	return 0;
}

void dag_remove(struct dag *d, uint32_t a, uint32_t b)
{
	if (a >= d->n || b >= d->n)
		return;
	struct arc *e = find(&d->out[a], b);
	if (!e || --e->count)
		return;
	*e = d->out[a].v[--d->out[a].n];
	drop(&d->in[b], a);
	d->edges--;
}

int dag_check_order(const struct dag *d)
{
	for (uint32_t a = 0; a < d->n; a++)
		for (uint32_t i = 0; i < d->out[a].n; i++)
			if (d->ord[a] >= d->ord[d->out[a].v[i].to])
				return 0;
	return 1;
}
