/* test_enhanced_qos.c - NVIDIA's enhanced QoS: the policy parser (what NVIDIA's manual example
 * gives each SL, every refusal with FILE:LINE:COL), the rule each port falls under, and the
 * QoSConfigSL Sets (attribute 0xFF82) judged by the bytes the fake SMAs received: one Set per
 * port, nothing more to a port that refused, nothing again to one that holds its limits. */
#include <string.h>
#include <infiniband/mad.h>
#include "fabric_fixture.h"
#include "fake_sma.h"
#include "policy/enhanced_qos.h"
#include "program/vendor_qos.h"
#include "sm/enhanced_qos.h"

#define TIMEOUT_MS 20

static struct eqos_policy *parse(const char *text, GError **err)
{
	return eqos_policy_parse_text(text, strlen(text), "eq.conf", err);
}

/* NVIDIA's manual example, as one rule per line. */
static const char manual_example[] =
	"# the manual's example\n"
	"BW_NAMES\n"
	"bw1 = 50\n"
	"bw2 = 25\n"
	"bw3 = 15\n"
	"bw4 = 10\n"
	"BW_RULES\n"
	"default = 1:bw1\n"
	"0x2c90000000025 = 1:bw2\n"
	"VPORT_BW_RULES\n"
	"default = all:bw3\n"
	"0x2c90000000026 = 3:bw4   # SL3 only\n";

static void test_manual_example(void)
{
	GError *err = NULL;
	struct eqos_policy *p = parse(manual_example, &err);
	g_assert_no_error(err);
	g_assert_nonnull(p);
	g_assert_cmpuint(p->names->len, ==, 4);
	uint32_t r[EQOS_N_SL];
	/* physical ports: SL1 at 50 Mbps, the others unlimited; 0x...25 SL1 at 25 */
	eqos_rates(&p->port, eqos_rule_for(&p->port, 0x1234, NULL, NULL), 0, r);
	for (int sl = 0; sl < EQOS_N_SL; sl++)
		g_assert_cmpuint(r[sl], ==, sl == 1 ? 50 : 0);
	const struct eqos_rule *q = eqos_rule_for(&p->port, 0x2c90000000025ULL, NULL, NULL);
	g_assert_nonnull(q);
	g_assert_cmpuint(q->line, ==, 9);
	eqos_rates(&p->port, q, 0, r);
	for (int sl = 0; sl < EQOS_N_SL; sl++)
		g_assert_cmpuint(r[sl], ==, sl == 1 ? 25 : 0);
	/* virtual ports: 15 everywhere, 0x...26 SL3 at 10 and 15 elsewhere (the default's all) */
	q = eqos_rule_for(&p->vport, 0x2c90000000026ULL, NULL, NULL);
	eqos_rates(&p->vport, q, 0, r);
	for (int sl = 0; sl < EQOS_N_SL; sl++)
		g_assert_cmpuint(r[sl], ==, sl == 3 ? 10 : 15);
	/* virtual port 0 under enhanced_qos_vport0_unlimit_default_rl: the rule's SLs only */
	eqos_rates(&p->vport, q, 1, r);
	for (int sl = 0; sl < EQOS_N_SL; sl++)
		g_assert_cmpuint(r[sl], ==, sl == 3 ? 10 : 0);
	eqos_rates(&p->vport, NULL, 1, r);
	for (int sl = 0; sl < EQOS_N_SL; sl++)
		g_assert_cmpuint(r[sl], ==, 0);
	eqos_policy_free(p);
}

static int group_a(const char *group, void *ctx)
{
	return !strcmp(group, "grp_a") && *(const uint64_t *)ctx == 0x77;
}

