/* test_updn.c - the updn and dnup engine plugins (one source, two .so) on small in-memory
 * fabrics: root detection (hop histogram on fat trees; elsewhere roots chosen by the balance
 * of their routes, one or several, never worse than the best root alone), the root GUID file
 * and its bad lines, ranking, the up/down rule on every CA pair, switch LIDs reachable on a
 * degraded tree (up-down-up turns counted), connect_roots, scope, LMC, balance, the (channel,
 * VL) dependency graph of the CA routes free of cycles on irregular fabrics, a 3D torus, a fat
 * tree and a ring; dnup's ranks from the leaf switches, its down/up rule, its declines and
 * connect_roots. Loads the built .so as the core would and reads its result through
 * plugins/updn/updn.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include <gmodule.h>
#include "fabric_fixture.h"
#include "fabric_shapes.h"
#include "../../plugins/updn/updn.h"

static const struct ibsm_engine *updn, *dnup;

static uint64_t sw_guid(const struct fabric *f, uint32_t s)
{
	return f->nodes[f->switches[s].node].guid;
}

static const struct updn_result *res_of(const struct fx_run *r)
{
	g_assert_nonnull(r->result);
	return r->result;
}

/* s -> x is an up step: x comes first in the engine's strict order (updn: lower rank, then
 * nearer the first root, then lower GUID; dnup: higher rank first). */
static int up_step(const struct updn_result *res, uint32_t s, uint32_t x)
{
	return res->ord[x] < res->ord[s];
}

static char *write_temp(const char *text)
{
	GError *err = NULL;
	char *path = NULL;
	int fd = g_file_open_tmp("updn-roots-XXXXXX", &path, &err);
	g_assert_no_error(err);
	close(fd);
	g_assert_true(g_file_set_contents(path, text, -1, &err));
	g_assert_no_error(err);
	return path;
}

/* Walks every CA port to every LID of every CA port: all delivered, and no route takes an up
 * step after a down step. Returns the pairs walked. */
static unsigned check_updown(const struct fabric *f, const struct fx_run *r)
{
	const struct ibsm_fabric *pf = &f->pub;
	const struct updn_result *res = res_of(r);
	unsigned pairs = 0;
	for (uint32_t src = 0; src < pf->n_ports; src++) {
		if (!fx_is_ca_port(pf, src))
			continue;
		for (uint32_t lid = 1; lid <= pf->max_lid; lid++) {
			uint32_t dst = pf->lid_port[lid];
			if (dst == IBSM_NONE || dst == src || !fx_is_ca_port(pf, dst))
				continue;
			unsigned hops;
			g_assert_cmpint(fx_walk(pf, r->routes.lft, r->routes.stride, src,
						(uint16_t)lid, &hops), ==, FX_DELIVERED);
			uint32_t s = ibsm_port_switch(pf, src);
			int went_down = 0;
			for (unsigned n = 0; n <= pf->n_switches; n++) {
				uint8_t out = fx_run_entry(r, s, lid);
				const struct ibsm_node *node = &pf->nodes[f->switches[s].node];
				uint32_t peer = pf->ports[node->port0 + out].peer;
				const struct ibsm_node *pn = &pf->nodes[pf->ports[peer].node];
				if (pn->type != IBSM_SWITCH)
					break;
				uint32_t x = pn->sw;
				int up = up_step(res, s, x);
				if (up && went_down)
					g_error("LID %u from port %u: up step after a down step at "
						"switch %u", lid, src, s);
				went_down |= !up;
				s = x;
			}
			pairs++;
		}
	}
	return pairs;
}

static void route_ok(const struct fabric *f, struct fx_core *c, const struct ibsm_scope *sc,
		     struct fx_run *r)
{
	g_assert_cmpint(fx_route(updn, c, &f->pub, sc, r), ==, 0);
	g_assert_nonnull(r->result);
}

static void route_dnup(const struct fabric *f, struct fx_core *c, struct fx_run *r)
{
	g_assert_cmpint(fx_route(dnup, c, &f->pub, NULL, r), ==, 0);
	g_assert_nonnull(r->result);
}

static void test_engine_symbol(void)
{
	g_assert_nonnull(updn);
	g_assert_cmpstr(updn->name, ==, "updn");
	g_assert_cmpuint(updn->abi_major, ==, IBSM_ABI_MAJOR);
	g_assert_cmpuint(updn->size, ==, sizeof(struct ibsm_engine));
	g_assert_true(updn->caps & IBSM_CAP_LMC);
	g_assert_nonnull(updn->setup);
	g_assert_nonnull(updn->route);
	g_assert_nonnull(updn->result_free);
}

