/* test_nue.c - the nue engine plugin on small in-memory fabrics: every pair delivered and the
 * (channel, VL) dependency graph of the tables, path SLs and SL2VL tables free of cycles on
 * random irregular fabrics, a 3D torus, rings and fat trees with 1, 2, 4 and 8 VLs; never more
 * layers than the VLs given (nue_max_num_vls, VLCap, max_op_vls); path_sl and sl2vl; a chain
 * step's sub-scope; LMC; switch LIDs as destinations; threads, cancellation, islands. Loads the
 * built .so as the core would and reads its result through plugins/nue/route.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <glib.h>
#include <gmodule.h>
#include "fabric_fixture.h"
#include "fabric_shapes.h"
#include "../../plugins/nue/route.h"

static const struct ibsm_engine *nue;

static const struct nue_result *res_of(const struct fx_run *r)
{
	g_assert_nonnull(r->result);
	return r->result;
}

static uint32_t lcg(uint32_t *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 8;
}

/* ---- judging ------------------------------------------------------------------------------ */

/* Routes f with nue_max_num_vls = vls (and the keys in extra, key and value in turn) and
 * checks: every end port reaches every LID; the CA routes (and every route when the result
 * says none is outside the layers) are free of credit loops over the VLs the SL2VL tables
 * give; no more layers or VLs than asked for. Returns the layers. */
static uint32_t check_routes(struct fabric *f, unsigned vls, const char *const *extra,
			     const char *what)
{
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	char v[8];
	snprintf(v, sizeof(v), "%u", vls);
	fx_core_set(&c, "nue_max_num_vls", v);
	for (unsigned i = 0; extra && extra[i]; i += 2)
		fx_core_set(&c, extra[i], extra[i + 1]);
	g_assert_cmpint(fx_route(nue, &c, &f->pub, NULL, &r), ==, 0);
	const struct nue_result *res = res_of(&r);
	struct fx_walk_stats st;
	fx_walk_all(&f->pub, r.routes.lft, r.routes.stride, &st);
	g_assert_cmpuint(st.pairs, >, 0);
	g_assert_cmpuint(st.delivered, ==, st.pairs);
	struct deadlock_report rep;
	uint32_t cyc_ca = fx_deadlock_check_ca(f, &r, &rep);
	if (cyc_ca)
		g_test_message("%s: %s", what, rep.cycle);
	g_assert_cmpuint(cyc_ca, ==, 0);
	g_assert_cmpuint(res->layers, <=, vls ? vls : 15); /* 0: as many as the links have */
	g_assert_cmpuint(rep.vls, <=, res->layers);
	g_assert_cmpuint(res->layers, >=, 1);
	g_assert_false(res->cyclic);
	g_assert_cmpuint(res->unreachable, ==, 0);
	uint32_t cyc_all = fx_deadlock_check(f, &r, &rep);
	if (!res->outside)
		g_assert_cmpuint(cyc_all, ==, 0);
	uint32_t max;
	double ratio = fx_switch_link_load(&f->pub, r.routes.lft, r.routes.stride, NULL, &max);
	g_test_message("%s, %u VLs: %u layers, %u VLs used, max link %u (max/mean %.2f), "
		       "%llu outside, trial %u of %u", what, vls, res->layers, rep.vls, max, ratio,
		       (unsigned long long)res->outside, res->kept_trial + 1, res->trials);
	uint32_t layers = res->layers;
	fx_check_declared(&c, nue);
	fx_run_clear(&r);
	fx_core_clear(&c);
	return layers;
}

static void check_all_vls(struct fabric *f, const char *what)
{
	static const unsigned vls[] = { 1, 2, 4, 8 };
	for (unsigned i = 0; i < G_N_ELEMENTS(vls); i++) {
		uint32_t layers = check_routes(f, vls[i], NULL, what);
		g_assert_cmpuint(layers, ==, vls[i]); /* the fixture's ports have VL0-7 */
	}
}

/* ---- tests ------------------------------------------------------------------------------ */

