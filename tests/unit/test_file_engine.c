/* test_file_engine.c - the file routing engine plugin (OpenSM's -R file) on in-memory fabrics:
 * tables routed by minhop and written by the core's own dump writer (opensm-lfts.dump,
 * opensm-lid-matrix.dump) come back identical; on a changed fabric the file's tables stay
 * (topology changes are ignored, as the NVIDIA SM manual's "File Routing" says), LIDs follow
 * their port GUID, a switch the file does not know is routed min-hop on the LID matrix; a
 * malformed, missing or foreign file is declined naming file:line or the key. Loads the built
 * .so as the core would and reads its result through plugins/file/file.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <gmodule.h>
#include "fabric_fixture.h"
#include "fabric_shapes.h"
#include "fabric/dump.h"
#include "../../plugins/file/file.h"

static const struct ibsm_engine *file_engine, *minhop;
static char *tmpdir;

static const struct file_result *res_of(const struct fx_run *r)
{
	g_assert_nonnull(r->result);
	return r->result;
}

static char *write_text(const char *name, const char *text)
{
	char *path = g_build_filename(tmpdir, name, NULL);
	GError *err = NULL;
	g_assert_true(g_file_set_contents(path, text, -1, &err));
	g_assert_no_error(err);
	return path;
}

/* minhop's tables of f, and its opensm-lfts.dump / opensm-lid-matrix.dump in dir sub. */
static void dump_minhop(const struct fabric *f, const char *sub, struct fx_run *r, char **lfts,
			char **matrix)
{
	struct fx_core c;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(minhop, &c, &f->pub, NULL, r), ==, 0);
	fx_core_clear(&c);
	char *dir = g_build_filename(tmpdir, sub, NULL);
	g_assert_cmpint(g_mkdir_with_parents(dir, 0700), ==, 0);
	GError *err = NULL;
	g_assert_cmpint(dump_lfts(f, r->routes.lft, r->routes.stride, NULL, dir, &err), ==, 0);
	g_assert_no_error(err);
	g_assert_cmpint(dump_lid_matrix(f, NULL, dir, &err), ==, 0);
	g_assert_no_error(err);
	*lfts = g_build_filename(dir, DUMP_LFTS, NULL);
	*matrix = g_build_filename(dir, DUMP_LID_MATRIX, NULL);
	g_free(dir);
}

static void rows_equal(const struct fabric *f, const struct fx_run *a, const struct fx_run *b)
{
	g_assert_cmpuint(a->routes.stride, ==, b->routes.stride);
	size_t n = (size_t)f->pub.n_switches * a->routes.stride;
	g_assert_cmpmem(a->routes.lft, n, b->routes.lft, n);
}

/* Round trip: minhop's tables, dumped, loaded: the same tables, every entry from the file. */
static void test_round_trip(void)
{
	struct fabric *shapes[] = { shape_irregular(20, 2, 20, 1, 0), fx_kary_ntree(4, 2, 1),
				    shape_torus3d(3, 3, 2, 1, 2) };
	for (unsigned i = 0; i < G_N_ELEMENTS(shapes); i++) {
		struct fabric *f = shapes[i];
		struct fx_run m, r;
		char *lfts, *matrix, sub[16];
		snprintf(sub, sizeof(sub), "rt%u", i);
		dump_minhop(f, sub, &m, &lfts, &matrix);
		struct fx_core c;
		fx_core_init(&c);
		fx_core_set(&c, "lfts_file", lfts);
		fx_core_set(&c, "lid_matrix_dump_file", matrix);
		g_assert_cmpint(fx_route(file_engine, &c, &f->pub, NULL, &r), ==, 0);
		rows_equal(f, &m, &r);
		const struct file_result *res = res_of(&r);
		g_assert_cmpuint(res->file_switches, ==, f->pub.n_switches);
		g_assert_cmpuint(res->filled_switches, ==, 0);
		g_assert_cmpuint(res->unknown_switches + res->remapped + res->bad_port + res->beyond,
				 ==, 0);
		g_assert_cmpuint(res->hop_rows, >, 0);
		uint64_t want = 0;
		for (uint32_t s = 0; s < f->pub.n_switches; s++)
			for (uint32_t l = 1; l <= f->pub.max_lid; l++)
				want += fx_run_entry(&m, s, l) != IBSM_NO_PORT;
		g_assert_cmpuint(res->entries, ==, want);
		g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "switch tables taken"), ==, 1);
		fx_check_declared(&c, file_engine);
		fx_run_clear(&r);
		fx_core_clear(&c);

		/* the LID matrix alone: every switch min-hop on its hop counts */
		fx_core_init(&c);
		fx_core_set(&c, "lid_matrix_dump_file", matrix);
		g_assert_cmpint(fx_route(file_engine, &c, &f->pub, NULL, &r), ==, 0);
		struct fx_walk_stats st;
		fx_walk_all(&f->pub, r.routes.lft, r.routes.stride, &st);
		g_assert_cmpuint(st.delivered, ==, st.pairs);
		g_assert_cmpuint(st.longer, ==, 0);
		g_assert_cmpuint(res_of(&r)->filled_switches, ==, f->pub.n_switches);
		g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "(no lfts_file) routed min-hop on "
						"the LID matrix of"), ==, 1);
		fx_run_clear(&r);
		fx_core_clear(&c);
		fx_run_clear(&m);
		g_free(lfts);
		g_free(matrix);
		fabric_unref(f);
	}
}

