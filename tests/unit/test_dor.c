/* test_dor.c - the dor engine plugin on small in-memory meshes and hypercubes: every route
 * crosses the dimensions in increasing order (each hop fixes the lowest dimension still
 * different from the destination), dimensions are learnt from the cabling and not from raw
 * port numbers, parallel links share the load, bad cabling is declined with the first bad
 * link named, the scope is honoured, LMC keeps the order. Loads the built .so. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <glib.h>
#include <gmodule.h>
#include "fabric_fixture.h"

static const struct ibsm_engine *dor;

/* A mesh (or hypercube) whose geometry the test knows: switch id -> coordinates, port ->
 * dimension, so routes can be judged without trusting the engine's idea of dimensions. */
struct grid {
	struct fabric *f;
	unsigned nd, dims[8], nsw, hosts;
	int8_t port_dim[256];   /* switch port number -> dimension, -1: host or unused */
	int hypercube;
};

static void coords(const struct grid *g, uint32_t s, unsigned *c)
{
	for (unsigned d = 0; d < g->nd; d++) {
		c[d] = s % g->dims[d];
		s /= g->dims[d];
	}
}

static uint32_t sw_at(const struct grid *g, const unsigned *c)
{
	uint32_t s = 0;
	for (unsigned d = g->nd; d-- > 0;)
		s = s * g->dims[d] + c[d];
	return s;
}

/* Mesh dims[0] x .. with P parallel links; logical port of (dimension d, direction dir
 * (0 = +, 1 = -), copy q) is 2*d*P + dir*P + q + 1, physical port map[logical] (NULL:
 * identity). Switch ids are x-fastest; hosts after the dimension ports; one host per switch
 * per `hosts`, CA number = switch * hosts + h. */
static void mesh(struct grid *g, unsigned nd, const unsigned *dims, unsigned P, unsigned hosts,
		 const uint8_t *map, uint8_t lmc)
{
	memset(g, 0, sizeof(*g));
	memset(g->port_dim, -1, sizeof(g->port_dim));
	g->nd = nd;
	g->nsw = 1;
	for (unsigned d = 0; d < nd; d++) {
		g->dims[d] = dims[d];
		g->nsw *= dims[d];
	}
	g->hosts = hosts;
	unsigned nlog = 2 * nd * P;
	for (unsigned l = 1; l <= nlog; l++)
		g->port_dim[map ? map[l] : l] = (int8_t)((l - 1) / (2 * P));
	struct fx_builder x;
	fx_builder_init(&x);
	uint32_t *idx = g_new(uint32_t, g->nsw);
	for (uint32_t s = 0; s < g->nsw; s++) {
		char name[32];
		unsigned c[8] = { 0 };
		coords(g, s, c);
		snprintf(name, sizeof(name), "m%u%u%u", c[0], c[1], c[2]);
		idx[s] = fx_add_switch(&x, (uint8_t)(nlog + hosts), name);
	}
	for (uint32_t s = 0; s < g->nsw; s++) {
		unsigned c[8] = { 0 };
		coords(g, s, c);
		for (unsigned d = 0; d < nd; d++) {
			if (c[d] + 1 >= dims[d])
				continue;
			c[d]++;
			uint32_t t = sw_at(g, c);
			c[d]--;
			for (unsigned q = 0; q < P; q++) {
				unsigned lp = 2 * d * P + q + 1, lm = 2 * d * P + P + q + 1;
				fx_link(&x, idx[s], map ? map[lp] : (uint8_t)lp, idx[t],
					map ? map[lm] : (uint8_t)lm);
			}
		}
	}
	for (uint32_t s = 0; s < g->nsw; s++)
		for (unsigned h = 0; h < hosts; h++)
			fx_link(&x, fx_add_ca(&x, 1, "host"), 1, idx[s], (uint8_t)(nlog + h + 1));
	g_free(idx);
	g->f = fx_finish(&x, lmc);
}

/* Hypercube of 2^n switches: port b+1 is dimension b at both ends, unless bad_b >= 0: then
 * the dimension-bad_b link of switch bad_s uses port bad_b+1 there and bad_port at the far
 * end (which must be free there: pass a host-free spare port). */
