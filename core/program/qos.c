/* SPDX-License-Identifier: BSD-2-Clause */
/* qos.c - which SL2VL and VLArb tables each port must hold (program/qos.h): under -Q every
 * port's, and its VLHighLimit; without -Q those the routing engine gives (its VLs need them). */
#include <inttypes.h>
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "mad/ib.h"
#include "program/portinfo.h"
#include "program/qos.h"

struct qos_memory {
	struct vlt_memory *vlt;
	GHashTable *hl_refused;    /* "guid/port" -> VLHighLimit that did not read back (+1) */
};

struct qos_memory *qos_memory_new(void)
{
	struct qos_memory *m = g_new0(struct qos_memory, 1);
	m->vlt = vlt_memory_new();
	m->hl_refused = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	return m;
}

void qos_memory_free(struct qos_memory *m)
{
	if (!m)
		return;
	vlt_memory_free(m->vlt);
	g_hash_table_destroy(m->hl_refused);
	g_free(m);
}

void qos_memory_forget(struct qos_memory *m)
{
	vlt_memory_forget(m->vlt);
	g_hash_table_remove_all(m->hl_refused);
}

const struct vlt_memory *qos_memory_tables(const struct qos_memory *m)
{
	return m->vlt;
}

unsigned qos_oper_vls_count(uint8_t code)
{
	switch (code) {
	case 1: return 1;
	case 2: return 2;
	case 3: return 4;
	case 4: return 8;
	case 5: return 15;
	default: return 1;
	}
}

uint8_t qos_fit_vl(uint8_t vl, unsigned count)
{
	if (vl == 15 || vl < count)
		return vl;
	unsigned p2 = 1;
	while (p2 * 2 <= count)
		p2 *= 2;
	return (uint8_t)(vl & (p2 - 1));
}

void qos_sl2vl_bytes(const uint8_t vl[16], unsigned count, uint8_t out[8])
{
	for (int i = 0; i < 8; i++)
		out[i] = (uint8_t)(qos_fit_vl(vl[2 * i] & 0xf, count) << 4 | qos_fit_vl(vl[2 * i + 1] & 0xf, count));
}

/* ---- building the wanted tables ---------------------------------------------------------- */

struct build {
	struct pass *g;
	const struct routing_result *r;
	struct qos_port_config cfg[QOS_N_SCOPES];
	GArray *want;              /* struct vlt_want */
	uint32_t engine_sl2vl, engine_vlarb;
	int engine_only;           /* without -Q: only the tables the engine gives */
};

static uint32_t pi_field(const struct fabric *f, uint32_t port, enum MAD_FIELDS fld)
{
	return mad_get_field((void *)f->px[port].portinfo, 0, fld);
}

/* data VLs usable at port: its OperVLs, at most the type's max_vls */
static unsigned usable_vls(const struct build *b, uint32_t port, const struct qos_port_config *c)
{
	unsigned n = qos_oper_vls_count((uint8_t)pi_field(b->g->f, port, IB_PORT_OPER_VLS_F));
	return n < c->max_vls ? n : c->max_vls;
}

static void add_sl2vl(struct build *b, uint32_t port, uint32_t smp_port, uint32_t in_id,
		      uint32_t out_id, uint32_t mod, const struct qos_port_config *c)
{
	struct vlt_want w = { .port = port, .smp_port = smp_port, .attr = IB_ATTR_SLVL_TABLE,
			      .mod = mod, .len = VLT_SL2VL_LEN };
	uint8_t vl[16];
	memcpy(vl, c->sl2vl, sizeof(vl));
	if (b->r && routing_sl2vl(b->r, in_id, out_id, vl) == 0)
		b->engine_sl2vl++;
	else if (b->engine_only)
		return;
	qos_sl2vl_bytes(vl, usable_vls(b, port, c), w.data);
	g_array_append_val(b->want, w);
}

