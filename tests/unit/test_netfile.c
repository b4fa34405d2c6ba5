/* test_netfile.c - unit tests of the fabric-file loader: the test fabrics load with the
 * GUIDs ibsim 0.10 gives them (expectations computed by hand from the counters, and the same
 * files' ibnetdiscover output under ibsim loads into the same model), grammar corners, port
 * attributes, every error with its file:line, and a small mutation fuzz that must not crash. */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <inttypes.h>
#include <string.h>
#include "fabric/model.h"
#include "fabric/netfile.h"

#define W_1X 1
#define W_4X 2
#define W_12X 8
#define S_SDR 1
#define S_DDR 2
#define S_QDR 4

static char *fabric_path(const char *name)
{
	return g_build_filename(TEST_SRCDIR, name, NULL);
}

static struct fabric *load_path(const char *path)
{
	struct model_builder *b = model_builder_new();
	GError *err = NULL;
	struct fabric *f;

	if (netfile_load(path, b, &err) < 0)
		g_error("%s", err->message);
	f = model_freeze(b, 1, &err);
	if (!f)
		g_error("freeze %s: %s", path, err->message);
	model_builder_free(b);
	return f;
}

static struct fabric *load(const char *name)
{
	char *path = fabric_path(name);
	struct fabric *f = load_path(path);

	g_free(path);
	return f;
}

static const struct ibsm_node *node(const struct fabric *f, uint64_t guid)
{
	uint32_t id = fabric_node_by_guid(f, guid);

	if (id == IBSM_NONE)
		g_error("no node 0x%" PRIx64, guid);
	return &f->nodes[id];
}

static uint32_t port_id(const struct fabric *f, uint64_t guid, uint8_t num)
{
	const struct ibsm_node *n = node(f, guid);

	g_assert_cmpuint(num, <=, n->nports);
	return n->port0 + num;
}

static const struct ibsm_port *port(const struct fabric *f, uint64_t guid, uint8_t num)
{
	return &f->ports[port_id(f, guid, num)];
}

static void assert_link(const struct fabric *f, uint64_t a, uint8_t pa, uint64_t b, uint8_t pb)
{
	g_assert_cmpuint(port(f, a, pa)->peer, ==, port_id(f, b, pb));
	g_assert_cmpuint(port(f, b, pb)->peer, ==, port_id(f, a, pa));
}

static void assert_unlinked(const struct fabric *f, uint64_t guid, uint8_t num)
{
	const struct ibsm_port *p = port(f, guid, num);

	g_assert_cmpuint(p->peer, ==, IBSM_NONE);
	g_assert_cmpuint(p->state, ==, IBSM_STATE_DOWN);
	g_assert_cmpuint(f->px[port_id(f, guid, num)].phys_state, ==, 2);
	g_assert_cmpuint(p->flags & IBSM_PORT_LINKUP, ==, 0);
	g_assert_cmpuint(p->flags & IBSM_PORT_PRESENT, !=, 0);
}

/* What every loaded fabric must satisfy: symmetric links, ibsim's port states, port GUIDs. */
static unsigned check_invariants(const struct fabric *f)
{
	unsigned links = 0;

	for (uint32_t i = 0; i < f->pub.n_nodes; i++) {
		const struct ibsm_node *n = &f->nodes[i];
		int sw = n->type == IBSM_SWITCH;

		g_assert_cmpuint(n->sysimg_guid, !=, 0);
		g_assert_nonnull(n->desc);
		if (!sw)
			g_assert_cmpuint(f->ports[n->port0].flags & IBSM_PORT_PRESENT, ==, 0);
		for (uint32_t pn = sw ? 0 : 1; pn <= n->nports; pn++) {
			uint32_t id = n->port0 + pn;
			const struct ibsm_port *p = &f->ports[id];

			g_assert_cmpuint(p->flags & IBSM_PORT_PRESENT, !=, 0);
			g_assert_cmpuint(p->guid, ==, sw ? n->guid : n->guid + pn);
			g_assert_cmpuint(p->mtu_cap, ==, sw && pn == 0 ? 3 : 4);
			g_assert_cmpuint(p->vl_cap, ==, 4);
			g_assert_cmpuint(p->oper_vls, ==, 4);
			if (sw && pn == 0) {
				g_assert_cmpuint(p->state, ==, IBSM_STATE_ACTIVE);
				g_assert_cmpuint(p->flags & IBSM_PORT_LINKUP, !=, 0);
				g_assert_cmpuint(p->peer, ==, IBSM_NONE);
			} else if (p->peer != IBSM_NONE) {
				g_assert_cmpuint(f->ports[p->peer].peer, ==, id);
				g_assert_cmpuint(p->state, ==, IBSM_STATE_INIT);
				g_assert_cmpuint(f->px[id].phys_state, ==, 5);
				g_assert_cmpuint(p->flags & IBSM_PORT_LINKUP, !=, 0);
				g_assert_cmpuint(p->width, ==, f->ports[p->peer].width);
				g_assert_cmpuint(p->speed, ==, f->ports[p->peer].speed);
				links++;
			} else {
				g_assert_cmpuint(p->state, ==, IBSM_STATE_DOWN);
			}
		}
		if (sw)
			g_assert_cmpuint(f->nx[i].lft_cap, ==, NETFILE_LFT_CAP);
	}
	return links / 2;
}

