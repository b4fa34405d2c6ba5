/* test_ftree.c - the fat-tree engine plugin on small in-memory trees: ranking, each fat-tree
 * rule broken on purpose (the why must name the rule and the switch), delivery of every pair,
 * congestion-free shift permutations on full k-ary n-trees, partially populated and degraded
 * trees (switch LIDs reached, the non-up/down routes counted), compute-node and I/O-node
 * files with max_reverse_hops, the scope, and the CA-order dump file. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <gmodule.h>
#include "fabric_fixture.h"

static const struct ibsm_engine *ftree;

/* ---- building trees with defects -------------------------------------------------------- */

/* A k-ary n-tree (n = 2 or 3) built by hand so links can be dropped or doubled and extra CAs
 * hung anywhere. Switch ids: leaves, then (n = 3) aggregation switches pod by pod, then the
 * top switches. Leaf ports 1..k hosts, k+1..2k up; upper switches 1..k down, k+1..2k up;
 * ports 2k+1, 2k+2 spare (extra CAs, parallel links). */
struct tree_spec {
	unsigned k, n;
	const unsigned *hosts;          /* per leaf, NULL: k each */
	int drop_leaf, drop_up;         /* drop the link leaf drop_leaf : its up port drop_up */
	int double_leaf;                /* leaf whose first up link is doubled (spare port) */
	int io_sw[2];                   /* switch ids getting one extra CA on port 2k+1 */
};

static struct fabric *build_tree(const struct tree_spec *sp)
{
	unsigned k = sp->k, n = sp->n;
	unsigned nleaf = n == 2 ? k : k * k, nagg = n == 2 ? 0 : k * k, ntop = k * (n == 2 ? 1 : k);
	uint32_t sw[256];
	struct fx_builder x;
	fx_builder_init(&x);
	unsigned nsw = nleaf + nagg + ntop;
	/* hosts first so CA GUIDs follow leaf order */
	unsigned nh = 0;
	uint32_t host[1024], host_leaf[1024], host_port[1024];
	for (unsigned l = 0; l < nleaf; l++) {
		unsigned h = sp->hosts ? sp->hosts[l] : k;
		for (unsigned i = 0; i < h; i++) {
			char d[32];
			snprintf(d, sizeof(d), "host-%u", nh);
			host[nh] = fx_add_ca(&x, 1, d);
			host_leaf[nh] = l;
			host_port[nh] = i + 1;
			nh++;
		}
	}
	uint32_t io[2];
	for (int i = 0; i < 2; i++)
		if (sp->io_sw[i] >= 0) {
			char d[32];
			snprintf(d, sizeof(d), "io-%d", i);
			io[i] = fx_add_ca(&x, 1, d);
		}
	for (unsigned s = 0; s < nsw; s++) {
		char d[32];
		snprintf(d, sizeof(d), s < nleaf ? "leaf-%u" : s < nleaf + nagg ? "agg-%u" : "top-%u",
			 s);
		sw[s] = fx_add_switch(&x, (uint8_t)(2 * k + 2), d);
	}
	for (unsigned i = 0; i < nh; i++)
		fx_link(&x, sw[host_leaf[i]], (uint8_t)host_port[i], host[i], 1);
	for (int i = 0; i < 2; i++)
		if (sp->io_sw[i] >= 0)
			fx_link(&x, sw[sp->io_sw[i]], (uint8_t)(2 * k + 1), io[i], 1);
	if (n == 2) {
		for (unsigned l = 0; l < k; l++)
			for (unsigned j = 0; j < k; j++) {
				if ((int)l == sp->drop_leaf && (int)j == sp->drop_up)
					continue;
				fx_link(&x, sw[l], (uint8_t)(k + 1 + j), sw[nleaf + j], (uint8_t)(l + 1));
			}
		if (sp->double_leaf >= 0)
			fx_link(&x, sw[sp->double_leaf], (uint8_t)(2 * k + 2), sw[nleaf],
				(uint8_t)(2 * k + 2));
	} else {
		for (unsigned p = 0; p < k; p++)
			for (unsigned a = 0; a < k; a++)
				for (unsigned b = 0; b < k; b++) {
					unsigned l = p * k + a;
					if ((int)l == sp->drop_leaf && (int)b == sp->drop_up)
						continue;
					fx_link(&x, sw[l], (uint8_t)(k + 1 + b), sw[nleaf + p * k + b],
						(uint8_t)(a + 1));
				}
		for (unsigned p = 0; p < k; p++)
			for (unsigned b = 0; b < k; b++)
				for (unsigned c = 0; c < k; c++)
					fx_link(&x, sw[nleaf + p * k + b], (uint8_t)(k + 1 + c),
						sw[nleaf + nagg + b * k + c], (uint8_t)(p + 1));
	}
	return fx_finish(&x, 0);
}

