/* test_perfmgr.c - the performance manager against a fake PMA (a table of counters per LID and
 * port that answers PerfMgt Gets and Sets as IBA 16.1.3 lays them out, saturating as real ports
 * do): which ports are queried, ClassPortInfo first, the window of outstanding queries, deltas
 * and running totals, the clearing Set past half a counter's range, a counter cleared behind
 * our back, PortCountersExtended, timeouts, perfmgr_ignore_cas, perfmgr_rm_nodes, the log line
 * naming node and port, and the Prometheus lines. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include "base/log.h"
#include "fabric_fixture.h"
#include "perfmgr/perfmgr.h"

struct fake_port {
	uint64_t v[PM_N_COUNTERS];
};

struct fake {
	GHashTable *ports;           /* lid << 8 | port -> struct fake_port */
	GQueue inbox;                /* MADs sent, waiting for an answer (uint8_t[256]) */
	GArray *sent_lids;           /* dlid of every MAD */
	GArray *sent_attrs;          /* attr << 8 | method of every MAD */
	int silent;                  /* answer nothing */
	uint16_t cap_mask;           /* ClassPortInfo */
	unsigned max_inflight, sets;
	uint16_t last_set_select;
};

static const int bits[PM_N_COUNTERS] = {
	[PM_SYMBOL_ERR] = 16, [PM_LINK_ERR_RECOVER] = 8, [PM_LINK_DOWNED] = 8, [PM_RCV_ERR] = 16,
	[PM_RCV_RMT_PHYS_ERR] = 16, [PM_RCV_SWITCH_RELAY_ERR] = 16, [PM_XMIT_DISCARDS] = 16,
	[PM_XMIT_CONSTRAINT_ERR] = 8, [PM_RCV_CONSTRAINT_ERR] = 8, [PM_LINK_INTEGRITY_ERR] = 4,
	[PM_BUFFER_OVERRUN_ERR] = 4, [PM_VL15_DROPPED] = 16, [PM_XMIT_WAIT] = 32, [PM_XMIT_DATA] = 32,
	[PM_RCV_DATA] = 32, [PM_XMIT_PKTS] = 32, [PM_RCV_PKTS] = 32,
};

static struct fake_port *fport(struct fake *f, uint16_t lid, uint8_t port)
{
	gpointer k = GUINT_TO_POINTER((guint)lid << 8 | port);
	struct fake_port *p = g_hash_table_lookup(f->ports, k);
	if (!p) {
		p = g_new0(struct fake_port, 1);
		g_hash_table_insert(f->ports, k, p);
	}
	return p;
}

/* what the port shows: saturated at its width */
static uint64_t shown(const struct fake_port *p, int c, int extended)
{
	if (extended || !bits[c])
		return p->v[c];
	uint64_t max = (1ULL << bits[c]) - 1;
	return p->v[c] > max ? max : p->v[c];
}

static void put(uint8_t *d, int bytes, uint64_t v)
{
	for (int i = bytes - 1; i >= 0; i--, v >>= 8)
		d[i] = (uint8_t)v;
}

static int fake_send(void *ctx, uint16_t dlid, const uint8_t *mad, size_t len)
{
	struct fake *f = ctx;
	g_assert_cmpuint(len, ==, 256);
	g_assert_cmpuint(mad[1], ==, 0x04);
	g_array_append_val(f->sent_lids, dlid);
	guint a = (guint)((mad[16] << 8 | mad[17]) << 8 | mad[3]);
	g_array_append_val(f->sent_attrs, a);
	uint8_t *m = g_memdup2(mad, 256);
	m[254] = (uint8_t)(dlid >> 8); /* the fake keeps the LID in the unused tail */
	m[255] = (uint8_t)dlid;
	g_queue_push_tail(&f->inbox, m);
	if (f->inbox.length > f->max_inflight)
		f->max_inflight = f->inbox.length;
	return 0;
}