/* ---- the test fabrics -------------------------------------------------------------------- */

static void test_tiny(void)
{
	struct fabric *f = load("tests/fabrics/tiny.net");

	g_assert_cmpuint(f->pub.n_nodes, ==, 6);
	g_assert_cmpuint(f->pub.n_switches, ==, 2);
	g_assert_cmpuint(f->pub.n_ports, ==, 3 + 3 * 2 + 2 * 9);
	g_assert_cmpuint(f->pub.n_adj, ==, 4);           /* 2 parallel links, both directions */
	g_assert_cmpuint(check_invariants(f), ==, 6);
	/* CA counter from 0x100000: h1 (2 ports) takes 3 GUIDs, the others 2 each */
	g_assert_cmpuint(node(f, 0x100000)->nports, ==, 2);
	g_assert_cmpstr(node(f, 0x100000)->desc, ==, "h1 dual-port, port 2 unconnected");
	g_assert_cmpstr(node(f, 0x100003)->desc, ==, "h2");
	g_assert_cmpstr(node(f, 0x100005)->desc, ==, "h3");
	g_assert_cmpstr(node(f, 0x100007)->desc, ==, "h4");
	g_assert_cmpstr(node(f, 0x200000)->desc, ==, "sw1");
	g_assert_cmpstr(node(f, 0x200001)->desc, ==, "sw2");
	g_assert_cmpuint(fabric_port_by_guid(f, 0x100002), ==, port_id(f, 0x100000, 2));
	g_assert_cmpuint(fabric_port_by_guid(f, 0x100008), ==, port_id(f, 0x100007, 1));
	g_assert_cmpuint(fabric_port_by_guid(f, 0x200001), ==, port_id(f, 0x200001, 0));
	assert_link(f, 0x100000, 1, 0x200000, 1);
	assert_link(f, 0x100003, 1, 0x200000, 2);
	assert_link(f, 0x100005, 1, 0x200001, 1);
	assert_link(f, 0x100007, 1, 0x200001, 2);
	assert_link(f, 0x200000, 7, 0x200001, 7);
	assert_link(f, 0x200000, 8, 0x200001, 8);
	assert_unlinked(f, 0x100000, 2);
	assert_unlinked(f, 0x200000, 3);
	g_assert_cmpuint(node(f, 0x100003)->sysimg_guid, ==, 0x100003);
	g_assert_cmpuint(port(f, 0x100000, 1)->width, ==, W_4X);
	g_assert_cmpuint(port(f, 0x100000, 1)->speed, ==, S_SDR);
	g_assert_cmpuint(port(f, 0x100000, 1)->lid, ==, 0);
	uint32_t sw1 = fabric_node_by_guid(f, 0x200000);
	g_assert_cmpuint(f->nx[sw1].partition_cap, ==, 8);
	g_assert_cmpuint(f->nx[sw1].pkey_enf_cap, ==, 64);
	g_assert_cmpuint(f->nx[sw1].mft_cap, ==, 1024);
	g_assert_cmpuint(f->nx[sw1].revision, ==, 0xA1);
	g_assert_cmpuint(f->nx[fabric_node_by_guid(f, 0x100000)].partition_cap, ==, 64);
	fabric_unref(f);
}

static void test_ftree_small(void)
{
	struct fabric *f = load("tests/fabrics/ftree-small.net");

	g_assert_cmpuint(f->pub.n_nodes, ==, 24);
	g_assert_cmpuint(f->pub.n_switches, ==, 8);
	g_assert_cmpuint(f->pub.n_adj, ==, 32);
	g_assert_cmpuint(check_invariants(f), ==, 16 + 16);
	for (unsigned h = 1; h <= 16; h++) {
		uint64_t g = 0x10000 + 2 * (h - 1);
		char name[8];

		g_snprintf(name, sizeof(name), "h%u", h);
		g_assert_cmpstr(node(f, g)->desc, ==, name);
		assert_link(f, g, 1, 0x20000 + (h - 1) / 4, (uint8_t)((h - 1) % 4 + 1));
	}
	for (unsigned l = 1; l <= 4; l++)
		for (unsigned s = 1; s <= 4; s++)
			assert_link(f, 0x20000 + l - 1, (uint8_t)(4 + s), 0x20004 + s - 1, (uint8_t)l);
	g_assert_cmpstr(node(f, 0x20007)->desc, ==, "spine4");
	fabric_unref(f);
}

