/* test_minhop.c - the minhop engine plugin (and the halfbit test engine) on small in-memory
 * fabrics: min-hop delivery, per-port balance, LMC spreading, scope rules, the -i ignore
 * file, thread-count independence. Loads the built .so files as the core would. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include <gmodule.h>
#include "fabric/patch.h"
#include "fabric_fixture.h"

static const struct ibsm_engine *minhop, *halfbit;

/* Routes f with a full scope and checks every end port reaches every LID on a shortest path. */
static void check_minhop_all_pairs(struct fabric *f, const char *what)
{
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(minhop, &c, &f->pub, NULL, &r), ==, 0);
	g_assert_nonnull(r.result);
	g_assert_cmpuint(c.hops_calls, ==, 1);
	struct fx_walk_stats st;
	fx_walk_all(&f->pub, r.routes.lft, r.routes.stride, &st);
	g_test_message("%s: %u pairs, %u delivered, max %u hops", what, st.pairs, st.delivered,
		       st.max_hops);
	g_assert_cmpuint(st.pairs, >, 0);
	g_assert_cmpuint(st.delivered, ==, st.pairs);
	g_assert_cmpuint(st.longer, ==, 0);
	g_assert_cmpuint(st.loops + st.black_holes + st.wrong, ==, 0);
	/* a switch's own LID leaves by port 0 */
	for (uint32_t s = 0; s < f->pub.n_switches; s++)
		g_assert_cmpuint(fx_run_entry(&r, s, fx_switch_lid(f, s)), ==, 0);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

static void test_engine_symbol(void)
{
	g_assert_nonnull(minhop);
	g_assert_cmpstr(minhop->name, ==, "minhop");
	g_assert_cmpuint(minhop->abi_major, ==, IBSM_ABI_MAJOR);
	g_assert_cmpuint(minhop->size, ==, sizeof(struct ibsm_engine));
	g_assert_true(minhop->caps & IBSM_CAP_LMC);
	g_assert_nonnull(minhop->setup);
	g_assert_nonnull(minhop->route);
	g_assert_nonnull(minhop->result_free);
	g_assert_nonnull(halfbit);
	g_assert_cmpstr(halfbit->name, ==, "halfbit");
}

