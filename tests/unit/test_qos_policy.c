/* test_qos_policy.c - the QoS policy file parser (policy/qos_parse.c): every QoS policy
 * example of OpenSM's doc/QoS_management_in_OpenSM.txt (the QoS text of opensm(8)) and of
 * NVIDIA's SM manual, "Quality of Service Management in OpenSM" (the same examples, and the
 * deployment examples, here with real GUIDs for OST / MDS / SRPT), the equivalences they state,
 * OpenSM's reading rules (names, order, DEFAULT, qos-setup), and one test per error class
 * with its exact FILE:LINE:COL message. */
#include <glib.h>
#include <string.h>
#include "policy/qos_policy.h"

/* ---- helpers ---------------------------------------------------------------------------- */

static struct qos_policy *parse_ok(const char *s)
{
	GError *err = NULL;
	struct qos_policy *p = qos_policy_parse_text(s, strlen(s), "t.conf", &err);
	g_assert_no_error(err);
	g_assert_nonnull(p);
	g_assert_cmpstr(p->source, ==, "t.conf");
	return p;
}

static void expect_error(const char *s, const char *msg)
{
	GError *err = NULL;
	struct qos_policy *p = qos_policy_parse_text(s, strlen(s), "t.conf", &err);
	g_assert_null(p);
	g_assert_error(err, QOS_POLICY_ERROR, QOS_POLICY_ERROR_SYNTAX);
	g_assert_cmpstr(err->message, ==, msg);
	g_error_free(err);
}

static const struct qos_level *level(const struct qos_policy *p, guint i)
{
	g_assert_cmpuint(i, <, p->levels->len);
	return p->levels->pdata[i];
}

static const struct qos_port_group *group(const struct qos_policy *p, guint i)
{
	g_assert_cmpuint(i, <, p->groups->len);
	return p->groups->pdata[i];
}

static const struct qos_match_rule *rule(const struct qos_policy *p, guint i)
{
	g_assert_cmpuint(i, <, p->rules->len);
	return p->rules->pdata[i];
}

/* ranges: n pairs lo, hi */
static void check_ranges(const GArray *a, guint n, ...)
{
	g_assert_cmpuint(a->len, ==, n);
	va_list ap;
	va_start(ap, n);
	for (guint i = 0; i < n; i++) {
		uint64_t lo = va_arg(ap, uint64_t), hi = va_arg(ap, uint64_t);
		g_assert_cmphex(g_array_index(a, struct qos_range, i).lo, ==, lo);
		g_assert_cmphex(g_array_index(a, struct qos_range, i).hi, ==, hi);
	}
	va_end(ap);
}
#define R(lo, hi) (uint64_t)(lo), (uint64_t)(hi)

static guint idx(const GArray *a, guint i)
{
	g_assert_cmpuint(i, <, a->len);
	return g_array_index(a, guint, i);
}

/* The SL a rule gives. */
static int rule_sl(const struct qos_policy *p, guint i)
{
	return level(p, rule(p, i)->level)->sl;
}

static void check_level(const struct qos_level *l, const char *name, int sl, int mtu, int rate,
			int life)
{
	g_assert_cmpstr(l->name, ==, name);
	g_assert_cmpint(l->sl, ==, sl);
	g_assert_cmpint(l->mtu_limit, ==, mtu);
	g_assert_cmpint(l->rate_limit, ==, rate);
	g_assert_cmpint(l->packet_life, ==, life);
}

/* ---- OpenSM's document: full policy file ------------------------------------------------ */

static const char shortest[] =
	"    qos-levels\n"
	"        qos-level\n"
	"            name: DEFAULT\n"
	"            sl: 0\n"
	"        end-qos-level\n"
	"    end-qos-levels\n";

static void test_ex_shortest(void)
{
	struct qos_policy *p = parse_ok(shortest);
	g_assert_cmpuint(p->levels->len, ==, 1);
	check_level(level(p, 0), "DEFAULT", 0, -1, -1, -1);
	g_assert_cmpint(level(p, 0)->from_ulps, ==, 0);
	g_assert_cmpuint(level(p, 0)->line, ==, 2);
	g_assert_cmpuint(p->groups->len, ==, 0);
	g_assert_cmpuint(p->rules->len, ==, 0);
	g_assert_cmpuint(p->notes->len, ==, 0);
	qos_policy_free(p);
}

/* OpenSM's "all the possible options and keywords" example, verbatim. */
static const char full_opensm[] =
	"    #\n"
	"    # See the comments in the following example.\n"
	"    # They explain different keywords and their meaning.\n"
	"    #\n"
	"    port-groups\n"
	"        port-group\n"
	"            name: Storage\n"
	"            # \"use\" is just a description that is used for logging\n"
	"            #  Other than that, it is just a comment\n"
	"            use: SRP Targets\n"
	"            port-guid: 0x10000000000001, 0x10000000000005-0x1000000000FFFA\n"
	"            port-guid: 0x1000000000FFFF\n"
	"        end-port-group\n"
	"\n"
	"        port-group\n"
	"            name: Virtual Servers\n"
	"            # The syntax of the port name is as follows:\n"
	"            #   \"node_description/Pnum\".\n"
	"            # node_description is compared to the NodeDescription of the node,\n"
	"            # and \"Pnum\" is a port number on that node.\n"
	"            port-name: vs1 HCA-1/P1, vs2 HCA-1/P1\n"
	"        end-port-group\n"
	"\n"
	"        # using partitions defined in the partition policy\n"
	"        port-group\n"
	"            name: Partitions\n"
	"            partition: Part1\n"
	"            pkey: 0x1234\n"
	"        end-port-group\n"
	"\n"
	"        # using node types: CA, ROUTER, SWITCH, SELF (for node that runs SM)\n"
	"        # or ALL (for all the nodes in the subnet)\n"
	"        port-group\n"
	"            name: CAs and SM\n"
	"            node-type: CA, SELF\n"
	"        end-port-group\n"
	"\n"
	"    end-port-groups\n"
	"\n"
	"    qos-setup\n"
	"        # This section of the policy file describes how to set up SL2VL and VL\n"
	"        # Arbitration tables on various nodes in the fabric.\n"
	"        # However, this is not supported in OFED 1.3 - the section is parsed\n"
	"        # and ignored. SL2VL and VLArb tables should be configured in the\n"
	"        # OpenSM options file (by default - /var/cache/opensm/opensm.opts).\n"
	"    end-qos-setup\n"
	"\n"
	"    qos-levels\n"
	"\n"
	"        # Having a QoS Level named \"DEFAULT\" is a must - it is applied to\n"
	"        # PR/MPR requests that didn't match any of the matching rules.\n"
	"        qos-level\n"
	"            name: DEFAULT\n"
	"            use: default QoS Level\n"
	"            sl: 0\n"
	"        end-qos-level\n"
	"\n"
	"        # the whole set: SL, MTU-Limit, Rate-Limit, PKey, Packet Lifetime\n"
	"        qos-level\n"
	"            name: WholeSet\n"
	"            sl: 1\n"
	"            mtu-limit: 4\n"
	"            rate-limit: 5\n"
	"            pkey: 0x1234\n"
	"            packet-life: 8\n"
	"        end-qos-level\n"
	"\n"
	"    end-qos-levels\n"
	"\n"
	"    # Match rules are scanned in order of their apperance in the policy file.\n"
	"    # First matched rule takes precedence.\n"
	"    qos-match-rules\n"
	"\n"
	"        # matching by single criteria: QoS class\n"
	"        qos-match-rule\n"
	"            use: by QoS class\n"
	"            qos-class: 7-9,11\n"
	"            # Name of qos-level to apply to the matching PR/MPR\n"
	"            qos-level-name: WholeSet\n"
	"        end-qos-match-rule\n"
	"\n"
	"        # show matching by destination group and service id\n"
	"        qos-match-rule\n"
	"            use: Storage targets\n"
	"            destination: Storage\n"
	"            service-id: 0x10000000000001, 0x10000000000008-0x10000000000FFF\n"
	"            qos-level-name: WholeSet\n"
	"        end-qos-match-rule\n"
	"\n"
	"        qos-match-rule\n"
	"            source: Storage\n"
	"            use: match by source group only\n"
	"            qos-level-name: DEFAULT\n"
	"        end-qos-match-rule\n"
	"\n"
	"        qos-match-rule\n"
	"            use: match by all parameters\n"
	"            qos-class: 7-9,11\n"
	"            source: Virtual Servers\n"
	"            destination: Storage\n"
	"            service-id: 0x0000000000010000-0x000000000001FFFF\n"
	"            pkey: 0x0F00-0x0FFF\n"
	"            qos-level-name: WholeSet\n"
	"        end-qos-match-rule\n"
	"\n"
	"    end-qos-match-rules\n";

