/* SPDX-License-Identifier: BSD-2-Clause */
/* perfmgr.c - the performance manager's sweeps: which ports are queried (from the generation in
 * force), the queries in flight (bounded by perfmgr_max_outstanding_queries, each with its
 * timeout and retries), decoding PortCounters / PortCountersExtended / ClassPortInfo answers,
 * running totals from deltas, the clearing Set of counters past half their range (they saturate
 * rather than wrap, IBA 16.1.3.5), and the log lines of error counters that moved. The wire
 * layouts are IBA 16.1.3 (PortCounters), 16.1.4 (PortCountersExtended), 13.4.8.1 (ClassPortInfo);
 * the keys and their behaviour follow OpenSM 3.3.23's osm_perfmgr.c and opensm(8). */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "base/log.h"
#include "perfmgr/perfmgr.h"

#define PM_CLASS 0x04
#define PM_METHOD_GET 0x01
#define PM_METHOD_SET 0x02
#define PM_METHOD_GET_RESP 0x81
#define PM_ATTR_CPI 0x0001
#define PM_ATTR_PC 0x0012
#define PM_ATTR_PCE 0x001D
#define PM_DATA 64                 /* PerfMgt data: after the header and 40 reserved bytes */
#define PM_MAD_SIZE 256
#define CAP_EXT_WIDTH 0x0200       /* ClassPortInfo CapabilityMask: PortCountersExtended */
#define CAP_EXT_NOIETF 0x0400      /* ... without the IETF counters (still 64-bit data) */
/* Queries sent by one tick at most (answers send one more each): a burst of hundreds of GMPs
 * sent without reading in between deadlocks umad2sim (its receiver blocks on a full pipe while
 * we block sending), and a kernel MAD agent's send queue is bounded too. */
#define PM_SEND_BURST 32
/* ... and queries in flight at most, whatever perfmgr_max_outstanding_queries says (OpenSM's
 * default is 500): the answers of more than a few hundred do not fit umad2sim's pipe */
#define PM_MAX_INFLIGHT 64

enum { Q_CPI, Q_PC, Q_PCE, Q_PC_CLEAR };

/* IBA 16.1.3.5 PortCounters: byte offset in the data and width in bits of every counter */
static const struct {
	const char *name, *key;
	uint8_t off, bits, shift;       /* shift: for the 4-bit pair in one byte */
	uint16_t select;                /* CounterSelect bit (CounterSelect2 bit 0 for XmitWait: 0x10000) */
} pc_layout[PM_N_COUNTERS] = {
	[PM_SYMBOL_ERR] = { "SymbolErrorCounter", "symbol_err", 4, 16, 0, 0x0001 },
	[PM_LINK_ERR_RECOVER] = { "LinkErrorRecoveryCounter", "link_err_recover", 6, 8, 0, 0x0002 },
	[PM_LINK_DOWNED] = { "LinkDownedCounter", "link_downed", 7, 8, 0, 0x0004 },
	[PM_RCV_ERR] = { "PortRcvErrors", "rcv_err", 8, 16, 0, 0x0008 },
	[PM_RCV_RMT_PHYS_ERR] = { "PortRcvRemotePhysicalErrors", "rcv_rmt_phys_err", 10, 16, 0, 0x0010 },
	[PM_RCV_SWITCH_RELAY_ERR] = { "PortRcvSwitchRelayErrors", "rcv_switch_relay_err", 12, 16, 0, 0x0020 },
	[PM_XMIT_DISCARDS] = { "PortXmitDiscards", "xmit_discards", 14, 16, 0, 0x0040 },
	[PM_XMIT_CONSTRAINT_ERR] = { "PortXmitConstraintErrors", "xmit_constraint_err", 16, 8, 0, 0x0080 },
	[PM_RCV_CONSTRAINT_ERR] = { "PortRcvConstraintErrors", "rcv_constraint_err", 17, 8, 0, 0x0100 },
	[PM_LINK_INTEGRITY_ERR] = { "LocalLinkIntegrityErrors", "link_integrity_err", 19, 4, 4, 0x0200 },
	[PM_BUFFER_OVERRUN_ERR] = { "ExcessiveBufferOverrunErrors", "buffer_overrun_err", 19, 4, 0, 0x0400 },
	[PM_VL15_DROPPED] = { "VL15Dropped", "vl15_dropped", 22, 16, 0, 0x0800 },
	[PM_XMIT_WAIT] = { "PortXmitWait", "xmit_wait", 40, 32, 0, 0 },
	[PM_XMIT_DATA] = { "PortXmitData", "xmit_data", 24, 32, 0, 0x1000 },
	[PM_RCV_DATA] = { "PortRcvData", "rcv_data", 28, 32, 0, 0x2000 },
	[PM_XMIT_PKTS] = { "PortXmitPkts", "xmit_pkts", 32, 32, 0, 0x4000 },
	[PM_RCV_PKTS] = { "PortRcvPkts", "rcv_pkts", 36, 32, 0, 0x8000 },
	[PM_UNICAST_XMIT_PKTS] = { "PortUnicastXmitPkts", "unicast_xmit_pkts", 0, 0, 0, 0 },
	[PM_UNICAST_RCV_PKTS] = { "PortUnicastRcvPkts", "unicast_rcv_pkts", 0, 0, 0, 0 },
	[PM_MULTICAST_XMIT_PKTS] = { "PortMulticastXmitPkts", "multicast_xmit_pkts", 0, 0, 0, 0 },
	[PM_MULTICAST_RCV_PKTS] = { "PortMulticastRcvPkts", "multicast_rcv_pkts", 0, 0, 0, 0 },
};
#define SELECT2_XMIT_WAIT 0x01     /* CounterSelect2 bit 0 */