/* ABI 1.1: the keys route() reads are declared, with the defaults a file would spell. */
static void test_config_keys(void)
{
	struct fabric *f = fx_line(3, 2, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(minhop, &c, &f->pub, NULL, &r), ==, 0);
	g_assert_true(g_hash_table_contains(c.asked, "minhop_threads"));
	g_assert_true(g_hash_table_contains(c.asked, "port_prof_ignore_file"));
	fx_check_declared(&c, minhop);
	g_assert_cmpstr(fx_engine_key(minhop, "minhop_threads")->default_value, ==, "0");
	g_assert_nonnull(fx_engine_key(minhop, "port_prof_ignore_file"));
	g_assert_null(fx_engine_key(minhop, "port_prof_ignore_file")->default_value);
	g_assert_null(fx_engine_key(minhop, "dor_threads"));
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

static void test_line(void)
{
	check_minhop_all_pairs(fx_line(5, 2, 0), "line of 5");
	check_minhop_all_pairs(fx_line(1, 3, 0), "line of 1");
}

static void test_ring(void)
{
	check_minhop_all_pairs(fx_ring(6, 1, 0), "ring of 6");
	check_minhop_all_pairs(fx_ring(7, 2, 0), "ring of 7");
	check_minhop_all_pairs(fx_ring(2, 1, 0), "ring of 2 (parallel links)");
}

static void test_trees_and_tori(void)
{
	check_minhop_all_pairs(fx_kary_ntree(4, 2, 0), "4-ary 2-tree");
	check_minhop_all_pairs(fx_kary_ntree(2, 3, 0), "2-ary 3-tree");
	unsigned m[] = { 3, 2, 2 }, w[] = { 1, 2, 3 };
	check_minhop_all_pairs(fx_xgft(3, m, w, 0), "xgft(3;3,2,2;1,2,3)");
	check_minhop_all_pairs(fx_torus2d(4, 3, 1, 0), "torus 4x3");
	check_minhop_all_pairs(fx_ring(5, 1, 2), "ring of 5, LMC 2");
}

/* On a 2-level fat tree, each leaf spreads the CA LIDs of other leaves evenly over its up
 * links (+-1), and the switch LIDs too; the CA-to-CA link load is perfectly even. */
static void test_balance_fat_tree(void)
{
	const unsigned k = 6;
	struct fabric *f = fx_kary_ntree(k, 2, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(minhop, &c, &f->pub, NULL, &r), ==, 0);
	for (uint32_t leaf = 0; leaf < k; leaf++) {
		unsigned ca[256] = { 0 }, sw[256] = { 0 };
		for (uint32_t h = 0; h < k * k; h++) {
			if (h / k == leaf)
				continue;
			uint8_t p = fx_run_entry(&r, leaf, fx_ca_lid(f, h));
			g_assert_cmpuint(p, >, k);
			g_assert_cmpuint(p, <=, 2 * k);
			ca[p]++;
		}
		for (uint32_t other = 0; other < k; other++)
			if (other != leaf)
				sw[fx_run_entry(&r, leaf, fx_switch_lid(f, other))]++;
		unsigned cmin = ~0u, cmax = 0, smin = ~0u, smax = 0;
		for (unsigned p = k + 1; p <= 2 * k; p++) {
			cmin = MIN(cmin, ca[p]);
			cmax = MAX(cmax, ca[p]);
			smin = MIN(smin, sw[p]);
			smax = MAX(smax, sw[p]);
		}
		g_assert_cmpuint(cmax - cmin, <=, 1);
		g_assert_cmpuint(cmin, >, 0);
		g_assert_cmpuint(smax - smin, <=, 1);
	}
	uint32_t max = 0;
	double ratio = fx_switch_link_load(&f->pub, r.routes.lft, r.routes.stride, NULL, &max);
	g_test_message("4-ary 2-tree: link load max %u, max/mean %.3f", max, ratio);
	g_assert_cmpfloat(ratio, <, 1.0001);
	g_assert_cmpuint(max, ==, k * (k - 1));
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* LMC 2 on a 4-ary 2-tree: the 4 LIDs of every remote host leave a leaf by 4 different
 * spines. With spines paired into two system images, LIDs 0 and 1 use both systems. */
static void test_lmc_spreading(void)
{
	const unsigned k = 4;
	for (int paired = 0; paired <= 1; paired++) {
		struct fabric *f = fx_kary_ntree(k, 2, 2);
		if (paired)
			for (uint32_t b = 0; b < k; b++)
				f->nodes[f->switches[k + b].node].sysimg_guid = 0x5150000 + b / 2;
		struct fx_core c;
		struct fx_run r;
		fx_core_init(&c);
		g_assert_cmpint(fx_route(minhop, &c, &f->pub, NULL, &r), ==, 0);
		struct fx_walk_stats st;
		fx_walk_all(&f->pub, r.routes.lft, r.routes.stride, &st);
		g_assert_cmpuint(st.delivered, ==, st.pairs);
		g_assert_cmpuint(st.longer, ==, 0);
		for (uint32_t leaf = 0; leaf < k; leaf++)
			for (uint32_t h = 0; h < k * k; h++) {
				if (h / k == leaf)
					continue;
				uint16_t base = fx_ca_lid(f, h);
				g_assert_cmpuint(base % 4, ==, 0);
				unsigned seen = 0;
				for (unsigned o = 0; o < 4; o++) {
					uint8_t p = fx_run_entry(&r, leaf, base + o);
					g_assert_cmpuint(p, >, k);
					g_assert_cmpuint(p, <=, 2 * k);
					g_assert_false(seen & (1u << (p - k - 1)));
					seen |= 1u << (p - k - 1);
				}
				if (paired) {
					unsigned s0 = fx_run_entry(&r, leaf, base) - k - 1;
					unsigned s1 = fx_run_entry(&r, leaf, base + 1) - k - 1;
					g_assert_cmpuint(s0 / 2, !=, s1 / 2);
				}
			}
		fx_run_clear(&r);
		fx_core_clear(&c);
		fabric_unref(f);
	}
}

/* Rows outside scope->switches stay untouched; rows inside equal the full-scope rows (each
 * row is balanced on its own). */
static void test_scope_switches(void)
{
	struct fabric *f = fx_kary_ntree(4, 2, 0);
	struct fx_core c;
	struct fx_run full, part;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(minhop, &c, &f->pub, NULL, &full), ==, 0);
	struct ibsm_scope sc = fx_scope_all();
	sc.switches = fx_bits_new(f->pub.n_switches);
	for (uint32_t s = 0; s < f->pub.n_switches; s += 3)
		fx_bits_set(&sc.switches, s);
	g_assert_cmpint(fx_route(minhop, &c, &f->pub, &sc, &part), ==, 0);
	uint32_t stride = part.routes.stride;
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		const uint8_t *a = full.routes.lft + (size_t)s * stride;
		const uint8_t *b = part.routes.lft + (size_t)s * stride;
		if (s % 3 == 0) {
			g_assert_cmpmem(a, stride, b, stride);
			continue;
		}
		for (uint32_t l = 0; l < stride; l++)
			g_assert_cmpuint(b[l], ==, IBSM_NO_PORT);
	}
	fx_run_clear(&part);

	/* no switch in scope: nothing written, still a success */
	struct ibsm_bits none = fx_bits_new(f->pub.n_switches);
	struct ibsm_scope empty = fx_scope_all();
	empty.switches = none;
	g_assert_cmpint(fx_route(minhop, &c, &f->pub, &empty, &part), ==, 0);
	for (size_t i = 0; i < (size_t)f->pub.n_switches * stride; i++)
		g_assert_cmpuint(part.routes.lft[i], ==, IBSM_NO_PORT);
	fx_run_clear(&part);
	fx_bits_free(&none);
	fx_bits_free(&sc.switches);
	fx_run_clear(&full);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* Path bits [1, 3) of LMC 2: offsets 0 and 3 of every port stay untouched everywhere, and
 * so do the switches' own (single) LIDs; only destinations in scope->dests are routed. */
static void test_scope_path_bits_and_dests(void)
{
	struct fabric *f = fx_ring(4, 2, 2);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	struct ibsm_scope sc = fx_scope_all();
	sc.path_bit_first = 1;
	sc.path_bit_count = 2;
	sc.dests = fx_bits_new(f->pub.n_ports);
	uint32_t n_cas = 8;
	for (uint32_t h = 0; h < n_cas; h += 2)
		fx_bits_set(&sc.dests, fx_ca_port(&f->pub, h, 1));
	for (uint32_t s = 0; s < f->pub.n_switches; s++)
		fx_bits_set(&sc.dests, fx_switch_port(&f->pub, s, 0));
	g_assert_cmpint(fx_route(minhop, &c, &f->pub, &sc, &r), ==, 0);
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		g_assert_cmpuint(fx_run_entry(&r, s, fx_switch_lid(f, s)), ==, IBSM_NO_PORT);
		for (uint32_t h = 0; h < n_cas; h++) {
			uint16_t base = fx_ca_lid(f, h);
			g_assert_cmpuint(fx_run_entry(&r, s, base), ==, IBSM_NO_PORT);
			g_assert_cmpuint(fx_run_entry(&r, s, base + 3), ==, IBSM_NO_PORT);
			for (unsigned o = 1; o <= 2; o++) {
				if (h % 2)
					g_assert_cmpuint(fx_run_entry(&r, s, base + o), ==, IBSM_NO_PORT);
				else
					g_assert_cmpuint(fx_run_entry(&r, s, base + o), !=, IBSM_NO_PORT);
			}
		}
	}
	/* the routed LIDs are delivered on shortest paths */
	uint8_t *hops = fx_switch_hops_all(&f->pub);
	for (uint32_t src = 0; src < n_cas; src++)
		for (uint32_t h = 0; h < n_cas; h += 2)
			for (unsigned o = 1; o <= 2; o++) {
				unsigned nh;
				uint32_t sp = fx_ca_port(&f->pub, src, 1), dp = fx_ca_port(&f->pub, h, 1);
				g_assert_cmpint(fx_walk(&f->pub, r.routes.lft, r.routes.stride, sp,
							(uint16_t)(fx_ca_lid(f, h) + o), &nh), ==, FX_DELIVERED);
				g_assert_cmpint((int)nh, ==, fx_end_hops(&f->pub, hops, sp, dp));
			}
	g_free(hops);
	fx_run_clear(&r);
	fx_bits_free(&sc.dests);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* A link whose port is outside scope->ports is never used: on a ring of 6 without the link
 * 0-1, switch 0 reaches switch 1 the long way round. */
static void test_scope_ports(void)
{
	struct fabric *f = fx_ring(6, 1, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	struct ibsm_scope sc = fx_scope_all();
	sc.ports = fx_bits_new(f->pub.n_ports);
	uint32_t cut = fx_switch_port(&f->pub, 0, 2);
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		if (p != cut)
			fx_bits_set(&sc.ports, p);
	g_assert_cmpint(fx_route(minhop, &c, &f->pub, &sc, &r), ==, 0);
	g_assert_cmpuint(fx_run_entry(&r, 0, fx_switch_lid(f, 1)), ==, 1);
	g_assert_cmpuint(fx_run_entry(&r, 1, fx_switch_lid(f, 0)), ==, 2);
	for (uint32_t l = 1; l <= f->pub.max_lid; l++) {
		g_assert_cmpuint(fx_run_entry(&r, 0, l), !=, 2);
		g_assert_cmpuint(fx_run_entry(&r, 1, l), !=, 1);
		g_assert_cmpuint(fx_run_entry(&r, 0, l), !=, IBSM_NO_PORT);
	}
	fx_run_clear(&r);
	/* the host of switch 2 loses its link: nobody routes to it, the rest still is */
	uint32_t host2 = fx_ca_port(&f->pub, 2, 1);
	g_assert_cmpuint(ibsm_port_switch(&f->pub, host2), ==, 2);
	fx_bits_free(&sc.ports);
	sc.ports = fx_bits_new(f->pub.n_ports);
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		if (p != host2)
			fx_bits_set(&sc.ports, p);
	g_assert_cmpint(fx_route(minhop, &c, &f->pub, &sc, &r), ==, 0);
	for (uint32_t s = 0; s < 6; s++) {
		g_assert_cmpuint(fx_run_entry(&r, s, fx_ca_lid(f, 2)), ==, IBSM_NO_PORT);
		g_assert_cmpuint(fx_run_entry(&r, s, fx_ca_lid(f, 3)), !=, IBSM_NO_PORT);
	}
	fx_run_clear(&r);
	fx_bits_free(&sc.ports);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* Two islands: each routes within itself; the other island's LIDs stay unrouted. */
static void test_unreachable(void)
{
	struct fx_builder x;
	fx_builder_init(&x);
	uint32_t a = fx_add_switch(&x, 4, "a"), b = fx_add_switch(&x, 4, "b");
	uint32_t ha = fx_add_ca(&x, 1, "ha"), hb = fx_add_ca(&x, 1, "hb");
	fx_link(&x, a, 1, ha, 1);
	fx_link(&x, b, 3, hb, 1);
	struct fabric *f = fx_finish(&x, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(minhop, &c, &f->pub, NULL, &r), ==, 0);
	g_assert_cmpuint(fx_run_entry(&r, 0, fx_ca_lid(f, 0)), ==, 1);
	g_assert_cmpuint(fx_run_entry(&r, 1, fx_ca_lid(f, 1)), ==, 3);
	g_assert_cmpuint(fx_run_entry(&r, 0, fx_ca_lid(f, 1)), ==, IBSM_NO_PORT);
	g_assert_cmpuint(fx_run_entry(&r, 1, fx_ca_lid(f, 0)), ==, IBSM_NO_PORT);
	g_assert_cmpuint(fx_run_entry(&r, 0, fx_switch_lid(f, 1)), ==, IBSM_NO_PORT);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "no path"), ==, 1);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

static char *write_temp(const char *text)
{
	GError *err = NULL;
	char *path = NULL;
	int fd = g_file_open_tmp("minhop-ignore-XXXXXX", &path, &err);
	g_assert_no_error(err);
	close(fd);
	g_assert_true(g_file_set_contents(path, text, -1, &err));
	g_assert_no_error(err);
	return path;
}

/* 2-ary 2-tree: hosts 0,1 on leaf 0 (ports 1,2), hosts 2,3 on leaf 1; up ports 3 and 4.
 * Leaf 0 routes host 2 then host 3: normally by ports 3 and 4. When routes to host 2 do not
 * count (its port GUID listed, or leaf 0's port 3 listed), host 3 also takes port 3. */
static uint8_t leaf0_exit_to_host3(const char *ignore_text, struct fx_core *c)
{
	struct fabric *f = fx_kary_ntree(2, 2, 0);
	struct fx_run r;
	char *path = NULL;
	if (ignore_text) {
		path = write_temp(ignore_text);
		fx_core_set(c, "port_prof_ignore_file", path);
	}
	g_assert_cmpint(fx_route(minhop, c, &f->pub, NULL, &r), ==, 0);
	g_assert_cmpuint(fx_run_entry(&r, 0, fx_ca_lid(f, 2)), ==, 3);
	uint8_t p = fx_run_entry(&r, 0, fx_ca_lid(f, 3));
	fx_run_clear(&r);
	if (path) {
		unlink(path);
		g_free(path);
	}
	fabric_unref(f);
	return p;
}

static void test_ignore_file(void)
{
	struct fx_core c;
	char text[256];
	fx_core_init(&c);
	g_assert_cmpuint(leaf0_exit_to_host3(NULL, &c), ==, 4);
	/* host 2's port GUID (node GUID + 1) */
	snprintf(text, sizeof(text), "# hosts to ignore\n0x%016llx\n",
		 (unsigned long long)(FX_CA_GUID_BASE + 0x200 + 1));
	g_assert_cmpuint(leaf0_exit_to_host3(text, &c), ==, 3);
	/* OpenSM 3.3's form: switch node GUID and port number (leaf 0, port 3) */
	snprintf(text, sizeof(text), "0x%llx 3 # leaf-0 up port\n",
		 (unsigned long long)FX_SWITCH_GUID_BASE);
	g_assert_cmpuint(leaf0_exit_to_host3(text, &c), ==, 3);
	/* a GUID not in the fabric changes nothing */
	g_assert_cmpuint(leaf0_exit_to_host3("0x1234\n", &c), ==, 4);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, ""), ==, 0);
	fx_core_clear(&c);
}

