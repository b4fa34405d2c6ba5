/* test_deadlock.c - the credit-loop check (routing/deadlock.h) on tables written by hand, where
 * the answer is known: a ring routed one way round on one VL has a cycle, found and named; the
 * same routes with a dateline (an SL per source, an SL2VL that lifts routes that crossed the
 * dateline onto VL 1) have none; the identity when there is no SL2VL; every LID of an LMC
 * port walked; minhop's tables on a fat tree (none) and on a ring (one), through the fixture's
 * fx_deadlock_check() as the engines' unit tests call it. */
#include <string.h>
#include <glib.h>
#include "fabric_fixture.h"
#include "routing/deadlock.h"

#define RING 6

/* How a table entry is chosen: the switch a destination hangs off and its own port there. */
static uint8_t local_port(const struct fabric *f, uint32_t sw, uint32_t dp)
{
	const struct ibsm_port *p = &f->ports[dp];
	if (f->nodes[p->node].type == IBSM_SWITCH)
		return 0;
	g_assert_cmpuint(ibsm_port_switch(&f->pub, dp), ==, sw);
	return f->ports[p->peer].num;
}

enum way { CLOCKWISE, LINE };

/* Tables of fx_ring(RING, 1, lmc): LIDs with offset `off_cw` (or every offset when off_cw < 0)
 * go clockwise (port 2, to switch i+1), the others along the line 0 - 1 - ... - n-1 (never
 * over the link n-1 -> 0, so free of cycles). */
static uint8_t *ring_tables(const struct fabric *f, int off_cw)
{
	uint32_t stride = f->pub.max_lid + 1;
	uint8_t *lft = g_malloc((size_t)f->pub.n_switches * stride);
	memset(lft, IBSM_NO_PORT, (size_t)f->pub.n_switches * stride);
	for (uint32_t lid = 1; lid <= f->pub.max_lid; lid++) {
		uint32_t dp = f->lid_port[lid];
		if (dp == IBSM_NONE)
			continue;
		uint32_t dsw = ibsm_port_switch(&f->pub, dp);
		enum way w = off_cw < 0 || lid - f->ports[dp].lid == (uint32_t)off_cw ? CLOCKWISE : LINE;
		for (uint32_t s = 0; s < f->pub.n_switches; s++) {
			uint8_t port = w == CLOCKWISE || dsw > s ? 2 : 1;
			lft[(size_t)s * stride + lid] = s == dsw ? local_port(f, s, dp) : port;
		}
	}
	return lft;
}

/* The source switch of a route: the SL the dateline tables below expect. */
static uint8_t sl_by_source(const void *ctx, uint16_t slid, uint16_t dlid)
{
	const struct fabric *f = ctx;
	(void)dlid;
	g_assert_cmpuint(slid, <=, f->pub.max_lid);
	uint32_t sp = f->lid_port[slid];
	g_assert_cmpuint(sp, !=, IBSM_NONE);
	return (uint8_t)ibsm_port_switch(&f->pub, sp);
}

/* Switch k sends a route from source switch s on VL 1 when it already crossed the dateline
 * (the link n-1 -> 0): when k < s. So VL 0 never holds n-1 -> 0 followed by 0 -> 1, and VL 1
 * never holds n-1 -> 0 at all: both acyclic. */
static int dateline(const void *ctx, uint32_t in, uint32_t out, uint8_t vl[16])
{
	const struct fabric *f = ctx;
	uint32_t k = f->nodes[f->ports[out].node].sw;
	g_assert_cmpuint(k, ==, f->nodes[f->ports[in].node].sw);
	for (unsigned sl = 0; sl < 16; sl++)
		vl[sl] = k < sl ? 1 : 0;
	return 0;
}

/* The same off by one (k <= s): VL 1 then holds every link of source s's route from s on. */
static int dateline_wrong(const void *ctx, uint32_t in, uint32_t out, uint8_t vl[16])
{
	const struct fabric *f = ctx;
	(void)in;
	uint32_t k = f->nodes[f->ports[out].node].sw;
	for (unsigned sl = 0; sl < 16; sl++)
		vl[sl] = k <= sl ? 1 : 0;
	return 0;
}