static void test_all_sl_groups(void)
{
	GError *err = NULL;
	struct eqos_policy *p = parse("bw_names\nhi=1000\nlo = 1\nBW_RULES\n"
				      "0x77 = all:hi, SL3:lo, 15:lo\n"
				      "grp_a = 2:lo\n"
				      "grp_b = all:lo\n", &err);
	g_assert_no_error(err);
	uint32_t r[EQOS_N_SL];
	uint64_t guid = 0x77;
	/* a GUID rule wins over a port group that also holds the port */
	const struct eqos_rule *q = eqos_rule_for(&p->port, guid, group_a, &guid);
	g_assert_nonnull(q);
	g_assert_cmpint(q->kind, ==, EQOS_T_GUID);
	eqos_rates(&p->port, q, 0, r);
	for (int sl = 0; sl < EQOS_N_SL; sl++)
		g_assert_cmpuint(r[sl], ==, sl == 3 || sl == 15 ? 1 : 1000);
	guid = 0x78; /* in no group: no rule, no default: unlimited */
	g_assert_null(eqos_rule_for(&p->port, guid, group_a, &guid));
	eqos_policy_free(p);
	/* without the GUID rule the group's */
	p = parse("BW_NAMES\nlo=1\nBW_RULES\ngrp_a = 2:lo\n", &err);
	g_assert_no_error(err);
	guid = 0x77;
	q = eqos_rule_for(&p->port, guid, group_a, &guid);
	g_assert_nonnull(q);
	g_assert_cmpstr(q->group, ==, "grp_a");
	eqos_policy_free(p);
	/* only the keywords: read, every SL unlimited */
	p = parse("BW_NAMES\nBW_RULES\n", &err);
	g_assert_no_error(err);
	eqos_rates(&p->port, NULL, 0, r);
	for (int sl = 0; sl < EQOS_N_SL; sl++)
		g_assert_cmpuint(r[sl], ==, 0);
	eqos_policy_free(p);
}

/* Every refusal: the message starts with FILE:LINE:COL and says what is wrong. */
static void test_errors(void)
{
	static const struct {
		const char *text, *where, *what;
	} cases[] = {
		{ "x = 1\n", "eq.conf:1:1: ", "before any section" },
		{ "BW_NAMES\nBW_RULEZ\n", "eq.conf:2:1: ", "neither a section" },
		{ "BW_NAMES\nBW_NAMES\n", "eq.conf:2:1: ", "again (first on line 1)" },
		{ "BW_RULES\n\nBW_RULES\n", "eq.conf:3:1: ", "again (first on line 1)" },
		{ "BW_NAMES\n  = 5\n", "eq.conf:2:3: ", "nothing before '='" },
		{ "BW_NAMES\nb w = 5\n", "eq.conf:2:2: ", "letters, digits" },
		{ "BW_NAMES\nall = 5\n", "eq.conf:2:1: ", "keyword of the rules" },
		{ "BW_NAMES\nb = 5\nb = 6\n", "eq.conf:3:1: ", "'b' again (first on line 2)" },
		{ "BW_NAMES\nb =\n", "eq.conf:2:4: ", "without a rate limit" },
		{ "BW_NAMES\nb = 5M\n", "eq.conf:2:5: ", "not a decimal number" },
		{ "BW_NAMES\nb = 0x10\n", "eq.conf:2:5: ", "not a decimal number" },
		{ "BW_NAMES\nb = 1048576\n", "eq.conf:2:5: ", "more than 1048575" },
		{ "BW_NAMES\nb = 1 = 2\n", "eq.conf:2:7: ", "second '='" },
		{ "BW_NAMES\nb=1\nBW_RULES\n0x1 =\n", "eq.conf:4:6: ", "without SL:NAME" },
		{ "BW_NAMES\nb=1\nBW_RULES\n0x1 = 1:b,,2:b\n", "eq.conf:4:11: ", "empty item" },
		{ "BW_NAMES\nb=1\nBW_RULES\n0x1 = 1 b\n", "eq.conf:4:7: ", "not SL:NAME" },
		{ "BW_NAMES\nb=1\nBW_RULES\n0x1 = :b\n", "eq.conf:4:7: ", "no SL before" },
		{ "BW_NAMES\nb=1\nBW_RULES\n0x1 = 16:b\n", "eq.conf:4:7: ", "not 0-15" },
		{ "BW_NAMES\nb=1\nBW_RULES\n0x1 = SLx:b\n", "eq.conf:4:7: ", "not 0-15" },
		{ "BW_NAMES\nb=1\nBW_RULES\n0x1 = 2:\n", "eq.conf:4:8: ", "no bandwidth name" },
		{ "BW_NAMES\nb=1\nBW_RULES\n0x1 = 2:c\n", "eq.conf:4:9: ", "'c' is not defined" },
		{ "BW_RULES\n0x1 = 2:b\nBW_NAMES\nb=1\n", "eq.conf:2:9: ", "'b' is not defined" },
		{ "BW_NAMES\nb=1\nBW_RULES\n0x1 = 2:b, SL2:b\n", "eq.conf:4:12: ", "SL 2 twice" },
		{ "BW_NAMES\nb=1\nBW_RULES\n0x1 = all:b,all:b\n", "eq.conf:4:13: ", "'all' twice" },
		{ "BW_NAMES\nb=1\nBW_RULES\n0x1 = 1:b\n0x01 = 2:b\n", "eq.conf:5:1: ", "again in this section (first on line 4)" },
		{ "BW_NAMES\nb=1\nBW_RULES\ndefault = 1:b\nDEFAULT = 2:b\n", "eq.conf:5:1: ", "first on line 4" },
		{ "BW_NAMES\nb=1\nBW_RULES\ng1 = 1:b\ng1 = 2:b\n", "eq.conf:5:1: ", "first on line 4" },
		{ "BW_NAMES\nb=1\nBW_RULES\n0 = 1:b\n", "eq.conf:4:1: ", "GUID 0" },
		{ "BW_NAMES\nb=1\nBW_RULES\n0x1g = 1:b\n", "eq.conf:4:1: ", "not a GUID" },
		{ "BW_NAMES\nb=1\nBW_RULES\n0x11112222333344445 = 1:b\n", "eq.conf:4:1: ", "not a GUID" },
		{ "BW_NAMES\nb=1\nBW_RULES\ng/1 = 1:b\n", "eq.conf:4:2: ", "neither default" },
		{ "BW_NAMES\nb=1\nVPORT_BW_RULES\ngrp = 1:b\n", "eq.conf:4:1: ", "not port groups" },
		{ "BW_NAMES\nb=1\0\n", "eq.conf:2:4: ", "NUL byte" },
	};
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		GError *err = NULL;
		size_t len = strlen(cases[i].text);
		if (strstr(cases[i].what, "NUL"))
			len += 2; /* the NUL and the newline after it */
		struct eqos_policy *p = eqos_policy_parse_text(cases[i].text, len, "eq.conf", &err);
		if (p || !err || !g_str_has_prefix(err->message, cases[i].where) ||
		    !strstr(err->message, cases[i].what))
			g_test_message("case %zu: %s", i, err ? err->message : "(accepted)");
		g_assert_null(p);
		g_assert_error(err, EQOS_POLICY_ERROR, EQOS_POLICY_ERROR_SYNTAX);
		g_assert_true(g_str_has_prefix(err->message, cases[i].where));
		g_assert_nonnull(strstr(err->message, cases[i].what));
		g_clear_error(&err);
	}
}

