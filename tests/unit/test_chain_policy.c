/* test_chain_policy.c - the routing chain policy parsers (policy/topo_parse.c,
 * policy/chain_parse.c): the topology and chain examples of the Mellanox/NVIDIA manuals ("Routing
 * Chains") with the meaning they give, the grammar's choices (comments, case, defaults, id order,
 * fallbacks named before they are defined), one test per error class with its exact FILE:LINE:COL
 * message, the check of the two files against port groups and the LMC, and the keys a step's
 * configuration file may set. */
#include <glib.h>
#include <string.h>
#include "policy/chain_policy.h"

/* ---- helpers ---------------------------------------------------------------------------- */

static struct topo_policy *topo_ok(const char *s)
{
	GError *err = NULL;
	struct topo_policy *t = topo_policy_parse_text(s, strlen(s), "t.topo", &err);
	g_assert_no_error(err);
	g_assert_nonnull(t);
	g_assert_cmpstr(t->source, ==, "t.topo");
	return t;
}

static void topo_error(const char *s, const char *msg)
{
	GError *err = NULL;
	struct topo_policy *t = topo_policy_parse_text(s, strlen(s), "t.topo", &err);
	g_assert_null(t);
	g_assert_error(err, TOPO_POLICY_ERROR, TOPO_POLICY_ERROR_SYNTAX);
	g_assert_cmpstr(err->message, ==, msg);
	g_error_free(err);
}

static struct chain_policy *chain_ok(const char *s)
{
	GError *err = NULL;
	struct chain_policy *c = chain_policy_parse_text(s, strlen(s), "t.rch", &err);
	g_assert_no_error(err);
	g_assert_nonnull(c);
	g_assert_cmpstr(c->source, ==, "t.rch");
	return c;
}

static void chain_error(const char *s, const char *msg)
{
	GError *err = NULL;
	struct chain_policy *c = chain_policy_parse_text(s, strlen(s), "t.rch", &err);
	g_assert_null(c);
	g_assert_error(err, CHAIN_POLICY_ERROR, CHAIN_POLICY_ERROR_SYNTAX);
	g_assert_cmpstr(err->message, ==, msg);
	g_error_free(err);
}

static const struct topo_def *topo_at(const struct topo_policy *t, guint i)
{
	g_assert_cmpuint(i, <, t->topologies->len);
	return t->topologies->pdata[i];
}

static const struct chain_step *step_at(const struct chain_policy *c, guint i)
{
	g_assert_cmpuint(i, <, c->steps->len);
	return c->steps->pdata[i];
}

static void check_notes(const GPtrArray *notes, const char *const *want)
{
	guint n = 0;
	while (want[n])
		n++;
	for (guint i = 0; i < notes->len && i < n; i++)
		g_assert_cmpstr(notes->pdata[i], ==, want[i]);
	g_assert_cmpuint(notes->len, ==, n);
}

/* A step's first lines: "unicast-step\nid: N\nengine: minhop\n" around more qualifiers. */
#define STEP(id, more) "unicast-step\nid: " #id "\nengine: minhop\n" more "end-unicast-step\n"

/* ---- the manuals' examples -------------------------------------------------------------- */

/* The manuals' topology example: id 1, sw-grp ys_switches, hca-grp ys_hosts. */
static void test_topo_example(void)
{
	struct topo_policy *t = topo_ok("topology\n"
					"id: 1\n"
					"sw-grp: ys_switches\n"
					"hca-grp: ys_hosts\n"
					"end-topology\n");
	g_assert_cmpuint(t->topologies->len, ==, 1);
	const struct topo_def *d = topo_at(t, 0);
	g_assert_cmpuint(d->id, ==, 1);
	g_assert_cmpstr(d->sw_grp, ==, "ys_switches");
	g_assert_cmpstr(d->hca_grp, ==, "ys_hosts");
	g_assert_cmpuint(d->line, ==, 1);
	g_assert_cmpuint(d->at[TOPO_Q_ID].line, ==, 2);
	g_assert_cmpuint(d->at[TOPO_Q_ID].col, ==, 5);
	g_assert_cmpuint(d->at[TOPO_Q_SW_GRP].line, ==, 3);
	g_assert_cmpuint(d->at[TOPO_Q_SW_GRP].col, ==, 9);
	g_assert_cmpuint(d->at[TOPO_Q_HCA_GRP].line, ==, 4);
	g_assert_cmpuint(d->at[TOPO_Q_HCA_GRP].col, ==, 10);
	g_assert_true(topo_policy_find(t, 1) == d);
	g_assert_null(topo_policy_find(t, 0));
	g_assert_null(topo_policy_find(t, 2));
	g_assert_cmpuint(t->notes->len, ==, 0);
	topo_policy_free(t);
}

/* The manuals' qualifier examples put together, with NVIDIA's fallback example (engine 2
 * runs ftree, engine 3 running minhop is its fallback): step 1 routes the whole fabric (no
 * topology given), step 2 topology 1 at LID offset 1 ("Path-bit: 1", as the manual writes it). */
