/* test_torus_conf.c - the torus-2QoS.conf parser (policy/torus_conf.c): the example of
 * torus-2QoS.conf(5) with the meaning it gives it, the equivalence it states, OpenSM's reading
 * rules (next_seed, last-wins, duplicates, trailing tokens, radix 2, keywords before the
 * topology), the seed sufficiency check, and one test per error class with its exact
 * FILE:LINE:COL message. */
#include <glib.h>
#include <string.h>
#include "policy/torus_conf.h"

/* ---- helpers ---------------------------------------------------------------------------- */

static struct torus_conf *parse_ok(const char *s)
{
	GError *err = NULL;
	struct torus_conf *c = torus_conf_parse_text(s, strlen(s), "t.conf", &err);
	g_assert_no_error(err);
	g_assert_nonnull(c);
	g_assert_cmpstr(c->source, ==, "t.conf");
	return c;
}

static void expect_error(const char *s, const char *msg)
{
	GError *err = NULL;
	struct torus_conf *c = torus_conf_parse_text(s, strlen(s), "t.conf", &err);
	g_assert_null(c);
	g_assert_error(err, TORUS_CONF_ERROR, TORUS_CONF_ERROR_SYNTAX);
	g_assert_cmpstr(err->message, ==, msg);
	g_error_free(err);
}

static void expect_seeds(const char *s, const char *msg)
{
	struct torus_conf *c = parse_ok(s);
	GError *err = NULL;
	if (!msg) {
		g_assert_cmpint(torus_conf_check_seeds(c, &err), ==, 0);
		g_assert_no_error(err);
	} else {
		g_assert_cmpint(torus_conf_check_seeds(c, &err), ==, -1);
		g_assert_error(err, TORUS_CONF_ERROR, TORUS_CONF_ERROR_SEEDS);
		g_assert_cmpstr(err->message, ==, msg);
		g_error_free(err);
	}
	torus_conf_free(c);
}

static const struct torus_conf_seed *seed(const struct torus_conf *c, guint i)
{
	g_assert_cmpuint(i, <, c->seeds->len);
	return &g_array_index(c->seeds, struct torus_conf_seed, i);
}

static void check_link(const struct torus_conf_seed *s, int d, int r, uint64_t from, uint64_t to)
{
	const struct torus_conf_link *l = &s->link[d][r];
	g_assert_cmpint(l->given, ==, from != 0);
	g_assert_cmphex(l->from, ==, from);
	g_assert_cmphex(l->to, ==, to);
}

static void check_topology(const struct torus_conf *c, unsigned x, unsigned y, unsigned z,
			   int mx, int my, int mz)
{
	g_assert_true(c->topology_given);
	g_assert_cmpuint(c->radix[TORUS_X], ==, x);
	g_assert_cmpuint(c->radix[TORUS_Y], ==, y);
	g_assert_cmpuint(c->radix[TORUS_Z], ==, z);
	g_assert_cmpint(c->mesh[TORUS_X], ==, mx);
	g_assert_cmpint(c->mesh[TORUS_Y], ==, my);
	g_assert_cmpint(c->mesh[TORUS_Z], ==, mz);
}

static void check_ports(const struct torus_conf *c, guint n, const guint8 *ports)
{
	g_assert_cmpuint(c->port_order->len, ==, n);
	for (guint i = 0; i < n; i++)
		g_assert_cmpuint(g_array_index(c->port_order, guint8, i), ==, ports[i]);
}

static void check_note(const struct torus_conf *c, guint i, const char *msg)
{
	g_assert_cmpuint(i, <, c->notes->len);
	g_assert_cmpstr(c->notes->pdata[i], ==, msg);
}

/* ---- the man page's example ------------------------------------------------------------- */

