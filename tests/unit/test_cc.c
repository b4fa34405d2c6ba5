/* test_cc.c - congestion control (program/cc.h) against a fake CC agent: the bytes of every Set
 * against the layouts of IBA Annex A10 (OpenSM's ib_cc_mad_t, ib_sw_cong_setting_t,
 * ib_ca_cong_setting_t, ib_cc_tbl_t) for a set of cc_* values; the cc_* keys parsed as
 * OpenSM writes them, bad values refused with FILE:LINE:COL; who is sent what, in which order,
 * within the window; a refusal and a silence named once and left alone; nothing sent again
 * until the configuration (SIGHUP) changes, then only what changed; nothing at all when off. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include "base/log.h"
#include "config/config_file.h"
#include "config/keys.h"
#include "fabric_fixture.h"
#include "program/cc.h"

static unsigned get16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static void set_key(struct sm_options *o, const char *key, const char *value)
{
	GError *err = NULL;
	const struct config_key *k = config_key_find(key);
	g_assert_nonnull(k);
	if (config_set(o, k, value, &err) < 0)
		g_error("%s %s: %s", key, value, err->message);
}

/* The values of the byte checks: every field non-zero and distinct. */
static void sample_options(struct sm_options *o)
{
	options_defaults(o);
	set_key(o, "congestion_control", "TRUE");
	set_key(o, "cc_key", "0x0102030405060708");
	set_key(o, "cc_sw_cong_setting_control_map", "0x1f");
	/* bits 255 and 254 (the top byte) and ports 0, 1 and 9 (the last two bytes) */
	set_key(o, "cc_sw_cong_setting_victim_mask",
		"0xC000000000000000000000000000000000000000000000000000000000000203");
	set_key(o, "cc_sw_cong_setting_credit_mask", "0x1fe"); /* ports 1-8, written short */
	set_key(o, "cc_sw_cong_setting_threshold", "0x9");
	set_key(o, "cc_sw_cong_setting_packet_size", "5");
	set_key(o, "cc_sw_cong_setting_credit_starvation_threshold", "0xa");
	set_key(o, "cc_sw_cong_setting_credit_starvation_return_delay", "2:100");
	set_key(o, "cc_sw_cong_setting_marking_rate", "0x1234");
	set_key(o, "cc_ca_cong_setting_port_control", "0x0001");
	set_key(o, "cc_ca_cong_setting_control_map", "0x8005");
	set_key(o, "cc_ca_cong_setting_ccti_timer", "0 10");
	set_key(o, "cc_ca_cong_setting_ccti_timer", "2 0x1234"); /* the key again: another SL */
	set_key(o, "cc_ca_cong_setting_ccti_timer", "15 300");
	set_key(o, "cc_ca_cong_setting_ccti_increase", "0 1,2 7");
	set_key(o, "cc_ca_cong_setting_trigger_threshold", "2 9");
	set_key(o, "cc_ca_cong_setting_ccti_min", "15 3");
}

static void test_sw_bytes(void)
{
	struct sm_options o;
	sample_options(&o);
	uint8_t d[CC_DATA_SIZE];
	cc_encode_sw(&o, d);
	g_assert_cmphex(get32(d), ==, 0x1f);                   /* Control_Map */
	g_assert_cmphex(d[4], ==, 0xc0);                       /* Victim_Mask: bits 255..248 first */
	for (int i = 5; i < 34; i++)
		g_assert_cmphex(d[i], ==, 0);
	g_assert_cmphex(d[34], ==, 0x02);                      /* bit 9: port 9 */
	g_assert_cmphex(d[35], ==, 0x03);                      /* bits 1, 0: ports 1 and 0 */
	for (int i = 36; i < 66; i++)
		g_assert_cmphex(d[i], ==, 0);
	g_assert_cmphex(d[66], ==, 0x01);                      /* Credit_Mask 0x1fe: ports 1-8 */
	g_assert_cmphex(d[67], ==, 0xfe);
	g_assert_cmphex(d[68], ==, 0x90);                      /* Threshold, top nibble */
	g_assert_cmphex(d[69], ==, 5);                         /* Packet_Size */
	g_assert_cmphex(get16(d + 70), ==, 0xa000);            /* CS_Threshold, top nibble */
	g_assert_cmphex(get16(d + 72), ==, 2u << 14 | 100);    /* CS_ReturnDelay shift:multiplier */
	g_assert_cmphex(get16(d + 74), ==, 0x1234);            /* Marking_Rate */
	for (int i = 76; i < CC_DATA_SIZE; i++)
		g_assert_cmphex(d[i], ==, 0);
	options_free(&o);
}