static void test_engine_symbol(void)
{
	g_assert_nonnull(nue);
	g_assert_cmpstr(nue->name, ==, "nue");
	g_assert_cmpuint(nue->abi_major, ==, IBSM_ABI_MAJOR);
	g_assert_true(nue->caps & IBSM_CAP_LMC);
	g_assert_nonnull(nue->path_sl);
	g_assert_nonnull(nue->sl2vl);
	const struct ibsm_config_key *k = fx_engine_key(nue, "nue_max_num_vls");
	g_assert_nonnull(k);
	g_assert_cmpstr(k->default_value, ==, "1"); /* OpenSM 3.3.23's default */
	k = fx_engine_key(nue, "nue_include_switches");
	g_assert_nonnull(k);
	g_assert_cmpstr(k->default_value, ==, "FALSE");
}

static void test_irregular(void)
{
	static const struct { unsigned n, hosts, extra; uint32_t seed; } fab[] = {
		{ 16, 2, 8, 7 }, { 24, 2, 16, 11 }, { 32, 2, 24, 5 }, { 40, 1, 30, 3 },
	};
	for (unsigned i = 0; i < G_N_ELEMENTS(fab); i++) {
		struct fabric *f = shape_irregular(fab[i].n, fab[i].hosts, fab[i].extra,
						   fab[i].seed, 0);
		char what[64];
		snprintf(what, sizeof(what), "irregular %u switches seed %u", fab[i].n,
			 fab[i].seed);
		check_all_vls(f, what);
		fabric_unref(f);
	}
}

static void test_torus(void)
{
	struct fabric *f = shape_torus3d(3, 3, 4, 1, 0);
	check_all_vls(f, "3x3x4 torus");
	fabric_unref(f);
}

static void test_ring(void)
{
	struct fabric *f = fx_ring(8, 2, 0);
	check_all_vls(f, "ring of 8");
	fabric_unref(f);
	f = fx_ring(2, 1, 0); /* two switches, two parallel links */
	check_all_vls(f, "ring of 2");
	fabric_unref(f);
}

/* A k-ary n-tree: shortest up/down paths are free of loops already, and nue keeps them: the
 * CA routes are as balanced as up/down's on a full tree (every up link the same load). */
static void test_fat_tree(void)
{
	struct fabric *f = fx_kary_ntree(4, 3, 0);
	check_all_vls(f, "4-ary 3-tree");
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(nue, &c, &f->pub, NULL, &r), ==, 0);
	uint32_t max;
	double ratio = fx_switch_link_load(&f->pub, r.routes.lft, r.routes.stride, NULL, &max);
	g_assert_cmpfloat(ratio, <, 1.25);
	/* CA to CA: shortest paths only */
	uint8_t *hops = fx_switch_hops_all(&f->pub);
	unsigned pairs = 0;
	for (uint32_t a = 0; a < 64; a++)
		for (uint32_t b = 0; b < 64; b++) {
			unsigned n;
			if (a == b)
				continue;
			uint32_t pa = fx_ca_port(&f->pub, a, 1), pb = fx_ca_port(&f->pub, b, 1);
			g_assert_cmpint(fx_walk(&f->pub, r.routes.lft, r.routes.stride, pa,
						fx_ca_lid(f, b), &n), ==, FX_DELIVERED);
			g_assert_cmpint((int)n, ==, fx_end_hops(&f->pub, hops, pa, pb));
			pairs++;
		}
	g_assert_cmpuint(pairs, ==, 64 * 63);
	g_free(hops);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* The layers are capped by the VLs every switch link has: VLCap of one end, max_op_vls. */
