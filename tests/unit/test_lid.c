/* test_lid.c - unit tests of the LID manager: alignment per LMC, keeping valid LIDs, moving
 * invalid or duplicate ones, guid2lid precedence and persistence, -r, LinearFDBCap limits
 * and the atomic, merge-preserving guid2lid writer. */
#include <dirent.h>
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include "fabric/lid.h"
#include "base/log.h"
#include "fabric/model.h"

#define SW_GUID UINT64_C(0x200000)
#define CA_GUID(i) (UINT64_C(0x100000) + UINT64_C(0x100) * (i)) /* node GUID; port n GUID = node + n */

/* ---- building small fabrics ---- */

static uint32_t add_switch(struct model_builder *b, uint64_t guid, uint8_t nports, uint16_t cap)
{
	int i = model_add_node(b, guid, IBSM_SWITCH, nports);
	g_assert_cmpint(i, >=, 0);
	struct model_node_in *n = model_node(b, (uint32_t)i);
	g_snprintf(n->desc, sizeof(n->desc), "sw-%" PRIx64, guid);
	n->lft_cap = cap;
	n->ports[0].guid = guid;
	n->ports[0].flags = IBSM_PORT_PRESENT;
	n->ports[0].state = IBSM_STATE_ACTIVE;
	for (uint32_t p = 1; p <= nports; p++) {
		n->ports[p].guid = guid;
		n->ports[p].flags = IBSM_PORT_PRESENT;
	}
	return (uint32_t)i;
}

static uint32_t add_ca(struct model_builder *b, uint64_t guid, uint8_t nports)
{
	int i = model_add_node(b, guid, IBSM_CA, nports);
	g_assert_cmpint(i, >=, 0);
	struct model_node_in *n = model_node(b, (uint32_t)i);
	g_snprintf(n->desc, sizeof(n->desc), "ca-%" PRIx64, guid);
	for (uint32_t p = 1; p <= nports; p++) {
		n->ports[p].guid = guid + p;
		n->ports[p].flags = IBSM_PORT_PRESENT;
	}
	return (uint32_t)i;
}

static void wire(struct model_builder *b, uint32_t x, uint8_t px, uint32_t y, uint8_t py)
{
	model_link(b, x, px, y, py);
	model_node(b, x)->ports[px].flags |= IBSM_PORT_LINKUP;
	model_node(b, y)->ports[py].flags |= IBSM_PORT_LINKUP;
	model_node(b, x)->ports[px].state = IBSM_STATE_ACTIVE;
	model_node(b, y)->ports[py].state = IBSM_STATE_ACTIVE;
}

/* One switch (GUID SW_GUID, LinearFDBCap cap) with n_ca one-port CAs on ports 1..n_ca.
 * CA 0's port is the SM's. */
static struct model_builder *star(uint32_t n_ca, uint16_t cap)
{
	struct model_builder *b = model_builder_new();
	uint32_t s = add_switch(b, SW_GUID, (uint8_t)(n_ca + 1), cap);
	for (uint32_t i = 0; i < n_ca; i++) {
		uint32_t c = add_ca(b, CA_GUID(i), 1);
		wire(b, c, 1, s, (uint8_t)(i + 1));
	}
	model_node(b, 1)->ports[1].flags |= IBSM_PORT_SM;
	return b;
}

static void set_lid(struct model_builder *b, uint64_t node_guid, uint8_t port, uint16_t lid)
{
	int i = model_find_node(b, node_guid);
	g_assert_cmpint(i, >=, 0);
	model_node(b, (uint32_t)i)->ports[port].lid = lid;
}

static struct fabric *freeze(struct model_builder *b, uint32_t gen)
{
	GError *err = NULL;
	struct fabric *f = model_freeze(b, gen, &err);
	g_assert_no_error(err);
	g_assert_nonnull(f);
	return f;
}

static const struct ibsm_port *port_of(const struct fabric *f, uint64_t port_guid)
{
	uint32_t p = fabric_port_by_guid(f, port_guid);
	g_assert_cmpuint(p, !=, IBSM_NONE);
	return &f->ports[p];
}

static uint16_t lid_of(const struct fabric *f, uint64_t port_guid)
{
	return port_of(f, port_guid)->lid;
}

static void assign_ok(struct fabric *f, const struct lid_opts *o, struct lid_stats *st)
{
	GError *err = NULL;
	int rc = lid_assign_stats(f, o, st, &err);
	g_assert_no_error(err);
	g_assert_cmpint(rc, ==, 0);
}

/* Every end port has a LID range aligned to its size, ranges are disjoint and below the
 * limit, other ports have LID 0, and lid_port indexes every LID. */