static void test_ca_bytes(void)
{
	struct sm_options o;
	sample_options(&o);
	uint8_t d[CC_DATA_SIZE];
	cc_encode_ca(&o, d);
	g_assert_cmphex(get16(d), ==, 0x0001);                 /* Port_Control */
	g_assert_cmphex(get16(d + 2), ==, 0x8005);             /* Control_Map */
	/* entry SL n at 4 + 8n: CCTI_Timer (16), CCTI_Increase, Trigger_Threshold, CCTI_Min, 3 reserved */
	static const unsigned want[16][4] = { [0] = { 10, 1, 0, 0 }, [2] = { 0x1234, 7, 9, 0 },
					      [15] = { 300, 0, 0, 3 } };
	for (int sl = 0; sl < 16; sl++) {
		const uint8_t *e = d + 4 + 8 * sl;
		g_assert_cmphex(get16(e), ==, want[sl][0]);
		g_assert_cmphex(e[2], ==, want[sl][1]);
		g_assert_cmphex(e[3], ==, want[sl][2]);
		g_assert_cmphex(e[4], ==, want[sl][3]);
		g_assert_cmphex(e[5] | e[6] | e[7], ==, 0);
	}
	for (int i = 4 + 8 * 16; i < CC_DATA_SIZE; i++)
		g_assert_cmphex(d[i], ==, 0);
	options_free(&o);
}

static void test_cct_bytes(void)
{
	struct sm_options o;
	options_defaults(&o);
	uint8_t d[CC_DATA_SIZE];
	/* no entries: one block, CCTI_Limit 0, nothing else (OpenSM) */
	g_assert_cmpint(cc_cct_blocks(&o), ==, 1);
	cc_encode_cct(&o, 0, d);
	for (int i = 0; i < CC_DATA_SIZE; i++)
		g_assert_cmphex(d[i], ==, 0);
	/* 70 entries: two blocks, CCTI_Limit 69 in both, entry k at 4 + 2 (k mod 64) of block k / 64 */
	GString *s = g_string_new(NULL);
	for (int k = 0; k < 70; k++)
		g_string_append_printf(s, "%s%d:%d", k ? "," : "", k % 4, 1000 + k);
	set_key(&o, "cc_cct", s->str);
	g_assert_cmpint(cc_cct_blocks(&o), ==, 2);
	for (int b = 0; b < 2; b++) {
		cc_encode_cct(&o, b, d);
		g_assert_cmphex(get16(d), ==, 69);
		g_assert_cmphex(get16(d + 2), ==, 0);
		for (int j = 0; j < CC_CCT_BLOCK_ENTRIES; j++) {
			int k = b * 64 + j;
			g_assert_cmphex(get16(d + 4 + 2 * j), ==, k < 70 ? (unsigned)(k % 4) << 14 | (unsigned)(1000 + k) : 0u);
		}
		for (int i = 4 + 128; i < CC_DATA_SIZE; i++)
			g_assert_cmphex(d[i], ==, 0);
	}
	/* 64 entries: one block; 65: two */
	set_key(&o, "cc_cct", "1:1");
	g_assert_cmpint(cc_cct_blocks(&o), ==, 1);
	cc_encode_cct(&o, 0, d);
	g_assert_cmphex(get16(d), ==, 0);      /* one entry: limit 0, and OpenSM leaves the entry out */
	g_assert_cmphex(get16(d + 4), ==, 0);
	set_key(&o, "cc_cct", "0:0,3:16383");
	cc_encode_cct(&o, 0, d);
	g_assert_cmphex(get16(d), ==, 1);
	g_assert_cmphex(get16(d + 4), ==, 0);
	g_assert_cmphex(get16(d + 6), ==, 0xffff);
	g_string_free(s, TRUE);
	options_free(&o);
}