/* The example of torus-2QoS.conf(5) (and of NVIDIA's manual, whose lines are joined again). */
static const char man_example[] =
	"# Look for a 2D (since x radix is one) 4x5 torus.\n"
	"torus 1 4 5\n"
	"\n"
	"# y is radix-4 torus dimension, need both\n"
	"# ym_link and yp_link configuration.\n"
	"yp_link 0x200000 0x200005  # sw @ y=0,z=0 -> sw @ y=1,z=0\n"
	"ym_link 0x200000 0x20000f  # sw @ y=0,z=0 -> sw @ y=3,z=0\n"
	"\n"
	"# z is not radix-4 torus dimension, only need one of\n"
	"# zm_link or zp_link configuration.\n"
	"zp_link 0x200000 0x200001  # sw @ y=0,z=0 -> sw @ y=0,z=1\n"
	"\n"
	"next_seed\n"
	"\n"
	"yp_link 0x20000b 0x200010  # sw @ y=2,z=1 -> sw @ y=3,z=1\n"
	"ym_link 0x20000b 0x200006  # sw @ y=2,z=1 -> sw @ y=1,z=1\n"
	"zp_link 0x20000b 0x20000c  # sw @ y=2,z=1 -> sw @ y=2,z=2\n"
	"\n"
	"y_dateline -2  # Move the dateline for this seed\n"
	"z_dateline -1  # back to its original position.\n"
	"\n"
	"# If OpenSM failover is configured, for maximum resiliency\n"
	"# one instance should run on a host attached to a switch\n"
	"# from the first seed, and another instance should run\n"
	"# on a host attached to a switch from the second seed.\n"
	"# Both instances should use this torus-2QoS.conf to ensure\n"
	"# path SL values do not change in the event of SM failover.\n"
	"\n"
	"# port_order defines the order on which the ports would be\n"
	"# chosen for routing.\n"
	"port_order 7 10 8 11 9 12 25 28 26 29 27 30\n";

static void check_man_example(const struct torus_conf *c)
{
	check_topology(c, 1, 4, 5, 0, 0, 0);
	g_assert_cmpuint(c->topology_line, ==, 2);
	g_assert_cmpuint(c->seeds->len, ==, 2);
	const struct torus_conf_seed *s = seed(c, 0);
	g_assert_cmpuint(s->line, ==, 6);
	check_link(s, TORUS_X, TORUS_PLUS, 0, 0);
	check_link(s, TORUS_X, TORUS_MINUS, 0, 0);
	check_link(s, TORUS_Y, TORUS_PLUS, 0x200000, 0x200005);
	check_link(s, TORUS_Y, TORUS_MINUS, 0x200000, 0x20000f);
	check_link(s, TORUS_Z, TORUS_PLUS, 0x200000, 0x200001);
	check_link(s, TORUS_Z, TORUS_MINUS, 0, 0);
	for (int d = 0; d < TORUS_NDIMS; d++) {
		g_assert_cmpint(s->dateline[d], ==, 0);
		g_assert_false(s->dateline_given[d]);
	}
	s = seed(c, 1);
	g_assert_cmpuint(s->line, ==, 13);
	check_link(s, TORUS_X, TORUS_PLUS, 0, 0);
	check_link(s, TORUS_X, TORUS_MINUS, 0, 0);
	check_link(s, TORUS_Y, TORUS_PLUS, 0x20000b, 0x200010);
	check_link(s, TORUS_Y, TORUS_MINUS, 0x20000b, 0x200006);
	check_link(s, TORUS_Z, TORUS_PLUS, 0x20000b, 0x20000c);
	check_link(s, TORUS_Z, TORUS_MINUS, 0, 0);
	g_assert_cmpuint(s->link[TORUS_Y][TORUS_PLUS].line, ==, 15);
	g_assert_false(s->dateline_given[TORUS_X]);
	g_assert_true(s->dateline_given[TORUS_Y]);
	g_assert_true(s->dateline_given[TORUS_Z]);
	g_assert_cmpint(s->dateline[TORUS_X], ==, 0);
	g_assert_cmpint(s->dateline[TORUS_Y], ==, -2);
	g_assert_cmpint(s->dateline[TORUS_Z], ==, -1);
	static const guint8 order[] = { 7, 10, 8, 11, 9, 12, 25, 28, 26, 29, 27, 30 };
	check_ports(c, G_N_ELEMENTS(order), order);
	g_assert_cmpuint(c->portgroup_max_ports, ==, 16);
	g_assert_cmpuint(c->max_changes, ==, 32);
	g_assert_cmpuint(c->notes->len, ==, 0);
	GError *err = NULL;
	g_assert_cmpint(torus_conf_check_seeds(c, &err), ==, 0);
	g_assert_no_error(err);
}

static void test_man_example(void)
{
	struct torus_conf *c = parse_ok(man_example);
	check_man_example(c);
	torus_conf_free(c);
}

