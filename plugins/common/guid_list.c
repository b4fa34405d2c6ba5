/* SPDX-License-Identifier: BSD-2-Clause */
/* guid_list.c - a growable list of GUIDs read from a file, and its sorted-set form for the
 * engines that look GUIDs up (binary search; no glib in plugins). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include "guid_file.h"

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

int guid_list_add(struct guid_list *g, uint64_t guid)
{
	if (g->n == g->cap) {
		uint32_t ncap = g->cap ? g->cap * 2 : 16;
		uint64_t *nv = realloc(g->v, (size_t)ncap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		g->v = nv;
		g->cap = ncap;
	}
	g->v[g->n++] = guid;
	return 0;
}

void guid_list_sort_unique(struct guid_list *g)
{
	if (!g->n)
		return;
	qsort(g->v, g->n, sizeof(*g->v), cmp_u64);
	uint32_t k = 1;
	for (uint32_t i = 1; i < g->n; i++)
		if (g->v[i] != g->v[k - 1])
			g->v[k++] = g->v[i];
	g->n = k;
}

int guid_list_has(const struct guid_list *g, uint64_t guid)
{
	uint32_t lo = 0, hi = g ? g->n : 0;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (g->v[mid] == guid)
			return 1;
		if (g->v[mid] < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

void guid_list_clear(struct guid_list *g)
{
	free(g->v);
	g->v = NULL;
	g->n = g->cap = 0;
	g->bad_lines = 0;
}