static struct tree_spec spec(unsigned k, unsigned n)
{
	struct tree_spec s = { .k = k, .n = n, .drop_leaf = -1, .drop_up = -1, .double_leaf = -1,
			       .io_sw = { -1, -1 } };
	return s;
}

/* ---- judging ----------------------------------------------------------------------------- */

static unsigned n_cas(const struct ibsm_fabric *f)
{
	unsigned n = 0;
	for (uint32_t p = 0; p < f->n_ports; p++)
		n += (unsigned)fx_is_ca_port(f, p);
	return n;
}

/* Worst directed switch-port load over all shift permutations of the CA ports (GUID order,
 * single-port CAs). Returns the maximum; *undelivered counts pairs that did not arrive. */
static unsigned worst_shift(const struct ibsm_fabric *f, const uint8_t *lft, uint32_t stride,
			    unsigned *undelivered)
{
	unsigned N = n_cas(f), worst = 0;
	uint32_t *ca = g_new(uint32_t, N);
	uint32_t *load = g_new(uint32_t, f->n_ports);
	for (unsigned i = 0; i < N; i++)
		ca[i] = fx_ca_port(f, i, 1);
	*undelivered = 0;
	for (unsigned sh = 1; sh < N; sh++) {
		memset(load, 0, f->n_ports * sizeof(*load));
		for (unsigned i = 0; i < N; i++) {
			uint32_t src = ca[i], dst = ca[(i + sh) % N];
			uint16_t dlid = f->ports[dst].lid;
			uint32_t node = f->ports[f->ports[src].peer].node;
			unsigned steps = 0;
			for (;;) {
				const struct ibsm_node *nd = &f->nodes[node];
				uint8_t out = lft[(size_t)nd->sw * stride + dlid];
				if (out == IBSM_NO_PORT || out == 0 || out > nd->nports || ++steps > 64) {
					(*undelivered)++;
					break;
				}
				uint32_t pid = nd->port0 + out;
				if (++load[pid] > worst)
					worst = load[pid];
				uint32_t peer = f->ports[pid].peer;
				if (peer == dst)
					break;
				if (peer == IBSM_NONE ||
				    f->nodes[f->ports[peer].node].type != IBSM_SWITCH) {
					(*undelivered)++;
					break;
				}
				node = f->ports[peer].node;
			}
		}
	}
	g_free(ca);
	g_free(load);
	return worst;
}

static int run(struct fx_core *c, struct fabric *f, const struct ibsm_scope *sc, struct fx_run *r)
{
	int rc = fx_route(ftree, c, &f->pub, sc, r);
	if (rc < 0)
		g_test_message("ftree declined: %s", r->routes.why);
	return rc;
}

static void check_all_pairs(struct fabric *f, struct fx_run *r, const char *what)
{
	struct fx_walk_stats st;
	fx_walk_all(&f->pub, r->routes.lft, r->routes.stride, &st);
	g_test_message("%s: %u pairs, %u delivered, %u longer, max %u hops", what, st.pairs,
		       st.delivered, st.longer, st.max_hops);
	g_assert_cmpuint(st.pairs, >, 0);
	g_assert_cmpuint(st.loops + st.black_holes + st.wrong, ==, 0);
	g_assert_cmpuint(st.delivered, ==, st.pairs);
}

/* ---- tests ------------------------------------------------------------------------------- */

static void test_engine_symbol(void)
{
	g_assert_nonnull(ftree);
	g_assert_cmpstr(ftree->name, ==, "ftree");
	g_assert_cmpuint(ftree->abi_major, ==, IBSM_ABI_MAJOR);
	g_assert_cmpuint(ftree->size, ==, sizeof(struct ibsm_engine));
	g_assert_nonnull(ftree->dump);
	g_assert_false(ftree->caps & IBSM_CAP_LMC);
}