static void hypercube(struct grid *g, unsigned n, unsigned hosts, int bad_s, int bad_b,
		      uint8_t bad_port)
{
	memset(g, 0, sizeof(*g));
	memset(g->port_dim, -1, sizeof(g->port_dim));
	g->nd = n;
	g->nsw = 1u << n;
	g->hosts = hosts;
	g->hypercube = 1;
	for (unsigned d = 0; d < n; d++) {
		g->dims[d] = 2;
		g->port_dim[d + 1] = (int8_t)d;
	}
	struct fx_builder x;
	fx_builder_init(&x);
	uint32_t idx[64];
	for (uint32_t s = 0; s < g->nsw; s++) {
		char name[32];
		snprintf(name, sizeof(name), "q%u", s);
		idx[s] = fx_add_switch(&x, (uint8_t)(n + hosts + 1), name);
	}
	for (uint32_t s = 0; s < g->nsw; s++)
		for (unsigned b = 0; b < n; b++) {
			uint32_t t = s ^ (1u << b);
			if (t < s)
				continue;
			int bad = (int)s == bad_s && (int)b == bad_b;
			fx_link(&x, idx[s], (uint8_t)(b + 1), idx[t], bad ? bad_port : (uint8_t)(b + 1));
		}
	for (uint32_t s = 0; s < g->nsw; s++)
		for (unsigned h = 0; h < hosts; h++)
			fx_link(&x, fx_add_ca(&x, 1, "host"), 1, idx[s], (uint8_t)(n + h + 1));
	g->f = fx_finish(&x, 0);
}

static uint32_t next_switch(const struct ibsm_fabric *f, uint32_t s, uint8_t port)
{
	uint32_t peer = f->ports[fx_switch_port(f, s, port)].peer;
	if (peer == IBSM_NONE)
		return IBSM_NONE;
	return f->nodes[f->ports[peer].node].sw;
}

/* Walks every CA pair (all LIDs of the destination) and asserts the dimension-order rule at
 * every switch-to-switch hop: the hop's dimension is the lowest one in which the current
 * switch differs from the destination switch, and it moves toward it. So the dimensions of
 * a path never decrease. Returns the number of hops checked. */
static unsigned check_dimension_order(const struct grid *g, const struct fx_run *r)
{
	const struct ibsm_fabric *f = &g->f->pub;
	unsigned n_cas = g->nsw * g->hosts, checked = 0;
	for (uint32_t a = 0; a < n_cas; a++)
		for (uint32_t b = 0; b < n_cas; b++) {
			if (a == b)
				continue;
			uint32_t bp = fx_ca_port(f, b, 1);
			uint32_t dst = ibsm_port_switch(f, bp);
			unsigned dc[8] = { 0 };
			coords(g, dst, dc);
			for (unsigned o = 0; o < (1u << f->ports[bp].lmc); o++) {
				uint16_t lid = (uint16_t)(f->ports[bp].lid + o);
				uint32_t s = ibsm_port_switch(f, fx_ca_port(f, a, 1));
				int last_dim = -1;
				unsigned steps = 0;
				while (s != dst) {
					g_assert_cmpuint(++steps, <=, 64);
					uint8_t p = fx_run_entry(r, s, lid);
					g_assert_cmpuint(p, !=, IBSM_NO_PORT);
					int dim = g->port_dim[p];
					g_assert_cmpint(dim, >=, 0);
					unsigned sc[8] = { 0 };
					coords(g, s, sc);
					unsigned low = 0;
					while (low < g->nd && sc[low] == dc[low])
						low++;
					g_assert_cmpint(dim, ==, (int)low);
					g_assert_cmpint(dim, >=, last_dim);
					last_dim = dim;
					uint32_t t = next_switch(f, s, p);
					unsigned tc[8] = { 0 };
					coords(g, t, tc);
					unsigned before = sc[low] > dc[low] ? sc[low] - dc[low]
									    : dc[low] - sc[low];
					unsigned after = tc[low] > dc[low] ? tc[low] - dc[low]
									   : dc[low] - tc[low];
					g_assert_cmpuint(after + 1, ==, before);
					s = t;
					checked++;
				}
				/* the last switch delivers to the host */
				uint8_t p = fx_run_entry(r, s, lid);
				g_assert_cmpuint(f->ports[fx_switch_port(f, s, p)].peer, ==, bp);
			}
		}
	return checked;
}