static void test_torus(void)
{
	struct fabric *f = load("tests/fabrics/torus-4x4.net");

#define T(x, y) (0x40000 + 4 * (uint64_t)(y) + (x))
	g_assert_cmpuint(f->pub.n_nodes, ==, 32);
	g_assert_cmpuint(f->pub.n_switches, ==, 16);
	g_assert_cmpuint(f->pub.n_adj, ==, 64);
	g_assert_cmpuint(check_invariants(f), ==, 16 + 32);
	for (unsigned y = 0; y < 4; y++) {
		for (unsigned x = 0; x < 4; x++) {
			assert_link(f, 0x30000 + 2 * (4 * y + x), 1, T(x, y), 5);
			assert_link(f, T(x, y), 1, T((x + 1) % 4, y), 2);
			assert_link(f, T(x, y), 3, T(x, (y + 1) % 4), 4);
		}
	}
	g_assert_cmpstr(node(f, T(3, 2))->desc, ==, "t32");
	g_assert_cmpstr(node(f, 0x30000 + 2 * (4 * 2 + 3))->desc, ==, "h32");
#undef T
	fabric_unref(f);
}

static void test_irregular(void)
{
	struct fabric *f = load("tests/fabrics/irregular.net");
	unsigned s1_to_s2 = 0;

	g_assert_cmpuint(f->pub.n_nodes, ==, 30);
	g_assert_cmpuint(f->pub.n_switches, ==, 10);
	g_assert_cmpuint(f->pub.n_adj, ==, 30);
	g_assert_cmpuint(check_invariants(f), ==, 21 + 15);
	g_assert_cmpuint(node(f, 0x50000 + 18)->nports, ==, 1);          /* h10 */
	g_assert_cmpstr(node(f, 0x50000 + 18)->desc, ==, "h10");
	g_assert_cmpuint(node(f, 0x50000 + 18)->sysimg_guid, ==, 0x50012);
	/* h11: new base 0x51000, 2 ports, its own system image GUID (for it only) */
	g_assert_cmpstr(node(f, 0x51000)->desc, ==, "h11 dual-homed");
	g_assert_cmpuint(node(f, 0x51000)->sysimg_guid, ==, 0x5aa0000000000001ull);
	assert_link(f, 0x51000, 1, 0x60005, 1);
	assert_link(f, 0x51000, 2, 0x60004, 5);
	g_assert_cmpstr(node(f, 0x51003)->desc, ==, "h12");
	g_assert_cmpuint(node(f, 0x51003)->sysimg_guid, ==, 0x51003);
	g_assert_cmpstr(node(f, 0x51003 + 16)->desc, ==, "h20");
	g_assert_cmpstr(node(f, 0x60000)->desc, ==, "irregular switch 1");
	g_assert_cmpstr(node(f, 0x60009)->desc, ==, "s10");
	const struct ibsm_node *s1 = node(f, 0x60000);
	const struct ibsm_switch *sw = &f->switches[s1->sw];
	for (uint32_t a = sw->adj0; a < sw->adj0 + sw->nadj; a++)
		if (f->nodes[f->switches[f->adj[a].peer_sw].node].guid == 0x60001)
			s1_to_s2++;
	g_assert_cmpuint(s1_to_s2, ==, 2);
	fabric_unref(f);
}

static void test_demo(void)
{
	struct fabric *f = load("etc/fabrics/demo.net");

	g_assert_cmpuint(f->pub.n_nodes, ==, 110);
	g_assert_cmpuint(f->pub.n_switches, ==, 14);
	g_assert_cmpuint(f->pub.n_adj, ==, 96);
	g_assert_cmpuint(check_invariants(f), ==, 96 + 48);
	g_assert_cmpstr(node(f, 0x0002c90300000000ull)->desc, ==, "hca-1");
	g_assert_cmpstr(node(f, 0x0002c90300000000ull + 2 * 95)->desc, ==, "hca-96");
	g_assert_cmpstr(node(f, 0x0002c90400000000ull + 13)->desc, ==, "spine-6");
	assert_link(f, 0x0002c90300000000ull + 2 * 95, 1, 0x0002c90400000007ull, 12);
	fabric_unref(f);
}

