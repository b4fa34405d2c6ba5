/* SPDX-License-Identifier: BSD-2-Clause */
/* cc.c - the congestion control manager (program/cc.h): the Sets OpenSM 3.3.23 sends, built
 * from the cc_* keys, sent as class 0x21 GMPs through the transport's raw path with a window
 * of cc_max_outstanding_mads and our own timeouts; what each port accepted is remembered, a
 * port that refuses is named once and left alone until the configuration changes.
 * tests/unit/test_cc.c checks the bytes and the handling against a fake agent,
 * tests/sim/85-cc.t beside OpenSM on ibsim. */
#include <inttypes.h>
#include <string.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include "base/log.h"
#include "mad/transport.h"
#include "program/cc.h"

#define REFUSED_LOG_MAX 10     /* nodes named per configuration, then one line for the rest */
#define POLL_SLICE_MS 5

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

void cc_encode_sw(const struct sm_options *o, uint8_t d[CC_DATA_SIZE])
{
	memset(d, 0, CC_DATA_SIZE);
	put32(d, o->cc_sw_control_map);
	memcpy(d + 4, o->cc_sw_victim_mask, 32);
	memcpy(d + 36, o->cc_sw_credit_mask, 32);
	d[68] = (uint8_t)(o->cc_sw_threshold << 4);
	d[69] = o->cc_sw_packet_size;
	put16(d + 70, (unsigned)(o->cc_sw_cs_threshold & 0xf) << 12);
	put16(d + 72, o->cc_sw_cs_return_delay);
	put16(d + 74, (unsigned)o->cc_sw_marking_rate);
}

void cc_encode_ca(const struct sm_options *o, uint8_t d[CC_DATA_SIZE])
{
	memset(d, 0, CC_DATA_SIZE);
	put16(d, (unsigned)o->cc_ca_port_control);
	put16(d + 2, (unsigned)o->cc_ca_control_map);
	for (int sl = 0; sl < 16; sl++) {
		uint8_t *e = d + 4 + 8 * sl;
		const struct cc_ca_entry *c = &o->cc_ca_entries[sl];
		put16(e, c->ccti_timer);
		e[2] = c->ccti_increase;
		e[3] = c->trigger_threshold;
		e[4] = c->ccti_min;
	}
}

int cc_cct_blocks(const struct sm_options *o)
{
	return o->cc_cct_len ? (o->cc_cct_len - 1) / CC_CCT_BLOCK_ENTRIES + 1 : 1;
}

void cc_encode_cct(const struct sm_options *o, int block, uint8_t d[CC_DATA_SIZE])
{
	memset(d, 0, CC_DATA_SIZE);
	unsigned limit = o->cc_cct_len ? (unsigned)o->cc_cct_len - 1 : 0;
	put16(d, limit);
	if (!limit)
		return; /* OpenSM leaves the entries out when CCTI_Limit is 0, even with one entry */
	for (int j = 0; j < CC_CCT_BLOCK_ENTRIES; j++) {
		int k = block * CC_CCT_BLOCK_ENTRIES + j;
		put16(d + 4 + 2 * j, k < (int)G_N_ELEMENTS(o->cc_cct) ? o->cc_cct[k] : 0);
	}
}

void cc_encode_mad(uint8_t mad[CC_MAD_SIZE], uint16_t attr, uint32_t mod, uint64_t tid, uint64_t cc_key,
		   const uint8_t data[CC_DATA_SIZE])
{
	memset(mad, 0, CC_MAD_SIZE);
	mad[0] = 1; /* base version */
	mad[1] = CC_CLASS;
	mad[2] = CC_CLASS_VERSION;
	mad[3] = IB_MAD_METHOD_SET;
	put64(mad + 8, tid);
	put16(mad + 16, attr);
	put32(mad + 20, mod);
	put64(mad + CC_OFF_KEY, cc_key);
	memcpy(mad + CC_OFF_DATA, data, CC_DATA_SIZE);
}