/* The same file with CRLF line ends, and without its final newline. */
static void test_crlf_no_final_newline(void)
{
	GString *s = g_string_new(NULL);
	for (const char *p = man_example; *p; p++) {
		if (*p == '\n')
			g_string_append_c(s, '\r');
		g_string_append_c(s, *p);
	}
	struct torus_conf *c = parse_ok(s->str);
	check_man_example(c);
	torus_conf_free(c);
	g_string_truncate(s, s->len - 2);
	c = parse_ok(s->str);
	check_man_example(c);
	torus_conf_free(c);
	g_string_free(s, TRUE);
	c = parse_ok("\ttorus\t1 4 5   ");
	check_topology(c, 1, 4, 5, 0, 0, 0);
	torus_conf_free(c);
}

/* "mesh 3T 4 5" and "torus 3 4M 5M" specify the same topology (torus-2QoS.conf(5)); suffixes per
 * dimension either way; radix 2 is always a mesh (OpenSM). */
static void test_equivalence(void)
{
	struct torus_conf *a = parse_ok("mesh 3T 4 5\n"), *b = parse_ok("torus 3 4M 5M\n");
	check_topology(a, 3, 4, 5, 0, 1, 1);
	check_topology(b, 3, 4, 5, 0, 1, 1);
	torus_conf_free(a);
	torus_conf_free(b);
	a = parse_ok("torus 3m 4t 5T\n");
	check_topology(a, 3, 4, 5, 1, 0, 0);
	g_assert_cmpuint(a->notes->len, ==, 0);
	torus_conf_free(a);
	a = parse_ok("torus 2 0x4 2m\n");   /* C numbers, as OpenSM's strtoul */
	check_topology(a, 2, 4, 2, 1, 0, 1);
	g_assert_cmpuint(a->notes->len, ==, 1);
	check_note(a, 0, "t.conf:1:1: the x dimension of radix 2 is a mesh (as in OpenSM: a "
		   "radix-2 torus is a mesh with parallel links)");
	torus_conf_free(a);
	a = parse_ok("mesh 1 1 7\n");     /* 1D, as OpenSM reads it */
	check_topology(a, 1, 1, 7, 1, 1, 1);
	torus_conf_free(a);
}

/* ---- reading rules ---------------------------------------------------------------------- */

static void test_next_seed(void)
{
	/* a leading next_seed starts the first seed (OpenSM: seed_cnt 0 -> 1) */
	struct torus_conf *c = parse_ok("torus 3 3 3\nnext_seed\nxp_link 0x1 0x2\n");
	g_assert_cmpuint(c->seeds->len, ==, 1);
	g_assert_cmpuint(seed(c, 0)->line, ==, 2);
	check_link(seed(c, 0), TORUS_X, TORUS_PLUS, 1, 2);
	torus_conf_free(c);
	/* two in a row leave an empty seed, which the check refuses as OpenSM's does */
	c = parse_ok("torus 3 1 1\nxp_link 0x1 0x2\nnext_seed\nnext_seed\nxm_link 0x5 0x6\n"
		     "x_dateline 2\n");
	g_assert_cmpuint(c->seeds->len, ==, 3);
	check_link(seed(c, 1), TORUS_X, TORUS_PLUS, 0, 0);
	check_link(seed(c, 2), TORUS_X, TORUS_MINUS, 5, 6);
	g_assert_cmpint(seed(c, 2)->dateline[TORUS_X], ==, 2);
	g_assert_cmpuint(seed(c, 2)->line, ==, 4);
	torus_conf_free(c);
	expect_seeds("torus 3 1 1\nxp_link 0x1 0x2\nnext_seed\n", "t.conf:3: seed 2: dimension "
		     "x (radix 3) has neither xp_link nor xm_link");
	/* links of a new seed may start elsewhere; datelines go to the current seed */
	c = parse_ok("torus 5 5 5\nx_dateline 4\nnext_seed\nx_dateline -4\ny_dateline 0x3\n");
	g_assert_cmpint(seed(c, 0)->dateline[TORUS_X], ==, 4);
	g_assert_cmpint(seed(c, 1)->dateline[TORUS_X], ==, -4);
	g_assert_cmpint(seed(c, 1)->dateline[TORUS_Y], ==, 3);
	torus_conf_free(c);
}

