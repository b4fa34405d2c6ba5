/* test_sssp.c - the sssp and dfsssp engine plugins (one source folder, plugins/sssp, two .so)
 * on small in-memory fabrics: every pair delivered over a shortest path on random irregular
 * fabrics, 3D tori, a fat tree and rings; dfsssp's tables free of credit loops with its own
 * path SLs and SL2VL tables (and not without them, so the check is not blind), sssp's tables
 * cyclic where the fabric has cycles; the link balance against minhop's; dfsssp declining when
 * VLCap, max_op_vls or the -Q VL limits leave fewer VLs than its layers need; LMC; path_sl and
 * sl2vl under -Q and with dfsssp_spread_vls; a chain step's sub-scope, islands, cancellation,
 * the GUID files; the unreachable count of a sub-scope; a fat tree of more than 4 million
 * (switch, LID) paths. Loads the
 * built .so files as the core would and learns the layers through the hooks and the engine's
 * log (plugins/sssp/sssp.h includes plugins/common headers the unit tests' include path does
 * not have). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <gmodule.h>
#include <unistd.h>
#include "fabric_fixture.h"
#include "fabric_shapes.h"

static const struct ibsm_engine *sssp, *dfsssp, *minhop;

#define FX_VLS 8 /* the fixture's ports have VLCap 4: VL0-7 */

/* ---- helpers ------------------------------------------------------------------------------ */

/* The first number of the (last) log line of the level containing needle, or -1. */
static long logged_number(const struct fx_core *c, int level, const char *needle)
{
	static const char tag[] = "EIVD";
	long v = -1;
	for (guint i = 0; i < c->log->len; i++) {
		const char *line = g_ptr_array_index(c->log, i);
		const char *at = strstr(line + 2, needle);
		if (line[0] != tag[level] || !at)
			continue;
		const char *p = line + 2;
		while (*p && !g_ascii_isdigit(*p))
			p++;
		if (*p)
			v = strtol(p, NULL, 10);
	}
	return v;
}

/* The number right after `after` in the log line containing it, or -1. */
static long logged_after(const struct fx_core *c, const char *after)
{
	long v = -1;
	for (guint i = 0; i < c->log->len; i++) {
		const char *at = strstr(g_ptr_array_index(c->log, i), after);
		if (at)
			v = strtol(at + strlen(after), NULL, 10);
	}
	return v;
}

/* dfsssp's layers, as it logs them. */
static long layers_of(const struct fx_core *c)
{
	return logged_number(c, IBSM_LOG_INFO, "virtual layers (VLs) needed");
}

static void route_ok(const struct ibsm_engine *e, const struct fabric *f, struct fx_core *c,
		     struct fx_run *r)
{
	int rc = fx_route(e, c, &f->pub, NULL, r);
	if (rc < 0)
		g_test_message("%s declined: %s", e->name, r->routes.why);
	g_assert_cmpint(rc, ==, 0);
	g_assert_nonnull(r->result);
}

/* Every end port reaches every LID (LMC's included), over as many links as the shortest path
 * (the fixture's own BFS). */
static void check_shortest(const struct fabric *f, const struct fx_run *r, const char *what)
{
	struct fx_walk_stats st;
	fx_walk_all(&f->pub, r->routes.lft, r->routes.stride, &st);
	if (st.delivered != st.pairs || st.longer)
		g_test_message("%s: %u pairs, %u delivered (%u loops, %u black holes, %u wrong), "
			       "%u longer than shortest", what, st.pairs, st.delivered, st.loops,
			       st.black_holes, st.wrong, st.longer);
	g_assert_cmpuint(st.pairs, >, 0);
	g_assert_cmpuint(st.delivered, ==, st.pairs);
	g_assert_cmpuint(st.longer, ==, 0);
}

/* The SLs path_sl gives between every pair of LIDs (hint sl_hint), as a bit mask; every SL
 * below `below`. */
static uint32_t sl_mask(const struct ibsm_engine *e, const struct fabric *f,
			const struct fx_run *r, uint8_t sl_hint, unsigned below)
{
	const struct ibsm_fabric *pf = &f->pub;
	uint32_t mask = 0;
	for (uint32_t a = 1; a <= pf->max_lid; a++) {
		if (pf->lid_port[a] == IBSM_NONE)
			continue;
		for (uint32_t b = 1; b <= pf->max_lid; b++) {
			if (pf->lid_port[b] == IBSM_NONE)
				continue;
			uint8_t sl = e->path_sl(r->result, sl_hint, (uint16_t)a, (uint16_t)b);
			g_assert_cmpuint(sl, <, below);
			mask |= 1u << sl;
		}
	}
	return mask;
}

/* The ports of switch s on a shortest path toward switch t (parallel links count). */
static unsigned ways_toward(const struct ibsm_fabric *f, const uint8_t *hops, uint32_t s,
			    uint32_t t)
{
	const struct ibsm_switch *sw = &f->switches[s];
	uint32_t S = f->n_switches;
	unsigned n = 0;
	for (uint32_t a = sw->adj0; a < sw->adj0 + sw->nadj; a++) {
		uint32_t peer = f->adj[a].peer_sw;
		if (peer < S && hops[(size_t)peer * S + t] + 1 == hops[(size_t)s * S + t])
			n++;
	}
	return n;
}

/* The shapes the deadlock tests run on; cyclic: sssp's routes between CAs (shortest paths, one
 * VL) close a credit loop there (measured), so dfsssp needs two layers or more. */
struct shape {
	const char *name;
	struct fabric *f;
	int cyclic;
};

