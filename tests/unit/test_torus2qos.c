/* test_torus2qos.c - the torus-2QoS engine plugin on in-memory tori and meshes (2D and 3D,
 * parallel links, failed links and switches): every pair delivered over the shortest path on
 * a whole torus; the VL-aware channel dependency graph (path SL from path_sl, VL from the
 * SL2VL the engine hands the core) free of cycles; path SLs unchanged by a failed link or
 * switch; a split ring refused with the ring named; the SL and SL2VL values of hand-checked
 * paths; datelines moved by the seed; parallel links shared round-robin; configuration errors
 * named with file and line. Loads the built .so. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <gmodule.h>
#include "fabric/netfile.h"
#include "fabric_fixture.h"

static const struct ibsm_engine *torus2qos;

/* A torus or mesh built by the test: switch id = position x + X * (y + Y * z); ports of
 * dimension d: + copies 2dP+1 .. 2dP+P, - copies 2dP+P+1 .. 2dP+2P; hosts after 6P; CA n =
 * position * hosts + h. cut_pos/cut_dim: the + link of that position in that dimension left
 * out (all its copies, or only copy cut_copy when >= 0); dead: a position whose switch and
 * hosts are left unlinked. */
struct tgrid {
	struct fabric *f;
	unsigned r[3], P, hosts, nsw;
	int mesh[3];
};

struct tfail {
	int cut_pos[2], cut_dim[2], cut_copy, dead;
};

static const struct tfail NOFAIL = { { -1, -1 }, { -1, -1 }, -1, -1 };

/* tbuild: parallel cables crossed (copy k of a switch to copy P-1-k of its neighbour) */
static int crossed_cables;

static void pcoords(const struct tgrid *g, unsigned p, unsigned c[3])
{
	c[0] = p % g->r[0];
	c[1] = (p / g->r[0]) % g->r[1];
	c[2] = p / (g->r[0] * g->r[1]);
}

static unsigned pat(const struct tgrid *g, const unsigned c[3])
{
	return c[0] + g->r[0] * (c[1] + g->r[1] * c[2]);
}

static int is_cut(const struct tfail *x, unsigned p, unsigned d)
{
	for (int i = 0; i < 2; i++)
		if (x->cut_pos[i] == (int)p && x->cut_dim[i] == (int)d)
			return 1;
	return 0;
}

static void tbuild(struct tgrid *g, unsigned X, unsigned Y, unsigned Z, const char *mesh,
		   unsigned P, unsigned hosts, const struct tfail *x)
{
	memset(g, 0, sizeof(*g));
	g->r[0] = X;
	g->r[1] = Y;
	g->r[2] = Z;
	for (unsigned d = 0; d < 3; d++)
		g->mesh[d] = mesh && mesh[d] == 'm';
	g->P = P;
	g->hosts = hosts;
	g->nsw = X * Y * Z;
	struct fx_builder b;
	fx_builder_init(&b);
	for (unsigned p = 0; p < g->nsw; p++) {
		char name[48];
		unsigned c[3];
		pcoords(g, p, c);
		snprintf(name, sizeof(name), "t-x%uy%uz%u", c[0], c[1], c[2]);
		fx_add_switch(&b, (uint8_t)(6 * P + hosts), name);
	}
	for (unsigned p = 0; p < g->nsw; p++) {
		unsigned c[3];
		pcoords(g, p, c);
		for (unsigned d = 0; d < 3; d++) {
			unsigned r = g->r[d];
			if (r < 2 || ((g->mesh[d] || r == 2) && c[d] + 1 >= r))
				continue;
			unsigned n[3] = { c[0], c[1], c[2] };
			n[d] = (c[d] + 1) % r;
			unsigned q = pat(g, n);
			if ((int)p == x->dead || (int)q == x->dead)
				continue;
			for (unsigned k = 0; k < P; k++) {
				if (is_cut(x, p, d) && (x->cut_copy < 0 || x->cut_copy == (int)k))
					continue;
				unsigned kk = crossed_cables ? P - 1 - k : k;
				fx_link(&b, p, (uint8_t)(2 * d * P + k + 1), q,
					(uint8_t)(2 * d * P + P + kk + 1));
			}
		}
	}
	for (unsigned p = 0; p < g->nsw; p++)
		for (unsigned h = 0; h < hosts; h++) {
			uint32_t ca = fx_add_ca(&b, 1, "host");
			if ((int)p != x->dead)
				fx_link(&b, ca, 1, p, (uint8_t)(6 * P + h + 1));
		}
	g->f = fx_finish(&b, 0);
}

static uint64_t sw_guid(const struct tgrid *g, unsigned p)
{
	return ibsm_switch_node(&g->f->pub, p)->guid;
}

/* A torus-2QoS.conf for g seeded at position `seed` (both directions of every ring), plus
 * `extra` lines; written to a temporary file whose name is returned (g_free, unlink). */
static char *conf_file(const struct tgrid *g, unsigned seed, const char *extra)
{
	GString *s = g_string_new("# test\n");
	g_string_append(s, "torus");
	for (unsigned d = 0; d < 3; d++)
		g_string_append_printf(s, " %u%s", g->r[d], g->mesh[d] ? "m" : "");
	g_string_append(s, "\n");
	unsigned c[3];
	pcoords(g, seed, c);
	for (unsigned d = 0; d < 3; d++) {
		if (g->r[d] < 2)
			continue;
		unsigned n[3] = { c[0], c[1], c[2] };
		n[d] = (c[d] + 1) % g->r[d];
		g_string_append_printf(s, "%cp_link 0x%016llx 0x%016llx\n", "xyz"[d],
				       (unsigned long long)sw_guid(g, seed),
				       (unsigned long long)sw_guid(g, pat(g, n)));
		if (g->mesh[d] || g->r[d] < 3)
			continue;
		n[d] = (c[d] + g->r[d] - 1) % g->r[d];
		g_string_append_printf(s, "%cm_link 0x%016llx 0x%016llx\n", "xyz"[d],
				       (unsigned long long)sw_guid(g, seed),
				       (unsigned long long)sw_guid(g, pat(g, n)));
	}
	if (extra)
		g_string_append(s, extra);
	char *path = NULL;
	int fd = g_file_open_tmp("torus2qos-XXXXXX.conf", &path, NULL);
	g_assert_cmpint(fd, >=, 0);
	g_assert_true(write(fd, s->str, s->len) == (ssize_t)s->len);
	close(fd);
	g_string_free(s, TRUE);
	return path;
}