static void test_mad_bytes(void)
{
	uint8_t data[CC_DATA_SIZE], mad[CC_MAD_SIZE];
	for (int i = 0; i < CC_DATA_SIZE; i++)
		data[i] = (uint8_t)(i + 1);
	cc_encode_mad(mad, CC_ATTR_CCT, 3, 0x7a94, 0x0102030405060708ULL, data);
	g_assert_cmphex(mad[0], ==, 1);        /* BaseVersion */
	g_assert_cmphex(mad[1], ==, 0x21);     /* MgmtClass: Congestion Control */
	g_assert_cmphex(mad[2], ==, 2);        /* ClassVersion */
	g_assert_cmphex(mad[3], ==, 0x02);     /* Set */
	g_assert_cmphex(get32(mad + 4), ==, 0);/* Status, ClassSpecific */
	g_assert_cmphex(get64(mad + 8), ==, 0x7a94);
	g_assert_cmphex(get16(mad + 16), ==, 0x0017);
	g_assert_cmphex(get16(mad + 18), ==, 0);
	g_assert_cmphex(get32(mad + 20), ==, 3);
	g_assert_cmphex(get64(mad + 24), ==, 0x0102030405060708ULL); /* CC_Key */
	for (int i = 32; i < 64; i++)
		g_assert_cmphex(mad[i], ==, 0);  /* CongestionLogData */
	g_assert_cmpmem(mad + 64, CC_DATA_SIZE, data, CC_DATA_SIZE);
}

/* ---- the keys ---- */

static char *tmpdir;

static int load(const char *text, struct sm_options *o, char **msg)
{
	char *p = g_build_filename(tmpdir, "opensm.conf", NULL);
	g_assert_true(g_file_set_contents(p, text, -1, NULL));
	GError *err = NULL;
	options_defaults(o);
	int rc = config_load(p, o, &err);
	*msg = err ? g_strdup(err->message) : NULL;
	g_clear_error(&err);
	g_free(p);
	return rc;
}

