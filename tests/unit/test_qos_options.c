/* test_qos_options.c - the qos_* options (opensm(8), QOS CONFIGURATION): OpenSM's defaults,
 * per-port-type values over qos_ values, partial lists padded, every error class with the entry
 * named and, through the configuration files, the key and file:line:column; VLs fitted to OperVLs
 * as OpenSM masks them. */
#include <glib.h>
#include <string.h>
#include "base/log.h"
#include "config/build.h"
#include "config/keys.h"
#include "program/qos.h"
#include "policy/qos_options.h"

static char *tmpdir;

static void test_defaults(void)
{
	struct qos_port_config c;
	for (int t = 0; t < QOS_N_SCOPES; t++) {
		qos_config_resolve(NULL, (enum qos_scope)t, &c);
		g_assert_cmpuint(c.max_vls, ==, 15);
		g_assert_cmpuint(c.high_limit, ==, 0);
		static const uint8_t sl2vl[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 7 };
		g_assert_cmpmem(c.sl2vl, 16, sl2vl, 16);
		/* high 0:4, 1..14:0; low 0:0, 1..14:4; entries 15..63 empty */
		for (int i = 0; i < QOS_VLARB_MAX; i++) {
			g_assert_cmpuint(c.high[i].vl, ==, i < 15 ? i : 0);
			g_assert_cmpuint(c.high[i].weight, ==, i == 0 ? 4 : 0);
			g_assert_cmpuint(c.low[i].vl, ==, i < 15 ? i : 0);
			g_assert_cmpuint(c.low[i].weight, ==, i >= 1 && i < 15 ? 4 : 0);
		}
	}
}

/* The examples of opensm(8): qos_sw0_max_vls=2, qos_ca_sl2vl=0,1,2,3,5,5,5,12,12,0, (ten values
 * and a trailing comma), qos_swe_high_limit=0; and the 8-VL example of
 * OpenSM's doc/QoS_management_in_OpenSM.txt (vlarb_high=0:4,
 * vlarb_low=0:0,1:64,2:128,3:192,4:0,5:64,6:64,7:64, high_limit 6). */
static void test_per_type(void)
{
	char *v[QOS_N_SCOPES][QOS_N_PARAMS] = { { NULL } };
	v[QOS_S_SW0][QOS_P_MAX_VLS] = "2";
	v[QOS_S_CA][QOS_P_SL2VL] = "0,1,2,3,5,5,5,12,12,0,";
	v[QOS_S_SWE][QOS_P_HIGH_LIMIT] = "0";
	v[QOS_S_ALL][QOS_P_HIGH_LIMIT] = "6";
	v[QOS_S_ALL][QOS_P_VLARB_HIGH] = "0:4";
	v[QOS_S_ALL][QOS_P_VLARB_LOW] = "0:0,1:64,2:128,3:192,4:0,5:64,6:64,7:64";
	for (int t = 0; t < QOS_N_SCOPES; t++)
		for (int p = 0; p < QOS_N_PARAMS; p++)
			if (v[t][p])
				g_assert_cmpint(qos_option_check((enum qos_param)p, v[t][p], NULL), ==, 0);
	struct qos_port_config ca, sw0, swe, rtr;
	qos_config_resolve(v, QOS_S_CA, &ca);
	qos_config_resolve(v, QOS_S_SW0, &sw0);
	qos_config_resolve(v, QOS_S_SWE, &swe);
	qos_config_resolve(v, QOS_S_RTR, &rtr);
	static const uint8_t ca_sl2vl[16] = { 0, 1, 2, 3, 5, 5, 5, 12, 12, 0, 0, 0, 0, 0, 0, 0 };
	g_assert_cmpmem(ca.sl2vl, 16, ca_sl2vl, 16);
	g_assert_cmpuint(rtr.sl2vl[15], ==, 7);          /* the default: no qos_sl2vl given */
	g_assert_cmpuint(sw0.max_vls, ==, 2);
	g_assert_cmpuint(ca.max_vls, ==, 15);
	g_assert_cmpuint(swe.high_limit, ==, 0);         /* its own value beats qos_high_limit */
	g_assert_cmpuint(ca.high_limit, ==, 6);
	g_assert_cmpuint(ca.high[0].vl, ==, 0);
	g_assert_cmpuint(ca.high[0].weight, ==, 4);
	g_assert_cmpuint(ca.high[1].weight, ==, 0);      /* the rest of a short list: 0:0 */
	g_assert_cmpuint(ca.low[3].vl, ==, 3);
	g_assert_cmpuint(ca.low[3].weight, ==, 192);
	g_assert_cmpuint(ca.low[8].weight, ==, 0);
	g_assert_cmpuint(ca.low[8].vl, ==, 0);
}

