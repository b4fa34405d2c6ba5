/* test_port_groups.c - the port groups policy file (policy/port_groups_parse.c and
 * port_groups_resolve.c): every example of NVIDIA's documents ("Defining Port Groups"), each
 * resolved over a small hand-built fabric to the ports the documents say; the reading rules
 * (wrapped lines, comments, blanks, redefinitions, forward references, which definition a
 * reference means); the predefined groups; and one test per error class with its exact
 * FILE:LINE:COL message. */
#include <glib.h>
#include <string.h>
#include "policy/port_groups.h"

/* ---- fabrics ---------------------------------------------------------------------------- */

#define SW PGRP_NODE_SWITCH
#define CA PGRP_NODE_CA
#define RT PGRP_NODE_ROUTER

/* The fabric of the manual's example: two switches, CAs on both sides of 0x282-0x286, hosts
 * server1 and kika, a router, a CA whose port GUID (not node GUID) is in the range. */
static const struct pgrp_port manual_ports[] = {
	/* 0 */ { 0x281, 0x281, 0, SW, "SW-A" },
	/* 1 */ { 0x281, 0x281, 1, SW, "SW-A" },
	/* 2 */ { 0x281, 0x281, 2, SW, "SW-A" },
	/* 3 */ { 0x281, 0x281, 3, SW, "SW-A" },
	/* 4 */ { 0x284, 0x284, 0, SW, "SW-B" },
	/* 5 */ { 0x284, 0x284, 1, SW, "SW-B" },
	/* 6 */ { 0x284, 0x284, 3, SW, "SW-B" },
	/* 7 */ { 0x282, 0x292, 1, CA, "server1 HCA-1" },
	/* 8 */ { 0x282, 0x293, 2, CA, "server1 HCA-1" },
	/* 9 */ { 0x283, 0x294, 1, CA, "kika HCA-1" },
	/* 10 */ { 0x285, 0x295, 1, CA, "kika HCA-2" },
	/* 11 */ { 0x287, 0x297, 2, CA, "kika HCA-1" },
	/* 12 */ { 0x290, 0x290, 1, RT, "rtr-1" },
	/* 13 */ { 0x300, 0x286, 1, CA, "other HCA-1" },
};

/* The fabric of the documents' examples: switches 0x283, 0x286 and 0x289 with ports 0-18
 * (index 19 * s + port), then CAs and a router (68 ports: two words of bits). */
#define DOC_SWITCH_PORTS 19
#define DOC_N 68
static struct pgrp_port doc_ports[DOC_N];

static void build_doc_fabric(void)
{
	static const uint64_t sw[3] = { 0x283, 0x286, 0x289 };
	static const char *const desc[3] = { "SW-283", "SW-286", "SW-289" };
	for (int s = 0; s < 3; s++)
		for (int p = 0; p < DOC_SWITCH_PORTS; p++)
			doc_ports[s * DOC_SWITCH_PORTS + p] = (struct pgrp_port){ sw[s], sw[s],
				(uint8_t)p, SW, desc[s] };
	static const struct pgrp_port rest[] = {
		/* 57 */ { 0x400, 0x401, 1, CA, "kuku HCA-1" },
		/* 58 */ { 0x400, 0x402, 2, CA, "kuku HCA-1" },
		/* 59 */ { 0x410, 0x411, 2, CA, "kuku HCA-2" },
		/* 60 */ { 0x420, 0x421, 1, CA, "host1 HCA-1" },
		/* 61 */ { 0x420, 0x423, 3, CA, "host1 HCA-1" },
		/* 62 */ { 0x430, 0x431, 1, CA, "host2 HCA-1" },
		/* 63 */ { 0x430, 0x432, 2, CA, "host2 HCA-1" },
		/* 64 */ { 0x440, 0x441, 1, CA, "host22 HCA-1" },
		/* 65 */ { 0x450, 0x451, 2, CA, "kuku HCA-10" },
		/* 66 */ { 0x460, 0x460, 3, RT, "SW-router" },
		/* 67 */ { 0x287, 0x288, 1, CA, NULL },
	};
	memcpy(&doc_ports[3 * DOC_SWITCH_PORTS], rest, sizeof(rest));
}

/* ---- helpers ---------------------------------------------------------------------------- */

static struct pgrp_policy *parse_ok(const char *s)
{
	GError *err = NULL;
	struct pgrp_policy *p = pgrp_policy_parse_text(s, strlen(s), "pg.conf", &err);
	g_assert_no_error(err);
	g_assert_nonnull(p);
	g_assert_cmpstr(p->source, ==, "pg.conf");
	return p;
}

static void expect_error_code(const char *s, int code, const char *msg)
{
	GError *err = NULL;
	struct pgrp_policy *p = pgrp_policy_parse_text(s, strlen(s), "pg.conf", &err);
	g_assert_null(p);
	g_assert_error(err, PGRP_POLICY_ERROR, code);
	g_assert_cmpstr(err->message, ==, msg);
	g_error_free(err);
}

static void expect_error(const char *s, const char *msg)
{
	expect_error_code(s, PGRP_POLICY_ERROR_SYNTAX, msg);
}

static void expect_ref_error(const char *s, const char *msg)
{
	expect_error_code(s, PGRP_POLICY_ERROR_REFERENCE, msg);
}

/* The set as a list "1,2,3" of port indexes. */
static char *set_str(const struct pgrp_resolved *r, const uint64_t *set, size_t n)
{
	GString *s = g_string_new(NULL);
	g_assert_nonnull(set);
	for (size_t i = 0; i < pgrp_resolved_words(r) * 64; i++) {
		if (!pgrp_set_has(set, i))
			continue;
		g_assert_cmpuint(i, <, n);        /* no bit past the last port */
		g_string_append_printf(s, "%s%zu", s->len ? "," : "", i);
	}
	return g_string_free(s, FALSE);
}

static void check_group(const struct pgrp_resolved *r, const char *name, size_t n,
			const char *want)
{
	char *got = set_str(r, pgrp_resolved_group(r, name), n);
	if (strcmp(got, want) != 0)
		g_test_message("group %s: got %s, want %s", name, got, want);
	g_assert_cmpstr(got, ==, want);
	g_free(got);
}