static unsigned shapes_make(struct shape *s)
{
	unsigned n = 0;
	s[n++] = (struct shape){ "irregular 16 seed 7", shape_irregular(16, 2, 8, 7, 0), 1 };
	s[n++] = (struct shape){ "irregular 24 seed 11", shape_irregular(24, 2, 16, 11, 0), 1 };
	s[n++] = (struct shape){ "irregular 32 seed 5", shape_irregular(32, 2, 24, 5, 0), 1 };
	s[n++] = (struct shape){ "irregular 40 seed 3", shape_irregular(40, 1, 30, 3, 0), 1 };
	s[n++] = (struct shape){ "irregular 64 seed 7", shape_irregular(64, 2, 48, 7, 0), 1 };
	s[n++] = (struct shape){ "torus 3x3x4", shape_torus3d(3, 3, 4, 1, 0), 1 };
	s[n++] = (struct shape){ "torus 6x4x3", shape_torus3d(6, 4, 3, 2, 0), 1 };
	s[n++] = (struct shape){ "4-ary 3-tree", fx_kary_ntree(4, 3, 0), 0 };
	s[n++] = (struct shape){ "ring 8", fx_ring(8, 2, 0), 1 };
	s[n++] = (struct shape){ "ring 7", fx_ring(7, 2, 0), 1 };
	s[n++] = (struct shape){ "ring 2 (parallel links)", fx_ring(2, 1, 0), 0 };
	return n;
}

/* ---- tests -------------------------------------------------------------------------------- */

static void test_engine_symbols(void)
{
	g_assert_nonnull(sssp);
	g_assert_nonnull(dfsssp);
	g_assert_cmpstr(sssp->name, ==, "sssp");
	g_assert_cmpstr(dfsssp->name, ==, "dfsssp");
	g_assert_cmpuint(sssp->abi_major, ==, IBSM_ABI_MAJOR);
	g_assert_cmpuint(dfsssp->abi_major, ==, IBSM_ABI_MAJOR);
	g_assert_true(sssp->caps & IBSM_CAP_LMC);
	g_assert_true(dfsssp->caps & IBSM_CAP_LMC);
	/* sssp hands the SL through and leaves SL2VL alone; dfsssp answers both */
	g_assert_nonnull(sssp->path_sl);
	g_assert_null(sssp->sl2vl);
	g_assert_nonnull(dfsssp->path_sl);
	g_assert_nonnull(dfsssp->sl2vl);
	/* only dfsssp reads the VL limits */
	g_assert_null(fx_engine_key(sssp, "max_op_vls"));
	g_assert_nonnull(fx_engine_key(dfsssp, "max_op_vls"));
	g_assert_nonnull(fx_engine_key(dfsssp, "qos_max_vls"));
	g_assert_nonnull(fx_engine_key(dfsssp, "qos_swe_max_vls"));
	g_assert_nonnull(fx_engine_key(sssp, "cn_guid_file"));
	g_assert_nonnull(fx_engine_key(dfsssp, "io_guid_file"));
}

/* dfsssp on every shape: shortest paths delivered; free of credit loops (every route, switch
 * LIDs included) with its path SLs and SL2VL; the VLs used are its layers, within the VLs of
 * the fabric; and the same tables with every route on VL 0 are cyclic on the cyclic shapes. */
static void test_dfsssp_deadlock_free(void)
{
	struct shape s[16];
	unsigned n = shapes_make(s);
	for (unsigned i = 0; i < n; i++) {
		struct fabric *f = s[i].f;
		struct fx_core c;
		struct fx_run r;
		struct deadlock_report rep;
		fx_core_init(&c);
		route_ok(dfsssp, f, &c, &r);
		check_shortest(f, &r, s[i].name);
		long layers = layers_of(&c);
		g_assert_cmpint(layers, >=, 1);
		g_assert_cmpint(layers, <=, FX_VLS);
		uint32_t cyc = fx_deadlock_check(f, &r, &rep);
		if (cyc)
			g_test_message("%s: %u channels on cycles: %s", s[i].name, cyc, rep.cycle);
		g_assert_cmpuint(cyc, ==, 0);
		g_assert_cmpstr(rep.cycle, ==, "");
		g_assert_cmpuint(rep.unrouted, ==, 0);
		g_assert_cmpuint(rep.vls, ==, (uint32_t)layers);
		g_assert_cmpuint(rep.vl_mask, ==, (1u << layers) - 1);
		/* path_sl: one SL per layer (hint 0); one layer hands the hint back */
		uint32_t mask = sl_mask(dfsssp, f, &r, 0, (unsigned)layers);
		g_assert_cmpuint(mask, ==, (1u << layers) - 1);
		if (layers == 1)
			g_assert_cmpuint(dfsssp->path_sl(r.result, 6, fx_ca_lid(f, 0),
							 fx_ca_lid(f, 1)), ==, 6);
		uint32_t on_one = fx_deadlock_check_tables(f, r.routes.lft, r.routes.stride, NULL,
							   NULL, 0, &rep);
		uint32_t max;
		fx_switch_link_load(&f->pub, r.routes.lft, r.routes.stride, NULL, &max);
		g_test_message("dfsssp %s: %ld layers = VLs used (of %u), busiest link %u; the "
			       "same tables on VL 0: %u channels on cycles", s[i].name, layers,
			       FX_VLS, max, on_one);
		if (s[i].cyclic) {
			g_assert_cmpint(layers, >, 1);
			g_assert_cmpuint(on_one, >, 0);
		}
		fx_check_declared(&c, dfsssp);
		fx_run_clear(&r);
		fx_core_clear(&c);
		fabric_unref(f);
	}
}