/* Grammar corners whose ibsim 0.10 reading was checked with ibnetdiscover. */
static void test_features(void)
{
	struct fabric *f = load("tests/fabrics/features.net");

	g_assert_cmpuint(f->pub.n_nodes, ==, 7);
	g_assert_cmpuint(f->pub.n_switches, ==, 2);
	check_invariants(f);
	/* f-h1: desc from the comment; w=1 on both ends -> 1x; LID/LMC from the annotation */
	g_assert_cmpstr(node(f, 0x700000)->desc, ==, "first host");
	assert_link(f, 0x700000, 1, 0x800000, 1);
	g_assert_cmpuint(port(f, 0x700000, 1)->width, ==, W_1X);
	assert_link(f, 0x700000, 2, 0x800001, 1);
	g_assert_cmpuint(port(f, 0x700000, 2)->lid, ==, 9);
	g_assert_cmpuint(port(f, 0x700000, 2)->lmc, ==, 1);
	g_assert_cmpuint(port(f, 0x700000, 1)->lid, ==, 0);
	uint32_t h1 = fabric_node_by_guid(f, 0x700000);
	g_assert_cmpuint(f->nx[h1].device_id, ==, 0x1003);
	g_assert_cmpuint(f->nx[h1].vendor_id, ==, 0);
	/* vendid= and sysimgguid= for this node only; s=3 on both ends -> DDR */
	uint32_t hb = fabric_node_by_guid(f, 0x700003);
	g_assert_cmpstr(f->nodes[hb].desc, ==, "host with blanks");
	g_assert_cmpuint(f->nodes[hb].sysimg_guid, ==, 0x7000000000000001ull);
	g_assert_cmpuint(f->nx[hb].vendor_id, ==, 0x1002c9);
	g_assert_cmpuint(port(f, 0x700003, 1)->speed, ==, S_DDR);
	/* caguid+0x40; s=3 against s=1 -> SDR; peer without [port] means port 1 */
	assert_link(f, 0x700040, 1, 0x800000, 3);
	g_assert_cmpuint(port(f, 0x700040, 1)->speed, ==, S_SDR);
	g_assert_cmpuint(f->nx[fabric_node_by_guid(f, 0x700040)].vendor_id, ==, 0);
	g_assert_cmpuint(node(f, 0x700040)->sysimg_guid, ==, 0x700040);
	/* the long name: node id cut at 64 characters (the peer still matches), desc at 63 */
	g_assert_cmpstr(node(f, 0x700042)->desc, ==,
			"a-node-name-that-is-longer-than-sixty-four-characters-012345678");
	assert_link(f, 0x700042, 1, 0x800000, 6);
	/* the switch header: desc, enhanced port 0, LID 12 */
	uint32_t sw1 = fabric_node_by_guid(f, 0x800000);
	g_assert_cmpstr(f->nodes[sw1].desc, ==, "fancy switch");
	g_assert_cmpuint(f->nx[sw1].enhanced_sp0, ==, 1);
	g_assert_cmpuint(port(f, 0x800000, 0)->flags & IBSM_PORT_ESP0, !=, 0);
	g_assert_cmpuint(port(f, 0x800000, 0)->lid, ==, 12);
	g_assert_cmpuint(port(f, 0x800001, 0)->flags & IBSM_PORT_ESP0, ==, 0);
	g_assert_cmpuint(f->nx[fabric_node_by_guid(f, 0x800001)].enhanced_sp0, ==, 0);
	/* "lid 0 12xQDR" on both ends */
	assert_link(f, 0x800000, 4, 0x800001, 4);
	g_assert_cmpuint(port(f, 0x800000, 4)->width, ==, W_12X);
	g_assert_cmpuint(port(f, 0x800000, 4)->speed, ==, S_QDR);
	/* the router: rtguid= base, CA-like port GUIDs */
	g_assert_cmpuint(node(f, 0x900000)->type, ==, IBSM_ROUTER);
	assert_link(f, 0x900000, 2, 0x800000, 5);
	g_assert_cmpuint(fabric_port_by_guid(f, 0x900002), ==, port_id(f, 0x900000, 2));
	assert_unlinked(f, 0x900000, 1);
	assert_unlinked(f, 0x800001, 2);
	fabric_unref(f);
}

/* ibnetdiscover's output of a fabric running in ibsim loads into the same model. */
static void assert_same_model(const char *a_name, const char *b_name)
{
	struct fabric *a = load(a_name), *b = load(b_name);

	g_assert_cmpuint(a->pub.n_nodes, ==, b->pub.n_nodes);
	g_assert_cmpuint(a->pub.n_ports, ==, b->pub.n_ports);
	g_assert_cmpuint(a->pub.n_adj, ==, b->pub.n_adj);
	for (uint32_t i = 0; i < a->pub.n_nodes; i++) {
		const struct ibsm_node *x = &a->nodes[i], *y = &b->nodes[i];

		g_assert_cmpuint(x->guid, ==, y->guid);
		g_assert_cmpuint(x->sysimg_guid, ==, y->sysimg_guid);
		g_assert_cmpuint(x->type, ==, y->type);
		g_assert_cmpuint(x->nports, ==, y->nports);
		g_assert_cmpstr(x->desc, ==, y->desc);
		g_assert_cmpuint(a->nx[i].vendor_id, ==, b->nx[i].vendor_id);
		g_assert_cmpuint(a->nx[i].device_id, ==, b->nx[i].device_id);
		g_assert_cmpuint(a->nx[i].enhanced_sp0, ==, b->nx[i].enhanced_sp0);
	}
	for (uint32_t p = 0; p < a->pub.n_ports; p++) {
		const struct ibsm_port *x = &a->ports[p], *y = &b->ports[p];

		g_assert_cmpuint(x->guid, ==, y->guid);
		g_assert_cmpuint(x->peer, ==, y->peer);
		g_assert_cmpuint(x->flags, ==, y->flags);
		g_assert_cmpuint(x->state, ==, y->state);
		g_assert_cmpuint(x->width, ==, y->width);
		g_assert_cmpuint(x->speed, ==, y->speed);
		g_assert_cmpuint(x->lid, ==, y->lid);
		g_assert_cmpuint(x->lmc, ==, y->lmc);
	}
	fabric_unref(a);
	fabric_unref(b);
}

static void test_ibnetdiscover_output(void)
{
	assert_same_model("tests/fabrics/tiny.net", "tests/fabrics/tiny-ibnetdiscover.net");
	assert_same_model("tests/fabrics/irregular.net", "tests/fabrics/irregular-ibnetdiscover.net");
	assert_same_model("tests/fabrics/features.net", "tests/fabrics/features-ibnetdiscover.net");
}