/* ABI 1.1: the keys route() reads are declared, with the defaults a file would spell. */
static void test_config_keys(void)
{
	struct fabric *f = fx_kary_ntree(4, 2, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(updn, &c, &f->pub, NULL, &r), ==, 0);
	g_assert_true(g_hash_table_contains(c.asked, "root_guid_file"));
	g_assert_true(g_hash_table_contains(c.asked, "connect_roots"));
	fx_check_declared(&c, updn);
	g_assert_nonnull(fx_engine_key(updn, "root_guid_file"));
	g_assert_null(fx_engine_key(updn, "root_guid_file")->default_value);
	g_assert_nonnull(fx_engine_key(updn, "connect_roots"));
	g_assert_cmpstr(fx_engine_key(updn, "connect_roots")->default_value, ==, "FALSE");
	g_assert_null(fx_engine_key(updn, "port_prof_ignore_file"));
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* 4-ary 3-tree: only the top switches (ids 32..47) see 90% of the CAs at one distance. */
static void test_roots_fat_tree(void)
{
	struct fabric *f = fx_kary_ntree(4, 3, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	route_ok(f, &c, NULL, &r);
	const struct updn_result *res = res_of(&r);
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		g_assert_cmpuint(res->is_root[s], ==, s >= 32);
		g_assert_cmpuint(res->how[s], ==, UPDN_ROOT_HISTOGRAM);
		g_assert_cmpuint(res->rank[s], ==, s < 16 ? 2 : s < 32 ? 1 : 0);
	}
	g_assert_cmpuint(res->nroots, ==, 16);
	g_assert_cmpuint(res->max_rank, ==, 2);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "roots by hop histogram"), ==, 1);
	g_assert_cmpuint(check_updown(f, &r), ==, 64 * 63);
	g_assert_cmpuint(res->ca_no_path, ==, 0);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);

	/* XGFT(3; 2,2,22; 1,2,2): every switch passes OpenSM's test (no bar but one above 5%);
	 * the tops see the CAs nearest (2 hops) and are the only roots */
	unsigned m[] = { 2, 2, 22 }, w[] = { 1, 2, 2 };
	f = fx_xgft(3, m, w, 0);
	fx_core_init(&c);
	route_ok(f, &c, NULL, &r);
	res = res_of(&r);
	uint32_t S = f->pub.n_switches;
	g_assert_cmpuint(S, ==, 44 + 44 + 4);
	for (uint32_t s = 0; s < S; s++)
		g_assert_cmpuint(res->is_root[s], ==, s >= 88);
	char needle[64];
	snprintf(needle, sizeof(needle), "%u of %u switches", S, S);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, needle), ==, 1);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "at 2 hops are the roots"), ==, 1);
	check_updown(f, &r);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* No histogram root: the fall-back picks the most central switch, logs it, and is
 * deterministic; the tables still deliver every pair, strictly up/down. */
static void test_roots_fallback(void)
{
	/* line of 5: the middle switch */
	struct fabric *f = fx_line(5, 1, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	route_ok(f, &c, NULL, &r);
	const struct updn_result *res = res_of(&r);
	for (uint32_t s = 0; s < 5; s++) {
		g_assert_cmpuint(res->is_root[s], ==, s == 2);
		g_assert_cmpuint(res->how[s], ==, UPDN_ROOT_CENTRE);
	}
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "least eccentricity"), ==, 1);
	check_updown(f, &r);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);

	/* ring and torus: all switches alike; same root and same tables every time */
	struct fabric *shapes[] = { fx_ring(6, 1, 0), fx_torus2d(4, 4, 2, 0), fx_ring(7, 2, 1) };
	for (unsigned i = 0; i < G_N_ELEMENTS(shapes); i++) {
		f = shapes[i];
		struct fx_run a, b;
		fx_core_init(&c);
		route_ok(f, &c, NULL, &a);
		route_ok(f, &c, NULL, &b);
		g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "hop histogram finds none"), ==,
				 2);
		g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "roots by the routes they give"),
				 ==, 2);
		const struct updn_result *ra = res_of(&a), *rb = res_of(&b);
		g_assert_cmpuint(ra->nroots, >=, 1);
		g_assert_cmpuint(ra->nroots, ==, rb->nroots);
		g_assert_cmpuint(ra->load_max, <=, ra->load_single);
		g_assert_cmpuint(ra->load_single, <=, ra->load_detected);
		g_assert_cmpmem(ra->is_root, f->pub.n_switches, rb->is_root, f->pub.n_switches);
		size_t n = (size_t)f->pub.n_switches * a.routes.stride;
		g_assert_cmpmem(a.routes.lft, n, b.routes.lft, n);
		struct fx_walk_stats st;
		fx_walk_all(&f->pub, a.routes.lft, a.routes.stride, &st);
		g_assert_cmpuint(st.delivered, ==, st.pairs);
		g_assert_cmpuint(st.loops + st.black_holes + st.wrong, ==, 0);
		check_updown(f, &a);
		g_assert_cmpuint(ra->ca_no_path, ==, 0);
		fx_run_clear(&a);
		fx_run_clear(&b);
		fx_core_clear(&c);
		fabric_unref(f);
	}
}