/* ---- the manager ---- */

/* One Set to send or in flight. */
struct cc_send {
	uint32_t port;          /* port id in the pass's generation */
	uint64_t port_guid;
	uint16_t lid, attr;
	uint32_t mod;
	uint32_t tid;           /* low 32 bits, as sent */
	int attempts;
	int64_t deadline_us;
	const uint8_t *data;    /* the pass's wanted data */
	uint8_t done;
};

struct cc_mgr {
	struct cc_io io;
	uint32_t next_tid;
	GHashTable *held;       /* "GUID:attr:mod" -> 192 bytes the port accepted */
	GHashTable *refused;    /* port GUID (uint64 *) -> 1: refused this configuration */
	GHashTable *named;      /* node GUID (uint64 *) -> 1: logged this configuration */
	uint32_t named_count, unnamed;
	uint64_t config_sum;    /* digest of the wanted data the refusals were met under */
	int have_sum;
	/* the pass in progress */
	GHashTable *inflight;   /* tid -> struct cc_send * */
	const struct fabric *f;
	struct cc_stats *st;
	uint32_t outstanding;
};

struct cc_mgr *cc_new(const struct cc_io *io)
{
	struct cc_mgr *m = g_new0(struct cc_mgr, 1);
	m->io = *io;
	m->next_tid = CC_FIRST_TID;
	m->held = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	m->refused = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	m->named = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	m->inflight = g_hash_table_new(g_direct_hash, g_direct_equal);
	return m;
}

void cc_free(struct cc_mgr *m)
{
	if (!m)
		return;
	g_hash_table_destroy(m->held);
	g_hash_table_destroy(m->refused);
	g_hash_table_destroy(m->named);
	g_hash_table_destroy(m->inflight);
	g_free(m);
}

static char *held_key(uint64_t port_guid, uint16_t attr, uint32_t mod)
{
	return g_strdup_printf("%016" PRIx64 ":%04x:%u", port_guid, attr, mod);
}

static void add_guid(GHashTable *t, uint64_t guid)
{
	uint64_t *k = g_new(uint64_t, 1);
	*k = guid;
	g_hash_table_replace(t, k, GINT_TO_POINTER(1));
}

static const char *attr_name(uint16_t attr)
{
	return attr == CC_ATTR_SW_CONG_SETTING ? "SwitchCongestionSetting" :
	       attr == CC_ATTR_CA_CONG_SETTING ? "CACongestionSetting" : "CongestionControlTable";
}

/* A Set refused (status > 0) or never answered (status < 0): the port is left alone for this
 * configuration, its node named once. */
static void refuse(struct cc_mgr *m, struct cc_send *s, int status)
{
	if (status > 0)
		m->st->refused++;
	else
		m->st->timed_out++;
	add_guid(m->refused, s->port_guid);
	const struct fabric *f = m->f;
	const struct ibsm_port *p = &f->ports[s->port];
	const struct ibsm_node *n = &f->nodes[p->node];
	if (g_hash_table_contains(m->named, &n->guid))
		return;
	add_guid(m->named, n->guid);
	if (m->named_count++ >= REFUSED_LOG_MAX) {
		m->unnamed++;
		return;
	}
	char why[48];
	if (status > 0)
		g_snprintf(why, sizeof(why), "MAD status 0x%04x", (unsigned)status);
	else
		g_snprintf(why, sizeof(why), "no answer after %d attempts", s->attempts);
	LOG_W("CC-0001", "%s 0x%016" PRIx64 " (%s) port %u LID %u does not take congestion control "
	      "(%s block %u: %s): its congestion settings are left as they are, and it is not asked "
	      "again until the cc_ configuration changes", n->type == IBSM_SWITCH ? "switch" : "CA",
	      n->guid, n->desc, p->num, s->lid, attr_name(s->attr), s->mod, why);
}