/* What the full example means, in both editions. */
static void check_full(const struct qos_policy *p)
{
	g_assert_cmpuint(p->groups->len, ==, 4);
	const struct qos_port_group *st = group(p, 0), *vs = group(p, 1), *pa = group(p, 2),
				    *ca = group(p, 3);
	g_assert_cmpstr(st->name, ==, "Storage");
	g_assert_cmpstr(st->use, ==, "SRP Targets");
	g_assert_cmpint(st->generated, ==, 0);
	check_ranges(st->guids, 3, R(0x10000000000001, 0x10000000000001),
		     R(0x10000000000005, 0x1000000000FFFA), R(0x1000000000FFFF, 0x1000000000FFFF));
	g_assert_cmpstr(vs->name, ==, "Virtual Servers");
	g_assert_null(vs->use);
	g_assert_cmpuint(vs->names->len, ==, 2);
	const struct qos_port_name *n = (const struct qos_port_name *)(const void *)vs->names->data;
	g_assert_cmpstr(n[0].desc, ==, "vs1 HCA-1");
	g_assert_cmpuint(n[0].port, ==, 1);
	g_assert_cmpstr(n[1].desc, ==, "vs2 HCA-1");
	g_assert_cmpuint(n[1].port, ==, 1);
	g_assert_cmpstr(pa->name, ==, "Partitions");
	g_assert_cmpuint(pa->partitions->len, ==, 1);
	g_assert_cmpstr(pa->partitions->pdata[0], ==, "Part1");
	check_ranges(pa->pkeys, 1, R(0x1234, 0x1234));
	g_assert_cmpstr(ca->name, ==, "CAs and SM");
	g_assert_cmpuint(ca->node_types, ==, QOS_NT_CA | QOS_NT_SELF);

	g_assert_cmpuint(p->levels->len, ==, 2);
	check_level(level(p, 0), "DEFAULT", 0, -1, -1, -1);
	g_assert_cmpstr(level(p, 0)->use, ==, "default QoS Level");
	check_level(level(p, 1), "WholeSet", 1, 4, 5, 8);
	check_ranges(level(p, 1)->pkeys, 1, R(0x1234, 0x1234));
	g_assert_cmpuint(level(p, 1)->path_bits->len, ==, 0);

	g_assert_cmpuint(p->rules->len, ==, 4);
	const struct qos_match_rule *r = rule(p, 0);
	g_assert_cmpstr(r->use, ==, "by QoS class");
	check_ranges(r->qos_class, 2, R(7, 9), R(11, 11));
	g_assert_cmpuint(r->level, ==, 1);
	g_assert_cmpuint(r->source->len + r->destination->len + r->service_id->len + r->pkey->len,
			 ==, 0);
	r = rule(p, 1);
	g_assert_cmpstr(r->use, ==, "Storage targets");
	g_assert_cmpuint(r->destination->len, ==, 1);
	g_assert_cmpuint(idx(r->destination, 0), ==, 0);
	check_ranges(r->service_id, 2, R(0x10000000000001, 0x10000000000001),
		     R(0x10000000000008, 0x10000000000FFF));
	g_assert_cmpuint(r->level, ==, 1);
	r = rule(p, 2);
	g_assert_cmpuint(r->source->len, ==, 1);
	g_assert_cmpuint(idx(r->source, 0), ==, 0);
	g_assert_cmpuint(r->level, ==, 0);      /* DEFAULT, named explicitly */
	r = rule(p, 3);
	check_ranges(r->qos_class, 2, R(7, 9), R(11, 11));
	g_assert_cmpuint(idx(r->source, 0), ==, 1);
	g_assert_cmpuint(idx(r->destination, 0), ==, 0);
	check_ranges(r->service_id, 1, R(0x10000, 0x1FFFF));
	check_ranges(r->pkey, 1, R(0x0F00, 0x0FFF));
	g_assert_cmpuint(r->level, ==, 1);
	for (guint i = 0; i < 4; i++)
		g_assert_cmpint(rule(p, i)->from_ulps, ==, 0);
	g_assert_cmpuint(p->ipoib_pkeys->len, ==, 0);
}

static void test_ex_full(void)
{
	struct qos_policy *p = parse_ok(full_opensm);
	check_full(p);
	g_assert_cmpuint(group(p, 0)->line, ==, 6);
	g_assert_cmpuint(rule(p, 0)->line, ==, 75);
	/* qos-setup: read, reported, not applied */
	g_assert_cmpuint(p->notes->len, ==, 1);
	g_assert_cmpstr(p->notes->pdata[0], ==, "t.conf:40:5: qos-setup is parsed but not applied: "
			"SL2VL and VL arbitration come from the qos_* options (as in OpenSM)");
	qos_policy_free(p);
}

/* NVIDIA's edition of the same example (line breaks mended): a comment after "port-group",
 * the port names as one quoted list. */
