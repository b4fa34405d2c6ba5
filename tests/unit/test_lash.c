/* test_lash.c - the lash engine plugin on in-memory fabrics: shortest paths delivered between
 * every pair, the (channel, VL) dependency graph of its tables with its path SLs and SL2VL
 * free of cycles on irregular fabrics, a 3D torus, a fat tree and a ring (and cyclic when
 * every route is put on one VL, so the check can fail), layers within the VLs, lash_start_vl,
 * the mesh analysis, LMC, determinism and the declines. Loads the built .so as the core would
 * and reads its result through plugins/lash/lash.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <glib.h>
#include <gmodule.h>
#include "fabric_fixture.h"
#include "fabric_shapes.h"
#include "graph/cdg.h"
#include "../../plugins/lash/lash.h"
/* the engine's acyclic dependency graph, compiled in to judge it against graph/cdg.h */
#include "../../plugins/lash/dag.c"

static const struct ibsm_engine *lash;

static const struct lash_result *res_of(const struct fx_run *r)
{
	g_assert_nonnull(r->result);
	return r->result;
}

/* Every end port reaches every LID, by a shortest path. */
static void check_delivery(const struct fabric *f, const struct fx_run *r)
{
	struct fx_walk_stats st;
	fx_walk_all(&f->pub, r->routes.lft, r->routes.stride, &st);
	g_assert_cmpuint(st.pairs, >, 0);
	g_assert_cmpuint(st.delivered, ==, st.pairs);
	g_assert_cmpuint(st.longer, ==, 0);
}

/* SLs from the engine: start_vl + layer, the same both ways, within the layers. */
static void check_sls(const struct fabric *f, const struct fx_run *r)
{
	const struct lash_result *res = res_of(r);
	const struct ibsm_fabric *pf = &f->pub;
	for (uint32_t a = 1; a <= pf->max_lid; a++)
		for (uint32_t b = 1; b <= pf->max_lid; b++) {
			if (pf->lid_port[a] == IBSM_NONE || pf->lid_port[b] == IBSM_NONE)
				continue;
			uint8_t sl = lash->path_sl(res, 9, (uint16_t)a, (uint16_t)b);
			g_assert_cmpuint(sl, ==, lash->path_sl(res, 9, (uint16_t)b, (uint16_t)a));
			g_assert_cmpuint(sl, >=, res->start_vl);
			g_assert_cmpuint(sl, <, res->start_vl + (res->layers ? res->layers : 1));
		}
}

static void route_ok(const struct fabric *f, struct fx_core *c, struct fx_run *r)
{
	g_assert_cmpint(fx_route(lash, c, &f->pub, NULL, r), ==, 0);
	g_assert_nonnull(r->result);
}

static void test_engine_symbol(void)
{
	g_assert_nonnull(lash);
	g_assert_cmpstr(lash->name, ==, "lash");
	g_assert_cmpuint(lash->abi_major, ==, IBSM_ABI_MAJOR);
	g_assert_nonnull(lash->path_sl);
	g_assert_nonnull(lash->sl2vl);
	uint8_t vl[16];
	memset(vl, 7, sizeof(vl));
	g_assert_cmpint(lash->sl2vl(NULL, 1, 2, vl), ==, 0);
	for (unsigned sl = 0; sl < 15; sl++)
		g_assert_cmpuint(vl[sl], ==, sl);
	g_assert_cmpuint(vl[15], ==, 7);
}

/* The credit-loop check over every shape: acyclic with lash's SLs and SL2VL; the same tables
 * with every route on SL 0 (what they would do without the layers) are cyclic on the torus and
 * the irregular fabric, so the check is not blind. */