static void expect_error(enum qos_param p, const char *value, const char *fragment)
{
	GError *err = NULL;
	g_assert_cmpint(qos_option_check(p, value, &err), ==, -1);
	g_assert_nonnull(err);
	if (!strstr(err->message, fragment))
		g_error("'%s': message '%s' lacks '%s'", value, err->message, fragment);
	g_error_free(err);
}

static void test_errors(void)
{
	expect_error(QOS_P_MAX_VLS, "0", "not a number of VLs 1-15");
	expect_error(QOS_P_MAX_VLS, "16", "not a number of VLs 1-15");
	expect_error(QOS_P_MAX_VLS, "eight", "not a number of VLs 1-15");
	expect_error(QOS_P_HIGH_LIMIT, "256", "not a high limit 0-255");
	expect_error(QOS_P_HIGH_LIMIT, "-1", "not a high limit 0-255");
	expect_error(QOS_P_VLARB_LOW, "0:0,1", "entry 2 ('1') is not VL:weight");
	expect_error(QOS_P_VLARB_LOW, "0:0,15:4", "entry 2 ('15:4'): the VL must be a number 0-14");
	expect_error(QOS_P_VLARB_HIGH, "0:256", "entry 1 ('0:256'): the weight must be a number 0-255");
	expect_error(QOS_P_VLARB_HIGH, "0:1,,2:3", "entry 2 of the VL:weight list is empty");
	expect_error(QOS_P_VLARB_HIGH, "", "entry 1 of the VL:weight list is empty");
	GString *many = g_string_new(NULL);
	for (int i = 0; i < 65; i++)
		g_string_append_printf(many, "%s%d:1", i ? "," : "", i % 15);
	expect_error(QOS_P_VLARB_LOW, many->str, "more than 64 entries");
	g_string_free(many, TRUE);
	expect_error(QOS_P_SL2VL, "0,1,16", "entry 3 ('16') (SL 2) must be a VL 0-15");
	expect_error(QOS_P_SL2VL, "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,0", "more than 16 entries");
	expect_error(QOS_P_SL2VL, "0,x", "entry 2 ('x')");
	/* accepted: blanks, hex, a trailing comma, VL 15 (drop) in SL2VL */
	g_assert_cmpint(qos_option_check(QOS_P_SL2VL, " 0, 0x1 ,15,", NULL), ==, 0);
	g_assert_cmpint(qos_option_check(QOS_P_VLARB_LOW, "0 : 0x40, 1:255 ,", NULL), ==, 0);
}

static char *write_tmp(const char *name, const char *text)
{
	char *p = g_build_filename(tmpdir, name, NULL);
	g_assert_true(g_file_set_contents(p, text, -1, NULL));
	return p;
}

static int build(struct sm_options *o, GError **err, const char *file)
{
	char *argv[] = { (char *)"ibsm", (char *)"-F", (char *)file, NULL };
	int sv = 0;
	log_set_quiet(1);
	int rc = options_build_err(3, argv, o, &sv, NULL, NULL, err);
	log_set_quiet(0);
	return rc;
}

/* Through the files: opensm.conf and YAML keys set the values; a bad value names the file,
 * line, column and key. */