static void test_last_wins(void)
{
	struct torus_conf *c = parse_ok("torus 3 3 3\nportgroup_max_ports 8\n"
					"portgroup_max_ports 0x20 # more\n");
	g_assert_cmpuint(c->portgroup_max_ports, ==, 32);
	g_assert_cmpuint(c->notes->len, ==, 1);
	check_note(c, 0, "t.conf:3:1: portgroup_max_ports given again (line 2 before): the last "
		   "one counts");
	torus_conf_free(c);
	c = parse_ok("torus 3 3 3\nportgroup_max_ports 300\n");
	g_assert_cmpuint(c->portgroup_max_ports, ==, 254);
	check_note(c, 0, "t.conf:2:21: portgroup_max_ports 300: a switch has at most 254 ports; "
		   "254 is used");
	torus_conf_free(c);
	c = parse_ok("torus 3 3 3\nport_order 1 2\nport_order 5 4\n");
	static const guint8 o[] = { 5, 4 };
	check_ports(c, 2, o);
	check_note(c, 0, "t.conf:3:1: port_order given again (line 2 before): the last one counts");
	torus_conf_free(c);
	c = parse_ok("torus 3 3 3\nxp_link 0x1 0x2\nxp_link 0x1 0x3\ny_dateline 1\ny_dateline 2\n"
		     "max_changes 7\n");
	check_link(seed(c, 0), TORUS_X, TORUS_PLUS, 1, 3);
	g_assert_cmpint(seed(c, 0)->dateline[TORUS_Y], ==, 2);
	g_assert_cmpuint(c->max_changes, ==, 7);
	g_assert_cmpuint(c->notes->len, ==, 2);
	check_note(c, 0, "t.conf:3:1: xp_link given again in seed 1 (first on line 2): this one "
		   "counts");
	check_note(c, 1, "t.conf:5:1: y_dateline given again in seed 1: this one counts");
	torus_conf_free(c);
}

static void test_port_order(void)
{
	struct torus_conf *c = parse_ok("torus 3 3 3\nport_order 3 1 3 2 1 0 254 0x10\n");
	static const guint8 o[] = { 3, 1, 2, 0, 254, 16 };
	check_ports(c, G_N_ELEMENTS(o), o);
	g_assert_cmpuint(c->notes->len, ==, 2);
	check_note(c, 0, "t.conf:2:16: port 3 repeated in port_order: ignored");
	check_note(c, 1, "t.conf:2:20: port 1 repeated in port_order: ignored");
	torus_conf_free(c);
	c = parse_ok("torus 3 3 3\nport_order 4 5 # then 6\n");
	static const guint8 o2[] = { 4, 5 };
	check_ports(c, 2, o2);
	check_note(c, 0, "t.conf:2:16: port_order ends at '#': the rest of the line is a comment "
		   "(OpenSM would read its words as port 0)");
	torus_conf_free(c);
	c = parse_ok("torus 3 3 3\nport_order\n");     /* empty: increasing order */
	g_assert_cmpuint(c->port_order->len, ==, 0);
	torus_conf_free(c);
	GString *s = g_string_new("torus 3 3 3\nport_order");   /* every port, twice */
	for (int k = 0; k < 2; k++)
		for (int p = 254; p >= 0; p--)
			g_string_append_printf(s, " %d", p);
	c = parse_ok(s->str);
	g_assert_cmpuint(c->port_order->len, ==, 255);
	g_assert_cmpuint(g_array_index(c->port_order, guint8, 0), ==, 254);
	g_assert_cmpuint(c->notes->len, ==, 255);
	torus_conf_free(c);
	g_string_free(s, TRUE);
}

/* Tokens after a keyword's arguments are ignored; '#' first on a line makes a comment. */
static void test_trailing_tokens(void)
{
	struct torus_conf *c = parse_ok("  # a comment\n#torus 9 9 9\ntorus 1 4 5 extra words\n"
					"yp_link 0x1 0x2 0x3 # c\nym_link 0x1 0x4 and more\n"
					"zm_link 0x1 0x5\t#c\nnext_seed now\nzp_link 0x9 0x8\n"
					"z_dateline -4 anything\nportgroup_max_ports 8 ports\n"
					"max_changes 3 x\n");
	check_topology(c, 1, 4, 5, 0, 0, 0);
	g_assert_cmpuint(c->seeds->len, ==, 2);
	check_link(seed(c, 0), TORUS_Y, TORUS_PLUS, 1, 2);
	check_link(seed(c, 0), TORUS_Y, TORUS_MINUS, 1, 4);
	check_link(seed(c, 0), TORUS_Z, TORUS_MINUS, 1, 5);
	check_link(seed(c, 1), TORUS_Z, TORUS_PLUS, 9, 8);
	g_assert_cmpint(seed(c, 1)->dateline[TORUS_Z], ==, -4);
	g_assert_cmpuint(c->portgroup_max_ports, ==, 8);
	g_assert_cmpuint(c->max_changes, ==, 3);
	g_assert_cmpuint(c->notes->len, ==, 0);
	torus_conf_free(c);
}