/* OpenSM's own template lines are read; a bad value is refused with FILE:LINE:COL and its key */
static void test_keys(void)
{
	struct sm_options o;
	char *msg;
	g_assert_cmpint(load("# OpenSM's template, congestion control part\n"
			     "congestion_control TRUE\n"
			     "cc_key 0x0000000000000000\n"
			     "cc_max_outstanding_mads 500\n"
			     "cc_sw_cong_setting_control_map 0x0\n"
			     "cc_sw_cong_setting_victim_mask 0x0000000000000000000000000000000000000000000000000000000000000001\n"
			     "cc_sw_cong_setting_threshold 0x00\n"
			     "cc_sw_cong_setting_credit_starvation_return_delay 1:3\n"
			     "cc_ca_cong_setting_port_control 0x0000\n"
			     "cc_ca_cong_setting_ccti_timer 0 0\n"
			     "cc_ca_cong_setting_ccti_timer 4 77\n"
			     "cc_ca_cong_setting_ccti_min 4 2\n"
			     "cc_cct (null)\n", &o, &msg), ==, 0);
	g_assert_null(msg);
	g_assert_true(o.congestion_control);
	g_assert_cmpint(o.cc_max_outstanding_mads, ==, 500);
	g_assert_cmphex(o.cc_sw_victim_mask[31], ==, 1);
	g_assert_cmphex(o.cc_sw_cs_return_delay, ==, 1u << 14 | 3);
	g_assert_cmpuint(o.cc_ca_entries[4].ccti_timer, ==, 77);
	g_assert_cmpuint(o.cc_ca_entries[4].ccti_min, ==, 2);
	g_assert_cmpuint(o.cc_ca_entries[0].ccti_timer, ==, 0);
	g_assert_cmpint(o.cc_cct_len, ==, 0);
	/* the template's spelling reads back to the same settings */
	size_t n;
	const struct config_key *ks = config_keys(&n);
	struct sm_options back;
	options_defaults(&back);
	for (size_t i = 0; i < n; i++) {
		if (strncmp(ks[i].key, "cc_", 3) && strcmp(ks[i].key, "congestion_control"))
			continue;
		char *v = config_format(&o, &ks[i]);
		GError *err = NULL;
		g_assert_cmpint(config_set(&back, &ks[i], v, &err), ==, 0);
		g_free(v);
	}
	g_assert_cmpmem(back.cc_sw_victim_mask, 32, o.cc_sw_victim_mask, 32);
	g_assert_cmpmem(back.cc_ca_entries, sizeof(back.cc_ca_entries), o.cc_ca_entries, sizeof(o.cc_ca_entries));
	g_assert_cmphex(back.cc_sw_cs_return_delay, ==, o.cc_sw_cs_return_delay);
	options_free(&back);
	options_free(&o);

	static const struct {
		const char *line;
		const char *says;
	} bad[] = {
		{ "cc_sw_cong_setting_victim_mask 0x12g4", "256-bit hex" },
		{ "cc_sw_cong_setting_credit_mask 0x10000000000000000000000000000000000000000000000000000000000000000",
		  "256-bit hex" },   /* 65 digits */
		{ "cc_sw_cong_setting_threshold 16", "0-15" },
		{ "cc_sw_cong_setting_credit_starvation_threshold 0x1f", "0-15" },
		{ "cc_sw_cong_setting_packet_size 256", "0-255" },
		{ "cc_sw_cong_setting_credit_starvation_return_delay 4:0", "SHIFT:MULTIPLIER" },
		{ "cc_sw_cong_setting_credit_starvation_return_delay 1:16384", "SHIFT:MULTIPLIER" },
		{ "cc_sw_cong_setting_credit_starvation_return_delay 7", "SHIFT:MULTIPLIER" },
		{ "cc_sw_cong_setting_marking_rate 65536", "0-65535" },
		{ "cc_ca_cong_setting_control_map 0x10000", "0-65535" },
		{ "cc_ca_cong_setting_ccti_timer 16 5", "SL VALUE" },
		{ "cc_ca_cong_setting_ccti_timer 3", "SL VALUE" },
		{ "cc_ca_cong_setting_ccti_timer 3 65536", "SL VALUE" },
		{ "cc_ca_cong_setting_ccti_increase 0 256", "SL VALUE" },
		{ "cc_ca_cong_setting_trigger_threshold 1 2 3", "SL VALUE" },
		{ "cc_ca_cong_setting_ccti_min x 1", "SL VALUE" },
		{ "cc_cct 0:1,2:3,x", "CCT entry 2" },
		{ "cc_cct 0:1,4:3", "CCT entry 1" },
		{ "cc_key 0xnothex", "64-bit" },
		{ "congestion_control maybe", "boolean" },
		{ "cc_max_outstanding_mads -1", "number" },
	};
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		char *text = g_strdup_printf("congestion_control TRUE\n# a comment\n%s\n", bad[i].line);
		g_assert_cmpint(load(text, &o, &msg), <, 0);
		char *where = g_strdup_printf("opensm.conf:3:");
		if (!msg || !strstr(msg, where) || !strstr(msg, bad[i].says))
			g_error("'%s': %s", bad[i].line, msg ? msg : "(no error)");
		g_free(where);
		g_free(msg);
		g_free(text);
		options_free(&o);
	}
	/* 129 CCT entries: one too many (OpenSM's OSM_CCT_ENTRY_MAX) */
	GString *s = g_string_new("cc_cct ");
	for (int k = 0; k < 129; k++)
		g_string_append_printf(s, "%s0:%d", k ? "," : "", k);
	g_string_append_c(s, '\n');
	g_assert_cmpint(load(s->str, &o, &msg), <, 0);
	g_assert_nonnull(strstr(msg, "opensm.conf:1:"));
	g_assert_nonnull(strstr(msg, "more than 128"));
	g_free(msg);
	options_free(&o);
	g_string_truncate(s, 0);
	g_string_append(s, "cc_cct ");
	for (int k = 0; k < 128; k++)
		g_string_append_printf(s, "%s0:%d", k ? "," : "", k);
	g_assert_cmpint(load(s->str, &o, &msg), ==, 0);
	g_assert_cmpint(o.cc_cct_len, ==, 128);
	g_assert_cmpint(cc_cct_blocks(&o), ==, 2);
	options_free(&o);
	g_string_free(s, TRUE);
}

/* ---- the manager against a fake agent ---- */

#define ANSWER 0
#define SILENT -1

struct sent {
	uint16_t lid;
	uint8_t mad[CC_MAD_SIZE];
};

struct fake {
	GArray *sent;          /* struct sent */
	GQueue answers;        /* struct sent * to hand back at the next poll */
	GHashTable *behave;    /* LID -> status to answer + 1, or SILENT - 1 ... (absent: ANSWER) */
	struct cc_mgr *m;
	int inflight, max_inflight;
};