/* Parses s and checks that group name holds exactly want over the doc fabric. */
static void doc_group(const char *s, const char *name, const char *want)
{
	struct pgrp_policy *p = parse_ok(s);
	struct pgrp_resolved *r = pgrp_policy_resolve(p, doc_ports, DOC_N);
	check_group(r, name, DOC_N, want);
	pgrp_resolved_free(r);
	pgrp_policy_free(p);
}

/* "a,a+1,...,b" */
static char *span(size_t a, size_t b)
{
	GString *s = g_string_new(NULL);
	for (size_t i = a; i <= b; i++)
		g_string_append_printf(s, "%s%zu", s->len ? "," : "", i);
	return g_string_free(s, FALSE);
}

static void check_note(const struct pgrp_policy *p, guint i, const char *msg)
{
	g_assert_cmpuint(i, <, p->notes->len);
	g_assert_cmpstr(p->notes->pdata[i], ==, msg);
}

static const struct pgrp_group *group(const struct pgrp_policy *p, guint i)
{
	g_assert_cmpuint(i, <, p->groups->len);
	return p->groups->pdata[i];
}

static const struct pgrp_rule *rule(const struct pgrp_group *g, guint i)
{
	g_assert_cmpuint(i, <, g->rules->len);
	return g->rules->pdata[i];
}

/* ---- the manual's example --------------------------------------------------------------- */

/* NVIDIA's example as the manual's PDF edition prints it: lines wrapped inside values. */
static const char manual_example[] =
	"port-group\n"
	"name: grp3\n"
	"use: Subtract of groups grp1 and grp2\n"
	"subtract-rule: grp1, grp2\n"
	"end-port-group\n"
	"port-group\n"
	"name: grp1\n"
	"port-guid: 0x281\n"
	", 0x282\n"
	", 0x283\n"
	"end-port-group\n"
	"port-group\n"
	"name: grp2\n"
	"port-guid-range: 0x282\n"
	"-0x286\n"
	"port-name: hostname=server1 port=1\n"
	"end-port-group\n"
	"port-group\n"
	"name: grp4\n"
	"port-name: hostname=kika port=1\n"
	"hca_idx=1\n"
	"end-port-group\n"
	"port-group\n"
	"name: grp3\n"
	"union-rule: grp3, grp4\n"
	"end-port-group\n";

static void test_manual_example_model(void)
{
	struct pgrp_policy *p = parse_ok(manual_example);
	g_assert_cmpuint(p->groups->len, ==, 5);
	const struct pgrp_group *g3a = group(p, 0), *g1 = group(p, 1), *g2 = group(p, 2),
				*g4 = group(p, 3), *g3 = group(p, 4);
	g_assert_cmpstr(g3a->name, ==, "grp3");
	g_assert_cmpstr(g3a->use, ==, "Subtract of groups grp1 and grp2");
	g_assert_cmpuint(g3a->line, ==, 1);
	g_assert_cmpint(g3a->previous, ==, -1);
	g_assert_false(g3a->final);
	const struct pgrp_rule *r = rule(g3a, 0);
	g_assert_cmpint(r->kind, ==, PGRP_RULE_SUBTRACT);
	g_assert_cmpstr(r->ref[0].name, ==, "grp1");
	g_assert_cmpstr(r->ref[1].name, ==, "grp2");
	g_assert_cmpint(r->ref[0].group, ==, 1);  /* forward references */
	g_assert_cmpint(r->ref[1].group, ==, 2);
	g_assert_cmpuint(r->ref[1].line, ==, 4);
	g_assert_cmpuint(r->ref[1].col, ==, 22);

	g_assert_cmpstr(g1->use, ==, "");
	r = rule(g1, 0);
	g_assert_cmpint(r->kind, ==, PGRP_RULE_PORT_GUID);
	g_assert_cmpuint(r->guids->len, ==, 3);
	g_assert_cmphex(g_array_index(r->guids, struct pgrp_guid, 2).guid, ==, 0x283);
	g_assert_true(g_array_index(r->guids, struct pgrp_guid, 2).all_ports);
	g_assert_cmpuint(g_array_index(r->guids, struct pgrp_guid, 2).line, ==, 10);
	g_assert_cmpuint(g_array_index(r->guids, struct pgrp_guid, 2).col, ==, 3);

	g_assert_cmpuint(g2->rules->len, ==, 2);
	r = rule(g2, 0);
	g_assert_cmpint(r->kind, ==, PGRP_RULE_GUID_RANGE);
	g_assert_cmphex(r->lo, ==, 0x282);
	g_assert_cmphex(r->hi, ==, 0x286);
	r = rule(g2, 1);
	g_assert_cmpint(r->kind, ==, PGRP_RULE_PORT_NAME);
	g_assert_cmpuint(r->names->len, ==, 1);
	const struct pgrp_name *e = &g_array_index(r->names, struct pgrp_name, 0);
	g_assert_cmpstr(e->hostname, ==, "server1");
	g_assert_cmpint(e->port, ==, 1);
	g_assert_cmpint(e->hca_idx, ==, -1);

	e = &g_array_index(rule(g4, 0)->names, struct pgrp_name, 0);
	g_assert_cmpstr(e->hostname, ==, "kika");
	g_assert_cmpint(e->port, ==, 1);
	g_assert_cmpint(e->hca_idx, ==, 1);       /* from the wrapped line */

	g_assert_cmpint(g3->previous, ==, 0);
	g_assert_true(g3->final);
	r = rule(g3, 0);
	g_assert_cmpint(r->kind, ==, PGRP_RULE_UNION);
	g_assert_cmpint(r->ref[0].group, ==, 0);  /* its own name: the definition before */
	g_assert_cmpint(r->ref[1].group, ==, 3);
	g_assert_true(pgrp_policy_find(p, "grp3") == g3);
	g_assert_null(pgrp_policy_find(p, "ALL"));
	g_assert_true(pgrp_policy_has(p, "grp3"));
	g_assert_true(pgrp_policy_has(p, "ALL_ROUTERS"));
	g_assert_false(pgrp_policy_has(p, "grp5"));
	g_assert_false(pgrp_policy_has(p, "all"));
	g_assert_true(pgrp_policy_has(NULL, "ALL"));
	g_assert_cmpuint(p->notes->len, ==, 1);
	check_note(p, 0, "pg.conf:24:7: port group 'grp3' defined again (before on line 1): this "
		   "definition replaces it, and 'grp3' inside it means the one before");
	/* the evaluation order: grp1 and grp2 before the first grp3, which is before the last */
	g_assert_cmpuint(p->order->len, ==, 5);
	int seen_at[5];
	for (guint k = 0; k < 5; k++)
		seen_at[g_array_index(p->order, int, k)] = (int)k;
	g_assert_cmpint(seen_at[1], <, seen_at[0]);
	g_assert_cmpint(seen_at[2], <, seen_at[0]);
	g_assert_cmpint(seen_at[0], <, seen_at[4]);
	g_assert_cmpint(seen_at[3], <, seen_at[4]);
	pgrp_policy_free(p);
}