static void test_ignore_file_bad_lines(void)
{
	struct fx_core c;
	char text[512];
	fx_core_init(&c);
	snprintf(text, sizeof(text),
		 "zzz\n"                  /* 1: not hex */
		 "\n"                     /* 2: blank */
		 "0x12 junk\n"            /* 3 */
		 "0x%016llx\n"            /* 4: good, host 2 */
		 "0x0\n"                  /* 5: GUID 0 */
		 "0x12 300\n"             /* 6: port out of range */
		 "0x11112222333344445\n", /* 7: too long */
		 (unsigned long long)(FX_CA_GUID_BASE + 0x200 + 1));
	/* the good line still takes effect */
	g_assert_cmpuint(leaf0_exit_to_host3(text, &c), ==, 3);
	static const char *const bad[] = { ":1: ", ":3: ", ":5: ", ":6: ", ":7: " };
	for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++)
		g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, bad[i]), ==, 1);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, ":2: "), ==, 0);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, ":4: "), ==, 0);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, "line skipped"), ==, 5);

	/* an unreadable file: logged, routing goes on without it */
	fx_core_set(&c, "port_prof_ignore_file", "/nonexistent/ignore-guids");
	struct fabric *f = fx_kary_ntree(2, 2, 0);
	struct fx_run r;
	g_assert_cmpint(fx_route(minhop, &c, &f->pub, NULL, &r), ==, 0);
	g_assert_cmpuint(fx_run_entry(&r, 0, fx_ca_lid(f, 3)), ==, 4);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, "/nonexistent/ignore-guids"), ==, 1);
	fx_run_clear(&r);
	fabric_unref(f);
	fx_core_clear(&c);
}