static void check_invariants(const struct fabric *f, uint8_t lmc)
{
	uint8_t *used = g_malloc0(0xC000);
	uint32_t limit = lid_highest_usable(f, NULL);
	g_assert_cmpuint(f->pub.lmc, ==, lmc);
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		const struct ibsm_port *port = &f->ports[p];
		if (!fabric_is_end_port(f, p)) {
			g_assert_cmpuint(port->lid, ==, 0);
			continue;
		}
		int is_sw = f->nodes[port->node].type == IBSM_SWITCH;
		uint32_t n = 1u << port->lmc;
		g_assert_cmpuint(port->lmc, ==, is_sw ? 0 : lmc);
		g_assert_cmpuint(port->lid, !=, 0);
		g_assert_cmpuint(port->lid & (n - 1), ==, 0);
		g_assert_cmpuint(port->lid + n - 1, <=, limit);
		for (uint32_t l = port->lid; l < port->lid + n; l++) {
			g_assert_cmpuint(used[l], ==, 0);
			used[l] = 1;
			g_assert_cmpuint(f->pub.lid_port[l], ==, p);
		}
	}
	g_free(used);
}

/* ---- temp dirs and log capture ---- */

static char *make_tmpdir(void)
{
	GError *err = NULL;
	char *d = g_dir_make_tmp("test_lid-XXXXXX", &err);
	g_assert_no_error(err);
	return d;
}

static void rm_rf(const char *path)
{
	GDir *d = g_dir_open(path, 0, NULL);
	if (d) {
		const char *name;
		while ((name = g_dir_read_name(d))) {
			char *sub = g_build_filename(path, name, NULL);
			rm_rf(sub);
			g_free(sub);
		}
		g_dir_close(d);
	}
	g_remove(path);
}

static char *log_path;

static void log_capture_start(const char *dir)
{
	log_path = g_build_filename(dir, "log", NULL);
	g_assert_cmpint(log_open(log_path, 0), ==, 0);
	log_set_level(IBSM_LOG_DEBUG);
}

static char *log_capture_end(void)
{
	char *text = NULL;
	log_close();
	log_set_level(IBSM_LOG_INFO);
	g_assert_true(g_file_get_contents(log_path, &text, NULL, NULL));
	g_remove(log_path);
	g_clear_pointer(&log_path, g_free);
	return text;
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char *p = g_build_filename(dir, name, NULL);
	GError *err = NULL;
	g_file_set_contents(p, text, -1, &err);
	g_assert_no_error(err);
	g_free(p);
}

static char *read_file(const char *dir, const char *name)
{
	char *p = g_build_filename(dir, name, NULL), *text = NULL;
	g_assert_true(g_file_get_contents(p, &text, NULL, NULL));
	g_free(p);
	return text;
}

/* ---- tests ---- */

/* LMC 0..3: CA ranges aligned and disjoint, switches one LID packed into alignment holes,
 * a CA port without a link gets no LID, switch external ports none. */
static void test_alignment(void)
{
	for (uint8_t lmc = 0; lmc <= 3; lmc++) {
		struct model_builder *b = model_builder_new();
		uint32_t s1 = add_switch(b, SW_GUID, 8, 0);
		uint32_t s2 = add_switch(b, SW_GUID + 1, 8, 0);
		uint32_t s3 = add_switch(b, SW_GUID + 2, 8, 0);
		wire(b, s1, 8, s2, 8);
		wire(b, s2, 7, s3, 7);
		for (uint32_t i = 0; i < 5; i++)
			wire(b, add_ca(b, CA_GUID(i), 1), 1, i < 3 ? s1 : s2, (uint8_t)(i + 1));
		uint32_t two = add_ca(b, CA_GUID(9), 2); /* port 1 linked, port 2 dark */
		wire(b, two, 1, s3, 1);
		set_lid(b, CA_GUID(9), 2, 9);           /* stale LID on the dark port */
		model_node(b, 3)->ports[1].flags |= IBSM_PORT_SM;
		struct fabric *f = freeze(b, 1);

		struct lid_opts o = { .lmc = lmc };
		struct lid_stats st;
		assign_ok(f, &o, &st);
		check_invariants(f, lmc);
		g_assert_cmpuint(st.end_ports, ==, 3 + 6);
		g_assert_cmpuint(st.fresh, ==, 9);
		g_assert_cmpuint(lid_of(f, CA_GUID(9) + 2), ==, 0);
		/* switch external ports have no LID */
		const struct ibsm_node *n1 = &f->nodes[fabric_node_by_guid(f, SW_GUID)];
		g_assert_cmpuint(f->ports[n1->port0 + 1].lid, ==, 0);
		uint32_t n = 1u << lmc;
		if (lmc >= 2) {
			/* 3 switches fit in the hole 1..n-1 left by alignment */
			for (uint32_t k = 0; k < 3; k++)
				g_assert_cmpuint(lid_of(f, SW_GUID + k), <, n);
			g_assert_cmpuint(st.max_lid, ==, n * 6 + n - 1);
		} else {
			/* no holes: LIDs are 1 .. 9 exactly */
			g_assert_cmpuint(st.max_lid, ==, lmc ? 2 * 6 + 3 : 9);
		}
		/* the SM's port is served first */
		g_assert_cmpuint(f->ports[f->pub.sm_port].lid, ==, n);
		fabric_unref(f);
		model_builder_free(b);
	}
}