/* The VLArb blocks port supports (LowCap / HighCap entries: blocks 1-2 low, 3-4 high). */
static void add_vlarb(struct build *b, uint32_t port, uint32_t smp_port, uint8_t portnum,
		      const struct qos_port_config *c)
{
	const struct fabric *f = b->g->f;
	unsigned caps[2] = { pi_field(f, port, IB_PORT_VL_ARBITRATION_LOW_CAP_F),
			     pi_field(f, port, IB_PORT_VL_ARBITRATION_HIGH_CAP_F) };
	uint8_t table[2][QOS_VLARB_MAX][2];
	for (int i = 0; i < QOS_VLARB_MAX; i++) {
		table[0][i][0] = c->low[i].vl, table[0][i][1] = c->low[i].weight;
		table[1][i][0] = c->high[i].vl, table[1][i][1] = c->high[i].weight;
	}
	uint8_t high[64][2], low[64][2];
	memcpy(high, table[1], sizeof(high));
	memcpy(low, table[0], sizeof(low));
	if (b->r && routing_vlarb(b->r, port, high, low) == 0) {
		memcpy(table[1], high, sizeof(high));
		memcpy(table[0], low, sizeof(low));
		b->engine_vlarb++;
	} else if (b->engine_only) {
		return;
	}
	unsigned count = usable_vls(b, port, c);
	for (int hi = 0; hi < 2; hi++) {
		unsigned cap = caps[hi] > 64 ? 64 : caps[hi];
		for (unsigned blk = 0; blk * 32 < cap; blk++) {
			unsigned n = cap - blk * 32 > 32 ? 32 : cap - blk * 32;
			struct vlt_want w = { .port = port, .smp_port = smp_port,
					      .attr = IB_ATTR_VL_ARBITRATION,
					      .mod = (uint32_t)(hi * 2 + blk + 1) << 16 | portnum,
					      .len = (uint8_t)(2 * n) };
			for (unsigned e = 0; e < n; e++) {
				w.data[2 * e] = qos_fit_vl(table[hi][blk * 32 + e][0] & 0xf, count);
				w.data[2 * e + 1] = table[hi][blk * 32 + e][1];
			}
			g_array_append_val(b->want, w);
		}
	}
}

static int linked(const struct fabric *f, uint32_t port)
{
	return f->px[port].have_portinfo && f->ports[port].peer != IBSM_NONE;
}

static void end_node(struct build *b, const struct ibsm_node *n)
{
	const struct fabric *f = b->g->f;
	const struct qos_port_config *c = &b->cfg[n->type == IBSM_ROUTER ? QOS_S_RTR : QOS_S_CA];
	for (unsigned i = 1; i <= n->nports; i++) {
		uint32_t p = n->port0 + i;
		if (!linked(f, p))
			continue;
		add_vlarb(b, p, p, 0, c);
		if (pi_field(f, p, IB_PORT_CAPMASK_F) & IB_CAP_SL_MAP)
			add_sl2vl(b, p, p, p, p, 0, c);
	}
}

/* A switch, as OpenSM programs one: VLArb of every linked external port and SL2VL of every
 * (input, output) pair towards a linked output (inputs linked or not); output port 0 and port
 * 0's VLArb only on an enhanced port 0 (base port 0 has no VLs of its own), with the port-0
 * settings. A port that comes up gets its tables in that sweep. */
static void switch_node(struct build *b, const struct ibsm_node *n, uint32_t node)
{
	const struct fabric *f = b->g->f;
	uint32_t p0 = n->port0;
	if (!f->px[p0].have_portinfo)
		return;
	int esp0 = f->nx[node].enhanced_sp0;
	const struct qos_port_config *swe = &b->cfg[QOS_S_SWE], *sw0 = &b->cfg[QOS_S_SW0];
	for (unsigned o = 1; o <= n->nports; o++)
		if (linked(f, p0 + o))
			add_vlarb(b, p0 + o, p0, (uint8_t)o, swe);
	if (esp0)
		add_vlarb(b, p0, p0, 0, sw0);
	if (!(pi_field(f, p0, IB_PORT_CAPMASK_F) & IB_CAP_SL_MAP))
		return;
	for (unsigned o = esp0 ? 0 : 1; o <= n->nports; o++) {
		if (o && !linked(f, p0 + o))
			continue;
		for (unsigned i = 0; i <= n->nports; i++)
			add_sl2vl(b, p0 + o, p0, p0 + i, p0 + o, i << 8 | o, o ? swe : sw0);
	}
}

/* The settings of port id port's type (CA, router, switch port 0 or external port). */
static const struct qos_port_config *port_config(const struct build *b, uint32_t port)
{
	const struct fabric *f = b->g->f;
	const struct ibsm_node *n = &f->nodes[f->ports[port].node];
	enum qos_scope t = n->type == IBSM_SWITCH ? (f->ports[port].num ? QOS_S_SWE : QOS_S_SW0) :
			   n->type == IBSM_ROUTER ? QOS_S_RTR : QOS_S_CA;
	return &b->cfg[t];
}

/* "node GUID/port number", the key of the VLHighLimit memory */
static void port_key(const struct fabric *f, uint32_t port, char *buf, size_t len)
{
	g_snprintf(buf, len, "%016" PRIx64 "/%u", f->nodes[f->ports[port].node].guid, f->ports[port].num);
}

