/* SPDX-License-Identifier: BSD-2-Clause */
/* test_mcast_tree.c - the core's default multicast spanning trees (routing/mcast_tree.c),
 * judged by flooding a copy from every member along the port masks as switches forward
 * (never back out of the ingress port): every other member gets exactly one copy, no switch
 * is entered twice, no bit points at a port that is down or unlinked; on tori and fat trees,
 * for groups of every size, with a link down, and with parallel links shared out by MLID. */
#include <glib.h>
#include <string.h>
#include "fabric_fixture.h"
#include "routing/mcast_tree.h"

static int bit(const uint64_t *m, unsigned p)
{
	return (int)((m[p >> 6] >> (p & 63)) & 1);
}

/* The flood judge; returns the number of faults (0: a good tree), and why in *why. */
static unsigned judge(const struct fabric *f, const uint64_t (*egress)[4], const uint32_t *members,
		      uint32_t n, GString *why)
{
	unsigned faults = 0;
	uint32_t ns = f->pub.n_switches;
	unsigned *got = g_new0(unsigned, f->pub.n_ports);
	uint8_t *seen = g_new0(uint8_t, ns);
	uint32_t *qs = g_new(uint32_t, ns * 256 + 1), *qi = g_new(uint32_t, ns * 256 + 1);
	/* no bit on a port without an ACTIVE link (port 0 excepted) */
	for (uint32_t s = 0; s < ns; s++) {
		const struct ibsm_node *nd = &f->nodes[f->switches[s].node];
		for (unsigned p = 1; p <= nd->nports; p++) {
			const struct ibsm_port *x = &f->ports[nd->port0 + p];
			if (bit(egress[s], p) && (x->peer == IBSM_NONE || x->state != IBSM_STATE_ACTIVE ||
						  f->ports[x->peer].state != IBSM_STATE_ACTIVE)) {
				g_string_append_printf(why, "switch %u port %u: bit on a dead port; ", s, p);
				faults++;
			}
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t m = members[i];
		memset(got, 0, f->pub.n_ports * sizeof(unsigned));
		memset(seen, 0, ns);
		uint32_t head = 0, tail = 0, peer = f->ports[m].peer;
		qs[tail] = f->nodes[f->ports[peer].node].sw;
		qi[tail++] = f->ports[peer].num;
		while (head < tail) {
			uint32_t s = qs[head], in = qi[head++];
			if (seen[s]++) {
				g_string_append_printf(why, "from %u: switch %u entered twice; ", m, s);
				faults++;
				continue;
			}
			const struct ibsm_node *nd = &f->nodes[f->switches[s].node];
			for (unsigned p = 1; p <= nd->nports; p++) {
				if (p == in || !bit(egress[s], p) || f->ports[nd->port0 + p].peer == IBSM_NONE)
					continue;
				uint32_t q = f->ports[nd->port0 + p].peer;
				const struct ibsm_node *pn = &f->nodes[f->ports[q].node];
				if (pn->type == IBSM_SWITCH) {
					qs[tail] = pn->sw;
					qi[tail++] = f->ports[q].num;
				} else {
					got[q]++;
				}
			}
		}
		for (uint32_t j = 0; j < n; j++) {
			unsigned want = members[j] == m ? 0 : 1;
			if (got[members[j]] != want) {
				g_string_append_printf(why, "%u -> %u: %u copies; ", m, members[j], got[members[j]]);
				faults++;
			}
		}
	}
	g_free(got);
	g_free(seen);
	g_free(qs);
	g_free(qi);
	return faults;
}

/* Random groups of every size over the CAs of f, several MLIDs each: all trees good. */
static void check_groups(struct fabric *f, unsigned n_cas, unsigned rounds)
{
	struct mcast_topo *t = mcast_topo_new(f);
	GRand *rnd = g_rand_new_with_seed(12);
	uint32_t *members = g_new(uint32_t, n_cas);
	uint64_t (*egress)[4] = g_malloc0(sizeof(uint64_t[4]) * f->pub.n_switches);
	for (unsigned r = 0; r < rounds; r++) {
		unsigned n = r < 3 ? r + 1 : (unsigned)g_rand_int_range(rnd, 1, (gint32)n_cas + 1);
		if (r == rounds - 1)
			n = n_cas;
		/* n distinct CAs */
		for (unsigned i = 0; i < n_cas; i++)
			members[i] = i;
		for (unsigned i = 0; i < n; i++) {
			unsigned j = (unsigned)g_rand_int_range(rnd, (gint32)i, (gint32)n_cas);
			uint32_t x = members[i];
			members[i] = members[j];
			members[j] = x;
		}
		for (unsigned i = 0; i < n; i++)
			members[i] = fx_ca_port(&f->pub, members[i], 1);
		memset(egress, 0, sizeof(uint64_t[4]) * f->pub.n_switches);
		uint16_t mlid = (uint16_t)(0xC000 + r);
		int sw = mcast_tree_build(t, mlid, members, n, egress);
		GString *why = g_string_new(NULL);
		unsigned faults = judge(f, (const uint64_t (*)[4])egress, members, n, why);
		if (faults)
			g_test_message("MLID 0x%04x, %u members: %s", mlid, n, why->str);
		g_assert_cmpuint(faults, ==, 0);
		g_assert_cmpint(sw, >=, 1);
		g_string_free(why, TRUE);
	}
	g_free(egress);
	g_free(members);
	g_rand_free(rnd);
	mcast_topo_free(t);
}

static void test_torus(void)
{
	struct fabric *f = fx_torus2d(5, 5, 2, 0);
	check_groups(f, 50, 40);
	fabric_unref(f);
}

static void test_fat_tree(void)
{
	struct fabric *f = fx_kary_ntree(4, 3, 0); /* 64 hosts, 48 switches */
	check_groups(f, 64, 40);
	/* members all under one leaf: the tree is that leaf alone (no dead-end climb) */
	struct mcast_topo *t = mcast_topo_new(f);
	uint32_t m[3] = { fx_ca_port(&f->pub, 0, 1), fx_ca_port(&f->pub, 1, 1), fx_ca_port(&f->pub, 2, 1) };
	uint64_t (*egress)[4] = g_malloc0(sizeof(uint64_t[4]) * f->pub.n_switches);
	g_assert_cmpint(mcast_tree_build(t, 0xC000, m, 3, egress), ==, 1);
	g_free(egress);
	mcast_topo_free(t);
	fabric_unref(f);
}

/* A link taken down: no tree uses it, and every group is still whole. */
static void test_link_down(void)
{
	struct fabric *f = fx_torus2d(4, 4, 1, 0);
	uint32_t p = fx_switch_port(&f->pub, 5, 2); /* switch 5, x+ */
	f->ports[p].state = IBSM_STATE_DOWN;
	f->ports[f->ports[p].peer].state = IBSM_STATE_DOWN;
	check_groups(f, 16, 30);
	fabric_unref(f);
}

/* Parallel links (a torus dimension of 2): groups spread over them by MLID. */
static void test_parallel(void)
{
	struct fabric *f = fx_torus2d(2, 1, 1, 0); /* two switches joined by two links */
	struct mcast_topo *t = mcast_topo_new(f);
	uint32_t m[2] = { fx_ca_port(&f->pub, 0, 1), fx_ca_port(&f->pub, 1, 1) };
	unsigned used[8] = { 0 };
	for (uint16_t mlid = 0xC000; mlid < 0xC008; mlid++) {
		uint64_t egress[2][4] = { { 0 } };
		g_assert_cmpint(mcast_tree_build(t, mlid, m, 2, egress), ==, 2);
		GString *why = g_string_new(NULL);
		g_assert_cmpuint(judge(f, (const uint64_t (*)[4])egress, m, 2, why), ==, 0);
		g_string_free(why, TRUE);
		for (unsigned p = 1; p <= 2; p++)
			used[p] += bit(egress[0], p);
	}
	g_assert_cmpuint(used[1], ==, 4); /* half the groups on each link */
	g_assert_cmpuint(used[2], ==, 4);
	mcast_topo_free(t);
	fabric_unref(f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/mcast-tree/torus", test_torus);
	g_test_add_func("/mcast-tree/fat-tree", test_fat_tree);
	g_test_add_func("/mcast-tree/link-down", test_link_down);
	g_test_add_func("/mcast-tree/parallel", test_parallel);
	return g_test_run();
}