/* sssp on every shape: the same balanced shortest paths (the very tables dfsssp writes) on one
 * VL: credit loops between CAs on the cyclic shapes, which is what shows the check sees them;
 * none on the fat tree's CA routes (shortest paths there go up, then down). */
static void test_sssp_cyclic(void)
{
	struct shape s[16];
	unsigned n = shapes_make(s);
	for (unsigned i = 0; i < n; i++) {
		struct fabric *f = s[i].f;
		struct fx_core c, cd;
		struct fx_run r, rd;
		struct deadlock_report rep;
		fx_core_init(&c);
		fx_core_init(&cd);
		route_ok(sssp, f, &c, &r);
		check_shortest(f, &r, s[i].name);
		g_assert_cmpint(layers_of(&c), ==, -1); /* no layers */
		g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "one VL, no deadlock removal"),
				 ==, 1);
		/* the SL asked for, whatever it is */
		g_assert_cmpuint(sssp->path_sl(r.result, 5, fx_ca_lid(f, 0), fx_ca_lid(f, 1)), ==, 5);
		route_ok(dfsssp, f, &cd, &rd);
		size_t cells = (size_t)f->pub.n_switches * r.routes.stride;
		g_assert_cmpmem(r.routes.lft, cells, rd.routes.lft, cells);
		uint32_t cyc = fx_deadlock_check(f, &r, &rep);
		g_assert_cmpuint(rep.vls, ==, 1);
		uint32_t cyc_ca = fx_deadlock_check_ca(f, &r, &rep);
		g_test_message("sssp %s: %u channels on cycles (%u with CA routes only)%s%s",
			       s[i].name, cyc, cyc_ca, cyc_ca ? ", e.g. " : "", rep.cycle);
		if (s[i].cyclic)
			g_assert_cmpuint(cyc_ca, >, 0);
		else
			g_assert_cmpuint(cyc_ca, ==, 0);
		g_assert_cmpuint(cyc, >=, cyc_ca);
		fx_check_declared(&c, sssp);
		fx_run_clear(&r);
		fx_run_clear(&rd);
		fx_core_clear(&c);
		fx_core_clear(&cd);
		fabric_unref(f);
	}
}

/* The busiest switch-to-switch link (CA-to-CA routes, base LIDs) of e on f; the engine's own
 * count of it, when it logs one, must agree. */
static uint32_t busiest(const struct ibsm_engine *e, struct fabric *f, double *ratio)
{
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	route_ok(e, f, &c, &r);
	uint32_t max;
	*ratio = fx_switch_link_load(&f->pub, r.routes.lft, r.routes.stride, NULL, &max);
	long own = logged_after(&c, "switch-link load max ");
	if (e != minhop)
		g_assert_cmpint(own, ==, (long)max);
	fx_run_clear(&r);
	fx_core_clear(&c);
	return max;
}

/* Balance: on random irregular fabrics the busiest link of sssp and dfsssp (the same tables)
 * carries no more CA-to-CA routes than minhop's, and on the larger ones clearly fewer. */
static void test_balance(void)
{
	static const struct { unsigned n, hosts, extra; uint32_t seed; int better; } fab[] = {
		{ 16, 2, 8, 7, 0 }, { 24, 2, 16, 11, 0 }, { 32, 2, 24, 5, 1 },
		{ 40, 1, 30, 3, 1 }, { 48, 2, 60, 3, 1 }, { 64, 2, 48, 7, 1 },
	};
	for (unsigned i = 0; i < G_N_ELEMENTS(fab); i++) {
		struct fabric *f = shape_irregular(fab[i].n, fab[i].hosts, fab[i].extra,
						   fab[i].seed, 0);
		double rs, rd, rm;
		uint32_t ms = busiest(sssp, f, &rs), md = busiest(dfsssp, f, &rd);
		uint32_t mm = busiest(minhop, f, &rm);
		g_test_message("irregular %u seed %u: busiest link sssp %u (max/mean %.2f), dfsssp "
			       "%u, minhop %u (max/mean %.2f)", fab[i].n, fab[i].seed, ms, rs, md,
			       mm, rm);
		g_assert_cmpuint(ms, ==, md);
		g_assert_cmpuint(ms, <=, mm);
		if (fab[i].better)
			g_assert_cmpuint(ms * 100, <=, mm * 95); /* at least 5% fewer */
		fabric_unref(f);
	}
}

/* Too few VLs: dfsssp declines (-E2BIG, no result) saying how many it needs, how many the
 * fabric has and why; sssp routes on regardless. */