static int all_vl0(const void *ctx, uint32_t in, uint32_t out, uint8_t vl[16])
{
	(void)ctx; (void)in; (void)out;
	memset(vl, 0, 16);
	return 0;
}

static int declines(const void *ctx, uint32_t in, uint32_t out, uint8_t vl[16])
{
	(void)ctx; (void)in; (void)out;
	memset(vl, 9, 16); /* scribbled on, and then declined: must not count */
	return -1;
}

static uint32_t end_ports(const struct fabric *f)
{
	uint32_t n = 0;
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		n += fabric_is_end_port(f, p) && f->ports[p].lid;
	return n;
}

static void test_ring_clockwise_cycle(void)
{
	struct fabric *f = fx_ring(RING, 1, 0);
	uint8_t *lft = ring_tables(f, -1);
	struct deadlock_report rep;
	uint32_t n = deadlock_check(f, lft, f->pub.max_lid + 1, NULL, NULL, NULL, &rep);
	/* every clockwise link (port 2 of each switch) on VL 0 lies on the one cycle */
	g_assert_cmpuint(n, ==, RING);
	g_assert_cmpuint(rep.channels_in_cycles, ==, RING);
	g_assert_cmpuint(rep.channels, ==, RING);
	g_assert_cmpuint(rep.vls, ==, 1);
	g_assert_cmpuint(rep.vl_mask, ==, 1);
	g_assert_cmpuint(rep.cycle_len, ==, RING);
	g_assert_cmpuint(rep.unrouted, ==, 0);
	uint32_t ends = end_ports(f), lids = ends; /* LMC 0: one LID each */
	g_assert_cmpuint(rep.routes, ==, (uint64_t)ends * lids - ends);
	for (uint32_t s = 0; s < RING; s++) {
		char guid[40];
		g_snprintf(guid, sizeof(guid), "sw 0x%016" G_GINT64_MODIFIER "x port 2 vl 0",
			   f->nodes[f->switches[s].node].guid);
		g_assert_nonnull(strstr(rep.cycle, guid));
	}
	g_assert_null(strstr(rep.cycle, "port 1"));
	g_test_message("cycle: %s", rep.cycle);
	/* along the line instead: no cycle, nothing named */
	g_free(lft);
	lft = ring_tables(f, 99);
	g_assert_cmpuint(deadlock_check(f, lft, f->pub.max_lid + 1, NULL, NULL, NULL, &rep), ==, 0);
	g_assert_cmpstr(rep.cycle, ==, "");
	g_assert_cmpuint(rep.channels, ==, 2 * (RING - 1));
	/* the switches' LIDs clockwise, the CAs' along the line: only the full check sees it */
	g_free(lft);
	lft = ring_tables(f, 99);
	uint32_t stride = f->pub.max_lid + 1;
	for (uint32_t s = 0; s < RING; s++) {
		uint16_t lid = fx_switch_lid(f, s);
		for (uint32_t k = 0; k < RING; k++)
			if (k != s)
				lft[(size_t)k * stride + lid] = 2;
	}
	g_assert_cmpuint(deadlock_check(f, lft, stride, NULL, NULL, NULL, &rep), ==, RING);
	g_assert_cmpuint(deadlock_check_flags(f, lft, stride, NULL, NULL, NULL, DEADLOCK_CA_ROUTES,
					      &rep), ==, 0);
	g_assert_cmpuint(rep.routes, ==, (uint64_t)RING * (RING - 1));
	g_free(lft);
	fabric_unref(f);
}

static void test_ring_dateline(void)
{
	struct fabric *f = fx_ring(RING, 1, 0);
	uint8_t *lft = ring_tables(f, -1);
	uint32_t stride = f->pub.max_lid + 1;
	struct deadlock_report rep;
	g_assert_cmpuint(deadlock_check(f, lft, stride, sl_by_source, dateline, f, &rep), ==, 0);
	g_assert_cmpuint(rep.vls, ==, 2);
	g_assert_cmpuint(rep.vl_mask, ==, 3);
	g_assert_cmpstr(rep.cycle, ==, "");
	/* path_sl asked once per (source LID, destination LID) */
	uint32_t ends = end_ports(f);
	g_assert_cmpuint(rep.path_sl_calls, ==, (uint64_t)ends * ends - ends);
	/* the dateline one switch late: a cycle on VL 1 */
	g_assert_cmpuint(deadlock_check(f, lft, stride, sl_by_source, dateline_wrong, f, &rep), >, 0);
	g_assert_nonnull(strstr(rep.cycle, "vl 1"));
	/* the SLs alone, every hop on VL 0: the cycle again */
	g_assert_cmpuint(deadlock_check(f, lft, stride, sl_by_source, all_vl0, f, &rep), ==, RING);
	g_free(lft);
	fabric_unref(f);
}

