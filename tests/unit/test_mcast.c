/* SPDX-License-Identifier: BSD-2-Clause */
/* test_mcast.c - multicast in the SA, piece by piece: the MLID pool (lowest free
 * first, reuse, exhaustion, a hundred thousand create/delete cycles that leave it as it was),
 * then the group registry (join states, who keeps a group alive, ports that go away), then
 * MCMemberRecord joins, leaves and queries over it (create rules, selectors, P_Key, proxy). */
#include <glib.h>
#include <string.h>
#include "sa/mcast_groups.h"
#include "fabric_fixture.h"
#include "program/mft.h"
#include "sa/ipoib_groups.h"
#include "sa/mcmember.h"
#include "sa/wire.h"
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
	g_assert_cmpuint(mc_join(g, grp, 0xA, gid0, MC_FULL, 0), ==, MC_FULL);
	g_assert_cmpuint(mc_join(g, grp, 0xA, gid0, MC_NON_MEMBER, 0), ==, MC_FULL | MC_NON_MEMBER);
	g_assert_cmpuint(mc_join(g, grp, 0xB, gid0, MC_SEND_ONLY, 0), ==, MC_SEND_ONLY);
	g_assert_cmpuint(grp->n_full, ==, 1);
	g_assert_cmpuint(grp->members->len, ==, 2);
	/* A leaves as full member but stays a non-member: no full member left, the group goes */
	g_assert_cmpint(mc_join(g, grp, 0xC, gid0, MC_FULL, 1), ==, MC_FULL); /* C joined by proxy */
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
	mc_join(g, ipoib, 0xA, gid0, MC_FULL, 0);
	mc_join(g, a, 0xA, gid0, MC_FULL, 0);
	mc_join(g, b, 0xA, gid0, MC_FULL, 0);
	mc_join(g, b, 0xB, gid0, MC_FULL, 0);
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
			mc_join(g, grp, port, gid0, i % 2 ? MC_FULL : (MC_FULL | MC_NON_MEMBER), 0);
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

/* ---- MCMemberRecord ---- */

