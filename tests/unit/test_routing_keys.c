/* test_routing_keys.c - OpenSM 3.3.23's routing inputs as the min-hop engines (minhop, dor)
 * and updn take them: guid_routing_order_file (and its bad lines), port_shifting,
 * scatter_ports with guid_routing_order_no_scatter, hop_weights_file, ids_guid_file; each seen in the LFTs
 * the built engine writes. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include <gmodule.h>
#include "fabric_fixture.h"

static const struct ibsm_engine *minhop, *dor, *updn;

static char *write_temp(const char *text)
{
	GError *err = NULL;
	char *path = NULL;
	int fd = g_file_open_tmp("routing-keys-XXXXXX", &path, &err);
	g_assert_no_error(err);
	close(fd);
	g_assert_true(g_file_set_contents(path, text, -1, &err));
	g_assert_no_error(err);
	return path;
}

static uint64_t ca_port_guid(unsigned n)
{
	return FX_CA_GUID_BASE + 0x100ull * n + 1;
}

/* Every pair delivered on a shortest path. */
static void check_delivered(const struct fabric *f, const struct fx_run *r)
{
	struct fx_walk_stats st;
	fx_walk_all(&f->pub, r->routes.lft, r->routes.stride, &st);
	g_assert_cmpuint(st.pairs, >, 0);
	g_assert_cmpuint(st.delivered, ==, st.pairs);
	g_assert_cmpuint(st.longer, ==, 0);
}

/* 2-ary 2-tree: leaf 0 (switch 0) reaches hosts 2 and 3 (on leaf 1) by up ports 3 and 4.
 * In LID order host 2 gets port 3; a file naming host 3 first gives host 3 port 3. */
static void test_order_file(void)
{
	struct fabric *f = fx_kary_ntree(2, 2, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(minhop, &c, &f->pub, NULL, &r), ==, 0);
	g_assert_cmpuint(fx_run_entry(&r, 0, fx_ca_lid(f, 2)), ==, 3);
	g_assert_cmpuint(fx_run_entry(&r, 0, fx_ca_lid(f, 3)), ==, 4);
	fx_run_clear(&r);

	char text[256];
	snprintf(text, sizeof(text), "# routed first\n0x%016llx anything after the GUID\n"
		 "0x%016llx\n0x00000000deadbeef\n", (unsigned long long)ca_port_guid(3),
		 (unsigned long long)ca_port_guid(3));
	char *path = write_temp(text);
	fx_core_set(&c, "guid_routing_order_file", path);
	g_assert_cmpint(fx_route(minhop, &c, &f->pub, NULL, &r), ==, 0);
	g_assert_cmpuint(fx_run_entry(&r, 0, fx_ca_lid(f, 3)), ==, 3);
	g_assert_cmpuint(fx_run_entry(&r, 0, fx_ca_lid(f, 2)), ==, 4);
	check_delivered(f, &r);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, ""), ==, 0);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_VERBOSE, "1 of 3 GUIDs routed first"), ==, 1);
	fx_run_clear(&r);
	/* dor takes the same order (a 2-ary 2-tree is no mesh for it: use a line) */
	fx_check_declared(&c, minhop);
	g_assert_nonnull(fx_engine_key(minhop, "guid_routing_order_file"));
	g_assert_nonnull(fx_engine_key(dor, "guid_routing_order_file"));
	unlink(path);
	g_free(path);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* A bad line fails the route with the file and line named; the rows stay unwritten. */
static void test_order_file_bad(void)
{
	struct fabric *f = fx_kary_ntree(2, 2, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	char *path = write_temp("0x1\nnot-a-guid\n");
	fx_core_set(&c, "guid_routing_order_file", path);
	g_assert_cmpint(fx_route(minhop, &c, &f->pub, NULL, &r), ==, -EINVAL);
	g_assert_nonnull(strstr(r.routes.why, "guid_routing_order_file"));
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, ":2: "), ==, 1);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, "routing refused"), ==, 1);
	g_assert_null(r.result);
	fx_run_clear(&r);
	fx_core_set(&c, "guid_routing_order_file", "/nonexistent/order");
	g_assert_cmpint(fx_route(minhop, &c, &f->pub, NULL, &r), <, 0);
	g_assert_nonnull(strstr(r.routes.why, "/nonexistent/order"));
	fx_run_clear(&r);
	unlink(path);
	g_free(path);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* 4-ary 2-tree: leaf 0's up ports are 5-8; hosts 4-7 (leaf 1) take them in turn. Host 8 (leaf
 * 2) finds all four at one route: least port 5, but with port_shifting the search starts at
 * (4 routes / 4 ports) % 4 = 1, so port 6. */