static void test_deadlock_free(void)
{
	struct {
		const char *name;
		struct fabric *f;
		int cyclic_on_one_vl;
	} shapes[] = {
		{ "irregular 40", shape_irregular(40, 2, 40, 1, 0), 1 },
		{ "irregular 64", shape_irregular(64, 2, 48, 7, 0), 1 },
		{ "torus 6x4x3", shape_torus3d(6, 4, 3, 2, 0), 1 },
		{ "4-ary 3-tree", fx_kary_ntree(4, 3, 0), 0 },
		{ "ring 7", fx_ring(7, 2, 0), 1 },
	};
	for (unsigned i = 0; i < G_N_ELEMENTS(shapes); i++) {
		struct fabric *f = shapes[i].f;
		struct fx_core c;
		struct fx_run r;
		struct deadlock_report rep;
		fx_core_init(&c);
		route_ok(f, &c, &r);
		const struct lash_result *res = res_of(&r);
		check_delivery(f, &r);
		check_sls(f, &r);
		g_assert_cmpuint(fx_deadlock_check(f, &r, &rep), ==, 0);
		g_assert_cmpstr(rep.cycle, ==, "");
		g_assert_cmpuint(rep.vls, ==, res->layers);
		g_assert_cmpuint(res->layers, >=, 1);
		g_assert_cmpuint(res->layers, <=, res->vls);
		uint64_t units = 0;
		for (unsigned v = 0; v < res->layers; v++)
			units += res->units[v];
		g_assert_cmpuint(units, ==, (uint64_t)f->pub.n_switches * (f->pub.n_switches - 1) / 2);
		uint32_t on_one = fx_deadlock_check_tables(f, r.routes.lft, r.routes.stride, NULL,
							   NULL, 0, &rep);
		g_test_message("%s: %u layers (%s), busiest link %llu; on one VL %u channels on "
			       "cycles", shapes[i].name, res->layers,
			       res->tree_mode == 0 ? "per port" : res->tree_mode == 1 ?
			       "per switch" : "first link", (unsigned long long)res->load_max,
			       on_one);
		if (shapes[i].cyclic_on_one_vl)
			g_assert_cmpuint(on_one, >, 0);
		fx_check_declared(&c, lash);
		fx_run_clear(&r);
		fx_core_clear(&c);
		fabric_unref(f);
	}
}

/* Layers: the same fabric gives the same tables and layers every time; the balancing leaves
 * the layers' pair counts within 2 of each other. */
static void test_deterministic_balanced(void)
{
	struct fabric *f = shape_irregular(48, 2, 60, 3, 0);
	struct fx_core c;
	struct fx_run a, b;
	fx_core_init(&c);
	route_ok(f, &c, &a);
	route_ok(f, &c, &b);
	size_t n = (size_t)f->pub.n_switches * a.routes.stride;
	g_assert_cmpmem(a.routes.lft, n, b.routes.lft, n);
	const struct lash_result *ra = res_of(&a), *rb = res_of(&b);
	size_t S = f->pub.n_switches;
	g_assert_cmpmem(ra->layer, S * S, rb->layer, S * S);
	g_assert_cmpuint(ra->layers, >, 1);
	uint64_t lo = UINT64_MAX, hi = 0;
	for (unsigned v = 0; v < ra->layers; v++) {
		lo = ra->units[v] < lo ? ra->units[v] : lo;
		hi = ra->units[v] > hi ? ra->units[v] : hi;
	}
	g_assert_cmpuint(hi - lo, <=, 2);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "layers (SL = VL 0.."), ==, 2);
	fx_run_clear(&a);
	fx_run_clear(&b);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* Too few VLs: declined, saying how many layers and VLs; the same with lash_start_vl eating
 * the VLs; lash_start_vl not below the VLs is refused at once. */
