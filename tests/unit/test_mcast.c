/* SPDX-License-Identifier: BSD-2-Clause */
/* test_mcast.c - multicast in the SA (issue 12), piece by piece: the MLID pool (lowest free
 * first, reuse, exhaustion, a hundred thousand create/delete cycles that leave it as it was),
 * then the group registry (join states, who keeps a group alive, ports that go away). */
#include <glib.h>
#include <string.h>
#include "sa/mcast_groups.h"
#include "sa/mlid.h"

static void test_mlid_order_and_reuse(void)
{
	struct mlid_pool *p = mlid_pool_new();
	g_assert_cmphex(mlid_alloc(p), ==, 0xC000);
	g_assert_cmphex(mlid_alloc(p), ==, 0xC001);
	g_assert_cmphex(mlid_alloc(p), ==, 0xC002);
	mlid_release(p, 0xC001);
	g_assert_cmpuint(mlid_in_use(p), ==, 2);
	g_assert_cmphex(mlid_alloc(p), ==, 0xC001); /* the lowest free again */
	g_assert_cmphex(mlid_alloc(p), ==, 0xC003);
	mlid_release(p, 0xC001);
	mlid_release(p, 0xC001);                      /* twice: ignored */
	mlid_release(p, 0x0010);                      /* not an MLID: ignored */
	g_assert_cmpuint(mlid_in_use(p), ==, 3);
	g_assert_cmpint(mlid_take(p, 0xC002), ==, -1); /* in use */
	g_assert_cmpint(mlid_take(p, 0xFFFF), ==, -1); /* the permissive LID */
	g_assert_cmpint(mlid_take(p, 0xC100), ==, 0);
	g_assert_cmphex(mlid_alloc(p), ==, 0xC001);
	g_assert_cmpuint(mlid_in_use(p), ==, 5);
	mlid_pool_free(p);
}

static void test_mlid_exhaustion(void)
{
	struct mlid_pool *p = mlid_pool_new();
	unsigned n = 0;
	uint16_t last = 0, m;
	while ((m = mlid_alloc(p)) != 0) {
		g_assert_cmphex(m, ==, MLID_FIRST + n);
		last = m;
		n++;
	}
	g_assert_cmpuint(n, ==, MLID_LAST - MLID_FIRST + 1);
	g_assert_cmphex(last, ==, MLID_LAST);
	g_assert_cmphex(mlid_alloc(p), ==, 0); /* all taken: 0, and still 0 */
	mlid_release(p, 0xD123);
	g_assert_cmphex(mlid_alloc(p), ==, 0xD123);
	g_assert_cmphex(mlid_alloc(p), ==, 0);
	mlid_pool_free(p);
}

/* Groups coming and going 100 000 times, a few alive at once: no MLID is lost. */
static void test_mlid_cycles(void)
{
	struct mlid_pool *p = mlid_pool_new();
	uint16_t live[7] = { 0 };
	for (unsigned i = 0; i < 100000; i++) {
		unsigned k = i % 7;
		if (live[k])
			mlid_release(p, live[k]);
		live[k] = mlid_alloc(p);
		g_assert_cmphex(live[k], >=, MLID_FIRST);
		g_assert_cmphex(live[k], <, MLID_FIRST + 7);
	}
	g_assert_cmpuint(mlid_in_use(p), ==, 7);
	for (unsigned k = 0; k < 7; k++)
		mlid_release(p, live[k]);
	g_assert_cmpuint(mlid_in_use(p), ==, 0);
	g_assert_cmphex(mlid_alloc(p), ==, MLID_FIRST);
	mlid_pool_free(p);
}

static void mgid_of(uint8_t *mgid, unsigned n)
{
	static const uint8_t base[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff };
	memcpy(mgid, base, 16);
	mgid[14] = (uint8_t)(n >> 8);
	mgid[15] = (uint8_t)n;
}

static const uint8_t gid0[16] = { 0xfe, 0x80 };