static void test_declines(void)
{
	struct fabric *f = shape_torus3d(3, 3, 4, 1, 0);
	struct fx_core c;
	struct fx_run r;
	/* the layers it needs here */
	fx_core_init(&c);
	route_ok(dfsssp, f, &c, &r);
	long need = layers_of(&c);
	g_assert_cmpint(need, ==, 3);
	fx_run_clear(&r);
	fx_core_clear(&c);

	/* key, value, ... NULL; the result; the VLs the why says are available, and the limit it
	 * names */
	static const struct {
		const char *kv[7];
		int rc;
		const char *avail, *limit;
	} cases[] = {
		{ { "max_op_vls", "1", NULL }, -E2BIG, "1 available (", "max_op_vls 1" },
		{ { "max_op_vls", "2", NULL }, -E2BIG, "2 available (", "max_op_vls 2" },
		{ { "max_op_vls", "3", NULL }, 0, NULL, NULL },
		/* -Q: qos_max_vls, and qos_swe_max_vls before it */
		{ { "qos", "TRUE", "qos_max_vls", "2", NULL }, -E2BIG, "2 available (",
		  "qos_max_vls 2" },
		{ { "qos", "TRUE", "qos_max_vls", "3", NULL }, 0, NULL, NULL },
		{ { "qos", "TRUE", "qos_max_vls", "8", "qos_swe_max_vls", "2", NULL }, -E2BIG,
		  "2 available (", "qos_swe_max_vls 2" },
		{ { "qos", "TRUE", "qos_max_vls", "2", "qos_swe_max_vls", "3", NULL }, 0, NULL, NULL },
		/* the -Q limits count only under -Q */
		{ { "qos_max_vls", "2", NULL }, 0, NULL, NULL },
	};
	for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
		fx_core_init(&c);
		for (unsigned k = 0; cases[i].kv[k]; k += 2)
			fx_core_set(&c, cases[i].kv[k], cases[i].kv[k + 1]);
		int rc = fx_route(dfsssp, &c, &f->pub, NULL, &r);
		g_test_message("case %u: rc %d %s", i, rc, rc ? r.routes.why : "");
		g_assert_cmpint(rc, ==, cases[i].rc);
		if (rc) {
			g_assert_null(r.result);
			g_assert_nonnull(strstr(r.routes.why, "3 VLs needed for routes free of "
						"credit loops"));
			g_assert_nonnull(strstr(r.routes.why, cases[i].avail));
			g_assert_nonnull(strstr(r.routes.why, cases[i].limit));
			g_assert_nonnull(strstr(r.routes.why, "not routing with dfsssp"));
			g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, "3 VLs needed"), ==, 1);
		} else {
			struct deadlock_report rep;
			g_assert_cmpuint(fx_deadlock_check(f, &r, &rep), ==, 0);
		}
		fx_run_clear(&r);
		fx_core_clear(&c);
	}

	/* sssp does not read max_op_vls: it routes (with its credit loops) */
	fx_core_init(&c);
	fx_core_set(&c, "max_op_vls", "1");
	route_ok(sssp, f, &c, &r);
	g_assert_false(g_hash_table_contains(c.asked, "max_op_vls"));
	fx_run_clear(&r);
	fx_core_clear(&c);

	/* VLCap 2 (VL0-1) at one end of one switch link: the layers must fit two VLs */
	uint32_t p = fx_switch_port(&f->pub, 4, 3);
	g_assert_cmpuint(f->pub.ports[p].peer, !=, IBSM_NONE);
	f->ports[p].vl_cap = 2;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(dfsssp, &c, &f->pub, NULL, &r), ==, -E2BIG);
	g_assert_null(r.result);
	g_assert_nonnull(strstr(r.routes.why, "3 VLs needed for routes free of credit loops, 2 "
				"available ("));
	g_assert_nonnull(strstr(r.routes.why, "links' VLCap 2 VLs"));
	fx_run_clear(&r);
	fx_core_clear(&c);
	/* VLCap 3 (VL0-3) there: it fits */
	f->ports[p].vl_cap = 3;
	fx_core_init(&c);
	route_ok(dfsssp, f, &c, &r);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "3 virtual layers (VLs) needed, 4 "
					"available ("), ==, 1);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "links' VLCap 4 VLs"), ==, 1);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);

	/* a ring needs two layers; a line one, which VL0 alone carries */
	f = fx_ring(6, 1, 0);
	fx_core_init(&c);
	fx_core_set(&c, "max_op_vls", "1");
	g_assert_cmpint(fx_route(dfsssp, &c, &f->pub, NULL, &r), ==, -E2BIG);
	g_assert_nonnull(strstr(r.routes.why, "2 VLs needed"));
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
	f = fx_line(6, 1, 0);
	fx_core_init(&c);
	fx_core_set(&c, "max_op_vls", "1");
	route_ok(dfsssp, f, &c, &r);
	g_assert_cmpint(layers_of(&c), ==, 1);
	struct deadlock_report rep;
	g_assert_cmpuint(fx_deadlock_check(f, &r, &rep), ==, 0);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);

	/* so many layers that the first pass gives up: "more than" its limit */
	f = shape_torus3d(6, 4, 3, 1, 0);
	fx_core_init(&c);
	fx_core_set(&c, "max_op_vls", "1");
	g_assert_cmpint(fx_route(dfsssp, &c, &f->pub, NULL, &r), ==, -E2BIG);
	g_test_message("torus 6x4x3, max_op_vls 1: %s", r.routes.why);
	g_assert_nonnull(strstr(r.routes.why, "more than 4 VLs needed"));
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* LMC 1 and 2: every LID of every port delivered over a shortest path and free of credit
 * loops (path_sl asked for every source LID); a port's later LIDs leave switches by other
 * ports than its first where the fabric allows; only the LIDs of the scope's path bits are
 * routed. */