static void route_ok(const struct grid *g, struct fx_core *c, struct fx_run *r)
{
	g_assert_cmpint(fx_route(dor, c, &g->f->pub, NULL, r), ==, 0);
	g_assert_nonnull(r->result);
	struct fx_walk_stats st;
	fx_walk_all(&g->f->pub, r->routes.lft, r->routes.stride, &st);
	g_assert_cmpuint(st.pairs, >, 0);
	g_assert_cmpuint(st.delivered, ==, st.pairs);
	g_assert_cmpuint(st.longer, ==, 0);
}

static void test_engine_symbol(void)
{
	g_assert_nonnull(dor);
	g_assert_cmpstr(dor->name, ==, "dor");
	g_assert_cmpuint(dor->abi_major, ==, IBSM_ABI_MAJOR);
	g_assert_cmpuint(dor->size, ==, sizeof(struct ibsm_engine));
	g_assert_false(dor->caps & IBSM_CAP_LMC);
	g_assert_nonnull(dor->route);
}

static void dimension_order_case(struct grid *g, const char *what)
{
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	route_ok(g, &c, &r);
	unsigned hops = check_dimension_order(g, &r);
	g_test_message("%s: %u switch hops in dimension order", what, hops);
	g_assert_cmpuint(hops, >, 0);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_VERBOSE, g->hypercube ?
					"hypercube cabling" : "mesh cabling"), ==, 1);
	g_assert_cmpuint(fx_core_logged(&c, -1, "closes a ring"), ==, 0);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(g->f);
}

/* ABI 1.1: the keys route() reads are declared, with the defaults a file would spell. */
static void test_config_keys(void)
{
	struct fabric *f = fx_line(3, 1, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(dor, &c, &f->pub, NULL, &r), ==, 0);
	g_assert_true(g_hash_table_contains(c.asked, "dor_threads"));
	g_assert_true(g_hash_table_contains(c.asked, "port_prof_ignore_file"));
	fx_check_declared(&c, dor);
	g_assert_nonnull(fx_engine_key(dor, "dor_threads"));
	g_assert_cmpstr(fx_engine_key(dor, "dor_threads")->default_value, ==, "0");
	g_assert_nonnull(fx_engine_key(dor, "port_prof_ignore_file"));
	g_assert_null(fx_engine_key(dor, "port_prof_ignore_file")->default_value);
	g_assert_null(fx_engine_key(dor, "minhop_threads"));
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

static void test_meshes(void)
{
	struct grid g;
	unsigned d33[] = { 3, 3 }, d432[] = { 4, 3, 2 }, d51[] = { 5, 1 };
	mesh(&g, 2, d33, 1, 1, NULL, 0);
	dimension_order_case(&g, "mesh 3x3");
	mesh(&g, 3, d432, 1, 2, NULL, 0);
	dimension_order_case(&g, "mesh 4x3x2, 2 hosts");
	mesh(&g, 2, d33, 2, 1, NULL, 0);
	dimension_order_case(&g, "mesh 3x3, 2 parallel links");
	mesh(&g, 2, d51, 1, 1, NULL, 0);
	dimension_order_case(&g, "mesh 5x1 (a line)");
}

static void test_hypercubes(void)
{
	struct grid g;
	for (unsigned n = 1; n <= 4; n++) {
		char what[32];
		snprintf(what, sizeof(what), "hypercube %u", n);
		hypercube(&g, n, 2, -1, -1, 0);
		dimension_order_case(&g, what);
	}
}

/* Dimensions come from the cabling: x on ports 1 (+) and 4 (-), y on 2 (+) and 3 (-). Going
 * to x- and y+ at once, the lowest port (2, y) is not the lowest dimension (x, port 4): an
 * engine ordering by raw port number breaks the order here. */
static void test_dimensions_from_cabling(void)
{
	struct grid g;
	unsigned d33[] = { 3, 3 };
	const uint8_t map[] = { 0, 1, 4, 2, 3 };
	mesh(&g, 2, d33, 1, 1, map, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	route_ok(&g, &c, &r);
	check_dimension_order(&g, &r);
	/* m2,0 to the host of m0,2: x- (port 4) first, not y+ (port 2) */
	unsigned from[] = { 2, 0 }, to[] = { 0, 2 };
	uint32_t host = sw_at(&g, to);
	uint16_t lid = g.f->ports[fx_ca_port(&g.f->pub, host, 1)].lid;
	g_assert_cmpuint(fx_run_entry(&r, sw_at(&g, from), lid), ==, 4);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_VERBOSE, "0:1,4 1:2,3"), ==, 1);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(g.f);
}