/* A ring of 6 switches (2 hosts each) with a chord 0-3; variants: without the chord, with a
 * seventh switch (and host) hung off switch 5. GUIDs of the common nodes are the same. */
static struct fabric *ring_variant(int chord, int extra)
{
	struct fx_builder x;
	fx_builder_init(&x);
	uint32_t sw[7];
	for (unsigned i = 0; i < 6; i++) {
		char name[16];
		snprintf(name, sizeof(name), "r%u", i);
		sw[i] = fx_add_switch(&x, 8, name);
	}
	for (unsigned i = 0; i < 6; i++)
		fx_link(&x, sw[i], 2, sw[(i + 1) % 6], 1);
	if (chord)
		fx_link(&x, sw[0], 3, sw[3], 3);
	for (unsigned i = 0; i < 6; i++)
		for (uint8_t h = 0; h < 2; h++)
			fx_link(&x, sw[i], (uint8_t)(5 + h), fx_add_ca(&x, 1, "h"), 1);
	if (extra) {
		sw[6] = fx_add_switch(&x, 8, "r6");
		fx_link(&x, sw[5], 4, sw[6], 1);
		fx_link(&x, sw[6], 5, fx_add_ca(&x, 1, "h6"), 1);
	}
	return fx_finish(&x, 0);
}

/* A changed fabric: the file's tables all the same (a route over the lost chord now ends at
 * a port without a link); new LIDs follow the port GUIDs; a switch the file does not know is
 * routed min-hop; a table of a switch that is gone is skipped. */
static void test_changed_fabric(void)
{
	struct fabric *a = ring_variant(1, 0);
	struct fx_run m, r;
	char *lfts, *matrix;
	dump_minhop(a, "changed", &m, &lfts, &matrix);
	struct fx_core c;

	/* the chord is gone: the same rows; some pairs are no longer delivered */
	struct fabric *b = ring_variant(0, 0);
	g_assert_cmpuint(b->pub.max_lid, ==, a->pub.max_lid);
	fx_core_init(&c);
	fx_core_set(&c, "lfts_file", lfts);
	g_assert_cmpint(fx_route(file_engine, &c, &b->pub, NULL, &r), ==, 0);
	rows_equal(b, &m, &r);
	struct fx_walk_stats st;
	fx_walk_all(&b->pub, r.routes.lft, r.routes.stride, &st);
	g_assert_cmpuint(st.delivered, <, st.pairs);
	g_assert_cmpuint(st.black_holes, >, 0);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "topology changes since the file was "
					"written are not followed"), ==, 1);
	fx_run_clear(&r);
	fx_core_clear(&c);

	/* a seventh switch: every LID moves (LIDs go by port id), the file's entries follow
	 * their port GUIDs; the new switch is routed min-hop and reaches everyone */
	struct fabric *d = ring_variant(1, 1);
	fx_core_init(&c);
	fx_core_set(&c, "lfts_file", lfts);
	g_assert_cmpint(fx_route(file_engine, &c, &d->pub, NULL, &r), ==, 0);
	const struct file_result *res = res_of(&r);
	g_assert_cmpuint(res->file_switches, ==, 6);
	g_assert_cmpuint(res->filled_switches, ==, 1);
	g_assert_cmpuint(res->remapped, >, 0);
	for (uint32_t s = 0; s < 6; s++) {
		for (uint32_t h = 0; h < 12; h++)
			g_assert_cmpuint(fx_run_entry(&r, s, fx_ca_lid(d, h)), ==,
					 fx_run_entry(&m, s, fx_ca_lid(a, h)));
		for (uint32_t t = 0; t < 6; t++) { /* switch LIDs moved up by one */
			g_assert_cmpuint(fx_switch_lid(d, t), !=, fx_switch_lid(a, t));
			g_assert_cmpuint(fx_run_entry(&r, s, fx_switch_lid(d, t)), ==,
					 fx_run_entry(&m, s, fx_switch_lid(a, t)));
		}
	}
	uint32_t p6 = fx_switch_port(&d->pub, 6, 0);
	for (uint32_t h = 0; h < 12; h++) {
		unsigned hops;
		g_assert_cmpint(fx_walk(&d->pub, r.routes.lft, r.routes.stride, p6, fx_ca_lid(d, h),
					&hops), ==, FX_DELIVERED);
	}
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_INFO, "1 switch without a table in lfts_file "
					"routed min-hop on the fabric's hop counts"), ==, 1);
	fx_run_clear(&r);
	fx_core_clear(&c);

	/* the other way round: the file of the seven, on the six: switch r6's table skipped */
	struct fx_run m7;
	char *lfts7, *matrix7;
	dump_minhop(d, "changed7", &m7, &lfts7, &matrix7);
	fx_core_init(&c);
	fx_core_set(&c, "lfts_file", lfts7);
	g_assert_cmpint(fx_route(file_engine, &c, &a->pub, NULL, &r), ==, 0);
	g_assert_cmpuint(res_of(&r)->unknown_switches, ==, 1);
	g_assert_cmpuint(res_of(&r)->file_switches, ==, 6);
	fx_walk_all(&a->pub, r.routes.lft, r.routes.stride, &st);
	g_assert_cmpuint(st.delivered, ==, st.pairs);
	fx_run_clear(&r);
	fx_core_clear(&c);

	fx_run_clear(&m7);
	g_free(lfts7);
	g_free(matrix7);
	fx_run_clear(&m);
	g_free(lfts);
	g_free(matrix);
	fabric_unref(a);
	fabric_unref(b);
	fabric_unref(d);
}