static void test_identity_without_sl2vl(void)
{
	struct fabric *f = fx_ring(RING, 1, 0);
	uint8_t *lft = ring_tables(f, -1);
	uint32_t stride = f->pub.max_lid + 1;
	struct deadlock_report rep;
	/* VL = SL = the source switch: each VL holds one source's routes, a path, no cycle */
	g_assert_cmpuint(deadlock_check(f, lft, stride, sl_by_source, NULL, f, &rep), ==, 0);
	g_assert_cmpuint(rep.vls, ==, RING);
	g_assert_cmpuint(rep.vl_mask, ==, (1u << RING) - 1);
	/* a hook that declines (< 0) is the identity too, whatever it wrote */
	g_assert_cmpuint(deadlock_check(f, lft, stride, sl_by_source, declines, f, &rep), ==, 0);
	g_assert_cmpuint(rep.vl_mask, ==, (1u << RING) - 1);
	g_free(lft);
	fabric_unref(f);
}

static int offset_one_asked;

static uint8_t sl_zero_count(const void *ctx, uint16_t slid, uint16_t dlid)
{
	const struct fabric *f = ctx;
	(void)dlid;
	if (slid != f->ports[f->lid_port[slid]].lid)
		g_atomic_int_inc(&offset_one_asked);
	return 0;
}

static void test_lmc_lids_walked(void)
{
	/* LMC 1: the base LIDs along the line (acyclic), the second LIDs clockwise (a cycle) */
	struct fabric *f = fx_ring(RING, 1, 1);
	uint8_t *lft = ring_tables(f, 1);
	uint32_t stride = f->pub.max_lid + 1;
	struct deadlock_report rep;
	g_assert_cmpuint(deadlock_check(f, lft, stride, NULL, NULL, NULL, &rep), ==, RING);
	/* routes: every end port to every LID but its own */
	uint32_t ends = end_ports(f), lids = 0;
	for (uint32_t lid = 1; lid <= f->pub.max_lid; lid++)
		lids += f->lid_port[lid] != IBSM_NONE;
	g_assert_cmpuint(lids, ==, RING + 2 * RING); /* switches 1 LID, CAs 2 */
	uint64_t self = 0;
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		if (fabric_is_end_port(f, p) && f->ports[p].lid)
			self += f->nodes[f->ports[p].node].type == IBSM_SWITCH ? 1 : 2;
	g_assert_cmpuint(rep.routes, ==, (uint64_t)ends * lids - self);
	/* base LIDs clockwise, second LIDs along the line: still found (the base LIDs) */
	g_free(lft);
	lft = ring_tables(f, 0);
	g_assert_cmpuint(deadlock_check(f, lft, stride, NULL, NULL, NULL, &rep), ==, RING);
	/* path_sl is asked for the second source LIDs too */
	offset_one_asked = 0;
	g_assert_cmpuint(deadlock_check(f, lft, stride, sl_zero_count, NULL, f, &rep), ==, RING);
	g_assert_cmpint(offset_one_asked, >, 0);
	g_free(lft);
	fabric_unref(f);
}

static const struct ibsm_engine *minhop(GModule **m)
{
	const struct ibsm_engine *e = fx_engine_open(TEST_PLUGIN_DIR "/minhop.so", m);
	g_assert_nonnull(e);
	return e;
}