static void test_config_files(void)
{
	struct sm_options o;
	GError *err = NULL;
	char *f = write_tmp("q.conf", "qos_max_vls 8\nqos_ca_sl2vl 0,1,2,3,5,5,5,12,12,0,\n"
				      "qos_swe_vlarb_low 0:1,1:2\n");
	g_assert_cmpint(build(&o, &err, f), ==, 0);
	g_assert_no_error(err);
	g_assert_cmpstr(o.qos_opt[QOS_S_ALL][QOS_P_MAX_VLS], ==, "8");
	g_assert_cmpstr(o.qos_opt[QOS_S_CA][QOS_P_SL2VL], ==, "0,1,2,3,5,5,5,12,12,0,");
	struct qos_port_config c;
	qos_config_resolve(o.qos_opt, QOS_S_SWE, &c);
	g_assert_cmpuint(c.max_vls, ==, 8);
	g_assert_cmpuint(c.low[1].weight, ==, 2);
	options_free(&o);
	char *y = write_tmp("q.yaml", "qos_sw0_sl2vl: \"3,3,3\"\nqos_rtr_high_limit: 9\n");
	g_assert_cmpint(build(&o, &err, y), ==, 0);
	g_assert_no_error(err);
	qos_config_resolve(o.qos_opt, QOS_S_RTR, &c);
	g_assert_cmpuint(c.high_limit, ==, 9);
	qos_config_resolve(o.qos_opt, QOS_S_SW0, &c);
	g_assert_cmpuint(c.sl2vl[2], ==, 3);
	g_assert_cmpuint(c.sl2vl[3], ==, 0);
	options_free(&o);
	char *bad = write_tmp("bad.conf", "qos_max_vls 8\nqos_swe_vlarb_high   0:4,3:300\n");
	g_assert_cmpint(build(&o, &err, bad), ==, -1);
	g_assert_nonnull(err);
	char *want = g_strdup_printf("%s:2:22: qos_swe_vlarb_high:", bad);
	if (!g_str_has_prefix(err->message, want) || !strstr(err->message, "entry 2 ('3:300')"))
		g_error("message '%s', want '%s ... entry 2 ('3:300') ...'", err->message, want);
	g_clear_error(&err);
	options_free(&o);
	g_free(want);
	g_free(f);
	g_free(y);
	g_free(bad);
}

/* OpenSM masks a VL with (1 << (OperVLs - 1)) - 1: 8 VLs keep 0-7 and fold 8-14 onto 0-6; 15
 * (drop) stays; 15 VLs keep everything. */
static void test_fit(void)
{
	g_assert_cmpuint(qos_oper_vls_count(4), ==, 8);
	g_assert_cmpuint(qos_oper_vls_count(5), ==, 15);
	g_assert_cmpuint(qos_fit_vl(12, 8), ==, 4);
	g_assert_cmpuint(qos_fit_vl(7, 8), ==, 7);
	g_assert_cmpuint(qos_fit_vl(15, 1), ==, 15);
	g_assert_cmpuint(qos_fit_vl(14, 15), ==, 14);
	g_assert_cmpuint(qos_fit_vl(5, 4), ==, 1);
	g_assert_cmpuint(qos_fit_vl(3, 1), ==, 0);
	g_assert_cmpuint(qos_fit_vl(6, 6), ==, 2); /* 6 usable (max_vls 6): masked by 4 */
	static const uint8_t vl[16] = { 0, 1, 2, 3, 5, 5, 5, 12, 12, 0, 0, 0, 0, 0, 0, 15 };
	uint8_t bytes[8];
	qos_sl2vl_bytes(vl, 8, bytes);
	static const uint8_t want[8] = { 0x01, 0x23, 0x55, 0x54, 0x40, 0x00, 0x00, 0x0f };
	g_assert_cmpmem(bytes, 8, want, 8);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	tmpdir = g_dir_make_tmp("ibsm-qos-XXXXXX", NULL);
	g_test_add_func("/qos_options/defaults", test_defaults);
	g_test_add_func("/qos_options/per_type", test_per_type);
	g_test_add_func("/qos_options/errors", test_errors);
	g_test_add_func("/qos_options/config_files", test_config_files);
	g_test_add_func("/qos_options/fit", test_fit);
	int rc = g_test_run();
	char *cmd[] = { (char *)"rm", (char *)"-rf", tmpdir, NULL };
	g_spawn_sync(NULL, cmd, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
	g_free(tmpdir);
	return rc;
}