static void test_encode(void)
{
	uint32_t rate[VQOS_N_SL] = { 0 }, back[VQOS_N_SL];
	uint16_t alloc[VQOS_N_SL];
	uint8_t d[64];
	rate[0] = 50;
	rate[3] = 0xFFFFF;
	rate[15] = 0x12345;
	vqos_encode(rate, d);
	static const uint8_t sl0[4] = { 0, 0, 0, 50 }, sl3[4] = { 0, 0x0F, 0xFF, 0xFF },
			     sl15[4] = { 0, 0x01, 0x23, 0x45 }, zero[4] = { 0 };
	g_assert_cmpmem(d, 4, sl0, 4);
	g_assert_cmpmem(d + 12, 4, sl3, 4);
	g_assert_cmpmem(d + 60, 4, sl15, 4);
	g_assert_cmpmem(d + 4, 4, zero, 4);
	d[1] = 0x30; /* BandwidthAllocation 3 on SL0, as a port could read back */
	vqos_decode(d, back, alloc);
	g_assert_cmpuint(back[0], ==, 50);
	g_assert_cmpuint(alloc[0], ==, 3);
	g_assert_cmpuint(back[3], ==, 0xFFFFF);
	g_assert_cmpuint(back[15], ==, 0x12345);
}

static uint32_t sm_port_of(const struct fabric *shape)
{
	return fx_ca_port(&shape->pub, 0, 1);
}

static void bed_up(struct fsma_bed *b)
{
	struct program_report rep;
	struct fabric *shape = fx_line(2, 2, 0);
	fsma_bed_init(b, shape, sm_port_of(shape), TIMEOUT_MS);
	fsma_bed_discover(b);
	g_assert_cmpint(fsma_bed_program(b, NULL, 1, &rep), ==, 0);
}

static const struct fsma_rec *next_qos_set(const struct fsma *fk, uint32_t *from)
{
	uint32_t i = fsma_first(fk, *from, IB_MAD_METHOD_SET, VQOS_ATTR_QOS_CONFIG_SL, FSMA_ANY);
	if (i == FSMA_ANY)
		return NULL;
	*from = i + 1;
	return fsma_rec(fk, i);
}

/* The Sets' bytes as the fake SMAs received them; a fabric that refuses the attribute (the
 * fake answers 0x0C, unsupported, as an SMA without it) is asked once per port. */