static void test_ex_full_nvidia(void)
{
	GString *s = g_string_new(full_opensm);
	g_assert_cmpuint(g_string_replace(s, "        port-group\n            name: Storage",
					  "        port-group # using port GUIDs\n            name: Storage",
					  1), ==, 1);
	g_assert_cmpuint(g_string_replace(s, "port-name: vs1 HCA-1/P1, vs2 HCA-1/P1",
					  "port-name: \"vs1 HCA-1/P1, vs2 HCA-1/P1\"", 1), ==, 1);
	struct qos_policy *p = parse_ok(s->str);
	check_full(p);
	g_assert_cmpuint(p->notes->len, ==, 2);
	g_assert_cmpstr(p->notes->pdata[0], ==, "t.conf:21:24: port-name: the quoted list is read "
			"as comma-separated names; OpenSM 3.3.23 reads it as one name");
	qos_policy_free(p);
	g_string_free(s, TRUE);
}

/* ---- OpenSM's document: simplified policy (qos-ulps) ------------------------------------ */

static void test_ex_ulps_shortest(void)
{
	struct qos_policy *p = parse_ok("    qos-ulps\n"
					"        default  : 0 #default SL\n"
					"    end-qos-ulps\n");
	g_assert_cmpuint(p->levels->len, ==, 1);
	check_level(level(p, 0), "DEFAULT", 0, -1, -1, -1);
	g_assert_cmpint(level(p, 0)->from_ulps, ==, 1);
	g_assert_cmpuint(p->rules->len, ==, 0);   /* "default" is no rule */
	g_assert_cmpuint(p->groups->len, ==, 0);
	qos_policy_free(p);
}

static const char ulps_full[] =
	"    qos-ulps\n"
	"        default                       : 0 # default SL\n"
	"        sdp, port-num 30000           : 0 # SL for application running on top\n"
	"                                          # of SDP when a destination\n"
	"                                          # TCP/IPport is 30000\n"
	"        sdp, port-num 10000-20000     : 0\n"
	"        sdp                           : 1 # default SL for any other\n"
	"                                          # application running on top of SDP\n"
	"        rds                           : 2 # SL for RDS traffic\n"
	"        iser, port-num 900            : 0 # SL for iSER with a specific target\n"
	"                                          # port\n"
	"        iser                          : 3 # default SL for iSER\n"
	"        ipoib, pkey 0x0001            : 0 # SL for IPoIB on partition with\n"
	"                                          # pkey 0x0001\n"
	"        ipoib                         : 4 # default IPoIB partition,\n"
	"                                          # pkey=0x7FFF\n"
	"        any, service-id 0x6234        : 6 # match any PR/MPR query with a\n"
	"                                          # specific Service ID\n"
	"        any, pkey 0x0ABC              : 6 # match any PR/MPR query with a\n"
	"                                          # specific PKey\n"
	"        srp, target-port-guid 0x1234  : 5 # SRP when SRP Target is located on\n"
	"                                          # a specified IB port GUID\n"
	"        any, target-port-guid 0x0ABC-0xFFFFF : 6 # match any PR/MPR query with\n"
	"                                          # a specific target port GUID\n"
	"    end-qos-ulps\n";

static void test_ex_ulps_full(void)
{
	struct qos_policy *p = parse_ok(ulps_full);
	/* levels: DEFAULT (SL 0), then one SL-only level per SL used */
	check_level(level(p, 0), "DEFAULT", 0, -1, -1, -1);
	g_assert_cmpuint(p->levels->len, ==, 1 + 7);   /* SLs 0 1 2 3 4 5 6 */
	for (guint i = 1; i < p->levels->len; i++)
		g_assert_cmpint(level(p, i)->from_ulps, ==, 1);
	check_level(level(p, 1), "qos-ulps SL 0", 0, -1, -1, -1);
	/* one rule per line but "default", in file order */
	g_assert_cmpuint(p->rules->len, ==, 12);
	static const int sls[] = { 0, 0, 1, 2, 0, 3, 0, 4, 6, 6, 5, 6 };
	static const unsigned lines[] = { 3, 6, 7, 9, 10, 12, 13, 15, 17, 19, 21, 23 };
	for (guint i = 0; i < 12; i++) {
		g_assert_cmpint(rule(p, i)->from_ulps, ==, 1);
		g_assert_cmpint(rule_sl(p, i), ==, sls[i]);
		g_assert_cmpuint(rule(p, i)->line, ==, lines[i]);
	}
	g_assert_cmpstr(rule(p, 0)->use, ==, "qos-ulps: sdp, port-num 30000           : 0");
	check_ranges(rule(p, 0)->service_id, 1, R(0x10000 + 30000, 0x10000 + 30000));
	check_ranges(rule(p, 1)->service_id, 1, R(0x10000 + 10000, 0x10000 + 20000));
	check_ranges(rule(p, 2)->service_id, 1, R(0x10000, 0x1FFFF));
	check_ranges(rule(p, 3)->service_id, 1, R(0x10648CA, 0x10648CA));
	check_ranges(rule(p, 4)->service_id, 1, R(0x1060000 + 900, 0x1060000 + 900));
	check_ranges(rule(p, 5)->service_id, 1, R(0x1060CBC, 0x1060CBC));
	check_ranges(rule(p, 6)->pkey, 1, R(1, 1));
	check_ranges(rule(p, 7)->pkey, 1, R(0x7fff, 0x7fff));
	check_ranges(rule(p, 8)->service_id, 1, R(0x6234, 0x6234));
	check_ranges(rule(p, 9)->pkey, 1, R(0xABC, 0xABC));
	/* srp and any target-port-guid: generated groups as destination */
	g_assert_cmpuint(p->groups->len, ==, 2);
	g_assert_cmpint(group(p, 0)->generated, ==, 1);
	check_ranges(group(p, 0)->guids, 1, R(0x1234, 0x1234));
	check_ranges(group(p, 1)->guids, 1, R(0xABC, 0xFFFFF));
	g_assert_cmpuint(rule(p, 10)->source->len, ==, 0);
	g_assert_cmpuint(idx(rule(p, 10)->destination, 0), ==, 0);
	g_assert_cmpuint(idx(rule(p, 11)->destination, 0), ==, 1);
	/* the IPoIB P_Keys, for the core to check against the partitions */
	check_ranges(p->ipoib_pkeys, 2, R(1, 1), R(0x7fff, 0x7fff));
	qos_policy_free(p);
}

/* ---- NVIDIA's deployment examples (OST*, MDS*, SRPT* given real GUIDs) ------------------ */