/* Numbers as OpenSM reads them: a GUID without 0x is decimal (or octal), with a note;
 * keywords other than datelines before the topology are read with a note (OpenSM does not
 * refuse them); links of a radix-1 dimension are noted as unused. */
static void test_notes(void)
{
	struct torus_conf *c = parse_ok("xp_link 100 010\nport_order 1\ntorus 3 1 1\n"
					"yp_link 0x64 0x3\n");
	check_link(seed(c, 0), TORUS_X, TORUS_PLUS, 100, 8);
	check_link(seed(c, 0), TORUS_Y, TORUS_PLUS, 100, 3);
	g_assert_cmpuint(c->notes->len, ==, 4);
	check_note(c, 0, "t.conf:1:9: switch GUID '100' read as decimal, 0x64 (as OpenSM reads "
		   "it); write 0x... for hex");
	check_note(c, 1, "t.conf:1:13: switch GUID '010' read as octal, 0x8 (as OpenSM reads it); "
		   "write 0x... for hex");
	check_note(c, 2, "t.conf:1:1: 'xp_link' before the torus or mesh line, which "
		   "torus-2QoS.conf(5) wants first: read anyway, as OpenSM does");
	check_note(c, 3, "t.conf:4:1: yp_link of seed 1: dimension y has radix 1, the link is not "
		   "used");
	torus_conf_free(c);
	c = parse_ok("");
	g_assert_false(c->topology_given);
	g_assert_cmpuint(c->seeds->len, ==, 0);
	g_assert_cmpuint(c->notes->len, ==, 0);
	torus_conf_free(c);
}

/* ---- the seed check --------------------------------------------------------------------- */

static void test_check_seeds(void)
{
	expect_seeds(man_example, NULL);
	/* a radix-4 torus dimension with one direction only */
	expect_seeds("torus 1 4 5\n\nyp_link 0x1 0x2\nzp_link 0x1 0x3\n", "t.conf:3: seed 1: torus "
		     "dimension y of radix 4 needs both yp_link and ym_link (discovery cannot place "
		     "a radix-4 ring otherwise): ym_link is missing");
	expect_seeds("torus 4 1 1\nxm_link 0x1 0x2\n", "t.conf:2: seed 1: torus dimension x of "
		     "radix 4 needs both xp_link and xm_link (discovery cannot place a radix-4 ring "
		     "otherwise): xp_link is missing");
	/* a dimension without any link */
	expect_seeds("torus 3 3 1\nxp_link 0x1 0x2\n", "t.conf:2: seed 1: dimension y (radix 3) "
		     "has neither yp_link nor ym_link");
	/* the second seed is checked too */
	expect_seeds("torus 3 1 1\nxp_link 0x1 0x2\nnext_seed\nx_dateline 1\n", "t.conf:3: seed 2: "
		     "dimension x (radix 3) has neither xp_link nor xm_link");
	/* one direction is enough in a mesh of radix 4, a torus of radix 3 or 5, radix 2 */
	expect_seeds("mesh 4 1 1\nxm_link 0x1 0x2\n", NULL);
	expect_seeds("torus 4M 3 5\nxp_link 0x1 0x2\nym_link 0x1 0x3\nzp_link 0x1 0x4\n", NULL);
	expect_seeds("torus 2 2 1\nxp_link 0x1 0x2\nym_link 0x1 0x3\n", NULL);
	expect_seeds("torus 4 4 4\nxp_link 0x1 0x2\nxm_link 0x1 0x3\nyp_link 0x1 0x4\n"
		     "ym_link 0x1 0x5\nzp_link 0x1 0x6\nzm_link 0x1 0x7\n", NULL);
	/* no seed at all */
	expect_seeds("torus 1 1 3\n", "t.conf:1: no seed: dimension z (radix 3) has neither "
		     "zp_link nor zm_link");
	expect_seeds("torus 1 1 1\n", NULL);
	/* no topology at all */
	expect_seeds("# nothing\n", "t.conf: no torus or mesh line: the topology is not "
		     "configured");
}

/* ---- errors ----------------------------------------------------------------------------- */

static void test_err_before_topology(void)
{
	expect_error("y_dateline 1\ntorus 1 4 5\n", "t.conf:1:1: 'y_dateline' before the torus or "
		     "mesh line: a dateline is checked against its dimension's radix");
	expect_error("next_seed\n  x_dateline 0\n", "t.conf:2:3: 'x_dateline' before the torus or "
		     "mesh line: a dateline is checked against its dimension's radix");
}