/* PortCountersExtended (IBA 16.1.4.11): 64-bit counters from byte 8 */
static const uint8_t pce_counter[8] = { PM_XMIT_DATA, PM_RCV_DATA, PM_XMIT_PKTS, PM_RCV_PKTS,
					PM_UNICAST_XMIT_PKTS, PM_UNICAST_RCV_PKTS,
					PM_MULTICAST_XMIT_PKTS, PM_MULTICAST_RCV_PKTS };

struct pm_port {
	struct perfmgr_port_view v;
	uint32_t clear_select;          /* counters the pending clearing Set clears (bit 16: XmitWait) */
	uint64_t sweep_seen;            /* the sweep that last answered */
};

struct pm_node {
	uint64_t guid;
	char *desc;
	int is_switch;
	int present;                    /* in the generation in force */
	int cpi_state;                  /* 0 unknown, 1 asked, 2 known */
	uint16_t cap_mask;
	uint8_t nports;
	struct pm_port *ports;          /* [nports + 1] */
	uint8_t *want;                  /* [nports + 1]: swept (linked, has a LID) */
};

struct pm_query {
	uint32_t tid;
	uint8_t kind, port, attempts;
	uint16_t lid;
	uint64_t node_guid;
	int64_t deadline_us;
	uint8_t mad[PM_MAD_SIZE];
};

struct perfmgr {
	struct perfmgr_cfg cfg;
	perfmgr_send_fn send;
	void *send_ctx;
	struct dispatch *dispatch;      /* perfmgr_new_dispatch: the answers' registration */
	void (*free_send_ctx)(void *ctx);
	GHashTable *nodes;              /* guid (uint64 *) -> struct pm_node */
	GQueue pending;                 /* struct pm_query * not sent yet */
	GHashTable *inflight;           /* tid -> struct pm_query * */
	uint32_t next_tid;
	int sweeping;
	uint64_t sweep_no;
	int64_t sweep_start_us, next_sweep_us, last_sweep_end_us;
	int sweep_asked;
	double last_sweep_s;
	uint64_t sweeps, sent, answers, timeouts, errors, resets;
	uint32_t ports;
	int64_t now_us;                 /* of the last tick */
};

const char *perfmgr_counter_name(int c)
{
	return c >= 0 && c < PM_N_COUNTERS ? pc_layout[c].name : "?";
}

const char *perfmgr_counter_key(int c)
{
	return c >= 0 && c < PM_N_COUNTERS ? pc_layout[c].key : "?";
}

int perfmgr_counter_is_error(int c)
{
	return c >= 0 && c < PM_N_ERROR_COUNTERS;
}

void perfmgr_cfg_defaults(struct perfmgr_cfg *c)
{
	*c = (struct perfmgr_cfg){ .enabled = 0, .sweep_time_s = 180, .max_outstanding = 500,
				   .ignore_cas = 0, .rm_nodes = 1, .log_errors = 1, .query_cpi = 1,
				   .xmit_wait_log = 0, .xmit_wait_threshold = 65535,
				   .timeout_ms = 200, .retries = 3 };
}