static void put_be(uint8_t *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

/* A join record: MGID (NULL: zero), the port, Q_Key 0x0b1b, P_Key 0xffff, SL 0, TClass 0,
 * FlowLabel 0, JoinState STATE. */
static void mcmr(uint8_t *r, const uint8_t *mgid, uint64_t port, uint8_t state)
{
	memset(r, 0, MCMR_SIZE);
	if (mgid)
		memcpy(r, mgid, 16);
	r[16] = 0xfe;
	r[17] = 0x80;
	put_be(r + 24, port, 8);
	put_be(r + 32, 0x0b1b, 4);
	put_be(r + 40, 0xffff, 2);
	r[48] = state;
}

#define JOIN_MASK (MCMR_MGID | MCMR_PORT_GID | MCMR_JOIN_STATE)
#define CREATE (JOIN_MASK | MCMR_QKEY | MCMR_PKEY | MCMR_SL | MCMR_FLOW | MCMR_TCLASS)

/* Every JoinState joins and leaves as on OpenSM 3.3.23: send-only full member (8) is kept as
 * 8, added to the others and taken back by a leave of 8; a port keeps what is left only while
 * it is full or another full member remains; the last full member takes a persistent group's
 * members with it. */
static void test_send_only_full(void)
{
	struct mc_groups *g = mc_groups_new();
	struct mc_params p = { .qkey = 0x0b1b, .pkey = 0xffff, .mtu = 4, .rate = 3 };
	uint8_t mgid[16];
	mgid_of(mgid, 2);
	struct mc_group *grp = mc_create(g, mgid, &p, 0);
	g_assert_cmpuint(mc_join(g, grp, 0xA, gid0, MC_FULL, 0), ==, MC_FULL);
	g_assert_cmpuint(mc_join(g, grp, 0xB, gid0, MC_SEND_ONLY_FULL, 0), ==, MC_SEND_ONLY_FULL);
	g_assert_cmpuint(mc_join(g, grp, 0xB, gid0, MC_NON_MEMBER, 0), ==, MC_SEND_ONLY_FULL | MC_NON_MEMBER);
	g_assert_cmpuint(mc_join(g, grp, 0xC, gid0, MC_SEND_ONLY, 0), ==, MC_SEND_ONLY);
	g_assert_cmpuint(grp->n_full, ==, 1);              /* 8 is no full membership for the group */
	g_assert_cmpint(mc_leave(g, grp, 0xB, MC_SEND_ONLY_FULL), ==, 0);
	g_assert_cmpuint(mc_member(grp, 0xB)->join_state, ==, MC_NON_MEMBER);
	g_assert_cmpint(mc_leave(g, grp, 0xB, MC_NON_MEMBER), ==, 0);
	g_assert_null(mc_member(grp, 0xB));                /* none left: no member */
	g_assert_cmpuint(mc_memberships(g, 0xB), ==, 0);
	/* A (full) takes back its full membership while holding 8 too: nobody else is full, so
	 * A goes, and the group with it */
	g_assert_cmpuint(mc_join(g, grp, 0xA, gid0, MC_SEND_ONLY_FULL, 0), ==, MC_FULL | MC_SEND_ONLY_FULL);
	g_assert_cmpint(mc_leave(g, grp, 0xA, MC_FULL), ==, 1);
	g_assert_null(mc_find(g, mgid));
	g_assert_cmpuint(mc_memberships(g, 0xC), ==, 0);
	/* persistent: emptied with its last full member, kept */
	grp = mc_create(g, mgid, &p, 1);
	mc_join(g, grp, 0xA, gid0, MC_FULL, 0);
	mc_join(g, grp, 0xB, gid0, MC_SEND_ONLY_FULL, 0);
	g_assert_cmpint(mc_leave(g, grp, 0xA, MC_FULL), ==, 0);
	g_assert_true(mc_find(g, mgid) == grp);
	g_assert_cmpuint(grp->members->len, ==, 0);
	/* through the SA: a join of 8 is answered 8, a leave of 8 takes it back */
	struct mcm_env env = { .max_mtu = 4, .max_rate = 6, .packet_life = 18 };
	struct mcm_requester a = { .port_guid = 1 }, b = { .port_guid = 2 };
	uint8_t r[MCMR_SIZE], out[MCMR_SIZE];
	int created, deleted;
	mcmr(r, NULL, 1, MC_SEND_ONLY_FULL);                 /* 8 alone creates nothing */
	g_assert_cmphex(mcm_join(g, &env, r, CREATE, &a, out, &created), ==, SA_ERR_REQ_INVALID);
	mcmr(r, NULL, 1, MC_FULL);
	g_assert_cmphex(mcm_join(g, &env, r, CREATE, &a, out, &created), ==, 0);
	uint8_t m2[16];
	memcpy(m2, out, 16);
	mcmr(r, m2, 2, MC_SEND_ONLY_FULL);
	g_assert_cmphex(mcm_join(g, &env, r, JOIN_MASK, &b, out, &created), ==, 0);
	g_assert_cmpuint(out[48] & 0xf, ==, MC_SEND_ONLY_FULL);
	g_assert_cmphex(mcm_leave(g, &env, r, JOIN_MASK, &b, out, &deleted), ==, 0);
	g_assert_cmpuint(out[48] & 0xf, ==, 0);
	g_assert_false(deleted);
	g_assert_null(mc_member(mc_find(g, m2), 2));
	g_assert_cmphex(mcm_leave(g, &env, r, JOIN_MASK, &b, out, &deleted), ==, SA_ERR_REQ_INVALID);
	mc_groups_free(g);
}

static int deny_port_7(void *ctx, uint64_t port, uint16_t pkey)
{
	(void)ctx;
	(void)pkey;
	return port != 7;
}

static void test_mcmember(void)
{
	struct mc_groups *g = mc_groups_new();
	struct mcm_env env = { .max_mtu = 4, .max_rate = 6, .packet_life = 18, .pkey_ok = deny_port_7 };
	struct mcm_requester a = { .port_guid = 1 }, b = { .port_guid = 2 }, sm = { .port_guid = 9, .trusted = 1 };
	uint8_t r[MCMR_SIZE], out[MCMR_SIZE];
	int created, deleted;
	/* create: the five parameters are needed */
	mcmr(r, NULL, 1, MC_FULL);
	g_assert_cmphex(mcm_join(g, &env, r, CREATE & ~MCMR_SL, &a, out, &created), ==,
			SA_ERR_REQ_INSUFFICIENT_COMPONENTS);
	g_assert_cmphex(mcm_join(g, &env, r, CREATE, &a, out, &created), ==, 0);
	g_assert_true(created);
	static const uint8_t want[16] = { 0xff, 0x12, 0xa0, 0x1b, 0xff, 0xff };
	g_assert_cmpmem(out, 4, want, 4);               /* MGID allocated: ff12:a01b:ffff:: */
	g_assert_cmphex(out[36] << 8 | out[37], ==, 0xC000);
	g_assert_cmpuint(out[38] & 0x3f, ==, 4);        /* the largest MTU the subnet has */
	g_assert_cmpuint(out[48] & 0xf, ==, MC_FULL);
	uint8_t mgid[16];
	memcpy(mgid, out, 16);
	/* join it: incompatible Q_Key, an MTU above the group's, an unknown group for a non-member */
	mcmr(r, mgid, 2, MC_NON_MEMBER);
	put_be(r + 32, 0x1234, 4);
	g_assert_cmphex(mcm_join(g, &env, r, JOIN_MASK | MCMR_QKEY, &b, out, &created), ==, SA_ERR_REQ_INVALID);
	mcmr(r, mgid, 2, MC_NON_MEMBER);
	r[38] = (uint8_t)(0 << 6 | 4);                    /* MTU greater than 2048: the group has 2048 */
	g_assert_cmphex(mcm_join(g, &env, r, JOIN_MASK | MCMR_MTU_SEL | MCMR_MTU, &b, out, &created), ==,
			SA_ERR_REQ_INVALID);
	r[38] = (uint8_t)(1 << 6 | 5);                    /* less than 4096: accepted */
	g_assert_cmphex(mcm_join(g, &env, r, JOIN_MASK | MCMR_MTU_SEL | MCMR_MTU, &b, out, &created), ==, 0);
	g_assert_false(created);
	g_assert_cmpuint(out[48] & 0xf, ==, MC_NON_MEMBER);
	uint8_t other[16];
	memcpy(other, mgid, 16);
	other[15] ^= 0x55;
	mcmr(r, other, 2, MC_NON_MEMBER);
	g_assert_cmphex(mcm_join(g, &env, r, JOIN_MASK, &b, out, &created), ==, SA_ERR_REQ_INVALID);
	/* proxy: port 3 joined by port 7 (outside the partition, no SM_Key) refused, by port 2
	 * (inside it) accepted, marked proxy; port 1's own membership is not port 2's to change */
	struct mcm_requester seven_rq = { .port_guid = 7 };
	mcmr(r, mgid, 3, MC_FULL);
	g_assert_cmphex(mcm_join(g, &env, r, JOIN_MASK, &seven_rq, out, &created), ==, SA_ERR_REQ_INVALID);
	g_assert_cmphex(mcm_join(g, &env, r, JOIN_MASK, &b, out, &created), ==, 0);
	g_assert_cmphex(out[49], ==, 0x80);
	mcmr(r, mgid, 1, MC_NON_MEMBER);
	g_assert_cmphex(mcm_join(g, &env, r, JOIN_MASK, &b, out, &created), ==, SA_ERR_REQ_INVALID);
	g_assert_cmphex(mcm_leave(g, &env, r, JOIN_MASK, &b, out, &deleted), ==, SA_ERR_REQ_INVALID);
	g_assert_cmphex(mcm_join(g, &env, r, JOIN_MASK, &sm, out, &created), ==, 0); /* the SM may */
	g_assert_cmphex(mcm_leave(g, &env, r, JOIN_MASK, &sm, out, &deleted), ==, 0);
	mcmr(r, mgid, 3, MC_FULL);
	/* P_Key: port 7 is not in the partition */
	struct mcm_requester seven = { .port_guid = 7 };
	mcmr(r, mgid, 7, MC_FULL);
	g_assert_cmphex(mcm_join(g, &env, r, JOIN_MASK, &seven, out, &created), ==, SA_ERR_REQ_INVALID);
	/* queries: trusted, the group's three members; untrusted, the group once with PortGID and
	 * JoinState zero; by PortGID that member (its JoinState only to the trusted) */
	GByteArray *recs = g_byte_array_new();
	mcmr(r, mgid, 0, 0);
	mcm_query(g, &env, r, MCMR_MGID, &sm, recs);
	g_assert_cmpuint(recs->len, ==, 3 * MCMR_SIZE);
	g_byte_array_set_size(recs, 0);
	mcm_query(g, &env, r, MCMR_MGID, &a, recs);
	g_assert_cmpuint(recs->len, ==, MCMR_SIZE);
	static const uint8_t zero16[16];
	g_assert_cmpmem(recs->data + 16, 16, zero16, 16);
	g_assert_cmpuint(recs->data[48] & 0xf, ==, 0);
	g_byte_array_set_size(recs, 0);
	mcmr(r, mgid, 2, 0);
	mcm_query(g, &env, r, MCMR_MGID | MCMR_PORT_GID, &sm, recs);
	g_assert_cmpuint(recs->len, ==, MCMR_SIZE);
	g_assert_cmpuint(recs->data[48] & 0xf, ==, MC_NON_MEMBER);
	g_byte_array_set_size(recs, 0);
	mcm_query(g, &env, r, MCMR_MGID | MCMR_PORT_GID, &a, recs);
	g_assert_cmpuint(recs->len, ==, MCMR_SIZE);
	g_assert_cmpuint(recs->data[48] & 0xf, ==, 0);
	/* a requester outside the partition sees no group */
	g_byte_array_set_size(recs, 0);
	mcm_query(g, &env, r, MCMR_MGID, &seven, recs);
	g_assert_cmpuint(recs->len, ==, 0);
	/* leaves: not joined so; partial; the last full members go and the group with them */
	mcmr(r, mgid, 2, MC_FULL);
	g_assert_cmphex(mcm_leave(g, &env, r, JOIN_MASK, &b, out, &deleted), ==, SA_ERR_REQ_INVALID);
	mcmr(r, mgid, 1, MC_FULL);
	g_assert_cmphex(mcm_leave(g, &env, r, JOIN_MASK, &a, out, &deleted), ==, 0);
	g_assert_false(deleted);                          /* port 3 is a full member too */
	mcmr(r, mgid, 3, MC_FULL);
	g_assert_cmphex(mcm_leave(g, &env, r, JOIN_MASK, &seven_rq, out, &deleted), ==, SA_ERR_REQ_INVALID);
	g_assert_cmphex(mcm_leave(g, &env, r, JOIN_MASK, &a, out, &deleted), ==, 0); /* proxied: a may */
	g_assert_true(deleted);
	g_assert_cmpuint(mc_count(g), ==, 0);
	g_assert_cmpuint(mc_mlids_in_use(g), ==, 0);
	/* a persistent group without members still answers a query, once */
	struct mc_params p = { .qkey = 0x0b1b, .pkey = 0xffff, .mtu = 4, .rate = 3 };
	mc_create(g, mgid, &p, 1);
	g_byte_array_set_size(recs, 0);
	mcm_query(g, &env, r, 0, &sm, recs);
	g_assert_cmpuint(recs->len, ==, 0);        /* trusted: a record per member, none */
	mcm_query(g, &env, r, 0, &a, recs);
	g_assert_cmpuint(recs->len, ==, MCMR_SIZE); /* untrusted: the group's record */
	g_byte_array_free(recs, TRUE);
	mc_groups_free(g);
}

/* What one host may take and what the switches can hold: every scope makes a group (the
 * reserved 0 and 15 too, as on OpenSM), named in the MGID or asked of the SA; no group beyond
 * the MLIDs every
 * switch's MFT holds (NO_RESOURCES, a group deleted gives its MLID back); a port joins at most
 * SA_MC_MAX_PER_PORT groups unless the SM_Key is presented, and a leave makes room again. */
static void test_mcmember_limits(void)
{
	struct mc_groups *g = mc_groups_new();
	struct mcm_env env = { .max_mtu = 4, .max_rate = 6, .packet_life = 18 };
	struct mcm_requester a = { .port_guid = 1 }, b = { .port_guid = 2 }, sm = { .port_guid = 9, .trusted = 1 };
	uint8_t r[MCMR_SIZE], out[MCMR_SIZE], mgid[16] = { 0xff, 0x12, 0x12, 0x34 }; /* not IPoIB's */
	int created, deleted;
	for (unsigned scope = 0; scope < 16; scope++) {
		mgid[1] = (uint8_t)(0x10 | scope);
		mgid[15] = (uint8_t)scope;
		mcmr(r, mgid, 1, MC_FULL);
		g_assert_cmphex(mcm_join(g, &env, r, CREATE, &a, out, &created), ==, 0);
		mcmr(r, NULL, 1, MC_FULL);                /* an SA-made MGID of that scope */
		r[48] = (uint8_t)(scope << 4 | MC_FULL);
		g_assert_cmphex(mcm_join(g, &env, r, CREATE | MCMR_SCOPE, &a, out, &created), ==, 0);
		g_assert_cmphex(out[1], ==, 0x10 | scope);
	}
	g_assert_cmpuint(mc_count(g), ==, 32);
	g_assert_cmpuint(mc_memberships(g, 1), ==, 32);
	/* switches holding 32 MLIDs (the 32 groups have them): NO_RESOURCES; a leave frees one */
	mc_set_mlid_limit(g, MLID_FIRST + 31);
	g_assert_cmphex(mc_mlid_limit(g), ==, 0xC01F);
	mcmr(r, NULL, 2, MC_FULL);
	g_assert_cmphex(mcm_join(g, &env, r, CREATE, &b, out, &created), ==, SA_ERR_NO_RESOURCES);
	g_assert_cmpuint(mc_mlids_in_use(g), ==, 32);
	mcmr(r, mgid, 1, MC_FULL);                          /* scope 15's, the last named */
	g_assert_cmphex(mcm_leave(g, &env, r, JOIN_MASK, &a, out, &deleted), ==, 0);
	g_assert_true(deleted);
	mcmr(r, NULL, 2, MC_FULL);
	g_assert_cmphex(mcm_join(g, &env, r, CREATE, &b, out, &created), ==, 0);
	g_assert_cmphex(out[36] << 8 | out[37], <=, 0xC01F);
	g_assert_cmphex(mcm_join(g, &env, r, CREATE, &b, out, &created), ==, SA_ERR_NO_RESOURCES);
	g_assert_cmpuint(mc_memberships(g, 1), ==, 31);
	g_assert_cmpuint(mc_memberships(g, 2), ==, 1);
	mc_groups_free(g);
	/* a port's share of groups */
	g = mc_groups_new();
	struct mc_params p = { .qkey = 0x0b1b, .pkey = 0xffff, .mtu = 4, .rate = 3, .scope = 2 };
	for (unsigned i = 0; i <= SA_MC_MAX_PER_PORT + 1; i++) {
		memset(mgid, 0, 16);
		mgid[0] = 0xff;
		mgid[1] = 0x12;
		put_be(mgid + 12, i, 4);
		g_assert_nonnull(mc_create(g, mgid, &p, 1));
		mcmr(r, mgid, 1, MC_FULL);
		uint16_t st = mcm_join(g, &env, r, JOIN_MASK, &a, out, &created);
		g_assert_cmphex(st, ==, i < SA_MC_MAX_PER_PORT ? 0 : SA_ERR_NO_RESOURCES);
		mcmr(r, mgid, 1, MC_NON_MEMBER);            /* a member already: more states are fine */
		if (i < SA_MC_MAX_PER_PORT)
			g_assert_cmphex(mcm_join(g, &env, r, JOIN_MASK, &a, out, &created), ==, 0);
	}
	g_assert_cmpuint(mc_memberships(g, 1), ==, SA_MC_MAX_PER_PORT);
	mcmr(r, mgid, 1, MC_FULL);
	g_assert_cmphex(mcm_join(g, &env, r, JOIN_MASK, &sm, out, &created), ==, 0); /* the SM_Key may */
	g_assert_cmpuint(mc_memberships(g, 1), ==, SA_MC_MAX_PER_PORT + 1);
	g_assert_cmphex(mcm_leave(g, &env, r, JOIN_MASK, &a, out, &deleted), ==, 0);
	g_assert_cmpuint(mc_memberships(g, 1), ==, SA_MC_MAX_PER_PORT);
	put_be(mgid + 12, SA_MC_MAX_PER_PORT - 1, 4);     /* the last joined: leave it ... */
	mcmr(r, mgid, 1, MC_FULL | MC_NON_MEMBER);
	g_assert_cmphex(mcm_leave(g, &env, r, JOIN_MASK, &a, out, &deleted), ==, 0);
	g_assert_cmpuint(mc_memberships(g, 1), ==, SA_MC_MAX_PER_PORT - 1);
	put_be(mgid + 12, SA_MC_MAX_PER_PORT, 4);         /* ... and one refused before is joined */
	mcmr(r, mgid, 1, MC_FULL);
	g_assert_cmphex(mcm_join(g, &env, r, JOIN_MASK, &a, out, &created), ==, 0);
	g_assert_cmpuint(mc_port_gone(g, 1), ==, 0);        /* persistent groups stay */
	g_assert_cmpuint(mc_memberships(g, 1), ==, 0);
	mc_groups_free(g);
}

/* The groups partitions.conf asks for: the default partition's broadcast group always, an
 * ipoib partition's with its flags (link-local whatever its scope=), mgid= groups with theirs
 * (P_Key filled in, Q_Key 0x0b1b for IPoIB ones, a second scope making a second group); made
 * once, however often asked. */
static void test_ipoib_groups(void)
{
	const char *text = "Default=0x7fff, ipoib : ALL=full ;\n"
			   "Storage=0x0002, ipoib, mtu=5, rate=7, sl=3, scope=5 : ALL=full ;\n"
			   "Apps=0x0003 :\n"
			   "  mgid=ff12:401b::0707, sl=1\n"
			   "  mgid=ff12::1, qkey=0xDEADBEEF, scope=2, scope=5\n"
			   "  ALL=full ;\n";
	GError *err = NULL;
	struct part_policy *pp = part_policy_parse_text(text, strlen(text), "p.conf", &err);
	g_assert_no_error(err);
	struct mc_groups *g = mc_groups_new();
	g_assert_cmpuint(ipoib_groups_create(g, pp, 18, 1), ==, 5);
	g_assert_cmpuint(ipoib_groups_create(g, pp, 18, 1), ==, 0);
	static const uint8_t def[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t sto[16] = { 0xff, 0x12, 0x40, 0x1b, 0x80, 0x02, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t app[16] = { 0xff, 0x12, 0x40, 0x1b, 0x80, 0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0x07, 0x07 };
	static const uint8_t all5[16] = { 0xff, 0x15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
	struct mc_group *d = mc_find(g, def), *s = mc_find(g, sto), *a = mc_find(g, app), *r = mc_find(g, all5);
	g_assert_nonnull(d);
	g_assert_cmphex(d->mlid, ==, 0xC000);
	g_assert_cmphex(d->p.qkey, ==, 0x0b1b);
	g_assert_cmphex(d->p.pkey, ==, 0xffff);
	g_assert_cmpuint(d->p.mtu, ==, 4);
	g_assert_cmpuint(d->p.rate, ==, 3);
	g_assert_true(d->persistent);
	g_assert_nonnull(s);
	g_assert_cmpuint(s->p.mtu, ==, 5);
	g_assert_cmpuint(s->p.rate, ==, 7);
	g_assert_cmpuint(s->p.sl, ==, 3);
	g_assert_cmphex(s->p.pkey, ==, 0x8002);
	g_assert_nonnull(a);
	g_assert_cmpuint(a->p.sl, ==, 1);
	g_assert_cmphex(a->p.qkey, ==, 0x0b1b);
	g_assert_nonnull(r);
	g_assert_cmphex(r->p.qkey, ==, 0xdeadbeef);
	mc_groups_free(g);
	part_policy_free(pp);
	/* no partitions file: the default partition's group alone */
	g = mc_groups_new();
	g_assert_cmpuint(ipoib_groups_create(g, NULL, 18, 1), ==, 1);
	g_assert_nonnull(mc_find(g, def));
	mc_groups_free(g);
}

/* As OpenSM 3.3.23: an mgid= group without scope= is made link-local (ff15::1 becomes ff12::1),
 * mgid= items inherit the header's scopes and sl=; each scope= is one group more (HopLimit 255
 * beyond link-local); the broadcast group stays link-local; without QoS a partition's sl= is
 * 0, an sl= on the mgid item stays. */
static void test_ipoib_group_scopes(void)
{
	const char *text = "Default=0x7fff : ALL=full ;\n"
			   "A=0x0004, ipoib, sl=3, scope=2, scope=5 : mgid=ff15::1, mgid=ff12::9, sl=6 ;\n"
			   "B=0x0005 : mgid=ff15::7 ;\n";
	GError *err = NULL;
	struct part_policy *pp = part_policy_parse_text(text, strlen(text), "p.conf", &err);
	g_assert_no_error(err);
	for (int qos = 0; qos <= 1; qos++) {
		struct mc_groups *g = mc_groups_new();
		/* Default's broadcast, A's (link-local only), ff12::1 ff15::1 ff12::9 ff15::9, ff12::7 */
		g_assert_cmpuint(ipoib_groups_create(g, pp, 18, qos), ==, 7);
		static const uint8_t a2[16] = { 0xff, 0x12, 0x40, 0x1b, 0x80, 0x04, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
		static const uint8_t a5[16] = { 0xff, 0x15, 0x40, 0x1b, 0x80, 0x04, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
		static const uint8_t b7[16] = { 0xff, 0x12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7 };
		static const uint8_t b7_5[16] = { 0xff, 0x15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7 };
		static const uint8_t m9[16] = { 0xff, 0x15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9 };
		static const uint8_t m1[16] = { 0xff, 0x12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
		static const uint8_t m1_5[16] = { 0xff, 0x15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
		struct mc_group *x2 = mc_find(g, a2), *x5 = mc_find(g, m1_5), *y = mc_find(g, b7),
				*z = mc_find(g, m9), *w = mc_find(g, m1);
		g_assert_nonnull(x2);
		g_assert_null(mc_find(g, a5));
		g_assert_nonnull(x5);
		g_assert_nonnull(y);
		g_assert_null(mc_find(g, b7_5));
		g_assert_nonnull(z);
		g_assert_nonnull(w);
		g_assert_cmpuint(x2->p.hop_limit, ==, 0);
		g_assert_cmpuint(x5->p.hop_limit, ==, 255);
		g_assert_cmpuint(x5->p.scope, ==, 5);
		g_assert_cmpuint(y->p.scope, ==, 2);
		g_assert_cmpuint(x2->p.sl, ==, qos ? 3 : 0);
		g_assert_cmpuint(w->p.sl, ==, qos ? 3 : 0); /* inherited */
		g_assert_cmpuint(z->p.sl, ==, 6);           /* its own */
		mc_groups_free(g);
	}
	part_policy_free(pp);
}

static const uint64_t *no_groups(void *ctx, uint32_t sw, uint16_t mlid)
{
	(void)ctx; (void)sw; (void)mlid;
	return NULL;
}

/* The MFT memory before it holds anything: forgetting, asking about a switch it never saw
 * (a new mastership comes before any multicast work; UBSan caught a memset of nothing). */
static void test_mft_memory_empty(void)
{
	struct mft_memory *m = mft_memory_new(NULL);
	mft_memory_forget(m);
	/* switches seen with no group in use: remembered with no blocks; then a new mastership */
	struct fabric *f = fx_kary_ntree(2, 2, 0);
	for (uint32_t s = 0; s < f->pub.n_switches; s++)
		f->nx[f->switches[s].node].have_switchinfo = 1;
	struct mft_stats st;
	g_assert_cmpuint(mft_program(m, f, 0, no_groups, NULL, &st), ==, 0);
	mft_memory_forget(m);
	fabric_unref(f);
	uint8_t pos = 9;
	uint16_t out[MFT_BLOCK_MLIDS];
	g_assert_cmpuint(mft_memory_nblocks(m, 0x1234, &pos), ==, 0);
	g_assert_cmpuint(pos, ==, 0);
	g_assert_cmpint(mft_memory_block(m, 0x1234, 0, 0, out), ==, 0);
	g_assert_cmpuint(mft_in_flight(m), ==, 0);
	mft_memory_free(m);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/mcast/mlid-order-reuse", test_mlid_order_and_reuse);
	g_test_add_func("/mcast/mlid-exhaustion", test_mlid_exhaustion);
	g_test_add_func("/mcast/mlid-cycles", test_mlid_cycles);
	g_test_add_func("/mcast/join-states", test_join_states);
	g_test_add_func("/mcast/send-only-full", test_send_only_full);
	g_test_add_func("/mcast/persistent-port-gone", test_persistent_and_port_gone);
	g_test_add_func("/mcast/group-cycles", test_group_cycles);
	g_test_add_func("/mcast/mcmember", test_mcmember);
	g_test_add_func("/mcast/mcmember-limits", test_mcmember_limits);
	g_test_add_func("/mcast/mft-memory-empty", test_mft_memory_empty);
	g_test_add_func("/mcast/ipoib-groups", test_ipoib_groups);
	g_test_add_func("/mcast/ipoib-group-scopes", test_ipoib_group_scopes);
	return g_test_run();
}