static void test_port_shifting(void)
{
	struct fabric *f = fx_kary_ntree(4, 2, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(minhop, &c, &f->pub, NULL, &r), ==, 0);
	g_assert_cmpuint(fx_run_entry(&r, 0, fx_ca_lid(f, 8)), ==, 5);
	fx_run_clear(&r);
	fx_core_set(&c, "port_shifting", "TRUE");
	g_assert_cmpint(fx_route(minhop, &c, &f->pub, NULL, &r), ==, 0);
	for (unsigned h = 4; h < 8; h++)
		g_assert_cmpuint(fx_run_entry(&r, 0, fx_ca_lid(f, h)), ==, 5 + (h - 4));
	g_assert_cmpuint(fx_run_entry(&r, 0, fx_ca_lid(f, 8)), ==, 6);
	check_delivered(f, &r);
	fx_run_clear(&r);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* CA entries of every switch row (switch LIDs left out: they count apart). */
static GByteArray *ca_entries(const struct fabric *f, const struct fx_run *r)
{
	GByteArray *a = g_byte_array_new();
	for (uint32_t s = 0; s < f->pub.n_switches; s++)
		for (unsigned h = 0; h < 16; h++) {
			uint8_t p = fx_run_entry(r, s, fx_ca_lid(f, h));
			g_byte_array_append(a, &p, 1);
		}
	return a;
}

static GByteArray *route_ca_entries(struct fx_core *c, const struct fabric *f)
{
	struct fx_run r;
	g_assert_cmpint(fx_route(minhop, c, &f->pub, NULL, &r), ==, 0);
	check_delivered(f, &r);
	GByteArray *a = ca_entries(f, &r);
	fx_run_clear(&r);
	return a;
}

static int same(const GByteArray *a, const GByteArray *b)
{
	return a->len == b->len && !memcmp(a->data, b->data, a->len);
}

/* scatter_ports: the same tables for one seed, others without it or with another seed; the
 * ports guid_routing_order_file lists are not scattered under guid_routing_order_no_scatter. */
static void test_scatter_ports(void)
{
	struct fabric *f = fx_kary_ntree(4, 2, 0);
	struct fx_core c;
	fx_core_init(&c);
	GByteArray *plain = route_ca_entries(&c, f);
	fx_core_set(&c, "scatter_ports", "7");
	GByteArray *s7 = route_ca_entries(&c, f), *s7b = route_ca_entries(&c, f);
	fx_core_set(&c, "minhop_threads", "2");
	GByteArray *s7t = route_ca_entries(&c, f);
	fx_core_set(&c, "scatter_ports", "8");
	GByteArray *s8 = route_ca_entries(&c, f);
	g_assert_true(same(s7, s7b));
	g_assert_true(same(s7, s7t));
	g_assert_false(same(s7, plain));
	g_assert_false(same(s7, s8));

	/* every CA port listed, not scattered: as the file alone gives */
	GString *text = g_string_new(NULL);
	for (unsigned h = 0; h < 16; h++)
		g_string_append_printf(text, "0x%016llx\n", (unsigned long long)ca_port_guid(h));
	char *path = write_temp(text->str);
	fx_core_set(&c, "guid_routing_order_file", path);
	fx_core_set(&c, "scatter_ports", "0");
	GByteArray *listed = route_ca_entries(&c, f);
	fx_core_set(&c, "scatter_ports", "7");
	GByteArray *listed7 = route_ca_entries(&c, f);
	fx_core_set(&c, "guid_routing_order_no_scatter", "TRUE");
	GByteArray *listed7ns = route_ca_entries(&c, f);
	g_assert_false(same(listed7, listed));
	g_assert_true(same(listed7ns, listed));
	GByteArray *all[] = { plain, s7, s7b, s7t, s8, listed, listed7, listed7ns };
	for (unsigned i = 0; i < G_N_ELEMENTS(all); i++)
		g_byte_array_unref(all[i]);
	g_string_free(text, TRUE);
	unlink(path);
	g_free(path);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* dor (a line of 3 switches is a 1-D mesh) declares and honours the order file too: the
 * end switch's two hosts share one link, so the order only shows in a file that is read. */
static void test_dor_keys(void)
{
	struct fabric *f = fx_line(3, 2, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	char *path = write_temp("zzz\n");
	fx_core_set(&c, "guid_routing_order_file", path);
	g_assert_cmpint(fx_route(dor, &c, &f->pub, NULL, &r), <, 0);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, ":1: "), ==, 1);
	fx_run_clear(&r);
	g_assert_nonnull(fx_engine_key(dor, "port_shifting"));
	g_assert_nonnull(fx_engine_key(dor, "scatter_ports"));
	unlink(path);
	g_free(path);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* hop_weights_file: leaf 0's up port 3 weighing 5 makes port 4 the only least-weight way up,
 * so hosts 2 and 3 both leave by it; a bad weight fails the route. */
static void test_hop_weights(void)
{
	struct fabric *f = fx_kary_ntree(2, 2, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	char text[128];
	snprintf(text, sizeof(text), "# leaf 0, port 3\n0x%016llx 3 5\n",
		 (unsigned long long)FX_SWITCH_GUID_BASE);
	char *path = write_temp(text);
	fx_core_set(&c, "hop_weights_file", path);
	g_assert_cmpint(fx_route(minhop, &c, &f->pub, NULL, &r), ==, 0);
	g_assert_cmpuint(fx_run_entry(&r, 0, fx_ca_lid(f, 2)), ==, 4);
	g_assert_cmpuint(fx_run_entry(&r, 0, fx_ca_lid(f, 3)), ==, 4);
	/* every pair delivered, no loop (spine 1's own LID is now reached the long way round) */
	struct fx_walk_stats st;
	fx_walk_all(&f->pub, r.routes.lft, r.routes.stride, &st);
	g_assert_cmpuint(st.delivered, ==, st.pairs);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_VERBOSE, "1 switch ports weighted"), ==, 1);
	fx_run_clear(&r);
	fx_check_declared(&c, minhop);
	g_assert_true(g_file_set_contents(path, "0x1 3 0\n", -1, NULL));
	g_assert_cmpint(fx_route(minhop, &c, &f->pub, NULL, &r), ==, -EINVAL);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, ":1: expected a weight"), ==, 1);
	fx_run_clear(&r);
	unlink(path);
	g_free(path);
	fx_core_clear(&c);
	fabric_unref(f);
}