static void test_manual_example_ports(void)
{
	size_t n = G_N_ELEMENTS(manual_ports);
	struct pgrp_policy *p = parse_ok(manual_example);
	struct pgrp_resolved *r = pgrp_policy_resolve(p, manual_ports, n);
	/* grp1: switch 0x281 (all its ports), CA 0x282 (both ports), CA 0x283 */
	check_group(r, "grp1", n, "0,1,2,3,7,8,9");
	/* grp2: node GUIDs 0x282-0x286, the CA whose port GUID is 0x286, server1 port 1 */
	check_group(r, "grp2", n, "4,5,6,7,8,9,10,13");
	/* kika HCA-1 port 1 only: not HCA-2, not the other kika HCA-1's port 2 */
	check_group(r, "grp4", n, "9");
	/* grp3 = (grp1 - grp2) + grp4 */
	check_group(r, "grp3", n, "0,1,2,3,9");
	char *first = set_str(r, pgrp_resolved_definition(r, 0), n);
	g_assert_cmpstr(first, ==, "0,1,2,3");
	g_free(first);
	g_assert_null(pgrp_resolved_definition(r, 5));
	check_group(r, "ALL", n, "0,1,2,3,4,5,6,7,8,9,10,11,12,13");
	check_group(r, "ALL_SWITCHES", n, "0,1,2,3,4,5,6");
	check_group(r, "ALL_CAS", n, "7,8,9,10,11,13");
	check_group(r, "ALL_ROUTERS", n, "12");
	g_assert_null(pgrp_resolved_group(r, "grp5"));
	g_assert_cmpuint(pgrp_resolved_count(r, pgrp_resolved_group(r, "grp3")), ==, 5);
	pgrp_resolved_free(r);
	pgrp_policy_free(p);
}

/* The same example with its lines joined again (as the English manuals print it) means the
 * same: the wrapped lines really are continuations. */
static void test_manual_example_unwrapped(void)
{
	static const char joined[] =
		"port-group\nname: grp3\nuse: Subtract of groups grp1 and grp2\n"
		"subtract-rule: grp1, grp2\nend-port-group\n"
		"port-group\nname: grp1\nport-guid: 0x281, 0x282, 0x283\nend-port-group\n"
		"port-group\nname: grp2\nport-guid-range: 0x282-0x286\n"
		"port-name: hostname=server1 port=1\nend-port-group\n"
		"port-group\nname: grp4\nport-name: hostname=kika port=1 hca_idx=1\n"
		"end-port-group\n"
		"port-group\nname: grp3\nunion-rule: grp3, grp4\nend-port-group\n";
	size_t n = G_N_ELEMENTS(manual_ports);
	struct pgrp_policy *a = parse_ok(manual_example), *b = parse_ok(joined);
	struct pgrp_resolved *ra = pgrp_policy_resolve(a, manual_ports, n);
	struct pgrp_resolved *rb = pgrp_policy_resolve(b, manual_ports, n);
	static const char *const names[] = { "grp1", "grp2", "grp3", "grp4" };
	for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
		char *x = set_str(ra, pgrp_resolved_group(ra, names[i]), n);
		char *y = set_str(rb, pgrp_resolved_group(rb, names[i]), n);
		g_assert_cmpstr(x, ==, y);
		g_free(x);
		g_free(y);
	}
	pgrp_resolved_free(ra);
	pgrp_resolved_free(rb);
	pgrp_policy_free(a);
	pgrp_policy_free(b);
}

/* ---- the documents' examples ------------------------------------------------------------ */

#define G(body) "port-group\nname: g\n" body "\nend-port-group\n"

static void test_doc_port_guid(void)
{
	doc_group(G("port-guid: 0x283@3"), "g", "3");
	doc_group(G("port-guid: 0x286@1/5/7"), "g", "20,24,26");
	doc_group(G("port-guid: 0x289@2-5"), "g", "40,41,42,43");
	doc_group(G("port-guid: 0x289@2-5/7/9-13/18"), "g", "40,41,42,43,45,47,48,49,50,51,56");
	char *sw286 = span(19, 37);
	char *want = g_strdup_printf("5,6,7,8,12,14,%s,44,46,50", sw286);
	/* the old manual's complex rule, its "0x289/6/8/12" written with '@' */
	doc_group(G("port-guid: 0x283@5-8/12/14, 0x286, 0x289@6/8/12"), "g", want);
	g_free(want);
	g_free(sw286);
	char *all_sw = span(0, 56);
	doc_group(G("port-guid: 0x283,\n0x286, 0x289"), "g", all_sw);
	doc_group(G("port-guid: 0x283 , 0x286 ,0x289"), "g", all_sw);
	/* decimal GUIDs; blanks around '@', '/' and '-' */
	doc_group(G("port-guid: 643 @ 2 - 3 / 5"), "g", "2,3,5");
	/* a CA's node GUID: all its ports; a CA's port GUID: that port; ports filter both */
	doc_group(G("port-guid: 0x400"), "g", "57,58");
	doc_group(G("port-guid: 0x402"), "g", "58");
	doc_group(G("port-guid: 0x400@2"), "g", "58");
	doc_group(G("port-guid: 0x401@2"), "g", "");
	/* a switch's port 0 */
	doc_group(G("port-guid: 0x286@0"), "g", "19");
	/* a GUID nobody has */
	doc_group(G("port-guid: 0xdead"), "g", "");
	g_free(all_sw);
}