static void test_ex_hpc_lustre(void)
{
	struct qos_policy *p = parse_ok(
		"qos-ulps\n"
		"    default :0 #default SL (for MPI)\n"
		"    any, target-port-guid 0x0002c90300a00001,0x0002c90300a00002,0x0002c90300a00003,"
		"0x0002c90300a00004 :1 # SL for Lustre OST\n"
		"    any, target-port-guid 0x0002c90300b00001,0x0002c90300b00002 :2 # SL for Lustre MDS\n"
		"end-qos-ulps\n");
	g_assert_cmpint(level(p, 0)->sl, ==, 0);          /* MPI: the default */
	g_assert_cmpuint(p->rules->len, ==, 2);
	g_assert_cmpint(rule_sl(p, 0), ==, 1);
	g_assert_cmpint(rule_sl(p, 1), ==, 2);
	const struct qos_port_group *ost = group(p, idx(rule(p, 0)->destination, 0));
	const struct qos_port_group *mds = group(p, idx(rule(p, 1)->destination, 0));
	check_ranges(ost->guids, 4, R(0x0002c90300a00001, 0x0002c90300a00001),
		     R(0x0002c90300a00002, 0x0002c90300a00002), R(0x0002c90300a00003, 0x0002c90300a00003),
		     R(0x0002c90300a00004, 0x0002c90300a00004));
	check_ranges(mds->guids, 2, R(0x0002c90300b00001, 0x0002c90300b00001),
		     R(0x0002c90300b00002, 0x0002c90300b00002));
	g_assert_true(ost != mds);
	g_assert_cmpuint(rule(p, 0)->source->len, ==, 0);
	qos_policy_free(p);
}

static void test_ex_edc_two_tier(void)
{
	struct qos_policy *p = parse_ok(
		"qos-ulps\n"
		"    default :0\n"
		"    ipoib :1\n"
		"    sdp :1\n"
		"    srp, target-port-guid 0x0008f10403960001,0x0008f10403960002,0x0008f10403960003 :2\n"
		"end-qos-ulps\n");
	g_assert_cmpint(level(p, 0)->sl, ==, 0);
	g_assert_cmpuint(p->rules->len, ==, 3);
	check_ranges(rule(p, 0)->pkey, 1, R(0x7fff, 0x7fff));      /* IPoIB: default partition */
	g_assert_cmpint(rule_sl(p, 0), ==, 1);
	check_ranges(rule(p, 1)->service_id, 1, R(0x10000, 0x1ffff));
	g_assert_cmpint(rule_sl(p, 1), ==, 1);
	g_assert_cmpuint(rule(p, 0)->level, ==, rule(p, 1)->level);  /* one level per SL */
	g_assert_cmpint(rule_sl(p, 2), ==, 2);
	check_ranges(group(p, idx(rule(p, 2)->destination, 0))->guids, 3,
		     R(0x0008f10403960001, 0x0008f10403960001), R(0x0008f10403960002, 0x0008f10403960002),
		     R(0x0008f10403960003, 0x0008f10403960003));
	check_ranges(p->ipoib_pkeys, 1, R(0x7fff, 0x7fff));
	qos_policy_free(p);
}

static void test_ex_edc_three_tier(void)
{
	struct qos_policy *p = parse_ok(
		"qos-ulps\n"
		"    default :0\n"
		"    ipoib, pkey 0x8001 :1\n"
		"    ipoib, pkey 0x8002 :2\n"
		"    rds :3\n"
		"    srp, target-port-guid 0x0008f10403960001, 0x0008f10403960002, 0x0008f10403960003 :4\n"
		"end-qos-ulps\n");
	g_assert_cmpuint(p->rules->len, ==, 4);
	check_ranges(rule(p, 0)->pkey, 1, R(1, 1));      /* the full-member bit dropped */
	check_ranges(rule(p, 1)->pkey, 1, R(2, 2));
	check_ranges(rule(p, 2)->service_id, 1, R(0x10648CA, 0x10648CA));
	g_assert_cmpint(rule_sl(p, 0), ==, 1);
	g_assert_cmpint(rule_sl(p, 1), ==, 2);
	g_assert_cmpint(rule_sl(p, 2), ==, 3);
	g_assert_cmpint(rule_sl(p, 3), ==, 4);
	g_assert_cmpuint(group(p, idx(rule(p, 3)->destination, 0))->guids->len, ==, 3);
	check_ranges(p->ipoib_pkeys, 2, R(1, 1), R(2, 2));
	qos_policy_free(p);
}

/* ---- the equivalences the documents state ----------------------------------------------- */

static struct qos_policy *one_ulp(const char *line)
{
	char *s = g_strdup_printf("qos-ulps\ndefault : 0\n%s\nend-qos-ulps\n", line);
	struct qos_policy *p = parse_ok(s);
	g_free(s);
	g_assert_cmpuint(p->rules->len, ==, 1);
	return p;
}

/* Same SL, same criteria (service IDs, P_Keys, source / destination GUIDs). */
static void check_same_rule(const char *a, const char *b)
{
	struct qos_policy *pa = one_ulp(a), *pb = one_ulp(b);
	const struct qos_match_rule *ra = rule(pa, 0), *rb = rule(pb, 0);
	g_assert_cmpint(rule_sl(pa, 0), ==, rule_sl(pb, 0));
	g_assert_cmpuint(ra->service_id->len, ==, rb->service_id->len);
	g_assert_cmpmem(ra->service_id->data, ra->service_id->len * sizeof(struct qos_range),
			rb->service_id->data, rb->service_id->len * sizeof(struct qos_range));
	g_assert_cmpmem(ra->pkey->data, ra->pkey->len * sizeof(struct qos_range), rb->pkey->data,
			rb->pkey->len * sizeof(struct qos_range));
	g_assert_cmpuint(ra->source->len, ==, rb->source->len);
	g_assert_cmpuint(ra->destination->len, ==, rb->destination->len);
	for (guint i = 0; i < ra->destination->len; i++) {
		const GArray *ga = group(pa, idx(ra->destination, i))->guids;
		const GArray *gb = group(pb, idx(rb->destination, i))->guids;
		g_assert_cmpmem(ga->data, ga->len * sizeof(struct qos_range), gb->data,
				gb->len * sizeof(struct qos_range));
	}
	qos_policy_free(pa);
	qos_policy_free(pb);
}

static void test_equiv_ipoib(void)
{
	check_same_rule("ipoib : 5", "ipoib, pkey 0x7fff : 5");
	check_same_rule("ipoib : 5", "any,   pkey 0x7fff : 5");
	struct qos_policy *p = one_ulp("ipoib : 5");
	check_ranges(rule(p, 0)->pkey, 1, R(0x7fff, 0x7fff));
	check_ranges(p->ipoib_pkeys, 1, R(0x7fff, 0x7fff));
	qos_policy_free(p);
	p = one_ulp("any,   pkey 0x7fff : 5");      /* not an IPoIB line */
	g_assert_cmpuint(p->ipoib_pkeys->len, ==, 0);
	qos_policy_free(p);
}

static void test_equiv_sdp(void)
{
	check_same_rule("sdp : 3", "any, service-id 0x0000000000010000-0x000000000001ffff : 3");
	check_same_rule("sdp, port-num 0x1234 : 3", "any, service-id 0x11234 : 3");
}

