/* SPDX-License-Identifier: BSD-2-Clause */
/* test_prefix_routes.c - OpenSM's prefix-routes.conf as ibsm reads it (sa/prefix_routes.h):
 * '*' wild cards, optional 0x, comments, bad lines skipped with FILE:LINE, and the router
 * picked: the first matching line whose router is present. */
#include <glib.h>
#include <string.h>
#include "sa/prefix_routes.h"

static uint64_t present_2_and_3(void *ctx, uint64_t guid)
{
	(void)ctx;
	if (guid == 0)
		return 0x2; /* the first router */
	return guid == 0x2 || guid == 0x3 ? guid : 0;
}

static void test_parse_and_pick(void)
{
	unsigned bad;
	GArray *a = prefix_routes_parse("pr.conf",
					"# routes\n"
					"fec0000000000000 0x9   # router 9 is gone\n"
					"0xfec0000000000000 3\n"
					"\n"
					"fec0000000000001 zz\n"          /* 5: bad */
					"fec0000000000002\n"             /* 6: bad */
					"* *\n", &bad);
	g_assert_cmpuint(bad, ==, 2);
	g_assert_cmpuint(a->len, ==, 3);
	/* fec0::/64: line 2 names a router not there, line 3 gives 3 */
	g_assert_cmphex(prefix_routes_pick(a, 0xfec0000000000000ull, present_2_and_3, NULL), ==, 3);
	/* any other prefix: "* *", the first router */
	g_assert_cmphex(prefix_routes_pick(a, 0xfec0000000000005ull, present_2_and_3, NULL), ==, 2);
	g_array_unref(a);
	a = prefix_routes_parse("pr.conf", "fec0000000000000 2\n", &bad);
	g_assert_cmphex(prefix_routes_pick(a, 0xfec0000000000001ull, present_2_and_3, NULL), ==, 0);
	g_array_unref(a);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/prefix-routes/parse-and-pick", test_parse_and_pick);
	return g_test_run();
}