static int route(const struct tgrid *g, const char *conf, struct fx_core *c, struct fx_run *r)
{
	fx_core_init(c);
	fx_core_set(c, "torus_config", conf);
	fx_core_set(c, "qos", "TRUE");
	fx_core_set(c, "qos_vlarb_high", "0:0");
	fx_core_set(c, "qos_vlarb_low", "0:32,1:32,2:32,3:32,4:32,5:32,6:32,7:32");
	fx_core_set(c, "qos_ca_vlarb_low", "0:32,1:32");
	fx_core_set(c, "qos_rtr_vlarb_low", "0:32,1:32");
	fx_core_set(c, "qos_sw0_vlarb_low", "0:32,1:32");
	return fx_route(torus2qos, c, &g->f->pub, NULL, r);
}

static uint32_t ca_switch_port(const struct ibsm_fabric *f, uint32_t ca_port)
{
	return f->ports[ca_port].peer;
}

/* The VL-aware channel dependency graph of every CA pair: a channel is (sending switch port,
 * VL); VL from the engine's SL2VL at each switch for the path SL the engine gives. Returns
 * the number of channels left on cycles (0: acyclic); *vls gets the VLs used as a bit set. */
static void add_edge(GHashTable *edges, GArray *keys, uint32_t from, uint32_t to)
{
	gint64 k = ((gint64)from << 32) | to;
	if (g_hash_table_contains(edges, &k))
		return;
	g_array_append_val(keys, k);
	g_hash_table_add(edges, g_memdup2(&k, sizeof(k)));
}

/* Multicast copies on SL 0 along the tree egress (one mask per switch), flooded from every
 * member CA port: a copy entering switch s by port i leaves by every other set port. */
static void mcast_edges(const struct ibsm_fabric *f, const struct fx_run *r,
			uint64_t (*egress)[4], GHashTable *edges, GArray *keys, unsigned *vls)
{
	for (uint32_t s = 0; s < f->n_switches; s++) {
		uint32_t p0 = f->nodes[f->switches[s].node].port0;
		for (unsigned i = 1; i < 256; i++) {
			if (!((egress[s][i >> 6] >> (i & 63)) & 1))
				continue;
			uint32_t in = p0 + i; /* a copy arrives on port i */
			uint32_t from_port = f->ports[in].peer;
			if (from_port == IBSM_NONE)
				continue;
			const struct ibsm_node *fn = &f->nodes[f->ports[from_port].node];
			uint32_t from_ch = IBSM_NONE;
			if (fn->type == IBSM_SWITCH) {
				uint8_t vl[16];
				/* the channel it came over: the sender's port; its VL there depends on
				 * the sender's input, so take every VL the sender's table can give */
				for (unsigned j = 0; j < 256; j++) {
					uint32_t sw2 = fn->sw;
					if (!((egress[sw2][j >> 6] >> (j & 63)) & 1) || fn->port0 + j == from_port)
						continue;
					g_assert_cmpint(torus2qos->sl2vl(r->result, fn->port0 + j, from_port, vl), ==, 0);
					from_ch = from_port * 16 + vl[0];
					for (unsigned o = 1; o < 256; o++) {
						if (o == i || !((egress[s][o >> 6] >> (o & 63)) & 1))
							continue;
						uint32_t out = p0 + o, peer = f->ports[out].peer;
						if (peer == IBSM_NONE ||
						    f->nodes[f->ports[peer].node].type != IBSM_SWITCH)
							continue;
						uint8_t v2[16];
						g_assert_cmpint(torus2qos->sl2vl(r->result, in, out, v2), ==, 0);
						*vls |= 1u << v2[0];
						add_edge(edges, keys, from_ch, out * 16 + v2[0]);
					}
				}
			}
		}
	}
}