static void test_vl_caps(void)
{
	/* one switch link with VL0-1 only (VLCap 2 on one end) */
	struct fabric *f = shape_irregular(12, 1, 8, 9, 0);
	uint32_t p = fx_switch_port(&f->pub, 3, 2); /* the tree link of switch 3 */
	g_assert_cmpuint(f->pub.ports[p].peer, !=, IBSM_NONE);
	f->ports[p].vl_cap = 2;
	g_assert_cmpuint(check_routes(f, 8, NULL, "VLCap 2 on one link"), ==, 2);
	g_assert_cmpuint(check_routes(f, 0, NULL, "VLCap 2, nue_max_num_vls 0"), ==, 2);
	fabric_unref(f);

	f = shape_irregular(12, 1, 8, 9, 0);
	static const char *const cap3[] = { "max_op_vls", "3", NULL };
	g_assert_cmpuint(check_routes(f, 8, cap3, "max_op_vls 3"), ==, 4);
	g_assert_cmpuint(check_routes(f, 0, NULL, "nue_max_num_vls 0"), ==, 8);
	static const char *const cap1[] = { "max_op_vls", "1", NULL };
	g_assert_cmpuint(check_routes(f, 4, cap1, "max_op_vls 1"), ==, 1);

	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	fx_core_set(&c, "nue_max_num_vls", "8");
	fx_core_set(&c, "max_op_vls", "2");
	g_assert_cmpint(fx_route(nue, &c, &f->pub, NULL, &r), ==, 0);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "nue_max_num_vls 8 is more than the 2"),
			 ==, 1);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* path_sl: the layer of the destination (one layer: the SL asked for); sl2vl: SL mod layers. */