/* ---- files written on the fly ------------------------------------------------------------ */

static char *tmp_dir;

static char *write_file(const char *name, const char *text, gssize len)
{
	char *path = g_build_filename(tmp_dir, name, NULL);
	GError *err = NULL;

	if (!g_file_set_contents(path, text, len, &err))
		g_error("%s", err->message);
	return path;
}

/* Module prefixes, include, CRLF, one-sided links, hcaguids/relative bases. */
static void test_syntax(void)
{
	char *inc = write_file("sub.net", "# included\nHca 1 \"c\"\n[1] \"m#sw\"[1]\n", -1);
	char *path = write_file("syntax.net",
		"switchguid=0x10\n"
		"hcaguids=0x100\n"
		"module=\"m\"\n"
		"Hca 1 \"a\"\n"
		"[1] \"sw\"[3]\n"
		"\n"
		"Switch 4 \"sw\"\n"
		"[3] \"a\"[1]\n"
		"\n"
		"module=\"\"\r\n"
		"Ca 1 \"b\"\r\n"
		"[1] \"m#sw\"[4]\r\n"
		"\r\n"
		"include \"sub.net\"\n"
		"switchguid+0x20\n"
		"Switch 2 \"lone\"  # unquoted desc lid 5 lmc 0\n"
		"[2] \"r\"[1]\n"
		"\n"
		"rtguid=0x400\n"
		"Rt 1 \"r\"\n"
		"[1] \"lone\"[2] # lid 7 lmc 0 \"lone\" lid 5 4xSDR\n", -1);
	struct fabric *f = load_path(path);

	g_assert_cmpuint(f->pub.n_nodes, ==, 6);
	check_invariants(f);
	g_assert_cmpstr(node(f, 0x100)->desc, ==, "m#a");
	g_assert_cmpstr(node(f, 0x10)->desc, ==, "m#sw");
	g_assert_cmpstr(node(f, 0x102)->desc, ==, "b");
	g_assert_cmpstr(node(f, 0x104)->desc, ==, "c");
	assert_link(f, 0x100, 1, 0x10, 3);
	assert_link(f, 0x102, 1, 0x10, 4);      /* declared on the CA side only */
	assert_link(f, 0x104, 1, 0x10, 1);      /* declared on the CA side only */
	g_assert_cmpstr(node(f, 0x30)->desc, ==, "unquoted desc");
	g_assert_cmpuint(port(f, 0x30, 0)->lid, ==, 5);
	/* ibsim reads no LID from a router's port line */
	assert_link(f, 0x400, 1, 0x30, 2);
	g_assert_cmpuint(port(f, 0x400, 1)->lid, ==, 0);
	fabric_unref(f);
	g_free(path);
	g_free(inc);
}

/* Without counter lines: ibsim's bases 0x100000 (CAs) and 0x200000 (switches). */
static void test_default_bases(void)
{
	char *path = write_file("defaults.net",
		"Hca 1 \"a\"\n[1] \"s\"[1]\n\nSwitch 2 \"s\"\n[1] \"a\"[1]\n\n"
		"Hca 3 \"b\"\n\nSwitch 2 \"t\"\n\nCa 1 \"c\"\n", -1);
	struct fabric *f = load_path(path);

	g_assert_cmpuint(f->pub.n_nodes, ==, 5);
	assert_link(f, 0x100000, 1, 0x200000, 1);
	g_assert_cmpstr(node(f, 0x100002)->desc, ==, "b");
	g_assert_cmpstr(node(f, 0x200001)->desc, ==, "t");
	g_assert_cmpstr(node(f, 0x100006)->desc, ==, "c");
	g_assert_cmpuint(port(f, 0x100002, 3)->guid, ==, 0x100005);
	fabric_unref(f);
	g_free(path);
}

/* IBSM_FABRIC_LFT_CAP gives the switches the LinearFDBCap ibsim -L would (a fabric past LID
 * 30719 routed offline); unset, empty, 0, past 49152 or not a number: ibsim 0.10's default. */
static void test_lft_cap_env(void)
{
	char *path = write_file("cap.net", "Hca 1 \"a\"\n[1] \"s\"[1]\n\nSwitch 2 \"s\"\n[1] \"a\"[1]\n", -1);
	const struct { const char *value; uint32_t cap; } cases[] = {
		{ "49152", 49152 }, { "0xC000", 49152 }, { "1024", 1024 }, { NULL, NETFILE_LFT_CAP },
		{ "", NETFILE_LFT_CAP }, { "0", NETFILE_LFT_CAP }, { "49153", NETFILE_LFT_CAP },
		{ "48k", NETFILE_LFT_CAP },
	};
	for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
		if (cases[i].value)
			g_setenv("IBSM_FABRIC_LFT_CAP", cases[i].value, TRUE);
		else
			g_unsetenv("IBSM_FABRIC_LFT_CAP");
		struct fabric *f = load_path(path);
		g_assert_cmpuint(f->nx[fabric_node_by_guid(f, 0x200000)].lft_cap, ==, cases[i].cap);
		fabric_unref(f);
	}
	g_unsetenv("IBSM_FABRIC_LFT_CAP");
	g_free(path);
}