/* The root file: good lines count, bad lines are logged with file:line and skipped, GUIDs
 * not in the fabric are logged. Ranks follow by BFS from the file's roots. */
static void test_root_file(void)
{
	struct fabric *f = fx_line(5, 1, 0);
	struct fx_core c;
	struct fx_run r;
	char text[512];
	fx_core_init(&c);
	snprintf(text, sizeof(text),
		 "# roots\n"                 /* 1 */
		 "zzz\n"                     /* 2: not hex */
		 "0x%016llx\n"               /* 3: switch 1 */
		 "\n"                        /* 4 */
		 "0x12 junk\n"               /* 5 */
		 "0x0\n"                     /* 6 */
		 "0x1234  # not a switch\n"  /* 7: unknown */
		 "%llx\n"                    /* 8: switch 2, no 0x */
		 "0x11112222333344445\n",    /* 9: too long */
		 (unsigned long long)sw_guid(f, 1), (unsigned long long)sw_guid(f, 2));
	char *path = write_temp(text);
	fx_core_set(&c, "root_guid_file", path);
	route_ok(f, &c, NULL, &r);
	const struct updn_result *res = res_of(&r);
	static const unsigned rank[] = { 1, 0, 0, 1, 2 };
	for (uint32_t s = 0; s < 5; s++) {
		g_assert_cmpuint(res->is_root[s], ==, s == 1 || s == 2);
		g_assert_cmpuint(res->rank[s], ==, rank[s]);
		g_assert_cmpuint(res->how[s], ==, UPDN_ROOT_FILE);
	}
	g_assert_cmpuint(res->max_rank, ==, 2);
	char where[300];
	static const unsigned bad[] = { 2, 5, 6, 9 };
	for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
		snprintf(where, sizeof(where), "%s:%u: ", path, bad[i]);
		g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, where), ==, 1);
	}
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, "line skipped"), ==, 4);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "0x0000000000001234 is no switch"), ==,
			 1);
	g_assert_cmpuint(c.hops_calls, ==, 0); /* the file covers the fabric: no detection */
	check_updown(f, &r);

	/* route() again on the unchanged file: bad lines no longer errors */
	void *again = NULL;
	struct ibsm_scope all = fx_scope_all();
	g_assert_cmpint(updn->route(r.inst, &f->pub, &all, &r.routes, &again), ==, 0);
	updn->result_free(again);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, "line skipped"), ==, 4);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_VERBOSE, "line skipped"), ==, 4);
	fx_run_clear(&r);
	unlink(path);
	g_free(path);

	/* roots at both ends of the line: no up/down path joins switches 1 and 3, so the engine
	 * says so and routes with the detected (central) root instead */
	snprintf(text, sizeof(text), "0x%016llx\n0x%016llx\n", (unsigned long long)sw_guid(f, 0),
		 (unsigned long long)sw_guid(f, 4));
	path = write_temp(text);
	fx_core_set(&c, "root_guid_file", path);
	route_ok(f, &c, NULL, &r);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, "without an up/down path"), ==, 1);
	for (uint32_t s = 0; s < 5; s++)
		g_assert_cmpuint(res_of(&r)->is_root[s], ==, s == 2);
	g_assert_cmpuint(res_of(&r)->ca_no_path, ==, 0);
	check_updown(f, &r);
	fx_run_clear(&r);
	unlink(path);
	g_free(path);

	/* a file naming no switch of the fabric: detection takes over */
	path = write_temp("0x1234\n");
	fx_core_set(&c, "root_guid_file", path);
	route_ok(f, &c, NULL, &r);
	g_assert_cmpuint(res_of(&r)->is_root[2], ==, 1);
	g_assert_cmpuint(res_of(&r)->how[2], ==, UPDN_ROOT_CENTRE);
	fx_run_clear(&r);
	unlink(path);
	g_free(path);

	/* an unreadable file: logged, detection takes over */
	fx_core_set(&c, "root_guid_file", "/nonexistent/roots");
	route_ok(f, &c, NULL, &r);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, "/nonexistent/roots"), ==, 1);
	g_assert_cmpuint(res_of(&r)->is_root[2], ==, 1);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* A pseudo-random connected graph of 24 switches (2 hosts each): every pair delivered,
 * strictly up/down, with the fall-back root. */