static void test_lmc(void)
{
	static const struct { const char *name; unsigned lmc, kind; } cases[] = {
		{ "irregular 16, LMC 1", 1, 0 }, { "irregular 16, LMC 2", 2, 0 },
		{ "torus 3x3x3, LMC 1", 1, 1 }, { "torus 3x3x3, LMC 2", 2, 1 },
	};
	for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
		uint8_t lmc = (uint8_t)cases[i].lmc;
		struct fabric *f = cases[i].kind ? shape_torus3d(3, 3, 3, 1, lmc) :
				   shape_irregular(16, 2, 12, 31, lmc);
		const struct ibsm_fabric *pf = &f->pub;
		unsigned cas = cases[i].kind ? 27 : 32, per = 1u << lmc;
		for (unsigned e = 0; e < 2; e++) {
			const struct ibsm_engine *eng = e ? dfsssp : sssp;
			struct fx_core c;
			struct fx_run r;
			struct deadlock_report rep;
			fx_core_init(&c);
			route_ok(eng, f, &c, &r);
			check_shortest(f, &r, cases[i].name);
			/* every LID of every CA is a destination */
			g_assert_cmpint(logged_number(&c, IBSM_LOG_INFO, "LIDs on shortest paths"),
					==, (long)(cas * per + pf->n_switches));
			unsigned spread = 0;
			for (uint32_t ca = 0; ca < cas; ca++) {
				uint16_t base = fx_ca_lid(f, ca);
				g_assert_cmpuint(base % per, ==, 0);
				for (uint32_t s = 0; s < pf->n_switches; s++)
					for (unsigned k = 1; k < per; k++)
						spread += fx_run_entry(&r, s, base + k) !=
							  fx_run_entry(&r, s, base);
			}
			/* where a switch has two or more shortest-path ports toward the CA's switch,
			 * LID base + 1 leaves by another port than the base LID */
			uint8_t *hops = fx_switch_hops_all(pf);
			unsigned choice = 0, apart = 0;
			for (uint32_t ca = 0; ca < cas; ca++) {
				uint16_t base = fx_ca_lid(f, ca);
				uint32_t t = ibsm_port_switch(pf, fx_ca_port(pf, ca, 1));
				for (uint32_t s = 0; s < pf->n_switches; s++) {
					if (s == t || ways_toward(pf, hops, s, t) < 2)
						continue;
					choice++;
					apart += fx_run_entry(&r, s, base + 1u) != fx_run_entry(&r, s, base);
				}
			}
			g_free(hops);
			g_assert_cmpuint(choice, >, 0);
			g_assert_cmpuint(apart * 10, >=, choice * 9);
			uint32_t cyc = fx_deadlock_check(f, &r, &rep);
			if (e) {
				g_assert_cmpuint(cyc, ==, 0);
				g_assert_cmpint(layers_of(&c), >=, 2);
				g_assert_cmpuint(rep.vls, ==, (uint32_t)layers_of(&c));
			} else {
				g_assert_cmpuint(cyc, >, 0);
			}
			g_test_message("%s %s: %u entries of later LIDs leave by another port than "
				       "the base LID's; where a switch has a choice, base + 1 leaves by "
				       "another port in %u of %u; %ld layers, %u channels on cycles",
				       eng->name, cases[i].name, spread, apart, choice, layers_of(&c),
				       cyc);
			g_assert_cmpuint(spread, >, 0);
			fx_run_clear(&r);

			/* path bit 1 only: the LIDs base + 1 of the CA ports (a switch's one LID is
			 * offset 0: not in that bit) */
			struct ibsm_scope sc = fx_scope_all();
			sc.path_bit_first = 1;
			sc.path_bit_count = 1;
			g_assert_cmpint(fx_route(eng, &c, pf, &sc, &r), ==, 0);
			g_assert_cmpint(logged_number(&c, IBSM_LOG_INFO, "LIDs on shortest paths"),
					==, (long)cas);
			for (uint32_t ca = 0; ca < cas; ca++) {
				uint16_t base = fx_ca_lid(f, ca);
				for (unsigned k = 0; k < per; k++)
					g_assert_cmpuint(fx_run_entry(&r, 0, base + k) != IBSM_NO_PORT,
							 ==, k == 1);
			}
			if (e)
				g_assert_cmpuint(fx_deadlock_check(f, &r, &rep), ==, 0);
			fx_run_clear(&r);
			fx_core_clear(&c);
		}
		fabric_unref(f);
	}
}

/* Two switches joined by two links, LMC 1: each CA's two LIDs cross by different links. */
static void test_lmc_parallel(void)
{
	struct fabric *f = fx_ring(2, 1, 1);
	for (unsigned e = 0; e < 2; e++) {
		struct fx_core c;
		struct fx_run r;
		fx_core_init(&c);
		route_ok(e ? dfsssp : sssp, f, &c, &r);
		check_shortest(f, &r, "ring 2, LMC 1");
		for (uint32_t ca = 0; ca < 2; ca++) {
			uint32_t s = 1 - ca; /* CA n hangs off switch n */
			uint16_t base = fx_ca_lid(f, ca);
			uint8_t p0 = fx_run_entry(&r, s, base), p1 = fx_run_entry(&r, s, base + 1u);
			g_assert_true(p0 == 1 || p0 == 2);
			g_assert_true(p1 == 1 || p1 == 2);
			g_assert_cmpuint(p0, !=, p1);
		}
		fx_run_clear(&r);
		fx_core_clear(&c);
	}
	fabric_unref(f);
}

/* A chain step's part: two irregular halves of N switches (one CA each) joined by two links;
 * the scope is the first half (its switches and their ports, its CAs). */
enum { HALF = 10 };