/* Loads text as NAME in the scratch dir: must fail with code, the message must start with
 * "<file>:<line>: " (file = where_file or NAME) and contain fragment; b must stay empty. */
static void expect_error_at(const char *text, gssize len, int code, const char *where_file,
			    int line, const char *fragment)
{
	char *path = write_file("bad.net", text, len);
	char *where = g_build_filename(tmp_dir, where_file ? where_file : "bad.net", NULL);
	char *prefix = g_strdup_printf("%s:%d: ", where, line);
	struct model_builder *b = model_builder_new();
	GError *err = NULL;

	g_assert_cmpint(netfile_load(path, b, &err), ==, -1);
	g_assert_nonnull(err);
	if (!g_str_has_prefix(err->message, prefix) || !strstr(err->message, fragment))
		g_error("want \"%s...%s...\", got \"%s\"", prefix, fragment, err->message);
	g_assert_true(g_error_matches(err, NETFILE_ERROR, code));
	g_assert_cmpuint(model_count(b), ==, 0);
	g_error_free(err);
	model_builder_free(b);
	g_free(prefix);
	g_free(where);
	g_free(path);
}

static void expect_error(const char *text, int code, int line, const char *fragment)
{
	expect_error_at(text, -1, code, NULL, line, fragment);
}

#define P NETFILE_ERROR_PARSE
#define L NETFILE_ERROR_LINK

static void test_parse_errors(void)
{
	char longline[400];

	expect_error("Hca 1 \"a\"\n[1] \"b\"[1]\n\nfoo bar\n", P, 4, "unknown record \"foo bar\"");
	expect_error("Switch 4 \"s\"\n[1] \"a\"[1]\n[x] \"b\"[1]\n", P, 3, "bad port number");
	expect_error("Switch 4 \"s\"\n[5] \"a\"[1]\n", P, 2, "has ports 1..4");
	expect_error("Switch 4 \"s\"\n[0] \"a\"[1]\n", P, 2, "bad port number");
	expect_error("Hca 1 \"a\"\n[1] sw[1]\n", P, 2, "no \"peer\" name");
	expect_error("Hca 1 \"a\"\n[1] \"sw[1]\n", P, 2, "unterminated peer name");
	expect_error("Hca 1 \"a\"\n[1] \"s\"[0]\n", P, 2, "bad peer port number");
	expect_error("Hca 1 \"a\"\n\nHca 1 \"a\"\n", P, 3, "already defined at");
	expect_error("Hca 1 \"a\"\n\ncaguid=0x100000\nHca 1 \"b\"\n", P, 4,
		     "GUID 0x0000000000100000 of \"b\" is already used by \"a\"");
	expect_error("Hca 2 \"a\"\n\nswitchguid=0x100002\nSwitch 4 \"s\"\n", P, 4,
		     "port GUID 0x0000000000100002 of \"s\"[0] is already used by \"a\"[2]");
	expect_error("caguid=0xfffffffffffffffe\nHca 2 \"a\"\n", P, 2, "wrap around to 0");
	expect_error("# a router needs rtguid=\nRt 1 \"r\"\n", P, 2, "would get GUID 0");
	expect_error("Switch 4 \"s\"\n[1] \"a\"[1]\nHca 1 \"a\"\n[1] \"s\"[1]\n", P, 3,
		     "without a blank line");
	expect_error("Hca 1 \"a\"\n[1] \"s\"[1]\n[2] \"s\"[2]\n", P, 3, "port line outside");
	expect_error("Switch 4 \"s\"\n[1] \"a\"[1]\n# c\n[1] \"b\"[1]\n", P, 4,
		     "already declared at line 2");
	expect_error("\n\ndo Unlink \"s\"\n", P, 3, "console commands");
	expect_error("Switch \"s\"\n", P, 1, "without a port count");
	expect_error("Switch 0 \"s\"\n", P, 1, "bad port count");
	expect_error("Switch 300 \"s\"\n", P, 1, "bad port count");
	/* a sign is no port count: ibsim would skip it and read 5 */
	expect_error("Switch -5 \"s\"\n", P, 1, "bad port count \"-5\"");
	expect_error("Switch\t+5 \"s\"\n", P, 1, "bad port count \"+5\"");
	expect_error("# c\nHca -1 \"h\"\n[1] \"s\"[1]\n", P, 2, "bad port count \"-1\"");
	expect_error("Ca x2 \"h\"\n", P, 1, "bad port count \"x2\"");
	expect_error("Hca 2\n", P, 1, "without a \"name\"");
	expect_error("Hca 2 \"a\n", P, 1, "unterminated node name");
	expect_error("Hca 1 \"a#b\"\n", P, 1, "reserved");
	expect_error("Hca 1 \"a\"\n@[1] \"x\"\n", P, 2, "aliases");
	expect_error("Hca 1 \"a\"\n[1] \"x@y\"[1]\n", P, 2, "aliases");
	expect_error("Hca 1 \"a\"\n[1] \"s\"[1] w=40\n", P, 2, "bad link width");
	expect_error("Hca 1 \"a\"\n[1] \"s\"[1] s=9\n", P, 2, "bad link speed");
	expect_error("caguid 5\n", P, 1, "without '=' or '+'");
	expect_error("width=0\n", P, 1, "bad link width");
	expect_error("module=\"0123456789012345678901\"\n", P, 1, "longer than 20");
	expect_error("#\n  Switch 4 \"indented\"\n", P, 2, "unknown record");
	memset(longline, 'x', sizeof(longline));
	longline[0] = '#';
	longline[sizeof(longline) - 1] = '\0';
	expect_error(longline, P, 1, "longer than 254 characters");
	expect_error_at("Hca 1 \"a\0b\"\n", 12, P, NULL, 1, "NUL byte");
}

