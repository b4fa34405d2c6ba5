/* test_trap_keys.c - OpenSM's trap keys at the unit level: the series of one error trap
 * (sm/traps.c: unhealthy past 10 in a row, a babbling port disabled past 250 under
 * babbling_port_policy, each within 5 s of the last, 60 s once unhealthy), and
 * suppress_sl2vl_mad_status_errors (program/vltables.c) against the fake SMA, whose ports
 * answer SL2VL Gets and Sets with MAD status 0x0C (no such attribute). */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric_fixture.h"
#include "fake_sma.h"
#include "sm/traps.h"

#define S_US 1000000LL

static void notice_129(uint8_t n[TRAP_NOTICE_BYTES], uint16_t lid, uint8_t port)
{
	memset(n, 0, TRAP_NOTICE_BYTES);
	n[0] = 0x81;
	n[5] = 129;
	n[6] = (uint8_t)(lid >> 8);
	n[7] = (uint8_t)lid;
	n[12] = (uint8_t)(lid >> 8);
	n[13] = (uint8_t)lid;
	n[14] = port;
}

/* One series at 10 ms intervals: traps 1-11 new, the 12th makes the port unhealthy, then
 * ignored; under the policy the 251st (250 before it) disables. */
static void test_series(void)
{
	uint8_t n[TRAP_NOTICE_BYTES];
	notice_129(n, 7, 3);
	for (int policy = 0; policy <= 1; policy++) {
		traps_repeat_reset();
		int64_t now = 1000 * S_US;
		for (uint32_t i = 0; i < 260; i++, now += 10000) {
			uint32_t prev = 99999;
			enum trap_repeat r = traps_repeat(n, now, policy, &prev);
			g_assert_cmpuint(prev, ==, i);
			enum trap_repeat want = i <= TRAP_REPEAT_IGNORE ? TRAP_REPEAT_NEW :
						i == TRAP_REPEAT_IGNORE + 1 ? TRAP_REPEAT_UNHEALTHY :
						policy && i >= TRAP_BABBLING_DISABLE ? TRAP_REPEAT_DISABLE :
						TRAP_REPEAT_IGNORED;
			g_assert_cmpint(r, ==, want);
		}
	}
	g_assert_cmpint(TRAP_BABBLING_DISABLE, ==, 250); /* OpenSM 3.3.23's threshold */
	traps_repeat_reset();
}

/* The aging: a gap over 5 s starts a new series, unless the port is unhealthy (60 s); another
 * port, or other notice bytes, is another series. */
static void test_aging(void)
{
	uint8_t n[TRAP_NOTICE_BYTES], other[TRAP_NOTICE_BYTES];
	notice_129(n, 7, 3);
	notice_129(other, 7, 4);
	traps_repeat_reset();
	uint32_t prev;
	int64_t now = 1000 * S_US;
	traps_repeat(n, now, 1, &prev);
	traps_repeat(n, now + 4 * S_US, 1, &prev);
	g_assert_cmpuint(prev, ==, 1);               /* within 5 s: the same series */
	traps_repeat(n, now + 10 * S_US, 1, &prev);
	g_assert_cmpuint(prev, ==, 0);               /* 6 s later: a new one */
	traps_repeat(other, now + 10 * S_US, 1, &prev);
	g_assert_cmpuint(prev, ==, 0);               /* port 4: its own */
	now += 20 * S_US;
	for (int i = 0; i < 12; i++)
		traps_repeat(n, now + i, 1, &prev);      /* 12 in a row: unhealthy */
	g_assert_cmpint(traps_repeat(n, now + 30 * S_US, 1, &prev), ==, TRAP_REPEAT_IGNORED);
	g_assert_cmpuint(prev, ==, 12);              /* 30 s later, still one series (60 s) */
	g_assert_cmpint(traps_repeat(n, now + 100 * S_US, 1, &prev), ==, TRAP_REPEAT_NEW);
	g_assert_cmpuint(prev, ==, 0);               /* 70 s later: over */
	traps_repeat_reset();
}

/* ---- suppress_sl2vl_mad_status_errors ---------------------------------------------------- */

static char *program_log(int suppress)
{
	struct fsma_bed b;
	struct program_report rep;
	struct fabric *shape = fx_line(2, 2, 0);
	fsma_bed_init(&b, shape, fx_ca_port(&shape->pub, 0, 1), 20);
	b.o.qos = 1;
	b.o.suppress_sl2vl_mad_status_errors = suppress;
	fsma_bed_discover(&b);
	log_set_quiet(1);
	fsma_bed_program(&b, NULL, 1, &rep); /* up; the second pass writes only the QoS tables */
	log_set_quiet(0);
	/* the CA ports claim SL2VL tables (IsSLMappingSupported), which the fake does not have */
	for (uint32_t p = 0; p < b.f->pub.n_ports; p++)
		if (b.f->nodes[b.f->ports[p].node].type == IBSM_CA && b.f->px[p].have_portinfo)
			mad_set_field(b.f->px[p].portinfo, 0, IB_PORT_CAPMASK_F,
				      mad_get_field(b.f->px[p].portinfo, 0, IB_PORT_CAPMASK_F) | IB_CAP_SL_MAP);
	char *dir = g_dir_make_tmp("ibsm-trapkeys-XXXXXX", NULL);
	char *path = g_build_filename(dir, "log", NULL);
	g_assert_cmpint(log_open(path, 0), ==, 0);
	log_set_level(IBSM_LOG_DEBUG);
	uint32_t mark = fsma_nrec(b.fk);
	fsma_bed_program(&b, NULL, 0, &rep);
	log_close();
	log_set_level(IBSM_LOG_INFO);
	char *text = NULL;
	g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
	uint32_t sl2vl = fsma_count(b.fk, mark, FSMA_ANY, IB_ATTR_SLVL_TABLE, FSMA_ANY);
	g_assert_cmpuint(sl2vl, >, 0); /* the fake was asked, and answered 0x0C */
	g_remove(path);
	g_rmdir(dir);
	g_free(path);
	g_free(dir);
	fsma_bed_clear(&b);
	return text;
}

static unsigned lines_with(const char *text, const char *a, const char *b)
{
	unsigned n = 0;
	char **lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; *l; l++)
		n += strstr(*l, a) && strstr(*l, b);
	g_strfreev(lines);
	return n;
}

static void test_sl2vl_suppressed(void)
{
	char *plain = program_log(0), *quiet = program_log(1);
	g_assert_cmpuint(lines_with(plain, "ERR  VLT-0001", "SLtoVLMappingTable"), >, 0);
	g_assert_cmpuint(lines_with(plain, "VLT-0003", ""), ==, 0);
	g_assert_cmpuint(lines_with(quiet, "VLT-0001", "SLtoVLMappingTable"), ==, 0);
	g_assert_cmpuint(lines_with(quiet, "VLT-0003", "SLtoVLMappingTable"), ==,
			 lines_with(plain, "ERR  VLT-0001", "SLtoVLMappingTable"));
	g_free(plain);
	g_free(quiet);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/trap_keys/series", test_series);
	g_test_add_func("/trap_keys/aging", test_aging);
	g_test_add_func("/trap_keys/sl2vl_suppressed", test_sl2vl_suppressed);
	return g_test_run();
}