static void test_minhop_fat_tree_none(void)
{
	GModule *m;
	const struct ibsm_engine *e = minhop(&m);
	struct fabric *f = fx_kary_ntree(4, 3, 0);
	struct fx_core c;
	fx_core_init(&c);
	struct fx_run run;
	g_assert_cmpint(fx_route(e, &c, &f->pub, NULL, &run), ==, 0);
	struct deadlock_report rep;
	/* between CAs: up, then down, never up again */
	g_assert_cmpuint(fx_deadlock_check_ca(f, &run, &rep), ==, 0);
	g_assert_cmpuint(rep.vls, ==, 1);
	g_assert_cmpuint(rep.unrouted, ==, 0);
	g_assert_cmpuint(rep.dependencies, >, 0);
	g_assert_cmpuint(rep.routes, ==, 64 * 63);
	g_test_message("k-ary 3-tree (64 hosts): %" G_GUINT64_FORMAT " routes, %u channels, %"
		       G_GUINT64_FORMAT " dependencies, %.3f s", rep.routes, rep.channels,
		       rep.dependencies, rep.seconds);
	/* with the switches' own LIDs: minhop reaches a top switch from another one down and up
	 * again, which closes loops (as OpenSM's minhop does on a fat tree) */
	uint32_t all = fx_deadlock_check(f, &run, &rep);
	g_test_message("with switch LIDs: %u channels in cycles, e.g. %s", all, rep.cycle);
	fx_run_clear(&run);
	fx_core_clear(&c);
	fabric_unref(f);
	g_module_close(m);
}

static void test_minhop_ring_cycle(void)
{
	GModule *m;
	const struct ibsm_engine *e = minhop(&m);
	struct fabric *f = fx_ring(5, 2, 0);
	struct fx_core c;
	fx_core_init(&c);
	struct fx_run run;
	g_assert_cmpint(fx_route(e, &c, &f->pub, NULL, &run), ==, 0);
	struct deadlock_report rep;
	/* shortest paths both ways round a ring of 5: the two directions each close a cycle */
	g_assert_cmpuint(fx_deadlock_check(f, &run, &rep), ==, 10);
	g_assert_cmpuint(rep.cycle_len, ==, 5);
	g_test_message("minhop on a ring of 5: %s", rep.cycle);
	fx_run_clear(&run);
	fx_core_clear(&c);
	fabric_unref(f);
	g_module_close(m);
}

/* The cost at scale (G_TEST slow, or -m perf): minhop on the 16384-host XGFT. */
static void test_scale(void)
{
	if (!g_test_perf() && !g_test_slow()) {
		g_test_skip("-m perf or -m slow: the 16384-host fat tree");
		return;
	}
	GModule *m;
	const struct ibsm_engine *e = minhop(&m);
	unsigned mm[] = { 16, 16, 64 }, w[] = { 1, 16, 16 };
	struct fabric *f = fx_xgft(3, mm, w, 0);
	struct fx_core c;
	fx_core_init(&c);
	struct fx_run run;
	g_assert_cmpint(fx_route(e, &c, &f->pub, NULL, &run), ==, 0);
	struct deadlock_report rep;
	g_assert_cmpuint(fx_deadlock_check_ca(f, &run, &rep), ==, 0);
	g_test_message("XGFT 16384 hosts, CA routes: %" G_GUINT64_FORMAT " routes, %u channels, %"
		       G_GUINT64_FORMAT " dependencies, %.3f s", rep.routes, rep.channels,
		       rep.dependencies, rep.seconds);
	uint32_t all = fx_deadlock_check(f, &run, &rep);
	g_test_message("XGFT 16384 hosts, all end ports: %u in cycles, %" G_GUINT64_FORMAT
		       " routes, %.3f s", all, rep.routes, rep.seconds);
	fx_run_clear(&run);
	fx_core_clear(&c);
	fabric_unref(f);
	g_module_close(m);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/deadlock/ring/clockwise-cycle", test_ring_clockwise_cycle);
	g_test_add_func("/deadlock/ring/dateline", test_ring_dateline);
	g_test_add_func("/deadlock/ring/identity-without-sl2vl", test_identity_without_sl2vl);
	g_test_add_func("/deadlock/lmc/every-lid", test_lmc_lids_walked);
	g_test_add_func("/deadlock/minhop/fat-tree-none", test_minhop_fat_tree_none);
	g_test_add_func("/deadlock/minhop/ring-cycle", test_minhop_ring_cycle);
	g_test_add_func("/deadlock/scale/xgft-16k", test_scale);
	return g_test_run();
}
