/* test_guid2mkey.c - OpenSM's m_key_lookup: the guid2mkey file (OpenSM's format, read with
 * FILE:LINE for a bad line, written back mode 0600) and its use, judged against fake SMAs that
 * enforce M_Key: ports an earlier SM keyed at ProtectBits 3 (unknown keys, no lease) cannot be
 * reached without the file; with it every SMP presents the key the file names, not one is
 * refused, every port ends with the key this configuration derives, and the file then holds
 * those keys. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <infiniband/mad.h>
#include "fabric_fixture.h"
#include "fake_sma.h"
#include "mad/guid2mkey.h"
#include "mad/mkey_derive.h"

#define TIMEOUT_MS 20
#define SECRET 0x5ec7e75ec7e75ec7ULL
#define OLD(guid) (0xa0a0000000000000ULL | (guid))   /* keys an earlier SM gave */

static char *write_tmp(const char *dir, const char *text)
{
	char *path = g_build_filename(dir, GUID2MKEY_FILE, NULL);
	g_assert_true(g_file_set_contents(path, text, -1, NULL));
	return path;
}

static void test_file(void)
{
	char *dir = g_dir_make_tmp("g2m-XXXXXX", NULL);
	char *path = write_tmp(dir, "0x0000000000100001 0x1234567890abcdef\n\n"
				    "# a comment\n"
				    "0x0000000000100004 0x0000000000000000\n"
				    "0x0000000000100005\n"           /* no key: skipped */
				    "zz 0x1\n"
				    "0x0000000000100006 0x0000000000000007 junk\n");
	struct guid2mkey *m = guid2mkey_load(path);
	uint64_t k = 99;
	g_assert_cmpuint(guid2mkey_size(m), ==, 2);
	g_assert_true(guid2mkey_get(m, 0x100001, &k));
	g_assert_cmphex(k, ==, 0x1234567890abcdefULL);
	g_assert_true(guid2mkey_get(m, 0x100004, &k));
	g_assert_cmphex(k, ==, 0);
	g_assert_false(guid2mkey_get(m, 0x100005, &k));
	g_assert_false(guid2mkey_get(m, 0x100006, &k));
	g_assert_true(guid2mkey_any(m));
	/* unchanged: not written */
	g_assert_cmpint(unlink(path), ==, 0);
	g_assert_cmpint(guid2mkey_save(m), ==, 0);
	g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
	guid2mkey_set(m, 0x100004, 0x42);
	guid2mkey_set(m, 0x100002, 0x43);
	g_assert_cmpint(guid2mkey_save(m), ==, 0);
	char *text = NULL;
	g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
	g_assert_cmpstr(text, ==, "0x0000000000100001 0x1234567890abcdef\n\n"
				  "0x0000000000100002 0x0000000000000043\n\n"
				  "0x0000000000100004 0x0000000000000042\n\n");
	struct stat st;
	g_assert_cmpint(stat(path, &st), ==, 0);
	g_assert_cmpuint(st.st_mode & 0777, ==, 0600);
	/* the neighbors file beside it, OpenSM's layout */
	uint64_t peer = 0;
	guid2mkey_set_neighbor(m, 0x200000, 3, 0x100001, 1);
	guid2mkey_set_neighbor(m, 0x100001, 1, 0x200000, 3);
	g_assert_cmpint(guid2mkey_save(m), ==, 0);
	char *npath = g_build_filename(dir, GUID2MKEY_NEIGHBORS_FILE, NULL), *ntext = NULL;
	g_assert_true(g_file_get_contents(npath, &ntext, NULL, NULL));
	g_assert_cmpstr(ntext, ==, "0x0000000000100001:1 0x0000000000200000:3\n\n"
				   "0x0000000000200000:3 0x0000000000100001:1\n\n");
	g_free(ntext);
	/* lines in the order of their text (port 10 before port 2), the same link again no
	 * change, a port's link moved replaces its line */
	static const unsigned ports[] = { 2, 10, 255, 100, 9, 1, 19 };
	for (unsigned i = 0; i < G_N_ELEMENTS(ports); i++)
		guid2mkey_set_neighbor(m, 0xabcdef0000000001ull, (uint8_t)ports[i], 0x300000, (uint8_t)(i + 1));
	guid2mkey_set_neighbor(m, 0xabcdef0000000001ull, 19, 0x300000, 7);
	guid2mkey_set_neighbor(m, 0x200000, 3, 0x100001, 2);
	g_assert_cmpint(guid2mkey_save(m), ==, 0);
	g_assert_true(g_file_get_contents(npath, &ntext, NULL, NULL));
	g_assert_cmpstr(ntext, ==, "0x0000000000100001:1 0x0000000000200000:3\n\n"
				   "0x0000000000200000:3 0x0000000000100001:2\n\n"
				   "0xabcdef0000000001:1 0x0000000000300000:6\n\n"
				   "0xabcdef0000000001:10 0x0000000000300000:2\n\n"
				   "0xabcdef0000000001:100 0x0000000000300000:4\n\n"
				   "0xabcdef0000000001:19 0x0000000000300000:7\n\n"
				   "0xabcdef0000000001:2 0x0000000000300000:1\n\n"
				   "0xabcdef0000000001:255 0x0000000000300000:3\n\n"
				   "0xabcdef0000000001:9 0x0000000000300000:5\n\n");
	guid2mkey_set_neighbor(m, 0x200000, 3, 0x100001, 1);
	g_assert_cmpint(guid2mkey_save(m), ==, 0);
	guid2mkey_free(m);
	m = guid2mkey_load(path);
	g_assert_true(guid2mkey_get(m, 0x100002, &k));
	g_assert_cmphex(k, ==, 0x43);
	g_assert_true(guid2mkey_neighbor(m, 0x200000, 3, &peer));
	g_assert_cmphex(peer, ==, 0x100001);
	g_assert_false(guid2mkey_neighbor(m, 0x200000, 4, &peer));
	guid2mkey_free(m);
	unlink(npath);
	g_free(npath);
	g_free(ntext);
	/* missing file: empty, nothing to present */
	unlink(path);
	m = guid2mkey_load(path);
	g_assert_cmpuint(guid2mkey_size(m), ==, 0);
	g_assert_false(guid2mkey_any(m));
	guid2mkey_free(m);
	g_free(text);
	g_free(path);
	g_rmdir(dir);
	g_free(dir);
}