/* Entries the fabric cannot take: a port beyond the switch's, a LID above the rows; an entry
 * naming a port GUID that now has another LID goes to that LID. */
static void test_entries(void)
{
	struct fabric *f = fx_line(2, 1, 0); /* LIDs: host 0, host 1, switch 0, switch 1 */
	uint16_t h0 = fx_ca_lid(f, 0), h1 = fx_ca_lid(f, 1);
	uint64_t g0 = f->nodes[f->switches[0].node].guid;
	uint64_t pg1 = FX_CA_GUID_BASE + 0x100 + 1; /* host 1's port 1 */
	char text[1024];
	snprintf(text, sizeof(text),
		 "Unicast lids [0-9] of switch Lid 3 guid 0x%016llx ('s0'):\n"
		 "0x%04x 003 # Channel Adapter portguid 0x%016llx: 'h0'\n"
		 "0x0009 002 # Channel Adapter portguid 0x%016llx: 'h1'\n"
		 "0x%04x 077 # port 77: no such port\n"
		 "0x0fff 002 # above the LFT\n"
		 "4 lids dumped\n",
		 (unsigned long long)g0, h0, (unsigned long long)(FX_CA_GUID_BASE + 1),
		 (unsigned long long)pg1, h1);
	char *path = write_text("entries.dump", text);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	fx_core_set(&c, "lfts_file", path);
	g_assert_cmpint(fx_route(file_engine, &c, &f->pub, NULL, &r), ==, 0);
	const struct file_result *res = res_of(&r);
	g_assert_cmpuint(fx_run_entry(&r, 0, h0), ==, 3);
	g_assert_cmpuint(fx_run_entry(&r, 0, h1), ==, 2); /* 0x0009 moved to host 1's LID */
	g_assert_cmpuint(res->entries, ==, 2);
	g_assert_cmpuint(res->remapped, ==, 1);
	g_assert_cmpuint(res->bad_port, ==, 1);
	g_assert_cmpuint(res->beyond, ==, 1);
	g_assert_cmpuint(res->file_switches, ==, 1);
	g_assert_cmpuint(res->filled_switches, ==, 1); /* switch 1 has no table */
	fx_run_clear(&r);
	fx_core_clear(&c);
	g_unlink(path);
	g_free(path);
	fabric_unref(f);
}

/* The LID matrix's hop counts decide the fill: on a ring of 4 switch 0 reaches switch 2 by
 * either side in 2 hops; a matrix saying port 1 takes 5 makes every such route leave by 2. */
static void test_matrix_steers(void)
{
	struct fabric *f = fx_ring(4, 2, 0);
	uint64_t g0 = f->nodes[f->switches[0].node].guid, g2 = f->nodes[f->switches[2].node].guid;
	char text[512];
	snprintf(text, sizeof(text),
		 "Switch: guid 0x%016llx\n"
		 "0x%04x: 02 05 02 ff ff # portguid 0x%016llx\n",
		 (unsigned long long)g0, fx_switch_lid(f, 2), (unsigned long long)g2);
	char *path = write_text("steer.dump", text);
	struct fx_core c;
	struct fx_run r, plain;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(file_engine, &c, &f->pub, NULL, &plain), ==, 0);
	fx_core_set(&c, "lid_matrix_dump_file", path);
	g_assert_cmpint(fx_route(file_engine, &c, &f->pub, NULL, &r), ==, 0);
	unsigned by1 = 0;
	for (uint32_t h = 4; h < 6; h++) { /* hosts of switch 2 */
		g_assert_cmpuint(fx_run_entry(&r, 0, fx_ca_lid(f, h)), ==, 2);
		by1 += fx_run_entry(&plain, 0, fx_ca_lid(f, h)) == 1;
	}
	g_assert_cmpuint(by1, >, 0); /* without the matrix the routes use both sides */
	g_assert_cmpuint(res_of(&r)->hop_rows, ==, 1);
	fx_run_clear(&r);
	fx_run_clear(&plain);
	fx_core_clear(&c);
	g_unlink(path);
	g_free(path);
	fabric_unref(f);
}