static const struct { int c, off, bytes; } pc_off[] = {
	{ PM_SYMBOL_ERR, 4, 2 }, { PM_LINK_ERR_RECOVER, 6, 1 }, { PM_LINK_DOWNED, 7, 1 },
	{ PM_RCV_ERR, 8, 2 }, { PM_RCV_RMT_PHYS_ERR, 10, 2 }, { PM_RCV_SWITCH_RELAY_ERR, 12, 2 },
	{ PM_XMIT_DISCARDS, 14, 2 }, { PM_XMIT_CONSTRAINT_ERR, 16, 1 }, { PM_RCV_CONSTRAINT_ERR, 17, 1 },
	{ PM_VL15_DROPPED, 22, 2 }, { PM_XMIT_DATA, 24, 4 }, { PM_RCV_DATA, 28, 4 },
	{ PM_XMIT_PKTS, 32, 4 }, { PM_RCV_PKTS, 36, 4 }, { PM_XMIT_WAIT, 40, 4 },
};

/* Answers every MAD waiting, as a PMA would. */
static void fake_answer(struct fake *f, struct perfmgr *pm)
{
	uint8_t *m;
	while ((m = g_queue_pop_head(&f->inbox))) {
		if (f->silent) {
			g_free(m);
			continue;
		}
		uint16_t lid = (uint16_t)(m[254] << 8 | m[255]);
		m[254] = m[255] = 0;
		uint16_t attr = (uint16_t)(m[16] << 8 | m[17]);
		uint8_t method = m[3];
		uint8_t *d = m + 64;
		m[3] = 0x81;
		struct fake_port *p = fport(f, lid, d[1]);
		if (attr == 0x0001) {
			put(d + 2, 2, f->cap_mask);
		} else if (attr == 0x0012 && method == 0x02) {
			uint16_t sel = (uint16_t)(d[2] << 8 | d[3]);
			f->sets++;
			f->last_set_select = sel;
			for (size_t i = 0; i < G_N_ELEMENTS(pc_off); i++) {
				int c = pc_off[i].c;
				int bit = c == PM_XMIT_WAIT ? -1 : c <= PM_VL15_DROPPED ? (c <= PM_BUFFER_OVERRUN_ERR ? c : 11) :
					  12 + (c - PM_XMIT_DATA);
				if (bit >= 0 && (sel >> bit) & 1)
					p->v[c] = 0;
			}
			if (sel & 0x0200)
				p->v[PM_LINK_INTEGRITY_ERR] = 0;
			if (sel & 0x0400)
				p->v[PM_BUFFER_OVERRUN_ERR] = 0;
			if (d[18] & 1)
				p->v[PM_XMIT_WAIT] = 0;
		} else if (attr == 0x0012) {
			for (size_t i = 0; i < G_N_ELEMENTS(pc_off); i++)
				put(d + pc_off[i].off, pc_off[i].bytes, shown(p, pc_off[i].c, 0));
			d[19] = (uint8_t)(shown(p, PM_LINK_INTEGRITY_ERR, 0) << 4 | shown(p, PM_BUFFER_OVERRUN_ERR, 0));
		} else if (attr == 0x001D) {
			static const int ext[8] = { PM_XMIT_DATA, PM_RCV_DATA, PM_XMIT_PKTS, PM_RCV_PKTS,
						    PM_UNICAST_XMIT_PKTS, PM_UNICAST_RCV_PKTS,
						    PM_MULTICAST_XMIT_PKTS, PM_MULTICAST_RCV_PKTS };
			for (int i = 0; i < 8; i++)
				put(d + 8 + 8 * i, 8, p->v[ext[i]]);
		} else {
			m[4] = 0;
			m[5] = 0x0c; /* unsupported attribute */
		}
		perfmgr_on_mad(pm, m, 256);
		g_free(m);
	}
}

static struct fake *fake_new(void)
{
	struct fake *f = g_new0(struct fake, 1);
	f->ports = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	g_queue_init(&f->inbox);
	f->sent_lids = g_array_new(FALSE, FALSE, sizeof(uint16_t));
	f->sent_attrs = g_array_new(FALSE, FALSE, sizeof(guint));
	return f;
}

static void fake_free(struct fake *f)
{
	g_queue_clear_full(&f->inbox, g_free);
	g_hash_table_destroy(f->ports);
	g_array_free(f->sent_lids, TRUE);
	g_array_free(f->sent_attrs, TRUE);
	g_free(f);
}

