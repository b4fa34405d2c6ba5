/* SPDX-License-Identifier: BSD-2-Clause */
/* mesh.c - lash's mesh analysis (do_mesh_analysis): on a mesh or torus, routes that go
 * dimension by dimension need far fewer virtual layers than arbitrary shortest paths, so lash
 * first finds the dimensions. OpenSM's osm_mesh.c does it by matching characteristic
 * polynomials of each switch's neighbourhood against a table of small tori (sizes 2, 3, 5,
 * 6+); this file finds them from the squares of the graph instead, for any size:
 *  - parallel links count as one edge;
 *  - the opposite sides of every 4-cycle s-x-z-y run in one dimension;
 *  - two edges at a switch that lie on no common 4-cycle run in one dimension (the two ways
 *    along a ring or a line);
 * and the graph is accepted as a product of paths and rings when, at every switch, edges of
 * one dimension never lie on a common 4-cycle, edges of two dimensions always do, and no
 * dimension has more than two edges there. A ring of 4 is the product of two paths of 2 and
 * comes out as two dimensions, which routes it as a 2 x 2 mesh. */
#include <stdlib.h>
#include <string.h>
#include "lash.h"

#define MAX_DEGREE 16 /* neighbours of a mesh switch: two per dimension, 8 dimensions */

struct mesh {
	const struct lash_graph *g;
	uint32_t *nb;     /* [S * MAX_DEGREE] distinct neighbours of s, ascending */
	uint8_t *deg;     /* [S] */
	uint32_t *edge;   /* [S * MAX_DEGREE] undirected edge id of (s, nb[s][i]) */
	uint32_t *uf;     /* union-find over edges */
	uint32_t E;
};

static uint32_t uf_find(uint32_t *uf, uint32_t x)
{
	while (uf[x] != x) {
		uf[x] = uf[uf[x]];
		x = uf[x];
	}
	return x;
}

static void uf_union(uint32_t *uf, uint32_t a, uint32_t b)
{
	a = uf_find(uf, a);
	b = uf_find(uf, b);
	if (a != b)
		uf[a < b ? b : a] = a < b ? a : b;
}