static void test_declines(void)
{
	struct fabric *f = shape_torus3d(6, 4, 3, 1, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	fx_core_set(&c, "max_op_vls", "1"); /* VL0 only */
	g_assert_cmpint(fx_route(lash, &c, &f->pub, NULL, &r), ==, -E2BIG);
	g_assert_null(r.result);
	g_assert_nonnull(strstr(r.routes.why, "more than 1 layers needed"));
	g_assert_nonnull(strstr(r.routes.why, "1 data VLs"));
	fx_run_clear(&r);
	fx_core_clear(&c);

	fx_core_init(&c);
	fx_core_set(&c, "lash_start_vl", "7");
	g_assert_cmpint(fx_route(lash, &c, &f->pub, NULL, &r), ==, -E2BIG);
	g_assert_nonnull(strstr(r.routes.why, "from lash_start_vl 7"));
	fx_run_clear(&r);
	fx_core_clear(&c);

	fx_core_init(&c);
	fx_core_set(&c, "lash_start_vl", "8");
	g_assert_cmpint(fx_route(lash, &c, &f->pub, NULL, &r), ==, -EINVAL);
	g_assert_nonnull(strstr(r.routes.why, "lash_start_vl 8 is not below the 8 data VLs"));
	fx_run_clear(&r);
	fx_core_clear(&c);

	/* under -Q, qos_max_vls bounds the layers too */
	fx_core_init(&c);
	fx_core_set(&c, "qos", "TRUE");
	fx_core_set(&c, "qos_max_vls", "2");
	g_assert_cmpint(fx_route(lash, &c, &f->pub, NULL, &r), ==, -E2BIG);
	g_assert_nonnull(strstr(r.routes.why, "2 data VLs"));
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* lash_start_vl: every SL (and VL) moves up by it; between ports of one switch it is the SL. */
static void test_start_vl(void)
{
	struct fabric *f = shape_irregular(24, 2, 24, 5, 0);
	struct fx_core c;
	struct fx_run r;
	struct deadlock_report rep;
	fx_core_init(&c);
	fx_core_set(&c, "lash_start_vl", "2");
	route_ok(f, &c, &r);
	const struct lash_result *res = res_of(&r);
	g_assert_cmpuint(res->start_vl, ==, 2);
	check_sls(f, &r);
	/* two CAs of switch 0 (CA 0 and 1 hang off switch 0) */
	g_assert_cmpuint(lash->path_sl(res, 5, fx_ca_lid(f, 0), fx_ca_lid(f, 1)), ==, 2);
	g_assert_cmpuint(fx_deadlock_check(f, &r, &rep), ==, 0);
	g_assert_true(rep.vl_mask & (1u << 2));
	g_assert_false(rep.vl_mask & 3u);
	/* a LID lash did not route keeps the hint */
	g_assert_cmpuint(lash->path_sl(res, 5, fx_ca_lid(f, 0), (uint16_t)(f->pub.max_lid + 1)),
			 ==, 5);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* do_mesh_analysis: a torus's dimensions are found (a ring of 4 counts as two) and routes go
 * dimension by dimension with no more layers than without; an irregular fabric is no mesh. */
static void test_mesh_analysis(void)
{
	struct fabric *f = shape_torus3d(6, 4, 3, 2, 0);
	struct fx_core c;
	struct fx_run plain, mesh;
	struct deadlock_report rep;
	fx_core_init(&c);
	route_ok(f, &c, &plain);
	fx_core_set(&c, "do_mesh_analysis", "TRUE");
	route_ok(f, &c, &mesh);
	const struct lash_result *rp = res_of(&plain), *rm = res_of(&mesh);
	g_assert_cmpuint(rp->mesh_dims, ==, 0);
	g_assert_cmpuint(rm->mesh_dims, ==, 4);
	g_assert_cmpuint(rm->layers, <=, rp->layers);
	g_assert_cmpuint(rm->load_max, <=, rp->load_max);
	g_test_message("torus 6x4x3: %u layers, busiest link %llu; with mesh analysis %u, %llu",
		       rp->layers, (unsigned long long)rp->load_max, rm->layers,
		       (unsigned long long)rm->load_max);
	check_delivery(f, &mesh);
	g_assert_cmpuint(fx_deadlock_check(f, &mesh, &rep), ==, 0);
	/* dimension order: from (0,0,0) to (2,2,1) the first hop runs in x */
	uint32_t dst = 1 * 24 + 2 * 6 + 2;
	g_assert_cmpuint(fx_run_entry(&mesh, 0, fx_switch_lid(f, dst)), ==, 1);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "mesh analysis: 4 dimensions"), ==, 1);
	fx_run_clear(&plain);
	fx_run_clear(&mesh);
	fx_core_clear(&c);
	fabric_unref(f);

	struct fabric *shapes[] = { shape_irregular(30, 1, 30, 9, 0), fx_kary_ntree(4, 2, 0) };
	for (unsigned i = 0; i < G_N_ELEMENTS(shapes); i++) {
		fx_core_init(&c);
		fx_core_set(&c, "do_mesh_analysis", "TRUE");
		route_ok(shapes[i], &c, &mesh);
		g_assert_cmpuint(res_of(&mesh)->mesh_dims, ==, 0);
		g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "no mesh or torus"), ==, 1);
		fx_run_clear(&mesh);
		fx_core_clear(&c);
		fabric_unref(shapes[i]);
	}
}