static struct fabric *halves(struct ibsm_scope *sc)
{
	struct fx_builder x;
	fx_builder_init(&x);
	uint32_t sw[2 * HALF], seed = 77;
	uint8_t next[2 * HALF];
	for (unsigned i = 0; i < 2 * HALF; i++) {
		sw[i] = fx_add_switch(&x, 12, "s");
		fx_link(&x, sw[i], 1, fx_add_ca(&x, 1, "h"), 1);
		next[i] = 2;
	}
	for (unsigned half = 0; half < 2; half++) {
		unsigned o = half * HALF;
		for (unsigned i = 1; i < HALF; i++) {
			seed = seed * 1103515245u + 12345u;
			unsigned j = (seed >> 8) % i;
			fx_link(&x, sw[o + i], next[o + i]++, sw[o + j], next[o + j]++);
		}
		for (unsigned e = 0; e < 6; e++) {
			seed = seed * 1103515245u + 12345u;
			unsigned a = o + (seed >> 8) % HALF;
			seed = seed * 1103515245u + 12345u;
			unsigned b = o + (seed >> 8) % HALF;
			if (a != b)
				fx_link(&x, sw[a], next[a]++, sw[b], next[b]++);
		}
	}
	fx_link(&x, sw[0], next[0]++, sw[HALF], next[HALF]++);
	fx_link(&x, sw[3], next[3]++, sw[HALF + 4], next[HALF + 4]++);
	struct fabric *f = fx_finish(&x, 0);
	const struct ibsm_fabric *pf = &f->pub;
	*sc = fx_scope_all();
	sc->switches = fx_bits_new(pf->n_switches);
	sc->ports = fx_bits_new(pf->n_ports);
	sc->dests = fx_bits_new(pf->n_ports);
	for (uint32_t s = 0; s < HALF; s++) {
		const struct ibsm_node *n = &pf->nodes[f->switches[s].node];
		fx_bits_set(&sc->switches, s);
		for (unsigned p = 0; p <= n->nports; p++)
			fx_bits_set(&sc->ports, n->port0 + p);
		fx_bits_set(&sc->dests, n->port0);
		uint32_t ca = pf->ports[n->port0 + 1].peer;
		fx_bits_set(&sc->ports, ca);
		fx_bits_set(&sc->dests, ca);
	}
	return f;
}

static void halves_free(struct fabric *f, struct ibsm_scope *sc)
{
	fx_bits_free(&sc->switches);
	fx_bits_free(&sc->ports);
	fx_bits_free(&sc->dests);
	fabric_unref(f);
}

/* Rows of the other half are left without routes, every end port of the part reaches every
 * LID of the part inside it, free of credit loops (dfsssp) with its layers. */
static void test_sub_scope(void)
{
	struct ibsm_scope sc;
	struct fabric *f = halves(&sc);
	const struct ibsm_fabric *pf = &f->pub;
	for (unsigned e = 0; e < 2; e++) {
		const struct ibsm_engine *eng = e ? dfsssp : sssp;
		struct fx_core c;
		struct fx_run r;
		fx_core_init(&c);
		g_assert_cmpint(fx_route(eng, &c, pf, &sc, &r), ==, 0);
		for (uint32_t s = HALF; s < 2 * HALF; s++)
			for (uint32_t l = 0; l < r.routes.stride; l++)
				g_assert_cmpuint(fx_run_entry(&r, s, l), ==, IBSM_NO_PORT);
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
		g_assert_cmpuint(pairs, ==, 2 * HALF * (2 * HALF - 1));
		/* a LID outside the part is routed nowhere */
		g_assert_cmpuint(fx_run_entry(&r, 0, fx_ca_lid(f, HALF)), ==, IBSM_NO_PORT);
		g_assert_cmpint(logged_number(&c, IBSM_LOG_INFO, "LIDs on shortest paths"), ==,
				2 * HALF);
		if (e) {
			struct deadlock_report rep;
			g_assert_cmpuint(fx_deadlock_check(f, &r, &rep), ==, 0);
			g_assert_cmpint(layers_of(&c), >=, 1);
		}
		fx_run_clear(&r);
		fx_core_clear(&c);
	}
	halves_free(f, &sc);
}

/* The same part, connected within itself: no (switch, LID) pair of the scope lacks a path, so
 * none is reported (route.c once counted the other half's 10 switches too: "200 (switch, LID)
 * pairs have no path in scope"). */
static void test_sub_scope_unreachable(void)
{
	struct ibsm_scope sc;
	struct fabric *f = halves(&sc);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(sssp, &c, &f->pub, &sc, &r), ==, 0);
	long n = logged_number(&c, IBSM_LOG_INFO, "have no path in scope");
	if (n >= 0)
		g_test_message("%ld (switch, LID) pairs reported without a path in scope, none "
			       "expected", n);
	g_assert_cmpint(n, <, 0);
	fx_run_clear(&r);
	fx_core_clear(&c);
	halves_free(f, &sc);
}

/* Two islands: each routed within itself; the (switch, LID) pairs across have no path and are
 * counted in the log. */
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
	for (unsigned e = 0; e < 2; e++) {
		struct fx_core c;
		struct fx_run r;
		unsigned hops;
		fx_core_init(&c);
		route_ok(e ? dfsssp : sssp, f, &c, &r);
		g_assert_cmpint(fx_walk(&f->pub, r.routes.lft, r.routes.stride,
					fx_ca_port(&f->pub, 0, 1), fx_ca_lid(f, 1), &hops), ==,
				FX_DELIVERED);
		g_assert_cmpint(fx_walk(&f->pub, r.routes.lft, r.routes.stride,
					fx_ca_port(&f->pub, 3, 1), fx_ca_lid(f, 2), &hops), ==,
				FX_DELIVERED);
		g_assert_cmpuint(fx_run_entry(&r, 0, fx_ca_lid(f, 2)), ==, IBSM_NO_PORT);
		/* 2 switches x 4 LIDs on each side that the other side cannot reach */
		g_assert_cmpint(logged_number(&c, IBSM_LOG_INFO, "have no path in scope"), ==, 16);
		fx_run_clear(&r);
		fx_core_clear(&c);
	}
	fabric_unref(f);
}

