/* SPDX-License-Identifier: BSD-2-Clause */
/* test_mcast_keys.c - OpenSM 3.3.23's multicast keys in the SA's MCMemberRecord joins:
 * mcgroup_join_validation (a join's Q_Key, P_Key, TClass, SL, FlowLabel, HopLimit against the
 * group's) and ipoib_mcgroup_creation_validation (a named MGID checked at creation; an IPoIB
 * group needs its partition's broadcast group and must match it), each on and off. */
#include <glib.h>
#include <string.h>
#include "sa/mcast_groups.h"
#include "sa/mcmember.h"
#include "sa/wire.h"

static void put_be(uint8_t *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

/* A join record: MGID (NULL: zero), the port, Q_Key QKEY, P_Key 0xffff, JoinState full. */
static void mcmr(uint8_t *r, const uint8_t *mgid, uint64_t port, uint32_t qkey)
{
	memset(r, 0, MCMR_SIZE);
	if (mgid)
		memcpy(r, mgid, 16);
	r[16] = 0xfe;
	r[17] = 0x80;
	put_be(r + 24, port, 8);
	put_be(r + 32, qkey, 4);
	put_be(r + 40, 0xffff, 2);
	r[48] = MC_FULL;
}

#define JOIN_MASK (MCMR_MGID | MCMR_PORT_GID | MCMR_JOIN_STATE)
#define CREATE (JOIN_MASK | MCMR_QKEY | MCMR_PKEY | MCMR_SL | MCMR_FLOW | MCMR_TCLASS)

static const uint8_t app_mgid[16] = { 0xff, 0x12, 0x12, 0x34, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };

/* A join naming another Q_Key: refused by default, taken with mcgroup_join_validation off. */
static void test_join_validation(void)
{
	struct mc_groups *g = mc_groups_new();
	struct mcm_env env = { .max_mtu = 4, .max_rate = 6, .packet_life = 18 };
	struct mcm_requester a = { .port_guid = 1 }, b = { .port_guid = 2 };
	uint8_t r[MCMR_SIZE], out[MCMR_SIZE];
	int created;
	mcmr(r, app_mgid, 1, 0x0b1b);
	g_assert_cmphex(mcm_join(g, &env, r, CREATE, &a, out, &created), ==, 0);
	mcmr(r, app_mgid, 2, 0x1234);
	g_assert_cmphex(mcm_join(g, &env, r, JOIN_MASK | MCMR_QKEY, &b, out, &created), ==,
			SA_ERR_REQ_INVALID);
	r[44] = 0x50; /* SL 5: the group has 0 */
	g_assert_cmphex(mcm_join(g, &env, r, JOIN_MASK | MCMR_SL, &b, out, &created), ==,
			SA_ERR_REQ_INVALID);
	env.no_join_check = 1;
	g_assert_cmphex(mcm_join(g, &env, r, JOIN_MASK | MCMR_QKEY | MCMR_SL, &b, out, &created), ==, 0);
	g_assert_false(created);
	g_assert_nonnull(mc_member(mc_find(g, app_mgid), 2));
	/* the answer carries the group's Q_Key, not the request's */
	g_assert_cmphex((uint32_t)out[32] << 24 | out[33] << 16 | out[34] << 8 | out[35], ==, 0x0b1b);
	/* MTU is checked either way */
	mcmr(r, app_mgid, 3, 0x0b1b);
	r[38] = (uint8_t)(0 << 6 | 4); /* greater than 2048: the group has 2048 at most */
	struct mcm_requester c = { .port_guid = 3 };
	g_assert_cmphex(mcm_join(g, &env, r, JOIN_MASK | MCMR_MTU_SEL | MCMR_MTU, &c, out, &created), ==,
			SA_ERR_REQ_INVALID);
	mc_groups_free(g);
}

/* ff12:401b:ffff::1 (an IPoIB MGID, not the broadcast group) is created only once
 * ff12:401b:ffff::ffff:ffff exists, and with its Q_Key; an MGID of flags 2 is refused; with
 * ipoib_mcgroup_creation_validation off, all of these are created. */
static void test_creation_validation(void)
{
	struct mc_groups *g = mc_groups_new();
	struct mcm_env env = { .max_mtu = 4, .max_rate = 6, .packet_life = 18 };
	struct mcm_requester a = { .port_guid = 1 };
	uint8_t r[MCMR_SIZE], out[MCMR_SIZE];
	int created;
	static const uint8_t ip[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
	static const uint8_t ip6[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
	static const uint8_t bcast[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0,
					   0xff, 0xff, 0xff, 0xff };
	static const uint8_t flags2[16] = { 0xff, 0x22, 0x12, 0x34, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9 };
	mcmr(r, ip, 1, 0x0b1b);
	g_assert_cmphex(mcm_join(g, &env, r, CREATE, &a, out, &created), ==, SA_ERR_REQ_INVALID);
	mcmr(r, flags2, 1, 0x0b1b);
	g_assert_cmphex(mcm_join(g, &env, r, CREATE, &a, out, &created), ==, SA_ERR_REQ_INVALID);
	mcmr(r, bcast, 1, 0x0b1b); /* the broadcast group itself needs nothing */
	g_assert_cmphex(mcm_join(g, &env, r, CREATE, &a, out, &created), ==, 0);
	g_assert_true(created);
	mcmr(r, ip, 1, 0x1234);     /* not the broadcast group's Q_Key */
	g_assert_cmphex(mcm_join(g, &env, r, CREATE, &a, out, &created), ==, SA_ERR_REQ_INVALID);
	mcmr(r, ip, 1, 0x0b1b);
	g_assert_cmphex(mcm_join(g, &env, r, CREATE, &a, out, &created), ==, 0);
	mcmr(r, ip6, 1, 0x0b1b);
	g_assert_cmphex(mcm_join(g, &env, r, CREATE, &a, out, &created), ==, 0);
	g_assert_nonnull(mc_find(g, ip6));
	mc_groups_free(g);

	/* off: no MGID check at all */
	g = mc_groups_new();
	env.no_create_check = 1;
	mcmr(r, ip, 1, 0x1234);
	g_assert_cmphex(mcm_join(g, &env, r, CREATE, &a, out, &created), ==, 0);
	g_assert_true(created);
	mcmr(r, flags2, 1, 0x0b1b);
	g_assert_cmphex(mcm_join(g, &env, r, CREATE, &a, out, &created), ==, 0);
	g_assert_nonnull(mc_find(g, flags2));
	mc_groups_free(g);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/mcast-keys/join-validation", test_join_validation);
	g_test_add_func("/mcast-keys/creation-validation", test_creation_validation);
	return g_test_run();
}