/* Join states add up per port and leave bit by bit; the group lives while a full member does. */
static void test_join_states(void)
{
	struct mc_groups *g = mc_groups_new();
	struct mc_params p = { .qkey = 0x0b1b, .pkey = 0xffff, .mtu = 4, .rate = 3 };
	uint8_t mgid[16];
	mgid_of(mgid, 1);
	struct mc_group *grp = mc_create(g, mgid, &p, 0);
	g_assert_nonnull(grp);
	g_assert_cmphex(grp->mlid, ==, 0xC000);
	g_assert_null(mc_create(g, mgid, &p, 0));            /* the MGID exists */
	g_assert_true(mc_find(g, mgid) == grp);
	g_assert_true(mc_find_mlid(g, 0xC000) == grp);
	g_assert_cmpuint(mc_join(grp, 0xA, gid0, MC_FULL, 0), ==, MC_FULL);
	g_assert_cmpuint(mc_join(grp, 0xA, gid0, MC_NON_MEMBER, 0), ==, MC_FULL | MC_NON_MEMBER);
	g_assert_cmpuint(mc_join(grp, 0xB, gid0, MC_SEND_ONLY, 0), ==, MC_SEND_ONLY);
	g_assert_cmpuint(grp->n_full, ==, 1);
	g_assert_cmpuint(grp->members->len, ==, 2);
	/* A leaves as full member but stays a non-member: no full member left, the group goes */
	g_assert_cmpint(mc_join(grp, 0xC, gid0, MC_FULL, 1), ==, MC_FULL); /* C joined by proxy */
	g_assert_true(mc_member(grp, 0xC)->proxy);
	g_assert_cmpint(mc_leave(g, grp, 0xA, MC_FULL), ==, 0);  /* C keeps it */
	g_assert_cmpuint(mc_member(grp, 0xA)->join_state, ==, MC_NON_MEMBER);
	g_assert_cmpint(mc_leave(g, grp, 0xD, MC_FULL), ==, -1); /* not a member */
	g_assert_cmpint(mc_leave(g, grp, 0xC, MC_FULL), ==, 1);  /* the last full member: deleted */
	g_assert_null(mc_find(g, mgid));
	g_assert_cmpuint(mc_mlids_in_use(g), ==, 0);
	g_assert_cmpuint(mc_count(g), ==, 0);
	mc_groups_free(g);
}

/* A persistent group (IPoIB from partitions.conf) outlives its members; a port gone leaves all. */
static void test_persistent_and_port_gone(void)
{
	struct mc_groups *g = mc_groups_new();
	struct mc_params p = { .qkey = 0x0b1b, .pkey = 0xffff };
	uint8_t m1[16], m2[16], m3[16];
	mgid_of(m1, 1);
	mgid_of(m2, 2);
	mgid_of(m3, 3);
	struct mc_group *ipoib = mc_create(g, m1, &p, 1);
	struct mc_group *a = mc_create(g, m2, &p, 0);
	struct mc_group *b = mc_create(g, m3, &p, 0);
	mc_join(ipoib, 0xA, gid0, MC_FULL, 0);
	mc_join(a, 0xA, gid0, MC_FULL, 0);
	mc_join(b, 0xA, gid0, MC_FULL, 0);
	mc_join(b, 0xB, gid0, MC_FULL, 0);
	g_assert_cmpuint(mc_port_gone(g, 0xA), ==, 1); /* a went with it; b has B; IPoIB stays */
	g_assert_cmpuint(mc_count(g), ==, 2);
	g_assert_nonnull(mc_find(g, m1));
	g_assert_null(mc_find(g, m2));
	g_assert_cmpuint(ipoib->members->len, ==, 0);
	g_assert_cmpuint(b->members->len, ==, 1);
	/* the freed MLID is the next one given */
	uint8_t m4[16];
	mgid_of(m4, 4);
	g_assert_cmphex(mc_create(g, m4, &p, 0)->mlid, ==, 0xC001);
	mc_groups_free(g);
}

/* 100 000 join/leave cycles over a few groups: MLIDs and groups return to where they started. */
static void test_group_cycles(void)
{
	struct mc_groups *g = mc_groups_new();
	struct mc_params p = { .qkey = 1, .pkey = 0xffff };
	for (unsigned i = 0; i < 100000; i++) {
		uint8_t mgid[16];
		mgid_of(mgid, i % 5);
		struct mc_group *grp = mc_find(g, mgid);
		if (!grp)
			grp = mc_create(g, mgid, &p, 0);
		g_assert_nonnull(grp);
		uint64_t port = 0x100 + i % 3;
		if (mc_member(grp, port))
			mc_leave(g, grp, port, MC_STATES);
		else
			mc_join(grp, port, gid0, i % 2 ? MC_FULL : (MC_FULL | MC_NON_MEMBER), 0);
	}
	unsigned live = mc_count(g);
	g_assert_cmpuint(mc_mlids_in_use(g), ==, live);
	g_assert_cmpuint(live, <=, 5);
	for (uint64_t port = 0x100; port < 0x103; port++)
		mc_port_gone(g, port);
	g_assert_cmpuint(mc_count(g), ==, 0);
	g_assert_cmpuint(mc_mlids_in_use(g), ==, 0);
	mc_groups_free(g);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/mcast/mlid-order-reuse", test_mlid_order_and_reuse);
	g_test_add_func("/mcast/mlid-exhaustion", test_mlid_exhaustion);
	g_test_add_func("/mcast/mlid-cycles", test_mlid_cycles);
	g_test_add_func("/mcast/join-states", test_join_states);
	g_test_add_func("/mcast/persistent-port-gone", test_persistent_and_port_gone);
	g_test_add_func("/mcast/group-cycles", test_group_cycles);
	return g_test_run();
}