/* VLHighLimit of every port that has VLArb tables; a port that answers the Set but does not
 * keep the value (ibsim ignores it) is reported once and not written again while the wanted
 * value stays; a Set that got no answer is tried again next sweep. */
static uint32_t high_limits(struct build *b, struct qos_memory *m)
{
	struct pass *g = b->g;
	const struct fabric *f = g->f;
	GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
	uint32_t sent = 0;
	const struct vlt_want *w = (const struct vlt_want *)(void *)b->want->data;
	GArray *asked = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	g->pi_answered = g_new0(uint8_t, f->pub.n_ports ? f->pub.n_ports : 1);
	for (guint i = 0; i < b->want->len; i++) {
		uint32_t port = w[i].port;
		if (w[i].attr != IB_ATTR_VL_ARBITRATION || g_hash_table_contains(seen, GUINT_TO_POINTER(port + 1)))
			continue;
		g_hash_table_add(seen, GUINT_TO_POINTER(port + 1));
		const struct qos_port_config *c = port_config(b, port);
		if (pi_field(f, port, IB_PORT_VL_HIGH_LIMIT_F) == c->high_limit)
			continue;
		char key[40];
		port_key(f, port, key, sizeof(key));
		gpointer refused = g_hash_table_lookup(m->hl_refused, key);
		if (refused && GPOINTER_TO_UINT(refused) == (guint)c->high_limit + 1)
			continue;
		sent += (uint32_t)portinfo_vl_high_limit(g, port, c->high_limit);
		g_array_append_val(asked, port);
	}
	transport_drain(g->t, g->stop);
	for (guint i = 0; i < asked->len; i++) {
		uint32_t port = g_array_index(asked, uint32_t, i);
		const struct ibsm_node *n = &f->nodes[f->ports[port].node];
		const struct qos_port_config *c = port_config(b, port);
		if (!g->pi_answered[port] || pi_field(f, port, IB_PORT_VL_HIGH_LIMIT_F) == c->high_limit)
			continue; /* lost (tried again next sweep), or taken */
		char key[40];
		port_key(f, port, key, sizeof(key));
		if (g_hash_table_size(m->hl_refused) < 10)
			LOG_I("QOS-0001", "port %u of node 0x%016" PRIx64 " (%s) does not keep VLHighLimit %u "
			      "(reads back %u); not written again while the setting stays", f->ports[port].num,
			      n->guid, n->desc, c->high_limit, pi_field(f, port, IB_PORT_VL_HIGH_LIMIT_F));
		g_hash_table_replace(m->hl_refused, g_strdup(key), GUINT_TO_POINTER((guint)c->high_limit + 1));
	}
	g_array_free(asked, TRUE);
	g_free(g->pi_answered);
	g->pi_answered = NULL;
	g_hash_table_destroy(seen);
	return sent;
}

uint32_t qos_program(struct pass *g, struct qos_memory *m, const struct routing_result *r,
		     struct vlt_stats *st)
{
	memset(st, 0, sizeof(*st));
	const struct fabric *f = g->f;
	/* without -Q: only an engine that gives SL2VL or VLArb tables (its VLs: dfsssp, nue, lash,
	 * torus-2QoS) has them written, and nothing is followed otherwise */
	int engine_only = !g->o->qos;
	if (f->pub.sm_port == IBSM_NONE || (engine_only && !routing_vl_hooks(r))) {
		qos_memory_forget(m);
		return 0;
	}
	struct build b = { .g = g, .r = r, .want = g_array_new(FALSE, TRUE, sizeof(struct vlt_want)),
			   .engine_only = engine_only };
	for (int s = 0; s < QOS_N_SCOPES; s++)
		qos_config_resolve(g->o->qos_opt, (enum qos_scope)s, &b.cfg[s]);
	for (uint32_t n = 0; n < f->pub.n_nodes; n++) {
		const struct ibsm_node *node = &f->nodes[n];
		if (node->type == IBSM_SWITCH)
			switch_node(&b, node, n);
		else
			end_node(&b, node);
	}
	uint32_t sets = engine_only ? 0 : high_limits(&b, m); /* VLHighLimit is -Q's */
	sets += vlt_program(g, m->vlt, (const struct vlt_want *)(void *)b.want->data, b.want->len, st);
	LOG_V("QOS-0002", "%s tables: %u wanted (%u SL2VL and %u VLArb from the routing engine), %u "
	      "known from earlier sweeps, %u read, %u written, %u failed",
	      engine_only ? "the routing engine's VL (no -Q)" : "QoS", st->tables, b.engine_sl2vl,
	      b.engine_vlarb, st->trusted, st->read, st->written, st->failed);
	g_array_free(b.want, TRUE);
	return sets;
}