/* Multi-LID ranges are placed before single LIDs, so switches (even with lower GUIDs than
 * the CAs) fill the alignment holes; the SM's port gets the first range. */
static void test_packing(void)
{
	struct model_builder *b = model_builder_new();
	uint32_t s[4];
	for (uint32_t i = 0; i < 4; i++)
		s[i] = add_switch(b, 0x10 + i, 4, 0);
	for (uint32_t i = 0; i < 3; i++)
		wire(b, s[i], 4, s[i + 1], 3);
	uint32_t c0 = add_ca(b, CA_GUID(0), 1), c1 = add_ca(b, CA_GUID(1), 1);
	wire(b, c0, 1, s[0], 1);
	wire(b, c1, 1, s[1], 1);
	model_node(b, c1)->ports[1].flags |= IBSM_PORT_SM;
	struct fabric *f = freeze(b, 1);
	struct lid_opts o = { .lmc = 2 };
	struct lid_stats st;
	assign_ok(f, &o, &st);
	check_invariants(f, 2);
	g_assert_cmpuint(lid_of(f, CA_GUID(1) + 1), ==, 4); /* the SM's port first */
	g_assert_cmpuint(lid_of(f, CA_GUID(0) + 1), ==, 8);
	for (uint32_t i = 0; i < 3; i++)
		g_assert_cmpuint(lid_of(f, 0x10 + i), ==, i + 1);
	g_assert_cmpuint(lid_of(f, 0x13), ==, 12);
	g_assert_cmpuint(st.max_lid, ==, 12);
	fabric_unref(f);
	model_builder_free(b);
}

/* An enhanced switch port 0 gets the LMC only with lmc_esp0. */
static void test_esp0(void)
{
	struct model_builder *b = star(2, 0);
	model_node(b, 0)->enhanced_sp0 = 1;
	struct fabric *f = freeze(b, 1);
	struct lid_opts o = { .lmc = 2 };
	assign_ok(f, &o, NULL);
	g_assert_cmpuint(port_of(f, SW_GUID)->lmc, ==, 0);
	g_assert_cmpuint(lid_of(f, SW_GUID), ==, 1);
	o.lmc_esp0 = 1;
	o.reassign = 1;
	assign_ok(f, &o, NULL);
	g_assert_cmpuint(port_of(f, SW_GUID)->lmc, ==, 2);
	g_assert_cmpuint(lid_of(f, SW_GUID) & 3, ==, 0);
	g_assert_cmpuint(f->pub.lid_port[lid_of(f, SW_GUID) + 3], ==, fabric_port_by_guid(f, SW_GUID));
	fabric_unref(f);
	model_builder_free(b);
}

/* Valid LIDs already on the fabric stay; new ports take the lowest free LIDs around them. */
static void test_preserve(void)
{
	struct model_builder *b = star(4, 0);
	set_lid(b, CA_GUID(0), 1, 10);
	set_lid(b, CA_GUID(1), 1, 3);
	set_lid(b, SW_GUID, 0, 2);
	struct fabric *f = freeze(b, 1);
	struct lid_opts o = { .lmc = 0 };
	struct lid_stats st;
	assign_ok(f, &o, &st);
	check_invariants(f, 0);
	g_assert_cmpuint(lid_of(f, CA_GUID(0) + 1), ==, 10);
	g_assert_cmpuint(lid_of(f, CA_GUID(1) + 1), ==, 3);
	g_assert_cmpuint(lid_of(f, SW_GUID), ==, 2);
	g_assert_cmpuint(lid_of(f, CA_GUID(2) + 1), ==, 1);
	g_assert_cmpuint(lid_of(f, CA_GUID(3) + 1), ==, 4);
	g_assert_cmpuint(st.kept, ==, 3);
	g_assert_cmpuint(st.fresh, ==, 2);
	g_assert_cmpuint(st.changed, ==, 2);
	/* a second run on the result changes nothing */
	assign_ok(f, &o, &st);
	g_assert_cmpuint(st.changed, ==, 0);
	g_assert_cmpuint(st.kept, ==, 5);
	fabric_unref(f);
	model_builder_free(b);

	/* LMC 1: an aligned base keeps its pair, new ranges avoid it */
	b = star(3, 0);
	set_lid(b, CA_GUID(1), 1, 2);
	f = freeze(b, 1);
	o.lmc = 1;
	assign_ok(f, &o, &st);
	check_invariants(f, 1);
	g_assert_cmpuint(lid_of(f, CA_GUID(1) + 1), ==, 2);
	g_assert_cmpuint(lid_of(f, CA_GUID(0) + 1), ==, 4);
	g_assert_cmpuint(lid_of(f, CA_GUID(2) + 1), ==, 6);
	g_assert_cmpuint(lid_of(f, SW_GUID), ==, 1);
	fabric_unref(f);
	model_builder_free(b);
}