static int behaviour(struct fake *x, uint16_t lid)
{
	gpointer v;
	if (!g_hash_table_lookup_extended(x->behave, GUINT_TO_POINTER(lid), NULL, &v))
		return ANSWER;
	return GPOINTER_TO_INT(v);
}

static int fake_send(void *ctx, uint16_t lid, const uint8_t *mad, size_t len)
{
	struct fake *x = ctx;
	g_assert_cmpuint(len, ==, CC_MAD_SIZE);
	struct sent s = { .lid = lid };
	memcpy(s.mad, mad, CC_MAD_SIZE);
	g_array_append_val(x->sent, s);
	int b = behaviour(x, lid);
	if (b == SILENT)
		return 0;
	x->inflight++;
	if (x->inflight > x->max_inflight)
		x->max_inflight = x->inflight;
	struct sent *a = g_memdup2(&s, sizeof(s));
	a->mad[3] = 0x81; /* GetResp: the attribute echoed */
	a->mad[4] = (uint8_t)(b >> 8);
	a->mad[5] = (uint8_t)b;
	a->mad[8] = 0x00; /* the kernel's agent number in the top half of the TID */
	a->mad[11] = 0x04;
	g_queue_push_tail(&x->answers, a);
	return 0;
}

static void fake_poll(void *ctx, int timeout_ms)
{
	struct fake *x = ctx;
	if (g_queue_is_empty(&x->answers)) {
		g_usleep((gulong)timeout_ms * 1000);
		return;
	}
	struct sent *a;
	while ((a = g_queue_pop_head(&x->answers))) {
		x->inflight--;
		cc_on_answer(x->m, a->mad, CC_MAD_SIZE);
		g_free(a);
	}
}

static void fake_init(struct fake *x)
{
	memset(x, 0, sizeof(*x));
	x->sent = g_array_new(FALSE, FALSE, sizeof(struct sent));
	g_queue_init(&x->answers);
	x->behave = g_hash_table_new(g_direct_hash, g_direct_equal);
	struct cc_io io = { x, fake_send, fake_poll };
	x->m = cc_new(&io);
}

static void fake_free(struct fake *x)
{
	cc_free(x->m);
	g_array_free(x->sent, TRUE);
	g_hash_table_destroy(x->behave);
}

static unsigned count(const struct fake *x, uint16_t lid, uint16_t attr)
{
	unsigned n = 0;
	for (guint i = 0; i < x->sent->len; i++) {
		const struct sent *s = &g_array_index(x->sent, struct sent, i);
		if ((!lid || s->lid == lid) && (!attr || get16(s->mad + 16) == attr))
			n++;
	}
	return n;
}

static char *logpath;

static unsigned log_count(const char *code)
{
	char *text = NULL;
	g_assert_true(g_file_get_contents(logpath, &text, NULL, NULL));
	unsigned n = 0;
	for (const char *p = text; (p = strstr(p, code)); p++)
		n++;
	g_free(text);
	return n;
}