/* 3x2 mesh, 3 parallel links per neighbour, 6 hosts per switch: every switch spreads the
 * host LIDs it sends in one direction evenly over the parallel ports (+-1), and uses only
 * that direction's ports. */
static void test_parallel_links_share(void)
{
	struct grid g;
	unsigned d32[] = { 3, 2 };
	const unsigned P = 3, H = 6;
	mesh(&g, 2, d32, P, H, NULL, 0);
	const struct ibsm_fabric *f = &g.f->pub;
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	route_ok(&g, &c, &r);
	check_dimension_order(&g, &r);
	for (uint32_t s = 0; s < g.nsw; s++) {
		unsigned cnt[32] = { 0 };
		for (uint32_t h = 0; h < g.nsw * H; h++) {
			uint8_t p = fx_run_entry(&r, s, f->ports[fx_ca_port(f, h, 1)].lid);
			if (p <= 4 * P)
				cnt[p]++;
		}
		for (unsigned grp = 0; grp < 4; grp++) { /* x+, x-, y+, y- */
			unsigned lo = ~0u, hi = 0, sum = 0;
			for (unsigned q = 0; q < P; q++) {
				unsigned v = cnt[grp * P + q + 1];
				lo = MIN(lo, v);
				hi = MAX(hi, v);
				sum += v;
			}
			g_assert_cmpuint(hi - lo, <=, 1);
			if (next_switch(f, s, (uint8_t)(grp * P + 1)) != IBSM_NONE)
				g_assert_cmpuint(sum, >, 0);
		}
	}
	/* from m0,0: the 5 remote switches' 30 hosts, x first: x+ carries the 4 switches with
	 * x > 0 (24 LIDs), y+ only m0,1 (6 LIDs) */
	unsigned x = 0, y = 0;
	for (uint32_t h = H; h < g.nsw * H; h++) {
		uint8_t p = fx_run_entry(&r, 0, f->ports[fx_ca_port(f, h, 1)].lid);
		x += p >= 1 && p <= P;
		y += p >= 2 * P + 1 && p <= 3 * P;
	}
	g_assert_cmpuint(x, ==, 4 * H);
	g_assert_cmpuint(y, ==, H);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(g.f);
}

/* LMC 2 over 2 parallel links: every LID of every host follows the dimension order (all
 * LIDs of a port take the same dimensions), and the LIDs a switch sends one way are balanced
 * over the parallel ports (+-1). */
static void test_lmc(void)
{
	struct grid g;
	unsigned d32[] = { 3, 2 };
	mesh(&g, 2, d32, 2, 1, NULL, 2);
	const struct ibsm_fabric *f = &g.f->pub;
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	route_ok(&g, &c, &r);
	check_dimension_order(&g, &r); /* every LID offset */
	for (uint32_t s = 0; s < g.nsw; s++) {
		unsigned cnt[9] = { 0 };
		for (uint32_t h = 0; h < g.nsw; h++) {
			uint16_t base = f->ports[fx_ca_port(f, h, 1)].lid;
			g_assert_cmpuint(base % 4, ==, 0);
			for (unsigned o = 0; o < 4; o++) {
				uint8_t p = fx_run_entry(&r, s, base + o);
				if (p <= 8)
					cnt[p]++;
			}
		}
		for (unsigned grp = 0; grp < 4; grp++) {
			unsigned a = cnt[2 * grp + 1], b = cnt[2 * grp + 2];
			g_assert_cmpuint(a > b ? a - b : b - a, <=, 1);
			if (next_switch(f, s, (uint8_t)(2 * grp + 1)) != IBSM_NONE)
				g_assert_cmpuint(a + b, >, 0);
		}
	}
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(g.f);
}

/* One y link of a 3x3 mesh lands on the far switch's free x+ port: declined, and the reason
 * names the first bad link end (lowest switch id: m2,0 port 3, which goes to port 1) with
 * its GUID. The same link outside scope->ports: routed. */