static void test_updown_irregular(void)
{
	struct fx_builder x;
	fx_builder_init(&x);
	enum { NS = 24 };
	uint32_t sw[NS];
	uint8_t next_port[NS];
	for (unsigned i = 0; i < NS; i++) {
		char name[16];
		snprintf(name, sizeof(name), "s%u", i);
		sw[i] = fx_add_switch(&x, 12, name);
		next_port[i] = 3;
	}
	for (unsigned i = 0; i < NS; i++)
		for (uint8_t p = 1; p <= 2; p++) {
			char name[16];
			snprintf(name, sizeof(name), "h%u-%u", i, p);
			fx_link(&x, sw[i], p, fx_add_ca(&x, 1, name), 1);
		}
	guint32 seed = 12345;
	for (unsigned i = 1; i < NS; i++) { /* a random spanning tree, then extra links */
		seed = seed * 1103515245u + 12345u;
		unsigned j = (seed >> 8) % i;
		fx_link(&x, sw[i], next_port[i]++, sw[j], next_port[j]++);
	}
	for (unsigned e = 0; e < 16; e++) {
		seed = seed * 1103515245u + 12345u;
		unsigned a = (seed >> 8) % NS;
		seed = seed * 1103515245u + 12345u;
		unsigned b = (seed >> 8) % NS;
		if (a == b || next_port[a] > 12 || next_port[b] > 12)
			continue;
		fx_link(&x, sw[a], next_port[a]++, sw[b], next_port[b]++);
	}
	struct fabric *f = fx_finish(&x, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	route_ok(f, &c, NULL, &r);
	struct fx_walk_stats st;
	fx_walk_all(&f->pub, r.routes.lft, r.routes.stride, &st);
	g_assert_cmpuint(st.delivered, ==, st.pairs);
	g_assert_cmpuint(check_updown(f, &r), ==, 48 * 47);
	g_assert_cmpuint(res_of(&r)->nroots, >=, 1);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* 4-ary 2-tree with all spines as roots (file) and leaf 0's link to spine 0 out of scope:
 * no up/down path reaches spine 0's LID from leaf 0, yet every end port reaches every LID;
 * the up-down-up entries are counted and logged; CA routes stay strictly up/down. */
static void test_switch_lids_degraded(void)
{
	const unsigned k = 4;
	struct fabric *f = fx_kary_ntree(k, 2, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	GString *roots = g_string_new(NULL);
	for (uint32_t s = k; s < 2 * k; s++)
		g_string_append_printf(roots, "0x%016llx\n", (unsigned long long)sw_guid(f, s));
	char *path = write_temp(roots->str);
	g_string_free(roots, TRUE);
	fx_core_set(&c, "root_guid_file", path);
	struct ibsm_scope sc = fx_scope_all();
	sc.ports = fx_bits_new(f->pub.n_ports);
	uint32_t cut = fx_switch_port(&f->pub, 0, (uint8_t)(k + 1)); /* leaf 0 -> spine 0 */
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		if (p != cut)
			fx_bits_set(&sc.ports, p);
	route_ok(f, &c, &sc, &r);
	const struct updn_result *res = res_of(&r);
	g_assert_cmpuint(fx_run_entry(&r, 0, fx_switch_lid(f, k)), !=, IBSM_NO_PORT);
	g_assert_cmpuint(fx_run_entry(&r, 0, fx_switch_lid(f, k)), !=, k + 1);
	struct fx_walk_stats st;
	fx_walk_all(&f->pub, r.routes.lft, r.routes.stride, &st);
	g_assert_cmpuint(st.delivered, ==, st.pairs);
	g_assert_cmpuint(res->udu_entries, >, 0);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "up-down-up"), ==, 1);
	check_updown(f, &r);
	g_assert_cmpuint(res->ca_no_path, ==, 0);
	/* leaf 0 reaches spine 0 through another spine and leaf: 3 links */
	unsigned hops;
	g_assert_cmpint(fx_walk(&f->pub, r.routes.lft, r.routes.stride, fx_switch_port(&f->pub, 0, 0),
				fx_switch_lid(f, k), &hops), ==, FX_DELIVERED);
	g_assert_cmpuint(hops, ==, 3);
	fx_run_clear(&r);

	/* connect_roots: routes to the root switches' LIDs are plain min-hop (logged) */
	fx_core_set(&c, "connect_roots", "TRUE");
	route_ok(f, &c, &sc, &r);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "connect_roots"), ==, 1);
	uint8_t *hm = fx_switch_hops_all(&f->pub);
	for (uint32_t s = 1; s < k; s++)
		for (uint32_t t = k; t < 2 * k; t++) {
			g_assert_cmpint(fx_walk(&f->pub, r.routes.lft, r.routes.stride,
						fx_switch_port(&f->pub, s, 0), fx_switch_lid(f, t), &hops), ==,
					FX_DELIVERED);
			g_assert_cmpuint(hops, ==, hm[s * f->pub.n_switches + t]);
		}
	check_updown(f, &r);
	g_free(hm);
	fx_run_clear(&r);
	fx_bits_free(&sc.ports);
	unlink(path);
	g_free(path);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* Rows outside scope->switches stay untouched; rows inside equal the full-scope rows. Path
 * bits and dests: only those LIDs are written. */