static void test_chain_example(void)
{
	struct chain_policy *c = chain_ok("unicast-step\n"
					  "id: 1\n"
					  "engine: minhop\n"
					  "end-unicast-step\n"
					  "\n"
					  "unicast-step\n"
					  "id: 2\n"
					  "engine: ftree\n"
					  "use: ftree routing for for yellow stone nodes\n"
					  "config: /etc/config/opensm2.cfg\n"
					  "topology: 1\n"
					  "Path-bit: 1\n"
					  "end-unicast-step\n"
					  "\n"
					  "unicast-step\n"
					  "id: 3\n"
					  "engine: minhop\n"
					  "topology: 1\n"
					  "fallback-to: 2\n"
					  "path-bit: 1\n"
					  "end-unicast-step\n");
	g_assert_cmpuint(c->steps->len, ==, 3);
	const struct chain_step *s1 = step_at(c, 0), *s2 = step_at(c, 1), *s3 = step_at(c, 2);
	g_assert_cmpuint(s1->id, ==, 1);
	g_assert_cmpstr(s1->engine, ==, "minhop");
	g_assert_cmpstr(s1->use, ==, "");
	g_assert_null(s1->config);
	g_assert_cmpuint(s1->topology, ==, 0);
	g_assert_cmpuint(s1->fallback_to, ==, 0);
	g_assert_cmpuint(s1->path_bit, ==, 0);
	g_assert_cmpuint(s1->line, ==, 1);
	g_assert_cmpuint(s1->at[CHAIN_Q_TOPOLOGY].line, ==, 0);
	g_assert_cmpuint(s1->at[CHAIN_Q_PATH_BIT].line, ==, 0);
	g_assert_null(s1->fallback);

	g_assert_cmpuint(s2->id, ==, 2);
	g_assert_cmpstr(s2->engine, ==, "ftree");
	g_assert_cmpstr(s2->use, ==, "ftree routing for for yellow stone nodes");
	g_assert_cmpstr(s2->config, ==, "/etc/config/opensm2.cfg");
	g_assert_cmpuint(s2->topology, ==, 1);
	g_assert_cmpuint(s2->path_bit, ==, 1);
	g_assert_cmpuint(s2->fallback_to, ==, 0);
	g_assert_true(s2->fallback == s3);
	g_assert_cmpuint(s2->line, ==, 6);
	g_assert_cmpuint(s2->at[CHAIN_Q_CONFIG].line, ==, 10);
	g_assert_cmpuint(s2->at[CHAIN_Q_CONFIG].col, ==, 9);
	g_assert_cmpuint(s2->at[CHAIN_Q_PATH_BIT].line, ==, 12);
	g_assert_cmpuint(s2->at[CHAIN_Q_PATH_BIT].col, ==, 11);

	g_assert_cmpuint(s3->fallback_to, ==, 2);
	g_assert_cmpuint(s3->topology, ==, 1);
	g_assert_null(s3->fallback);

	/* the chain as it runs: 1 then 2; 3 only in place of 2 */
	g_assert_cmpuint(c->order->len, ==, 2);
	g_assert_true(c->order->pdata[0] == s1);
	g_assert_true(c->order->pdata[1] == s2);
	g_assert_true(chain_policy_find(c, 3) == s3);
	g_assert_null(chain_policy_find(c, 4));
	g_assert_cmpuint(c->notes->len, ==, 0);
	chain_policy_free(c);
}

/* The manuals' example for the step id reads "is: 1": refused, with a hint. */
static void test_chain_example_typo(void)
{
	chain_error("unicast-step\nis: 1\nengine: minhop\nend-unicast-step\n",
		    "t.rch:2:1: unknown qualifier 'is' in a unicast-step stanza (unicast-step "
		    "knows id, engine, use, config, topology, fallback-to, path-bit) ('is: 1' in "
		    "the manuals' example means 'id: 1')");
	/* the manuals' skeleton with its placeholder line is not a policy */
	topo_error("topology\n…topology qualifiers…\nend-topology\n",
		   "t.topo:2:1: '…topology qualifiers…' is neither 'topology', 'end-topology' "
		   "nor a qualifier (qualifier: value)");
}

/* ---- the grammar ------------------------------------------------------------------------ */

/* Comments anywhere, blanks, indentation, CRLF, no final newline, any case, "name : value",
 * leading zeros, several topologies in file order. */