static void test_sets_refused_once(void)
{
	struct fsma_bed b;
	bed_up(&b);
	GError *err = NULL;
	struct eqos_policy *p = parse(manual_example, &err);
	g_assert_no_error(err);
	uint32_t n = 0;
	struct vqos_want *w = eqos_wants(p, NULL, NULL, 1, b.f, &n);
	uint32_t cas = 0;
	for (uint32_t port = 0; port < b.f->pub.n_ports; port++)
		cas += b.f->nodes[b.f->ports[port].node].type == IBSM_CA && b.f->ports[port].peer != IBSM_NONE;
	g_assert_cmpuint(cas, ==, 4);
	g_assert_cmpuint(n, ==, 2 * cas); /* the port and its virtual port 0 */
	struct vqos_memory *m = vqos_memory_new();
	struct vqos_stats st;
	uint32_t mark = fsma_nrec(b.fk);
	g_assert_cmpuint(vqos_program(m, b.t, &b.stop, b.f, w, n, &st), ==, n);
	g_assert_cmpuint(st.refused, ==, n);
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_SET, VQOS_ATTR_QOS_CONFIG_SL, FSMA_ANY), ==, n);
	uint32_t from = mark, seen_port = 0, seen_vport = 0;
	for (const struct fsma_rec *r; (r = next_qos_set(b.fk, &from));) {
		g_assert_cmpuint(r->mgmt_class, ==, 0x81);
		g_assert_cmpuint(r->status, ==, MAD_STATUS_UNSUP_METHOD_ATTR);
		g_assert_cmpuint(r->node, !=, FSMA_ANY);
		uint32_t rate[VQOS_N_SL];
		vqos_decode(r->data, rate, NULL);
		if (r->mod & VQOS_MOD_VPORT) {
			seen_vport++;
			g_assert_cmpuint(r->mod, ==, 0x80000000u);
			for (int sl = 0; sl < VQOS_N_SL; sl++) /* vport 0 with no rule: unlimited */
				g_assert_cmpuint(rate[sl], ==, 0);
		} else {
			seen_port++;
			g_assert_cmpuint(r->mod, ==, r->in_port); /* the port's own number */
			g_assert_cmpuint(r->data[7], ==, 50);    /* SL1: 50 Mbps, the default rule */
			for (int sl = 0; sl < VQOS_N_SL; sl++)
				g_assert_cmpuint(rate[sl], ==, sl == 1 ? 50 : 0);
		}
	}
	g_assert_cmpuint(seen_port, ==, cas);
	g_assert_cmpuint(seen_vport, ==, cas);
	/* the next sweep: nothing more to ports that refused */
	mark = fsma_nrec(b.fk);
	g_assert_cmpuint(vqos_program(m, b.t, &b.stop, b.f, w, n, &st), ==, 0);
	g_assert_cmpuint(st.left_alone, ==, n);
	g_assert_cmpuint(fsma_count(b.fk, mark, FSMA_ANY, VQOS_ATTR_QOS_CONFIG_SL, FSMA_ANY), ==, 0);
	/* a new policy: each is asked once more */
	vqos_memory_retry(m);
	g_assert_cmpuint(vqos_program(m, b.t, &b.stop, b.f, w, n, &st), ==, n);
	vqos_memory_free(m);
	g_free(w);
	eqos_policy_free(p);
	fsma_bed_clear(&b);
}

/* A fabric that takes the attribute (the fake answers status 0): the limits are not sent again
 * while they stay, and a changed policy sends only what changed. */