/* ABI 1.1: the keys route() reads are declared, with the defaults a file would spell. */
static void test_config_keys(void)
{
	struct fabric *f = fx_kary_ntree(4, 2, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(ftree, &c, &f->pub, NULL, &r), ==, 0);
	g_assert_true(g_hash_table_contains(c.asked, "root_guid_file"));
	g_assert_true(g_hash_table_contains(c.asked, "cn_guid_file"));
	g_assert_true(g_hash_table_contains(c.asked, "io_guid_file"));
	g_assert_true(g_hash_table_contains(c.asked, "max_reverse_hops"));
	g_assert_true(g_hash_table_contains(c.asked, "ftree_threads"));
	fx_check_declared(&c, ftree);
	g_assert_nonnull(fx_engine_key(ftree, "root_guid_file"));
	g_assert_null(fx_engine_key(ftree, "root_guid_file")->default_value);
	g_assert_nonnull(fx_engine_key(ftree, "cn_guid_file"));
	g_assert_null(fx_engine_key(ftree, "cn_guid_file")->default_value);
	g_assert_nonnull(fx_engine_key(ftree, "io_guid_file"));
	g_assert_null(fx_engine_key(ftree, "io_guid_file")->default_value);
	g_assert_nonnull(fx_engine_key(ftree, "max_reverse_hops"));
	g_assert_cmpstr(fx_engine_key(ftree, "max_reverse_hops")->default_value, ==, "0");
	g_assert_nonnull(fx_engine_key(ftree, "ftree_threads"));
	g_assert_cmpstr(fx_engine_key(ftree, "ftree_threads")->default_value, ==, "0");
	g_assert_null(fx_engine_key(ftree, "connect_roots"));
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* Ranks from the CAs: a 4-ary 3-tree has 3 levels, 16 roots, 16 leaves; with the leaves
 * given as roots, the compute nodes sit at rank 0: one level, declined. */
static void test_ranking(void)
{
	struct tree_spec sp = spec(4, 3);
	struct fabric *f = build_tree(&sp);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(run(&c, f, NULL, &r), ==, 0);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO,
					"3 levels, 48 switches (16 roots, 16 leaves), 64 CA ports"), ==, 1);
	/* a root's own row: every host LID goes down (ports 1..4) */
	for (unsigned h = 0; h < 64; h++) {
		uint8_t p = r.routes.lft[(size_t)40 * r.routes.stride +
					 f->ports[fx_ca_port(&f->pub, h, 1)].lid];
		g_assert_cmpuint(p, >=, 1);
		g_assert_cmpuint(p, <=, 4);
	}
	fx_run_clear(&r);

	/* roots file naming the top switches: same tree */
	char *dir = g_dir_make_tmp("ftree-XXXXXX", NULL), *path = g_build_filename(dir, "roots", NULL);
	GString *s = g_string_new("# top switches\n");
	for (uint32_t t = 32; t < 48; t++)
		g_string_append_printf(s, "0x%016" G_GINT64_MODIFIER "x\n",
				       f->pub.nodes[f->pub.switches[t].node].guid);
	g_assert_true(g_file_set_contents(path, s->str, -1, NULL));
	fx_core_set(&c, "root_guid_file", path);
	g_assert_cmpint(run(&c, f, NULL, &r), ==, 0);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "16 roots from root_guid_file"), ==, 1);
	fx_run_clear(&r);

	/* the leaves as roots */
	g_string_truncate(s, 0);
	for (uint32_t t = 0; t < 16; t++)
		g_string_append_printf(s, "%" G_GINT64_MODIFIER "x\n",
				       f->pub.nodes[f->pub.switches[t].node].guid);
	g_assert_true(g_file_set_contents(path, s->str, -1, NULL));
	g_assert_cmpint(run(&c, f, NULL, &r), <, 0);
	g_assert_nonnull(strstr(r.routes.why, "tree rank between 2 and 8"));
	fx_run_clear(&r);
	g_unlink(path);
	g_rmdir(dir);
	g_free(path);
	g_free(dir);
	g_string_free(s, TRUE);
	fx_core_clear(&c);
	fabric_unref(f);
}