/* Position of x among s's neighbours, or -1. */
static int nb_index(const struct mesh *m, uint32_t s, uint32_t x)
{
	const uint32_t *v = m->nb + (size_t)s * MAX_DEGREE;
	int lo = 0, hi = m->deg[s] - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (v[mid] == x)
			return mid;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

static uint32_t edge_of(const struct mesh *m, uint32_t s, uint32_t x)
{
	return m->edge[(size_t)s * MAX_DEGREE + nb_index(m, s, x)];
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Distinct neighbours and edge ids. 0, or -1 when a switch has too many neighbours. */
static int neighbours(struct mesh *m)
{
	const struct lash_graph *g = m->g;
	for (uint32_t s = 0; s < g->S; s++) {
		uint32_t *v = m->nb + (size_t)s * MAX_DEGREE, n = 0;
		for (uint32_t l = g->off[s]; l < g->off[s + 1]; l++) {
			uint32_t x = g->peer[l], k;
			for (k = 0; k < n && v[k] != x; k++)
				;
			if (k < n)
				continue;
			if (n == MAX_DEGREE)
				return -1;
			v[n++] = x;
		}
		qsort(v, n, sizeof(*v), u32_cmp);
		m->deg[s] = (uint8_t)n;
	}
	for (uint32_t s = 0; s < g->S; s++)
		for (unsigned i = 0; i < m->deg[s]; i++) {
			uint32_t x = m->nb[(size_t)s * MAX_DEGREE + i];
			m->edge[(size_t)s * MAX_DEGREE + i] = x > s ? m->E++ : edge_of(m, x, s);
		}
	return 0;
}

/* The first switch from id `from` on, other than s, next to both x and y (the fourth corner
 * of a square s-x-z-y), or UINT32_MAX. */
static uint32_t corner(const struct mesh *m, uint32_t s, uint32_t x, uint32_t y, uint32_t from)
{
	const uint32_t *v = m->nb + (size_t)x * MAX_DEGREE;
	for (unsigned k = 0; k < m->deg[x]; k++)
		if (v[k] >= from && v[k] != s && nb_index(m, y, v[k]) >= 0)
			return v[k];
	return UINT32_MAX;
}

/* The two rules: squares join opposite sides, edges on no common square at a switch join. */
static void join(struct mesh *m)
{
	const struct lash_graph *g = m->g;
	for (uint32_t s = 0; s < g->S; s++) {
		const uint32_t *v = m->nb + (size_t)s * MAX_DEGREE;
		for (unsigned i = 0; i < m->deg[s]; i++)
			for (unsigned j = i + 1; j < m->deg[s]; j++) {
				uint32_t x = v[i], y = v[j], any = 0;
				for (uint32_t z = corner(m, s, x, y, 0); z != UINT32_MAX;
				     z = corner(m, s, x, y, z + 1)) {
					uf_union(m->uf, edge_of(m, s, x), edge_of(m, y, z));
					uf_union(m->uf, edge_of(m, s, y), edge_of(m, x, z));
					any = 1;
				}
				if (!any)
					uf_union(m->uf, edge_of(m, s, x), edge_of(m, s, y));
			}
	}
}

/* The product test at every switch; NULL when it holds, else why not. */
static const char *check(struct mesh *m)
{
	const struct lash_graph *g = m->g;
	for (uint32_t s = 0; s < g->S; s++) {
		const uint32_t *v = m->nb + (size_t)s * MAX_DEGREE;
		for (unsigned i = 0; i < m->deg[s]; i++) {
			uint32_t ci = uf_find(m->uf, edge_of(m, s, v[i])), same = 1;
			for (unsigned j = 0; j < m->deg[s]; j++) {
				if (j == i)
					continue;
				uint32_t cj = uf_find(m->uf, edge_of(m, s, v[j]));
				int square = corner(m, s, v[i], v[j], 0) != UINT32_MAX;
				if (ci == cj && square)
					return "a 4-cycle has two sides in one dimension";
				if (ci != cj && !square)
					return "two dimensions meet without a 4-cycle";
				same += ci == cj;
			}
			if (same > 2)
				return "a switch has more than two links in one dimension";
		}
	}
	return NULL;
}

unsigned lash_mesh_classes(const struct lash_graph *g, uint8_t *cls, const char **why)
{
	struct mesh m = { .g = g };
	size_t S = g->S ? g->S : 1;
	unsigned dims = 0;
	*why = "out of memory";
	m.nb = malloc(S * MAX_DEGREE * sizeof(*m.nb));
	m.deg = calloc(S, 1);
	m.edge = malloc(S * MAX_DEGREE * sizeof(*m.edge));
	m.uf = malloc(S * MAX_DEGREE * sizeof(*m.uf));
	uint32_t *id = NULL;
	if (!m.nb || !m.deg || !m.edge || !m.uf)
		goto out;
	if (neighbours(&m) < 0) {
		*why = "a switch has more than 16 neighbours";
		goto out;
	}
	if (!m.E) {
		*why = "no switch-to-switch link";
		goto out;
	}
	for (uint32_t e = 0; e < m.E; e++)
		m.uf[e] = e;
	join(&m);
	if ((*why = check(&m)) != NULL)
		goto out;
	id = malloc((size_t)m.E * sizeof(*id));
	if (!id) {
		*why = "out of memory";
		goto out;
	}
	for (uint32_t e = 0; e < m.E; e++)
		id[e] = UINT32_MAX;
	for (uint32_t s = 0; s < g->S; s++)
		for (uint32_t l = g->off[s]; l < g->off[s + 1]; l++) {
			uint32_t c = uf_find(m.uf, edge_of(&m, s, g->peer[l]));
			if (id[c] == UINT32_MAX) {
				if (dims == 255) {
					*why = "more than 255 dimensions";
					dims = 0;
					goto out;
				}
				id[c] = dims++;
			}
			cls[l] = (uint8_t)id[c];
		}
	*why = NULL;
out:
	free(id);
	free(m.nb);
	free(m.deg);
	free(m.edge);
	free(m.uf);
	return dims;
}
