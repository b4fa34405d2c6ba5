/* test_report.c - the fabric report (core/ops/report.h) on the fixture's fabrics with tables
 * whose answers are known: link loads equal the fixture's own count (fx_switch_link_load),
 * shift permutations counted by hand on two switches, a broken entry counted as undelivered,
 * the credit-loop check (none on a fat tree, a loop on a ring routed shortest-way), the layout
 * (tiers for a fat tree, a grid of the right size for 2D and 3D tori, tiers for an irregular
 * graph), and the document: one element per switch and per link, the quality numbers, escaped
 * names, a summary on a big fabric, partitions, the atomic file write. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include "fabric_fixture.h"
#include "fabric_shapes.h"
#include "ops/report.h"
#include "policy/partitions.h"
#include "sa/mcast_groups.h"

/* Shortest-path tables: toward the first neighbour (lowest adjacency) one hop closer. */
static struct routing_result *shortest_routes(struct fabric *f)
{
	struct routing_result *r = routing_result_new(f);
	uint8_t *hops = fx_switch_hops_all(&f->pub);
	uint32_t S = f->pub.n_switches;
	for (uint32_t lid = 1; lid <= f->pub.max_lid; lid++) {
		uint32_t dp = f->lid_port[lid];
		if (dp == IBSM_NONE)
			continue;
		uint32_t dsw = ibsm_port_switch(&f->pub, dp);
		if (dsw == IBSM_NONE)
			continue;
		for (uint32_t s = 0; s < S; s++) {
			uint8_t out = IBSM_NO_PORT;
			if (s == dsw)
				out = f->nodes[f->ports[dp].node].type == IBSM_SWITCH ? 0 : f->ports[f->ports[dp].peer].num;
			else
				for (uint32_t a = f->switches[s].adj0; a < f->switches[s].adj0 + f->switches[s].nadj; a++)
					if (hops[(size_t)f->adj[a].peer_sw * S + dsw] + 1 == hops[(size_t)s * S + dsw]) {
						out = f->adj[a].port;
						break;
					}
			r->lft[(size_t)s * r->stride + lid] = out;
		}
	}
	g_free(hops);
	g_strlcpy(r->engine, "test-shortest", sizeof(r->engine));
	return r;
}