/* Unaligned, multicast, above-cap and duplicate LIDs move; the first claimant keeps. */
static void test_invalid_existing(void)
{
	struct model_builder *b = star(6, 64);      /* highest usable LID 63 */
	set_lid(b, CA_GUID(0), 1, 7);               /* SM port, unaligned for LMC 1 */
	set_lid(b, CA_GUID(1), 1, 4);               /* keeps 4-5 */
	set_lid(b, CA_GUID(2), 1, 4);               /* duplicate: moves */
	set_lid(b, CA_GUID(3), 1, 0xC004);          /* multicast: moves */
	set_lid(b, CA_GUID(4), 1, 100);             /* above LinearFDBCap: moves */
	set_lid(b, CA_GUID(5), 1, 8);               /* keeps 8-9 */
	set_lid(b, SW_GUID, 0, 5);                  /* inside CA 1's range: moves */
	struct fabric *f = freeze(b, 1);
	struct lid_opts o = { .lmc = 1 };
	struct lid_stats st;
	assign_ok(f, &o, &st);
	check_invariants(f, 1);
	g_assert_cmpuint(st.limit, ==, 63);
	g_assert_cmpuint(lid_of(f, CA_GUID(1) + 1), ==, 4);
	g_assert_cmpuint(lid_of(f, CA_GUID(5) + 1), ==, 8);
	g_assert_cmpuint(st.kept, ==, 2);
	g_assert_cmpuint(st.fresh, ==, 5);
	/* the movers take the lowest free aligned pairs, the SM's port first */
	g_assert_cmpuint(lid_of(f, CA_GUID(0) + 1), ==, 2);
	g_assert_cmpuint(lid_of(f, CA_GUID(2) + 1), ==, 6);
	g_assert_cmpuint(lid_of(f, CA_GUID(3) + 1), ==, 10);
	g_assert_cmpuint(lid_of(f, CA_GUID(4) + 1), ==, 12);
	g_assert_cmpuint(lid_of(f, SW_GUID), ==, 1);
	fabric_unref(f);
	model_builder_free(b);

	/* the SM's port wins a duplicate even against a lower GUID */
	b = star(3, 0);
	model_node(b, 1)->ports[1].flags &= (uint16_t)~IBSM_PORT_SM;
	model_node(b, 3)->ports[1].flags |= IBSM_PORT_SM; /* CA 2 */
	set_lid(b, CA_GUID(0), 1, 6);
	set_lid(b, CA_GUID(2), 1, 6);
	f = freeze(b, 1);
	o.lmc = 0;
	assign_ok(f, &o, &st);
	g_assert_cmpuint(lid_of(f, CA_GUID(2) + 1), ==, 6);
	g_assert_cmpuint(lid_of(f, CA_GUID(0) + 1), !=, 6);
	check_invariants(f, 0);
	fabric_unref(f);
	model_builder_free(b);
}

/* assign, save, a new generation with no LIDs (and a new lower-GUID CA that would take
 * LID 1 otherwise) gets the same LIDs back; an absent port keeps its reservation. */