static void test_topo_grammar(void)
{
	struct topo_policy *t = topo_ok("# topologies of the yellow stone cluster\r\n"
					"\r\n"
					"  TOPOLOGY   # the first\r\n"
					"\tid : 007\r\n"
					"\tSW-Grp:ys_switches   \r\n"
					"\thca-grp:   ys hosts  # trailing comment\r\n"
					"  end-topology\r\n"
					"topology\n"
					"hca-grp: h2\n"
					"sw-grp: s2\n"
					"id: 4294967295\n"
					"End-Topology");
	g_assert_cmpuint(t->topologies->len, ==, 2);
	const struct topo_def *a = topo_at(t, 0), *b = topo_at(t, 1);
	g_assert_cmpuint(a->id, ==, 7);
	g_assert_cmpstr(a->sw_grp, ==, "ys_switches");
	g_assert_cmpstr(a->hca_grp, ==, "ys hosts");
	g_assert_cmpuint(a->line, ==, 3);
	g_assert_cmpuint(a->at[TOPO_Q_ID].col, ==, 7);
	g_assert_cmpuint(a->at[TOPO_Q_SW_GRP].col, ==, 9);
	g_assert_cmpuint(a->at[TOPO_Q_HCA_GRP].col, ==, 13);
	g_assert_cmpuint(b->id, ==, G_MAXUINT32);
	g_assert_cmpstr(b->sw_grp, ==, "s2");
	g_assert_cmpstr(b->hca_grp, ==, "h2");
	g_assert_cmpuint(b->line, ==, 8);
	topo_policy_free(t);

	/* an empty file (or only comments) holds no topology: a note */
	t = topo_ok("# nothing yet\n\n");
	g_assert_cmpuint(t->topologies->len, ==, 0);
	const char *const want[] = { "t.topo:1:1: no topology in the file: only topology 0, the "
				     "whole fabric, exists", NULL };
	check_notes(t->notes, want);
	topo_policy_free(t);
}

/* Defaults, an empty use, explicit zeros, case, and a step that names a fallback further down. */
static void test_chain_grammar(void)
{
	struct chain_policy *c = chain_ok("Unicast-Step\n"
					  "  ID: 1\n"
					  "  Engine: updn\n"
					  "  use:\n"
					  "  topology: 0\n"
					  "  path-bit: 0   # the first step's\n"
					  "END-UNICAST-STEP\n"
					  "unicast-step\n"
					  "  id: 2\n"
					  "  engine: ftree\n"
					  "  topology: 5\n"
					  "end-unicast-step\n"
					  "unicast-step\n"
					  "  id: 3\n"
					  "  engine: minhop\n"
					  "  fallback-to: 2\n"
					  "  topology: 5\n"
					  "end-unicast-step\n");
	const struct chain_step *s1 = step_at(c, 0), *s2 = step_at(c, 1), *s3 = step_at(c, 2);
	g_assert_cmpstr(s1->engine, ==, "updn");
	g_assert_cmpstr(s1->use, ==, "");
	g_assert_cmpuint(s1->at[CHAIN_Q_USE].line, ==, 4);
	g_assert_cmpuint(s1->at[CHAIN_Q_TOPOLOGY].line, ==, 5);
	g_assert_cmpuint(s1->at[CHAIN_Q_PATH_BIT].line, ==, 6);
	g_assert_cmpuint(s1->path_bit, ==, 0);
	g_assert_true(s2->fallback == s3);
	g_assert_cmpuint(c->order->len, ==, 2);
	chain_policy_free(c);

	/* fallback-to naming a step defined later in the file */
	c = chain_ok(STEP(1, "") STEP(3, "fallback-to: 2\ntopology: 4\n")
		     "unicast-step\nid: 2\nengine: ftree\ntopology: 4\nend-unicast-step\n");
	g_assert_true(chain_policy_find(c, 2)->fallback == chain_policy_find(c, 3));
	g_assert_cmpuint(c->order->len, ==, 2);
	g_assert_cmpuint(((const struct chain_step *)c->order->pdata[1])->id, ==, 2);
	const char *const want[] = { "t.rch:12:5: steps are taken in ascending id order, not in "
				     "file order: step 2 (line 11) comes before step 3 (line 5)",
				     NULL };
	check_notes(c->notes, want);
	chain_policy_free(c);

	/* a value may hold blanks; a config path is kept as written */
	c = chain_ok(STEP(1, "config:  my dir/step 1.conf \nuse: a b  c\n"));
	g_assert_cmpstr(step_at(c, 0)->config, ==, "my dir/step 1.conf");
	g_assert_cmpstr(step_at(c, 0)->use, ==, "a b  c");
	chain_policy_free(c);
}

/* Steps run by ascending id, whatever the file order; the lowest id is the first step. */
static void test_chain_order(void)
{
	struct chain_policy *c = chain_ok(STEP(20, "topology: 2\n") STEP(5, "")
					  STEP(10, "path-bit: 3\n"));
	g_assert_cmpuint(c->order->len, ==, 3);
	g_assert_cmpuint(((const struct chain_step *)c->order->pdata[0])->id, ==, 5);
	g_assert_cmpuint(((const struct chain_step *)c->order->pdata[1])->id, ==, 10);
	g_assert_cmpuint(((const struct chain_step *)c->order->pdata[2])->id, ==, 20);
	g_assert_cmpuint(step_at(c, 0)->id, ==, 20);      /* steps stay in file order */
	const char *const want[] = { "t.rch:7:5: steps are taken in ascending id order, not in "
				     "file order: step 5 (line 6) comes before step 20 (line 1)",
				     NULL };
	check_notes(c->notes, want);
	chain_policy_free(c);
}