static void test_equiv_rds(void)
{
	check_same_rule("rds : 2", "any, service-id 0x00000000010648CA : 2");
	check_same_rule("rds, port-num 0x48CA : 2", "rds : 2");
}

/* The QoS text first added to opensm(8) (2008) gives iSER's default port as 0x035C (Service ID
 * 0x106035C); OpenSM (every version, OSM_QOS_POLICY_ULP_ISER_PORT) uses 0x0CBC (3260, iSCSI): a
 * bare "iser" is 0x1060CBC there and here. That text's Service ID is "iser, port-num 0x035C". */
static void test_equiv_iser(void)
{
	check_same_rule("iser : 4", "any, service-id 0x0000000001060CBC : 4");
	check_same_rule("iser, port-num 0x035C : 4", "any, service-id 0x000000000106035C : 4");
	check_same_rule("iser, port-num 3260 : 4", "iser : 4");
}

static void test_equiv_srp(void)
{
	check_same_rule("srp, target-port-guid 0x1234  : 5", "any, target-port-guid 0x1234  : 5");
	struct qos_policy *p = one_ulp("any, source-port-guid 0x10-0x20 : 7");
	g_assert_cmpuint(rule(p, 0)->destination->len, ==, 0);
	check_ranges(group(p, idx(rule(p, 0)->source, 0))->guids, 1, R(0x10, 0x20));
	qos_policy_free(p);
	p = one_ulp("any, source-target-port-guid 0x5678 : 8");
	g_assert_cmpuint(idx(rule(p, 0)->source, 0), ==, idx(rule(p, 0)->destination, 0));
	g_assert_cmpint(group(p, 0)->generated, ==, 1);
	qos_policy_free(p);
}

/* ---- OpenSM's reading rules ------------------------------------------------------------- */

/* qos-match-rules before qos-ulps whatever the file order; groups named before they are
 * defined; named groups before generated ones; names without case or blanks. */
static void test_order_and_names(void)
{
	struct qos_policy *p = parse_ok(
		"qos-ulps\n"
		"  SDP : 2\n"
		"  any, target-port-guid 0x99 : 3\n"
		"end-qos-ulps\n"
		"qos-match-rules\n"
		"  qos-match-rule\n"
		"    source: virtualservers, STORAGE\n"
		"    qos-level-name: whole set\n"
		"  end-qos-match-rule\n"
		"end-qos-match-rules\n"
		"qos-levels\n"
		"  qos-level\n"
		"    name: WholeSet\n"
		"    sl: 9\n"
		"  end-qos-level\n"
		"  qos-level\n"
		"    name: Default\n"
		"    sl: 1\n"
		"  end-qos-level\n"
		"end-qos-levels\n"
		"port-groups\n"
		"  port-group\n"
		"    name: Storage\n"
		"  end-port-group\n"
		"end-port-groups\n"
		"port-groups\n"
		"  port-group\n"
		"    name: Virtual Servers\n"
		"  end-port-group\n"
		"end-port-groups\n");
	check_level(level(p, 0), "Default", 1, -1, -1, -1);       /* DEFAULT first */
	check_level(level(p, 1), "WholeSet", 9, -1, -1, -1);
	g_assert_cmpuint(p->rules->len, ==, 3);
	g_assert_cmpint(rule(p, 0)->from_ulps, ==, 0);
	g_assert_cmpuint(rule(p, 0)->level, ==, 1);
	g_assert_cmpuint(idx(rule(p, 0)->source, 0), ==, 1);
	g_assert_cmpuint(idx(rule(p, 0)->source, 1), ==, 0);
	g_assert_cmpint(rule(p, 1)->from_ulps, ==, 1);
	g_assert_cmpint(rule_sl(p, 1), ==, 2);
	g_assert_cmpint(rule_sl(p, 2), ==, 3);
	g_assert_cmpuint(p->groups->len, ==, 3);
	g_assert_cmpint(group(p, 2)->generated, ==, 1);
	g_assert_cmpuint(idx(rule(p, 2)->destination, 0), ==, 2);
	qos_policy_free(p);
}

/* Both a qos-levels DEFAULT and a qos-ulps default: the qos-levels one (OpenSM). */
static void test_default_both(void)
{
	GString *s = g_string_new(shortest);
	g_string_append(s, "qos-ulps\n  default : 7\nend-qos-ulps\n");
	struct qos_policy *p = parse_ok(s->str);
	g_assert_cmpuint(p->levels->len, ==, 1);
	check_level(level(p, 0), "DEFAULT", 0, -1, -1, -1);
	g_assert_cmpuint(p->notes->len, ==, 1);
	g_assert_cmpstr(p->notes->pdata[0], ==, "t.conf:8:3: qos-ulps 'default' not used: qos-level "
			"'DEFAULT' (line 2) is the DEFAULT level (as in OpenSM)");
	qos_policy_free(p);
	g_string_free(s, TRUE);
}

/* The rest of the grammar: qos-setup in full, path-bits, lists over lines, P_Key ranges over
 * the full bit, quoted names, node types in any case, CRLF, no final newline, '#' in quotes. */