static void test_guid2lid_roundtrip(void)
{
	char *dir = make_tmpdir();
	struct lid_opts o = { .lmc = 2, .cache_dir = dir };
	struct lid_stats st;
	GError *err = NULL;

	struct model_builder *b = star(4, 0);
	struct fabric *f = freeze(b, 1);
	assign_ok(f, &o, &st);
	g_assert_cmpuint(st.fresh, ==, 5);
	uint16_t lids[4], sw_lid = lid_of(f, SW_GUID);
	for (int i = 0; i < 4; i++)
		lids[i] = lid_of(f, CA_GUID(i) + 1);
	g_assert_cmpint(lid_save_guid2lid(f, dir, &err), ==, 0);
	g_assert_no_error(err);

	/* OpenSM's format, sorted by GUID */
	char *text = read_file(dir, LID_GUID2LID_FILE);
	char *want = g_strdup_printf("0x%016" PRIx64 " 0x%04x 0x%04x\n\n", CA_GUID(0) + 1,
				     lids[0], lids[0] + 3);
	g_assert_true(g_str_has_prefix(text, want));
	char *want_sw = g_strdup_printf("\n0x%016" PRIx64 " 0x%04x 0x%04x\n\n", SW_GUID, sw_lid,
					sw_lid);
	g_assert_true(g_str_has_suffix(text, want_sw));
	g_free(want);
	g_free(want_sw);
	g_free(text);
	fabric_unref(f);
	model_builder_free(b);

	/* generation 2: CA 3 gone, a new CA with the lowest GUID, no LIDs on any port */
	b = model_builder_new();
	uint32_t s = add_switch(b, SW_GUID, 8, 0);
	for (uint32_t i = 0; i < 3; i++)
		wire(b, add_ca(b, CA_GUID(i), 1), 1, s, (uint8_t)(i + 1));
	wire(b, add_ca(b, 0x1000, 1), 1, s, 5);
	f = freeze(b, 2);
	assign_ok(f, &o, &st);
	check_invariants(f, 2);
	for (int i = 0; i < 3; i++)
		g_assert_cmpuint(lid_of(f, CA_GUID(i) + 1), ==, lids[i]);
	g_assert_cmpuint(lid_of(f, SW_GUID), ==, sw_lid);
	g_assert_cmpuint(st.from_guid2lid, ==, 4);
	g_assert_cmpuint(st.reserved_lids, ==, 4);
	/* the newcomer does not get the absent CA 3's range */
	uint16_t newcomer = lid_of(f, 0x1001);
	g_assert_true(newcomer + 3 < lids[3] || newcomer > lids[3] + 3);

	/* saving keeps the absent GUID's entry */
	g_assert_cmpint(lid_save_guid2lid(f, dir, &err), ==, 0);
	text = read_file(dir, LID_GUID2LID_FILE);
	want = g_strdup_printf("0x%016" PRIx64 " 0x%04x 0x%04x\n", CA_GUID(3) + 1, lids[3],
			       lids[3] + 3);
	g_assert_nonnull(strstr(text, want));
	g_free(want);
	want = g_strdup_printf("0x%016" PRIx64 " 0x%04x 0x%04x\n", (uint64_t)0x1001, newcomer,
			       newcomer + 3);
	g_assert_nonnull(strstr(text, want));
	g_free(want);
	g_free(text);
	fabric_unref(f);
	model_builder_free(b);
	rm_rf(dir);
	g_free(dir);
}

/* A guid2lid entry beats a LID already on the port and evicts another port's LID. */
static void test_guid2lid_beats_existing(void)
{
	char *dir = make_tmpdir();
	char *g2l = g_strdup_printf("0x%016" PRIx64 " 0x0020 0x0020\n\n", CA_GUID(1) + 1);
	write_file(dir, LID_GUID2LID_FILE, g2l);
	g_free(g2l);
	struct model_builder *b = star(3, 0);
	set_lid(b, CA_GUID(1), 1, 8);
	set_lid(b, CA_GUID(2), 1, 0x20);
	struct fabric *f = freeze(b, 1);
	struct lid_opts o = { .lmc = 0, .cache_dir = dir };
	struct lid_stats st;
	assign_ok(f, &o, &st);
	check_invariants(f, 0);
	g_assert_cmpuint(lid_of(f, CA_GUID(1) + 1), ==, 0x20);
	g_assert_cmpuint(lid_of(f, CA_GUID(2) + 1), !=, 0x20);
	g_assert_cmpuint(lid_of(f, CA_GUID(2) + 1), ==, 2); /* SM took 1, switch 3 */
	g_assert_cmpuint(st.from_guid2lid, ==, 1);
	g_assert_cmpuint(st.changed, ==, 4);
	fabric_unref(f);
	model_builder_free(b);
	rm_rf(dir);
	g_free(dir);
}