static void test_doc_port_guid_merge(void)
{
	struct pgrp_policy *p = parse_ok(G("port-guid: 0x283@1, 0x286, 0x283@2-3"));
	const struct pgrp_rule *r = rule(group(p, 0), 0);
	g_assert_cmpuint(r->guids->len, ==, 2);
	const struct pgrp_guid *x = &g_array_index(r->guids, struct pgrp_guid, 0);
	g_assert_false(x->all_ports);
	g_assert_true(pgrp_port_set_has(&x->ports, 1));
	g_assert_true(pgrp_port_set_has(&x->ports, 3));
	g_assert_false(pgrp_port_set_has(&x->ports, 4));
	check_note(p, 0, "pg.conf:3:28: GUID 0x283 listed again in this port-guid (first at line 3 "
		   "column 12): its ports are merged");
	pgrp_policy_free(p);
	/* with one of them without ports: all ports */
	doc_group(G("port-guid: 0x283@1, 0x283"), "g", "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,"
		  "17,18");
}

static void test_doc_guid_range(void)
{
	char *want = g_strdup_printf("%s,67", "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,"
				     "20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,"
				     "40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56");
	doc_group(G("port-guid-range: 0x283-0x289"), "g", want);
	doc_group(G("port-guid-range: 0x283 - 0x289"), "g", want);
	g_free(want);
	doc_group(G("port-guid-range: 0x401-0x401"), "g", "57");
	/* several ranges: several qualifiers */
	doc_group(G("port-guid-range: 0x283-0x283\nport-guid-range: 0x440-0x450"), "g",
		  "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,64,65");
}

static void test_doc_port_name(void)
{
	/* kuku HCA-1 port 2; host1 port 3 (any HCA); host2 every port; not host22, not
	 * kuku HCA-2 nor HCA-10 */
	doc_group(G("port-name: hostname=kuku; port=2; hca_idx=1 , hostname=host1; port=3, "
		    "hostname=host2"), "g", "58,61,62,63");
	doc_group(G("port-name: hostname=kuku; port=2;\nhca_idx=1"), "g", "58");
	doc_group(G("port-name: hostname=kuku"), "g", "57,58,59,65");
	doc_group(G("port-name: hostname=kuku hca_idx=10"), "g", "65");
	doc_group(G("port-name: hca_idx=2 ; hostname = kuku"), "g", "59");
	/* not for switches (even with a matching first word), routers yes */
	doc_group(G("port-name: hostname=SW-283"), "g", "");
	doc_group(G("port-name: hostname=SW-router port=3"), "g", "66");
}

static void test_doc_node_name(void)
{
	char *sw = span(0, 56);
	char *want = g_strdup_printf("%s,66", sw);
	doc_group(G("node-name: SW.*"), "g", want);
	doc_group(G("node-name: ^SW"), "g", want);
	doc_group(G("node-name: SW.*@3"), "g", "3,22,41,66");
	doc_group(G("node-name: SW.* @ 3"), "g", "3,22,41,66");
	char *two = span(0, 37);
	doc_group(G("node-name: SW-28[36]"), "g", two);
	g_free(two);
	/* anchored at the start only */
	doc_group(G("node-name: router"), "g", "");
	doc_group(G("node-name: .*router"), "g", "66");
	doc_group(G("node-name: .*HCA-1$"), "g", "57,58,60,61,62,63,64");
	/* an '@' not followed by digits alone belongs to the expression */
	doc_group(G("node-name: a@b|kuku"), "g", "57,58,59,65");
	/* a NULL description reads as "" */
	doc_group(G("node-name: $"), "g", "67");
	g_free(want);
	g_free(sw);
	struct pgrp_policy *p = parse_ok(G("node-name: SW.*@3"));
	const struct pgrp_rule *r = rule(group(p, 0), 0);
	g_assert_cmpstr(r->pattern, ==, "SW.*");
	g_assert_cmpint(r->port, ==, 3);
	pgrp_policy_free(p);
	/* the older manuals' name */
	p = parse_ok(G("port-regexp: SW.*"));
	g_assert_cmpint(rule(group(p, 0), 0)->kind, ==, PGRP_RULE_NODE_NAME);
	check_note(p, 0, "pg.conf:3:1: 'port-regexp:' is the older manuals' name of 'node-name:': "
		   "read as node-name");
	pgrp_policy_free(p);
}

static void test_doc_union_subtract(void)
{
	static const char base[] =
		"port-group\nname: grp1\nport-guid: 0x283, 0x400\nend-port-group\n"
		"port-group\nname: grp2\nport-guid: 0x283@0-17, 0x430\nend-port-group\n";
	char *s = g_strdup_printf("%sport-group\nname: u\nunion-rule: grp1, grp2\nend-port-group\n"
				  "port-group\nname: d\nsubtract-rule: grp1, grp2\nend-port-group\n"
				  "port-group\nname: r\nsubtract-rule: grp2, grp1\n"
				  "end-port-group\n", base);
	char *sw = span(0, 18);
	char *u = g_strdup_printf("%s,57,58,62,63", sw);
	doc_group(s, "u", u);
	doc_group(s, "d", "18,57,58");      /* order matters */
	doc_group(s, "r", "62,63");
	g_free(u);
	g_free(sw);
	g_free(s);
	/* groups of groups, and the predefined groups */
	doc_group("port-group\nname: a\nsubtract-rule: ALL, ALL_SWITCHES\nend-port-group\n"
		  "port-group\nname: b\nsubtract-rule: a, ALL_ROUTERS\nend-port-group\n"
		  "port-group\nname: c\nunion-rule: b, ALL_ROUTERS\nend-port-group\n",
		  "b", "57,58,59,60,61,62,63,64,65,67");
	doc_group("port-group\nname: c\nsubtract-rule: ALL_CAS, b\nend-port-group\n"
		  "port-group\nname: b\nport-name: hostname=kuku\nend-port-group\n",
		  "c", "60,61,62,63,64,67");
}