static void node_free(gpointer p)
{
	struct pm_node *n = p;
	g_free(n->desc);
	g_free(n->ports);
	g_free(n->want);
	g_free(n);
}

static void sanitize(struct perfmgr_cfg *c)
{
	if (c->sweep_time_s < 1)
		c->sweep_time_s = 1;
	if (c->max_outstanding < 1)
		c->max_outstanding = 1;
	if (c->timeout_ms < 1)
		c->timeout_ms = 1;
	if (c->retries < 0)
		c->retries = 0;
}

struct perfmgr *perfmgr_new(const struct perfmgr_cfg *c, perfmgr_send_fn send, void *send_ctx)
{
	struct perfmgr *pm = g_new0(struct perfmgr, 1);
	pm->cfg = *c;
	sanitize(&pm->cfg);
	pm->send = send;
	pm->send_ctx = send_ctx;
	pm->nodes = g_hash_table_new_full(model_guid_hash, model_guid_equal, NULL, node_free);
	pm->inflight = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	g_queue_init(&pm->pending);
	pm->next_tid = (uint32_t)g_random_int_range(1, 1 << 30);
	return pm;
}

static void drop_queries(struct perfmgr *pm)
{
	struct pm_query *q;
	while ((q = g_queue_pop_head(&pm->pending)))
		g_free(q);
	g_hash_table_remove_all(pm->inflight);
}

void perfmgr_free(struct perfmgr *pm)
{
	if (!pm)
		return;
	if (pm->dispatch)
		dispatch_register(pm->dispatch, PM_CLASS, PM_METHOD_GET_RESP, DISPATCH_ANY_ATTR, NULL, NULL);
	if (pm->free_send_ctx)
		pm->free_send_ctx(pm->send_ctx);
	drop_queries(pm);
	g_hash_table_destroy(pm->inflight);
	g_hash_table_destroy(pm->nodes);
	g_free(pm);
}

void perfmgr_own(struct perfmgr *pm, struct dispatch *d, void (*free_send_ctx)(void *ctx))
{
	pm->dispatch = d;
	pm->free_send_ctx = free_send_ctx;
}

void perfmgr_set_cfg(struct perfmgr *pm, const struct perfmgr_cfg *c)
{
	int was = pm->cfg.enabled, period = pm->cfg.sweep_time_s;
	pm->cfg = *c;
	sanitize(&pm->cfg);
	if (was && !pm->cfg.enabled) {
		drop_queries(pm);
		pm->sweeping = 0;
	}
	if (!was && pm->cfg.enabled)
		pm->next_sweep_us = 0; /* a sweep at the next tick */
	else if (period != pm->cfg.sweep_time_s && pm->next_sweep_us)
		pm->next_sweep_us = pm->sweep_start_us + (int64_t)pm->cfg.sweep_time_s * G_USEC_PER_SEC;
}

const struct perfmgr_cfg *perfmgr_cfg(const struct perfmgr *pm)
{
	return &pm->cfg;
}

void perfmgr_enable(struct perfmgr *pm, int on)
{
	struct perfmgr_cfg c = pm->cfg;
	c.enabled = on ? 1 : 0;
	perfmgr_set_cfg(pm, &c);
}

/* ------------------------------------------------------------------ the ports swept */