/* -r: guid2lid and the LIDs on the ports are ignored; LIDs are packed from 1. */
static void test_reassign(void)
{
	char *dir = make_tmpdir();
	char *g2l = g_strdup_printf("0x%016" PRIx64 " 0x0040 0x0040\nbad line\n", CA_GUID(1) + 1);
	write_file(dir, LID_GUID2LID_FILE, g2l);
	g_free(g2l);
	struct model_builder *b = star(3, 0);
	set_lid(b, CA_GUID(0), 1, 100);
	set_lid(b, CA_GUID(2), 1, 200);
	set_lid(b, SW_GUID, 0, 300);
	struct fabric *f = freeze(b, 1);
	struct lid_opts o = { .lmc = 0, .cache_dir = dir, .reassign = 1 };
	struct lid_stats st;
	assign_ok(f, &o, &st);
	check_invariants(f, 0);
	g_assert_cmpuint(st.from_guid2lid, ==, 0);
	g_assert_cmpuint(st.guid2lid_ignored, ==, 0); /* the file is not even read */
	g_assert_cmpuint(st.kept, ==, 0);
	g_assert_cmpuint(lid_of(f, CA_GUID(0) + 1), ==, 1); /* SM port first */
	g_assert_cmpuint(lid_of(f, CA_GUID(1) + 1), ==, 2);
	g_assert_cmpuint(lid_of(f, CA_GUID(2) + 1), ==, 3);
	g_assert_cmpuint(lid_of(f, SW_GUID), ==, 4);
	g_assert_cmpuint(st.max_lid, ==, 4);

	/* without -r the same inputs keep 100/200/300 and guid2lid's 0x40 */
	o.reassign = 0;
	fabric_unref(f);
	f = freeze(b, 2);
	assign_ok(f, &o, &st);
	g_assert_cmpuint(lid_of(f, CA_GUID(0) + 1), ==, 100);
	g_assert_cmpuint(lid_of(f, CA_GUID(1) + 1), ==, 0x40);
	g_assert_cmpuint(lid_of(f, SW_GUID), ==, 300);
	fabric_unref(f);
	model_builder_free(b);
	rm_rf(dir);
	g_free(dir);
}

/* Malformed, illegal, duplicate and conflicting guid2lid lines are skipped with file:line;
 * good lines still count. */
static void test_guid2lid_malformed(void)
{
	char *dir = make_tmpdir();
	char *g2l = g_strdup_printf(
		"0x%016" PRIx64 " 0x0010 0x0010\n"   /* 1: good, CA 0 */
		"\n"
		"garbage\n"                           /* 3 */
		"0x%016" PRIx64 " 0x0011\n"          /* 4: two fields */
		"0xzz 0x0012 0x0012\n"               /* 5: bad GUID */
		"0x%016" PRIx64 " 0x0000 0x0000\n"   /* 6: LID 0 */
		"0x%016" PRIx64 " 0x0013 0x0013\n"   /* 7: duplicate of line 1 */
		"0x%016" PRIx64 " 0x0010 0x0010\n"   /* 8: CA 1 overlaps line 1 */
		"0x%016" PRIx64 " 0x0014 0x0014 x\n" /* 9: four fields */
		"0x%016" PRIx64 " 0x10000 0x10000\n" /* 10: LID too big */
		"0x%016" PRIx64 " 0x0015 0x0015\n",  /* 11: good, CA 2 */
		CA_GUID(0) + 1, CA_GUID(1) + 1, CA_GUID(1) + 1, CA_GUID(0) + 1, CA_GUID(1) + 1,
		CA_GUID(1) + 1, CA_GUID(1) + 1, CA_GUID(2) + 1);
	write_file(dir, LID_GUID2LID_FILE, g2l);
	g_free(g2l);
	struct model_builder *b = star(3, 0);
	struct fabric *f = freeze(b, 1);
	struct lid_opts o = { .lmc = 0, .cache_dir = dir };
	struct lid_stats st;
	log_capture_start(dir);
	assign_ok(f, &o, &st);
	char *log = log_capture_end();
	check_invariants(f, 0);
	g_assert_cmpuint(lid_of(f, CA_GUID(0) + 1), ==, 0x10);
	g_assert_cmpuint(lid_of(f, CA_GUID(2) + 1), ==, 0x15);
	g_assert_cmpuint(lid_of(f, CA_GUID(1) + 1), ==, 1);
	g_assert_cmpuint(st.from_guid2lid, ==, 2);
	g_assert_cmpuint(st.guid2lid_ignored, ==, 8);
	char *path = g_build_filename(dir, LID_GUID2LID_FILE, NULL);
	static const int bad_lines[] = { 3, 4, 5, 6, 7, 8, 9, 10 };
	for (unsigned i = 0; i < G_N_ELEMENTS(bad_lines); i++) {
		char *where = g_strdup_printf("%s:%d: ", path, bad_lines[i]);
		if (!strstr(log, where))
			g_error("no message for %s in log:\n%s", where, log);
		g_free(where);
	}
	for (int good = 1; good <= 11; good += 10) {
		char *where = g_strdup_printf("%s:%d: ", path, good);
		g_assert_null(strstr(log, where));
		g_free(where);
	}
	g_assert_nonnull(strstr(log, "duplicate"));
	g_assert_nonnull(strstr(log, "overlaps"));
	g_free(path);
	g_free(log);
	fabric_unref(f);
	model_builder_free(b);
	rm_rf(dir);
	g_free(dir);
}