static void test_path_sl_sl2vl(void)
{
	struct fabric *f = shape_irregular(20, 2, 12, 21, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(nue, &c, &f->pub, NULL, &r), ==, 0);
	uint8_t vl[16];
	uint16_t a = fx_ca_lid(f, 0), b = fx_ca_lid(f, 7);
	g_assert_cmpuint(nue->path_sl(r.result, 5, a, b), ==, 5);
	g_assert_cmpint(nue->sl2vl(r.result, 0, 0, vl), <, 0);
	fx_run_clear(&r);

	fx_core_set(&c, "nue_max_num_vls", "4");
	g_assert_cmpint(fx_route(nue, &c, &f->pub, NULL, &r), ==, 0);
	const struct nue_result *res = res_of(&r);
	g_assert_cmpuint(res->layers, ==, 4);
	uint32_t used[4] = { 0 };
	for (uint32_t lid = 1; lid <= f->pub.max_lid; lid++) {
		if (f->pub.lid_port[lid] == IBSM_NONE)
			continue;
		uint8_t sl = nue->path_sl(r.result, 9, a, (uint16_t)lid);
		g_assert_cmpuint(sl, <, 4);
		g_assert_cmpuint(sl, ==, res->lid_layer[lid]);
		used[sl]++;
	}
	for (unsigned l = 0; l < 4; l++)
		g_assert_cmpuint(used[l], ==, res->per_layer[l]);
	g_assert_cmpuint(used[0] + used[1] + used[2] + used[3], ==, res->dests);
	g_assert_cmpint(nue->sl2vl(r.result, fx_switch_port(&f->pub, 0, 1),
				  fx_switch_port(&f->pub, 0, 3), vl), ==, 0);
	for (unsigned sl = 0; sl < 16; sl++)
		g_assert_cmpuint(vl[sl], ==, sl % 4);
	/* a LID nobody routes keeps the SL asked for */
	g_assert_cmpuint(nue->path_sl(r.result, 9, a, (uint16_t)(f->pub.max_lid + 1)), ==, 9);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* A chain step's part: two irregular halves joined by two links; the scope is the first half
 * (its switches and their ports, its CAs). Rows of the other half are left alone, every end
 * port of the part reaches every LID of the part inside it, free of loops. */
static void test_sub_scope(void)
{
	struct fx_builder x;
	fx_builder_init(&x);
	enum { N = 10 };
	uint32_t sw[2 * N];
	uint8_t next[2 * N];
	uint32_t seed = 77;
	for (unsigned i = 0; i < 2 * N; i++) {
		sw[i] = fx_add_switch(&x, 12, "s");
		fx_link(&x, sw[i], 1, fx_add_ca(&x, 1, "h"), 1);
		next[i] = 2;
	}
	for (unsigned half = 0; half < 2; half++) {
		unsigned o = half * N;
		for (unsigned i = 1; i < N; i++) {
			unsigned j = lcg(&seed) % i;
			fx_link(&x, sw[o + i], next[o + i]++, sw[o + j], next[o + j]++);
		}
		for (unsigned e = 0; e < 6; e++) {
			unsigned a = o + lcg(&seed) % N, b = o + lcg(&seed) % N;
			if (a != b)
				fx_link(&x, sw[a], next[a]++, sw[b], next[b]++);
		}
	}
	fx_link(&x, sw[0], next[0]++, sw[N], next[N]++);
	fx_link(&x, sw[3], next[3]++, sw[N + 4], next[N + 4]++);
	struct fabric *f = fx_finish(&x, 0);
	const struct ibsm_fabric *pf = &f->pub;
	struct ibsm_scope sc = fx_scope_all();
	sc.switches = fx_bits_new(pf->n_switches);
	sc.ports = fx_bits_new(pf->n_ports);
	sc.dests = fx_bits_new(pf->n_ports);
	for (uint32_t s = 0; s < N; s++) {
		const struct ibsm_node *n = &pf->nodes[f->switches[s].node];
		fx_bits_set(&sc.switches, s);
		for (unsigned p = 0; p <= n->nports; p++)
			fx_bits_set(&sc.ports, n->port0 + p);
		fx_bits_set(&sc.dests, n->port0);
		uint32_t ca = pf->ports[n->port0 + 1].peer;
		fx_bits_set(&sc.ports, ca);
		fx_bits_set(&sc.dests, ca);
	}
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	fx_core_set(&c, "nue_max_num_vls", "2");
	g_assert_cmpint(fx_route(nue, &c, pf, &sc, &r), ==, 0);
	for (uint32_t s = N; s < 2 * N; s++)
		for (uint32_t l = 0; l < r.routes.stride; l++)
			g_assert_cmpuint(r.routes.lft[(size_t)s * r.routes.stride + l], ==,
					 IBSM_NO_PORT);
	unsigned pairs = 0;
	for (uint32_t src = 0; src < pf->n_ports; src++) {
		if (!ibsm_bit(&sc.dests, src))
			continue;
		for (uint32_t dst = 0; dst < pf->n_ports; dst++) {
			if (!ibsm_bit(&sc.dests, dst) || dst == src)
				continue;
			unsigned hops;
			g_assert_cmpint(fx_walk(pf, r.routes.lft, r.routes.stride, src,
						pf->ports[dst].lid, &hops), ==, FX_DELIVERED);
			pairs++;
		}
	}
	g_assert_cmpuint(pairs, ==, 2 * N * (2 * N - 1));
	/* a LID outside the part is routed nowhere */
	g_assert_cmpuint(fx_run_entry(&r, 0, fx_ca_lid(f, N)), ==, IBSM_NO_PORT);
	struct deadlock_report rep;
	g_assert_cmpuint(fx_deadlock_check(f, &r, &rep), ==, 0);
	g_assert_cmpuint(res_of(&r)->dests, ==, 2 * N);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fx_bits_free(&sc.switches);
	fx_bits_free(&sc.ports);
	fx_bits_free(&sc.dests);
	fabric_unref(f);
}

/* LMC 2: each of a port's four LIDs is a destination of its own (its own tree and layer),
 * every one delivered, free of loops; and the scope's path bits are honoured. */
static void test_lmc(void)
{
	struct fabric *f = shape_irregular(16, 2, 10, 31, 2);
	check_routes(f, 1, NULL, "LMC 2, 1 VL");
	check_routes(f, 2, NULL, "LMC 2, 2 VLs");
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(nue, &c, &f->pub, NULL, &r), ==, 0);
	g_assert_cmpuint(res_of(&r)->dests, ==, 16 * 2 * 4 + 16);
	/* the four LIDs of one host do not all leave a switch by one port */
	unsigned spread = 0;
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		uint16_t base = fx_ca_lid(f, 31);
		uint8_t p0 = fx_run_entry(&r, s, base);
		for (unsigned k = 1; k < 4; k++)
			spread += fx_run_entry(&r, s, (uint16_t)(base + k)) != p0;
	}
	g_assert_cmpuint(spread, >, 0);
	fx_run_clear(&r);

	struct ibsm_scope sc = fx_scope_all();
	sc.path_bit_first = 1;
	sc.path_bit_count = 1;
	g_assert_cmpint(fx_route(nue, &c, &f->pub, &sc, &r), ==, 0);
	for (uint32_t h = 0; h < 32; h++) {
		uint16_t base = fx_ca_lid(f, h);
		g_assert_cmpuint(fx_run_entry(&r, 0, base), ==, IBSM_NO_PORT);
		g_assert_cmpuint(fx_run_entry(&r, 0, (uint16_t)(base + 1)), !=, IBSM_NO_PORT);
		g_assert_cmpuint(fx_run_entry(&r, 0, (uint16_t)(base + 2)), ==, IBSM_NO_PORT);
	}
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* nue_include_switches: switch LIDs are destinations like the CAs: every route, to switches
 * too, is free of loops, and they count in the layers. */