static void expect_decline(struct fabric *f, const char *rule, const char *sw_desc)
{
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(run(&c, f, NULL, &r), <, 0);
	g_assert_null(r.result);
	g_assert_nonnull(strstr(r.routes.why, rule));
	if (sw_desc)
		g_assert_nonnull(strstr(r.routes.why, sw_desc));
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

static void test_rule_levels(void)
{
	/* one switch: 1 level */
	expect_decline(fx_line(1, 3, 0), "'tree rank between 2 and 8'", "line-0");
	/* a line of 10 switches with hosts at one end: 10 levels */
	struct fx_builder x;
	fx_builder_init(&x);
	uint32_t sw[10];
	for (int i = 0; i < 10; i++) {
		char d[32];
		snprintf(d, sizeof(d), "chain-%d", i);
		sw[i] = fx_add_switch(&x, 4, d);
	}
	for (int i = 0; i + 1 < 10; i++)
		fx_link(&x, sw[i], 2, sw[i + 1], 1);
	fx_link(&x, sw[0], 3, fx_add_ca(&x, 1, "h0"), 1);
	fx_link(&x, sw[0], 4, fx_add_ca(&x, 1, "h1"), 1);
	expect_decline(fx_finish(&x, 0), "'tree rank between 2 and 8' broken: 10 levels", "chain-0");
}

static void test_rule_up_groups(void)
{
	/* 4-ary 2-tree without link leaf-1 : top-2 (like ftree-2l-fail) */
	struct tree_spec sp = spec(4, 2);
	sp.drop_leaf = 1;
	sp.drop_up = 2;
	expect_decline(build_tree(&sp), "same number of up port groups' broken at rank 1",
		       "(leaf-1)");
}

static void test_rule_down_groups_count(void)
{
	/* 2 tops, 3 leaves: top-3 links to leaves 0,1,2, top-4 to leaves 0,1 and twice... keep
	 * leaves equal (2 up groups each) and tops unequal (3 vs 2): leaves 0..2 up to top-3,
	 * leaves 0,1 up to top-4, leaf-2 up to top-5; top-5 has 1 down group. */
	struct fx_builder x;
	fx_builder_init(&x);
	uint32_t h[3], leaf[3], top[3];
	for (int i = 0; i < 3; i++) {
		char d[32];
		snprintf(d, sizeof(d), "h%d", i);
		h[i] = fx_add_ca(&x, 1, d);
	}
	for (int i = 0; i < 3; i++) {
		char d[32];
		snprintf(d, sizeof(d), "leaf-%d", i);
		leaf[i] = fx_add_switch(&x, 4, d);
	}
	for (int i = 0; i < 3; i++) {
		char d[32];
		snprintf(d, sizeof(d), "top-%d", 3 + i);
		top[i] = fx_add_switch(&x, 4, d);
	}
	for (int i = 0; i < 3; i++) {
		fx_link(&x, leaf[i], 1, h[i], 1);
		fx_link(&x, leaf[i], 2, top[0], (uint8_t)(1 + i));
	}
	fx_link(&x, leaf[0], 3, top[1], 1);
	fx_link(&x, leaf[1], 3, top[1], 2);
	fx_link(&x, leaf[2], 3, top[2], 1);
	expect_decline(fx_finish(&x, 0), "same number of down port groups' broken at rank 0",
		       "(top-");
}

static void test_rule_group_size(void)
{
	/* leaf-2 has two links to top-4 */
	struct tree_spec sp = spec(4, 2);
	sp.double_leaf = 2;
	expect_decline(build_tree(&sp), "same number of ports in every up port group' broken at "
		       "rank 1", "(leaf-");
}

static void test_rule_cas_one_rank(void)
{
	/* an extra CA on a top switch of a pure tree */
	struct tree_spec sp = spec(4, 2);
	sp.io_sw[0] = 5;
	expect_decline(build_tree(&sp), "'all CAs at the same rank' broken", "(top-5)");
	/* with roots given, only compute nodes count: the same tree routes when the extra CA
	 * is not a compute node ... see test_cn_io_files */
}

static void test_rule_connected(void)
{
	/* a switch with no usable link in scope but hosts elsewhere: scope.ports leaves out
	 * every link of top-7 */
	struct tree_spec sp = spec(4, 2);
	struct fabric *f = build_tree(&sp);
	struct ibsm_scope sc = fx_scope_all();
	sc.ports = fx_bits_new(f->pub.n_ports);
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		if (f->pub.ports[p].node != f->pub.switches[7].node)
			fx_bits_set(&sc.ports, p);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(run(&c, f, &sc, &r), <, 0);
	g_assert_nonnull(strstr(r.routes.why, "'one connected tree'"));
	g_assert_nonnull(strstr(r.routes.why, "(top-7)"));
	fx_run_clear(&r);
	fx_core_clear(&c);
	fx_bits_free(&sc.ports);
	fabric_unref(f);
}

/* Full trees: every pair delivered, every shift permutation congestion-free, the all-pairs
 * switch-link load even within each level: max/mean is then what the levels' loads make it
 * (level l up links carry N - (hosts under a level-l subtree) routes each), max_ratio. */
static void check_full_tree(struct fabric *f, const char *what, double max_ratio)
{
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(run(&c, f, NULL, &r), ==, 0);
	check_all_pairs(f, &r, what);
	unsigned undelivered;
	unsigned worst = worst_shift(&f->pub, r.routes.lft, r.routes.stride, &undelivered);
	uint32_t max;
	double ratio = fx_switch_link_load(&f->pub, r.routes.lft, r.routes.stride, NULL, &max);
	g_test_message("%s: worst shift link load %u, all-pairs max/mean %.3f", what, worst,
		       ratio);
	g_assert_cmpuint(undelivered, ==, 0);
	g_assert_cmpuint(worst, ==, 1);
	g_assert_cmpfloat(ratio, <=, max_ratio + 1e-6);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

static void test_full_trees(void)
{
	check_full_tree(fx_kary_ntree(4, 2, 0), "4-ary 2-tree", 1.0);
	check_full_tree(fx_kary_ntree(2, 3, 0), "2-ary 3-tree", 6.0 / 5.0);
	check_full_tree(fx_kary_ntree(4, 3, 0), "4-ary 3-tree", 60.0 / 54.0);
	check_full_tree(fx_kary_ntree(2, 5, 0), "2-ary 5-tree", 30.0 / 24.5);
	check_full_tree(fx_kary_ntree(2, 8, 0), "2-ary 8-tree", 254.0 / (1538.0 / 7));
	/* non-constant K and slimmed levels */
	unsigned m1[] = { 4, 3, 2 }, w1[] = { 1, 4, 3 };
	check_full_tree(fx_xgft(3, m1, w1, 0), "xgft(3;4,3,2;1,4,3)", 20.0 / 16.0);
	unsigned m2[] = { 8, 4 }, w2[] = { 1, 8 };
	check_full_tree(fx_xgft(2, m2, w2, 0), "xgft(2;8,4;1,8)", 1.0);
}

/* CBB 2:1: 4 hosts per leaf, 2 spines: shifts meet at most 2 flows per link. */
static void test_oversubscribed(void)
{
	unsigned m[] = { 4, 4 }, w[] = { 1, 2 };
	struct fabric *f = fx_xgft(2, m, w, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(run(&c, f, NULL, &r), ==, 0);
	check_all_pairs(f, &r, "xgft(2;4,4;1,2)");
	unsigned undelivered;
	g_assert_cmpuint(worst_shift(&f->pub, r.routes.lft, r.routes.stride, &undelivered), ==, 2);
	g_assert_cmpuint(undelivered, ==, 0);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* Partially populated 4-ary 3-tree: every pair delivered, dummies keep the shifts of the
 * present hosts within 1 except where a leaf misses hosts, and the dump shows the dummies. */
static void test_partial_and_dump(void)
{
	unsigned hosts[16] = { 4, 4, 3, 4, 4, 2, 4, 4, 4, 4, 4, 1, 4, 4, 4, 4 };
	struct tree_spec sp = spec(4, 3);
	sp.hosts = hosts;
	struct fabric *f = build_tree(&sp);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(run(&c, f, NULL, &r), ==, 0);
	check_all_pairs(f, &r, "partial 4-ary 3-tree");
	char *dir = g_dir_make_tmp("ftree-XXXXXX", NULL);
	g_assert_cmpint(ftree->dump(r.result, dir, ""), ==, 0);
	g_assert_cmpint(ftree->dump(r.result, dir, ".step1"), ==, 0);
	char *path = g_build_filename(dir, "opensm-ftree-ca-order.dump", NULL);
	char *path1 = g_build_filename(dir, "opensm-ftree-ca-order.dump.step1", NULL);
	char *text = NULL, *text1 = NULL;
	g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
	g_assert_true(g_file_get_contents(path1, &text1, NULL, NULL));
	g_assert_cmpstr(text, ==, text1);
	gchar **lines = g_strsplit(text, "\n", -1);
	g_assert_cmpuint(g_strv_length(lines), ==, 16 * 4 + 1);
	g_assert_cmpstr(lines[16 * 4], ==, "");
	unsigned dummies = 0, host = 0;
	for (unsigned i = 0; i < 64; i++) {
		if (!strcmp(lines[i], "0xFFFF\tDUMMY")) {
			dummies++;
			continue;
		}
		char want[64];
		snprintf(want, sizeof(want), "0x%04x\thost-%u",
			 f->pub.ports[fx_ca_port(&f->pub, host, 1)].lid, host);
		g_assert_cmpstr(lines[i], ==, want);
		host++;
	}
	g_assert_cmpuint(dummies, ==, 1 + 2 + 3);
	g_assert_cmpuint(host, ==, 58);
	/* leaf 2 (lines 8..11): three hosts then one dummy */
	g_assert_cmpstr(lines[11], ==, "0xFFFF\tDUMMY");
	g_strfreev(lines);
	g_free(text);
	g_free(text1);
	g_unlink(path);
	g_unlink(path1);
	g_rmdir(dir);
	g_free(path);
	g_free(path1);
	g_free(dir);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* Degraded 4-ary 2-tree (one leaf link lost): pure rules decline; with the roots given it
 * routes, every end port reaches every LID (switch LIDs through counted non-up/down turns),
 * and CA-to-CA routes stay up/down (at most 2 switch hops beyond the leaf). */
static void test_degraded_with_roots(void)
{
	struct tree_spec sp = spec(4, 2);
	sp.drop_leaf = 0;
	sp.drop_up = 0;
	struct fabric *f = build_tree(&sp);
	char *dir = g_dir_make_tmp("ftree-XXXXXX", NULL), *path = g_build_filename(dir, "roots", NULL);
	GString *s = g_string_new(NULL);
	for (uint32_t t = 4; t < 8; t++)
		g_string_append_printf(s, "0x%016" G_GINT64_MODIFIER "x\n",
				       f->pub.nodes[f->pub.switches[t].node].guid);
	g_string_append(s, "not-a-guid\n");
	g_assert_true(g_file_set_contents(path, s->str, -1, NULL));
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	fx_core_set(&c, "root_guid_file", path);
	g_assert_cmpint(run(&c, f, NULL, &r), ==, 0);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, ":5: not a GUID"), ==, 1);
	/* every end port, switches included, reaches every LID: top-4, which has no cable to
	 * leaf-0, reaches leaf-0's hosts and LID through another top and a leaf (non-up/down turns
	 * for its own management traffic, counted), while CA-to-CA routes stay up/down */
	struct fx_walk_stats st;
	fx_walk_all(&f->pub, r.routes.lft, r.routes.stride, &st);
	g_assert_cmpuint(st.loops + st.wrong + st.black_holes, ==, 0);
	for (uint32_t src = 0; src < f->pub.n_ports; src++) {
		if (!fx_is_end_port(&f->pub, src))
			continue;
		for (uint32_t lid = 1; lid <= f->pub.max_lid; lid++) {
			uint32_t dst = f->pub.lid_port[lid];
			if (dst == IBSM_NONE)
				continue;
			unsigned hops;
			enum fx_walk w = fx_walk(&f->pub, r.routes.lft, r.routes.stride, src,
						 (uint16_t)lid, &hops);
			g_assert_cmpint(w, ==, FX_DELIVERED);
			/* CA to CA: up to a top and down, at most 2 switch hops beyond the leaf */
			if (fx_is_ca_port(&f->pub, src) && fx_is_ca_port(&f->pub, dst))
				g_assert_cmpuint(hops, <=, 4);
		}
	}
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "toward switch LIDs are not up/down"), ==, 1);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "from switches without CAs are not up/down"), ==, 1);
	unsigned undelivered;
	unsigned worst = worst_shift(&f->pub, r.routes.lft, r.routes.stride, &undelivered);
	g_assert_cmpuint(undelivered, ==, 0);
	g_assert_cmpuint(worst, <=, 2);
	fx_run_clear(&r);
	g_unlink(path);
	g_rmdir(dir);
	g_free(path);
	g_free(dir);
	g_string_free(s, TRUE);
	fx_core_clear(&c);
	fabric_unref(f);
}