/* sw1 port 1 - h1, sw1 port 7 - sw2 port 7, sw2 port 1 - h2; sw1 has 8 ports, 6 unlinked */
static struct fabric *small_fabric(int with_sw2)
{
	struct fx_builder x;
	fx_builder_init(&x);
	uint32_t h1 = fx_add_ca(&x, 1, "h1 HCA-1");
	uint32_t s1 = fx_add_switch(&x, 8, "sw1");
	fx_link(&x, s1, 1, h1, 1);
	if (with_sw2) {
		uint32_t h2 = fx_add_ca(&x, 1, "h2 HCA-1");
		uint32_t s2 = fx_add_switch(&x, 8, "sw2");
		fx_link(&x, s1, 7, s2, 7);
		fx_link(&x, s2, 1, h2, 1);
	}
	return fx_finish(&x, 0);
}

static uint16_t node_lid(const struct fabric *f, const char *desc, int port)
{
	for (uint32_t i = 0; i < f->pub.n_nodes; i++)
		if (!strcmp(f->nodes[i].desc, desc))
			return f->ports[f->nodes[i].port0 + (f->nodes[i].type == IBSM_SWITCH ? 0 : (uint32_t)port)].lid;
	g_assert_not_reached();
}

struct env {
	struct fake *f;
	struct perfmgr *pm;
	struct fabric *fab;
	struct perfmgr_cfg cfg;
	int64_t now;
};

static void env_init(struct env *e, int with_sw2, void (*tweak)(struct perfmgr_cfg *c))
{
	e->f = fake_new();
	perfmgr_cfg_defaults(&e->cfg);
	e->cfg.enabled = 1;
	e->cfg.sweep_time_s = 10;
	if (tweak)
		tweak(&e->cfg);
	e->pm = perfmgr_new(&e->cfg, fake_send, e->f);
	e->fab = small_fabric(with_sw2);
	perfmgr_set_fabric(e->pm, e->fab);
	e->now = 1000000;
}

static void env_free(struct env *e)
{
	perfmgr_free(e->pm);
	fabric_unref(e->fab);
	fake_free(e->f);
}

/* One whole sweep: ticks (each answered at once) until it is over. */
static void run_sweep(struct env *e)
{
	struct perfmgr_status st;
	perfmgr_sweep_now(e->pm);
	for (int i = 0; i < 1000; i++) {
		perfmgr_tick(e->pm, e->now);
		fake_answer(e->f, e->pm);
		e->now += 1000;
		perfmgr_status(e->pm, &st);
		if (!st.sweeping && !st.outstanding && i > 0)
			return;
	}
	g_assert_not_reached();
}

struct find {
	uint64_t guid;
	const char *desc;
	uint8_t port;
	struct perfmgr_port_view v;
	int n, found;
};

static void find_cb(const struct perfmgr_port_view *v, void *data)
{
	struct find *x = data;
	x->n++;
	if (!strcmp(v->desc, x->desc) && v->port == x->port) {
		x->v = *v;
		x->found = 1;
	}
}

static struct perfmgr_port_view view(struct env *e, const char *desc, uint8_t port, int *n_ports)
{
	struct find x = { .desc = desc, .port = port };
	perfmgr_foreach_port(e->pm, find_cb, &x);
	if (n_ports)
		*n_ports = x.n;
	g_assert_true(x.found);
	return x.v;
}

static unsigned count_attr(struct fake *f, uint16_t attr, uint8_t method)
{
	unsigned n = 0;
	for (guint i = 0; i < f->sent_attrs->len; i++)
		if (g_array_index(f->sent_attrs, guint, i) == ((guint)attr << 8 | method))
			n++;
	return n;
}

