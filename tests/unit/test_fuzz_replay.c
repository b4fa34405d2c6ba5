/* test_fuzz_replay.c - replays the fuzz corpora (tests/fuzz/corpus/<target>/, plus the test
 * fabrics as seeds) through the fuzz targets under ASan/UBSan, so what the fuzzer once found
 * stays fixed even where clang's libFuzzer is not installed. */
#include <glib.h>
#include <string.h>
#include "../fuzz/fuzz_chain_policy.c"
#include "../fuzz/fuzz_netfile.c"
#include "../fuzz/fuzz_partitions.c"
#include "../fuzz/fuzz_port_groups.c"
#include "../fuzz/fuzz_qos_policy.c"
#include "../fuzz/fuzz_sa.c"
#include "../fuzz/fuzz_torus_conf.c"

static int replay_dir(const char *dir, int (*target)(const uint8_t *, size_t))
{
	GDir *d = g_dir_open(dir, 0, NULL);
	if (!d)
		return 0;
	int n = 0;
	const char *name;
	while ((name = g_dir_read_name(d))) {
		char *path = g_build_filename(dir, name, NULL);
		gchar *data;
		gsize len;
		if (g_file_test(path, G_FILE_TEST_IS_REGULAR) && g_file_get_contents(path, &data, &len, NULL)) {
			target((const uint8_t *)data, len);
			g_free(data);
			n++;
		}
		g_free(path);
	}
	g_dir_close(d);
	return n;
}

static void test_netfile_corpus(void)
{
	int n = replay_dir(TEST_SRCDIR "/tests/fuzz/corpus/netfile", fuzz_netfile);
	n += replay_dir(TEST_SRCDIR "/tests/fabrics", fuzz_netfile);
	g_test_message("%d inputs replayed", n);
	g_assert_cmpint(n, >, 10);
}

static void test_netfile_edge_inputs(void)
{
	const char *inputs[] = { "", "\n", "Switch", "Switch 0 \"x\"\n", "Switch 255 \"s\"\n[255] \"s\"[255]\n",
				 "Hca 2 \"h\"\n[1] \"h\"[2]\n", "switchguid=0xffffffffffffffff\nSwitch 2 \"a\"\n",
				 "include \"/dev/zero\"\n", "Hca 1 \"h\"\n[1] \"s\"[1]\n" };
	for (size_t i = 0; i < G_N_ELEMENTS(inputs); i++)
		fuzz_netfile((const uint8_t *)inputs[i], strlen(inputs[i]));
	uint8_t junk[4096];
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 131 + 7);
	fuzz_netfile(junk, sizeof(junk));
}

static void test_partitions_corpus(void)
{
	int n = replay_dir(TEST_SRCDIR "/tests/fuzz/corpus/partitions", fuzz_partitions);
	g_test_message("%d inputs replayed", n);
	g_assert_cmpint(n, >=, 10);
	const char *inputs[] = { "", ";", ":", "a", "=", ",", "#", "x:", "x:;", ":;", "mgid=",
				 "x : mgid=", "x : mgid=::", "x : mgid=ff12::1,scope=1,scope=2,scope=3;",
				 "x=0xffffffffffffffffffff : ALL ;", "x : 99999999999999999999999 ;",
				 "x : defmember=full : defmember=both : 0x1 ;", "x , defmember : ALL ;" };
	for (size_t i = 0; i < G_N_ELEMENTS(inputs); i++)
		fuzz_partitions((const uint8_t *)inputs[i], strlen(inputs[i]));
	GString *many = g_string_new(NULL); /* more auto keys than there are keys */
	for (int i = 0; i < 0x8001; i++)
		g_string_append(many, ":;");
	fuzz_partitions((const uint8_t *)many->str, many->len);
	g_string_free(many, TRUE);
}