/* Declines, each saying why: file:line of a line it cannot read, a multicast dump, a file of
 * another fabric, a missing file (naming the key). */
static void test_declines(void)
{
	struct fabric *f = fx_line(3, 1, 0);
	uint64_t g0 = f->nodes[f->switches[0].node].guid;
	char good_header[128];
	snprintf(good_header, sizeof(good_header),
		 "Unicast lids [0-6] of switch Lid 4 guid 0x%016llx ('s0'):\n", (unsigned long long)g0);
	struct {
		const char *key, *name, *text, *why;
		int rc;
	} cases[] = {
		{ "lfts_file", "badguid.dump", "# x\n\nUnicast lids [0-6] of switch Lid 4 guid 0xZZ:\n",
		  "badguid.dump:3: no switch GUID", -EINVAL },
		{ "lfts_file", "badlid.dump", NULL, "badlid.dump:2: cannot read the LID", -EINVAL },
		{ "lfts_file", "badport.dump", NULL, "badport.dump:3: cannot read the port", -EINVAL },
		{ "lfts_file", "mc.dump", "Multicast mlids [0xc000-0xc001] of switch Lid 4 guid 0x1:\n",
		  "mc.dump:1: a multicast dump", -EINVAL },
		{ "lfts_file", "other.dump",
		  "Unicast lids [0-6] of switch Lid 4 guid 0x0000000000000099 ('x'):\n0x0001 001 # a\n",
		  "has no table of a switch of this fabric", -ENOENT },
		{ "lid_matrix_dump_file", "badhops.dump", "Switch: guid 0x1\n0x0004: 00 01 zz\n",
		  "badhops.dump:2: cannot read a hop count", -EINVAL },
		{ "lfts_file", NULL, NULL, "lfts_file /nonexistent/lfts.dump", -ENOENT },
	};
	for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
		char *path, text[512];
		if (!cases[i].name) {
			path = g_strdup("/nonexistent/lfts.dump");
		} else if (cases[i].text) {
			path = write_text(cases[i].name, cases[i].text);
		} else if (strstr(cases[i].name, "badlid")) {
			snprintf(text, sizeof(text), "%s0xgg 001 # x\n", good_header);
			path = write_text(cases[i].name, text);
		} else {
			snprintf(text, sizeof(text), "%s0x0001 001 # fine\n0x0002 0x2 # hex\n",
				 good_header);
			path = write_text(cases[i].name, text);
		}
		struct fx_core c;
		struct fx_run r;
		fx_core_init(&c);
		fx_core_set(&c, cases[i].key, path);
		g_assert_cmpint(fx_route(file_engine, &c, &f->pub, NULL, &r), ==, cases[i].rc);
		g_assert_null(r.result);
		if (!strstr(r.routes.why, cases[i].why))
			g_error("case %u: why '%s' lacks '%s'", i, r.routes.why, cases[i].why);
		g_assert_nonnull(strstr(r.routes.why, cases[i].key));
		g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, cases[i].why), ==, 1);
		fx_run_clear(&r);
		fx_core_clear(&c);
		if (cases[i].name)
			g_unlink(path);
		g_free(path);
	}
	fabric_unref(f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	GModule *m1 = NULL, *m2 = NULL;
	file_engine = fx_engine_open(TEST_PLUGIN_DIR "/file.so", &m1);
	minhop = fx_engine_open(TEST_PLUGIN_DIR "/minhop.so", &m2);
	GError *err = NULL;
	tmpdir = g_dir_make_tmp("file-engine-XXXXXX", &err);
	g_assert_no_error(err);
	if (file_engine && minhop) {
		g_test_add_func("/file/round-trip", test_round_trip);
		g_test_add_func("/file/changed-fabric", test_changed_fabric);
		g_test_add_func("/file/entries", test_entries);
		g_test_add_func("/file/matrix-steers", test_matrix_steers);
		g_test_add_func("/file/declines", test_declines);
	}
	int rc = g_test_run();
	char *cmd = g_strdup_printf("rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		rc = 1;
	g_free(cmd);
	g_free(tmpdir);
	if (m1)
		g_module_close(m1);
	if (m2)
		g_module_close(m2);
	return rc;
}