void cc_on_answer(struct cc_mgr *m, const uint8_t *mad, size_t len)
{
	if (len < CC_OFF_DATA + CC_DATA_SIZE || mad[1] != CC_CLASS || !m->st)
		return;
	uint32_t tid = (uint32_t)mad[12] << 24 | (uint32_t)mad[13] << 16 | (uint32_t)mad[14] << 8 | mad[15];
	struct cc_send *s = g_hash_table_lookup(m->inflight, GUINT_TO_POINTER(tid));
	uint16_t attr = (uint16_t)(mad[16] << 8 | mad[17]);
	if (!s || attr != s->attr)
		return; /* a late answer to an attempt given up on, or not ours */
	g_hash_table_remove(m->inflight, GUINT_TO_POINTER(tid));
	s->done = 1;
	m->outstanding--;
	unsigned status = (unsigned)(mad[4] << 8 | mad[5]) & 0x7fff; /* bit 15: direction, DR only */
	if (status) {
		refuse(m, s, (int)status);
		return;
	}
	m->st->accepted++;
	/* what we asked for is what it holds now (OpenSM keeps the answer's copy) */
	g_hash_table_replace(m->held, held_key(s->port_guid, s->attr, s->mod), g_memdup2(s->data, CC_DATA_SIZE));
}

static void send_one(struct cc_mgr *m, const struct sm_options *o, struct cc_send *s)
{
	m->next_tid = m->next_tid + 1 ? m->next_tid + 1 : 1;
	s->tid = m->next_tid;
	s->attempts++;
	uint8_t mad[CC_MAD_SIZE];
	cc_encode_mad(mad, s->attr, s->mod, s->tid, o->cc_key, s->data);
	int64_t timeout_us = (int64_t)(o->timeout_ms > 0 ? o->timeout_ms : 200) * 1000;
	s->deadline_us = g_get_monotonic_time() + timeout_us;
	g_hash_table_insert(m->inflight, GUINT_TO_POINTER(s->tid), s);
	if (m->io.send(m->io.ctx, s->lid, mad, sizeof(mad)) < 0)
		s->deadline_us = 0; /* failed at once: counts as an attempt without an answer */
}

/* Sends past their deadline: sent again, or given up on after 1 + retries attempts. */
static void expire(struct cc_mgr *m, const struct sm_options *o, GPtrArray *sends)
{
	int64_t now = g_get_monotonic_time();
	for (guint i = 0; i < sends->len; i++) {
		struct cc_send *s = g_ptr_array_index(sends, i);
		if (s->done || !s->tid || s->deadline_us > now)
			continue;
		g_hash_table_remove(m->inflight, GUINT_TO_POINTER(s->tid));
		if (s->attempts <= o->retries && !g_hash_table_contains(m->refused, &s->port_guid)) {
			m->st->resent++;
			send_one(m, o, s);
			continue;
		}
		s->done = 1;
		m->outstanding--;
		if (!g_hash_table_contains(m->refused, &s->port_guid))
			refuse(m, s, -1);
	}
}

/* a digest of everything the ports are to hold: a new one starts a new configuration */
static uint64_t digest(const uint8_t *sw, const uint8_t *ca, const uint8_t *cct, int blocks)
{
	uint64_t h = 1469598103934665603ULL;
	const uint8_t *parts[] = { sw, ca, cct };
	size_t lens[] = { CC_DATA_SIZE, CC_DATA_SIZE, (size_t)blocks * CC_DATA_SIZE };
	for (int p = 0; p < 3; p++)
		for (size_t i = 0; i < lens[p]; i++)
			h = (h ^ parts[p][i]) * 1099511628211ULL;
	return h;
}