/* route() runs every sweep: bad lines of an unchanged file are errors once, then verbose. */
static void test_ignore_file_logged_once(void)
{
	struct fx_core c;
	fx_core_init(&c);
	char *path = write_temp("not-a-guid\n");
	fx_core_set(&c, "port_prof_ignore_file", path);
	struct fabric *f = fx_kary_ntree(2, 2, 0);
	struct fx_run r;
	struct ibsm_scope all = fx_scope_all();
	g_assert_cmpint(fx_route(minhop, &c, &f->pub, NULL, &r), ==, 0);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, ":1: "), ==, 1);
	void *again = NULL;
	g_assert_cmpint(minhop->route(r.inst, &f->pub, &all, &r.routes, &again), ==, 0);
	minhop->result_free(again);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, ":1: "), ==, 1);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_VERBOSE, ":1: "), ==, 1);
	/* a changed file is news again */
	GError *err = NULL;
	g_assert_true(g_file_set_contents(path, "not-a-guid\n\nstill-not\n", -1, &err));
	g_assert_no_error(err);
	g_assert_cmpint(minhop->route(r.inst, &f->pub, &all, &r.routes, &again), ==, 0);
	minhop->result_free(again);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, ":1: "), ==, 2);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, ":3: "), ==, 1);
	fx_run_clear(&r);
	unlink(path);
	g_free(path);
	fabric_unref(f);
	fx_core_clear(&c);
}