static int mgmt_port(const struct fabric *f, uint32_t p)
{
	const struct ibsm_port *port = &f->ports[p];
	return f->nodes[port->node].type == IBSM_SWITCH ? port->num == 0 :
	       port->num != 0 && (port->flags & IBSM_PORT_PRESENT);
}

static uint32_t violations(const struct fsma_bed *b)
{
	uint32_t total = 0;
	for (uint32_t p = 0; p < b->shape->pub.n_ports; p++) {
		uint64_t key;
		uint8_t protect;
		uint16_t lease;
		uint32_t viol;
		fsma_port_mkey(b->fk, p, &key, &protect, &lease, &viol);
		total += viol;
	}
	return total;
}

static uint64_t gp_guid(const struct fabric *f, uint32_t p)
{
	const struct ibsm_node *n = &f->nodes[f->ports[p].node];
	return n->type == IBSM_SWITCH ? f->ports[n->port0].guid : f->ports[p].guid;
}

/* OpenSM's neighbors file of the fabric: "0xGUID:PORT 0xGUID:PORT" for both ends of each link. */
static char *neighbors_text(const struct fabric *f)
{
	GString *s = g_string_new(NULL);
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		if (f->ports[p].peer != IBSM_NONE)
			g_string_append_printf(s, "0x%016" G_GINT64_MODIFIER "x:%u 0x%016" G_GINT64_MODIFIER "x:%u\n\n",
					       (guint64)gp_guid(f, p), f->ports[p].num,
					       (guint64)gp_guid(f, f->ports[p].peer), f->ports[f->ports[p].peer].num);
	return g_string_free(s, FALSE);
}

/* A fabric every management port of which (the SM's own aside) an earlier SM keyed with
 * OLD(guid), ProtectBits 3, no lease; and the guid2mkey text naming those keys. */
static GString *bed_keyed(struct fsma_bed *b, const struct mkey_cfg *c)
{
	struct fabric *shape = fx_line(3, 2, 0);
	uint32_t sm_port = fx_ca_port(&shape->pub, 0, 1);
	fsma_bed_init(b, shape, sm_port, TIMEOUT_MS);
	transport_set_mkey(b->t, c);
	GString *g2m = g_string_new(NULL);
	for (uint32_t p = 0; p < b->shape->pub.n_ports; p++) {
		if (!mgmt_port(b->shape, p) || p == sm_port)
			continue;
		uint64_t guid = b->shape->ports[p].guid;
		fsma_port_set_mkey(b->fk, p, OLD(guid), 3, 0);
		g_string_append_printf(g2m, "0x%016" G_GINT64_MODIFIER "x 0x%016" G_GINT64_MODIFIER "x\n\n",
				       (guint64)guid, (guint64)OLD(guid));
	}
	return g2m;
}