/* An LMC change makes CA entries unusable (too narrow), the switch entry still holds. */
static void test_guid2lid_lmc_change(void)
{
	char *dir = make_tmpdir();
	char *g2l = g_strdup_printf("0x%016" PRIx64 " 0x0004 0x0004\n\n"
				    "0x%016" PRIx64 " 0x0005 0x0005\n\n",
				    CA_GUID(0) + 1, SW_GUID);
	write_file(dir, LID_GUID2LID_FILE, g2l);
	g_free(g2l);
	struct model_builder *b = star(1, 0);
	struct fabric *f = freeze(b, 1);
	struct lid_opts o = { .lmc = 2, .cache_dir = dir };
	struct lid_stats st;
	assign_ok(f, &o, &st);
	check_invariants(f, 2);
	g_assert_cmpuint(lid_of(f, SW_GUID), ==, 5);
	g_assert_cmpuint(lid_of(f, CA_GUID(0) + 1), ==, 8); /* 4-7 holds the switch's 5 */
	g_assert_cmpuint(st.guid2lid_ignored, ==, 1);
	fabric_unref(f);
	model_builder_free(b);
	rm_rf(dir);
	g_free(dir);
}

/* The smallest LinearFDBCap bounds the LIDs; a fabric that does not fit fails cleanly. */
static void test_lft_cap(void)
{
	/* cap 16: LIDs 1..15. 14 CAs + 1 switch fit exactly, 15 + 1 do not. */
	struct model_builder *b = star(14, 16);
	struct fabric *f = freeze(b, 1);
	struct lid_opts o = { .lmc = 0 };
	struct lid_stats st;
	assign_ok(f, &o, &st);
	g_assert_cmpuint(st.limit, ==, 15);
	g_assert_cmpuint(st.max_lid, ==, 15);
	check_invariants(f, 0);
	fabric_unref(f);
	model_builder_free(b);

	b = star(15, 16);
	add_switch(b, SW_GUID + 1, 4, 0); /* cap 0 = unknown, does not lower the limit */
	set_lid(b, CA_GUID(3), 1, 7);
	f = freeze(b, 1);
	GError *err = NULL;
	int rc = lid_assign(f, &o, &err);
	g_assert_cmpint(rc, ==, -ENOSPC);
	g_assert_error(err, LID_ERROR, ENOSPC);
	g_assert_nonnull(strstr(err->message, "LinearFDBCap 16"));
	g_assert_nonnull(strstr(err->message, "17 end ports"));
	g_clear_error(&err);
	/* f untouched */
	g_assert_cmpuint(lid_of(f, CA_GUID(3) + 1), ==, 7);
	g_assert_cmpuint(lid_of(f, CA_GUID(4) + 1), ==, 0);
	fabric_unref(f);
	model_builder_free(b);

	/* unknown caps: the unicast range */
	b = star(1, 0);
	f = freeze(b, 1);
	g_assert_cmpuint(lid_highest_usable(f, NULL), ==, 0xBFFF);
	fabric_unref(f);
	model_builder_free(b);
}

/* When kept LIDs fragment the space, the manager falls back to reassigning to fit. */
static void test_fallback(void)
{
	/* cap 16, LMC 2: 3 CAs at 4, 8, 12 plus 3 switches at 1..3 is the only packing */
	struct model_builder *b = model_builder_new();
	uint32_t s[3];
	for (int i = 0; i < 3; i++)
		s[i] = add_switch(b, SW_GUID + (uint64_t)i, 4, 16);
	wire(b, s[0], 4, s[1], 4);
	wire(b, s[1], 3, s[2], 3);
	for (uint32_t i = 0; i < 3; i++)
		wire(b, add_ca(b, CA_GUID(i), 1), 1, s[i], 1);
	set_lid(b, SW_GUID + 1, 0, 6); /* a kept switch LID breaks the 4-7 block */
	struct fabric *f = freeze(b, 1);
	struct lid_opts o = { .lmc = 2 };
	struct lid_stats st;
	assign_ok(f, &o, &st);
	check_invariants(f, 2);
	g_assert_cmpint(st.fallback, ==, 2);
	g_assert_cmpuint(st.max_lid, ==, 15);
	fabric_unref(f);
	model_builder_free(b);

	/* an absent GUID's reservation is dropped before anything present moves */
	char *dir = make_tmpdir();
	write_file(dir, LID_GUID2LID_FILE, "0x0000000000abcdef 0x0002 0x000e\n\n");
	b = star(2, 16);
	set_lid(b, CA_GUID(0), 1, 1);
	f = freeze(b, 1);
	o = (struct lid_opts){ .lmc = 0, .cache_dir = dir };
	assign_ok(f, &o, &st);
	g_assert_cmpint(st.fallback, ==, 1);
	g_assert_cmpuint(lid_of(f, CA_GUID(0) + 1), ==, 1);
	check_invariants(f, 0);
	fabric_unref(f);
	model_builder_free(b);
	rm_rf(dir);
	g_free(dir);
}