/* Cancelled by the core: no result, "cancelled". */
static void test_cancel(void)
{
	struct fabric *f = shape_irregular(40, 8, 30, 13, 0); /* 320 CA LIDs: a check or more */
	for (unsigned e = 0; e < 2; e++) {
		struct fx_core c;
		struct fx_run r;
		fx_core_init(&c);
		c.cancel = 1;
		g_assert_cmpint(fx_route(e ? dfsssp : sssp, &c, &f->pub, NULL, &r), ==, -ECANCELED);
		g_assert_null(r.result);
		g_assert_nonnull(strstr(r.routes.why, "cancelled"));
		g_assert_cmpuint(c.cancel_calls, >, 0);
		fx_run_clear(&r);
		fx_core_clear(&c);
	}
	fabric_unref(f);
}

/* cn_guid_file and io_guid_file: their ports are routed first (counted in the log), the
 * tables as good as ever; an unreadable file is logged and the order stays OpenSM's. */
static void test_guid_files(void)
{
	struct fabric *f = shape_irregular(24, 2, 16, 11, 0);
	GError *err = NULL;
	char *cn = NULL, *io = NULL;
	int fd = g_file_open_tmp("sssp-cn-XXXXXX", &cn, &err);
	g_assert_no_error(err);
	close(fd);
	fd = g_file_open_tmp("sssp-io-XXXXXX", &io, &err);
	g_assert_no_error(err);
	close(fd);
	GString *t = g_string_new("# compute nodes\n");
	for (unsigned ca = 0; ca < 5; ca++)
		g_string_append_printf(t, "0x%016llx\n",
				       (unsigned long long)(FX_CA_GUID_BASE + 0x100ull * ca + 1));
	g_assert_true(g_file_set_contents(cn, t->str, -1, &err));
	g_string_assign(t, "");
	for (unsigned ca = 40; ca < 42; ca++)
		g_string_append_printf(t, "0x%016llx\n",
				       (unsigned long long)(FX_CA_GUID_BASE + 0x100ull * ca + 1));
	g_assert_true(g_file_set_contents(io, t->str, -1, &err));
	g_string_free(t, TRUE);
	for (unsigned e = 0; e < 2; e++) {
		const struct ibsm_engine *eng = e ? dfsssp : sssp;
		struct fx_core c;
		struct fx_run r;
		struct deadlock_report rep;
		fx_core_init(&c);
		fx_core_set(&c, "cn_guid_file", cn);
		fx_core_set(&c, "io_guid_file", io);
		route_ok(eng, f, &c, &r);
		g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_VERBOSE, "routing 5 compute node and 2 "
						"I/O node ports first"), ==, 1);
		check_shortest(f, &r, "guid files");
		if (e)
			g_assert_cmpuint(fx_deadlock_check(f, &r, &rep), ==, 0);
		fx_check_declared(&c, eng);
		fx_run_clear(&r);
		fx_core_clear(&c);

		fx_core_init(&c);
		fx_core_set(&c, "cn_guid_file", "/nonexistent/sssp-cn");
		route_ok(eng, f, &c, &r);
		g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, "cn_guid_file unreadable: "
						"destinations in OpenSM's order"), ==, 1);
		g_assert_cmpuint(fx_core_logged(&c, -1, "ports first"), ==, 0);
		fx_run_clear(&r);
		fx_core_clear(&c);
	}
	g_unlink(cn);
	g_unlink(io);
	g_free(cn);
	g_free(io);
	fabric_unref(f);
}

/* A fat tree of more than 4 million (switch, LID) paths, where layers.c first puts the
 * routes to CAs on layer 0 at once and places the others layer by layer (its step 2): on an
 * 18-ary 3-tree (972 switches, 5832 CAs) that needs 12 layers, so every path is placed again
 * (steps 3 and 4), which fits the fixture's 8 VLs, free of credit loops. */