static void test_err_topology_twice(void)
{
	expect_error("torus 1 4 5\nmesh 1 4 5\n", "t.conf:2:1: a second 'mesh' line: the topology "
		     "was given on line 1");
	expect_error("mesh 3 3 3\n\n torus 3 3 3\n", "t.conf:3:2: a second 'torus' line: the "
		     "topology was given on line 1");
}

static void test_err_keyword(void)
{
	expect_error("torus 1 4 5\n  Torus 1 4 5\n", "t.conf:2:3: unknown keyword 'Torus'");
	expect_error("torus 1 4 5\nxp_links 0x1 0x2\n", "t.conf:2:1: unknown keyword 'xp_links'");
	expect_error("torus 1 4 5 # ok\ntorus# 1 4 5\n", "t.conf:2:1: unknown keyword 'torus#'");
	expect_error("\f\n", "t.conf:1:1: unknown keyword '\f'");
}

static void test_err_radix(void)
{
	expect_error("torus 1 4\n", "t.conf:1:10: 'torus' wants three radices (x y z): the z radix "
		     "is missing");
	expect_error("mesh   \r\n", "t.conf:1:5: 'mesh' wants three radices (x y z): the x radix "
		     "is missing");
	expect_error("torus 0 4 5\n", "t.conf:1:7: x radix 0: a radix is at least 1 (1 leaves the "
		     "dimension out)");
	expect_error("torus 1 four 5\n", "t.conf:1:9: bad y radix 'four': a number, optionally "
		     "followed by m or M (mesh) or t or T (torus)");
	expect_error("torus 1 4 5x\n", "t.conf:1:11: bad z radix '5x': a number, optionally "
		     "followed by m or M (mesh) or t or T (torus)");
	expect_error("torus 1 4tm 5\n", "t.conf:1:9: bad y radix '4tm': a number, optionally "
		     "followed by m or M (mesh) or t or T (torus)");
	expect_error("torus -1 4 5\n", "t.conf:1:7: bad x radix '-1': a number, optionally "
		     "followed by m or M (mesh) or t or T (torus)");
	expect_error("torus 1 08 5\n", "t.conf:1:9: bad y radix '08': a number, optionally "
		     "followed by m or M (mesh) or t or T (torus)");
	expect_error("torus 1000 1000 1\n", "t.conf:1:1: a 1000x1000x1 torus has more than 49151 "
		     "switches");
	expect_error("torus 99999999999999999999 1 1\n", "t.conf:1:7: bad x radix "
		     "'99999999999999999999': a number, optionally followed by m or M (mesh) or t "
		     "or T (torus)");
	expect_error("torus 49152 1 1\n", "t.conf:1:7: x radix 49152: more than 49151 switches");
}

static void test_err_guid(void)
{
	expect_error("torus 1 4 5\nyp_link\n", "t.conf:2:8: 'yp_link' wants two switch node GUIDs "
		     "(from, to): the from GUID is missing");
	expect_error("torus 1 4 5\nyp_link 0x1\n", "t.conf:2:12: 'yp_link' wants two switch node "
		     "GUIDs (from, to): the to GUID is missing");
	expect_error("torus 1 4 5\nyp_link 0x1 0xzz\n", "t.conf:2:13: bad switch GUID '0xzz': a "
		     "number (0x... for hex)");
	expect_error("torus 1 4 5\nzm_link sw0 0x2\n", "t.conf:2:9: bad switch GUID 'sw0': a number "
		     "(0x... for hex)");
	expect_error("torus 1 4 5\nyp_link 0x1 0x2#c\n", "t.conf:2:13: bad switch GUID '0x2#c': a "
		     "number (0x... for hex)");   /* OpenSM's strtoull would stop at '#' */
	expect_error("torus 1 4 5\nyp_link 0x1 0x2g\n", "t.conf:2:13: bad switch GUID '0x2g': a "
		     "number (0x... for hex)");
	expect_error("torus 1 4 5\nyp_link 0x12345678901234567 0x2\n", "t.conf:2:9: switch GUID "
		     "'0x12345678901234567' has more than 64 bits");
	expect_error("torus 1 4 5\nyp_link 0x0 0x2\n", "t.conf:2:9: switch GUID 0: no node has "
		     "GUID 0");
	struct torus_conf *c = parse_ok("torus 1 4 5\nyp_link 0xffffffffffffffff 0x1\n");
	check_link(seed(c, 0), TORUS_Y, TORUS_PLUS, UINT64_MAX, 1);
	torus_conf_free(c);
}