/* What is read with a note: an engine NVIDIA's SM would not take; a fallback routing another
 * part of the fabric than the step it replaces. */
static void test_chain_notes(void)
{
	struct chain_policy *c = chain_ok("unicast-step\nid: 1\nengine: dor\nend-unicast-step\n"
					  STEP(2, "topology: 1\n")
					  "unicast-step\nid: 3\nengine: torus-2QoS\n"
					  "fallback-to: 2\nend-unicast-step\n");
	const char *const want[] = {
		"t.rch:3:9: engine 'dor': NVIDIA's SM takes only minhop, ftree and updn in a "
		"chain; ibsm takes any engine plugin (loaded when the chain is built)",
		"t.rch:12:9: engine 'torus-2QoS': NVIDIA's SM takes only minhop, ftree and updn "
		"in a chain; ibsm takes any engine plugin (loaded when the chain is built)",
		"t.rch:13:14: step 3, the fallback of step 2, routes topology 0 at path bit 0, and "
		"step 2 topology 1 at path bit 0: when step 2 fails, another part of the fabric is "
		"routed in its place",
		NULL };
	check_notes(c->notes, want);
	g_assert_cmpstr(step_at(c, 2)->engine, ==, "torus-2QoS");
	chain_policy_free(c);
}

/* ---- errors of both files: the stanza grammar ------------------------------------------- */

static void test_err_structure(void)
{
	topo_error("id: 1\n", "t.topo:1:1: 'id:' outside a topology stanza (topology ... "
		   "end-topology)");
	topo_error("topology\nid: 1\nsw-grp: s\nhca-grp: h\nend-topology\n  sw-grp: x\n",
		   "t.topo:6:3: 'sw-grp:' outside a topology stanza (topology ... end-topology)");
	topo_error("topology\nid: 1\ntopology\n",
		   "t.topo:3:1: 'topology' inside the topology stanza opened on line 1: "
		   "'end-topology' is missing before it");
	topo_error("# x\n end-topology\n", "t.topo:2:2: 'end-topology' without a 'topology' "
		   "before it");
	topo_error("\n  topology\nid: 1\nsw-grp: s\nhca-grp: h\n",
		   "t.topo:2:3: the topology stanza opened here is not closed: 'end-topology' is "
		   "missing");
	topo_error("topology 1\n", "t.topo:1:10: 'topology' stands alone on its line");
	topo_error("topology\nid: 1\nsw-grp: s\nhca-grp: h\nend-topology x\n",
		   "t.topo:5:14: 'end-topology' stands alone on its line");
	topo_error("garbage here\n", "t.topo:1:1: 'garbage here' is neither 'topology', "
		   "'end-topology' nor a qualifier (qualifier: value)");
	topo_error("topology\nid 1\n", "t.topo:2:3: 'id' wants a ':' after it (qualifier: value)");
	topo_error("topology\n : x\n", "t.topo:2:2: ':' without a qualifier name before it");
	chain_error("unicast-step\nid: 1\nengine: minhop\n",
		    "t.rch:1:1: the unicast-step stanza opened here is not closed: "
		    "'end-unicast-step' is missing");
	chain_error("engine: minhop\n", "t.rch:1:1: 'engine:' outside a unicast-step stanza "
		    "(unicast-step ... end-unicast-step)");
	chain_error(STEP(1, "") "end-unicast-step\n", "t.rch:5:1: 'end-unicast-step' without a "
		    "'unicast-step' before it");
}

/* A stanza of another routing chain file. */
static void test_err_other_file(void)
{
	topo_error("unicast-step\nid: 1\n", "t.topo:1:1: 'unicast-step' belongs in the "
		   "rch_policy_file, not here (this file holds 'topology' stanzas)");
	chain_error("topology\nid: 1\n", "t.rch:1:1: 'topology' belongs in the topo_policy_file, "
		    "not here (this file holds 'unicast-step' stanzas)");
	/* a qualifier of this file named like the other file's stanza, without its ':' */
	chain_error("unicast-step\nid: 1\ntopology 1\n", "t.rch:3:9: 'topology' wants a ':' "
		    "after it (qualifier: value)");
	chain_error("port-group\nname: grp1\nport-guid: 0x281\nend-port-group\n",
		    "t.rch:1:1: 'port-group' belongs in the pgrp_policy_file, not here (this file "
		    "holds 'unicast-step' stanzas)");
}