static unsigned cdg_cycles_mc(const struct tgrid *g, const struct fx_run *r, unsigned *vls,
			      uint64_t (*egress)[4])
{
	const struct ibsm_fabric *f = &g->f->pub;
	GHashTable *edges = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	GArray *keys = g_array_new(FALSE, FALSE, sizeof(gint64));
	unsigned n_cas = g->nsw * g->hosts;
	*vls = 0;
	for (uint32_t a = 0; a < n_cas; a++) {
		uint32_t ap = fx_ca_port(f, a, 1);
		if (f->ports[ap].peer == IBSM_NONE)
			continue;
		for (uint32_t b = 0; b < n_cas; b++) {
			uint32_t bp = fx_ca_port(f, b, 1);
			if (a == b || f->ports[bp].peer == IBSM_NONE)
				continue;
			uint16_t slid = f->ports[ap].lid, dlid = f->ports[bp].lid;
			uint8_t sl = torus2qos->path_sl(r->result, 0, slid, dlid);
			uint32_t in = ca_switch_port(f, ap), prev = IBSM_NONE;
			for (unsigned hop = 0; hop < 64; hop++) {
				uint32_t node = f->ports[in].node, sw = f->nodes[node].sw;
				uint8_t port = fx_run_entry(r, sw, dlid);
				g_assert_cmpuint(port, !=, IBSM_NO_PORT);
				uint32_t out = f->nodes[node].port0 + port;
				uint32_t peer = f->ports[out].peer;
				g_assert_cmpuint(peer, !=, IBSM_NONE);
				if (f->nodes[f->ports[peer].node].type != IBSM_SWITCH)
					break;
				uint8_t vl[16];
				g_assert_cmpint(torus2qos->sl2vl(r->result, in, out, vl), ==, 0);
				*vls |= 1u << vl[sl];
				uint32_t ch = out * 16 + vl[sl];
				if (prev != IBSM_NONE)
					add_edge(edges, keys, prev, ch);
				prev = ch;
				in = peer;
			}
		}
	}
	if (egress)
		mcast_edges(f, r, egress, edges, keys, vls);
	/* Kahn: peel channels without incoming edges; what stays is on or behind a cycle */
	uint32_t nch = f->n_ports * 16;
	uint32_t *indeg = g_new0(uint32_t, nch), *off = g_new0(uint32_t, nch + 1);
	uint8_t *used = g_new0(uint8_t, nch);
	for (guint i = 0; i < keys->len; i++) {
		gint64 k = g_array_index(keys, gint64, i);
		uint32_t from = (uint32_t)(k >> 32), to = (uint32_t)k;
		off[from + 1]++;
		indeg[to]++;
		used[from] = used[to] = 1;
	}
	for (uint32_t i = 0; i < nch; i++)
		off[i + 1] += off[i];
	uint32_t *adj = g_new(uint32_t, keys->len + 1), *fill = g_memdup2(off, nch * 4);
	for (guint i = 0; i < keys->len; i++) {
		gint64 k = g_array_index(keys, gint64, i);
		adj[fill[k >> 32]++] = (uint32_t)k;
	}
	uint32_t *stack = g_new(uint32_t, nch), top = 0, left = 0;
	for (uint32_t i = 0; i < nch; i++) {
		left += used[i];
		if (used[i] && !indeg[i])
			stack[top++] = i;
	}
	while (top) {
		uint32_t v = stack[--top];
		left--;
		for (uint32_t e = off[v]; e < off[v + 1]; e++)
			if (--indeg[adj[e]] == 0)
				stack[top++] = adj[e];
	}
	if (left && getenv("TORUS2QOS_CYCLE")) { /* print one cycle: follow remaining channels */
		uint32_t v = 0;
		while (v < nch && (!used[v] || !indeg[v]))
			v++;
		for (unsigned k = 0; k < 40 && v < nch; k++) {
			uint32_t port = v / 16, sw = f->nodes[f->ports[port].node].sw;
			unsigned cc[3];
			pcoords(g, sw, cc);
			fprintf(stderr, "(%u,%u,%u)p%u/vl%u <- ", cc[0], cc[1], cc[2],
				f->ports[port].num, v % 16);
			uint32_t nx = nch; /* a predecessor still on the graph: walking back loops */
			for (guint i = 0; i < keys->len && nx == nch; i++) {
				gint64 kk = g_array_index(keys, gint64, i);
				if ((uint32_t)kk == v && indeg[kk >> 32])
					nx = (uint32_t)(kk >> 32);
			}
			v = nx;
		}
		fprintf(stderr, "\n");
	}
	g_free(stack);
	g_free(adj);
	g_free(fill);
	g_free(indeg);
	g_free(off);
	g_free(used);
	g_hash_table_destroy(edges);
	g_array_free(keys, TRUE);
	return left;
}

static unsigned cdg_cycles(const struct tgrid *g, const struct fx_run *r, unsigned *vls)
{
	return cdg_cycles_mc(g, r, vls, NULL);
}

/* Routes g, checks every pair delivered and the VL-aware CDG acyclic; *shortest: were all
 * routes shortest paths. Leaves the run in r (fx_run_clear). */
static void route_judged(const struct tgrid *g, const char *conf, struct fx_core *c,
			 struct fx_run *r, int want_shortest, int dead)
{
	int rc = route(g, conf, c, r);
	if (rc != 0)
		g_test_message("route: %s", r->routes.why);
	g_assert_cmpint(rc, ==, 0);
	struct fx_walk_stats st;
	fx_walk_all(&g->f->pub, r->routes.lft, r->routes.stride, &st);
	g_assert_cmpuint(st.pairs, >, 0);
	unsigned lost = 0; /* the pairs to and from a dead switch's own LID (it keeps one) */
	if (dead) {
		unsigned n = 1;
		while (n * n < st.pairs)
			n++;
		lost = 2 * (n - 1);
	}
	g_assert_cmpuint(st.delivered + lost, ==, st.pairs);
	if (want_shortest)
		g_assert_cmpuint(st.longer, ==, 0);
	unsigned vls;
	unsigned cyc = cdg_cycles(g, r, &vls);
	if (cyc)
		g_test_message("%u channels on credit loops (VLs used 0x%x)", cyc, vls);
	g_assert_cmpuint(cyc, ==, 0);
}

static void whole(unsigned X, unsigned Y, unsigned Z, const char *mesh, unsigned P,
		  unsigned hosts)
{
	struct tgrid g;
	tbuild(&g, X, Y, Z, mesh, P, hosts, &NOFAIL);
	char *conf = conf_file(&g, 0, NULL);
	struct fx_core c;
	struct fx_run r;
	route_judged(&g, conf, &c, &r, 1, 0);
	g_assert_cmpuint(fx_core_logged(&c, -1, "built"), ==, 1);
	fx_check_declared(&c, torus2qos);
	fx_run_clear(&r);
	fx_core_clear(&c);
	g_unlink(conf);
	g_free(conf);
	fabric_unref(g.f);
}

static void test_whole_tori(void)
{
	whole(4, 4, 1, NULL, 1, 1);
	whole(3, 3, 1, NULL, 1, 1);
	whole(5, 6, 1, NULL, 2, 2);
	whole(5, 5, 1, "mm", 1, 1);
	whole(4, 4, 4, NULL, 1, 1);
	whole(3, 4, 5, "-m-", 1, 1);
	whole(6, 6, 6, NULL, 1, 1);
	whole(1, 5, 7, NULL, 1, 1);
}