static void test_scope(void)
{
	struct fabric *f = fx_kary_ntree(4, 2, 0);
	struct fx_core c;
	struct fx_run full, part;
	fx_core_init(&c);
	route_ok(f, &c, NULL, &full);
	struct ibsm_scope sc = fx_scope_all();
	sc.switches = fx_bits_new(f->pub.n_switches);
	for (uint32_t s = 0; s < f->pub.n_switches; s += 3)
		fx_bits_set(&sc.switches, s);
	route_ok(f, &c, &sc, &part);
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
	fx_bits_free(&sc.switches);
	fx_run_clear(&full);
	fabric_unref(f);

	/* path bits [1, 3) of LMC 2, half the hosts as dests, all switch LIDs */
	f = fx_ring(4, 2, 2);
	struct fx_run r;
	sc = fx_scope_all();
	sc.path_bit_first = 1;
	sc.path_bit_count = 2;
	sc.dests = fx_bits_new(f->pub.n_ports);
	for (uint32_t h = 0; h < 8; h += 2)
		fx_bits_set(&sc.dests, fx_ca_port(&f->pub, h, 1));
	for (uint32_t s = 0; s < 4; s++)
		fx_bits_set(&sc.dests, fx_switch_port(&f->pub, s, 0));
	route_ok(f, &c, &sc, &r);
	for (uint32_t s = 0; s < 4; s++) {
		g_assert_cmpuint(fx_run_entry(&r, s, fx_switch_lid(f, s)), ==, IBSM_NO_PORT);
		for (uint32_t h = 0; h < 8; h++) {
			uint16_t base = fx_ca_lid(f, h);
			g_assert_cmpuint(fx_run_entry(&r, s, base), ==, IBSM_NO_PORT);
			g_assert_cmpuint(fx_run_entry(&r, s, base + 3), ==, IBSM_NO_PORT);
			for (unsigned o = 1; o <= 2; o++)
				g_assert_cmpuint(fx_run_entry(&r, s, base + o) != IBSM_NO_PORT, ==, h % 2 == 0);
		}
	}
	for (uint32_t src = 0; src < 8; src++)
		for (uint32_t h = 0; h < 8; h += 2)
			for (unsigned o = 1; o <= 2; o++) {
				unsigned nh;
				g_assert_cmpint(fx_walk(&f->pub, r.routes.lft, r.routes.stride,
							fx_ca_port(&f->pub, src, 1),
							(uint16_t)(fx_ca_lid(f, h) + o), &nh), ==,
						FX_DELIVERED);
			}
	fx_run_clear(&r);
	fx_bits_free(&sc.dests);

	/* a link out of scope is never used: ring of 6 without link 0-1 */
	fabric_unref(f);
	f = fx_ring(6, 1, 0);
	sc = fx_scope_all();
	sc.ports = fx_bits_new(f->pub.n_ports);
	uint32_t cut = fx_switch_port(&f->pub, 0, 2);
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		if (p != cut)
			fx_bits_set(&sc.ports, p);
	route_ok(f, &c, &sc, &r);
	for (uint32_t l = 1; l <= f->pub.max_lid; l++) {
		g_assert_cmpuint(fx_run_entry(&r, 0, l), !=, 2);
		g_assert_cmpuint(fx_run_entry(&r, 1, l), !=, 1);
		g_assert_cmpuint(fx_run_entry(&r, 0, l), !=, IBSM_NO_PORT);
	}
	check_updown(f, &r);
	fx_run_clear(&r);
	fx_bits_free(&sc.ports);

	/* no switch in scope: nothing written, still a success */
	sc = fx_scope_all();
	sc.switches = fx_bits_new(f->pub.n_switches);
	route_ok(f, &c, &sc, &r);
	for (size_t i = 0; i < (size_t)f->pub.n_switches * r.routes.stride; i++)
		g_assert_cmpuint(r.routes.lft[i], ==, IBSM_NO_PORT);
	fx_run_clear(&r);
	fx_bits_free(&sc.switches);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* LMC 2 on a 4-ary 2-tree: the 4 LIDs of every remote host leave a leaf by 4 different
 * spines; with spines paired into two system images, LIDs 0 and 1 use both systems. */
static void test_lmc(void)
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
		route_ok(f, &c, NULL, &r);
		check_updown(f, &r);
		for (uint32_t leaf = 0; leaf < k; leaf++)
			for (uint32_t h = 0; h < k * k; h++) {
				if (h / k == leaf)
					continue;
				uint16_t base = fx_ca_lid(f, h);
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

/* Balance: on 3-level fat trees the switch-link load is near even (OpenSM's updn: 5.5-11.5). */
static void test_balance(void)
{
	struct {
		unsigned k, n;
		double limit;
	} cases[] = { { 4, 3, 1.12 }, { 6, 3, 1.10 }, { 8, 2, 1.0001 } };
	for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct fabric *f = fx_kary_ntree(cases[i].k, cases[i].n, 0);
		struct fx_core c;
		struct fx_run r;
		fx_core_init(&c);
		route_ok(f, &c, NULL, &r);
		uint32_t max = 0;
		double ratio = fx_switch_link_load(&f->pub, r.routes.lft, r.routes.stride, NULL, &max);
		g_test_message("%u-ary %u-tree: switch-link load max %u, max/mean %.3f (engine says "
			       "%.3f)", cases[i].k, cases[i].n, max, ratio, res_of(&r)->balance);
		g_assert_cmpfloat(ratio, <, cases[i].limit);
		g_assert_cmpfloat(ratio - res_of(&r)->balance, <, 1e-9);
		g_assert_cmpfloat(res_of(&r)->balance - ratio, <, 1e-9);
		fx_run_clear(&r);
		fx_core_clear(&c);
		fabric_unref(f);
	}
}

/* Two islands: each routes within itself with its own root. */
static void test_islands_and_bad_stride(void)
{
	struct fabric *a = fx_line(3, 1, 0);
	struct fx_builder x;
	fx_builder_init(&x);
	uint32_t s0 = fx_add_switch(&x, 4, "a0"), s1 = fx_add_switch(&x, 4, "a1");
	uint32_t s2 = fx_add_switch(&x, 4, "b0"), s3 = fx_add_switch(&x, 4, "b1");
	fx_link(&x, s0, 1, s1, 1);
	fx_link(&x, s2, 1, s3, 1);
	fx_link(&x, s0, 2, fx_add_ca(&x, 1, "ha0"), 1);
	fx_link(&x, s1, 2, fx_add_ca(&x, 1, "ha1"), 1);
	fx_link(&x, s2, 2, fx_add_ca(&x, 1, "hb0"), 1);
	fx_link(&x, s3, 2, fx_add_ca(&x, 1, "hb1"), 1);
	struct fabric *f = fx_finish(&x, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	route_ok(f, &c, NULL, &r);
	const struct updn_result *res = res_of(&r);
	g_assert_cmpuint(res->is_root[0] + res->is_root[1], ==, 1);
	g_assert_cmpuint(res->is_root[2] + res->is_root[3], ==, 1);
	g_assert_cmpuint(fx_run_entry(&r, 0, fx_ca_lid(f, 1)), ==, 1);
	g_assert_cmpuint(fx_run_entry(&r, 0, fx_ca_lid(f, 2)), ==, IBSM_NO_PORT);
	g_assert_cmpuint(fx_run_entry(&r, 2, fx_ca_lid(f, 3)), ==, 1);
	g_assert_cmpuint(res->ca_no_path, ==, 0);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "no path in scope"), ==, 1);
	fx_run_clear(&r);

	void *inst = NULL, *result = NULL;
	struct ibsm_scope all = fx_scope_all();
	struct ibsm_routes short_rows = { .size = sizeof(short_rows), .stride = f->pub.max_lid };
	short_rows.lft = g_malloc((size_t)f->pub.n_switches * short_rows.stride);
	g_assert_cmpint(updn->setup(&c.core, &inst), ==, 0);
	g_assert_cmpint(updn->route(inst, &f->pub, &all, &short_rows, &result), ==, -EINVAL);
	g_assert_null(result);
	g_assert_nonnull(strstr(short_rows.why, "stride"));
	updn->teardown(inst);
	g_free(short_rows.lft);
	fx_core_clear(&c);
	fabric_unref(f);
	fabric_unref(a);
}