static void test_big_fat_tree(void)
{
	struct fabric *f = fx_kary_ntree(18, 3, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	int rc = fx_route(dfsssp, &c, &f->pub, NULL, &r);
	g_test_message("18-ary 3-tree: rc %d %s", rc, rc ? r.routes.why : "");
	g_assert_cmpint(rc, ==, 0);
	struct deadlock_report rep;
	g_assert_cmpuint(fx_deadlock_check(f, &r, &rep), ==, 0);
	g_assert_cmpint(layers_of(&c), <=, FX_VLS);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* path_sl and sl2vl: one SL per layer, the SL2VL the identity on every port for the SLs it
 * hands out; under -Q a QoS level's SL h is kept as SLs h x layers + layer while the VLs hold
 * it (else the layer), free of credit loops for every such h; dfsssp_spread_vls spreads the
 * layers over every VL, still free of loops. */
struct hinted {
	const struct ibsm_engine *e;
	const void *result;
	uint8_t hint;
};

static uint8_t hinted_path_sl(const void *ctx, uint16_t slid, uint16_t dlid)
{
	const struct hinted *h = ctx;
	return h->e->path_sl(h->result, h->hint, slid, dlid);
}

static int hinted_sl2vl(const void *ctx, uint32_t in_port, uint32_t out_port, uint8_t vl[16])
{
	const struct hinted *h = ctx;
	return h->e->sl2vl(h->result, in_port, out_port, vl);
}

static void test_path_sl_sl2vl(void)
{
	struct fabric *f = shape_irregular(32, 2, 24, 5, 0);
	struct fx_core c;
	struct fx_run r;
	struct deadlock_report rep;
	uint8_t vl[16];
	fx_core_init(&c);
	route_ok(dfsssp, f, &c, &r);
	long n = layers_of(&c);
	g_assert_cmpint(n, ==, 3);
	/* without -Q the hint is dropped: the SL is the layer */
	g_assert_cmpuint(sl_mask(dfsssp, f, &r, 7, (unsigned)n), ==, (1u << n) - 1);
	/* the layer is the source switch's: two CAs of one switch (CA 0 and 1 hang off switch 0)
	 * get the same SL to every LID */
	for (uint32_t lid = 1; lid <= f->pub.max_lid; lid++)
		g_assert_cmpuint(dfsssp->path_sl(r.result, 0, fx_ca_lid(f, 0), (uint16_t)lid), ==,
				 dfsssp->path_sl(r.result, 0, fx_ca_lid(f, 1), (uint16_t)lid));
	memset(vl, 15, sizeof(vl));
	g_assert_cmpint(dfsssp->sl2vl(r.result, fx_switch_port(&f->pub, 0, 3),
				      fx_switch_port(&f->pub, 0, 4), vl), ==, 0);
	for (unsigned sl = 0; sl < (unsigned)n; sl++)
		g_assert_cmpuint(vl[sl], ==, sl);
	fx_run_clear(&r);
	fx_core_clear(&c);

	/* -Q: the QoS levels' SLs in blocks of 3 above the layers (8 VLs: blocks 0 and 1) */
	fx_core_init(&c);
	fx_core_set(&c, "qos", "TRUE");
	route_ok(dfsssp, f, &c, &r);
	g_assert_cmpint(layers_of(&c), ==, 3);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "QoS: a path of SL 0-1 keeps it"), ==, 1);
	static const struct { uint8_t hint; uint32_t mask; } q[] = {
		{ 0, 0x07 }, { 1, 0x38 }, { 2, 0x07 }, { 9, 0x07 },
	};
	for (unsigned i = 0; i < G_N_ELEMENTS(q); i++) {
		g_assert_cmpuint(sl_mask(dfsssp, f, &r, q[i].hint, FX_VLS), ==, q[i].mask);
		struct hinted h = { dfsssp, r.result, q[i].hint };
		uint32_t cyc = deadlock_check(f, r.routes.lft, r.routes.stride, hinted_path_sl,
					      hinted_sl2vl, &h, &rep);
		g_assert_cmpuint(cyc, ==, 0);
		g_assert_cmpuint(rep.vl_mask, ==, q[i].mask);
	}
	memset(vl, 15, sizeof(vl));
	g_assert_cmpint(dfsssp->sl2vl(r.result, fx_ca_port(&f->pub, 0, 1),
				      fx_ca_port(&f->pub, 0, 1), vl), ==, 0);
	for (unsigned sl = 0; sl < FX_VLS; sl++)
		g_assert_cmpuint(vl[sl], ==, sl);
	fx_run_clear(&r);
	fx_core_clear(&c);

	/* dfsssp_spread_vls: the 8 VLs shared out to the 3 layers, each route on one of its
	 * layer's VLs; still free of loops */
	fx_core_init(&c);
	fx_core_set(&c, "dfsssp_spread_vls", "TRUE");
	route_ok(dfsssp, f, &c, &r);
	g_assert_cmpuint(sl_mask(dfsssp, f, &r, 0, FX_VLS), ==, 0xFF);
	g_assert_cmpuint(fx_deadlock_check(f, &r, &rep), ==, 0);
	g_assert_cmpuint(rep.vls, ==, FX_VLS);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);

	/* one layer (a line): the SL asked for, and the SL2VL tables left to the core */
	f = fx_line(4, 2, 0);
	fx_core_init(&c);
	route_ok(dfsssp, f, &c, &r);
	g_assert_cmpint(layers_of(&c), ==, 1);
	g_assert_cmpuint(dfsssp->path_sl(r.result, 4, fx_ca_lid(f, 0), fx_ca_lid(f, 7)), ==, 4);
	g_assert_cmpint(dfsssp->sl2vl(r.result, fx_switch_port(&f->pub, 1, 1),
				      fx_switch_port(&f->pub, 1, 2), vl), <, 0);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	GModule *ms = NULL, *md = NULL, *mm = NULL;
	sssp = fx_engine_open(TEST_PLUGIN_DIR "/sssp.so", &ms);
	dfsssp = fx_engine_open(TEST_PLUGIN_DIR "/dfsssp.so", &md);
	minhop = fx_engine_open(TEST_PLUGIN_DIR "/minhop.so", &mm);
	g_test_add_func("/sssp/engine-symbols", test_engine_symbols);
	if (sssp && dfsssp && minhop) {
		g_test_add_func("/sssp/dfsssp-deadlock-free", test_dfsssp_deadlock_free);
		g_test_add_func("/sssp/sssp-cyclic", test_sssp_cyclic);
		g_test_add_func("/sssp/balance", test_balance);
		g_test_add_func("/sssp/declines", test_declines);
		g_test_add_func("/sssp/lmc", test_lmc);
		g_test_add_func("/sssp/lmc-parallel-links", test_lmc_parallel);
		g_test_add_func("/sssp/path-sl-sl2vl", test_path_sl_sl2vl);
		g_test_add_func("/sssp/sub-scope", test_sub_scope);
		g_test_add_func("/sssp/sub-scope-unreachable", test_sub_scope_unreachable);
		g_test_add_func("/sssp/islands", test_islands);
		g_test_add_func("/sssp/cancel", test_cancel);
		g_test_add_func("/sssp/guid-files", test_guid_files);
		g_test_add_func("/sssp/big-fat-tree", test_big_fat_tree);
	}
	int rc = g_test_run();
	if (mm)
		g_module_close(mm);
	if (md)
		g_module_close(md);
	if (ms)
		g_module_close(ms);
	return rc;
}