/* Without guid2mkey (m_key_lookup FALSE): the keyed ports drop every SMP. */
static void test_without_lookup(void)
{
	struct mkey_cfg c = { .secret = SECRET, .protect = 2, .per_port = 1 };
	struct fsma_bed b;
	GString *g2m = bed_keyed(&b, &c);
	struct discovery_stats st;
	GError *err = NULL;
	struct fabric *f = discover_fabric(b.t, &b.stop, 1, NULL, 0, &st, &err);
	g_assert_true(!f || f->pub.n_nodes < b.shape->pub.n_nodes || st.failures > 0);
	g_assert_cmpuint(violations(&b), >, 0);
	fabric_unref(f);
	g_clear_error(&err);
	g_string_free(g2m, TRUE);
	fsma_bed_clear(&b);
}

/* With it: discovered and programmed without one refused SMP; every port then holds the key
 * derived from SECRET, and guid2mkey (in memory and as written) names those keys. */
static void test_with_lookup(void)
{
	struct mkey_cfg c = { .secret = SECRET, .protect = 2, .per_port = 1 };
	struct fsma_bed b;
	GString *text = bed_keyed(&b, &c);
	char *dir = g_dir_make_tmp("g2m-XXXXXX", NULL);
	char *path = write_tmp(dir, text->str);
	char *npath = g_build_filename(dir, GUID2MKEY_NEIGHBORS_FILE, NULL), *ntext = neighbors_text(b.shape);
	g_assert_true(g_file_set_contents(npath, ntext, -1, NULL));
	struct guid2mkey *m = guid2mkey_load(path);
	c.lookup = m;
	transport_set_mkey(b.t, &c);
	fsma_bed_discover(&b);
	struct program_report rep;
	g_assert_cmpint(fsma_bed_program(&b, NULL, 1, &rep), ==, 0);
	g_assert_cmpuint(rep.failures, ==, 0);
	g_assert_cmpuint(violations(&b), ==, 0);
	uint32_t n = 0;
	for (uint32_t p = 0; p < b.shape->pub.n_ports; p++) {
		if (!mgmt_port(b.shape, p))
			continue;
		uint64_t guid = b.shape->ports[p].guid, key, in_file = 0;
		uint8_t protect;
		uint16_t lease;
		uint32_t viol;
		fsma_port_mkey(b.fk, p, &key, &protect, &lease, &viol);
		g_assert_cmphex(key, ==, mkey_for_guid(&c, guid));
		g_assert_cmpuint(protect, ==, 2);
		g_assert_true(guid2mkey_get(m, guid, &in_file));
		g_assert_cmphex(in_file, ==, key);
		n++;
	}
	g_assert_cmpuint(n, ==, 9); /* 3 switch ports 0, 6 CA ports */
	g_assert_cmpint(guid2mkey_save(m), ==, 0);
	struct guid2mkey *back = guid2mkey_load(path);
	uint64_t k = 0, guid = b.shape->ports[fx_ca_port(&b.shape->pub, 2, 1)].guid;
	g_assert_true(guid2mkey_get(back, guid, &k));
	g_assert_cmphex(k, ==, mkey_for_guid(&c, guid));
	guid2mkey_free(back);
	/* the next sweep presents the new keys: nothing refused, nothing written */
	uint32_t mark = fsma_nrec(b.fk);
	fsma_bed_discover(&b);
	g_assert_cmpint(fsma_bed_program(&b, NULL, 0, &rep), ==, 0);
	g_assert_cmpuint(violations(&b), ==, 0);
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_SET, IB_ATTR_PORT_INFO, FSMA_ANY), ==, 0);
	fsma_bed_clear(&b);
	guid2mkey_free(m);
	unlink(path);
	unlink(npath);
	g_rmdir(dir);
	g_free(npath);
	g_free(ntext);
	g_free(path);
	g_free(dir);
	g_string_free(text, TRUE);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/guid2mkey/file", test_file);
	g_test_add_func("/guid2mkey/without_lookup", test_without_lookup);
	g_test_add_func("/guid2mkey/with_lookup", test_with_lookup);
	return g_test_run();
}