static unsigned count(const char *hay, const char *needle)
{
	unsigned n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* The text of the element with id="ID" (up to the next '<'). */
static char *value_of(const char *html, const char *id)
{
	char *key = g_strdup_printf("id=\"%s\"", id);
	const char *p = strstr(html, key);
	g_free(key);
	if (!p)
		return NULL;
	p = strchr(p, '>');
	g_assert_nonnull(p);
	const char *e = strchr(p + 1, '<');
	return g_strndup(p + 1, (gsize)(e - p - 1));
}

static void test_load_matches_fixture(void)
{
	struct fabric *shapes[] = { fx_kary_ntree(4, 2, 0), fx_torus2d(4, 3, 2, 0),
				    shape_irregular(12, 3, 6, 7, 0), fx_line(4, 3, 1), fx_kary_ntree(4, 3, 0) };
	for (unsigned i = 0; i < G_N_ELEMENTS(shapes); i++) {
		struct fabric *f = shapes[i];
		struct routing_result *r = shortest_routes(f);
		uint32_t *mine = g_new0(uint32_t, f->pub.n_ports), *theirs = g_new0(uint32_t, f->pub.n_ports);
		struct report_quality q;
		report_quality(r, mine, &q);
		uint32_t max = 0;
		double ratio = fx_switch_link_load(&f->pub, r->lft, r->stride, theirs, &max);
		g_assert_cmpmem(mine, f->pub.n_ports * sizeof(uint32_t), theirs, f->pub.n_ports * sizeof(uint32_t));
		g_assert_cmpuint(q.max_load, ==, max);
		g_assert_cmpuint(q.max_load, >, 0);
		g_assert_cmpfloat_with_epsilon(q.max_load / q.mean_load, ratio, 1e-9);
		g_assert_cmpuint(q.links, ==, f->pub.n_adj);
		g_assert_cmpuint(q.unrouted, ==, 0);
		g_assert_cmpuint(q.routes, ==, (uint64_t)q.ca_ports * (q.ca_ports - 1));
		g_assert_cmpuint(q.shifts, ==, MIN(REPORT_SHIFTS, q.ca_ports - 1));
		g_assert_cmpuint(q.worst_shift_load, >=, 1);
		g_assert_cmpuint(q.shift_k[0], ==, 1);
		g_assert_cmpuint(q.shift_k[q.shifts - 1], ==, q.ca_ports - 1);
		for (uint32_t j = 1; j < q.shifts; j++)
			g_assert_cmpuint(q.shift_k[j], >, q.shift_k[j - 1]);
		g_assert_cmpuint(q.worst_shift_load, <=, q.max_load);
		g_free(mine);
		g_free(theirs);
		routing_result_unref(r);
		fabric_unref(f);
	}
}

/* Two switches, two hosts each: hosts 0,1 on switch 0, 2,3 on switch 1. Shift 1: 1->2 and
 * 3->0 cross, one route per direction; shift 2: every route crosses, two per direction;
 * shift 3: 0->3 and 2->1, one each. */
static void test_shifts_by_hand(void)
{
	struct fabric *f = fx_line(2, 2, 0);
	struct routing_result *r = shortest_routes(f);
	struct report_quality q;
	report_quality(r, NULL, &q);
	g_assert_cmpuint(q.ca_ports, ==, 4);
	g_assert_cmpuint(q.shifts, ==, 3);
	g_assert_cmpuint(q.worst_shift, ==, 2);
	g_assert_cmpuint(q.worst_shift_load, ==, 2);
	const uint32_t ks[] = { 1, 2, 3 }, loads[] = { 1, 2, 1 };
	g_assert_cmpmem(q.shift_k, sizeof(ks), ks, sizeof(ks));
	g_assert_cmpmem(q.shift_load, sizeof(loads), loads, sizeof(loads));
	/* all pairs: 2 x 2 routes cross each way */
	g_assert_cmpuint(q.max_load, ==, 4);
	g_assert_cmpfloat_with_epsilon(q.mean_load, 4.0, 1e-9);
	/* a hole: switch 0 has no entry for host 2's LID: the 2 routes from switch 0 to it */
	uint16_t lid = fx_ca_lid(f, 2);
	r->lft[lid] = IBSM_NO_PORT;
	report_quality(r, NULL, &q);
	g_assert_cmpuint(q.unrouted, ==, 2);
	g_assert_cmpuint(q.max_load, ==, 4);      /* 1->0 still carries 4 */
	routing_result_unref(r);
	fabric_unref(f);
}

static void test_credit_loops(void)
{
	struct fabric *t = fx_kary_ntree(4, 2, 0);
	struct routing_result *r = shortest_routes(t);
	struct report_quality q;
	report_quality(r, NULL, &q);
	g_assert_true(q.checked);
	g_assert_cmpuint(q.loop_channels, ==, 0);
	g_assert_cmpuint(q.vl_mask, ==, 1);
	g_assert_cmpuint(q.vls, ==, 1);
	routing_result_unref(r);
	fabric_unref(t);

	struct fabric *ring = fx_ring(5, 2, 0);
	r = shortest_routes(ring);
	report_quality(r, NULL, &q);
	struct deadlock_report dr;
	uint32_t want = fx_deadlock_check_tables(ring, r->lft, r->stride, NULL, NULL, DEADLOCK_CA_ROUTES, &dr);
	g_assert_cmpuint(want, >, 0);
	g_assert_cmpuint(q.loop_channels, ==, want);
	g_assert_cmpstr(q.cycle, ==, dr.cycle);
	GString *html = report_build(&(struct report_inputs){ .r = r });
	g_assert_nonnull(strstr(html->str, "id=\"q-credit-loops\" class=\"bad\""));
	g_string_free(html, TRUE);
	routing_result_unref(r);
	fabric_unref(ring);
}

static void test_layout(void)
{
	struct report_layout l;
	struct fabric *t = fx_kary_ntree(4, 2, 0);   /* 4 leaves (ids 0..3), 4 spines */
	report_layout(t, &l);
	g_assert_false(l.grid);
	g_assert_cmpuint(l.n_tiers, ==, 2);
	for (uint32_t s = 0; s < 8; s++) {
		g_assert_cmpuint(l.tier[s], ==, s < 4 ? 0 : 1);
		g_assert_cmpfloat(l.y[s], ==, l.y[s < 4 ? 0 : 4]);
		g_assert_cmpfloat(l.x[s], >, 0);
		g_assert_cmpfloat(l.x[s], <, l.width);
	}
	g_assert_cmpfloat(l.y[4], <, l.y[0]);       /* spines on top */
	report_layout_clear(&l);
	fabric_unref(t);

	struct fabric *g = fx_torus2d(5, 3, 1, 0);
	report_layout(g, &l);
	g_assert_true(l.grid);
	g_assert_cmpuint(l.dims[0], ==, 5);
	g_assert_cmpuint(l.dims[1], ==, 3);
	g_assert_cmpuint(l.dims[2], ==, 1);
	g_assert_true(l.wrap[0] && l.wrap[1]);
	/* switch j * x + i sits at column i, row j: neighbours along x share a row */
	g_assert_cmpfloat(l.y[0], ==, l.y[4]);
	g_assert_cmpfloat(l.x[0], ==, l.x[5]);
	g_assert_cmpfloat(l.y[0], !=, l.y[5]);
	g_assert_cmpfloat(l.x[1], >, l.x[0]);       /* ids grow left to right, top to bottom */
	g_assert_cmpfloat(l.x[4], >, l.x[3]);
	g_assert_cmpfloat(l.y[5], >, l.y[0]);
	report_layout_clear(&l);
	fabric_unref(g);

	struct fabric *g3 = shape_torus3d(3, 4, 2, 1, 0);
	report_layout(g3, &l);
	g_assert_true(l.grid);
	g_assert_cmpuint(l.dims[0] * l.dims[1] * l.dims[2], ==, 24);
	g_assert_cmpuint(l.dims[0], ==, 3);
	g_assert_cmpuint(l.dims[1], ==, 4);
	g_assert_cmpuint(l.dims[2], ==, 2);
	report_layout_clear(&l);
	fabric_unref(g3);

	struct fabric *irr = shape_irregular(20, 2, 10, 3, 0);
	report_layout(irr, &l);
	g_assert_false(l.grid);
	g_assert_cmpuint(l.n_tiers, ==, 1);          /* every switch has hosts */
	report_layout_clear(&l);
	fabric_unref(irr);
}

static void test_document(void)
{
	struct fx_builder x;
	fx_builder_init(&x);
	uint32_t s0 = fx_add_switch(&x, 8, "leaf <a&b>");
	uint32_t s1 = fx_add_switch(&x, 8, "leaf two");
	uint32_t s2 = fx_add_switch(&x, 8, "spine \xff\xfe");
	fx_link(&x, s0, 1, s2, 1);
	fx_link(&x, s1, 1, s2, 2);
	fx_link(&x, s1, 2, s2, 3);                     /* parallel link */
	for (unsigned i = 0; i < 4; i++) {
		uint32_t h = fx_add_ca(&x, 1, "host");
		fx_link(&x, h, 1, i < 2 ? s0 : s1, (uint8_t)(3 + i));
	}
	struct fabric *f = fx_finish(&x, 0);
	struct routing_result *r = shortest_routes(f);
	GError *err = NULL;
	const char pol[] = "Default=0x7fff, ipoib : ALL=full ;\nstorage=0x0010 : 0x0002c90000000101=full, "
			   "0x0002c90000000201 ;\n";
	struct part_policy *pp = part_policy_parse_text(pol, sizeof(pol) - 1, "test.conf", &err);
	g_assert_no_error(err);
	struct report_inputs in = { .r = r, .parts = pp, .sm_state = "MASTER", .subnet_up = 1 };
	GString *html = report_build(&in);
	const char *h = html->str;
	g_assert_true(g_str_has_prefix(h, "<!DOCTYPE html>"));
	g_assert_true(g_str_has_suffix(h, "</html>\n"));
	g_assert_null(strstr(h, "<script"));
	g_assert_null(strstr(h, "src="));             /* nothing fetched */
	g_assert_null(strstr(h, "href="));
	g_assert_cmpuint(count(h, "<g class=\"sw\""), ==, 3);
	g_assert_cmpuint(count(h, "<line class=\"link"), ==, 3);
	g_assert_nonnull(strstr(h, "leaf &lt;a&amp;b&gt;"));
	g_assert_null(strstr(h, "leaf <a&b>"));
	g_assert_true(g_utf8_validate(h, -1, NULL));      /* the spine's name is not UTF-8 */
	g_assert_nonnull(strstr(h, "data-layout=\"tiers\""));
	struct report_quality q;
	report_quality(r, NULL, &q);
	char *v = value_of(h, "q-max-load");
	g_assert_cmpuint(g_ascii_strtoull(v, NULL, 10), ==, q.max_load);
	g_assert_cmpuint(q.max_load, ==, 4);   /* s0 -> spine: 2 hosts x 2 hosts on s1... */
	g_free(v);
	v = value_of(h, "q-routes");
	g_assert_cmpstr(v, ==, "12");
	g_free(v);
	v = value_of(h, "s-switches");
	g_assert_cmpstr(v, ==, "3");
	g_free(v);
	v = value_of(h, "q-credit-loops");
	g_assert_cmpstr(v, ==, "none");
	g_free(v);
	/* partitions: the default one with every end port (4 hosts + 3 switch port 0) full, and
	 * storage with one full and one limited member */
	g_assert_cmpuint(count(h, "<tr class=\"partition\">"), ==, 2);
	g_assert_nonnull(strstr(h, "<td>Default</td><td>0x7fff</td><td>yes</td><td class=\"n\">"));
	g_assert_nonnull(strstr(h, "<td>storage</td><td>0x0010</td><td>no</td><td class=\"n\">1</td>"
				"<td class=\"n\">1</td>"));
	g_string_free(html, TRUE);

	/* multicast groups, and a description that is not UTF-8 */
	struct mc_groups *mc = mc_groups_new();
	uint8_t mgid[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff };
	struct mc_params mp = { .pkey = 0xffff, .qkey = 0xb1b };
	struct mc_group *grp = mc_create(mc, mgid, &mp, 0);
	g_assert_nonnull(grp);
	uint8_t gid[16] = { 0 };
	mc_join(mc, grp, 0x0002c90000000101ull, gid, MC_FULL, 0);
	mc_join(mc, grp, 0x0002c90000000201ull, gid, MC_SEND_ONLY, 0);
	struct report_inputs in2 = { .r = r, .mc = mc };
	html = report_build(&in2);
	char *row = g_strdup_printf("<tr class=\"mcgroup\"><td>ff12:401b:ffff:0000:0000:0000:0000:0000</td>"
				    "<td>0x%04x</td><td>0xffff</td><td class=\"n\">2</td><td class=\"n\">1</td>"
				    "<td class=\"n\">1</td><td>no</td></tr>", grp->mlid);
	g_assert_nonnull(strstr(html->str, row));
	g_assert_true(g_utf8_validate(html->str, -1, NULL));
	g_free(row);
	g_string_free(html, TRUE);
	mc_groups_free(mc);

	/* above the drawing limit: a summary by tier, no switch drawn */
	in.max_switches_drawn = 2;
	html = report_build(&in);
	g_assert_cmpuint(count(html->str, "<g class=\"sw\""), ==, 0);
	g_assert_cmpuint(count(html->str, "<tr class=\"tier\">"), ==, 2);
	g_assert_nonnull(strstr(html->str, "id=\"load-histogram\""));
	g_assert_nonnull(strstr(html->str, "id=\"q-max-load\""));

	/* the file: written whole, nothing left beside it; a missing directory is an error */
	char *dir = g_dir_make_tmp("report-XXXXXX", NULL);
	char *path = g_build_filename(dir, "fabric.html", NULL);
	g_assert_cmpint(report_write_file(path, html, &err), ==, 0);
	g_assert_no_error(err);
	char *back = NULL;
	gsize len = 0;
	g_assert_true(g_file_get_contents(path, &back, &len, NULL));
	g_assert_cmpmem(back, len, html->str, html->len);
	char *tmp = g_strdup_printf("%s.tmp", path);
	g_assert_false(g_file_test(tmp, G_FILE_TEST_EXISTS));
	char *bad = g_build_filename(dir, "no", "such", "x.html", NULL);
	g_assert_cmpint(report_write_file(bad, html, &err), <, 0);
	g_assert_nonnull(err);
	g_clear_error(&err);
	g_unlink(path);
	g_rmdir(dir);
	g_free(back);
	g_free(tmp);
	g_free(bad);
	g_free(path);
	g_free(dir);
	g_string_free(html, TRUE);

	/* no routes yet: the picture without loads, no quality table */
	html = report_build(&(struct report_inputs){ .f = f });
	g_assert_cmpuint(count(html->str, "<g class=\"sw\""), ==, 3);
	g_assert_null(strstr(html->str, "id=\"quality-table\""));
	g_string_free(html, TRUE);
	/* routes of another generation are left out; the data keeps its own references */
	struct fabric *other = fx_line(2, 1, 0);
	struct report_data *d = report_data_compute(r, other);
	g_assert_null(d->r);
	g_assert_true(d->f == other);
	g_assert_null(d->load);
	fabric_unref(other);                         /* d still holds it */
	html = report_render(d, &(struct report_inputs){ 0 });
	g_assert_cmpuint(count(html->str, "<g class=\"sw\""), ==, 2);
	g_string_free(html, TRUE);
	report_data_free(d);
	d = report_data_compute(r, NULL);
	g_assert_true(d->r == r && d->f == f);
	g_assert_cmpuint(d->q.max_load, ==, 4);
	report_data_free(d);
	html = report_build(&(struct report_inputs){ 0 });
	g_assert_nonnull(strstr(html->str, "id=\"no-fabric\""));
	g_string_free(html, TRUE);

	part_policy_free(pp);
	routing_result_unref(r);
	fabric_unref(f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/report/load_matches_fixture", test_load_matches_fixture);
	g_test_add_func("/report/shifts_by_hand", test_shifts_by_hand);
	g_test_add_func("/report/credit_loops", test_credit_loops);
	g_test_add_func("/report/layout", test_layout);
	g_test_add_func("/report/document", test_document);
	return g_test_run();
}
