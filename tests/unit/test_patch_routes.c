/* SPDX-License-Identifier: BSD-2-Clause */
/* test_patch_routes.c - patch_fix_routes() (fabric/patch.h), the directed routes a repair
 * mends between its rounds: a route that still leads to its node is kept, one that does not is
 * replaced by a shortest one, also when its last hop looks like the search's (a route is only
 * taken as working without a walk when it is its parent's route plus that hop). */
#include <string.h>
#include <glib.h>
#include "fabric/model.h"
#include "fabric/patch.h"

/* local CA L[1] - S1[1]; S1[2] - S2[1]; S1[3] - S3[1]; S2[2] - S4[1]; S3[2] - S4[2] */
enum { L, S1, S2, S3, S4, N };

static struct model_builder *square(void)
{
	struct model_builder *b = model_builder_new();
	g_assert_cmpint(model_add_node(b, 0x100, IBSM_CA, 1), ==, L);
	for (int i = S1; i < N; i++)
		g_assert_cmpint(model_add_node(b, 0x200 + (uint64_t)i, IBSM_SWITCH, 4), ==, i);
	model_node(b, L)->ports[1].flags |= IBSM_PORT_SM | IBSM_PORT_PRESENT;
	model_link(b, L, 1, S1, 1);
	model_link(b, S1, 2, S2, 1);
	model_link(b, S1, 3, S3, 1);
	model_link(b, S2, 2, S4, 1);
	model_link(b, S3, 2, S4, 2);
	return b;
}

static void set_route(struct model_builder *b, uint32_t idx, const uint8_t *hops, uint8_t n)
{
	struct model_node_in *x = model_node(b, idx);
	memset(x->dr_path, 0, sizeof(x->dr_path));
	x->dr_hops = n;
	memcpy(x->dr_path + 1, hops, n);
}

static void assert_route(struct model_builder *b, uint32_t idx, const uint8_t *hops, uint8_t n)
{
	struct model_node_in *x = model_node(b, idx);
	g_assert_cmpuint(x->dr_hops, ==, n);
	g_assert_cmpmem(x->dr_path + 1, n, hops, n);
}

static void routes_as_discovered(struct model_builder *b)
{
	set_route(b, S1, (const uint8_t[]){ 1 }, 1);
	set_route(b, S2, (const uint8_t[]){ 1, 2 }, 2);
	set_route(b, S3, (const uint8_t[]){ 1, 3 }, 2);
}

/* Routes that work are kept, the search's or not. */
static void test_working_kept(void)
{
	struct model_builder *b = square();
	routes_as_discovered(b);
	set_route(b, S4, (const uint8_t[]){ 1, 3, 2 }, 3); /* through S3, not the search's S2 */
	uint8_t reached[N];
	g_assert_cmpuint(patch_fix_routes(b, reached, NULL), ==, 0);
	for (int i = 0; i < N; i++)
		g_assert_cmpuint(reached[i], ==, 1);
	assert_route(b, S4, (const uint8_t[]){ 1, 3, 2 }, 3);
	model_builder_free(b);
}

/* S4's route through S3 ends by port 2, as the search's (through S2) does: with S3[2] gone
 * it no longer leads to S4 and is replaced, though its length and last hop match. */
static void test_broken_same_last_hop(void)
{
	struct model_builder *b = square();
	routes_as_discovered(b);
	set_route(b, S4, (const uint8_t[]){ 1, 3, 2 }, 3);
	patch_unlink(b, S3, 2);
	uint8_t reached[N];
	g_assert_cmpuint(patch_fix_routes(b, reached, NULL), ==, 1);
	assert_route(b, S4, (const uint8_t[]){ 1, 2, 2 }, 3);
	assert_route(b, S3, (const uint8_t[]){ 1, 3 }, 2);
	model_builder_free(b);
}

/* A switch that may not be crossed: the route through it is replaced, it stays reachable. */
static void test_no_transit(void)
{
	struct model_builder *b = square();
	routes_as_discovered(b);
	set_route(b, S4, (const uint8_t[]){ 1, 2, 2 }, 3);
	uint8_t reached[N], avoid[N] = { 0 };
	avoid[S2] = 1;
	g_assert_cmpuint(patch_fix_routes(b, reached, avoid), ==, 1);
	assert_route(b, S4, (const uint8_t[]){ 1, 3, 2 }, 3);
	g_assert_cmpuint(reached[S2], ==, 1);
	/* both ways to S4 gone: not reached, its route left as it was */
	patch_unlink(b, S3, 2);
	g_assert_cmpuint(patch_fix_routes(b, reached, avoid), ==, 0);
	g_assert_cmpuint(reached[S4], ==, 0);
	model_builder_free(b);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/patch/routes/working-kept", test_working_kept);
	g_test_add_func("/patch/routes/broken-same-last-hop", test_broken_same_last_hop);
	g_test_add_func("/patch/routes/no-transit", test_no_transit);
	return g_test_run();
}