void perfmgr_set_fabric(struct perfmgr *pm, struct fabric *f)
{
	GHashTableIter it;
	gpointer k, v;
	g_hash_table_iter_init(&it, pm->nodes);
	while (g_hash_table_iter_next(&it, &k, &v))
		((struct pm_node *)v)->present = 0;
	pm->ports = 0;
	for (uint32_t i = 0; f && i < f->pub.n_nodes; i++) {
		const struct ibsm_node *fn = &f->nodes[i];
		int sw = fn->type == IBSM_SWITCH;
		struct pm_node *n = g_hash_table_lookup(pm->nodes, &fn->guid);
		if (n && n->nports != fn->nports) { /* another device under the same GUID */
			g_hash_table_remove(pm->nodes, &fn->guid);
			n = NULL;
		}
		if (!n) {
			n = g_new0(struct pm_node, 1);
			n->guid = fn->guid;
			n->nports = fn->nports;
			n->ports = g_new0(struct pm_port, (size_t)fn->nports + 1);
			n->want = g_new0(uint8_t, (size_t)fn->nports + 1);
			for (int p = 0; p <= fn->nports; p++) {
				n->ports[p].v.node_guid = fn->guid;
				n->ports[p].v.port = (uint8_t)p;
				n->ports[p].v.is_switch = sw;
			}
			g_hash_table_insert(pm->nodes, &n->guid, n);
		}
		if (!n->desc || strcmp(n->desc, fn->desc)) {
			g_free(n->desc);
			n->desc = g_strdup(fn->desc);
		}
		n->is_switch = sw;
		n->present = 1;
		uint16_t swlid = sw ? f->ports[fn->port0].lid : 0;
		for (int p = 0; p <= fn->nports; p++) {
			const struct ibsm_port *fp = &f->ports[fn->port0 + (uint32_t)p];
			struct pm_port *pp = &n->ports[p];
			pp->v.desc = n->desc;
			n->want[p] = p && fp->peer != IBSM_NONE && (sw || !pm->cfg.ignore_cas) &&
				     (sw ? swlid : fp->lid); /* switch port 0, unlinked ports: no link counters */
			if (n->want[p]) {
				pp->v.lid = sw ? swlid : fp->lid;
				pm->ports++;
			} else if (pm->cfg.rm_nodes && pp->v.valid) { /* a link gone: forgotten too */
				memset(&pp->v.valid, 0, sizeof(*pp) - offsetof(struct pm_port, v.valid));
			}
		}
	}
	if (!pm->cfg.rm_nodes)
		return;
	g_hash_table_iter_init(&it, pm->nodes);
	while (g_hash_table_iter_next(&it, &k, &v)) {
		struct pm_node *n = v;
		if (!n->present) {
			LOG_V("PERF-0001", "node 0x%016" PRIx64 " \"%s\" gone from the fabric: its counters are forgotten",
			      n->guid, n->desc ? n->desc : "");
			g_hash_table_iter_remove(&it);
		}
	}
}