/* A group with several rules is the union of its rules; use is kept. */
static void test_several_rules(void)
{
	struct pgrp_policy *p = parse_ok("port-group\nname: mixed\nuse: first port group\n"
					 "port-guid: 0x283@1\nport-name: hostname=host2 port=2\n"
					 "node-name: SW-router\nport-guid-range: 0x287-0x287\n"
					 "end-port-group\n");
	g_assert_cmpstr(group(p, 0)->use, ==, "first port group");
	g_assert_cmpuint(group(p, 0)->rules->len, ==, 4);
	struct pgrp_resolved *r = pgrp_policy_resolve(p, doc_ports, DOC_N);
	check_group(r, "mixed", DOC_N, "1,63,66,67");
	g_assert_cmpuint(pgrp_resolved_words(r), ==, 2);
	pgrp_resolved_free(r);
	pgrp_policy_free(p);
}

static void test_predefined(void)
{
	struct pgrp_resolved *r = pgrp_policy_resolve(NULL, doc_ports, DOC_N);
	char *all = span(0, DOC_N - 1), *sw = span(0, 56);
	check_group(r, "ALL", DOC_N, all);
	check_group(r, "ALL_SWITCHES", DOC_N, sw);
	check_group(r, "ALL_CAS", DOC_N, "57,58,59,60,61,62,63,64,65,67");
	check_group(r, "ALL_ROUTERS", DOC_N, "66");
	g_assert_cmpuint(pgrp_resolved_count(r, pgrp_resolved_group(r, "ALL")), ==, DOC_N);
	g_free(all);
	g_free(sw);
	pgrp_resolved_free(r);
	/* an empty fabric */
	r = pgrp_policy_resolve(NULL, NULL, 0);
	g_assert_cmpuint(pgrp_resolved_words(r), ==, 0);
	g_assert_cmpuint(pgrp_resolved_count(r, pgrp_resolved_group(r, "ALL")), ==, 0);
	pgrp_resolved_free(r);
	for (int k = 0; k < PGRP_N_PREDEFINED; k++)
		g_assert_cmpint(pgrp_predefined_lookup(pgrp_predefined_name(k)), ==, k);
	g_assert_cmpint(pgrp_predefined_lookup("All"), ==, -1);
}

/* ---- reading rules ---------------------------------------------------------------------- */

static void test_comments_blanks(void)
{
	struct pgrp_policy *p = parse_ok("# a policy\n\n  port-group   # the first\r\n"
					 "\tname :  g1 \n"
					 "use: a # b\n"
					 "port-guid: 0x283 # the switch\n"
					 "   , 0x286\n"
					 "\n"
					 "end-port-group\n"
					 "# port-group\n");
	const struct pgrp_group *g = group(p, 0);
	g_assert_cmpstr(g->name, ==, "g1");
	g_assert_cmpuint(g->line, ==, 3);
	g_assert_cmpuint(g->name_line, ==, 4);
	g_assert_cmpuint(g->name_col, ==, 10);
	g_assert_cmpstr(g->use, ==, "a");
	g_assert_cmpuint(rule(g, 0)->guids->len, ==, 2);
	g_assert_cmpuint(p->notes->len, ==, 0);
	pgrp_policy_free(p);

	p = parse_ok("# nothing\n\n");
	g_assert_cmpuint(p->groups->len, ==, 0);
	check_note(p, 0, "pg.conf:1:1: no port group is defined: only the predefined ones exist");
	pgrp_policy_free(p);
	p = parse_ok("");
	g_assert_cmpuint(p->groups->len, ==, 0);
	pgrp_policy_free(p);

	/* use: the last counts, with a note; an empty use is "" */
	p = parse_ok("port-group\nname: g\nuse: one\nuse:\nport-guid: 1\nend-port-group\n");
	g_assert_cmpstr(group(p, 0)->use, ==, "");
	check_note(p, 0, "pg.conf:4:1: 'use:' given again in this port-group (first on line 3): "
		   "the last one counts");
	pgrp_policy_free(p);

	/* a wrapped use */
	p = parse_ok("port-group\nname: g\nuse: the switches\nof row 3\nnode-name: SW\n"
		     "end-port-group");
	g_assert_cmpstr(group(p, 0)->use, ==, "the switches of row 3");
	pgrp_policy_free(p);
}

/* A group between the two definitions of grp3 that names grp3 sees the final grp3, as does
 * one before both; inside a redefinition its own name means the definition before; with three
 * definitions each means the one just before it. */
static void test_redefinition(void)
{
	static const char s[] =
		"port-group\nname: early\nunion-rule: x, x\nend-port-group\n"      /* 0 */
		"port-group\nname: x\nport-guid: 0x281\nend-port-group\n"           /* 1 */
		"port-group\nname: mid\nunion-rule: x, x\nend-port-group\n"         /* 2 */
		"port-group\nname: x\nunion-rule: x, other\nend-port-group\n"       /* 3 */
		"port-group\nname: other\nport-guid: 0x282\nend-port-group\n"       /* 4 */
		"port-group\nname: x\nsubtract-rule: x, y\nend-port-group\n"        /* 5 */
		"port-group\nname: y\nport-guid: 0x282@2\nend-port-group\n";        /* 6 */
	size_t n = G_N_ELEMENTS(manual_ports);
	struct pgrp_policy *p = parse_ok(s);
	g_assert_cmpint(group(p, 1)->previous, ==, -1);
	g_assert_cmpint(group(p, 3)->previous, ==, 1);
	g_assert_cmpint(group(p, 5)->previous, ==, 3);
	g_assert_false(group(p, 1)->final);
	g_assert_false(group(p, 3)->final);
	g_assert_true(group(p, 5)->final);
	g_assert_cmpint(rule(group(p, 0), 0)->ref[0].group, ==, 5);
	g_assert_cmpint(rule(group(p, 2), 0)->ref[0].group, ==, 5);
	g_assert_cmpint(rule(group(p, 3), 0)->ref[0].group, ==, 1);
	g_assert_cmpint(rule(group(p, 5), 0)->ref[0].group, ==, 3);
	g_assert_cmpuint(p->notes->len, ==, 2);
	check_note(p, 1, "pg.conf:22:7: port group 'x' defined again (before on line 13): this "
		   "definition replaces it, and 'x' inside it means the one before");
	struct pgrp_resolved *r = pgrp_policy_resolve(p, manual_ports, n);
	/* x = ((0x281) + (0x282)) - (0x282 port 2) */
	check_group(r, "x", n, "0,1,2,3,7");
	check_group(r, "early", n, "0,1,2,3,7");
	check_group(r, "mid", n, "0,1,2,3,7");
	char *d = set_str(r, pgrp_resolved_definition(r, 3), n);
	g_assert_cmpstr(d, ==, "0,1,2,3,7,8");
	g_free(d);
	pgrp_resolved_free(r);
	pgrp_policy_free(p);
}