/* Two switches, two CAs on each: what each port is sent, with OpenSM's bytes, in port GUID order */
static void test_run(void)
{
	struct fabric *f = fx_line(2, 2, 0);
	struct sm_options o;
	sample_options(&o);
	set_key(&o, "cc_cct", "0:1,1:2,2:3");
	o.timeout_ms = 10;
	o.retries = 2;
	struct fake x;
	fake_init(&x);
	uint16_t sw0 = fx_switch_lid(f, 0), sw1 = fx_switch_lid(f, 1), ca0 = fx_ca_lid(f, 0), ca3 = fx_ca_lid(f, 3);
	g_hash_table_insert(x.behave, GUINT_TO_POINTER(sw1), GINT_TO_POINTER(0x0008)); /* as ibsim's switches */
	g_hash_table_insert(x.behave, GUINT_TO_POINTER(ca3), GINT_TO_POINTER(SILENT));
	struct cc_stats st;
	unsigned before = log_count("CC-0001");
	g_assert_cmpuint(cc_run(x.m, f, &o, NULL, &st), ==, 2 + 4 * 2);
	g_assert_cmpuint(st.switches, ==, 2);
	g_assert_cmpuint(st.ca_ports, ==, 4);
	g_assert_cmpuint(st.accepted, ==, 1 + 3 * 2);
	g_assert_cmpuint(st.refused, ==, 1);
	g_assert_cmpuint(st.timed_out, >=, 1);
	g_assert_cmpuint(log_count("CC-0001") - before, ==, 2); /* sw1 and ca3's node, once each */
	/* sw0: one SwitchCongestionSetting, nothing else; a CA port: CACongestionSetting, one CCT block */
	g_assert_cmpuint(count(&x, sw0, 0), ==, 1);
	g_assert_cmpuint(count(&x, sw0, CC_ATTR_SW_CONG_SETTING), ==, 1);
	g_assert_cmpuint(count(&x, ca0, CC_ATTR_CA_CONG_SETTING), ==, 1);
	g_assert_cmpuint(count(&x, ca0, CC_ATTR_CCT), ==, 1);
	/* the silent port: its first Set tried 1 + retries times, then left alone */
	g_assert_cmpuint(count(&x, ca3, CC_ATTR_CA_CONG_SETTING), ==, 3);
	/* every MAD: OpenSM's header, the CC_Key, the data of its attribute */
	uint8_t sw[CC_DATA_SIZE], ca[CC_DATA_SIZE], cct[CC_DATA_SIZE];
	cc_encode_sw(&o, sw);
	cc_encode_ca(&o, ca);
	cc_encode_cct(&o, 0, cct);
	uint64_t last_guid = 0;
	GHashTable *tids = g_hash_table_new(g_direct_hash, g_direct_equal);
	for (guint i = 0; i < x.sent->len; i++) {
		const struct sent *s = &g_array_index(x.sent, struct sent, i);
		const uint8_t *mad = s->mad;
		g_assert_cmphex(get32(mad), ==, 0x01210202);
		g_assert_cmphex(get64(mad + 24), ==, 0x0102030405060708ULL);
		uint32_t tid = (uint32_t)get64(mad + 8);
		g_assert_cmphex(tid, >, CC_FIRST_TID);
		g_assert_false(g_hash_table_contains(tids, GUINT_TO_POINTER(tid))); /* a new TID per attempt */
		g_hash_table_add(tids, GUINT_TO_POINTER(tid));
		uint16_t attr = (uint16_t)get16(mad + 16);
		const uint8_t *want = attr == CC_ATTR_SW_CONG_SETTING ? sw : attr == CC_ATTR_CA_CONG_SETTING ? ca : cct;
		g_assert_cmpmem(mad + 64, CC_DATA_SIZE, want, CC_DATA_SIZE);
		g_assert_cmphex(get32(mad + 20), ==, 0);
		uint32_t port = f->pub.lid_port[s->lid];
		g_assert_cmpuint(port, !=, IBSM_NONE);
		if (i < 10) { /* the first attempts go out in OpenSM's order: by byte-swapped port GUID */
			g_assert_cmphex(GUINT64_SWAP_LE_BE(f->ports[port].guid), >=, last_guid);
			last_guid = GUINT64_SWAP_LE_BE(f->ports[port].guid);
		}
	}
	g_hash_table_destroy(tids);

	/* the same configuration again: every port holds it or refused it: nothing sent */
	g_array_set_size(x.sent, 0);
	g_assert_cmpuint(cc_run(x.m, f, &o, NULL, &st), ==, 0);
	g_assert_cmpuint(x.sent->len, ==, 0);
	g_assert_cmpuint(st.held, ==, 1 + 3 * 2);
	g_assert_cmpuint(st.left_alone, ==, 2);
	g_assert_cmpuint(log_count("CC-0001") - before, ==, 2); /* not named again */

	/* SIGHUP with a new CA setting: the CA ports get CACongestionSetting only, the switch that
	 * holds its setting nothing, the ports that refused are asked once more */
	set_key(&o, "cc_ca_cong_setting_ccti_timer", "1 99");
	g_assert_cmpuint(cc_run(x.m, f, &o, NULL, &st), ==, 3 + 2 + 1);  /* ca3: its CCT block too */
	g_assert_cmpuint(count(&x, 0, CC_ATTR_CA_CONG_SETTING), ==, 3 + 3);  /* ca3 silent: 3 attempts */
	g_assert_cmpuint(count(&x, ca3, CC_ATTR_CCT), >=, 1);
	g_assert_cmpuint(count(&x, 0, CC_ATTR_CCT), ==, count(&x, ca3, CC_ATTR_CCT)); /* the others hold it */
	g_assert_cmpuint(count(&x, sw0, 0), ==, 0);
	g_assert_cmpuint(count(&x, sw1, CC_ATTR_SW_CONG_SETTING), ==, 1);
	g_assert_cmpuint(log_count("CC-0001") - before, ==, 4); /* a new configuration: named again */
	cc_encode_ca(&o, ca);
	for (guint i = 0; i < x.sent->len; i++) {
		const struct sent *s = &g_array_index(x.sent, struct sent, i);
		if (get16(s->mad + 16) == CC_ATTR_CA_CONG_SETTING)
			g_assert_cmpmem(s->mad + 64, CC_DATA_SIZE, ca, CC_DATA_SIZE);
	}
	/* a new CCT: one more block to every CA port that takes CC */
	g_array_set_size(x.sent, 0);
	GString *t = g_string_new(NULL);
	for (int k = 0; k < 65; k++)
		g_string_append_printf(t, "%s1:%d", k ? "," : "", k);
	set_key(&o, "cc_cct", t->str);
	g_string_free(t, TRUE);
	g_hash_table_remove(x.behave, GUINT_TO_POINTER(ca3)); /* it answers now */
	cc_run(x.m, f, &o, NULL, &st);
	g_assert_cmpuint(count(&x, 0, CC_ATTR_CCT), ==, 4 * 2);
	g_assert_cmpuint(count(&x, ca3, CC_ATTR_CA_CONG_SETTING), ==, 1);
	g_assert_cmpuint(count(&x, ca0, CC_ATTR_CA_CONG_SETTING), ==, 0);
	unsigned mods = 0;
	for (guint i = 0; i < x.sent->len; i++) {
		const struct sent *s = &g_array_index(x.sent, struct sent, i);
		if (get16(s->mad + 16) == CC_ATTR_CCT)
			mods |= 1u << get32(s->mad + 20);
	}
	g_assert_cmphex(mods, ==, 0x3); /* blocks 0 and 1 */

	/* congestion_control FALSE: nothing, whatever changed */
	g_array_set_size(x.sent, 0);
	o.congestion_control = 0;
	set_key(&o, "cc_sw_cong_setting_threshold", "3");
	g_assert_cmpuint(cc_run(x.m, f, &o, NULL, &st), ==, 0);
	g_assert_cmpuint(x.sent->len, ==, 0);
	fake_free(&x);
	options_free(&o);
	fabric_unref(f);
}