static void test_err_qualifier(void)
{
	topo_error("topology\nid: 1\nuse: x\n", "t.topo:3:1: unknown qualifier 'use' in a "
		   "topology stanza (topology knows id, sw-grp, hca-grp)");
	topo_error("topology\nsw grp: s\n", "t.topo:2:1: unknown qualifier 'sw grp' in a topology "
		   "stanza (topology knows id, sw-grp, hca-grp)");
	chain_error("unicast-step\nid: 1\nsw-grp: s\n", "t.rch:3:1: unknown qualifier 'sw-grp' in "
		    "a unicast-step stanza (unicast-step knows id, engine, use, config, topology, "
		    "fallback-to, path-bit)");
	/* twice in one stanza, even with another case */
	topo_error("topology\nid: 1\nsw-grp: a\nSW-GRP: b\n", "t.topo:4:1: 'sw-grp:' given twice "
		   "in one topology stanza (first on line 3)");
	chain_error("unicast-step\nid: 1\nengine: minhop\nuse: a\nuse: b\n",
		    "t.rch:5:1: 'use:' given twice in one unicast-step stanza (first on line 4)");
	/* a value wanted; use alone may be empty */
	topo_error("topology\nid: 1\nsw-grp:   # none\n", "t.topo:3:8: 'sw-grp:' wants a value");
	chain_error("unicast-step\nid: 1\nengine: minhop\nconfig:\n",
		    "t.rch:4:8: 'config:' wants a value");
}

/* A ':' inside a value fails the policy (NVIDIA's manual). */
static void test_err_colon(void)
{
	topo_error("topology\nid: 1\nsw-grp: a:b\n", "t.topo:3:10: ':' inside the value of "
		   "'sw-grp:' (a colon only ends a qualifier's name; one qualifier per line)");
	chain_error("unicast-step\nid: 1 engine: minhop\n", "t.rch:2:13: ':' inside the value of "
		    "'id:' (a colon only ends a qualifier's name; one qualifier per line)");
	chain_error(STEP(1, "config: C:\\opensm.cfg\n"), "t.rch:4:10: ':' inside the value of "
		    "'config:' (a colon only ends a qualifier's name; one qualifier per line)");
}

static void test_err_bytes(void)
{
	static const char nul[] = "topology\nid: 1\0\n";
	GError *err = NULL;
	g_assert_null(topo_policy_parse_text(nul, sizeof(nul) - 1, "t.topo", &err));
	g_assert_cmpstr(err->message, ==, "t.topo:2:6: NUL byte in the file");
	g_clear_error(&err);
	g_assert_null(chain_policy_parse_text(nul, sizeof(nul) - 1, NULL, &err));
	g_assert_cmpstr(err->message, ==, "<rch_policy_file>:1:1: 'topology' belongs in the "
			"topo_policy_file, not here (this file holds 'unicast-step' stanzas)");
	g_clear_error(&err);
	/* NULL text is an empty file */
	struct topo_policy *t = topo_policy_parse_text(NULL, 5, NULL, &err);
	g_assert_no_error(err);
	g_assert_cmpuint(t->topologies->len, ==, 0);
	g_assert_cmpstr(t->notes->pdata[0], ==, "<topo_policy_file>:1:1: no topology in the file: "
			"only topology 0, the whole fabric, exists");
	topo_policy_free(t);
}

/* ---- errors of the topology policy ------------------------------------------------------ */

static void test_err_topo_values(void)
{
	topo_error("topology\nid: 1\nhca-grp: h\nend-topology\n", "t.topo:1:1: topology without "
		   "'sw-grp:' (id, sw-grp and hca-grp are mandatory)");
	topo_error("topology\nsw-grp: s\nhca-grp: h\nend-topology\n", "t.topo:1:1: topology "
		   "without 'id:' (id, sw-grp and hca-grp are mandatory)");
	topo_error("topology\nid: 1\nsw-grp: s\nend-topology\n", "t.topo:1:1: topology without "
		   "'hca-grp:' (id, sw-grp and hca-grp are mandatory)");
	topo_error("topology\nid: 0\nsw-grp: s\nhca-grp: h\nend-topology\n", "t.topo:2:5: "
		   "topology id 0 is the whole fabric, which is predefined: a topology of this "
		   "file has an id from 1");
	topo_error("topology\nid: 0x1\nsw-grp: s\nhca-grp: h\nend-topology\n", "t.topo:2:5: "
		   "topology id '0x1' is not a decimal number");
	topo_error("topology\nid: -1\nsw-grp: s\nhca-grp: h\nend-topology\n", "t.topo:2:5: "
		   "topology id '-1' is not a decimal number");
	topo_error("topology\nid: 4294967296\nsw-grp: s\nhca-grp: h\nend-topology\n",
		   "t.topo:2:5: topology id 4294967296 is out of range (1 to 4294967295)");
	topo_error("topology\nid: 2\nsw-grp: s\nhca-grp: h\nend-topology\n"
		   "topology\nid: 02\nsw-grp: s\nhca-grp: h\nend-topology\n",
		   "t.topo:7:5: topology id 2 is already the id of the topology on line 1");
	topo_error("topology\nid: 2\nsw-grp: s1, s2\nhca-grp: h\nend-topology\n",
		   "t.topo:3:11: sw-grp names one port group ('s1, s2' holds a ','); for several, "
		   "define a union-rule group in the port group policy");
}