/* ------------------------------------------------------------------ queries */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint64_t get_be(const uint8_t *p, int bytes)
{
	uint64_t v = 0;
	for (int i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

static void queue_query(struct perfmgr *pm, int kind, const struct pm_node *n, uint8_t port,
			uint16_t lid, uint32_t clear_select)
{
	struct pm_query *q = g_new0(struct pm_query, 1);
	q->kind = (uint8_t)kind;
	q->port = port;
	q->lid = lid;
	q->node_guid = n->guid;
	uint8_t *m = q->mad;
	m[0] = 1;                    /* BaseVersion */
	m[1] = PM_CLASS;
	m[2] = 1;                    /* ClassVersion */
	m[3] = kind == Q_PC_CLEAR ? PM_METHOD_SET : PM_METHOD_GET;
	uint16_t attr = kind == Q_CPI ? PM_ATTR_CPI : kind == Q_PCE ? PM_ATTR_PCE : PM_ATTR_PC;
	put16(m + 16, attr);
	if (kind != Q_CPI)
		m[PM_DATA + 1] = port; /* PortSelect */
	if (kind == Q_PC_CLEAR) {
		put16(m + PM_DATA + 2, (uint16_t)clear_select);
		m[PM_DATA + 18] = clear_select & 0x10000 ? SELECT2_XMIT_WAIT : 0;
	}
	g_queue_push_tail(&pm->pending, q);
}

static void send_query(struct perfmgr *pm, struct pm_query *q)
{
	pm->next_tid = (pm->next_tid + 1) & 0x7fffffff;
	if (!pm->next_tid)
		pm->next_tid = 1;
	q->tid = pm->next_tid;
	memset(q->mad + 8, 0, 4);
	q->mad[12] = (uint8_t)(q->tid >> 24);
	q->mad[13] = (uint8_t)(q->tid >> 16);
	q->mad[14] = (uint8_t)(q->tid >> 8);
	q->mad[15] = (uint8_t)q->tid;
	q->attempts++;
	q->deadline_us = pm->now_us + (int64_t)pm->cfg.timeout_ms * 1000;
	g_hash_table_insert(pm->inflight, GUINT_TO_POINTER(q->tid), q);
	pm->sent++;
	int rc = pm->send(pm->send_ctx, q->lid, q->mad, sizeof(q->mad));
	if (rc < 0)
		LOG_V("PERF-0002", "PerfMgt send to LID %u failed: %s", q->lid, g_strerror(-rc));
	/* a failed send times out and is retried */
}

static void fill(struct perfmgr *pm, int burst)
{
	guint cap = (guint)MIN(pm->cfg.max_outstanding, PM_MAX_INFLIGHT);
	while (burst-- > 0 && g_hash_table_size(pm->inflight) < cap && pm->pending.length) {
		struct pm_query *q = g_queue_pop_head(&pm->pending);
		send_query(pm, q);
	}
}

/* The queries of one port's counters (the node's ClassPortInfo first when it is unknown). */
static void queue_port(struct perfmgr *pm, struct pm_node *n, int p)
{
	if (pm->cfg.query_cpi && n->cpi_state != 2)
		return; /* after the ClassPortInfo answer (or its failure) */
	queue_query(pm, Q_PC, n, (uint8_t)p, n->ports[p].v.lid, 0);
	if (n->cap_mask & (CAP_EXT_WIDTH | CAP_EXT_NOIETF))
		queue_query(pm, Q_PCE, n, (uint8_t)p, n->ports[p].v.lid, 0);
}

static void queue_node(struct perfmgr *pm, struct pm_node *n)
{
	for (int p = 0; p <= n->nports; p++)
		if (n->want[p])
			queue_port(pm, n, p);
}

static void sweep_start(struct perfmgr *pm)
{
	pm->sweeping = 1;
	pm->sweep_no++;
	pm->sweep_start_us = pm->now_us;
	pm->next_sweep_us = pm->now_us + (int64_t)pm->cfg.sweep_time_s * G_USEC_PER_SEC;
	GHashTableIter it;
	gpointer k, v;
	g_hash_table_iter_init(&it, pm->nodes);
	while (g_hash_table_iter_next(&it, &k, &v)) {
		struct pm_node *n = v;
		if (!n->present)
			continue;
		int any = 0;
		for (int p = 0; p <= n->nports; p++)
			any |= n->want[p];
		if (!any)
			continue;
		if (pm->cfg.query_cpi && n->cpi_state == 0) {
			int p = 1;
			while (p <= n->nports && !n->want[p])
				p++;
			n->cpi_state = 1;
			queue_query(pm, Q_CPI, n, (uint8_t)p, n->ports[p].v.lid, 0);
			continue;
		}
		if (pm->cfg.query_cpi && n->cpi_state == 1)
			continue; /* asked by a sweep before, still out */
		queue_node(pm, n);
	}
	LOG_V("PERF-0003", "perfmgr sweep %" PRIu64 ": %u queries for %u ports", pm->sweep_no,
	      pm->pending.length, pm->ports);
}

static void sweep_check_end(struct perfmgr *pm)
{
	if (!pm->sweeping || pm->pending.length || g_hash_table_size(pm->inflight))
		return;
	pm->sweeping = 0;
	pm->sweeps++;
	pm->last_sweep_end_us = pm->now_us;
	pm->last_sweep_s = (double)(pm->now_us - pm->sweep_start_us) / 1e6;
	LOG_V("PERF-0004", "perfmgr sweep %" PRIu64 " done in %.3f s", pm->sweep_no, pm->last_sweep_s);
}

void perfmgr_sweep_now(struct perfmgr *pm)
{
	pm->sweep_asked = 1;
}

void perfmgr_tick(struct perfmgr *pm, int64_t now_us)
{
	pm->now_us = now_us;
	if (!pm->cfg.enabled)
		return;
	/* timeouts */
	GHashTableIter it;
	gpointer k, v;
	GPtrArray *late = NULL;
	g_hash_table_iter_init(&it, pm->inflight);
	while (g_hash_table_iter_next(&it, &k, &v)) {
		struct pm_query *q = v;
		if (q->deadline_us > now_us)
			continue;
		g_hash_table_iter_steal(&it);
		if (!late)
			late = g_ptr_array_new();
		g_ptr_array_add(late, q);
	}
	for (guint i = 0; late && i < late->len; i++) {
		struct pm_query *q = late->pdata[i];
		if (q->attempts <= pm->cfg.retries) {
			g_queue_push_head(&pm->pending, q);
			continue;
		}
		pm->timeouts++;
		LOG_V("PERF-0005", "no PerfMgt answer from LID %u port %u (attribute 0x%04x) after %u attempts",
		      q->lid, q->port, (q->mad[16] << 8) | q->mad[17], q->attempts);
		struct pm_node *n = g_hash_table_lookup(pm->nodes, &q->node_guid);
		if (n && q->kind == Q_CPI) { /* no ClassPortInfo: PortCounters alone */
			n->cpi_state = 2;
			n->cap_mask = 0;
			queue_node(pm, n);
		}
		g_free(q);
	}
	if (late)
		g_ptr_array_free(late, TRUE);
	if (!pm->sweeping && (pm->sweep_asked || now_us >= pm->next_sweep_us) && pm->ports) {
		pm->sweep_asked = 0;
		sweep_start(pm);
	}
	fill(pm, PM_SEND_BURST);
	sweep_check_end(pm);
}

/* ------------------------------------------------------------------ answers */

/* value of counter c in a PortCounters answer */
static uint64_t pc_value(const uint8_t *d, int c)
{
	int bits = pc_layout[c].bits;
	if (bits == 4)
		return (d[pc_layout[c].off] >> pc_layout[c].shift) & 0xf;
	return get_be(d + pc_layout[c].off, bits / 8);
}

/* One counter read: the increase since the last read. A value below the last one means the
 * counter was cleared meanwhile (by us, a reset, perfquery -R): it counted up from zero. */
static void account(struct pm_port *pp, int c, uint64_t val)
{
	uint64_t d = val >= pp->v.last[c] ? val - pp->v.last[c] : val;
	if (!pp->v.valid)
		d = val; /* the first read: what the port counted before we looked */
	pp->v.delta[c] = d;
	pp->v.total[c] += d;
	pp->v.last[c] = val;
}

static void log_port_errors(struct perfmgr *pm, const struct pm_node *n, const struct pm_port *pp)
{
	GString *s = NULL;
	for (int c = 0; c < PM_N_ERROR_COUNTERS; c++) {
		if (!pp->v.delta[c])
			continue;
		if (!s)
			s = g_string_new(NULL);
		g_string_append_printf(s, "%s%s +%" PRIu64 " (total %" PRIu64 ")", s->len ? ", " : "",
				       pc_layout[c].name, pp->v.delta[c], pp->v.total[c]);
	}
	if (s) {
		LOG_W("PERF-0006", "error counters of \"%s\" (0x%016" PRIx64 ") port %u (LID %u): %s",
		      n->desc ? n->desc : "", n->guid, pp->v.port, pp->v.lid, s->str);
		g_string_free(s, TRUE);
	}
	if (pm->cfg.xmit_wait_log && pp->v.delta[PM_XMIT_WAIT] > pm->cfg.xmit_wait_threshold)
		LOG_W("PERF-0007", "\"%s\" (0x%016" PRIx64 ") port %u: PortXmitWait +%" PRIu64 " (threshold %u)",
		      n->desc ? n->desc : "", n->guid, pp->v.port, pp->v.delta[PM_XMIT_WAIT],
		      pm->cfg.xmit_wait_threshold);
}

static void on_pc(struct perfmgr *pm, struct pm_node *n, struct pm_port *pp, const uint8_t *d)
{
	int ext = (n->cap_mask & (CAP_EXT_WIDTH | CAP_EXT_NOIETF)) != 0;
	uint32_t clear = 0;
	for (int c = 0; c <= PM_RCV_PKTS; c++) {
		if (ext && c >= PM_XMIT_DATA)
			break; /* the 64-bit ones come from PortCountersExtended */
		uint64_t val = pc_value(d, c);
		account(pp, c, val);
		uint64_t max = (1ULL << pc_layout[c].bits) - 1;
		if (val > max / 2) /* past half its range: cleared before it saturates */
			clear |= c == PM_XMIT_WAIT ? 0x10000u : pc_layout[c].select;
	}
	if (pm->cfg.log_errors)
		log_port_errors(pm, n, pp);
	pp->v.valid = 1;
	pp->v.last_read_us = pm->now_us;
	pp->sweep_seen = pm->sweep_no;
	if (clear && !pp->clear_select) {
		pp->clear_select = clear;
		queue_query(pm, Q_PC_CLEAR, n, pp->v.port, pp->v.lid, clear);
	}
}

static void on_pce(struct perfmgr *pm, struct pm_port *pp, const uint8_t *d)
{
	int first = !pp->v.extended;
	pp->v.extended = 1;
	for (int i = 0; i < 8; i++) {
		int c = pce_counter[i];
		uint64_t val = get_be(d + 8 + 8 * i, 8);
		if (first) { /* the 32-bit data values were read before: start over from these */
			pp->v.total[c] -= MIN(pp->v.total[c], pp->v.last[c]);
			pp->v.last[c] = 0;
		}
		uint64_t dl = val >= pp->v.last[c] ? val - pp->v.last[c] : val;
		pp->v.delta[c] = dl;
		pp->v.total[c] += dl;
		pp->v.last[c] = val;
	}
	pp->v.valid = 1;
	pp->v.last_read_us = pm->now_us;
}

static void on_clear_done(struct pm_port *pp, int status)
{
	if (!status) /* the cleared counters start again from zero */
		for (int c = 0; c <= PM_RCV_PKTS; c++)
			if ((c == PM_XMIT_WAIT ? 0x10000u : pc_layout[c].select) & pp->clear_select)
				pp->v.last[c] = 0;
	pp->clear_select = 0;
}

void perfmgr_on_mad(struct perfmgr *pm, const uint8_t *mad, size_t len)
{
	if (len < PM_DATA + 72 || mad[1] != PM_CLASS || mad[3] != PM_METHOD_GET_RESP)
		return;
	uint32_t tid = (uint32_t)get_be(mad + 12, 4);
	struct pm_query *q = g_hash_table_lookup(pm->inflight, GUINT_TO_POINTER(tid));
	uint16_t attr = (uint16_t)get_be(mad + 16, 2);
	if (!q || attr != ((q->mad[16] << 8) | q->mad[17]))
		return; /* late, after its timeout, or not ours */
	g_hash_table_steal(pm->inflight, GUINT_TO_POINTER(tid));
	pm->answers++;
	int status = (int)(get_be(mad + 4, 2) & 0x7fff);
	const uint8_t *d = mad + PM_DATA;
	struct pm_node *n = g_hash_table_lookup(pm->nodes, &q->node_guid);
	if (!n || q->port > n->nports) {
		g_free(q);
		return;
	}
	struct pm_port *pp = &n->ports[q->port];
	if (status) {
		pm->errors++;
		LOG_V("PERF-0008", "PerfMgt attribute 0x%04x of \"%s\" port %u: MAD status 0x%04x", attr,
		      n->desc ? n->desc : "", q->port, status);
	}
	switch (q->kind) {
	case Q_CPI:
		n->cpi_state = 2;
		n->cap_mask = status ? 0 : (uint16_t)get_be(d + 2, 2);
		if (pm->cfg.enabled)
			queue_node(pm, n);
		break;
	case Q_PC:
		if (!status && d[1] == q->port)
			on_pc(pm, n, pp, d);
		break;
	case Q_PCE:
		if (!status && d[1] == q->port)
			on_pce(pm, pp, d);
		break;
	case Q_PC_CLEAR:
		if (!status)
			pm->resets++;
		on_clear_done(pp, status);
		break;
	}
	g_free(q);
	if (pm->cfg.enabled)
		fill(pm, 2); /* this answer's place, and a clearing Set it may have queued */
	/* the sweep's end is seen by the next tick, which knows the time */
}

void perfmgr_clear_counters(struct perfmgr *pm)
{
	GHashTableIter it;
	gpointer k, v;
	g_hash_table_iter_init(&it, pm->nodes);
	while (g_hash_table_iter_next(&it, &k, &v)) {
		struct pm_node *n = v;
		for (int p = 0; p <= n->nports; p++) {
			memset(n->ports[p].v.total, 0, sizeof(n->ports[p].v.total));
			memset(n->ports[p].v.delta, 0, sizeof(n->ports[p].v.delta));
		}
	}
}

/* ------------------------------------------------------------------ views */

void perfmgr_status(const struct perfmgr *pm, struct perfmgr_status *st)
{
	*st = (struct perfmgr_status){ .enabled = pm->cfg.enabled, .sweeping = pm->sweeping,
				       .sweeps = pm->sweeps, .queries_sent = pm->sent, .answers = pm->answers,
				       .timeouts = pm->timeouts, .errors = pm->errors, .resets = pm->resets,
				       .outstanding = g_hash_table_size(pm->inflight) + pm->pending.length,
				       .ports = pm->ports, .last_sweep_s = pm->last_sweep_s,
				       .last_sweep_end_us = pm->last_sweep_end_us };
}

static gint cmp_guid(gconstpointer a, gconstpointer b)
{
	uint64_t x = (*(struct pm_node *const *)a)->guid, y = (*(struct pm_node *const *)b)->guid;
	return x < y ? -1 : x > y;
}

void perfmgr_foreach_port(const struct perfmgr *pm, void (*cb)(const struct perfmgr_port_view *v,
							    void *data), void *data)
{
	if (!pm)
		return;
	GPtrArray *a = g_ptr_array_new();
	GHashTableIter it;
	gpointer k, v;
	g_hash_table_iter_init(&it, pm->nodes);
	while (g_hash_table_iter_next(&it, &k, &v))
		g_ptr_array_add(a, v);
	g_ptr_array_sort(a, cmp_guid);
	for (guint i = 0; i < a->len; i++) {
		struct pm_node *n = a->pdata[i];
		for (int p = 0; p <= n->nports; p++)
			if (n->ports[p].v.valid)
				cb(&n->ports[p].v, data);
	}
	g_ptr_array_free(a, TRUE);
}

static void prom_label(GString *out, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '\\' || *s == '"')
			g_string_append_c(out, '\\');
		if (*s == '\n')
			g_string_append(out, "\\n");
		else
			g_string_append_c(out, *s);
	}
}