static void test_err_from_switch(void)
{
	expect_error("torus 1 4 5\nyp_link 0x1 0x2\nzp_link 0x3 0x4\n", "t.conf:3:9: link from "
		     "switch 0x3, but the yp_link of seed 1 (line 2) is from 0x1: all links of a "
		     "seed start at the same switch");
	expect_error("torus 4 4 5\nxp_link 0x1 0x2\nnext_seed\nxp_link 0x7 0x2\nxm_link  0x8 0x3\n",
		     "t.conf:5:10: link from switch 0x8, but the xp_link of seed 2 (line 4) is from "
		     "0x7: all links of a seed start at the same switch");
	/* the same slot again may change its from-switch when it is the only link */
	struct torus_conf *c = parse_ok("torus 3 1 1\nxp_link 0x1 0x2\nxp_link 0x5 0x2\n");
	check_link(seed(c, 0), TORUS_X, TORUS_PLUS, 5, 2);
	torus_conf_free(c);
}

static void test_err_dateline(void)
{
	expect_error("torus 1 4 5\ny_dateline\n", "t.conf:2:11: 'y_dateline' wants a position (a "
		     "signed integer)");
	expect_error("torus 1 4 5\ny_dateline two\n", "t.conf:2:12: bad dateline 'two': a signed "
		     "integer");
	expect_error("torus 1 4 5\ny_dateline -2x\n", "t.conf:2:12: bad dateline '-2x': a signed "
		     "integer");
	expect_error("torus 1 4 5\ny_dateline --1\n", "t.conf:2:12: bad dateline '--1': a signed "
		     "integer");
	expect_error("torus 1 4 5\ny_dateline -4\n", "t.conf:2:12: y_dateline -4 out of range: -4 < "
		     "position < 4 for radix 4");
	expect_error("torus 1 4 5\nz_dateline 5\n", "t.conf:2:12: z_dateline 5 out of range: -5 < "
		     "position < 5 for radix 5");
	expect_error("torus 1 4 5\nx_dateline 1\n", "t.conf:2:12: x_dateline 1 out of range: -1 < "
		     "position < 1 for radix 1");
	struct torus_conf *c = parse_ok("torus 1 4 5\nx_dateline -0\ny_dateline +3\nz_dateline -4\n");
	g_assert_cmpint(seed(c, 0)->dateline[TORUS_X], ==, 0);
	g_assert_cmpint(seed(c, 0)->dateline[TORUS_Y], ==, 3);
	g_assert_cmpint(seed(c, 0)->dateline[TORUS_Z], ==, -4);
	torus_conf_free(c);
}

static void test_err_portgroup(void)
{
	expect_error("torus 1 4 5\nportgroup_max_ports 0\n", "t.conf:2:21: portgroup_max_ports 0: "
		     "a port group holds at least 1 port");
	expect_error("torus 1 4 5\nportgroup_max_ports many\n", "t.conf:2:21: bad port count "
		     "'many': a number from 1");
	expect_error("torus 1 4 5\nportgroup_max_ports -3\n", "t.conf:2:21: bad port count '-3': "
		     "a number from 1");
	expect_error("torus 1 4 5\nportgroup_max_ports\n", "t.conf:2:20: 'portgroup_max_ports' "
		     "wants a number of ports");
}

static void test_err_port_order(void)
{
	expect_error("torus 1 4 5\nport_order 1 2 255\n", "t.conf:2:16: bad port '255' in "
		     "port_order: a port number from 0 to 254");
	expect_error("torus 1 4 5\nport_order 1 x 2\n", "t.conf:2:14: bad port 'x' in port_order: "
		     "a port number from 0 to 254");
	expect_error("torus 1 4 5\nport_order 1 -2\n", "t.conf:2:14: bad port '-2' in port_order: "
		     "a port number from 0 to 254");
}

static void test_err_max_changes(void)
{
	expect_error("torus 1 4 5\nmax_changes\n", "t.conf:2:12: 'max_changes' wants a number");
	expect_error("torus 1 4 5\nmax_changes 0x100000000\n", "t.conf:2:13: bad max_changes "
		     "'0x100000000': a number");
}