/* ---- errors of the chain policy --------------------------------------------------------- */

static void test_err_step_values(void)
{
	chain_error("unicast-step\nengine: minhop\nend-unicast-step\n", "t.rch:1:1: unicast-step "
		    "without 'id:' (id and engine are mandatory)");
	chain_error("unicast-step\nid: 1\nuse: x\nend-unicast-step\n", "t.rch:1:1: unicast-step "
		    "without 'engine:' (id and engine are mandatory)");
	chain_error("unicast-step\nid: 0\nengine: minhop\nend-unicast-step\n",
		    "t.rch:2:5: step id 0: step ids start at 1");
	chain_error("unicast-step\nid: 0x10\nengine: minhop\nend-unicast-step\n",
		    "t.rch:2:5: step id '0x10' is not a decimal number");
	chain_error("unicast-step\nid: 99999999999999999999\nengine: minhop\nend-unicast-step\n",
		    "t.rch:2:5: step id 99999999999999999999 is out of range (1 to 4294967295)");
	chain_error(STEP(1, "") STEP(1, ""), "t.rch:6:5: step id 1 is already the id of the step "
		    "on line 1");
	chain_error("unicast-step\nid: 1\nengine: ../evil\nend-unicast-step\n",
		    "t.rch:3:9: engine '../evil' is not an engine name (a plugin file name without "
		    ".so: letters, digits, '_', '-', '.', '+', not starting with '.', at most 63 "
		    "bytes)");
	chain_error("unicast-step\nid: 1\nengine: up dn\nend-unicast-step\n",
		    "t.rch:3:9: engine 'up dn' is not an engine name (a plugin file name without "
		    ".so: letters, digits, '_', '-', '.', '+', not starting with '.', at most 63 "
		    "bytes)");
	chain_error(STEP(1, "topology: one\n"), "t.rch:4:11: topology 'one' is not a decimal "
		    "number");
	chain_error(STEP(1, "path-bit: 128\n"), "t.rch:4:11: path-bit 128 is out of range (0 to "
		    "127)");
	chain_error(STEP(1, "fallback-to: 1x\n"), "t.rch:4:14: fallback-to '1x' is not a decimal "
		    "number");
	chain_error("", "t.rch:1:1: no unicast-step: a routing chain has at least one step");
	chain_error("# only a comment\n", "t.rch:1:1: no unicast-step: a routing chain has at "
		    "least one step");

	/* an engine name as long as the loader takes, and one byte longer */
	char name[65];
	memset(name, 'e', 64);
	name[64] = 0;
	char *s = g_strdup_printf("unicast-step\nid: 1\nengine: %s\nend-unicast-step\n", name);
	char *msg = g_strdup_printf("t.rch:3:9: engine '%.60s' is not an engine name (a "
				    "plugin file name without .so: letters, digits, '_', '-', '.', "
				    "'+', not starting with '.', at most 63 bytes)", name);
	chain_error(s, msg);
	g_free(msg);
	g_free(s);
	name[63] = 0;
	s = g_strdup_printf("unicast-step\nid: 1\nengine: %s\nend-unicast-step\n", name);
	struct chain_policy *c = chain_ok(s);
	g_assert_cmpuint(strlen(step_at(c, 0)->engine), ==, 63);
	chain_policy_free(c);
	g_free(s);
}

static void test_err_fallback(void)
{
	chain_error(STEP(1, "") STEP(2, "fallback-to: 0\n"), "t.rch:8:14: fallback-to 0: no step "
		    "has id 0 (leave fallback-to out for a step that is not a fallback)");
	chain_error(STEP(1, "") STEP(2, "fallback-to: 7\n"), "t.rch:8:14: fallback-to 7: no "
		    "unicast-step has id 7");
	chain_error(STEP(1, "") STEP(2, "fallback-to: 2\n"), "t.rch:8:14: step 2 is named as its "
		    "own fallback");
	chain_error(STEP(1, "") STEP(2, "fallback-to: 3\n") STEP(3, "fallback-to: 2\n"),
		    "t.rch:8:14: steps 2 and 3 name each other in fallback-to: a fallback cycle");
	chain_error(STEP(1, "") STEP(2, "fallback-to: 1\n") STEP(3, "fallback-to: 2\n"),
		    "t.rch:13:14: fallback-to 2: step 2 (line 5) is itself the fallback of step 1, "
		    "and a fallback of a fallback never runs (NVIDIA's SM ignores such a step)");
	/* a longer loop is a fallback of a fallback too */
	chain_error(STEP(1, "") STEP(2, "fallback-to: 3\n") STEP(3, "fallback-to: 4\n")
		    STEP(4, "fallback-to: 2\n"), "t.rch:8:14: fallback-to 3: step 3 (line 10) is "
		    "itself the fallback of step 4, and a fallback of a fallback never runs "
		    "(NVIDIA's SM ignores such a step)");
	chain_error(STEP(1, "") STEP(2, "fallback-to: 1\n") STEP(3, "fallback-to: 1\n"),
		    "t.rch:13:14: fallback-to 1: step 1 already has a fallback, step 2 (line 5); a "
		    "step has at most one");
}