static void test_include_switches(void)
{
	static const char *const inc[] = { "nue_include_switches", "TRUE", NULL };
	struct fabric *f = shape_irregular(20, 1, 12, 13, 0);
	for (unsigned vls = 1; vls <= 2; vls++) {
		struct fx_core c;
		struct fx_run r;
		fx_core_init(&c);
		fx_core_set(&c, "nue_include_switches", "TRUE");
		fx_core_set(&c, "nue_max_num_vls", vls == 1 ? "1" : "2");
		g_assert_cmpint(fx_route(nue, &c, &f->pub, NULL, &r), ==, 0);
		const struct nue_result *res = res_of(&r);
		g_assert_cmpuint(res->outside, ==, 0);
		g_assert_cmpuint(res->switch_dests, ==, 20);
		struct deadlock_report rep;
		g_assert_cmpuint(fx_deadlock_check(f, &r, &rep), ==, 0);
		fx_run_clear(&r);
		fx_core_clear(&c);
	}
	check_routes(f, 2, inc, "include switches");
	fabric_unref(f);
	f = fx_kary_ntree(4, 2, 0);
	check_routes(f, 1, inc, "4-ary 2-tree, include switches");
	fabric_unref(f);
}

/* The trials run on one thread or two: the same tables. */
static void test_threads(void)
{
	struct fabric *f = shape_irregular(24, 2, 16, 41, 0);
	struct fx_core c1, c2;
	struct fx_run r1, r2;
	fx_core_init(&c1);
	fx_core_init(&c2);
	fx_core_set(&c1, "nue_threads", "1");
	fx_core_set(&c2, "nue_threads", "2");
	fx_core_set(&c1, "nue_max_num_vls", "2");
	fx_core_set(&c2, "nue_max_num_vls", "2");
	g_assert_cmpint(fx_route(nue, &c1, &f->pub, NULL, &r1), ==, 0);
	g_assert_cmpint(fx_route(nue, &c2, &f->pub, NULL, &r2), ==, 0);
	g_assert_cmpuint(res_of(&r1)->threads, ==, 1);
	g_assert_cmpmem(r1.routes.lft, (size_t)f->pub.n_switches * r1.routes.stride,
			r2.routes.lft, (size_t)f->pub.n_switches * r2.routes.stride);
	g_assert_cmpuint(res_of(&r1)->kept_trial, ==, res_of(&r2)->kept_trial);
	fx_run_clear(&r1);
	fx_run_clear(&r2);
	fx_core_clear(&c1);
	fx_core_clear(&c2);
	fabric_unref(f);
}

/* nue_passes 0 and nue_trials 1: OpenSM's single greedy pass on one escape tree; more passes
 * and trials never keep worse tables than the first pass of the first trial gives. */