/* The same tables whatever the number of worker threads. */
static void test_threads_deterministic(void)
{
	struct fabric *f = fx_kary_ntree(4, 3, 1);
	struct fx_core c;
	struct fx_run one, more;
	fx_core_init(&c);
	fx_core_set(&c, "minhop_threads", "1");
	g_assert_cmpint(fx_route(minhop, &c, &f->pub, NULL, &one), ==, 0);
	size_t n = (size_t)f->pub.n_switches * one.routes.stride;
	for (int t = 2; t <= 5; t += 3) {
		char v[16];
		snprintf(v, sizeof(v), "%d", t);
		fx_core_set(&c, "minhop_threads", v);
		g_assert_cmpint(fx_route(minhop, &c, &f->pub, NULL, &more), ==, 0);
		g_assert_cmpmem(one.routes.lft, n, more.routes.lft, n);
		fx_run_clear(&more);
	}
	struct fx_walk_stats st;
	fx_walk_all(&f->pub, one.routes.lft, one.routes.stride, &st);
	g_assert_cmpuint(st.delivered, ==, st.pairs);
	g_assert_cmpuint(st.longer, ==, 0);
	fx_run_clear(&one);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* Does switch s of f have an end port (a CA) behind one of its ports? */
static int has_ca(const struct fabric *f, uint32_t s)
{
	const struct ibsm_node *node = ibsm_switch_node(&f->pub, s);
	for (uint32_t p = 1; p <= node->nports; p++) {
		uint32_t peer = ibsm_port_at(&f->pub, node->port0 + p)->peer;
		if (peer != IBSM_NONE &&
		    ibsm_node_at(&f->pub, ibsm_port_at(&f->pub, peer)->node)->type != IBSM_SWITCH)
			return 1;
	}
	return 0;
}

/* A second route() on the same instance after a link went away copies the rows whose inputs
 * did not change (plugins/common/mhc_memo.c), and of the rows whose hops changed only toward
 * switches without CAs, the CA entries; it gives, byte for byte, the tables a fresh instance
 * computes; so does a third on the first fabric again. LEAF: the link is a leaf switch's
 * (hops toward its CAs change: those rows are filled again), else one between the top two
 * levels (no CA there: every row the change touches keeps its CA entries). CORE_ROWS: the
 * core lends last_rows() (ABI 1.4) with the rows the last route() left, and the memo keeps no
 * copy of its own; CORE_ROWS 2: it lends the service but keeps no rows, so nothing is copied. */
static void memo_case(int leaf, int core_rows)
{
	struct fabric *f1 = fx_kary_ntree(4, 3, 1);
	uint32_t sw_id = f1->pub.n_switches - 1; /* the last switch: top level */
	if (leaf)
		for (sw_id = 0; !has_ca(f1, sw_id); sw_id++)
			;
	const struct ibsm_switch *sw = &f1->switches[sw_id];
	g_assert_cmpint(has_ca(f1, sw_id), ==, leaf);
	g_assert_cmpint(has_ca(f1, f1->adj[sw->adj0].peer_sw), ==, 0);
	struct fabric *f2 = fx_first_link_gone(f1, sw_id, 1);
	struct fx_core c;
	struct fx_run r, fresh;
	struct ibsm_scope all = fx_scope_all();
	fx_core_init(&c);
	if (core_rows) /* the service lent from the first route() on, as an ABI 1.4 core does */
		fx_core_keep_rows(&c, NULL, 0, 0);
	g_assert_cmpint(fx_route(minhop, &c, &f1->pub, NULL, &r), ==, 0);
	uint32_t S = f2->pub.n_switches;
	size_t n = (size_t)S * r.routes.stride;
	const struct fabric *order[2] = { f2, f1 };
	uint8_t *last = g_memdup2(r.routes.lft, n); /* what the last route() of r.inst left */
	for (int i = 0; i < 2; i++) {
		const struct fabric *f = order[i];
		struct ibsm_routes again = r.routes;
		again.lft = g_malloc(n + 1);
		memset(again.lft, IBSM_NO_PORT, n + 1);
		if (core_rows)
			fx_core_keep_rows(&c, core_rows == 1 ? last : NULL, S, r.routes.stride);
		void *res = NULL;
		g_assert_cmpint(minhop->route(r.inst, &f->pub, &all, &again, &res), ==, 0);
		minhop->result_free(res);
		memcpy(last, again.lft, n);
		fx_core_keep_rows(&c, NULL, 0, 0); /* the fresh instances below get none */
		g_assert_cmpint(fx_route(minhop, &c, &f->pub, NULL, &fresh), ==, 0);
		g_assert_cmpuint(fresh.routes.stride, ==, again.stride);
		g_assert_cmpmem(again.lft, n, fresh.routes.lft, n);
		fx_run_clear(&fresh);
		g_free(again.lft);
	}
	g_free(last);
	/* fills: f1, f2 (memo), f2 fresh, f1 (memo), f1 fresh; the memo ones copied rows (not
	 * without rows to copy from) */
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_VERBOSE, "rows as the last fill left them"), ==, 5);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_VERBOSE, "(0 rows as the last fill left them"), ==,
			 core_rows == 2 ? 5 : 3);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_VERBOSE, ", 0 in part)"), ==, core_rows == 2 ? 5 : 3);
	if (core_rows)
		g_assert_cmpuint(c.rows_calls, >=, 2);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f1);
	fabric_unref(f2);
}