/* ---- errors ----------------------------------------------------------------------------- */

static void test_error_structure(void)
{
	/* stanza not closed: at its port-group line */
	expect_error("port-group\nname: g\nport-guid: 1\n", "pg.conf:1:1: port-group not closed: "
		     "end-port-group is missing before the end of the file");
	expect_error("port-group\nname: g\nport-guid: 1\nport-group\n", "pg.conf:4:1: 'port-group' "
		     "inside the port-group opened on line 1 (end-port-group missing)");
	expect_error("end-port-group\n", "pg.conf:1:1: 'end-port-group' without a 'port-group' "
		     "before it");
	expect_error("port-group grp1\n", "pg.conf:1:12: unexpected text after 'port-group'");
	expect_error("port-group:\n", "pg.conf:1:1: 'port-group' stands alone on its line, without "
		     "':'");
	/* qualifier outside a stanza */
	expect_error("name: g\n", "pg.conf:1:1: qualifier 'name:' outside a port-group "
		     "('port-group' must come first)");
	expect_error("port-group\nname: g\nport-guid: 1\nend-port-group\n  port-guid: 2\n",
		     "pg.conf:5:3: qualifier 'port-guid:' outside a port-group ('port-group' must "
		     "come first)");
	expect_error("hello\n", "pg.conf:1:1: 'hello' outside a port-group");
	expect_error("port-group\n0x283\n", "pg.conf:2:1: '0x283' is not a qualifier (want "
		     "'name: value')");
	/* unknown qualifier; names are case-sensitive */
	expect_error("port-group\nname: g\nport-guids: 1\nend-port-group\n", "pg.conf:3:1: unknown "
		     "qualifier 'port-guids:'");
	expect_error("port-group\nName: g\n", "pg.conf:2:1: unknown qualifier 'Name:'");
	expect_error("port-group\nname: g\nport-guid: 1\nend-port-group\nPORT-GROUP\n",
		     "pg.conf:5:1: 'PORT-GROUP' outside a port-group");
	expect_error("port-group\nname: g\x01\n", "pg.conf:2:7: bad port group name 'g\x01': "
		     "one word of visible characters, without ','");
}

static void test_error_names(void)
{
	/* missing name, no rule */
	expect_error("port-group\nuse: x\nport-guid: 1\nend-port-group\n", "pg.conf:1:1: "
		     "port-group without a name (a 'name:' qualifier is required)");
	expect_error("port-group\nname: g\nuse: nothing\nend-port-group\n", "pg.conf:1:1: "
		     "port-group 'g' has no rule (port-guid, port-guid-range, port-name, "
		     "node-name, union-rule or subtract-rule)");
	expect_error("port-group\nname:\nport-guid: 1\nend-port-group\n", "pg.conf:2:6: "
		     "'name:': a port group name is missing");
	expect_error("port-group\nname: my group\n", "pg.conf:2:7: bad port group name 'my "
		     "group': one word of visible characters, without ','");
	expect_error("port-group\nname: a,b\n", "pg.conf:2:7: bad port group name 'a,b': one word "
		     "of visible characters, without ','");
	expect_error("port-group\nname: a\nname: b\n", "pg.conf:3:1: a second 'name:' in this "
		     "port-group (the first on line 2)");
	/* defining a predefined group */
	static const char *const predef[] = { "ALL", "ALL_SWITCHES", "ALL_CAS", "ALL_ROUTERS" };
	for (size_t i = 0; i < G_N_ELEMENTS(predef); i++) {
		char *s = g_strdup_printf("port-group\nname:  %s\nport-guid: 1\nend-port-group\n",
					  predef[i]);
		char *m = g_strdup_printf("pg.conf:2:8: '%s' is a predefined port group: it cannot "
					  "be defined", predef[i]);
		expect_error(s, m);
		g_free(s);
		g_free(m);
	}
	/* colon in a value: in the name, the use, a continuation, a regular expression */
	expect_error("port-group\nname: a:b\n", "pg.conf:2:8: ':' inside the value of 'name:' (a "
		     "colon only ends a qualifier's name)");
	expect_error("port-group\nname: a\nuse: ratio 1:2\n", "pg.conf:3:13: ':' inside the value "
		     "of 'use:' (a colon only ends a qualifier's name)");
	expect_error("port-group\nname: a\nport-guid: 0x1\n, 0x283:3\n", "pg.conf:4:8: ':' inside "
		     "the value of 'port-guid:' (a colon only ends a qualifier's name)");
	expect_error("port-group\nname: a\nport-regexp: SW*:3\n", "pg.conf:3:17: ':' inside the "
		     "value of 'port-regexp:' (a colon only ends a qualifier's name)");
	expect_error("port-group\nname: a\nnode-name: (?:SW)\n", "pg.conf:3:14: ':' inside the "
		     "value of 'node-name:' (a colon only ends a qualifier's name)");
	/* NUL */
	static const char nul[] = "port-group\nna\0me: g\n";
	GError *err = NULL;
	g_assert_null(pgrp_policy_parse_text(nul, sizeof(nul) - 1, "pg.conf", &err));
	g_assert_cmpstr(err->message, ==, "pg.conf:2:3: NUL byte in the file");
	g_error_free(err);
}