/* The mesh analysis on the shapes it must tell apart (through the engine: it logs what it
 * found, and the result keeps the dimensions). */
static void test_mesh_classes(void)
{
	struct {
		struct fabric *f;
		unsigned dims;
	} cases[] = {
		{ shape_torus3d(5, 3, 2, 1, 0), 3 },  /* 5-ring, 3-ring, 2 (parallel links) */
		{ shape_torus3d(4, 4, 1, 1, 0), 4 },  /* two rings of 4: four dimensions of 2 */
		{ fx_torus2d(6, 6, 1, 0), 2 },
		{ fx_ring(8, 1, 0), 1 },
		{ fx_line(5, 1, 0), 1 },
		{ fx_kary_ntree(2, 3, 0), 0 },
		{ shape_irregular(20, 1, 20, 4, 0), 0 },
	};
	for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct fx_core c;
		struct fx_run r;
		struct deadlock_report rep;
		fx_core_init(&c);
		fx_core_set(&c, "do_mesh_analysis", "TRUE");
		route_ok(cases[i].f, &c, &r);
		const struct lash_result *res = res_of(&r);
		g_test_message("case %u: %u dimensions, %u layers", i, res->mesh_dims, res->layers);
		g_assert_cmpuint(res->mesh_dims, ==, cases[i].dims);
		g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, cases[i].dims ?
						"dimensions (a ring of 4" : "no mesh or torus ("), ==, 1);
		check_delivery(cases[i].f, &r);
		g_assert_cmpuint(fx_deadlock_check(cases[i].f, &r, &rep), ==, 0);
		fx_run_clear(&r);
		fx_core_clear(&c);
		fabric_unref(cases[i].f);
	}
}

