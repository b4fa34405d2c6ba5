/* SPDX-License-Identifier: BSD-2-Clause */
/* test_cdg.c - the channel dependency graph (graph/cdg.h): counted edges that routes add and
 * take out again, reachability, the cycle a route would close, one cycle named, the channels
 * on cycles; and, on random graphs, every answer against a brute-force transitive closure. */
#include <glib.h>
#include <string.h>
#include "graph/cdg.h"

static void test_basics(void)
{
	struct cdg *g = cdg_new(6);
	g_assert_nonnull(g);
	uint32_t line[] = { 0, 1, 2, 3 }, back[] = { 3, 0 }, cyc[8];
	g_assert_cmpint(cdg_add_path(g, line, 4), ==, 0);
	g_assert_cmpuint(cdg_edges(g), ==, 3);
	g_assert_true(cdg_reaches(g, 0, 3));
	g_assert_false(cdg_reaches(g, 3, 0));
	g_assert_cmpuint(cdg_find_cycle(g, cyc, 8), ==, 0);
	g_assert_cmpuint(cdg_cyclic_channels(g), ==, 0);
	/* 3 -> 0 closes 0 1 2 3: refused without a trace, and named once added */
	g_assert_cmpint(cdg_path_closes_cycle(g, back, 2), ==, 1);
	g_assert_cmpint(cdg_add_path_acyclic(g, back, 2), ==, 1);
	g_assert_cmpuint(cdg_edges(g), ==, 3);
	g_assert_cmpint(cdg_add_path(g, back, 2), ==, 0);
	uint32_t len = cdg_find_cycle(g, cyc, 8);
	g_assert_cmpuint(len, ==, 4);
	for (uint32_t k = 0; k < len; k++) /* consecutive channels depend on each other */
		g_assert_true(cdg_reaches(g, cyc[k], cyc[(k + 1) % len]));
	g_assert_cmpuint(cdg_cyclic_channels(g), ==, 4);
	g_assert_cmpuint(cdg_find_cycle(g, cyc, 2), ==, 4); /* its length, whatever max */
	/* counts: a second route over 1 -> 2, then the line's routes out: 1 -> 2 stays */
	uint32_t again[] = { 1, 2 };
	cdg_add_path(g, again, 2);
	cdg_remove_path(g, line, 4);
	cdg_remove_path(g, back, 2);
	g_assert_cmpuint(cdg_edges(g), ==, 1);
	g_assert_true(cdg_reaches(g, 1, 2));
	g_assert_false(cdg_reaches(g, 0, 1));
	/* a repeated channel adds nothing; ids out of range are ignored */
	uint32_t same[] = { 4, 4 };
	cdg_add_path(g, same, 2);
	g_assert_cmpint(cdg_add(g, 9, 1), ==, 0);
	g_assert_cmpuint(cdg_edges(g), ==, 1);
	g_assert_cmpuint(cdg_find_cycle(g, cyc, 8), ==, 0);
	cdg_free(g);
}

/* Random graphs of up to 40 channels: reachability, cycles and cyclic channels equal what a
 * transitive closure (Warshall) says. */
static void test_random_against_closure(void)
{
	GRand *rnd = g_rand_new_with_seed(20261127);
	for (int round = 0; round < 400; round++) {
		uint32_t n = (uint32_t)g_rand_int_range(rnd, 2, 41);
		uint32_t m = (uint32_t)g_rand_int_range(rnd, 0, (gint32)(2 * n));
		struct cdg *g = cdg_new(n);
		gboolean *adj = g_new0(gboolean, n * n);
		for (uint32_t e = 0; e < m; e++) {
			uint32_t a = (uint32_t)g_rand_int_range(rnd, 0, (gint32)n);
			uint32_t b = (uint32_t)g_rand_int_range(rnd, 0, (gint32)n);
			if (a == b)
				continue;
			if (cdg_path_closes_cycle(g, (uint32_t[]){ a, b }, 2) == 1 && g_rand_boolean(rnd))
				continue; /* keep some graphs acyclic */
			cdg_add(g, a, b);
			adj[a * n + b] = TRUE;
		}
		for (uint32_t k = 0; k < n; k++) /* closure */
			for (uint32_t i = 0; i < n; i++)
				if (adj[i * n + k])
					for (uint32_t j = 0; j < n; j++)
						if (adj[k * n + j])
							adj[i * n + j] = TRUE;
		uint32_t on_cycles = 0;
		for (uint32_t i = 0; i < n; i++) {
			on_cycles += adj[i * n + i];
			for (uint32_t j = 0; j < n; j++)
				g_assert_cmpint(cdg_reaches(g, i, j), ==, i == j || adj[i * n + j]);
		}
		uint32_t cyc[64];
		uint32_t len = cdg_find_cycle(g, cyc, 64);
		g_assert_cmpint(len > 0, ==, on_cycles > 0);
		for (uint32_t k = 0; k < len; k++)
			g_assert_true(adj[cyc[k] * n + cyc[k]]);
		g_assert_cmpuint(cdg_cyclic_channels(g), ==, on_cycles);
		g_free(adj);
		cdg_free(g);
	}
	g_rand_free(rnd);
}

/* A long chain: the searches are iterative (no recursion to overflow). */
static void test_long_chain(void)
{
	const uint32_t n = 200000;
	struct cdg *g = cdg_new(n);
	for (uint32_t c = 0; c + 1 < n; c++)
		cdg_add(g, c, c + 1);
	uint32_t cyc[4];
	g_assert_cmpuint(cdg_find_cycle(g, cyc, 4), ==, 0);
	g_assert_true(cdg_reaches(g, 0, n - 1));
	cdg_add(g, n - 1, 0);
	g_assert_cmpuint(cdg_find_cycle(g, cyc, 4), ==, n);
	g_assert_cmpuint(cdg_cyclic_channels(g), ==, n);
	cdg_free(g);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/cdg/basics", test_basics);
	g_test_add_func("/cdg/random-against-closure", test_random_against_closure);
	g_test_add_func("/cdg/long-chain", test_long_chain);
	return g_test_run();
}