/* updn on a ring of 5 rooted at switch 0: switches 2 and 3 share rank 2 and a link. By GUID
 * switch 2 is the higher, so 2 -> 3 is a down step and 2 -> 3 -> 4 would go up after it: switch
 * 2 reaches switch 4's host the long way, by switch 1 (port 1). With ids_guid_file giving
 * switch 3 the lower ID, 2 -> 3 is up and the short way (port 2) is taken. */
static void test_ids_guid_file(void)
{
	struct fabric *f = fx_ring(5, 1, 0);
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	char roots[64], ids[128];
	snprintf(roots, sizeof(roots), "0x%016llx\n", (unsigned long long)FX_SWITCH_GUID_BASE);
	char *rpath = write_temp(roots);
	fx_core_set(&c, "root_guid_file", rpath);
	g_assert_cmpint(fx_route(updn, &c, &f->pub, NULL, &r), ==, 0);
	g_assert_cmpuint(fx_run_entry(&r, 2, fx_ca_lid(f, 4)), ==, 1);
	fx_run_clear(&r);
	snprintf(ids, sizeof(ids), "# switch ids\n0x%016llx 20\n0x%016llx 10 # lower: up\n",
		 (unsigned long long)FX_SWITCH_GUID_BASE + 2, (unsigned long long)FX_SWITCH_GUID_BASE + 3);
	char *ipath = write_temp(ids);
	fx_core_set(&c, "ids_guid_file", ipath);
	g_assert_cmpint(fx_route(updn, &c, &f->pub, NULL, &r), ==, 0);
	g_assert_cmpuint(fx_run_entry(&r, 2, fx_ca_lid(f, 4)), ==, 2);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_VERBOSE, "2 switches ordered by their ID"), ==, 1);
	fx_run_clear(&r);
	fx_check_declared(&c, updn);
	/* a bad line: the route fails, FILE:LINE logged */
	g_assert_true(g_file_set_contents(ipath, "0x1 10\n0x2 ten\n", -1, NULL));
	g_assert_cmpint(fx_route(updn, &c, &f->pub, NULL, &r), ==, -EINVAL);
	g_assert_cmpuint(fx_core_logged(&c, IBSM_LOG_ERROR, ":2: the ID is not a number"), ==, 1);
	g_assert_nonnull(strstr(r.routes.why, "ids_guid_file"));
	fx_run_clear(&r);
	unlink(rpath);
	unlink(ipath);
	g_free(rpath);
	g_free(ipath);
	fx_core_clear(&c);
	fabric_unref(f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	GModule *m1 = NULL, *m2 = NULL, *m3 = NULL;
	minhop = fx_engine_open(TEST_PLUGIN_DIR "/minhop.so", &m1);
	dor = fx_engine_open(TEST_PLUGIN_DIR "/dor.so", &m2);
	updn = fx_engine_open(TEST_PLUGIN_DIR "/updn.so", &m3);
	if (minhop && dor) {
		g_test_add_func("/routing-keys/order-file", test_order_file);
		g_test_add_func("/routing-keys/order-file-bad", test_order_file_bad);
		g_test_add_func("/routing-keys/port-shifting", test_port_shifting);
		g_test_add_func("/routing-keys/scatter-ports", test_scatter_ports);
		g_test_add_func("/routing-keys/dor-keys", test_dor_keys);
		g_test_add_func("/routing-keys/hop-weights", test_hop_weights);
	}
	if (updn)
		g_test_add_func("/routing-keys/ids-guid-file", test_ids_guid_file);
	int rc = g_test_run();
	if (m1)
		g_module_close(m1);
	if (m2)
		g_module_close(m2);
	if (m3)
		g_module_close(m3);
	return rc;
}