static void test_grammar_rest(void)
{
	struct qos_policy *p = parse_ok(
		"qos-setup\r\n"
		"  vlarb-tables\r\n"
		"    vlarb-scope\r\n"
		"      group: Storage\r\n"
		"      across: Virtual Servers\r\n"
		"      vlarb-high: 0:255,1:127,2:63,3:31,4:15,5:7,6:3,7:1\r\n"
		"      vlarb-low: 8:255,9:127,10:63,11:31,12:15,13:7,14:3\r\n"
		"      vl-high-limit: 10\r\n"
		"    end-vlarb-scope\r\n"
		"  end-vlarb-tables\r\n"
		"  sl2vl-tables\r\n"
		"    sl2vl-scope\r\n"
		"      group: Part1\r\n"
		"      from: *\r\n"
		"      to: 1-4, 7\r\n"
		"      across-to: Storage2\r\n"
		"      across-from: Storage1\r\n"
		"      sl2vl-table: 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\r\n"
		"    end-sl2vl-scope\r\n"
		"  end-sl2vl-tables\r\n"
		"end-qos-setup\r\n"
		"port-groups\n"
		"  port-group\n"
		"    name : \"odd # name\"\n"
		"    port-guid: 0x1,\n"
		"               0x2-0x3\n"
		"    # a comment between\n"
		"               , 0x4\n"
		"    port-name: \"node, with comma/P2\", sw1/p0x10\n"
		"    node-type: all, Router\n"
		"    pkey: 0x7ffe-0x8001, 0xFFFF\n"
		"    partition: Part1, Part2\n"
		"  end-port-group\n"
		"end-port-groups\n"
		"qos-levels\n"
		"  qos-level\n"
		"    name: DEFAULT\n"
		"    sl: 15\n"
		"    mtu-limit: 5\n"
		"    rate-limit: 18\n"
		"    packet-life: 31\n"
		"    path-bits: 2,4,8-32\n"
		"    path-bits: 0\n"
		"  end-qos-level\n"
		"end-qos-levels");
	g_assert_cmpuint(p->notes->len, ==, 1);    /* qos-setup */
	const struct qos_port_group *g = group(p, 0);
	g_assert_cmpstr(g->name, ==, "odd # name");
	check_ranges(g->guids, 3, R(1, 1), R(2, 3), R(4, 4));
	g_assert_cmpuint(g->names->len, ==, 2);
	const struct qos_port_name *n = (const struct qos_port_name *)(const void *)g->names->data;
	g_assert_cmpstr(n[0].desc, ==, "node, with comma");
	g_assert_cmpuint(n[0].port, ==, 2);
	g_assert_cmpstr(n[1].desc, ==, "sw1");
	g_assert_cmpuint(n[1].port, ==, 16);
	g_assert_cmpuint(g->node_types, ==, QOS_NT_CA | QOS_NT_SWITCH | QOS_NT_ROUTER);
	check_ranges(g->pkeys, 3, R(0x7ffe, 0x7fff), R(0, 1), R(0x7fff, 0x7fff));
	g_assert_cmpuint(g->partitions->len, ==, 2);
	g_assert_cmpstr(g->partitions->pdata[1], ==, "Part2");
	check_level(level(p, 0), "DEFAULT", 15, 5, 18, 31);
	check_ranges(level(p, 0)->path_bits, 4, R(2, 2), R(4, 4), R(8, 32), R(0, 0));
	qos_policy_free(p);

	GArray *a = g_array_new(FALSE, FALSE, sizeof(struct qos_range));
	struct qos_range r = { 7, 9 };
	g_array_append_val(a, r);
	g_assert_true(qos_ranges_have(a, 7) && qos_ranges_have(a, 9) && !qos_ranges_have(a, 10));
	g_assert_false(qos_ranges_have(NULL, 1));
	g_array_free(a, TRUE);
}

/* ---- one test per error class ----------------------------------------------------------- */

#define LEVELS(body) "qos-levels\n qos-level\n" body "  name: DEFAULT\n  sl: 0\n end-qos-level\nend-qos-levels\n"

static void test_err_keyword(void)
{
	expect_error("qos-levels\n  qos-levle\n", "t.conf:2:3: unknown keyword 'qos-levle'");
	expect_error("Qos-Levels\n", "t.conf:1:1: unknown keyword 'Qos-Levels' (keywords are lower "
		     "case, as in OpenSM)");
	expect_error("qos-levels extra\n", "t.conf:1:12: unexpected text after 'qos-levels'");
	expect_error(", x\n", "t.conf:1:1: unexpected ',' at the start of a line");
}

static void test_err_outside_section(void)
{
	expect_error("name: x\n", "t.conf:1:1: 'name' outside of any section");
	expect_error("qos-levels\n  sl: 1\n", "t.conf:2:3: 'sl' is not allowed in qos-levels");
	expect_error("port-groups\n port-group\n  sl: 1\n", "t.conf:3:3: 'sl' is not allowed in port-group");
	expect_error("qos-level\n", "t.conf:1:1: 'qos-level' outside of qos-levels");
	expect_error("qos-levels\n port-groups\n", "t.conf:2:2: 'port-groups' inside qos-levels "
		     "(line 1): 'end-qos-levels' missing");
	expect_error("sdp : 1\n", "t.conf:1:1: 'sdp' is a qos-ulps line outside of qos-ulps");
	expect_error("qos-ulps\n default : 0\n qos-levels\n", "t.conf:3:2: 'qos-levels' inside "
		     "qos-ulps (line 1): 'end-qos-ulps' missing");
}

static void test_err_not_closed(void)
{
	expect_error("qos-levels\n qos-level\n  name: DEFAULT\n  sl: 0\n",
		     "t.conf:5:1: end of file inside qos-level (line 2): 'end-qos-level' missing");
	expect_error("qos-ulps\n default : 0", "t.conf:2:13: end of file inside qos-ulps (line 1): "
		     "'end-qos-ulps' missing");
	expect_error("end-qos-levels\n", "t.conf:1:1: 'end-qos-levels' without 'qos-levels'");
	expect_error("qos-levels\n qos-level\n end-qos-levels\n", "t.conf:3:2: 'end-qos-levels' "
		     "while qos-level (line 2) is still open");
	expect_error("port-groups\nend-port-groups\n", "t.conf:2:1: empty port-groups section "
		     "(OpenSM wants at least one port-group)");
	expect_error("qos-ulps\nend-qos-ulps\n", "t.conf:2:1: empty qos-ulps section (OpenSM wants "
		     "at least one line)");
}

static void test_err_colon_value(void)
{
	expect_error(LEVELS("  mtu-limit 4\n"), "t.conf:3:13: missing ':' after 'mtu-limit'");
	expect_error(LEVELS("  mtu-limit:   # none\n"), "t.conf:3:13: missing value after 'mtu-limit:'");
	expect_error("port-groups\n port-group\n  name: g\n  port-guid: 0x1,,0x2\n",
		     "t.conf:4:18: missing value after ','");
	expect_error("port-groups\n port-group\n  name: g\n  port-guid: 0x1,\n",
		     "t.conf:4:18: missing value after ','");
}

static void test_err_number(void)
{
	expect_error(LEVELS("  sl: 1O\n"), "t.conf:3:7: bad number '1O' for SL (decimal, or hex "
		     "with 0x)");
	expect_error(LEVELS("  path-bits: 1, -2\n"), "t.conf:3:17: bad number '-2' for path bits "
		     "(decimal, or hex with 0x)");
	expect_error(LEVELS("  pkey: 0x\n"), "t.conf:3:9: bad number '0x' for P_Key (decimal, or "
		     "hex with 0x)");
}

static void test_err_range(void)
{
	expect_error("qos-levels\n qos-level\n  name: DEFAULT\n  sl: 16\n", "t.conf:4:7: SL 16 out of "
		     "range (0-15)");
	expect_error(LEVELS("  mtu-limit: 6\n"), "t.conf:3:14: MTU limit 6 out of range (1-5)");
	expect_error(LEVELS("  rate-limit: 1\n"), "t.conf:3:15: rate limit 1 out of range (2-18)");
	expect_error(LEVELS("  packet-life: 32\n"), "t.conf:3:16: packet life 32 out of range (0-31)");
	expect_error(LEVELS("  pkey: 0x10000\n"), "t.conf:3:9: P_Key 0x10000 out of range "
		     "(0x0-0xffff)");
	expect_error("qos-ulps\n sdp, port-num 70000 : 1\n", "t.conf:2:16: TCP port 70000 out of "
		     "range (0-65535)");
	expect_error("qos-ulps\n default : 16\n", "t.conf:2:12: SL 16 out of range (0-15)");
	expect_error("qos-match-rules\n qos-match-rule\n  service-id: 0x10000000000000000\n",
		     "t.conf:3:15: service ID 0x10000000000000000 out of range (0x0-0xffffffffffffffff)");
}