static void test_link_errors(void)
{
	expect_error("Hca 1 \"a\"\n[1] \"sw\"[1]\n", L, 2,
		     "\"a\"[1] is linked to undefined node \"sw\"");
	expect_error("Hca 1 \"a\"\n[1] \"s\"[9]\n\nSwitch 4 \"s\"\n[1] \"a\"[1]\n", L, 2,
		     "\"s\" has ports 1..4");
	expect_error("Hca 1 \"a\"\n[1] \"s\"[1]\n\nHca 1 \"b\"\n[1] \"s\"[2]\n\n"
		     "Switch 4 \"s\"\n[1] \"b\"[1]\n[2] \"b\"[1]\n", L, 2,
		     "conflicting links: \"a\"[1] -> \"s\"[1], but");
	expect_error("Hca 1 \"a\"\n[1] \"s\"[1]\n\nHca 1 \"b\"\n[1] \"s\"[1]\n\nSwitch 4 \"s\"\n",
		     L, 5, "\"s\"[1] is already linked to \"a\"[1]");
	expect_error("Switch 4 \"s\"\n[1] \"s\"[1]\n", L, 2, "linked to itself");
	expect_error("Hca 1 \"a\"\n[1] \"s\"[1] w=1\n\nSwitch 4 \"s\"\n[1] \"a\"[1] w=2\n", L, 2,
		     "no common link width");
}

static void test_file_errors(void)
{
	struct model_builder *b = model_builder_new();
	char *missing = g_build_filename(tmp_dir, "does-not-exist.net", NULL);
	char *want = g_strdup_printf("%s: cannot open the fabric file: %s", missing,
				     g_strerror(ENOENT));
	GError *err = NULL;

	g_assert_cmpint(netfile_load(missing, b, &err), ==, -1);
	g_assert_true(g_error_matches(err, NETFILE_ERROR, NETFILE_ERROR_OPEN));
	g_assert_cmpstr(err->message, ==, want);
	g_clear_error(&err);
	g_free(want);
	g_free(missing);
	model_builder_free(b);

	expect_error("# x\ninclude \"nope.net\"\n", NETFILE_ERROR_OPEN, 2, "cannot include");
	expect_error("include nope.net\n", P, 1, "bad include file name");
	g_free(write_file("inc.net", "# inc\n\nbogus\n", -1));
	expect_error_at("Hca 1 \"a\"\n\ninclude \"inc.net\"\n", -1, P, "inc.net", 3,
			"unknown record \"bogus\"");
	expect_error("\ninclude \"bad.net\"\n", P, 2, "nested deeper than 9 files");
	/* a chain of 9 files is fine (ibsim's limit); bad.net + chain1..8 are 9, so chain8 fails */
	for (int i = 1; i <= 9; i++) {
		char name[16], *text = g_strdup_printf("include \"chain%d.net\"\n", i + 1);

		g_snprintf(name, sizeof(name), "chain%d.net", i);
		g_free(write_file(name, i < 9 ? text : "Hca 1 \"end\"\n", -1));
		g_free(text);
	}
	char *chain = g_build_filename(tmp_dir, "chain1.net", NULL);
	struct fabric *f = load_path(chain);
	g_assert_cmpuint(f->pub.n_nodes, ==, 1);
	fabric_unref(f);
	g_free(chain);
	expect_error_at("include \"chain1.net\"\n", -1, P, "chain8.net", 1, "nested deeper");
}

/* A fabric file that defines no node is an error, not an empty fabric. */
static void test_empty(void)
{
	static const char *const texts[] = { "", "# only a comment\n\n", "switchguid=0x10\n" };
	for (unsigned i = 0; i < G_N_ELEMENTS(texts); i++) {
		char *path = write_file("empty.net", texts[i], -1);
		char *want = g_strdup_printf("%s: defines no node (an empty fabric)", path);
		struct model_builder *b = model_builder_new();
		GError *err = NULL;
		g_assert_cmpint(netfile_load(path, b, &err), ==, -1);
		g_assert_error(err, NETFILE_ERROR, NETFILE_ERROR_PARSE);
		g_assert_cmpstr(err->message, ==, want);
		g_error_free(err);
		model_builder_free(b);
		g_free(want);
		g_free(path);
	}
}