/* The SLs of all CA pairs (by CA number) of a run, [n_cas * n_cas], 0xFF where either CA has
 * no LID. */
static uint8_t *pair_sls(const struct tgrid *g, const struct fx_run *r)
{
	const struct ibsm_fabric *f = &g->f->pub;
	unsigned n = g->nsw * g->hosts;
	uint8_t *sl = g_malloc((size_t)n * n);
	for (unsigned a = 0; a < n; a++)
		for (unsigned b = 0; b < n; b++) {
			uint16_t la = f->ports[fx_ca_port(f, a, 1)].lid;
			uint16_t lb = f->ports[fx_ca_port(f, b, 1)].lid;
			sl[a * n + b] = la && lb ? torus2qos->path_sl(r->result, 0, la, lb) : 0xFF;
		}
	return sl;
}

/* A failure on X x Y x Z: routes delivered, CDG acyclic, and the SL of every pair both runs
 * have unchanged. */
static void failure(unsigned X, unsigned Y, unsigned Z, const char *mesh, unsigned P,
		    const struct tfail *x)
{
	struct tgrid g0, g1;
	tbuild(&g0, X, Y, Z, mesh, P, 1, &NOFAIL);
	tbuild(&g1, X, Y, Z, mesh, P, 1, x);
	unsigned seed = x->dead == 0 ? g0.nsw - 1 : 0;
	char *conf0 = conf_file(&g0, seed, NULL), *conf1 = conf_file(&g1, seed, NULL);
	struct fx_core c0, c1;
	struct fx_run r0, r1;
	route_judged(&g0, conf0, &c0, &r0, 1, 0);
	route_judged(&g1, conf1, &c1, &r1, 0, x->dead >= 0);
	uint8_t *s0 = pair_sls(&g0, &r0), *s1 = pair_sls(&g1, &r1);
	unsigned n = g0.nsw, same = 0;
	for (unsigned i = 0; i < n * n; i++) {
		if (s1[i] == 0xFF)
			continue;
		g_assert_cmpuint(s0[i], ==, s1[i]);
		same++;
	}
	g_assert_cmpuint(same, >, 0);
	g_free(s0);
	g_free(s1);
	fx_run_clear(&r0);
	fx_run_clear(&r1);
	fx_core_clear(&c0);
	fx_core_clear(&c1);
	g_unlink(conf0);
	g_unlink(conf1);
	g_free(conf0);
	g_free(conf1);
	fabric_unref(g0.f);
	fabric_unref(g1.f);
}

static void test_link_failures(void)
{
	struct tfail x = NOFAIL;
	x.cut_pos[0] = 1 + 4 * (1 + 4 * 1); /* (1,1,1) + x */
	x.cut_dim[0] = 0;
	failure(4, 4, 4, NULL, 1, &x);
	x.cut_dim[0] = 2;
	failure(4, 4, 4, NULL, 1, &x);
	x.cut_pos[0] = 3 + 6 * 2; /* the dateline link of the x ring at y = 2 */
	x.cut_dim[0] = 0;
	failure(6, 6, 1, NULL, 1, &x);
	x.cut_pos[0] = 7;
	x.cut_dim[0] = 1;
	failure(5, 6, 1, NULL, 2, &x);
	x.cut_copy = 0; /* one of two parallel links */
	failure(5, 6, 1, NULL, 2, &x);
}

static void test_switch_failures(void)
{
	struct tfail x = NOFAIL;
	x.dead = 1 + 4 * (1 + 4 * 1);
	failure(4, 4, 4, NULL, 1, &x);
	x.dead = 2 + 6 * 3;
	failure(6, 6, 1, NULL, 1, &x);
	x.dead = 0; /* the seed's own switch: the seed is taken elsewhere */
	failure(5, 5, 1, NULL, 1, &x);
	x.dead = 2 + 6 * (3 + 6 * 4);
	failure(6, 6, 6, NULL, 1, &x);
}

static void test_mesh_failures(void)
{
	struct tfail x = NOFAIL;
	x.cut_pos[0] = 2 + 5 * 2;
	x.cut_dim[0] = 0;
	failure(5, 5, 1, "mm", 1, &x);
	x.cut_dim[0] = 1;
	failure(5, 5, 1, "mm", 1, &x);
	x = NOFAIL;
	x.dead = 2 + 5 * 2;
	failure(5, 5, 1, "mm", 1, &x);
}

static void test_split_ring(void)
{
	struct tfail x = NOFAIL;
	x.cut_pos[0] = 1 + 6 * 2;
	x.cut_dim[0] = 0;
	x.cut_pos[1] = 4 + 6 * 2;
	x.cut_dim[1] = 0;
	struct tgrid g;
	tbuild(&g, 6, 6, 1, NULL, 1, 1, &x);
	char *conf = conf_file(&g, 0, NULL);
	struct fx_core c;
	struct fx_run r;
	g_assert_cmpint(route(&g, conf, &c, &r), <, 0);
	g_assert_nonnull(strstr(r.routes.why, "x ring at y=2 z=0 is split into 2 disjoint"));
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, "x ring at y=2 z=0 is split into 2"), >=, 1);
	g_assert_null(r.result);
	fx_run_clear(&r);
	fx_core_clear(&c);
	g_unlink(conf);
	g_free(conf);
	fabric_unref(g.f);
}

/* Hand-checked: on a 4x4 torus seeded at (0,0) the path (0,0) -> (3,0) takes the wrap link,
 * so it crosses the x dateline (SL bit 0); (0,0) -> (2,0) is a tie and does not; (0,0) ->
 * (0,3) crosses the y dateline (bit 1). The QoS bit of the hint is kept, its low bits not.
 * With x_dateline 1 the origin moves: the seed switch is x = 3, so (0,0) -> (3,0) becomes
 * coordinates 3 -> 2 and crosses nothing, while (1,0) -> (2,0) becomes 0 -> 1. */