static void test_miscabled_mesh(void)
{
	struct fx_builder x;
	fx_builder_init(&x);
	uint32_t idx[9];
	for (unsigned s = 0; s < 9; s++) {
		char name[16];
		snprintf(name, sizeof(name), "m%u%u", s % 3, s / 3);
		idx[s] = fx_add_switch(&x, 5, name);
	}
	for (unsigned s = 0; s < 9; s++) {
		unsigned i = s % 3, j = s / 3;
		if (i < 2)
			fx_link(&x, idx[s], 1, idx[s + 1], 2);
		if (j < 2)
			fx_link(&x, idx[s], 3, idx[s + 3], s == 2 ? 1 : 4); /* m20-m21 bad */
	}
	for (unsigned s = 0; s < 9; s++)
		fx_link(&x, fx_add_ca(&x, 1, "host"), 1, idx[s], 5);
	struct fabric *f = fx_finish(&x, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(dor, &c, &f->pub, NULL, &r), <, 0);
	g_assert_null(r.result);
	g_test_message("why: %s", r.routes.why);
	char guid[32];
	snprintf(guid, sizeof(guid), "0x%016llx", (unsigned long long)(FX_SWITCH_GUID_BASE + 2));
	g_assert_nonnull(strstr(r.routes.why, "mesh cabling"));
	g_assert_nonnull(strstr(r.routes.why, guid));
	g_assert_nonnull(strstr(r.routes.why, "\"m20\" port 3 goes to port 1"));
	g_assert_nonnull(strstr(r.routes.why, "\"m21\""));
	fx_run_clear(&r);

	struct ibsm_scope sc = fx_scope_all();
	sc.ports = fx_bits_new(f->pub.n_ports);
	uint32_t cut = fx_switch_port(&f->pub, 2, 3);
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		if (p != cut)
			fx_bits_set(&sc.ports, p);
	g_assert_cmpint(fx_route(dor, &c, &f->pub, &sc, &r), ==, 0);
	for (uint32_t l = 1; l <= f->pub.max_lid; l++)
		g_assert_cmpuint(fx_run_entry(&r, 2, l), !=, 3);
	struct fx_walk_stats st;
	fx_walk_all(&f->pub, r.routes.lft, r.routes.stride, &st);
	g_assert_cmpuint(st.delivered, ==, st.pairs);
	fx_run_clear(&r);
	fx_bits_free(&sc.ports);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* A hypercube link with different ports at its ends (dimension 1 of switch 5: port 2 there,
 * port 5 (spare) at switch 7): declined, naming switch 5 port 2 - switch 5 has the lower id. */
static void test_miscabled_hypercube(void)
{
	struct grid g;
	hypercube(&g, 3, 1, 5, 1, 5);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(dor, &c, &g.f->pub, NULL, &r), <, 0);
	g_test_message("why: %s", r.routes.why);
	g_assert_nonnull(strstr(r.routes.why, "hypercube cabling"));
	g_assert_nonnull(strstr(r.routes.why, "\"q5\" port 2 goes to port 5"));
	g_assert_nonnull(strstr(r.routes.why, "\"q7\""));
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(g.f);
}

/* Rows outside scope->switches stay untouched and rows inside equal the full-scope rows;
 * path bits [1, 3) of LMC 2 and a subset of destinations. */