/* QoS policy files: the corpus (the documents' examples, every error class), then edge inputs. */
static void test_qos_policy_corpus(void)
{
	int n = replay_dir(TEST_SRCDIR "/tests/fuzz/corpus/qos_policy", fuzz_qos_policy);
	g_test_message("%d inputs replayed", n);
	g_assert_cmpint(n, >=, 20);
	const char *inputs[] = { "", "\n", "#", "\"", ":", ",", "-", "qos-ulps", "qos-ulps\n",
				 "qos-ulps\ndefault:0\nend-qos-ulps", "qos-ulps\n:\nend-qos-ulps",
				 "qos-ulps\nany,\nend-qos-ulps", "qos-ulps\nsdp,port-num 1-\n",
				 "port-groups\nport-group\nport-guid: 0x1,\n", "port-groups\nport-group\n"
				 "port-name: \"a/P1,,/P\"\n", "qos-levels\nqos-level\nname: \"\"\n",
				 "qos-setup\nsl2vl-tables\nsl2vl-scope\nfrom: *,1\n" };
	for (size_t i = 0; i < G_N_ELEMENTS(inputs); i++)
		fuzz_qos_policy((const uint8_t *)inputs[i], strlen(inputs[i]));
	GString *many = g_string_new("qos-ulps\ndefault : 0\n"); /* every SL, many rules */
	for (int i = 0; i < 2000; i++)
		g_string_append_printf(many, "any, target-port-guid %d-%d : %d\n", i, i + 1, i % 16);
	g_string_append(many, "end-qos-ulps\n");
	fuzz_qos_policy((const uint8_t *)many->str, many->len);
	g_string_free(many, TRUE);
}

/* torus-2QoS.conf files: the corpus (the man page's example, the equivalences, every error
 * class), then edge inputs. */
static void test_torus_conf_corpus(void)
{
	int n = replay_dir(TEST_SRCDIR "/tests/fuzz/corpus/torus_conf", fuzz_torus_conf);
	g_test_message("%d inputs replayed", n);
	g_assert_cmpint(n, >=, 15);
	const char *inputs[] = { "", "\n", "#", "\r\n", "torus", "torus 1 1", "mesh 1 1 1",
				 "torus 2 2 2\nnext_seed\nnext_seed", "xp_link 1 1", "port_order",
				 "port_order #", "torus 4 4 4\nx_dateline -3\nxm_link 0x1 0x2",
				 "torus 1 1 1\nx_dateline -0", "torus 0x 1 1", "torus 0 1 1",
				 "portgroup_max_ports 99999999999999999999", "y_dateline",
				 "torus 49151 1 1\nx_dateline -49150" };
	for (size_t i = 0; i < G_N_ELEMENTS(inputs); i++)
		fuzz_torus_conf((const uint8_t *)inputs[i], strlen(inputs[i]));
	GString *many = g_string_new("torus 7 7 7\n"); /* many seeds, every port */
	for (int i = 1; i < 3000; i++)
		g_string_append_printf(many, "next_seed\nxp_link %d %d\nym_link %d 0x%x\n"
				       "z_dateline %d\n", i, i + 1, i, i + 2, i % 13 - 6);
	g_string_append(many, "port_order");
	for (int i = 0; i < 600; i++)
		g_string_append_printf(many, " %d", (i * 7) % 255);
	fuzz_torus_conf((const uint8_t *)many->str, many->len);
	g_string_free(many, TRUE);
}

/* SA requests: the corpus, then requests of every method and attribute with every single
 * component bit and all of them, whole and cut short. */
static void test_sa_corpus(void)
{
	int n = replay_dir(TEST_SRCDIR "/tests/fuzz/corpus/sa", fuzz_sa);
	g_test_message("%d inputs replayed", n);
	g_assert_cmpint(n, >=, 5);
	static const uint8_t methods[] = { 0x01, 0x02, 0x12, 0x14, 0x15, 0x81, 0x92 };
	static const uint16_t attrs[] = { 0x01, 0x11, 0x12, 0x14, 0x15, 0x18, 0x20, 0x30, 0x31, 0x33,
					  0x35, 0x38, 0x99, 0xffff };
	uint8_t mad[256];
	for (size_t mi = 0; mi < G_N_ELEMENTS(methods); mi++)
		for (size_t ai = 0; ai < G_N_ELEMENTS(attrs); ai++)
			for (int bit = -1; bit <= 64; bit++) {
				memset(mad, bit < 0 ? 0 : 0xA5, sizeof(mad));
				mad[0] = 1;
				mad[1] = 3;
				mad[2] = 2;
				mad[3] = methods[mi];
				mad_set_field(mad, 0, IB_MAD_ATTRID_F, attrs[ai]);
				mad_set_field64(mad, 0, IB_SA_COMPMASK_F,
						bit < 0 ? 0 : bit == 64 ? ~0ULL : 1ULL << bit);
				fuzz_sa(mad, sizeof(mad));
				fuzz_sa(mad, 40 + (size_t)(bit & 0x3f));
			}
}