static void test_path_sl(void)
{
	struct tgrid g;
	tbuild(&g, 4, 4, 1, NULL, 1, 1, &NOFAIL);
	const struct ibsm_fabric *f = &g.f->pub;
	uint16_t lid[16];
	for (unsigned p = 0; p < 16; p++)
		lid[p] = fx_ca_lid(g.f, p);
	char *conf = conf_file(&g, 0, NULL);
	struct fx_core c;
	struct fx_run r;
	g_assert_cmpint(route(&g, conf, &c, &r), ==, 0);
	g_assert_cmpuint(torus2qos->path_sl(r.result, 0, lid[0], lid[3]), ==, 1);
	g_assert_cmpuint(torus2qos->path_sl(r.result, 0, lid[3], lid[0]), ==, 1);
	g_assert_cmpuint(torus2qos->path_sl(r.result, 0, lid[0], lid[2]), ==, 0);
	g_assert_cmpuint(torus2qos->path_sl(r.result, 0, lid[0], lid[12]), ==, 2);
	g_assert_cmpuint(torus2qos->path_sl(r.result, 0, lid[0], lid[15]), ==, 3);
	g_assert_cmpuint(torus2qos->path_sl(r.result, 8, lid[0], lid[15]), ==, 11);
	g_assert_cmpuint(torus2qos->path_sl(r.result, 7, lid[0], lid[5]), ==, 0);
	g_assert_cmpuint(torus2qos->path_sl(r.result, 9, lid[0], lid[0]), ==, 8);
	fx_run_clear(&r);
	fx_core_clear(&c);
	g_unlink(conf);
	g_free(conf);
	conf = conf_file(&g, 0, "x_dateline 1\n");
	g_assert_cmpint(route(&g, conf, &c, &r), ==, 0);
	g_assert_cmpuint(torus2qos->path_sl(r.result, 0, lid[0], lid[3]), ==, 0);
	g_assert_cmpuint(torus2qos->path_sl(r.result, 0, lid[0], lid[1]), ==, 1);
	g_assert_cmpuint(torus2qos->path_sl(r.result, 0, lid[1], lid[2]), ==, 0);
	g_assert_cmpuint(torus2qos->path_sl(r.result, 0, lid[2], lid[0]), ==, 0);
	/* SL2VL at switch (0,0): ports 1 x+, 2 x-, 3 y+, 4 y-, 7 the host */
	uint32_t p0 = f->nodes[f->switches[0].node].port0;
	uint8_t vl[16];
	g_assert_cmpint(torus2qos->sl2vl(r.result, p0 + 3, p0 + 1, vl), ==, 0); /* y -> x: turn */
	for (unsigned sl = 0; sl < 16; sl++)
		g_assert_cmpuint(vl[sl], ==, (sl & 1) | 2 | (sl >> 3) << 2);
	g_assert_cmpint(torus2qos->sl2vl(r.result, p0 + 2, p0 + 4, vl), ==, 0); /* x -> y */
	for (unsigned sl = 0; sl < 16; sl++)
		g_assert_cmpuint(vl[sl], ==, ((sl >> 1) & 1) | (sl >> 3) << 2);
	g_assert_cmpint(torus2qos->sl2vl(r.result, p0 + 7, p0 + 2, vl), ==, 0); /* host -> x */
	for (unsigned sl = 0; sl < 16; sl++)
		g_assert_cmpuint(vl[sl], ==, (sl & 1) | (sl >> 3) << 2);
	g_assert_cmpint(torus2qos->sl2vl(r.result, p0 + 1, p0 + 7, vl), ==, 0); /* to the host */
	for (unsigned sl = 0; sl < 16; sl++)
		g_assert_cmpuint(vl[sl], ==, sl >> 3);
	uint32_t ca = fx_ca_port(f, 0, 1);
	g_assert_cmpint(torus2qos->sl2vl(r.result, ca, ca, vl), ==, 0); /* a CA port */
	for (unsigned sl = 0; sl < 16; sl++)
		g_assert_cmpuint(vl[sl], ==, sl >> 3);
	fx_run_clear(&r);
	fx_core_clear(&c);
	g_unlink(conf);
	g_free(conf);
	fabric_unref(g.f);
}

/* Two parallel links to every neighbour, two hosts per switch: the first host of a switch is
 * reached over the first link, the second over the second; with one link down all over the
 * other. */
static void test_parallel_links(void)
{
	struct tgrid g;
	tbuild(&g, 5, 6, 1, NULL, 2, 2, &NOFAIL);
	char *conf = conf_file(&g, 0, NULL);
	struct fx_core c;
	struct fx_run r;
	g_assert_cmpint(route(&g, conf, &c, &r), ==, 0);
	/* switch (0,0) towards the hosts of (1,0): x+ ports 1 and 2 */
	g_assert_cmpuint(fx_run_entry(&r, 0, fx_ca_lid(g.f, 2)), ==, 1);
	g_assert_cmpuint(fx_run_entry(&r, 0, fx_ca_lid(g.f, 3)), ==, 2);
	fx_run_clear(&r);
	fx_core_clear(&c);
	g_unlink(conf);
	g_free(conf);
	fabric_unref(g.f);
	struct tfail x = NOFAIL;
	x.cut_pos[0] = 0;
	x.cut_dim[0] = 0;
	x.cut_copy = 0;
	tbuild(&g, 5, 6, 1, NULL, 2, 2, &x);
	conf = conf_file(&g, 0, NULL);
	g_assert_cmpint(route(&g, conf, &c, &r), ==, 0);
	g_assert_cmpuint(fx_run_entry(&r, 0, fx_ca_lid(g.f, 2)), ==, 2);
	g_assert_cmpuint(fx_run_entry(&r, 0, fx_ca_lid(g.f, 3)), ==, 2);
	fx_run_clear(&r);
	fx_core_clear(&c);
	g_unlink(conf);
	g_free(conf);
	fabric_unref(g.f);
}