static unsigned delivered(const struct fabric *f, const struct fx_run *r, uint32_t src, uint32_t dst)
{
	unsigned hops;
	return fx_walk(&f->pub, r->routes.lft, r->routes.stride, src, f->ports[dst].lid, &hops) ==
	       FX_DELIVERED;
}

/* 4-ary 3-tree with I/O nodes on agg-16 (pod 0, column 0) and agg-21 (pod 1, column 1):
 * pure rules decline (CAs at two ranks); with roots and -u listing the hosts the compute
 * nodes route; io-0 -> io-1 needs one reverse hop: only with -G and -H 1. */
static void test_cn_io_files(void)
{
	struct tree_spec sp = spec(4, 3);
	sp.io_sw[0] = 16;
	sp.io_sw[1] = 21;
	struct fabric *f = build_tree(&sp);
	char *dir = g_dir_make_tmp("ftree-XXXXXX", NULL);
	char *roots = g_build_filename(dir, "roots", NULL), *cn = g_build_filename(dir, "cn", NULL);
	char *io = g_build_filename(dir, "io", NULL);
	GString *s = g_string_new(NULL);
	for (uint32_t t = 32; t < 48; t++)
		g_string_append_printf(s, "0x%016" G_GINT64_MODIFIER "x\n",
				       f->pub.nodes[f->pub.switches[t].node].guid);
	g_assert_true(g_file_set_contents(roots, s->str, -1, NULL));
	g_string_truncate(s, 0);
	for (unsigned h = 0; h < 64; h++)
		g_string_append_printf(s, "0x%016" G_GINT64_MODIFIER "x\n",
				       f->pub.ports[fx_ca_port(&f->pub, h, 1)].guid);
	g_assert_true(g_file_set_contents(cn, s->str, -1, NULL));
	uint32_t io0 = fx_ca_port(&f->pub, 64, 1), io1 = fx_ca_port(&f->pub, 65, 1);
	g_string_printf(s, "0x%016" G_GINT64_MODIFIER "x\n0x%016" G_GINT64_MODIFIER "x\n",
			f->pub.ports[io0].guid, f->pub.ports[io1].guid);
	g_assert_true(g_file_set_contents(io, s->str, -1, NULL));

	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(run(&c, f, NULL, &r), <, 0);
	g_assert_nonnull(strstr(r.routes.why, "'all CAs at the same rank'"));
	fx_run_clear(&r);

	fx_core_set(&c, "root_guid_file", roots);
	fx_core_set(&c, "cn_guid_file", cn);
	g_assert_cmpint(run(&c, f, NULL, &r), ==, 0);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "(64 compute nodes, up to 4 per leaf)"),
			 ==, 1);
	unsigned undelivered;
	g_assert_cmpuint(worst_shift(&f->pub, r.routes.lft, r.routes.stride, &undelivered), >=, 1);
	uint32_t h0 = fx_ca_port(&f->pub, 0, 1), h63 = fx_ca_port(&f->pub, 63, 1);
	g_assert_true(delivered(f, &r, h0, h63));
	g_assert_true(delivered(f, &r, h63, io0));
	g_assert_true(delivered(f, &r, io1, h0));
	g_assert_false(delivered(f, &r, io0, io1));
	fx_run_clear(&r);

	fx_core_set(&c, "io_guid_file", io);
	fx_core_set(&c, "max_reverse_hops", "0");
	g_assert_cmpint(run(&c, f, NULL, &r), ==, 0);
	g_assert_false(delivered(f, &r, io0, io1));
	fx_run_clear(&r);
	fx_core_set(&c, "max_reverse_hops", "1");
	g_assert_cmpint(run(&c, f, NULL, &r), ==, 0);
	g_assert_true(delivered(f, &r, io0, io1));
	g_assert_true(delivered(f, &r, io1, io0));
	g_assert_true(delivered(f, &r, h0, io1));
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "reverse hops (max_reverse_hops 1)"),
			 ==, 1);
	fx_run_clear(&r);

	/* a missing file declines, naming it */
	fx_core_set(&c, "cn_guid_file", "/nonexistent/cn");
	g_assert_cmpint(run(&c, f, NULL, &r), <, 0);
	g_assert_nonnull(strstr(r.routes.why, "/nonexistent/cn"));
	fx_run_clear(&r);

	g_unlink(roots);
	g_unlink(cn);
	g_unlink(io);
	g_rmdir(dir);
	g_free(roots);
	g_free(cn);
	g_free(io);
	g_free(dir);
	g_string_free(s, TRUE);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* More than one path bit declines; one path bit of an LMC 1 fabric routes that offset only;
 * switch rows outside the scope stay untouched; destinations outside the scope too. */