static void test_error_guids(void)
{
	/* bad GUID */
	expect_error(G("port-guid: 0x28g"), "pg.conf:3:12: bad GUID '0x28g' (hex with 0x, or "
		     "decimal)");
	expect_error(G("port-guid: 0x0"), "pg.conf:3:12: GUID 0: no node or port has GUID 0");
	expect_error(G("port-guid: 0x10000000000000000"), "pg.conf:3:12: GUID "
		     "'0x10000000000000000' has more than 64 bits");
	expect_error(G("port-guid: 0x1,"), "pg.conf:3:16: a GUID was expected, not the end of the "
		     "value");
	expect_error(G("port-guid: 0x1,,0x2"), "pg.conf:3:16: a GUID was expected, not ','");
	expect_error(G("port-guid:"), "pg.conf:3:11: a GUID was expected, not the end of the "
		     "value");
	expect_error(G("port-guid: 0x1 0x2"), "pg.conf:3:16: ',' (between GUIDs) or the end of "
		     "the list was expected, not '0x2'");
	/* bad port list */
	expect_error(G("port-guid: 0x289/6/8/12"), "pg.conf:3:17: '/' after a GUID: its ports "
		     "follow '@' (GUID@1/3-5)");
	expect_error(G("port-guid: 0x289@"), "pg.conf:3:18: a port number was expected, not the "
		     "end of the value");
	expect_error(G("port-guid: 0x289@1//2"), "pg.conf:3:20: a port number was expected, not "
		     "'/'");
	expect_error(G("port-guid: 0x289@255"), "pg.conf:3:18: port '255' out of range (0-254)");
	expect_error(G("port-guid: 0x289@5-2"), "pg.conf:3:18: port range 5-2: the first port is "
		     "larger than the last");
	expect_error(G("port-guid: 0x289@2-"), "pg.conf:3:20: the last port of a range was "
		     "expected, not the end of the value");
	expect_error(G("port-guid: 0x289@1-2-3"), "pg.conf:3:21: ',' (between GUIDs) or the end of "
		     "the list was expected, not '-'");
	expect_error(G("port-guid: 0x289@x"), "pg.conf:3:18: bad port 'x' (decimal, or hex with "
		     "0x)");
	/* list of ranges, and other bad ranges */
	expect_error(G("port-guid-range: 0x283-0x289, 0x290-0x295"), "pg.conf:3:29: a list of "
		     "ranges: port-guid-range takes one range LOW-HIGH (write one port-guid-range "
		     "per range)");
	expect_error(G("port-guid-range: 0x283, 0x289"), "pg.conf:3:23: ',' in port-guid-range: "
		     "it takes one range LOW-HIGH, not a list (write one port-guid-range per "
		     "range)");
	expect_error(G("port-guid-range: 0x283"), "pg.conf:3:23: '-' and the last GUID of the "
		     "range were expected, not the end of the value");
	expect_error(G("port-guid-range: 0x283-"), "pg.conf:3:24: the last GUID of the range was "
		     "expected, not the end of the value");
	expect_error(G("port-guid-range: 0x283-0x289@1"), "pg.conf:3:29: '@' in port-guid-range: "
		     "a range of GUIDs has no port list (use port-guid: GUID@PORTS)");
	expect_error(G("port-guid-range: 0x283@1-0x289"), "pg.conf:3:23: '@' in port-guid-range: "
		     "a range of GUIDs has no port list (use port-guid: GUID@PORTS)");
	expect_error(G("port-guid-range: 0x289-0x283"), "pg.conf:3:18: GUID range 0x289-0x283: the "
		     "first GUID is larger than the last");
	expect_error(G("port-guid-range: 0x283-0x289 x"), "pg.conf:3:30: the end of the range was "
		     "expected, not 'x'");
	expect_error(G("port-guid-range: -0x289"), "pg.conf:3:18: a GUID range LOW-HIGH was "
		     "expected, not '-'");
}

static void test_error_port_name(void)
{
	expect_error(G("port-name: port=1"), "pg.conf:3:12: a port-name entry without hostname= "
		     "(the hostname is required)");
	expect_error(G("port-name: hostname=a, port=2"), "pg.conf:3:24: a port-name entry without "
		     "hostname= (the hostname is required)");
	expect_error(G("port-name: hostname=a,"), "pg.conf:3:23: an entry is missing after ','");
	expect_error(G("port-name:"), "pg.conf:3:11: 'port-name:' wants entries hostname=NAME "
		     "[port=N] [hca_idx=N]");
	expect_error(G("port-name: host=a"), "pg.conf:3:12: unknown port-name item 'host' "
		     "(hostname, port or hca_idx)");
	expect_error(G("port-name: hostname=a port=0"), "pg.conf:3:28: port '0' out of range "
		     "(1-254)");
	expect_error(G("port-name: hostname=a hca_idx=x"), "pg.conf:3:31: bad hca_idx 'x' "
		     "(decimal, or hex with 0x)");
	expect_error(G("port-name: hostname=a hostname=b"), "pg.conf:3:23: 'hostname' given twice "
		     "in one port-name entry");
	expect_error(G("port-name: hostname=;"), "pg.conf:3:21: 'hostname=' wants a value");
	expect_error(G("port-name: kuku"), "pg.conf:3:12: 'kuku' in port-name: an item is "
		     "hostname=NAME, port=N or hca_idx=N");
	expect_error(G("port-name: =kuku"), "pg.conf:3:12: '=' in port-name: an item is "
		     "hostname=NAME, port=N or hca_idx=N");
}