/* NUL bytes refuse the file; very long lines and junk never crash. */
static void test_err_bytes(void)
{
	static const char nul[] = "torus 1 4 5\nyp_\0link 0x1 0x2\n";
	GError *err = NULL;
	g_assert_null(torus_conf_parse_text(nul, sizeof(nul) - 1, "t.conf", &err));
	g_assert_error(err, TORUS_CONF_ERROR, TORUS_CONF_ERROR_SYNTAX);
	g_assert_cmpstr(err->message, ==, "t.conf:2:4: NUL byte in the file");
	g_clear_error(&err);
	GString *s = g_string_new("torus 1 4 5 ");
	for (int i = 0; i < 200000; i++)
		g_string_append(s, "xx ");
	g_string_append(s, "\nport_order");
	for (int i = 0; i < 100000; i++)
		g_string_append_printf(s, " %d", i % 255);
	struct torus_conf *c = parse_ok(s->str);
	g_assert_cmpuint(c->port_order->len, ==, 255);
	torus_conf_free(c);
	g_string_append(s, " ");
	for (int i = 0; i < 100000; i++)
		g_string_append_c(s, 'y');
	err = NULL;
	g_assert_null(torus_conf_parse_text(s->str, s->len, "t.conf", &err));
	g_assert_true(g_str_has_prefix(err->message, "t.conf:2:"));
	g_assert_cmpuint(strlen(err->message), <, 200);   /* the token quoted is cut short */
	g_clear_error(&err);
	g_string_free(s, TRUE);
	/* no name, no error wanted, no text */
	g_assert_null(torus_conf_parse_text("bogus", 5, NULL, NULL));
	c = torus_conf_parse_text(NULL, 0, NULL, NULL);
	g_assert_nonnull(c);
	g_assert_cmpint(torus_conf_check_seeds(c, NULL), ==, -1);
	torus_conf_free(c);
	torus_conf_free(NULL);
}

/* Every file of the fuzz corpus either parses or is refused with a message. */
static void test_corpus_examples(void)
{
	const char *dir = TEST_SRCDIR "/tests/fuzz/corpus/torus_conf";
	GDir *d = g_dir_open(dir, 0, NULL);
	g_assert_nonnull(d);
	int n = 0, ok = 0;
	const char *name;
	while ((name = g_dir_read_name(d))) {
		char *path = g_build_filename(dir, name, NULL), *data;
		gsize len;
		g_assert_true(g_file_get_contents(path, &data, &len, NULL));
		GError *err = NULL;
		struct torus_conf *c = torus_conf_parse_text(data, len, "c.conf", &err);
		g_assert_true((c != NULL) != (err != NULL));
		ok += c != NULL;
		n++;
		torus_conf_free(c);
		g_clear_error(&err);
		g_free(data);
		g_free(path);
	}
	g_dir_close(d);
	g_test_message("%d corpus files, %d parse", n, ok);
	g_assert_cmpint(n, >=, 15);
	g_assert_cmpint(ok, >=, 5);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/torus-conf/example/man", test_man_example);
	g_test_add_func("/torus-conf/example/crlf_no_final_newline", test_crlf_no_final_newline);
	g_test_add_func("/torus-conf/equivalence", test_equivalence);
	g_test_add_func("/torus-conf/next_seed", test_next_seed);
	g_test_add_func("/torus-conf/last_wins", test_last_wins);
	g_test_add_func("/torus-conf/port_order", test_port_order);
	g_test_add_func("/torus-conf/trailing_tokens", test_trailing_tokens);
	g_test_add_func("/torus-conf/notes", test_notes);
	g_test_add_func("/torus-conf/check_seeds", test_check_seeds);
	g_test_add_func("/torus-conf/error/before_topology", test_err_before_topology);
	g_test_add_func("/torus-conf/error/topology_twice", test_err_topology_twice);
	g_test_add_func("/torus-conf/error/keyword", test_err_keyword);
	g_test_add_func("/torus-conf/error/radix", test_err_radix);
	g_test_add_func("/torus-conf/error/guid", test_err_guid);
	g_test_add_func("/torus-conf/error/from_switch", test_err_from_switch);
	g_test_add_func("/torus-conf/error/dateline", test_err_dateline);
	g_test_add_func("/torus-conf/error/portgroup", test_err_portgroup);
	g_test_add_func("/torus-conf/error/port_order", test_err_port_order);
	g_test_add_func("/torus-conf/error/max_changes", test_err_max_changes);
	g_test_add_func("/torus-conf/error/bytes", test_err_bytes);
	g_test_add_func("/torus-conf/corpus_examples", test_corpus_examples);
	return g_test_run();
}