static void test_scope(void)
{
	struct fabric *f = fx_kary_ntree(4, 2, 1);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(run(&c, f, NULL, &r), <, 0);
	g_assert_nonnull(strstr(r.routes.why, "one path bit"));
	fx_run_clear(&r);

	struct ibsm_scope sc = fx_scope_all();
	sc.path_bit_first = 1;
	sc.path_bit_count = 1;
	sc.switches = fx_bits_new(f->pub.n_switches);
	for (uint32_t s = 0; s < f->pub.n_switches; s++)
		if (s != 7)
			fx_bits_set(&sc.switches, s);
	sc.dests = fx_bits_new(f->pub.n_ports);
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		if (p != fx_ca_port(&f->pub, 5, 1))
			fx_bits_set(&sc.dests, p);
	g_assert_cmpint(run(&c, f, &sc, &r), ==, 0);
	uint32_t stride = r.routes.stride;
	for (uint32_t lid = 0; lid < stride; lid++)
		g_assert_cmpuint(r.routes.lft[(size_t)7 * stride + lid], ==, IBSM_NO_PORT);
	for (unsigned h = 0; h < 16; h++) {
		uint16_t base = f->ports[fx_ca_port(&f->pub, h, 1)].lid;
		for (uint32_t s = 0; s < 7; s++) {
			g_assert_cmpuint(r.routes.lft[(size_t)s * stride + base], ==, IBSM_NO_PORT);
			uint8_t p = r.routes.lft[(size_t)s * stride + base + 1];
			if (h == 5)
				g_assert_cmpuint(p, ==, IBSM_NO_PORT);
			else
				g_assert_cmpuint(p, !=, IBSM_NO_PORT);
		}
	}
	/* switch LIDs have no offset 1: not routed */
	for (uint32_t s = 0; s < 8; s++) {
		uint16_t lid = f->ports[fx_switch_port(&f->pub, s, 0)].lid;
		g_assert_cmpuint(r.routes.lft[lid], ==, IBSM_NO_PORT);
	}
	fx_run_clear(&r);
	fx_bits_free(&sc.switches);
	fx_bits_free(&sc.dests);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* Tables do not depend on the thread count; cancel stops routing. */
static void test_threads_and_cancel(void)
{
	struct fabric *f = fx_kary_ntree(4, 3, 0);
	struct fx_core c;
	struct fx_run a, b;
	fx_core_init(&c);
	fx_core_set(&c, "ftree_threads", "1");
	g_assert_cmpint(run(&c, f, NULL, &a), ==, 0);
	fx_core_set(&c, "ftree_threads", "3");
	g_assert_cmpint(run(&c, f, NULL, &b), ==, 0);
	g_assert_cmpmem(a.routes.lft, (size_t)f->pub.n_switches * a.routes.stride, b.routes.lft,
			(size_t)f->pub.n_switches * b.routes.stride);
	fx_run_clear(&a);
	fx_run_clear(&b);
	c.cancel = 1;
	g_assert_cmpint(run(&c, f, NULL, &a), ==, -ECANCELED);
	fx_run_clear(&a);
	fx_core_clear(&c);
	fabric_unref(f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	GModule *m = NULL;
	ftree = fx_engine_open(TEST_PLUGIN_DIR "/ftree.so", &m);
	g_test_add_func("/ftree/engine-symbol", test_engine_symbol);
	if (ftree) {
		g_test_add_func("/ftree/config-keys", test_config_keys);
		g_test_add_func("/ftree/ranking", test_ranking);
		g_test_add_func("/ftree/rule/levels", test_rule_levels);
		g_test_add_func("/ftree/rule/up-groups", test_rule_up_groups);
		g_test_add_func("/ftree/rule/down-groups", test_rule_down_groups_count);
		g_test_add_func("/ftree/rule/group-size", test_rule_group_size);
		g_test_add_func("/ftree/rule/cas-one-rank", test_rule_cas_one_rank);
		g_test_add_func("/ftree/rule/connected", test_rule_connected);
		g_test_add_func("/ftree/full-trees-shifts", test_full_trees);
		g_test_add_func("/ftree/oversubscribed", test_oversubscribed);
		g_test_add_func("/ftree/partial-and-dump", test_partial_and_dump);
		g_test_add_func("/ftree/degraded-with-roots", test_degraded_with_roots);
		g_test_add_func("/ftree/cn-io-files", test_cn_io_files);
		g_test_add_func("/ftree/scope", test_scope);
		g_test_add_func("/ftree/threads-and-cancel", test_threads_and_cancel);
	}
	int rc = g_test_run();
	if (m)
		g_module_close(m);
	return rc;
}