static void test_ports_queried(void)
{
	struct env e;
	env_init(&e, 1, NULL);
	run_sweep(&e);
	/* 4 nodes: one ClassPortInfo each; linked ports: sw1 1,7; sw2 1,7; h1 1; h2 1 */
	g_assert_cmpuint(count_attr(e.f, 0x0001, 1), ==, 4);
	g_assert_cmpuint(count_attr(e.f, 0x0012, 1), ==, 6);
	g_assert_cmpuint(count_attr(e.f, 0x001D, 1), ==, 0); /* cap mask 0: no extended counters */
	int n;
	struct perfmgr_port_view v = view(&e, "sw1", 7, &n);
	g_assert_cmpint(n, ==, 6);
	g_assert_cmpuint(v.lid, ==, node_lid(e.fab, "sw1", 0));
	g_assert_true(v.is_switch);
	/* the second sweep: ClassPortInfo is known */
	run_sweep(&e);
	g_assert_cmpuint(count_attr(e.f, 0x0001, 1), ==, 4);
	g_assert_cmpuint(count_attr(e.f, 0x0012, 1), ==, 12);
	struct perfmgr_status st;
	perfmgr_status(e.pm, &st);
	g_assert_cmpuint(st.sweeps, ==, 2);
	g_assert_cmpuint(st.ports, ==, 6);
	env_free(&e);
}

static void no_cpi(struct perfmgr_cfg *c)
{
	c->query_cpi = 0;
	c->max_outstanding = 2;
}

static void test_window(void)
{
	struct env e;
	env_init(&e, 1, no_cpi);
	/* no answers during the first ticks: never more than 2 out */
	perfmgr_sweep_now(e.pm);
	perfmgr_tick(e.pm, e.now);
	perfmgr_tick(e.pm, e.now + 10);
	g_assert_cmpuint(e.f->inbox.length, ==, 2);
	fake_answer(e.f, e.pm);
	run_sweep(&e);
	g_assert_cmpuint(e.f->max_inflight, <=, 2);
	g_assert_cmpuint(count_attr(e.f, 0x0001, 1), ==, 0);
	g_assert_cmpuint(count_attr(e.f, 0x0012, 1), ==, 12);
	env_free(&e);
}

/* One tick sends a bounded burst whatever perfmgr_max_outstanding_queries allows; answers let
 * more go, one each, until the sweep is done. */
static void test_burst(void)
{
	struct fake *f = fake_new();
	struct perfmgr_cfg c;
	perfmgr_cfg_defaults(&c);
	c.enabled = 1;
	c.query_cpi = 0;
	struct perfmgr *pm = perfmgr_new(&c, fake_send, f);
	struct fabric *fab = fx_line(30, 2, 0); /* 60 CA ports, 60 + 58 switch ports linked */
	perfmgr_set_fabric(pm, fab);
	perfmgr_tick(pm, 1000000);
	g_assert_cmpuint(f->inbox.length, ==, 32);
	perfmgr_tick(pm, 1000001);
	g_assert_cmpuint(f->inbox.length, ==, 64);
	fake_answer(f, pm); /* every answer lets the next query go: the sweep is answered whole */
	perfmgr_tick(pm, 1000002);
	struct perfmgr_status st;
	perfmgr_status(pm, &st);
	g_assert_cmpuint(st.sweeps, ==, 1);
	g_assert_cmpuint(st.ports, ==, 178);
	g_assert_cmpuint(f->sent_attrs->len, ==, 178);
	g_assert_cmpuint(f->max_inflight, ==, 64); /* never more in flight (500 allowed) */
	perfmgr_free(pm);
	fabric_unref(fab);
	fake_free(f);
}

static char *read_log(const char *p)
{
	char *s = NULL;
	g_assert_true(g_file_get_contents(p, &s, NULL, NULL));
	return s;
}