static void test_memo_equals_fresh(void)
{
	memo_case(0, 0);
}

static void test_memo_leaf_link(void)
{
	memo_case(1, 0);
}

static void test_memo_core_rows(void)
{
	memo_case(0, 1);
	memo_case(1, 1);
}

static void test_memo_core_none(void)
{
	memo_case(1, 2);
}

static void test_cancel_and_bad_stride(void)
{
	struct fabric *f = fx_kary_ntree(4, 2, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	c.cancel = 1;
	g_assert_cmpint(fx_route(minhop, &c, &f->pub, NULL, &r), ==, -ECANCELED);
	g_assert_null(r.result);
	g_assert_cmpuint(c.cancel_calls, >, 0);
	g_assert_nonnull(strstr(r.routes.why, "cancel"));
	fx_run_clear(&r);
	c.cancel = 0;

	void *inst = NULL, *result = NULL;
	struct ibsm_scope all = fx_scope_all();
	struct ibsm_routes short_rows = { .size = sizeof(short_rows), .stride = f->pub.max_lid };
	short_rows.lft = g_malloc((size_t)f->pub.n_switches * short_rows.stride);
	g_assert_cmpint(minhop->setup(&c.core, &inst), ==, 0);
	g_assert_cmpint(minhop->route(inst, &f->pub, &all, &short_rows, &result), ==, -EINVAL);
	g_assert_null(result);
	g_assert_nonnull(strstr(short_rows.why, "stride"));
	minhop->teardown(inst);
	g_free(short_rows.lft);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* halfbit: only offset 1 of each destination, only in the first half of the scope's rows,
 * on min-hop paths. */
static void test_halfbit(void)
{
	struct fabric *f = fx_ring(5, 1, 1);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(halfbit, &c, &f->pub, NULL, &r), ==, 0);
	uint8_t *hops = fx_switch_hops_all(&f->pub);
	for (uint32_t s = 0; s < 5; s++)
		for (uint32_t l = 1; l <= f->pub.max_lid; l++) {
			uint32_t p = f->pub.lid_port[l];
			uint8_t e = fx_run_entry(&r, s, l);
			if (s >= 3 || p == IBSM_NONE || l != f->ports[p].lid + 1u) {
				g_assert_cmpuint(e, ==, IBSM_NO_PORT);
				continue;
			}
			g_assert_cmpuint(e, !=, IBSM_NO_PORT);
			uint32_t t = ibsm_port_switch(&f->pub, p);
			if (t == s)
				continue;
			uint32_t peer = f->ports[fx_switch_port(&f->pub, s, e)].peer;
			uint32_t n = f->nodes[f->ports[peer].node].sw;
			g_assert_cmpuint(hops[n * 5 + t] + 1, ==, hops[s * 5 + t]);
		}
	fx_run_clear(&r);

	/* scope of switches {1, 3, 4}: rows 1 and 3 only; path bits [2, 4): nothing */
	struct ibsm_scope sc = fx_scope_all();
	sc.switches = fx_bits_new(5);
	fx_bits_set(&sc.switches, 1);
	fx_bits_set(&sc.switches, 3);
	fx_bits_set(&sc.switches, 4);
	g_assert_cmpint(fx_route(halfbit, &c, &f->pub, &sc, &r), ==, 0);
	for (uint32_t s = 0; s < 5; s++)
		for (uint32_t h = 0; h < 5; h++)
			g_assert_cmpuint(fx_run_entry(&r, s, fx_ca_lid(f, h) + 1) != IBSM_NO_PORT, ==,
					 s == 1 || s == 3);
	fx_run_clear(&r);
	sc.path_bit_first = 2;
	sc.path_bit_count = 2;
	g_assert_cmpint(fx_route(halfbit, &c, &f->pub, &sc, &r), ==, 0);
	for (size_t i = 0; i < (size_t)5 * r.routes.stride; i++)
		g_assert_cmpuint(r.routes.lft[i], ==, IBSM_NO_PORT);
	fx_run_clear(&r);
	fx_bits_free(&sc.switches);
	g_free(hops);
	fx_core_clear(&c);
	fabric_unref(f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	GModule *m1 = NULL, *m2 = NULL;
	minhop = fx_engine_open(TEST_PLUGIN_DIR "/minhop.so", &m1);
	halfbit = fx_engine_open(TEST_TPLUGIN_DIR "/halfbit.so", &m2);
	g_test_add_func("/minhop/engine-symbol", test_engine_symbol);
	if (minhop) {
		g_test_add_func("/minhop/config-keys", test_config_keys);
		g_test_add_func("/minhop/line", test_line);
		g_test_add_func("/minhop/ring", test_ring);
		g_test_add_func("/minhop/trees-and-tori", test_trees_and_tori);
		g_test_add_func("/minhop/balance-fat-tree", test_balance_fat_tree);
		g_test_add_func("/minhop/lmc-spreading", test_lmc_spreading);
		g_test_add_func("/minhop/scope-switches", test_scope_switches);
		g_test_add_func("/minhop/scope-path-bits-and-dests", test_scope_path_bits_and_dests);
		g_test_add_func("/minhop/scope-ports", test_scope_ports);
		g_test_add_func("/minhop/unreachable", test_unreachable);
		g_test_add_func("/minhop/ignore-file", test_ignore_file);
		g_test_add_func("/minhop/ignore-file-bad-lines", test_ignore_file_bad_lines);
		g_test_add_func("/minhop/ignore-file-logged-once", test_ignore_file_logged_once);
		g_test_add_func("/minhop/threads-deterministic", test_threads_deterministic);
		g_test_add_func("/minhop/cancel-and-bad-stride", test_cancel_and_bad_stride);
		g_test_add_func("/minhop/memo-equals-fresh", test_memo_equals_fresh);
		g_test_add_func("/minhop/memo-leaf-link", test_memo_leaf_link);
		g_test_add_func("/minhop/memo-core-rows", test_memo_core_rows);
		g_test_add_func("/minhop/memo-core-none", test_memo_core_none);
	}
	if (halfbit)
		g_test_add_func("/halfbit/scope", test_halfbit);
	int rc = g_test_run();
	if (m1)
		g_module_close(m1);
	if (m2)
		g_module_close(m2);
	return rc;
}