/* Roots chosen by their routes: on a 6x4x3 torus and a random irregular fabric (no hop
 * histogram root) the busiest switch link carries fewer CA routes than with the best root
 * alone, which is what the fall-back chose before (one central root, the best of the most
 * central by this measure); every pair still has an up/down path; the log says why. */
static void test_root_search(void)
{
	struct {
		const char *name;
		struct fabric *f;
	} shapes[] = {
		{ "torus 6x4x3", shape_torus3d(6, 4, 3, 2, 0) },
		{ "irregular 100", shape_irregular(100, 3, 100, 11, 0) },
	};
	for (unsigned i = 0; i < G_N_ELEMENTS(shapes); i++) {
		struct fabric *f = shapes[i].f;
		struct fx_core c;
		struct fx_run r;
		fx_core_init(&c);
		route_ok(f, &c, NULL, &r);
		const struct updn_result *res = res_of(&r);
		uint32_t max = 0;
		fx_switch_link_load(&f->pub, r.routes.lft, r.routes.stride, NULL, &max);
		g_test_message("%s: %u roots, busiest link %u CA routes (best root alone %llu, most "
			       "central root %llu), %u sets compared", shapes[i].name, res->nroots,
			       max, (unsigned long long)res->load_single,
			       (unsigned long long)res->load_detected, res->roots_tried);
		g_assert_cmpuint(max, ==, res->load_max);
		g_assert_cmpuint(res->load_max, <, res->load_single);
		g_assert_cmpuint(res->nroots, >, 1);
		g_assert_cmpuint(res->ca_no_path, ==, 0);
		struct fx_walk_stats st;
		fx_walk_all(&f->pub, r.routes.lft, r.routes.stride, &st);
		g_assert_cmpuint(st.delivered, ==, st.pairs);
		check_updown(f, &r);
		g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "roots by the routes they give"),
				 ==, 1);
		fx_run_clear(&r);
		fx_core_clear(&c);
		fabric_unref(f);
	}
}