struct prom_ctx {
	GString *out;
	int c;
};

static void prom_port(const struct perfmgr_port_view *v, void *data)
{
	struct prom_ctx *x = data;
	if (x->c >= PM_UNICAST_XMIT_PKTS && !v->extended)
		return;
	g_string_append_printf(x->out, "ibsm_perfmgr_%s_total{node_guid=\"0x%016" PRIx64 "\",node_desc=\"",
			       pc_layout[x->c].key, v->node_guid);
	prom_label(x->out, v->desc);
	g_string_append_printf(x->out, "\",port=\"%u\"} %" PRIu64 "\n", v->port, v->total[x->c]);
}

void perfmgr_prometheus(const struct perfmgr *pm, GString *out)
{
	if (!pm)
		return;
	g_string_append_printf(out, "# HELP ibsm_perfmgr_enabled 1 when the performance manager sweeps\n"
			       "# TYPE ibsm_perfmgr_enabled gauge\nibsm_perfmgr_enabled %d\n", pm->cfg.enabled);
	g_string_append_printf(out, "# HELP ibsm_perfmgr_sweeps_total Performance manager sweeps completed\n"
			       "# TYPE ibsm_perfmgr_sweeps_total counter\nibsm_perfmgr_sweeps_total %" PRIu64 "\n",
			       pm->sweeps);
	g_string_append_printf(out, "# HELP ibsm_perfmgr_queries_total PerfMgt queries by result\n"
			       "# TYPE ibsm_perfmgr_queries_total counter\n"
			       "ibsm_perfmgr_queries_total{result=\"sent\"} %" PRIu64 "\n"
			       "ibsm_perfmgr_queries_total{result=\"answered\"} %" PRIu64 "\n"
			       "ibsm_perfmgr_queries_total{result=\"timeout\"} %" PRIu64 "\n"
			       "ibsm_perfmgr_queries_total{result=\"error\"} %" PRIu64 "\n",
			       pm->sent, pm->answers, pm->timeouts, pm->errors);
	g_string_append_printf(out, "# HELP ibsm_perfmgr_counter_resets_total PortCounters cleared past half their range\n"
			       "# TYPE ibsm_perfmgr_counter_resets_total counter\n"
			       "ibsm_perfmgr_counter_resets_total %" PRIu64 "\n", pm->resets);
	g_string_append_printf(out, "# HELP ibsm_perfmgr_last_sweep_seconds Duration of the last perfmgr sweep\n"
			       "# TYPE ibsm_perfmgr_last_sweep_seconds gauge\n"
			       "ibsm_perfmgr_last_sweep_seconds %.6f\n", pm->last_sweep_s);
	for (int c = 0; c < PM_N_COUNTERS; c++) {
		g_string_append_printf(out, "# HELP ibsm_perfmgr_%s_total %s, running total since start%s\n"
				       "# TYPE ibsm_perfmgr_%s_total counter\n", pc_layout[c].key,
				       pc_layout[c].name, c >= PM_XMIT_DATA && c <= PM_RCV_DATA ?
				       " (4-byte words)" : "", pc_layout[c].key);
		struct prom_ctx x = { out, c };
		perfmgr_foreach_port(pm, prom_port, &x);
	}
}