/* Every attribute the SA knows (and some it does not) with every method, at every length from
 * nothing to a whole MAD, each MAD exactly as long as it arrived (ASan sees any read past it);
 * a request whose record is cut short is answered REQ_INVALID, never from the bytes after it. */
static void test_sa_every_length(void)
{
	static const uint8_t methods[] = { 0x01, 0x02, 0x06, 0x12, 0x14, 0x15, 0x86 };
	static const uint16_t attrs[] = { 0x01, 0x03, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,
					  0x20, 0x30, 0x31, 0x33, 0x35, 0x36, 0x38, 0x39, 0x3a, 0x3b,
					  0xf0, 0xf3, 0x99 };
	uint8_t mad[256];
	unsigned refused = 0;
	for (size_t mi = 0; mi < G_N_ELEMENTS(methods); mi++)
		for (size_t ai = 0; ai < G_N_ELEMENTS(attrs); ai++)
			for (int fill = 0; fill < 2; fill++)
				for (size_t len = 0; len <= sizeof(mad); len++) {
					memset(mad, fill ? 0xA5 : 0, sizeof(mad));
					mad[0] = 1;
					mad[1] = 3;
					mad[2] = 2;
					mad[3] = methods[mi];
					mad_set_field(mad, 0, IB_MAD_ATTRID_F, attrs[ai]);
					mad_set_field64(mad, 0, IB_SA_MKEY_F, 0);
					mad_set_field64(mad, 0, IB_SA_COMPMASK_F, fill ? ~0ULL : 0);
					fuzz_sa(mad, len);
				}
	/* the statuses: a NodeRecord Get, a ServiceRecord Set, a PathRecord GetTable cut short */
	static const struct { uint8_t method; uint16_t attr; size_t record; uint16_t whole; } cut[] = {
		{ 0x01, 0x11, 108, 0x0400 }, { 0x02, 0x31, 176, 0x0600 }, { 0x12, 0x35, 64, 0x0000 },
		{ 0x02, 0x38, 52, 0x0600 }, { 0x02, 0x03, 36, 0x0000 }, { 0x14, 0x3a, 24, 0x0600 },
	};
	struct sa *sa = setup();
	for (size_t i = 0; i < G_N_ELEMENTS(cut); i++)
		for (size_t data = 0; data <= cut[i].record; data++) {
			size_t len = 56 + data;
			uint8_t *buf = g_malloc0(umad_size() + len);
			uint8_t *m8 = umad_get_mad(buf);
			m8[0] = 1;
			m8[1] = 3;
			m8[2] = 2;
			m8[3] = cut[i].method;
			mad_set_field(m8, 0, IB_MAD_ATTRID_F, cut[i].attr);
			umad_set_addr(buf, 2, 1, 0, IB_DEFAULT_QP1_QKEY); /* from a CA port (LID 2) */
			uint8_t *ii = m8 + 56, sub[36] = { [16] = 0xff, [17] = 0xff, [22] = 1, [23] = 1,
							   [24] = 0xff, [25] = 0xff, [27] = 64, [31] = 16,
							   [33] = 0xff, [34] = 0xff, [35] = 0xff };
			if (cut[i].attr == 0x03) /* a subscription to trap 64, whatever of it arrived */
				memcpy(ii, sub, data < sizeof(sub) ? data : sizeof(sub));
			struct mad_in m = { .umad = buf, .len = (int)(umad_size() + len), .mad = m8,
					    .mgmt_class = 3, .class_version = 2, .method = cut[i].method,
					    .attr = cut[i].attr };
			struct sa_request rq;
			g_assert_cmpint(sa_decode(&m, &rq), ==, 0);
			struct sa_answer a = { .recs = g_byte_array_new() };
			sa_compute(sa, &rq, 1.0, &a);
			if (data < cut[i].record) {
				g_assert_cmphex(a.status, ==, 0x0200);
				g_assert_cmpuint(a.recs->len, ==, 0);
				refused++;
			} else { /* whole: answered on its merits (mask 0 asks too little of most) */
				g_test_message("method 0x%02x attr 0x%04x whole: status 0x%04x", cut[i].method,
					       cut[i].attr, a.status);
				g_assert_cmphex(a.status, ==, cut[i].whole);
			}
			g_byte_array_free(a.recs, TRUE);
			g_free(buf);
		}
	g_test_message("%u short records refused", refused);
	g_assert_cmpuint(refused, ==, 108 + 176 + 64 + 52 + 36 + 24);
}