/* The first step routes the whole fabric at path bit 0 (NVIDIA's manual). */
static void test_err_first_step(void)
{
	chain_error(STEP(1, "topology: 2\n"), "t.rch:4:11: step 1 has the lowest id, so it routes "
		    "the whole fabric: topology 2 here, 0 wanted (or leave topology out)");
	chain_error(STEP(1, "path-bit: 1\n"), "t.rch:4:11: step 1 has the lowest id, so its path "
		    "bit is 0 and cannot be changed: path-bit 1 here");
	/* the lowest id, wherever it is in the file */
	chain_error(STEP(4, "") STEP(3, "topology: 1\n"), "t.rch:8:11: step 3 has the lowest id, "
		    "so it routes the whole fabric: topology 1 here, 0 wanted (or leave topology "
		    "out)");
	/* a fallback with the lowest id: the first step that runs is the next one */
	chain_error(STEP(1, "fallback-to: 3\n") STEP(2, "topology: 1\n") STEP(3, ""),
		    "t.rch:9:11: step 2 runs first (the lowest id that is not a fallback), so it "
		    "routes the whole fabric: topology 1 here, 0 wanted (or leave topology out)");
	/* the fallback of the first step would run in its place */
	chain_error(STEP(1, "") STEP(2, "fallback-to: 1\npath-bit: 2\n"),
		    "t.rch:9:11: step 2 replaces the first step when it fails, so its path bit is "
		    "0 and cannot be changed: path-bit 2 here");
	struct chain_policy *c = chain_ok(STEP(1, "fallback-to: 2\n") STEP(2, ""));
	g_assert_cmpuint(c->order->len, ==, 1);
	g_assert_cmpuint(((const struct chain_step *)c->order->pdata[0])->id, ==, 2);
	chain_policy_free(c);
}

/* ---- the two files together ------------------------------------------------------------- */

static int fake_group(const char *name, void *ctx)
{
	(*(int *)ctx)++;
	static const char *const groups[] = { "ALL", "ALL_SWITCHES", "ALL_CAS", "ALL_ROUTERS",
					      "ys_switches", "ys_hosts" };
	for (size_t i = 0; i < G_N_ELEMENTS(groups); i++)
		if (strcmp(name, groups[i]) == 0)
			return 1;
	return 0;
}

static const char topo_text[] = "topology\nid: 1\nsw-grp: ys_switches\nhca-grp: ys_hosts\n"
				"end-topology\n"
				"topology\nid: 2\nsw-grp: ALL_SWITCHES\nhca-grp: ALL_CAS\n"
				"end-topology\n";

static void expect_check(const struct chain_policy *c, const struct topo_policy *t,
			 unsigned lmc, const char *msg)
{
	GError *err = NULL;
	int calls = 0;
	int r = chain_policy_check(c, t, fake_group, &calls, lmc, &err);
	if (!msg) {
		g_assert_no_error(err);
		g_assert_cmpint(r, ==, 0);
		g_assert_cmpint(calls, ==, t ? 2 * (int)t->topologies->len : 0);
		return;
	}
	g_assert_cmpint(r, ==, -1);
	g_assert_error(err, CHAIN_POLICY_ERROR, CHAIN_POLICY_ERROR_CHECK);
	g_assert_cmpstr(err->message, ==, msg);
	g_error_free(err);
}