/* An unwritable cache dir: an error naming the path and the system error. */
static void test_unwritable(void)
{
	char *dir = make_tmpdir();
	write_file(dir, "file", "not a dir\n");
	char *bad = g_build_filename(dir, "file", "cache", NULL);
	struct model_builder *b = star(2, 0);
	struct fabric *f = freeze(b, 1);
	struct lid_opts o = { .lmc = 0 };
	assign_ok(f, &o, NULL);
	GError *err = NULL;
	int rc = lid_save_guid2lid(f, bad, &err);
	g_assert_cmpint(rc, ==, -ENOTDIR);
	g_assert_nonnull(err);
	g_assert_nonnull(strstr(err->message, bad));
	g_assert_nonnull(strstr(err->message, g_strerror(ENOTDIR)));
	g_clear_error(&err);
	/* NULL cache dir: nothing to do */
	g_assert_cmpint(lid_save_guid2lid(f, NULL, &err), ==, 0);
	fabric_unref(f);
	model_builder_free(b);
	g_free(bad);
	rm_rf(dir);
	g_free(dir);
}

static int count_entries(const char *dir, const char *prefix)
{
	int n = 0;
	GDir *d = g_dir_open(dir, 0, NULL);
	g_assert_nonnull(d);
	const char *name;
	while ((name = g_dir_read_name(d)))
		n += g_str_has_prefix(name, prefix);
	g_dir_close(d);
	return n;
}

/* The write goes through a temp file in the same dir that never outlives the call. */
static void test_atomic_write(void)
{
	char *dir = make_tmpdir();
	char *cache = g_build_filename(dir, "sub", "cache", NULL); /* created on demand */
	struct model_builder *b = star(2, 0);
	struct fabric *f = freeze(b, 1);
	struct lid_opts o = { .lmc = 0 };
	assign_ok(f, &o, NULL);
	GError *err = NULL;
	g_assert_cmpint(lid_save_guid2lid(f, cache, &err), ==, 0);
	g_assert_no_error(err);
	g_assert_cmpint(lid_save_guid2lid(f, cache, &err), ==, 0);
	g_assert_cmpint(count_entries(cache, ""), ==, 1);
	g_assert_cmpint(count_entries(cache, LID_GUID2LID_FILE), ==, 1);
	char *text = read_file(cache, LID_GUID2LID_FILE);
	g_assert_cmpuint(strlen(text), ==, 3 * strlen("0x0000000000000000 0x0000 0x0000\n\n"));
	g_free(text);
	struct stat sb;
	char *path = g_build_filename(cache, LID_GUID2LID_FILE, NULL);
	g_assert_cmpint(stat(path, &sb), ==, 0);
	g_assert_cmpuint(sb.st_mode & 0044, ==, 0044); /* readable like OpenSM's file */

	/* rename fails (the target is a directory): error, and no temp file left behind */
	g_assert_cmpint(g_remove(path), ==, 0);
	g_assert_cmpint(g_mkdir(path, 0755), ==, 0);
	int rc = lid_save_guid2lid(f, cache, &err);
	g_assert_cmpint(rc, <, 0);
	g_assert_nonnull(err);
	g_assert_nonnull(strstr(err->message, path));
	g_clear_error(&err);
	g_assert_cmpint(count_entries(cache, ""), ==, 1);
	g_free(path);
	fabric_unref(f);
	model_builder_free(b);
	rm_rf(dir);
	g_free(cache);
	g_free(dir);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	log_set_quiet(1);
	g_test_add_func("/lid/alignment", test_alignment);
	g_test_add_func("/lid/packing", test_packing);
	g_test_add_func("/lid/esp0", test_esp0);
	g_test_add_func("/lid/preserve", test_preserve);
	g_test_add_func("/lid/invalid_existing", test_invalid_existing);
	g_test_add_func("/lid/guid2lid_roundtrip", test_guid2lid_roundtrip);
	g_test_add_func("/lid/guid2lid_beats_existing", test_guid2lid_beats_existing);
	g_test_add_func("/lid/reassign", test_reassign);
	g_test_add_func("/lid/guid2lid_malformed", test_guid2lid_malformed);
	g_test_add_func("/lid/guid2lid_lmc_change", test_guid2lid_lmc_change);
	g_test_add_func("/lid/lft_cap", test_lft_cap);
	g_test_add_func("/lid/fallback", test_fallback);
	g_test_add_func("/lid/unwritable", test_unwritable);
	g_test_add_func("/lid/atomic_write", test_atomic_write);
	return g_test_run();
}