static void test_deltas_and_log(void)
{
	struct env e;
	env_init(&e, 1, NULL);
	char *dir = g_dir_make_tmp("pmlog.XXXXXX", NULL);
	char *logp = g_build_filename(dir, "log", NULL);
	g_assert_cmpint(log_open(logp, 0), ==, 0);
	log_set_flags(0x3);
	uint16_t lid = node_lid(e.fab, "sw1", 0);
	fport(e.f, lid, 7)->v[PM_XMIT_DATA] = 1000;
	run_sweep(&e);
	struct perfmgr_port_view v = view(&e, "sw1", 7, NULL);
	g_assert_cmpuint(v.total[PM_XMIT_DATA], ==, 1000);
	g_assert_cmpuint(v.total[PM_SYMBOL_ERR], ==, 0);
	char *s = read_log(logp);
	g_assert_null(strstr(s, "PERF-0006")); /* no error counter moved */
	g_free(s);
	fport(e.f, lid, 7)->v[PM_SYMBOL_ERR] = 500;
	fport(e.f, lid, 7)->v[PM_XMIT_DATA] = 1500;
	run_sweep(&e);
	v = view(&e, "sw1", 7, NULL);
	g_assert_cmpuint(v.total[PM_SYMBOL_ERR], ==, 500);
	g_assert_cmpuint(v.delta[PM_SYMBOL_ERR], ==, 500);
	g_assert_cmpuint(v.total[PM_XMIT_DATA], ==, 1500);
	g_assert_cmpuint(v.delta[PM_XMIT_DATA], ==, 500);
	g_assert_cmpuint(v.last[PM_SYMBOL_ERR], ==, 500);
	s = read_log(logp);
	g_assert_nonnull(strstr(s, "PERF-0006"));
	g_assert_nonnull(strstr(s, "\"sw1\""));
	g_assert_nonnull(strstr(s, "port 7"));
	g_assert_nonnull(strstr(s, "SymbolErrorCounter +500"));
	g_assert_null(strstr(s, "\"sw2\"")); /* only the port that moved */
	g_free(s);
	/* unchanged: no new line */
	run_sweep(&e);
	s = read_log(logp);
	char *first = strstr(s, "PERF-0006");
	g_assert_null(strstr(first + 1, "PERF-0006"));
	g_free(s);
	/* cleared behind our back (perfquery -R), then counting again: the new value is the delta */
	fport(e.f, lid, 7)->v[PM_SYMBOL_ERR] = 3;
	run_sweep(&e);
	v = view(&e, "sw1", 7, NULL);
	g_assert_cmpuint(v.total[PM_SYMBOL_ERR], ==, 503);
	perfmgr_clear_counters(e.pm);
	v = view(&e, "sw1", 7, NULL);
	g_assert_cmpuint(v.total[PM_SYMBOL_ERR], ==, 0);
	log_close();
	log_set_flags(0);
	g_unlink(logp);
	g_rmdir(dir);
	g_free(logp);
	g_free(dir);
	env_free(&e);
}

static void test_reset_on_threshold(void)
{
	struct env e;
	env_init(&e, 1, NULL);
	uint16_t lid = node_lid(e.fab, "sw2", 0);
	struct fake_port *p = fport(e.f, lid, 1);
	p->v[PM_SYMBOL_ERR] = 40000;      /* past half of 65535 */
	p->v[PM_LINK_DOWNED] = 100;       /* below half of 255 */
	p->v[PM_XMIT_DATA] = 3000000000u; /* past half of 2^32 */
	run_sweep(&e);
	g_assert_cmpuint(e.f->sets, ==, 1);
	g_assert_cmpuint(e.f->last_set_select, ==, 0x0001 | 0x1000);
	g_assert_cmpuint(p->v[PM_SYMBOL_ERR], ==, 0);
	g_assert_cmpuint(p->v[PM_LINK_DOWNED], ==, 100); /* not cleared */
	struct perfmgr_port_view v = view(&e, "sw2", 1, NULL);
	g_assert_cmpuint(v.total[PM_SYMBOL_ERR], ==, 40000);
	/* counting on from zero: the totals keep going past what the 16-bit counter could hold */
	p->v[PM_SYMBOL_ERR] = 30000;
	p->v[PM_XMIT_DATA] = 10;
	run_sweep(&e);
	v = view(&e, "sw2", 1, NULL);
	g_assert_cmpuint(v.total[PM_SYMBOL_ERR], ==, 70000);
	g_assert_cmpuint(v.total[PM_XMIT_DATA], ==, 3000000010ull);
	g_assert_cmpuint(v.total[PM_LINK_DOWNED], ==, 100);
	g_assert_cmpuint(e.f->sets, ==, 1); /* 30000 is below half: no Set */
	struct perfmgr_status st;
	perfmgr_status(e.pm, &st);
	g_assert_cmpuint(st.resets, ==, 1);
	env_free(&e);
}