/* Topology and routing-chain policies: the corpus (the manuals' examples, every error class),
 * then edge inputs, each read as both kinds of file by the target. */
static void test_chain_policy_corpus(void)
{
	int n = replay_dir(TEST_SRCDIR "/tests/fuzz/corpus/chain_policy", fuzz_chain_policy);
	g_test_message("%d inputs replayed", n);
	g_assert_cmpint(n, >=, 20);
	const char *inputs[] = { "", "\n", "#", "unicast-step", "end-unicast-step", "topology\nid:",
				 "unicast-step\nid: 1\nengine: minhop\nend-unicast-step\n"
				 "unicast-step\nid: 2\nengine: updn\nfallback-to: 2\n"
				 "end-unicast-step",
				 "unicast-step\nid: 99999999999999999999\nend-unicast-step",
				 "topology\nid: 1\nsw-grp: a:b\nend-topology", "path-bit: 1" };
	for (size_t i = 0; i < G_N_ELEMENTS(inputs); i++)
		fuzz_chain_policy((const uint8_t *)inputs[i], strlen(inputs[i]));
	GString *many = g_string_new(""); /* many steps, each the fallback of the one before */
	for (int i = 1; i < 2000; i++)
		g_string_append_printf(many, "unicast-step\nid: %d\nengine: e%d\n%s"
				       "end-unicast-step\n", i, i,
				       i % 2 ? "" : "fallback-to: 1\n");
	fuzz_chain_policy((const uint8_t *)many->str, many->len);
	g_string_free(many, TRUE);
}

/* Port group policies: the corpus (the manuals' examples, every error class),
 * then edge inputs: continuation lines, references, a long chain of groups. */
static void test_port_groups_corpus(void)
{
	int n = replay_dir(TEST_SRCDIR "/tests/fuzz/corpus/port_groups", fuzz_port_groups);
	g_test_message("%d inputs replayed", n);
	g_assert_cmpint(n, >=, 20);
	const char *inputs[] = { "", "\n", "#", "port-group", "end-port-group", "name: a",
				 "port-group\nname: a\nunion-rule: a, a\nend-port-group",
				 "port-group\nname: a\nport-guid: 0x1@\nend-port-group",
				 "port-group\nname: a\nnode-name: (\nend-port-group",
				 "port-group\nname: a\nport-guid: 1\n,\n,\nend-port-group",
				 "port-group\nname: ALL\nport-guid: 1\nend-port-group" };
	for (size_t i = 0; i < G_N_ELEMENTS(inputs); i++)
		fuzz_port_groups((const uint8_t *)inputs[i], strlen(inputs[i]));
	GString *many = g_string_new(""); /* each group the union of the one before and a GUID */
	g_string_append(many, "port-group\nname: g0\nport-guid: 0x1\nend-port-group\n");
	for (int i = 1; i < 3000; i++)
		g_string_append_printf(many, "port-group\nname: g%d\nunion-rule: g%d, ALL_CAS\n"
				       "port-guid: 0x%x@1/2-4\nend-port-group\n", i, i - 1, i + 1);
	fuzz_port_groups((const uint8_t *)many->str, many->len);
	g_string_free(many, TRUE);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/fuzz/chain_policy/corpus", test_chain_policy_corpus);
	g_test_add_func("/fuzz/netfile/corpus", test_netfile_corpus);
	g_test_add_func("/fuzz/netfile/edge_inputs", test_netfile_edge_inputs);
	g_test_add_func("/fuzz/partitions/corpus", test_partitions_corpus);
	g_test_add_func("/fuzz/port_groups/corpus", test_port_groups_corpus);
	g_test_add_func("/fuzz/qos_policy/corpus", test_qos_policy_corpus);
	g_test_add_func("/fuzz/sa/corpus", test_sa_corpus);
	g_test_add_func("/fuzz/sa/every-length", test_sa_every_length);
	g_test_add_func("/fuzz/torus_conf/corpus", test_torus_conf_corpus);
	return g_test_run();
}