static void test_error_node_name(void)
{
	GError *err = NULL;
	const char *s = G("node-name: SW[");
	g_assert_null(pgrp_policy_parse_text(s, strlen(s), "pg.conf", &err));
	g_assert_error(err, PGRP_POLICY_ERROR, PGRP_POLICY_ERROR_SYNTAX);
	g_assert_true(g_str_has_prefix(err->message, "pg.conf:3:12: bad regular expression "
				       "'SW[': "));
	g_error_free(err);
	expect_error(G("node-name:"), "pg.conf:3:11: 'node-name:' wants a regular expression");
	expect_error(G("node-name: @3"), "pg.conf:3:12: no regular expression before '@'");
	expect_error(G("node-name: SW.*@255"), "pg.conf:3:17: port '255' out of range (0-254)");
}

static void test_error_union_subtract(void)
{
	expect_error(G("union-rule: grp1"), "pg.conf:3:17: 'union-rule:' wants two port groups, "
		     "'A, B': the second is missing");
	expect_error(G("subtract-rule: ALL, ALL_CAS, ALL_ROUTERS"), "pg.conf:3:30: a third port "
		     "group in 'subtract-rule:': it takes exactly two (define a group of two, then "
		     "use that)");
	expect_error(G("union-rule:"), "pg.conf:3:12: 'union-rule:' wants two port groups, 'A, "
		     "B': none is given");
	expect_error(G("union-rule: ALL,"), "pg.conf:3:17: 'union-rule:' wants two port groups, "
		     "'A, B': a name is missing");
	expect_error(G("union-rule: ALL ALL_CAS"), "pg.conf:3:13: bad port group name 'ALL "
		     "ALL_CAS': one word of visible characters, without ','");
	/* unknown group: at the reference, after the whole file */
	expect_ref_error("port-group\nname: a\nunion-rule: ALL, b\nend-port-group\n"
			 "port-group\nname: c\nsubtract-rule: zz, a\nend-port-group\n",
			 "pg.conf:3:18: unknown port group 'b'");
	expect_ref_error(G("union-rule: all, ALL"), "pg.conf:3:13: unknown port group 'all'");
	/* cycles */
	expect_ref_error(G("union-rule: g, ALL"), "pg.conf:3:13: port group 'g' refers to itself "
			 "and has no earlier definition to mean: a reference cycle (g -> g)");
	expect_ref_error("port-group\nname: a\nunion-rule: b, ALL\nend-port-group\n"
			 "port-group\nname: b\nsubtract-rule: ALL, c\nend-port-group\n"
			 "port-group\nname: c\nunion-rule: ALL_CAS, a\nend-port-group\n",
			 "pg.conf:11:22: reference cycle: a -> b -> c -> a");
	/* through a redefinition: x (2nd) means x (1st), which names y, which names x (2nd) */
	expect_ref_error("port-group\nname: x\nunion-rule: y, ALL_CAS\nend-port-group\n"
			 "port-group\nname: y\nunion-rule: x, ALL_CAS\nend-port-group\n"
			 "port-group\nname: x\nunion-rule: x, ALL_CAS\nend-port-group\n",
			 "pg.conf:11:13: reference cycle: x (line 1) -> y -> x (line 9) -> x "
			 "(line 1)");
}

/* A long chain of groups, each naming the next (resolved without deep recursion), and a long
 * cycle (its message cut short). */
static void test_long_chain(void)
{
	GString *s = g_string_new(NULL);
	for (int i = 0; i < 20000; i++)
		g_string_append_printf(s, "port-group\nname: g%d\nunion-rule: g%d, ALL_ROUTERS\n"
				       "end-port-group\n", i, i + 1);
	g_string_append(s, "port-group\nname: g20000\nport-guid: 0x281@1\nend-port-group\n");
	size_t n = G_N_ELEMENTS(manual_ports);
	struct pgrp_policy *p = parse_ok(s->str);
	struct pgrp_resolved *r = pgrp_policy_resolve(p, manual_ports, n);
	check_group(r, "g0", n, "1,12");
	pgrp_resolved_free(r);
	pgrp_policy_free(p);
	g_string_truncate(s, 0);
	for (int i = 0; i < 30; i++)
		g_string_append_printf(s, "port-group\nname: g%d\nunion-rule: g%d, ALL\n"
				       "end-port-group\n", i, (i + 1) % 30);
	expect_ref_error(s->str, "pg.conf:119:13: reference cycle: g0 -> g1 -> g2 -> g3 -> g4 -> "
			 "g5 -> g6 -> g7 -> g8 -> g9 -> ... (30 groups) -> g29 -> g0");
	g_string_free(s, TRUE);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	build_doc_fabric();
	g_test_add_func("/port_groups/manual_example/model", test_manual_example_model);
	g_test_add_func("/port_groups/manual_example/ports", test_manual_example_ports);
	g_test_add_func("/port_groups/manual_example/unwrapped", test_manual_example_unwrapped);
	g_test_add_func("/port_groups/doc/port_guid", test_doc_port_guid);
	g_test_add_func("/port_groups/doc/port_guid_merge", test_doc_port_guid_merge);
	g_test_add_func("/port_groups/doc/guid_range", test_doc_guid_range);
	g_test_add_func("/port_groups/doc/port_name", test_doc_port_name);
	g_test_add_func("/port_groups/doc/node_name", test_doc_node_name);
	g_test_add_func("/port_groups/doc/union_subtract", test_doc_union_subtract);
	g_test_add_func("/port_groups/several_rules", test_several_rules);
	g_test_add_func("/port_groups/predefined", test_predefined);
	g_test_add_func("/port_groups/comments_blanks", test_comments_blanks);
	g_test_add_func("/port_groups/redefinition", test_redefinition);
	g_test_add_func("/port_groups/errors/structure", test_error_structure);
	g_test_add_func("/port_groups/errors/names", test_error_names);
	g_test_add_func("/port_groups/errors/guids", test_error_guids);
	g_test_add_func("/port_groups/errors/port_name", test_error_port_name);
	g_test_add_func("/port_groups/errors/node_name", test_error_node_name);
	g_test_add_func("/port_groups/errors/union_subtract", test_error_union_subtract);
	g_test_add_func("/port_groups/long_chain", test_long_chain);
	return g_test_run();
}