static void test_extended(void)
{
	struct env e;
	env_init(&e, 0, NULL);
	e.f->cap_mask = 0x0200;
	uint16_t lid = node_lid(e.fab, "sw1", 0);
	struct fake_port *p = fport(e.f, lid, 1);
	p->v[PM_XMIT_DATA] = 0x123456789ull; /* the 32-bit counter shows 0xffffffff */
	p->v[PM_UNICAST_XMIT_PKTS] = 77;
	run_sweep(&e);
	g_assert_cmpuint(count_attr(e.f, 0x001D, 1), ==, 2); /* sw1 port 1, h1 port 1 */
	struct perfmgr_port_view v = view(&e, "sw1", 1, NULL);
	g_assert_true(v.extended);
	g_assert_cmpuint(v.total[PM_XMIT_DATA], ==, 0x123456789ull);
	g_assert_cmpuint(v.total[PM_UNICAST_XMIT_PKTS], ==, 77);
	g_assert_cmpuint(e.f->sets, ==, 0); /* the 64-bit counters need no clearing */
	p->v[PM_XMIT_DATA] += 5;
	run_sweep(&e);
	v = view(&e, "sw1", 1, NULL);
	g_assert_cmpuint(v.delta[PM_XMIT_DATA], ==, 5);
	env_free(&e);
}

static void quick_timeout(struct perfmgr_cfg *c)
{
	c->timeout_ms = 5;
	c->retries = 2;
}

static void test_timeouts(void)
{
	struct env e;
	env_init(&e, 0, quick_timeout);
	e.f->silent = 1;
	perfmgr_sweep_now(e.pm);
	struct perfmgr_status st;
	int i;
	for (i = 0; i < 100; i++) {
		perfmgr_tick(e.pm, e.now);
		fake_answer(e.f, e.pm);
		e.now += 2000;
		perfmgr_status(e.pm, &st);
		if (i && !st.sweeping)
			break;
	}
	g_assert_cmpint(i, <, 100);
	/* 2 nodes: ClassPortInfo 3 attempts, then PortCounters of 2 ports 3 attempts each */
	g_assert_cmpuint(count_attr(e.f, 0x0001, 1), ==, 6);
	g_assert_cmpuint(count_attr(e.f, 0x0012, 1), ==, 6);
	g_assert_cmpuint(st.timeouts, ==, 4);
	g_assert_cmpuint(st.sweeps, ==, 1);
	int n = 0;
	struct find x = { .desc = "sw1", .port = 1 };
	perfmgr_foreach_port(e.pm, find_cb, &x);
	n = x.n;
	g_assert_cmpint(n, ==, 0); /* nothing answered */
	env_free(&e);
}

static void ignore_cas(struct perfmgr_cfg *c)
{
	c->ignore_cas = 1;
}

static void test_ignore_cas(void)
{
	struct env e;
	env_init(&e, 1, ignore_cas);
	run_sweep(&e);
	uint16_t h1 = node_lid(e.fab, "h1 HCA-1", 1), h2 = node_lid(e.fab, "h2 HCA-1", 1);
	for (guint i = 0; i < e.f->sent_lids->len; i++) {
		uint16_t l = g_array_index(e.f->sent_lids, uint16_t, i);
		g_assert_cmpuint(l, !=, h1);
		g_assert_cmpuint(l, !=, h2);
	}
	g_assert_cmpuint(count_attr(e.f, 0x0012, 1), ==, 4);
	env_free(&e);
}

static void test_disabled_and_rm_nodes(void)
{
	struct env e;
	env_init(&e, 1, NULL);
	run_sweep(&e);
	int n;
	view(&e, "sw2", 1, &n);
	g_assert_cmpint(n, ==, 6);
	/* sw2 and h2 gone: forgotten */
	struct fabric *small = small_fabric(0);
	perfmgr_set_fabric(e.pm, small);
	struct find x = { .desc = "sw2", .port = 1 };
	perfmgr_foreach_port(e.pm, find_cb, &x);
	g_assert_false(x.found);
	g_assert_cmpint(x.n, ==, 2);
	/* disabled: not one MAD more, even when asked */
	perfmgr_enable(e.pm, 0);
	guint before = e.f->sent_attrs->len;
	perfmgr_sweep_now(e.pm);
	for (int i = 0; i < 10; i++)
		perfmgr_tick(e.pm, e.now += 20 * G_USEC_PER_SEC);
	g_assert_cmpuint(e.f->sent_attrs->len, ==, before);
	/* enabled again: the sweep timer runs */
	perfmgr_enable(e.pm, 1);
	perfmgr_tick(e.pm, e.now);
	g_assert_cmpuint(e.f->sent_attrs->len, >, before);
	fabric_unref(small);
	env_free(&e);
}