/* A file already in the builder: the second load is refused by the model. */
static void test_model_refuses(void)
{
	char *path = fabric_path("tests/fabrics/tiny.net");
	struct model_builder *b = model_builder_new();
	GError *err = NULL;

	g_assert_cmpint(netfile_load(path, b, &err), ==, 0);
	g_assert_cmpuint(model_count(b), ==, 6);
	g_assert_cmpint(netfile_load(path, b, &err), ==, -1);
	g_assert_true(g_error_matches(err, NETFILE_ERROR, NETFILE_ERROR_MODEL));
	g_assert_nonnull(strstr(err->message, "tiny.net:8: GUID 0x0000000000100000"));
	g_error_free(err);
	model_builder_free(b);
	g_free(path);
}

/* Mutations of tiny.net: never a crash (ASan/UBSan watch), and what loads also freezes. */
static void test_mutations(void)
{
	static const char interesting[] = "\"[]#\n=@+ 0123456789xSHCawsel\r\t\xff";
	char *src_path = fabric_path("tests/fabrics/features.net");
	GRand *rnd = g_rand_new_with_seed(20240607);
	unsigned loaded = 0, refused = 0;
	char *src;
	gsize len;

	g_assert_true(g_file_get_contents(src_path, &src, &len, NULL));
	for (int iter = 0; iter < 600; iter++) {
		GString *s = g_string_new_len(src, (gssize)len);
		int muts = g_rand_int_range(rnd, 1, 6);

		for (int m = 0; m < muts && s->len; m++) {
			gsize at = (gsize)g_rand_int_range(rnd, 0, (gint32)s->len);
			switch (g_rand_int_range(rnd, 0, 4)) {
			case 0:
				/* the terminator too: a NUL byte now and then */
				s->str[at] = interesting[g_rand_int_range(rnd, 0, sizeof(interesting))];
				break;
			case 1: {
				gsize n = (gsize)g_rand_int_range(rnd, 1, 20);
				g_string_erase(s, (gssize)at, (gssize)MIN(s->len - at, n));
				break;
			}
			case 2: {
				gsize from = (gsize)g_rand_int_range(rnd, 0, (gint32)s->len);
				gsize n = (gsize)g_rand_int_range(rnd, 1, 80);
				n = MIN(s->len - from, n);
				char *copy = g_strndup(s->str + from, n);
				g_string_insert_len(s, (gssize)at, copy, (gssize)n);
				g_free(copy);
				break;
			}
			default:
				g_string_truncate(s, at);
				break;
			}
		}
		char *path = write_file("fuzz.net", s->str, (gssize)s->len);
		struct model_builder *b = model_builder_new();
		GError *err = NULL;
		if (netfile_load(path, b, &err) == 0) {
			struct fabric *f = model_freeze(b, 1, &err);
			g_assert_no_error(err);
			g_assert_nonnull(f);
			check_invariants(f);
			fabric_unref(f);
			loaded++;
		} else {
			g_assert_nonnull(err);
			g_assert_cmpuint(model_count(b), ==, 0);
			g_error_free(err);
			refused++;
		}
		model_builder_free(b);
		g_free(path);
		g_string_free(s, TRUE);
	}
	g_test_message("mutations: %u loaded, %u refused", loaded, refused);
	g_assert_cmpuint(loaded, >, 0);
	g_assert_cmpuint(refused, >, 0);
	g_rand_free(rnd);
	g_free(src);
	g_free(src_path);
}

static void rm_rf(const char *dir)
{
	GDir *d = g_dir_open(dir, 0, NULL);
	const char *name;

	while (d && (name = g_dir_read_name(d))) {
		char *p = g_build_filename(dir, name, NULL);
		g_unlink(p);
		g_free(p);
	}
	if (d)
		g_dir_close(d);
	g_rmdir(dir);
}

int main(int argc, char **argv)
{
	int r;

	g_test_init(&argc, &argv, NULL);
	tmp_dir = g_dir_make_tmp("test-netfile-XXXXXX", NULL);
	g_assert_nonnull(tmp_dir);
	g_test_add_func("/netfile/tiny", test_tiny);
	g_test_add_func("/netfile/ftree-small", test_ftree_small);
	g_test_add_func("/netfile/torus-4x4", test_torus);
	g_test_add_func("/netfile/irregular", test_irregular);
	g_test_add_func("/netfile/demo", test_demo);
	g_test_add_func("/netfile/features", test_features);
	g_test_add_func("/netfile/ibnetdiscover-output", test_ibnetdiscover_output);
	g_test_add_func("/netfile/syntax", test_syntax);
	g_test_add_func("/netfile/default-bases", test_default_bases);
	g_test_add_func("/netfile/lft-cap-env", test_lft_cap_env);
	g_test_add_func("/netfile/parse-errors", test_parse_errors);
	g_test_add_func("/netfile/link-errors", test_link_errors);
	g_test_add_func("/netfile/file-errors", test_file_errors);
	g_test_add_func("/netfile/empty", test_empty);
	g_test_add_func("/netfile/model-refuses", test_model_refuses);
	g_test_add_func("/netfile/mutations", test_mutations);
	r = g_test_run();
	rm_rf(tmp_dir);
	g_free(tmp_dir);
	return r;
}