static void test_scope(void)
{
	struct grid g;
	unsigned d33[] = { 3, 3 };
	mesh(&g, 2, d33, 1, 2, NULL, 2);
	const struct ibsm_fabric *f = &g.f->pub;
	struct fx_core c;
	struct fx_run full, part;
	fx_core_init(&c);
	route_ok(&g, &c, &full);
	struct ibsm_scope sc = fx_scope_all();
	sc.switches = fx_bits_new(f->n_switches);
	for (uint32_t s = 0; s < f->n_switches; s += 2)
		fx_bits_set(&sc.switches, s);
	g_assert_cmpint(fx_route(dor, &c, f, &sc, &part), ==, 0);
	uint32_t stride = part.routes.stride;
	for (uint32_t s = 0; s < f->n_switches; s++) {
		const uint8_t *a = full.routes.lft + (size_t)s * stride;
		const uint8_t *b = part.routes.lft + (size_t)s * stride;
		if (s % 2 == 0) {
			g_assert_cmpmem(a, stride, b, stride);
			continue;
		}
		for (uint32_t l = 0; l < stride; l++)
			g_assert_cmpuint(b[l], ==, IBSM_NO_PORT);
	}
	fx_run_clear(&part);
	fx_bits_free(&sc.switches);

	sc = fx_scope_all();
	sc.path_bit_first = 1;
	sc.path_bit_count = 2;
	sc.dests = fx_bits_new(f->n_ports);
	unsigned n_cas = g.nsw * g.hosts;
	for (uint32_t h = 0; h < n_cas; h += 2)
		fx_bits_set(&sc.dests, fx_ca_port(f, h, 1));
	g_assert_cmpint(fx_route(dor, &c, f, &sc, &part), ==, 0);
	for (uint32_t s = 0; s < f->n_switches; s++) {
		g_assert_cmpuint(fx_run_entry(&part, s, f->ports[fx_switch_port(f, s, 0)].lid), ==,
				 IBSM_NO_PORT);
		for (uint32_t h = 0; h < n_cas; h++) {
			uint16_t base = f->ports[fx_ca_port(f, h, 1)].lid;
			for (unsigned o = 0; o < 4; o++) {
				uint8_t e = fx_run_entry(&part, s, base + o);
				if (h % 2 || o == 0 || o == 3)
					g_assert_cmpuint(e, ==, IBSM_NO_PORT);
				else
					g_assert_cmpuint(e, ==, fx_run_entry(&full, s, base + o));
			}
		}
	}
	fx_run_clear(&part);
	fx_bits_free(&sc.dests);
	fx_run_clear(&full);
	fx_core_clear(&c);
	fabric_unref(g.f);
}

/* A torus is consistent cabling: routed, but every ring dimension is reported. */
static void test_torus_logged(void)
{
	struct fabric *f = fx_torus2d(4, 4, 1, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(dor, &c, &f->pub, NULL, &r), ==, 0);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "closes a ring"), ==, 2);
	struct fx_walk_stats st;
	fx_walk_all(&f->pub, r.routes.lft, r.routes.stride, &st);
	g_assert_cmpuint(st.delivered, ==, st.pairs);
	g_assert_cmpuint(st.longer, ==, 0);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

static void test_cancel_and_bad_stride(void)
{
	struct grid g;
	unsigned d33[] = { 3, 3 };
	mesh(&g, 2, d33, 1, 1, NULL, 0);
	const struct ibsm_fabric *f = &g.f->pub;
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	c.cancel = 1;
	g_assert_cmpint(fx_route(dor, &c, f, NULL, &r), ==, -ECANCELED);
	g_assert_null(r.result);
	fx_run_clear(&r);
	c.cancel = 0;
	void *inst = NULL, *result = NULL;
	struct ibsm_scope all = fx_scope_all();
	struct ibsm_routes short_rows = { .size = sizeof(short_rows), .stride = f->max_lid };
	short_rows.lft = g_malloc((size_t)f->n_switches * short_rows.stride);
	g_assert_cmpint(dor->setup(&c.core, &inst), ==, 0);
	g_assert_cmpint(dor->route(inst, f, &all, &short_rows, &result), ==, -EINVAL);
	g_assert_null(result);
	g_assert_nonnull(strstr(short_rows.why, "stride"));
	dor->teardown(inst);
	g_free(short_rows.lft);
	fx_core_clear(&c);
	fabric_unref(g.f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	GModule *m = NULL;
	dor = fx_engine_open(TEST_PLUGIN_DIR "/dor.so", &m);
	g_test_add_func("/dor/engine-symbol", test_engine_symbol);
	if (dor) {
		g_test_add_func("/dor/config-keys", test_config_keys);
		g_test_add_func("/dor/meshes", test_meshes);
		g_test_add_func("/dor/hypercubes", test_hypercubes);
		g_test_add_func("/dor/dimensions-from-cabling", test_dimensions_from_cabling);
		g_test_add_func("/dor/parallel-links-share", test_parallel_links_share);
		g_test_add_func("/dor/lmc", test_lmc);
		g_test_add_func("/dor/miscabled-mesh", test_miscabled_mesh);
		g_test_add_func("/dor/miscabled-hypercube", test_miscabled_hypercube);
		g_test_add_func("/dor/scope", test_scope);
		g_test_add_func("/dor/torus-logged", test_torus_logged);
		g_test_add_func("/dor/cancel-and-bad-stride", test_cancel_and_bad_stride);
	}
	int rc = g_test_run();
	if (m)
		g_module_close(m);
	return rc;
}