static void test_passes_trials(void)
{
	struct fabric *f = shape_irregular(32, 2, 20, 51, 0);
	struct fx_core c;
	struct fx_run r;
	uint32_t max_single, max_default;
	fx_core_init(&c);
	fx_core_set(&c, "nue_passes", "0");
	fx_core_set(&c, "nue_trials", "1");
	g_assert_cmpint(fx_route(nue, &c, &f->pub, NULL, &r), ==, 0);
	g_assert_cmpuint(res_of(&r)->passes, ==, 1);
	fx_switch_link_load(&f->pub, r.routes.lft, r.routes.stride, NULL, &max_single);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fx_core_init(&c);
	g_assert_cmpint(fx_route(nue, &c, &f->pub, NULL, &r), ==, 0);
	g_assert_cmpuint(res_of(&r)->trials, >, 1);
	fx_switch_link_load(&f->pub, r.routes.lft, r.routes.stride, NULL, &max_default);
	g_test_message("busiest link: %u after one pass of one trial, %u kept of %u trials",
		       max_single, max_default, res_of(&r)->trials);
	g_assert_cmpuint(max_default, <=, max_single);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* The checker these tests trust sees a loop: nue's tables on a ring of 6 with the routes of
 * one destination turned the long way round close a cycle (and would on any ring). */
static void test_check_can_fail(void)
{
	struct fabric *f = fx_ring(6, 1, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(nue, &c, &f->pub, NULL, &r), ==, 0);
	struct deadlock_report rep;
	g_assert_cmpuint(fx_deadlock_check(f, &r, &rep), ==, 0);
	/* every switch sends every CA LID clockwise (port 2 toward i+1): a ring of turns */
	for (uint32_t s = 0; s < 6; s++)
		for (uint32_t h = 0; h < 6; h++)
			if (h != s)
				r.routes.lft[(size_t)s * r.routes.stride + fx_ca_lid(f, h)] = 2;
	g_assert_cmpuint(fx_deadlock_check_ca(f, &r, &rep), >, 0);
	g_test_message("cycle: %s", rep.cycle);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* Two islands: each routed within itself; the pairs across have no route and are counted. */
static void test_islands(void)
{
	struct fx_builder x;
	fx_builder_init(&x);
	uint32_t s[4];
	for (unsigned i = 0; i < 4; i++) {
		s[i] = fx_add_switch(&x, 4, "s");
		fx_link(&x, s[i], 1, fx_add_ca(&x, 1, "h"), 1);
	}
	fx_link(&x, s[0], 2, s[1], 2);
	fx_link(&x, s[2], 2, s[3], 2);
	struct fabric *f = fx_finish(&x, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(nue, &c, &f->pub, NULL, &r), ==, 0);
	unsigned hops;
	g_assert_cmpint(fx_walk(&f->pub, r.routes.lft, r.routes.stride, fx_ca_port(&f->pub, 0, 1),
				fx_ca_lid(f, 1), &hops), ==, FX_DELIVERED);
	g_assert_cmpint(fx_walk(&f->pub, r.routes.lft, r.routes.stride, fx_ca_port(&f->pub, 3, 1),
				fx_ca_lid(f, 2), &hops), ==, FX_DELIVERED);
	g_assert_cmpuint(fx_run_entry(&r, 0, fx_ca_lid(f, 2)), ==, IBSM_NO_PORT);
	/* 4 switches x 4 LIDs each side not reachable from the other: 2 x (2 x 4) */
	g_assert_cmpuint(res_of(&r)->unreachable, ==, 16);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "have no path in scope"), ==, 1);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

static void test_cancel(void)
{
	struct fabric *f = shape_irregular(16, 2, 8, 61, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	c.cancel = 1;
	g_assert_cmpint(fx_route(nue, &c, &f->pub, NULL, &r), ==, -ECANCELED);
	g_assert_null(r.result);
	g_assert_nonnull(strstr(r.routes.why, "cancelled"));
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	GModule *m = NULL;
	nue = fx_engine_open(TEST_PLUGIN_DIR "/nue.so", &m);
	g_test_add_func("/nue/engine-symbol", test_engine_symbol);
	if (nue) {
		g_test_add_func("/nue/irregular", test_irregular);
		g_test_add_func("/nue/torus", test_torus);
		g_test_add_func("/nue/ring", test_ring);
		g_test_add_func("/nue/fat-tree", test_fat_tree);
		g_test_add_func("/nue/vl-caps", test_vl_caps);
		g_test_add_func("/nue/path-sl-sl2vl", test_path_sl_sl2vl);
		g_test_add_func("/nue/sub-scope", test_sub_scope);
		g_test_add_func("/nue/lmc", test_lmc);
		g_test_add_func("/nue/include-switches", test_include_switches);
		g_test_add_func("/nue/threads", test_threads);
		g_test_add_func("/nue/passes-trials", test_passes_trials);
		g_test_add_func("/nue/check-can-fail", test_check_can_fail);
		g_test_add_func("/nue/islands", test_islands);
		g_test_add_func("/nue/cancel", test_cancel);
	}
	int rc = g_test_run();
	if (m)
		g_module_close(m);
	return rc;
}