static void keep_nodes(struct perfmgr_cfg *c)
{
	c->rm_nodes = 0;
}

static void test_keep_nodes(void)
{
	struct env e;
	env_init(&e, 1, keep_nodes);
	run_sweep(&e);
	struct fabric *small = small_fabric(0);
	perfmgr_set_fabric(e.pm, small);
	int n;
	view(&e, "sw2", 1, &n); /* still there */
	g_assert_cmpint(n, ==, 6);
	guint before = count_attr(e.f, 0x0012, 1);
	run_sweep(&e);
	g_assert_cmpuint(count_attr(e.f, 0x0012, 1) - before, ==, 2); /* but no longer queried */
	fabric_unref(small);
	env_free(&e);
}

static void test_sweep_timer(void)
{
	struct env e;
	env_init(&e, 0, NULL); /* sweep_time_s 10 */
	perfmgr_tick(e.pm, e.now);   /* the first sweep at once */
	fake_answer(e.f, e.pm);
	perfmgr_tick(e.pm, e.now + 1);
	fake_answer(e.f, e.pm);
	guint n1 = count_attr(e.f, 0x0012, 1);
	g_assert_cmpuint(n1, ==, 2);
	perfmgr_tick(e.pm, e.now + 9 * G_USEC_PER_SEC);
	g_assert_cmpuint(count_attr(e.f, 0x0012, 1), ==, n1);
	perfmgr_tick(e.pm, e.now + 10 * G_USEC_PER_SEC + 1);
	g_assert_cmpuint(count_attr(e.f, 0x0012, 1), ==, n1 + 2);
	env_free(&e);
}

static void test_prometheus(void)
{
	struct env e;
	env_init(&e, 0, NULL);
	struct fake_port *p = fport(e.f, node_lid(e.fab, "sw1", 0), 1);
	p->v[PM_SYMBOL_ERR] = 42;
	run_sweep(&e);
	GString *g = g_string_new(NULL);
	perfmgr_prometheus(e.pm, g);
	g_assert_nonnull(strstr(g->str, "# TYPE ibsm_perfmgr_symbol_err_total counter\n"));
	g_assert_nonnull(strstr(g->str, ",node_desc=\"sw1\",port=\"1\"} 42\n"));
	g_assert_nonnull(strstr(g->str, "ibsm_perfmgr_sweeps_total 1\n"));
	g_assert_null(strstr(g->str, "unicast_xmit_pkts_total{")); /* not extended */
	g_string_free(g, TRUE);
	g_assert_cmpstr(perfmgr_counter_name(PM_SYMBOL_ERR), ==, "SymbolErrorCounter");
	g_assert_true(perfmgr_counter_is_error(PM_VL15_DROPPED));
	g_assert_false(perfmgr_counter_is_error(PM_XMIT_DATA));
	env_free(&e);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	log_set_flags(0); /* quiet on stderr; deltas_and_log opens a log of its own */
	g_test_add_func("/perfmgr/ports_queried", test_ports_queried);
	g_test_add_func("/perfmgr/window", test_window);
	g_test_add_func("/perfmgr/burst", test_burst);
	g_test_add_func("/perfmgr/deltas_and_log", test_deltas_and_log);
	g_test_add_func("/perfmgr/reset_on_threshold", test_reset_on_threshold);
	g_test_add_func("/perfmgr/extended", test_extended);
	g_test_add_func("/perfmgr/timeouts", test_timeouts);
	g_test_add_func("/perfmgr/ignore_cas", test_ignore_cas);
	g_test_add_func("/perfmgr/disabled_and_rm_nodes", test_disabled_and_rm_nodes);
	g_test_add_func("/perfmgr/keep_nodes", test_keep_nodes);
	g_test_add_func("/perfmgr/sweep_timer", test_sweep_timer);
	g_test_add_func("/perfmgr/prometheus", test_prometheus);
	return g_test_run();
}