static void want(struct cc_mgr *m, GPtrArray *sends, uint32_t port, uint64_t guid, uint16_t lid, uint16_t attr,
		 uint32_t mod, const uint8_t *data)
{
	char *k = held_key(guid, attr, mod);
	const uint8_t *held = g_hash_table_lookup(m->held, k);
	g_free(k);
	if (held && !memcmp(held, data, CC_DATA_SIZE)) {
		m->st->held++;
		return;
	}
	struct cc_send *s = g_new0(struct cc_send, 1);
	s->port = port;
	s->port_guid = guid;
	s->lid = lid;
	s->attr = attr;
	s->mod = mod;
	s->data = data;
	g_ptr_array_add(sends, s);
}

/* OpenSM's order: its port table is keyed by the GUID in network byte order, compared as a
 * host (little-endian) integer, i.e. by the byte-swapped GUID */
static gint by_guid(gconstpointer a, gconstpointer b, gpointer ctx)
{
	const struct fabric *f = ctx;
	uint64_t ga = GUINT64_SWAP_LE_BE(f->ports[*(const uint32_t *)a].guid);
	uint64_t gb = GUINT64_SWAP_LE_BE(f->ports[*(const uint32_t *)b].guid);
	return ga < gb ? -1 : ga > gb;
}

/* forgets what ports gone from f held: a port that comes back is sent everything again */
static void forget_gone(struct cc_mgr *m, const struct fabric *f)
{
	GHashTableIter it;
	gpointer k;
	g_hash_table_iter_init(&it, m->held);
	while (g_hash_table_iter_next(&it, &k, NULL)) {
		uint64_t guid = g_ascii_strtoull(k, NULL, 16);
		if (fabric_port_by_guid(f, guid) == IBSM_NONE)
			g_hash_table_iter_remove(&it);
	}
}

uint32_t cc_run(struct cc_mgr *m, const struct fabric *f, const struct sm_options *o, volatile int *stop,
		struct cc_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!o->congestion_control)
		return 0;
	uint8_t sw[CC_DATA_SIZE], ca[CC_DATA_SIZE];
	int blocks = cc_cct_blocks(o);
	uint8_t *cct = g_malloc((size_t)blocks * CC_DATA_SIZE);
	cc_encode_sw(o, sw);
	cc_encode_ca(o, ca);
	for (int b = 0; b < blocks; b++)
		cc_encode_cct(o, b, cct + (size_t)b * CC_DATA_SIZE);
	uint64_t sum = digest(sw, ca, cct, blocks);
	if (!m->have_sum || sum != m->config_sum) { /* a new configuration: every port asked again */
		g_hash_table_remove_all(m->refused);
		g_hash_table_remove_all(m->named);
		m->named_count = m->unnamed = 0;
		m->config_sum = sum;
		m->have_sum = 1;
	}
	forget_gone(m, f);
	m->f = f;
	m->st = st;
	m->outstanding = 0;
	uint32_t unnamed_before = m->unnamed;

	/* OpenSM walks its port table (by_guid): switch port 0 and every CA port with a LID */
	GArray *ports = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		const struct ibsm_port *pt = &f->ports[p];
		uint8_t type = f->nodes[pt->node].type;
		if (!pt->lid || !fabric_is_end_port(f, p))
			continue;
		if ((type == IBSM_SWITCH && pt->num == 0) || (type == IBSM_CA && pt->num > 0))
			g_array_append_val(ports, p);
	}
	g_array_sort_with_data(ports, by_guid, (gpointer)f);
	GPtrArray *sends = g_ptr_array_new_with_free_func(g_free);
	for (guint i = 0; i < ports->len; i++) {
		uint32_t p = g_array_index(ports, uint32_t, i);
		const struct ibsm_port *pt = &f->ports[p];
		if (g_hash_table_contains(m->refused, &pt->guid)) {
			st->left_alone++;
			continue;
		}
		if (f->nodes[pt->node].type == IBSM_SWITCH) {
			st->switches++;
			want(m, sends, p, pt->guid, pt->lid, CC_ATTR_SW_CONG_SETTING, 0, sw);
		} else {
			st->ca_ports++;
			want(m, sends, p, pt->guid, pt->lid, CC_ATTR_CA_CONG_SETTING, 0, ca);
			for (int b = 0; b < blocks; b++)
				want(m, sends, p, pt->guid, pt->lid, CC_ATTR_CCT, (uint32_t)b,
				     cct + (size_t)b * CC_DATA_SIZE);
		}
	}
	g_array_free(ports, TRUE);

	uint32_t window = o->cc_max_outstanding_mads > 0 ? (uint32_t)o->cc_max_outstanding_mads : 1;
	guint next = 0;
	while (!(stop && *stop)) {
		while (next < sends->len && m->outstanding < window) {
			struct cc_send *s = g_ptr_array_index(sends, next++);
			if (g_hash_table_contains(m->refused, &s->port_guid)) {
				s->done = 1; /* refused an earlier Set of this pass */
				continue;
			}
			m->outstanding++;
			st->sent++;
			send_one(m, o, s);
		}
		if (!m->outstanding && next >= sends->len)
			break;
		m->io.poll(m->io.ctx, POLL_SLICE_MS);
		expire(m, o, sends);
	}
	if (m->unnamed > unnamed_before)
		LOG_W("CC-0002", "%u more nodes did not take congestion control (only the first %u are "
		      "named)", m->unnamed - unnamed_before, REFUSED_LOG_MAX);
	if (st->sent)
		LOG_I("CC-0003", "congestion control: %u Sets to %u switches and %u CA ports (%u sent again): "
		      "%u accepted, %u refused, %u unanswered; %u already held, %u ports left alone",
		      st->sent, st->switches, st->ca_ports, st->resent, st->accepted, st->refused,
		      st->timed_out, st->held, st->left_alone);
	g_hash_table_remove_all(m->inflight); /* answers still on the wire are dropped when they come */
	m->st = NULL;
	m->f = NULL;
	g_ptr_array_free(sends, TRUE);
	g_free(cct);
	return st->sent;
}