/* Credit loops: the CA routes of updn and dnup, on irregular fabrics, a 3D torus, a fat tree
 * and a ring, are acyclic on their one VL (the data traffic's routes; switch LIDs may take
 * up-down-up turns on degraded trees, logged). The same check on minhop's tables of the torus
 * finds cycles, so it can fail. */
static void test_deadlock_free(void)
{
	struct fabric *shapes[] = {
		shape_irregular(40, 2, 40, 1, 0), shape_irregular(64, 2, 48, 7, 0),
		shape_torus3d(6, 4, 3, 2, 0), fx_kary_ntree(4, 3, 0), fx_ring(7, 2, 0),
	};
	for (unsigned i = 0; i < G_N_ELEMENTS(shapes); i++) {
		struct fabric *f = shapes[i];
		const struct ibsm_engine *engines[] = { updn, dnup };
		for (unsigned e = 0; e < 2; e++) {
			struct fx_core c;
			struct fx_run r;
			struct deadlock_report rep;
			fx_core_init(&c);
			g_assert_cmpint(fx_route(engines[e], &c, &f->pub, NULL, &r), ==, 0);
			struct fx_walk_stats st;
			fx_walk_all(&f->pub, r.routes.lft, r.routes.stride, &st);
			g_assert_cmpuint(st.delivered, ==, st.pairs);
			g_assert_cmpuint(fx_deadlock_check_ca(f, &r, &rep), ==, 0);
			g_assert_cmpuint(rep.vls, ==, 1);
			check_updown(f, &r);
			g_assert_cmpuint(rep.routes, >, 0);
			fx_run_clear(&r);
			fx_core_clear(&c);
		}
	}
	GModule *m = NULL;
	const struct ibsm_engine *minhop = fx_engine_open(TEST_PLUGIN_DIR "/minhop.so", &m);
	g_assert_nonnull(minhop);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(minhop, &c, &shapes[2]->pub, NULL, &r), ==, 0);
	g_assert_cmpuint(fx_deadlock_check_ca(shapes[2], &r, NULL), >, 0);
	fx_run_clear(&r);
	fx_core_clear(&c);
	g_module_close(m);
	for (unsigned i = 0; i < G_N_ELEMENTS(shapes); i++)
		fabric_unref(shapes[i]);
}

/* dnup: its own name and keys; the leaf switches (with CAs) are rank 0, the others ranked by
 * distance from them, and routes go away from the leaves then back (checked on every CA pair
 * with the engine's order, in which the higher rank comes first). */