/* Bad or missing configuration: refused with the file (and line) named. */
static void test_conf_errors(void)
{
	struct tgrid g;
	tbuild(&g, 4, 4, 1, NULL, 1, 1, &NOFAIL);
	struct fx_core c;
	struct fx_run r;
	g_assert_cmpint(route(&g, "/nonexistent/torus-2QoS.conf", &c, &r), <, 0);
	g_assert_nonnull(strstr(r.routes.why, "/nonexistent/torus-2QoS.conf"));
	fx_run_clear(&r);
	fx_core_clear(&c);
	char *conf = conf_file(&g, 0, "x_dateline\n");
	g_assert_cmpint(route(&g, conf, &c, &r), <, 0);
	char *where = g_strdup_printf("%s:%u", conf, 7);
	if (!strstr(r.routes.why, where))
		g_test_message("why: %s", r.routes.why);
	g_assert_nonnull(strstr(r.routes.why, where));
	g_free(where);
	fx_run_clear(&r);
	fx_core_clear(&c);
	g_unlink(conf);
	g_free(conf);
	/* a radix-4 ring seeded in one direction only: the seed check says so */
	char *text = g_strdup_printf("torus 4 4 1\nxp_link 0x%016llx 0x%016llx\n"
				     "yp_link 0x%016llx 0x%016llx\n",
				     (unsigned long long)sw_guid(&g, 0),
				     (unsigned long long)sw_guid(&g, 1),
				     (unsigned long long)sw_guid(&g, 0),
				     (unsigned long long)sw_guid(&g, 4));
	int fd = g_file_open_tmp("torus2qos-XXXXXX.conf", &conf, NULL);
	g_assert_true(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	g_free(text);
	g_assert_cmpint(route(&g, conf, &c, &r), <, 0);
	g_assert_nonnull(strstr(r.routes.why, conf));
	fx_run_clear(&r);
	fx_core_clear(&c);
	g_unlink(conf);
	g_free(conf);
	/* a seed switch that is not in the fabric */
	conf = conf_file(&g, 0, "next_seed\nxp_link 0x1 0x2\nxm_link 0x1 0x3\n"
			 "yp_link 0x1 0x4\nym_link 0x1 0x5\n");
	g_assert_cmpint(route(&g, conf, &c, &r), ==, 0); /* the first seed still works */
	fx_run_clear(&r);
	fx_core_clear(&c);
	g_unlink(conf);
	g_free(conf);
	/* the radix does not match the cabling: switches cannot be placed */
	text = g_strdup_printf("torus 5 4 1\nxp_link 0x%016llx 0x%016llx\n"
			       "yp_link 0x%016llx 0x%016llx\nym_link 0x%016llx 0x%016llx\n",
			       (unsigned long long)sw_guid(&g, 0), (unsigned long long)sw_guid(&g, 1),
			       (unsigned long long)sw_guid(&g, 0), (unsigned long long)sw_guid(&g, 4),
			       (unsigned long long)sw_guid(&g, 0), (unsigned long long)sw_guid(&g, 12));
	fd = g_file_open_tmp("torus2qos-XXXXXX.conf", &conf, NULL);
	g_assert_true(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	g_free(text);
	g_assert_cmpint(route(&g, conf, &c, &r), <, 0);
	g_assert_nonnull(strstr(r.routes.why, "could not be placed"));
	fx_run_clear(&r);
	fx_core_clear(&c);
	g_unlink(conf);
	g_free(conf);
	fabric_unref(g.f);
}

static int has(uint64_t m[4], unsigned p)
{
	return (m[p >> 6] >> (p & 63)) & 1;
}

/* Floods a copy from every member along the masks: every other member gets exactly one, no
 * switch sees one copy twice, no CA port that is not a member gets one. */
static void flood_ok(const struct ibsm_fabric *f, uint64_t (*eg)[4], const uint32_t *mem,
		     unsigned n)
{
	uint32_t *got = g_new0(uint32_t, f->n_ports);
	uint32_t *seen = g_new0(uint32_t, f->n_switches);
	uint32_t (*queue)[2] = g_malloc(sizeof(uint32_t[2]) * (f->n_switches + 1));
	for (unsigned i = 0; i < n; i++) {
		memset(got, 0, f->n_ports * sizeof(*got));
		memset(seen, 0, f->n_switches * sizeof(*seen));
		uint32_t sp = f->ports[mem[i]].peer, head = 0, tail = 0;
		queue[tail][0] = f->nodes[f->ports[sp].node].sw;
		queue[tail++][1] = f->ports[sp].num;
		while (head < tail) {
			uint32_t s = queue[head][0], in = queue[head++][1];
			g_assert_cmpuint(seen[s]++, ==, 0);
			uint32_t p0 = f->nodes[f->switches[s].node].port0;
			for (unsigned o = 1; o < 256; o++) {
				if (o == in || !has(eg[s], o))
					continue;
				uint32_t peer = f->ports[p0 + o].peer;
				g_assert_cmpuint(peer, !=, IBSM_NONE);
				const struct ibsm_node *pn = &f->nodes[f->ports[peer].node];
				if (pn->type == IBSM_SWITCH) {
					queue[tail][0] = pn->sw;
					queue[tail++][1] = f->ports[peer].num;
				} else {
					got[peer]++;
				}
			}
		}
		for (unsigned j = 0; j < n; j++)
			g_assert_cmpuint(got[mem[j]], ==, j == i ? 0 : 1);
		unsigned total = 0;
		for (uint32_t p = 0; p < f->n_ports; p++)
			total += got[p];
		g_assert_cmpuint(total, ==, n - 1);
	}
	g_free(got);
	g_free(seen);
	g_free(queue);
}

/* The group of every host: the tree reaches each once, and read from the root every branch
 * goes x, then y, then z without crossing a dateline of a whole ring; with unicast it closes
 * no credit loop. A group of three: its tree is part of the master tree. */
static void mcast_case(unsigned X, unsigned Y, unsigned Z, int dead, unsigned root_pos)
{
	struct tgrid g;
	struct tfail x = NOFAIL;
	x.dead = dead;
	tbuild(&g, X, Y, Z, NULL, 1, 1, &x);
	const struct ibsm_fabric *f = &g.f->pub;
	char *conf = conf_file(&g, 0, NULL);
	struct fx_core c;
	struct fx_run r;
	g_assert_cmpint(route(&g, conf, &c, &r), ==, 0);
	uint32_t *mem = g_new(uint32_t, g.nsw);
	unsigned n = 0;
	for (unsigned i = 0; i < g.nsw; i++)
		if ((int)i != dead)
			mem[n++] = fx_ca_port(f, i, 1);
	uint64_t (*eg)[4] = g_malloc0(sizeof(uint64_t[4]) * f->n_switches);
	g_assert_cmpint(torus2qos->mcast(r.result, f, 0xC000, n, mem, eg), ==, 0);
	flood_ok(f, eg, mem, n);
	/* from the root: dimensions never decrease, no edge wraps round a whole ring */
	int *last = g_new(int, f->n_switches);
	for (uint32_t s = 0; s < f->n_switches; s++)
		last[s] = -2;
	uint32_t *queue = g_new(uint32_t, f->n_switches), head = 0, tail = 0;
	queue[tail++] = root_pos;
	last[root_pos] = -1;
	unsigned reached = 0;
	while (head < tail) {
		uint32_t s = queue[head++];
		reached++;
		uint32_t p0 = f->nodes[f->switches[s].node].port0;
		for (unsigned o = 1; o <= 6; o++) {
			if (!has(eg[s], o))
				continue;
			uint32_t peer = f->ports[p0 + o].peer;
			uint32_t t = f->nodes[f->ports[peer].node].sw;
			if (last[t] != -2)
				continue; /* the way back up */
			int d = (int)(o - 1) / 2;
			g_assert_cmpint(d, >=, last[s]);
			unsigned cs[3], ct[3];
			pcoords(&g, s, cs);
			pcoords(&g, t, ct);
			if (dead < 0)
				g_assert_cmpuint(cs[d] > ct[d] ? cs[d] - ct[d] : ct[d] - cs[d], ==, 1);
			last[t] = d;
			queue[tail++] = t;
		}
	}
	g_assert_cmpuint(reached, ==, n);
	unsigned vls, uc = cdg_cycles(&g, &r, &vls), mc = cdg_cycles_mc(&g, &r, &vls, eg);
	if (mc)
		g_test_message("%ux%ux%u dead %d: %u channels on loops with multicast (%u without)",
			       X, Y, Z, dead, mc, uc);
	g_assert_cmpuint(uc, ==, 0);
	/* Known limit: with a failed switch, unicast's turns around it and the tree's tip-to-root
	 * turns together close loops (in this model, for every root tried), so torus-2QoS(8)'s
	 * claim is checked on whole tori only. */
	if (dead < 0)
		g_assert_cmpuint(mc, ==, 0);
	/* three members: a subtree */
	uint64_t (*sub)[4] = g_malloc0(sizeof(uint64_t[4]) * f->n_switches);
	uint32_t three[3] = { mem[0], mem[n / 2], mem[n - 1] };
	g_assert_cmpint(torus2qos->mcast(r.result, f, 0xC001, 3, three, sub), ==, 0);
	flood_ok(f, sub, three, 3);
	for (uint32_t s = 0; s < f->n_switches; s++)
		for (unsigned w = 0; w < 4; w++)
			g_assert_cmpuint(sub[s][w] & ~eg[s][w], ==, 0);
	g_free(sub);
	g_free(queue);
	g_free(last);
	g_free(eg);
	g_free(mem);
	fx_run_clear(&r);
	fx_core_clear(&c);
	g_unlink(conf);
	g_free(conf);
	fabric_unref(g.f);
}

/* Parallel cables crossed: a group's tree goes up and down the same cable (no copy comes back
 * round another one). */
static void test_mcast_crossed(void)
{
	crossed_cables = 1;
	struct tgrid g;
	tbuild(&g, 4, 4, 1, NULL, 2, 1, &NOFAIL);
	crossed_cables = 0;
	const struct ibsm_fabric *f = &g.f->pub;
	char *conf = conf_file(&g, 0, NULL);
	struct fx_core c;
	struct fx_run r;
	route_judged(&g, conf, &c, &r, 1, 0);
	uint32_t two[2] = { fx_ca_port(f, 0, 1), fx_ca_port(f, 10, 1) };
	uint64_t (*eg)[4] = g_malloc0(sizeof(uint64_t[4]) * f->n_switches);
	g_assert_cmpint(torus2qos->mcast(r.result, f, 0xC000, 2, two, eg), ==, 0);
	flood_ok(f, eg, two, 2);
	g_free(eg);
	fx_run_clear(&r);
	fx_core_clear(&c);
	g_unlink(conf);
	g_free(conf);
	fabric_unref(g.f);
}

static void test_mcast(void)
{
	mcast_case(6, 5, 1, -1, 3 + 6 * 2);     /* torus-2QoS(8)'s 6x5 example: root (3,2) */
	mcast_case(4, 4, 4, -1, 2 + 4 * (2 + 4 * 2));
	mcast_case(6, 5, 1, 3 + 6 * 2, 3 + 6 * 1); /* the root failed: the nearest switch */
}

/* torus-2QoS(8)'s QoS warnings: none for a fitting configuration; VL arbitration that does not
 * fit, a qos_*sl2vl that is overridden, QoS off. */
static void test_qos_warnings(void)
{
	struct tgrid g;
	tbuild(&g, 4, 4, 1, NULL, 1, 1, &NOFAIL);
	char *conf = conf_file(&g, 0, NULL);
	struct fx_core c;
	struct fx_run r;
	g_assert_cmpint(route(&g, conf, &c, &r), ==, 0);
	g_assert_cmpuint(fx_core_logged(&c, -1, "warning"), ==, 0);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fx_core_init(&c);
	fx_core_set(&c, "torus_config", conf);
	fx_core_set(&c, "qos", "TRUE");
	fx_core_set(&c, "qos_swe_sl2vl", "0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,7");
	g_assert_cmpint(fx_route(torus2qos, &c, &g.f->pub, NULL, &r), ==, 0);
	g_assert_cmpuint(fx_core_logged(&c, -1, "VL arbitration of ca, rtr, sw0, swe ports"), ==, 1);
	g_assert_cmpuint(fx_core_logged(&c, -1, "qos_swe_sl2vl is ignored"), ==, 1);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fx_core_init(&c);
	fx_core_set(&c, "torus_config", conf);
	g_assert_cmpint(fx_route(torus2qos, &c, &g.f->pub, NULL, &r), ==, 0);
	g_assert_cmpuint(fx_core_logged(&c, -1, "QoS is off"), ==, 1);
	fx_run_clear(&r);
	fx_core_clear(&c);
	g_unlink(conf);
	g_free(conf);
	fabric_unref(g.f);
}

/* Discovery from a fabric file (tests/fabrics/torus-4x4.net: switch tXY, host hXY): every
 * pair delivered over shortest paths, and the SL of every host pair is the dateline crossings
 * of the coordinates the names give, so every switch was placed where its name says. A seed
 * whose y link is given as x (the torus seen transposed) places them transposed: the SLs then
 * swap bits 0 and 1. */
static unsigned crosses4(unsigned a, unsigned b) /* the shorter way round 4 wraps */
{
	unsigned lo = a < b ? a : b, hi = a < b ? b : a;
	return hi - lo > lo + 4 - hi;
}

static void test_from_file(void)
{
	static const char *const seeds[2] = {
		"torus 4 4 1\nxp_link 0x40000 0x40001\nxm_link 0x40000 0x40003\n"
		"yp_link 0x40000 0x40004\nym_link 0x40000 0x4000c\n",
		"torus 4 4 1\nxp_link 0x40000 0x40004\nxm_link 0x40000 0x4000c\n"
		"yp_link 0x40000 0x40001\nym_link 0x40000 0x40003\n",
	};
	char *path = g_build_filename(TEST_SRCDIR, "tests", "fabrics", "torus-4x4.net", NULL);
	struct model_builder *b = model_builder_new();
	GError *err = NULL;
	g_assert_cmpint(netfile_load(path, b, &err), ==, 0);
	struct fabric *fab = model_freeze(b, 1, &err);
	g_assert_nonnull(fab);
	model_builder_free(b);
	fx_assign_lids(fab, 0);
	const struct ibsm_fabric *f = &fab->pub;
	uint16_t lid[4][4] = { { 0 } };
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct ibsm_node *node = ibsm_node_at(f, n);
		if (node->type == IBSM_CA && node->desc[0] == 'h')
			lid[node->desc[1] - '0'][node->desc[2] - '0'] = ibsm_port_at(f, node->port0 + 1)->lid;
	}
	for (int t = 0; t < 2; t++) {
		char *conf = NULL;
		int fd = g_file_open_tmp("torus2qos-XXXXXX.conf", &conf, NULL);
		g_assert_true(write(fd, seeds[t], strlen(seeds[t])) == (ssize_t)strlen(seeds[t]));
		close(fd);
		struct fx_core c;
		struct fx_run r;
		fx_core_init(&c);
		fx_core_set(&c, "torus_config", conf);
		fx_core_set(&c, "qos", "TRUE");
		g_assert_cmpint(fx_route(torus2qos, &c, f, NULL, &r), ==, 0);
		struct fx_walk_stats st;
		fx_walk_all(f, r.routes.lft, r.routes.stride, &st);
		g_assert_cmpuint(st.delivered, ==, st.pairs);
		g_assert_cmpuint(st.longer, ==, 0);
		for (unsigned a = 0; a < 16; a++)
			for (unsigned z = 0; z < 16; z++) {
				unsigned ax = a % 4, ay = a / 4, bx = z % 4, by = z / 4;
				unsigned want = crosses4(ax, bx) | crosses4(ay, by) << 1;
				if (t)
					want = (want >> 1 & 1) | (want & 1) << 1;
				g_assert_cmpuint(torus2qos->path_sl(r.result, 0, lid[ax][ay], lid[bx][by]), ==,
						 a == z ? 0 : want);
			}
		fx_run_clear(&r);
		fx_core_clear(&c);
		g_unlink(conf);
		g_free(conf);
	}
	fabric_unref(fab);
	g_free(path);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	GModule *m = NULL;
	torus2qos = fx_engine_open(TEST_PLUGIN_DIR "/torus2qos.so", &m);
	g_assert_nonnull(torus2qos);
	g_test_add_func("/torus2qos/whole-tori", test_whole_tori);
	g_test_add_func("/torus2qos/discovery-from-file", test_from_file);
	g_test_add_func("/torus2qos/path-sl-and-sl2vl", test_path_sl);
	g_test_add_func("/torus2qos/parallel-links", test_parallel_links);
	g_test_add_func("/torus2qos/link-failures", test_link_failures);
	g_test_add_func("/torus2qos/switch-failures", test_switch_failures);
	g_test_add_func("/torus2qos/mesh-failures", test_mesh_failures);
	g_test_add_func("/torus2qos/split-ring", test_split_ring);
	g_test_add_func("/torus2qos/conf-errors", test_conf_errors);
	g_test_add_func("/torus2qos/multicast", test_mcast);
	g_test_add_func("/torus2qos/multicast-crossed-cables", test_mcast_crossed);
	g_test_add_func("/torus2qos/qos-warnings", test_qos_warnings);
	int rc = g_test_run();
	if (m)
		g_module_close(m);
	return rc;
}