/* A reversed range: OpenSM swaps the bounds and so does ibsm, with a note (a file OpenSM takes
 * must load). */
static void test_reversed_range(void)
{
	const char *t = "qos-levels\n qos-level\n  name: DEFAULT\n  sl: 0\n end-qos-level\nend-qos-levels\n"
			"qos-match-rules\n qos-match-rule\n  qos-class: 9-7\n  qos-level-name: DEFAULT\n"
			" end-qos-match-rule\nend-qos-match-rules\n";
	GError *err = NULL;
	struct qos_policy *p = qos_policy_parse_text(t, strlen(t), "t.conf", &err);
	g_assert_no_error(err);
	g_assert_nonnull(p);
	const struct qos_match_rule *r = p->rules->pdata[0];
	g_assert_cmpuint(r->qos_class->len, ==, 1);
	g_assert_cmpuint(g_array_index(r->qos_class, struct qos_range, 0).lo, ==, 7);
	g_assert_cmpuint(g_array_index(r->qos_class, struct qos_range, 0).hi, ==, 9);
	g_assert_cmpuint(p->notes->len, ==, 1);
	g_assert_cmpstr(p->notes->pdata[0], ==, "t.conf:9:14: range '9-7' read as 7-9 (the lower bound "
			"comes first)");
	qos_policy_free(p);
}

static void test_err_duplicate(void)
{
	expect_error("qos-levels\n qos-level\n  name: DEFAULT\n  sl: 0\n end-qos-level\n"
		     " qos-level\n  name: default\n", "t.conf:7:9: duplicate qos-level name 'default' "
		     "(first defined on line 3)");
	expect_error("port-groups\n port-group\n  name: Virtual Servers\n end-port-group\n"
		     " port-group\n  name: virtualservers\n", "t.conf:6:9: duplicate port-group name "
		     "'virtualservers' (first defined on line 3)");
	expect_error(LEVELS("  sl: 1\n"), "t.conf:5:3: 'sl' given twice in this qos-level");
}

static void test_err_missing_name(void)
{
	expect_error("port-groups\n port-group\n  use: x\n end-port-group\n", "t.conf:4:2: "
		     "port-group (line 2) without 'name'");
	expect_error("qos-levels\n qos-level\n  sl: 0\n end-qos-level\n", "t.conf:4:2: qos-level "
		     "(line 2) without 'name'");
	expect_error("qos-levels\n qos-level\n  name: DEFAULT\n end-qos-level\n", "t.conf:4:2: "
		     "qos-level 'DEFAULT' without 'sl'");
	expect_error("qos-match-rules\n qos-match-rule\n  qos-class: 1\n end-qos-match-rule\n",
		     "t.conf:4:2: qos-match-rule (line 2) without 'qos-level-name'");
	expect_error(LEVELS("  name: a, b\n"), "t.conf:3:10: 'name' takes one name, not a list");
}

static void test_err_unknown_group_level(void)
{
	GString *s = g_string_new(shortest);
	g_string_append(s, "qos-match-rules\n qos-match-rule\n  destination: Nowhere\n"
			"  qos-level-name: DEFAULT\n end-qos-match-rule\nend-qos-match-rules\n");
	expect_error(s->str, "t.conf:9:16: unknown port group 'Nowhere'");
	g_string_assign(s, shortest);
	g_string_append(s, "qos-match-rules\n qos-match-rule\n  qos-level-name: Gold\n"
			" end-qos-match-rule\nend-qos-match-rules\n");
	expect_error(s->str, "t.conf:9:19: unknown qos-level 'Gold'");
	g_string_free(s, TRUE);
}

static void test_err_no_default(void)
{
	expect_error("", "t.conf:1:1: no DEFAULT qos-level (a qos-level named DEFAULT, or 'default : "
		     "<SL>' in qos-ulps)");
	expect_error("qos-levels\n qos-level\n  name: Gold\n  sl: 1\n end-qos-level\nend-qos-levels\n",
		     "t.conf:7:1: no DEFAULT qos-level (a qos-level named DEFAULT, or 'default : <SL>' "
		     "in qos-ulps)");
	expect_error("qos-ulps\n sdp : 1\nend-qos-ulps\n", "t.conf:4:1: no DEFAULT qos-level (a "
		     "qos-level named DEFAULT, or 'default : <SL>' in qos-ulps)");
}

static void test_err_port_name(void)
{
	const char *head = "port-groups\n port-group\n  name: g\n";
	char *s = g_strconcat(head, "  port-name: hca1 P1\n", NULL);
	expect_error(s, "t.conf:4:14: bad port name 'hca1 P1' (node description/P<port number>)");
	g_free(s);
	s = g_strconcat(head, "  port-name: ok/P1, hca1/Q1\n", NULL);
	expect_error(s, "t.conf:4:21: bad port name 'hca1/Q1' (node description/P<port number>)");
	g_free(s);
	s = g_strconcat(head, "  port-name: hca1/P0\n", NULL);
	expect_error(s, "t.conf:4:20: port number 0 out of range (1-254)");
	g_free(s);
	s = g_strconcat(head, "  port-name: /P1\n", NULL);
	expect_error(s, "t.conf:4:14: bad port name '/P1' (node description/P<port number>)");
	g_free(s);
}

static void test_err_node_type(void)
{
	expect_error("port-groups\n port-group\n  name: g\n  node-type: CA, HCA\n", "t.conf:4:18: "
		     "bad node type 'HCA' (CA, SWITCH, ROUTER, ALL or SELF)");
}

static void test_err_ulp_line(void)
{
	const char *msgs[][2] = {
		{ " nfs : 1\n", "t.conf:2:2: bad qos-ulps line: unknown ULP 'nfs' (default, sdp, rds, "
		  "iser, srp, ipoib or any)" },
		{ " sdp, pkey 1 : 1\n", "t.conf:2:7: bad qos-ulps line: 'sdp' takes port-num, not 'pkey'" },
		{ " srp : 1\n", "t.conf:2:6: bad qos-ulps line: 'srp' needs ', target-port-guid <list>'" },
		{ " any : 1\n", "t.conf:2:6: bad qos-ulps line: 'any' needs ', <criterion> <list>'" },
		{ " sdp 1\n", "t.conf:2:6: bad qos-ulps line: missing ': <SL>'" },
		{ " sdp :\n", "t.conf:2:7: bad qos-ulps line: missing SL after ':'" },
		{ " sdp, port-num : 1\n", "t.conf:2:16: missing value" },
		{ " default, port-num 1 : 1\n", "t.conf:2:9: bad qos-ulps line: 'default' takes no "
		  "criterion" },
		{ " ipoib, pkey 0x1 : 1 2\n", "t.conf:2:20: bad number '1 2' for SL (decimal, or hex "
		  "with 0x)" },
		{ " : 1\n", "t.conf:2:2: bad qos-ulps line: no ULP before ':'" },
	};
	for (size_t i = 0; i < G_N_ELEMENTS(msgs); i++) {
		char *s = g_strconcat("qos-ulps\n", msgs[i][0], "end-qos-ulps\n", NULL);
		expect_error(s, msgs[i][1]);
		g_free(s);
	}
}