static void test_dnup_ranks(void)
{
	g_assert_nonnull(dnup);
	g_assert_cmpstr(dnup->name, ==, "dnup");
	g_assert_nonnull(fx_engine_key(dnup, "connect_roots"));
	g_assert_null(fx_engine_key(dnup, "root_guid_file"));
	g_assert_nonnull(strstr(dnup->summary, "dnup"));
	struct fabric *f = fx_kary_ntree(4, 3, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	route_dnup(f, &c, &r);
	const struct updn_result *res = res_of(&r);
	g_assert_true(res->dnup);
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		g_assert_cmpuint(res->is_root[s], ==, s < 16);
		g_assert_cmpuint(res->rank[s], ==, s < 16 ? 0 : s < 32 ? 1 : 2);
		for (uint32_t t = 0; t < f->pub.n_switches; t++)
			if (res->rank[s] > res->rank[t])
				g_assert_cmpuint(res->ord[s], <, res->ord[t]);
	}
	g_assert_cmpuint(res->nroots, ==, 16);
	g_assert_cmpuint(check_updown(f, &r), ==, 64 * 63);
	fx_check_declared(&c, dnup);
	/* on the fat tree as balanced as updn from the top switches */
	struct fx_run u;
	route_ok(f, &c, NULL, &u);
	g_assert_cmpuint(res->load_max, ==, res_of(&u)->load_max);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "down/up: 16 leaf switches, max rank 2"),
			 ==, 1);
	fx_run_clear(&u);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);

	/* every switch with CAs: all rank 0, ordered by the distance from a chosen switch, so
	 * every pair is joined (up/down from that switch) */
	f = shape_irregular(30, 2, 30, 3, 0);
	fx_core_init(&c);
	route_dnup(f, &c, &r);
	res = res_of(&r);
	g_assert_cmpuint(res->max_rank, ==, 0);
	g_assert_cmpuint(res->ca_no_path, ==, 0);
	check_updown(f, &r);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "equal ranks ordered by the distance"),
			 ==, 1);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* dnup declines what it cannot join: a line host-X-host-Y-host, where the middle host's
 * switch lies between two switches without CAs, has no path away from the leaves and back
 * between the ends; connect_roots routes them anyway (logged), as OpenSM's dnup does; a
 * fabric without a leaf switch is declined too. */
static void test_dnup_declines(void)
{
	struct fabric *f = fx_line(5, 0, 0);
	struct fx_builder x;
	fx_builder_init(&x);
	uint32_t s[5];
	for (unsigned i = 0; i < 5; i++) {
		char name[16];
		snprintf(name, sizeof(name), "s%u", i);
		s[i] = fx_add_switch(&x, 4, name);
		if (i)
			fx_link(&x, s[i - 1], 2, s[i], 1);
		if (i % 2 == 0)
			fx_link(&x, s[i], 3, fx_add_ca(&x, 1, name), 1);
	}
	struct fabric *g = fx_finish(&x, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(dnup, &c, &g->pub, NULL, &r), ==, -EINVAL);
	g_assert_null(r.result);
	g_assert_nonnull(strstr(r.routes.why, "pairs have no path that goes away from the leaf"));
	g_assert_nonnull(strstr(r.routes.why, "connect_roots"));
	fx_run_clear(&r);
	fx_core_set(&c, "connect_roots", "TRUE");
	route_dnup(g, &c, &r);
	struct fx_walk_stats st;
	fx_walk_all(&g->pub, r.routes.lft, r.routes.stride, &st);
	g_assert_cmpuint(st.delivered, ==, st.pairs);
	g_assert_cmpuint(res_of(&r)->ca_no_path, >, 0);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, "may close credit loops"), ==, 1);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(g);

	fx_core_init(&c);
	g_assert_cmpint(fx_route(dnup, &c, &f->pub, NULL, &r), ==, -EINVAL);
	g_assert_nonnull(strstr(r.routes.why, "leaf switches"));
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	GModule *m = NULL;
	GModule *m2 = NULL;
	updn = fx_engine_open(TEST_PLUGIN_DIR "/updn.so", &m);
	dnup = fx_engine_open(TEST_PLUGIN_DIR "/dnup.so", &m2);
	g_test_add_func("/updn/engine-symbol", test_engine_symbol);
	if (updn) {
		g_test_add_func("/updn/config-keys", test_config_keys);
		g_test_add_func("/updn/roots-fat-tree", test_roots_fat_tree);
		g_test_add_func("/updn/roots-fallback", test_roots_fallback);
		g_test_add_func("/updn/root-file", test_root_file);
		g_test_add_func("/updn/updown-irregular", test_updown_irregular);
		g_test_add_func("/updn/switch-lids-degraded", test_switch_lids_degraded);
		g_test_add_func("/updn/scope", test_scope);
		g_test_add_func("/updn/lmc", test_lmc);
		g_test_add_func("/updn/balance", test_balance);
		g_test_add_func("/updn/islands-and-bad-stride", test_islands_and_bad_stride);
		g_test_add_func("/updn/root-search", test_root_search);
	}
	if (updn && dnup) {
		g_test_add_func("/updn/deadlock-free", test_deadlock_free);
		g_test_add_func("/dnup/ranks", test_dnup_ranks);
		g_test_add_func("/dnup/declines", test_dnup_declines);
	}
	int rc = g_test_run();
	if (m)
		g_module_close(m);
	if (m2)
		g_module_close(m2);
	return rc;
}