/* LMC: a port's LIDs all follow the base LID's path with its SL (OpenSM's lash). */
static void test_lmc(void)
{
	struct fabric *f = shape_irregular(16, 2, 16, 2, 1);
	struct fx_core c;
	struct fx_run r;
	struct deadlock_report rep;
	fx_core_init(&c);
	route_ok(f, &c, &r);
	check_delivery(f, &r);
	const struct lash_result *res = res_of(&r);
	for (uint32_t ca = 0; ca < 32; ca++) {
		uint16_t base = fx_ca_lid(f, ca);
		g_assert_cmpuint(base % 2, ==, 0);
		for (uint32_t s = 0; s < f->pub.n_switches; s++)
			g_assert_cmpuint(fx_run_entry(&r, s, base + 1u), ==, fx_run_entry(&r, s, base));
		g_assert_cmpuint(lash->path_sl(res, 0, fx_ca_lid(f, 5), base + 1u), ==,
				 lash->path_sl(res, 0, fx_ca_lid(f, 5), base));
	}
	g_assert_cmpuint(fx_deadlock_check(f, &r, &rep), ==, 0);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* The balance lash's trees give beside the first shortest-path link OpenSM's lash takes: on an
 * irregular fabric the busiest link carries fewer routes (within the VLs). */
static void test_balance(void)
{
	struct fabric *f = shape_irregular(64, 2, 48, 7, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	route_ok(f, &c, &r);
	uint32_t max = 0;
	double ratio = fx_switch_link_load(&f->pub, r.routes.lft, r.routes.stride, NULL, &max);
	const struct lash_result *res = res_of(&r);
	g_test_message("irregular 64: %u layers, trees %u, busiest link %u (engine %llu), "
		       "max/mean %.2f", res->layers, res->tree_mode, max,
		       (unsigned long long)res->load_max, ratio);
	g_assert_cmpuint(max, ==, res->load_max);
	g_assert_cmpuint(res->tree_mode, <, 2); /* balanced trees fit in 8 VLs here */
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* lash's dependency graph with its dynamic topological order (plugins/lash/dag.c) answers as
 * graph/cdg.h's searches do: on random graphs, every dependency it refuses closes a cycle in
 * cdg, every one it takes does not; removals included; its order stays topological. */
static void test_dag(void)
{
	uint32_t seed = 77;
	for (unsigned round = 0; round < 40; round++) {
		uint32_t n = 8 + round * 3;
		struct dag *d = dag_new(n);
		struct cdg *g = cdg_new(n);
		uint32_t *added = g_new(uint32_t, 2 * 40 * n);
		unsigned nadded = 0, refused = 0;
		for (unsigned step = 0; step < 40 * n; step++) {
			seed = seed * 1664525u + 1013904223u;
			uint32_t a = (seed >> 8) % n;
			seed = seed * 1664525u + 1013904223u;
			uint32_t b = (seed >> 8) % n;
			seed = seed * 1664525u + 1013904223u;
			if (a == b)
				continue;
			if (nadded && (seed >> 8) % 4 == 0) { /* take one out again */
				unsigned k = (seed >> 12) % nadded;
				dag_remove(d, added[2 * k], added[2 * k + 1]);
				cdg_remove(g, added[2 * k], added[2 * k + 1]);
				nadded--;
				added[2 * k] = added[2 * nadded];
				added[2 * k + 1] = added[2 * nadded + 1];
				continue;
			}
			uint32_t ch[2] = { a, b };
			int closes = cdg_path_closes_cycle(g, ch, 2);
			int rc = dag_add(d, a, b);
			g_assert_cmpint(rc, >=, 0);
			g_assert_cmpint(rc, ==, closes);
			if (rc) {
				refused++;
				continue;
			}
			g_assert_cmpint(cdg_add(g, a, b), ==, 0);
			added[2 * nadded] = a;
			added[2 * nadded++ + 1] = b;
			g_assert_cmpuint(dag_edges(d), ==, cdg_edges(g));
		}
		g_assert_true(dag_check_order(d));
		g_assert_cmpuint(cdg_cyclic_channels(g), ==, 0);
		if (round > 10)
			g_assert_cmpuint(refused, >, 0);
		g_free(added);
		cdg_free(g);
		dag_free(d);
	}
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	GModule *m = NULL;
	lash = fx_engine_open(TEST_PLUGIN_DIR "/lash.so", &m);
	g_test_add_func("/lash/engine-symbol", test_engine_symbol);
	g_test_add_func("/lash/dag", test_dag);
	if (lash) {
		g_test_add_func("/lash/deadlock-free", test_deadlock_free);
		g_test_add_func("/lash/deterministic-balanced", test_deterministic_balanced);
		g_test_add_func("/lash/declines", test_declines);
		g_test_add_func("/lash/start-vl", test_start_vl);
		g_test_add_func("/lash/mesh-analysis", test_mesh_analysis);
		g_test_add_func("/lash/mesh-classes", test_mesh_classes);
		g_test_add_func("/lash/lmc", test_lmc);
		g_test_add_func("/lash/balance", test_balance);
	}
	int rc = g_test_run();
	if (m)
		g_module_close(m);
	return rc;
}