/* ---- the real port ---- */

struct cc_port_io {
	struct transport *t;
	uint8_t *umad;
	int umad_len;
	struct cc_mgr *m;
};

static int port_send(void *ctx, uint16_t dlid, const uint8_t *mad, size_t len)
{
	struct cc_port_io *io = ctx;
	memset(io->umad, 0, (size_t)io->umad_len);
	memcpy(umad_get_mad(io->umad), mad, MIN(len, (size_t)MAD_SIZE));
	umad_set_addr(io->umad, dlid, 1, 0, IB_DEFAULT_QP1_QKEY);
	return transport_send_raw(io->t, CC_CLASS, io->umad, io->umad_len);
}

static void port_poll(void *ctx, int timeout_ms)
{
	struct cc_port_io *io = ctx;
	transport_poll(io->t, timeout_ms, 0);
}

static void on_answer(struct dispatch *d, const struct mad_in *m, void *ctx)
{
	(void)d;
	struct cc_port_io *io = ctx;
	int len = m->len - (int)umad_size();
	if (len > 0 && io->m)
		cc_on_answer(io->m, m->mad, (size_t)len);
}

void cc_sweep(struct dispatch *d, const struct fabric *f, const struct sm_options *o, volatile int *stop)
{
	/* one manager for the life of the process: what the ports hold outlives sweeps */
	static struct cc_port_io *io;
	if (!o->congestion_control || !d || !f)
		return;
	if (!io) {
		io = g_new0(struct cc_port_io, 1);
		io->t = dispatch_transport(d);
		io->umad_len = transport_umad_len();
		io->umad = g_malloc0((size_t)io->umad_len);
		struct cc_io cio = { io, port_send, port_poll };
		io->m = cc_new(&cio);
		dispatch_register(d, CC_CLASS, IB_MAD_METHOD_GET_RESPONSE, DISPATCH_ANY_ATTR, on_answer, io);
	}
	struct cc_stats st;
	transport_slice_label("cc");
	cc_run(io->m, f, o, stop, &st);
}