static void test_sets_taken_then_unchanged(void)
{
	struct fsma_bed b;
	bed_up(&b);
	struct fsma_fault take = { .method = IB_MAD_METHOD_SET, .attr = VQOS_ATTR_QOS_CONFIG_SL,
				   .node = FSMA_ANY, .action = FSMA_STATUS, .status = 0 };
	fsma_add_fault(b.fk, &take);
	GError *err = NULL;
	uint64_t guid = 0;
	for (uint32_t port = 0; port < b.f->pub.n_ports && !guid; port++)
		if (b.f->nodes[b.f->ports[port].node].type == IBSM_CA && port != b.f->pub.sm_port)
			guid = b.f->ports[port].guid;
	char *text = g_strdup_printf("BW_NAMES\nfast = 100000\nslow=7\nBW_RULES\n0x%" G_GINT64_MODIFIER
				     "x = all:fast, sl7:slow\n", guid);
	struct eqos_policy *p = parse(text, &err);
	g_assert_no_error(err);
	uint32_t n = 0;
	struct vqos_want *w = eqos_wants(p, NULL, NULL, 1, b.f, &n);
	g_assert_cmpuint(n, ==, 4); /* no VPORT_BW_RULES: no virtual port Sets */
	struct vqos_memory *m = vqos_memory_new();
	struct vqos_stats st;
	uint32_t mark = fsma_nrec(b.fk);
	g_assert_cmpuint(vqos_program(m, b.t, &b.stop, b.f, w, n, &st), ==, 4);
	g_assert_cmpuint(st.taken, ==, 4);
	uint32_t from = mark, named = 0;
	for (const struct fsma_rec *r; (r = next_qos_set(b.fk, &from));) {
		uint32_t rate[VQOS_N_SL];
		vqos_decode(r->data, rate, NULL);
		int is_it = r->port != FSMA_ANY && b.f->ports[r->port].guid == guid;
		named += is_it;
		for (int sl = 0; sl < VQOS_N_SL; sl++)
			g_assert_cmpuint(rate[sl], ==, !is_it ? 0 : sl == 7 ? 7 : 100000);
	}
	g_assert_cmpuint(named, ==, 1);
	mark = fsma_nrec(b.fk);
	g_assert_cmpuint(vqos_program(m, b.t, &b.stop, b.f, w, n, &st), ==, 0);
	g_assert_cmpuint(st.unchanged, ==, 4);
	g_assert_cmpuint(fsma_count(b.fk, mark, FSMA_ANY, VQOS_ATTR_QOS_CONFIG_SL, FSMA_ANY), ==, 0);
	/* the named port's SL7 changes: one Set */
	for (uint32_t i = 0; i < n; i++)
		if (b.f->ports[w[i].port].guid == guid)
			w[i].rate[7] = 8;
	g_assert_cmpuint(vqos_program(m, b.t, &b.stop, b.f, w, n, &st), ==, 1);
	vqos_memory_free(m);
	g_free(w);
	g_free(text);
	eqos_policy_free(p);
	fsma_bed_clear(&b);
}

/* A fabric that drops the attribute without an answer: one attempt per Set, whatever the
 * transport's retries (the bed's transport has one), and the port is left alone after. */
static void test_sets_dropped_once(void)
{
	struct fsma_bed b;
	bed_up(&b);
	struct fsma_fault drop = { .method = IB_MAD_METHOD_SET, .attr = VQOS_ATTR_QOS_CONFIG_SL,
				   .node = FSMA_ANY, .action = FSMA_DROP };
	fsma_add_fault(b.fk, &drop);
	GError *err = NULL;
	struct eqos_policy *p = parse("BW_NAMES\nb=5\nBW_RULES\ndefault = all:b\n", &err);
	g_assert_no_error(err);
	uint32_t n = 0;
	struct vqos_want *w = eqos_wants(p, NULL, NULL, 1, b.f, &n);
	g_assert_cmpuint(n, ==, 4);
	struct vqos_memory *m = vqos_memory_new();
	struct vqos_stats st;
	uint32_t mark = fsma_nrec(b.fk);
	g_assert_cmpuint(vqos_program(m, b.t, &b.stop, b.f, w, n, &st), ==, 4);
	g_assert_cmpuint(st.refused, ==, 4);
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_SET, VQOS_ATTR_QOS_CONFIG_SL, FSMA_ANY), ==, 4);
	for (uint32_t i = 0; i < n; i++)
		g_assert_cmpuint(w[i].outcome, ==, VQOS_REFUSED);
	mark = fsma_nrec(b.fk);
	g_assert_cmpuint(vqos_program(m, b.t, &b.stop, b.f, w, n, &st), ==, 0);
	g_assert_cmpuint(fsma_count(b.fk, mark, FSMA_ANY, FSMA_ANY, FSMA_ANY), ==, 0);
	for (uint32_t i = 0; i < n; i++)
		g_assert_cmpuint(w[i].outcome, ==, VQOS_LEFT_ALONE);
	vqos_memory_free(m);
	g_free(w);
	eqos_policy_free(p);
	fsma_bed_clear(&b);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/eqos/parse/manual_example", test_manual_example);
	g_test_add_func("/eqos/parse/all_sl_groups", test_all_sl_groups);
	g_test_add_func("/eqos/parse/errors", test_errors);
	g_test_add_func("/eqos/mad/encode", test_encode);
	g_test_add_func("/eqos/mad/refused_once", test_sets_refused_once);
	g_test_add_func("/eqos/mad/taken_then_unchanged", test_sets_taken_then_unchanged);
	g_test_add_func("/eqos/mad/dropped_once", test_sets_dropped_once);
	return g_test_run();
}