static void test_check(void)
{
	struct topo_policy *t = topo_ok(topo_text);
	struct chain_policy *c = chain_ok(STEP(1, "") STEP(2, "topology: 1\npath-bit: 1\n")
					  STEP(3, "topology: 2\npath-bit: 3\n"));
	expect_check(c, t, 2, NULL);
	expect_check(c, t, 7, NULL);
	expect_check(c, t, 1, "t.rch:15:11: path-bit 3 of step 3 needs lmc 2 or more in the main "
		     "configuration (a port has 2^lmc LIDs, offsets 0 to 2^lmc - 1), and lmc is 1");
	expect_check(c, t, 0, "t.rch:9:11: path-bit 1 of step 2 needs lmc 1 or more in the main "
		     "configuration (a port has 2^lmc LIDs, offsets 0 to 2^lmc - 1), and lmc is 0");
	expect_check(c, NULL, 2, "t.rch:8:11: topology 1 of step 2, but there is no "
		     "topo_policy_file: only topology 0 (the whole fabric) exists");
	chain_policy_free(c);

	/* a step naming a topology the file does not define */
	c = chain_ok(STEP(1, "") STEP(2, "topology: 3\n"));
	expect_check(c, t, 0, "t.rch:8:11: topology 3 of step 2 is not defined in t.topo");
	chain_policy_free(c);

	/* topology 0 alone needs no topology file */
	c = chain_ok(STEP(1, "") STEP(2, "topology: 0\npath-bit: 1\n"));
	expect_check(c, NULL, 1, NULL);
	topo_policy_free(t);

	/* port groups that do not exist, at the value in the topology file */
	t = topo_ok("topology\nid: 1\nsw-grp: ys_switches\nhca-grp:  nobody\nend-topology\n");
	expect_check(c, t, 1, "t.topo:4:11: hca-grp 'nobody' of topology 1 is not a port group");
	topo_policy_free(t);
	t = topo_ok("topology\nid: 1\nsw-grp: all\nhca-grp: ALL\nend-topology\n");
	expect_check(c, t, 1, "t.topo:3:9: sw-grp 'all' of topology 1 is not a port group");
	topo_policy_free(t);
	chain_policy_free(c);
}

static void test_step_keys(void)
{
	static const char *const main_only[] = { "qos", "qos_max_vls", "qos_ca_sl2vl",
						 "qos_policy_file", "lmc", "routing_engine" };
	static const char *const step_may[] = { "root_guid_file", "lmc_esp0", "qosx", "lmcx",
						"routing_engine_x", "max_reverse_hops",
						"ids_guid_file", "" };
	for (size_t i = 0; i < G_N_ELEMENTS(main_only); i++)
		g_assert_cmpint(chain_step_key_allowed(main_only[i]), ==, 0);
	for (size_t i = 0; i < G_N_ELEMENTS(step_may); i++)
		g_assert_cmpint(chain_step_key_allowed(step_may[i]), ==, 1);
	g_assert_cmpint(chain_step_key_allowed(NULL), ==, 0);
}

/* Every corpus file either parses or is refused with a message, as either file. */
static void test_corpus_examples(void)
{
	const char *dir = TEST_SRCDIR "/tests/fuzz/corpus/chain_policy";
	GDir *d = g_dir_open(dir, 0, NULL);
	g_assert_nonnull(d);
	int n = 0, topo = 0, chain = 0;
	const char *name;
	while ((name = g_dir_read_name(d))) {
		char *path = g_build_filename(dir, name, NULL), *data;
		gsize len;
		g_assert_true(g_file_get_contents(path, &data, &len, NULL));
		GError *err = NULL;
		struct topo_policy *t = topo_policy_parse_text(data, len, "c.topo", &err);
		g_assert_true((t != NULL) != (err != NULL));
		g_clear_error(&err);
		struct chain_policy *c = chain_policy_parse_text(data, len, "c.rch", &err);
		g_assert_true((c != NULL) != (err != NULL));
		g_clear_error(&err);
		topo += t && t->topologies->len;
		chain += c != NULL;
		n++;
		topo_policy_free(t);
		chain_policy_free(c);
		g_free(data);
		g_free(path);
	}
	g_dir_close(d);
	g_test_message("%d corpus files, %d topology policies, %d chains", n, topo, chain);
	g_assert_cmpint(n, >=, 20);
	g_assert_cmpint(topo, >=, 2);
	g_assert_cmpint(chain, >=, 3);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/chain-policy/example/topology", test_topo_example);
	g_test_add_func("/chain-policy/example/chain", test_chain_example);
	g_test_add_func("/chain-policy/example/typo", test_chain_example_typo);
	g_test_add_func("/chain-policy/grammar/topology", test_topo_grammar);
	g_test_add_func("/chain-policy/grammar/chain", test_chain_grammar);
	g_test_add_func("/chain-policy/order", test_chain_order);
	g_test_add_func("/chain-policy/notes", test_chain_notes);
	g_test_add_func("/chain-policy/error/structure", test_err_structure);
	g_test_add_func("/chain-policy/error/other_file", test_err_other_file);
	g_test_add_func("/chain-policy/error/qualifier", test_err_qualifier);
	g_test_add_func("/chain-policy/error/colon", test_err_colon);
	g_test_add_func("/chain-policy/error/bytes", test_err_bytes);
	g_test_add_func("/chain-policy/error/topology_values", test_err_topo_values);
	g_test_add_func("/chain-policy/error/step_values", test_err_step_values);
	g_test_add_func("/chain-policy/error/fallback", test_err_fallback);
	g_test_add_func("/chain-policy/error/first_step", test_err_first_step);
	g_test_add_func("/chain-policy/check", test_check);
	g_test_add_func("/chain-policy/step_keys", test_step_keys);
	g_test_add_func("/chain-policy/corpus_examples", test_corpus_examples);
	return g_test_run();
}