/* cc_max_outstanding_mads bounds the Sets in flight; 0 means one at a time */
static void test_window(void)
{
	struct fabric *f = fx_line(4, 4, 0);
	struct sm_options o;
	sample_options(&o);
	o.timeout_ms = 50;
	for (int w = 0; w <= 3; w += 3) {
		struct fake x;
		fake_init(&x);
		o.cc_max_outstanding_mads = w;
		struct cc_stats st;
		g_assert_cmpuint(cc_run(x.m, f, &o, NULL, &st), ==, 4 + 16 * 2);
		g_assert_cmpint(x.max_inflight, ==, w ? w : 1);
		g_assert_cmpuint(st.accepted, ==, 4 + 16 * 2);
		fake_free(&x);
	}
	options_free(&o);
	fabric_unref(f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	tmpdir = g_dir_make_tmp("test_cc-XXXXXX", NULL);
	logpath = g_build_filename(tmpdir, "ibsm.log", NULL);
	g_assert_cmpint(log_open(logpath, 0), ==, 0);
	g_test_add_func("/cc/sw_bytes", test_sw_bytes);
	g_test_add_func("/cc/ca_bytes", test_ca_bytes);
	g_test_add_func("/cc/cct_bytes", test_cct_bytes);
	g_test_add_func("/cc/mad_bytes", test_mad_bytes);
	g_test_add_func("/cc/keys", test_keys);
	g_test_add_func("/cc/run", test_run);
	g_test_add_func("/cc/window", test_window);
	int rc = g_test_run();
	log_close();
	char *conf = g_build_filename(tmpdir, "opensm.conf", NULL);
	g_unlink(conf);
	g_unlink(logpath);
	g_rmdir(tmpdir);
	g_free(conf);
	g_free(logpath);
	g_free(tmpdir);
	return rc;
}