static void test_err_setup(void)
{
	expect_error("qos-setup\n sl2vl-tables\n  sl2vl-scope\n   group: a\n   sl2vl-table: 0,1,2\n",
		     "t.conf:5:17: sl2vl-table has 3 VLs, not 16 (one per SL)");
	expect_error("qos-setup\n sl2vl-tables\n  sl2vl-scope\n   group: a\n  end-sl2vl-scope\n",
		     "t.conf:5:3: sl2vl-scope without 'sl2vl-table'");
	expect_error("qos-setup\n vlarb-tables\n  vlarb-scope\n   vlarb-high: 0:4, 16:1\n",
		     "t.conf:4:21: VL 16 out of range (0-15)");
	expect_error("qos-setup\n vlarb-tables\n  vlarb-scope\n   vlarb-low: 0-4\n",
		     "t.conf:4:15: bad VL arbitration entry '0-4' (VL:weight)");
	expect_error("qos-setup\n vlarb-tables\n  vlarb-scope\n  end-vlarb-scope\n",
		     "t.conf:4:3: vlarb-scope without 'group' or 'across'");
	expect_error("qos-setup\n sl2vl-tables\n  sl2vl-scope\n   to: 128\n",
		     "t.conf:4:8: switch port 128 out of range (0-127)");
}

/* Never a crash, always a FILE:LINE:COL message: NUL bytes, open quotes, long lines. */
static void test_err_bytes(void)
{
	static const char nul[] = "qos-levels\n qos\0-level\n";
	GError *err = NULL;
	g_assert_null(qos_policy_parse_text(nul, sizeof(nul) - 1, "t.conf", &err));
	g_assert_cmpstr(err->message, ==, "t.conf:2:5: NUL byte in the file");
	g_clear_error(&err);
	expect_error("port-groups\n port-group\n  name: \"open\n", "t.conf:3:9: '\"' not closed on "
		     "its line");
	GString *s = g_string_new("qos-levels\n qos-level\n  use: ");
	for (int i = 0; i < 100000; i++)
		g_string_append(s, "x ");
	g_string_append(s, "\n  name: DEFAULT\n  sl: 0\n end-qos-level\nend-qos-levels");
	struct qos_policy *p = parse_ok(s->str);
	g_assert_cmpuint(strlen(level(p, 0)->use), ==, 199999);
	qos_policy_free(p);
	g_string_free(s, TRUE);
	g_assert_null(qos_policy_parse_text(NULL, 0, NULL, NULL));   /* no name, no error wanted */
}

/* the fuzz corpus holds the documents' examples: they parse */
static void test_corpus_examples(void)
{
	const char *dir = TEST_SRCDIR "/tests/fuzz/corpus/qos_policy";
	GDir *d = g_dir_open(dir, 0, NULL);
	g_assert_nonnull(d);
	int n = 0, ok = 0;
	const char *name;
	while ((name = g_dir_read_name(d))) {
		char *path = g_build_filename(dir, name, NULL), *data;
		gsize len;
		g_assert_true(g_file_get_contents(path, &data, &len, NULL));
		struct qos_policy *p = qos_policy_parse_text(data, len, "c.conf", NULL);
		ok += p != NULL;
		n++;
		qos_policy_free(p);
		g_free(data);
		g_free(path);
	}
	g_dir_close(d);
	g_test_message("%d corpus files, %d parse", n, ok);
	g_assert_cmpint(n, >=, 20);
	g_assert_cmpint(ok, >=, 10);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/qos-policy/example/shortest", test_ex_shortest);
	g_test_add_func("/qos-policy/example/full", test_ex_full);
	g_test_add_func("/qos-policy/example/full_nvidia", test_ex_full_nvidia);
	g_test_add_func("/qos-policy/example/ulps_shortest", test_ex_ulps_shortest);
	g_test_add_func("/qos-policy/example/ulps_full", test_ex_ulps_full);
	g_test_add_func("/qos-policy/example/hpc_lustre", test_ex_hpc_lustre);
	g_test_add_func("/qos-policy/example/edc_two_tier", test_ex_edc_two_tier);
	g_test_add_func("/qos-policy/example/edc_three_tier", test_ex_edc_three_tier);
	g_test_add_func("/qos-policy/equiv/ipoib", test_equiv_ipoib);
	g_test_add_func("/qos-policy/equiv/sdp", test_equiv_sdp);
	g_test_add_func("/qos-policy/equiv/rds", test_equiv_rds);
	g_test_add_func("/qos-policy/equiv/iser", test_equiv_iser);
	g_test_add_func("/qos-policy/equiv/srp", test_equiv_srp);
	g_test_add_func("/qos-policy/order_and_names", test_order_and_names);
	g_test_add_func("/qos-policy/default_both", test_default_both);
	g_test_add_func("/qos-policy/grammar_rest", test_grammar_rest);
	g_test_add_func("/qos-policy/error/keyword", test_err_keyword);
	g_test_add_func("/qos-policy/error/outside_section", test_err_outside_section);
	g_test_add_func("/qos-policy/error/not_closed", test_err_not_closed);
	g_test_add_func("/qos-policy/error/colon_value", test_err_colon_value);
	g_test_add_func("/qos-policy/error/number", test_err_number);
	g_test_add_func("/qos-policy/error/range", test_err_range);
	g_test_add_func("/qos-policy/reversed-range", test_reversed_range);
	g_test_add_func("/qos-policy/error/duplicate", test_err_duplicate);
	g_test_add_func("/qos-policy/error/missing_name", test_err_missing_name);
	g_test_add_func("/qos-policy/error/unknown_group_level", test_err_unknown_group_level);
	g_test_add_func("/qos-policy/error/no_default", test_err_no_default);
	g_test_add_func("/qos-policy/error/port_name", test_err_port_name);
	g_test_add_func("/qos-policy/error/node_type", test_err_node_type);
	g_test_add_func("/qos-policy/error/ulp_line", test_err_ulp_line);
	g_test_add_func("/qos-policy/error/setup", test_err_setup);
	g_test_add_func("/qos-policy/error/bytes", test_err_bytes);
	g_test_add_func("/qos-policy/corpus_examples", test_corpus_examples);
	return g_test_run();
}
