/* program.c - writes the computed configuration into the fabric in the order that works on
 * real switches and on ibsim: SM port first; LID/MasterSMLID/LMC on every end port; MTU and
 * OperVLs on switch links; LinearFDBTop before changed LFT blocks; ARMED; ACTIVE once both
 * ends are ARMED. Every PortInfo Set is read-modify-write of the last Get. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <infiniband/mad.h>
#include "log.h"
#include "pkey.h" /* issue 6: P_Key tables, enforcement bits */
#include "sm.h"

#define LFT_BLOCK 64

struct held_lft {
	uint32_t nblocks;
	uint8_t *rows;      /* [nblocks * 64] what the switch holds */
	uint8_t *known;     /* [nblocks] 1: rows[] is what the switch holds */
};

struct prog {
	struct sm *sm;
	struct fabric *f;
	uint8_t *state;     /* [n_ports] port state as of the last reply */
	uint32_t failed;
	uint32_t sets;
	const uint8_t *lft;
	uint32_t stride;
};

enum pk { PK_PORTINFO, PK_SWITCHINFO, PK_LFT_GET, PK_LFT_SET };

static void on_done(struct transport *t, const struct smp_req *r, int status,
		    const uint8_t *data, void *ctx);

static void req_init(struct prog *g, struct smp_req *r, uint32_t node, uint8_t method,
		     uint16_t attr, uint32_t mod, enum pk kind, uint32_t id)
{
	const struct node_extra *x = &g->f->nx[node];
	memset(r, 0, sizeof(*r));
	r->method = method;
	r->dr = 1;
	r->hops = x->dr_hops;
	memcpy(r->path, x->dr_path, sizeof(r->path));
	/* a CA port's PortInfo goes through that port's own switch (fabric_port_dr_path) */
	const struct ibsm_node *n = &g->f->nodes[node];
	if (attr == IB_ATTR_PORT_INFO && n->type != IBSM_SWITCH && mod >= 1 && mod <= n->nports) {
		uint8_t hops, path[MODEL_DR_MAX];
		if (fabric_port_dr_path(g->f, n->port0 + mod, &hops, path) == 0) {
			r->hops = hops;
			memcpy(r->path, path, sizeof(r->path));
		}
	}
	r->attr = attr;
	r->mod = mod;
	r->done = on_done;
	r->ctx = g;
	r->cookie = ((uint64_t)id << 8) | kind;
}

static void on_done(struct transport *t, const struct smp_req *r, int status,
		    const uint8_t *data, void *ctx)
{
	(void)t;
	struct prog *g = ctx;
	enum pk kind = (enum pk)(r->cookie & 0xff);
	uint32_t id = (uint32_t)(r->cookie >> 8);
	if (status != 0 && kind == PK_PORTINFO && status > 0 && data && r->method == IB_MAD_METHOD_SET) {
		/* 0x1C (invalid state transition) with the read-back already in the state we asked
		 * for: a retried Set whose first answer was lost. Not an error. */
		uint8_t want = (uint8_t)mad_get_field((void *)r->data, 0, IB_PORT_STATE_F);
		uint8_t now = (uint8_t)mad_get_field((void *)data, 0, IB_PORT_STATE_F);
		if (want && want == now)
			status = 0;
	}
	if (status != 0) {
		/* PortInfo Set answered 0x1C: the state change was refused; the data is valid */
		if (!(kind == PK_PORTINFO && status > 0 && data))
			g->sm->smp_failures++;
		g->failed++;
		LOG_E("PRG-0001", "%s attr 0x%02x mod %u to node 0x%016" PRIx64 " failed: %s%x",
		      r->method == IB_MAD_METHOD_SET ? "Set" : "Get", r->attr, r->mod,
		      g->f->nodes[kind == PK_PORTINFO ? g->f->ports[id].node :
				  kind == PK_SWITCHINFO ? id : g->f->switches[id >> 16 & 0xFFFF].node].guid,
		      status < 0 ? "errno " : "status 0x", status < 0 ? -status : status);
		if (!(kind == PK_PORTINFO && status > 0 && data))
			return;
	}
	switch (kind) {
	case PK_PORTINFO:
		memcpy(g->f->px[id].portinfo, data, 64);
		g->state[id] = (uint8_t)mad_get_field((void *)data, 0, IB_PORT_STATE_F);
		break;
	case PK_SWITCHINFO:
		memcpy(g->f->nx[id].switchinfo, data, 64);
		break;
	case PK_LFT_GET:
	case PK_LFT_SET: {
		/* a Get reads what the switch holds; a Set's GetResp is the read-back */
		uint32_t sw = id >> 16 & 0xFFFF, block = id & 0xFFFF;
		struct held_lft *h = g_hash_table_lookup(g->sm->held_lft,
							 &g->f->nodes[g->f->switches[sw].node].guid);
		if (h && block < h->nblocks) {
			memcpy(h->rows + (size_t)block * LFT_BLOCK, data, LFT_BLOCK);
			h->known[block] = 1;
		}
		break;
	}
	}
}

static void submit_portinfo_set(struct prog *g, uint32_t port, const uint8_t *pi)
{
	struct smp_req r;
	const struct ibsm_port *p = &g->f->ports[port];
	req_init(g, &r, p->node, IB_MAD_METHOD_SET, IB_ATTR_PORT_INFO, p->num, PK_PORTINFO, port);
	memcpy(r.data, pi, 64);
	transport_submit(g->sm->t, &r);
	g->sets++;
}

/* Read-modify-write base: the last PortInfo with no state/phys-state change requested. */
static void pi_base(const struct prog *g, uint32_t port, uint8_t *pi)
{
	memcpy(pi, g->f->px[port].portinfo, 64);
	mad_set_field(pi, 0, IB_PORT_STATE_F, 0);
	mad_set_field(pi, 0, IB_PORT_PHYS_STATE_F, 0);
	mad_set_field(pi, 0, IB_PORT_LINK_DOWN_DEF_F, 0);
}

static uint8_t min_u8(uint8_t a, uint8_t b) { return a < b ? a : b; }

/* OperVLs and NeighborMTU a link can use: min of both ends (and the configured max VLs). */
static void link_params(const struct prog *g, uint32_t port, uint8_t *mtu, uint8_t *vls)
{
	const struct ibsm_port *p = &g->f->ports[port];
	*mtu = p->mtu_cap;
	*vls = p->vl_cap;
	if (p->peer != IBSM_NONE) {
		const struct ibsm_port *q = &g->f->ports[p->peer];
		if (q->mtu_cap)
			*mtu = min_u8(*mtu, q->mtu_cap);
		if (q->vl_cap)
			*vls = min_u8(*vls, q->vl_cap);
	}
	if (g->sm->opt->max_op_vls)
		*vls = min_u8(*vls, g->sm->opt->max_op_vls);
	if (!*vls)
		*vls = 1;
}

/* The Set for an end port (CA port or switch port 0); returns 1 if one was queued. */
static int end_port_set(struct prog *g, uint32_t port, uint16_t sm_lid)
{
	const struct ibsm_port *p = &g->f->ports[port];
	const struct sm_options *o = g->sm->opt;
	const uint8_t *old = g->f->px[port].portinfo;
	uint8_t pi[64];
	pi_base(g, port, pi);
	mad_set_field(pi, 0, IB_PORT_LID_F, p->lid);
	mad_set_field(pi, 0, IB_PORT_SMLID_F, sm_lid);
	mad_set_field(pi, 0, IB_PORT_LMC_F, p->lmc);
	uint8_t prefix[8];
	for (int i = 0; i < 8; i++)
		prefix[i] = (uint8_t)(o->subnet_prefix >> (56 - 8 * i));
	mad_set_array(pi, 0, IB_PORT_GID_PREFIX_F, prefix);
	mad_set_field(pi, 0, IB_PORT_SUBN_TIMEOUT_F, o->subnet_timeout);
	int is_ca = g->f->nodes[p->node].type != IBSM_SWITCH;
	if (is_ca && p->state == IBSM_STATE_INIT) {
		uint8_t mtu, vls;
		link_params(g, port, &mtu, &vls);
		mad_set_field(pi, 0, IB_PORT_NEIGHBOR_MTU_F, mtu);
		mad_set_field(pi, 0, IB_PORT_OPER_VLS_F, vls);
	}
	uint32_t capmask = mad_get_field(pi, 0, IB_PORT_CAPMASK_F);
	if (g->sm->first_master_sweep && (capmask & (1u << 25)))
		mad_set_field(pi, 0, IB_PORT_CLIENT_REREG_F, 1);
	int changed = mad_get_field((void *)old, 0, IB_PORT_LID_F) != p->lid ||
		      mad_get_field((void *)old, 0, IB_PORT_SMLID_F) != sm_lid ||
		      mad_get_field((void *)old, 0, IB_PORT_LMC_F) != p->lmc ||
		      (is_ca && p->state == IBSM_STATE_INIT) ||
		      (g->sm->first_master_sweep && (capmask & (1u << 25)));
	uint8_t old_prefix[8];
	mad_get_array((void *)old, 0, IB_PORT_GID_PREFIX_F, old_prefix);
	if (memcmp(old_prefix, prefix, 8))
		changed = 1;
	if (!changed)
		return 0;
	submit_portinfo_set(g, port, pi);
	return 1;
}

/* The NOP Set on a switch external port in INIT: NeighborMTU, OperVLs, HOQLife, VLStall. */
static int switch_port_set(struct prog *g, uint32_t port)
{
	const struct ibsm_port *p = &g->f->ports[port];
	if (p->state != IBSM_STATE_INIT || p->peer == IBSM_NONE)
		return 0;
	const struct sm_options *o = g->sm->opt;
	uint8_t pi[64], mtu, vls;
	pi_base(g, port, pi);
	link_params(g, port, &mtu, &vls);
	mad_set_field(pi, 0, IB_PORT_NEIGHBOR_MTU_F, mtu);
	mad_set_field(pi, 0, IB_PORT_OPER_VLS_F, vls);
	int to_ca = g->f->nodes[g->f->ports[p->peer].node].type != IBSM_SWITCH;
	mad_set_field(pi, 0, IB_PORT_HOQ_LIFE_F, to_ca ? o->leaf_hoq_life : o->hoq_life);
	mad_set_field(pi, 0, IB_PORT_VL_STALL_COUNT_F, o->vl_stall_count);
	pkey_enforce_bits(g->sm, g->f, port, pi); /* issue 6: partition enforcement to end ports */
	submit_portinfo_set(g, port, pi);
	return 1;
}

static void switchinfo_set(struct prog *g, uint32_t sw)
{
	uint32_t node = g->f->switches[sw].node;
	if (!g->f->nx[node].have_switchinfo)
		return; /* never write a SwitchInfo we could not read */
	const uint8_t *old = g->f->nx[node].switchinfo;
	uint32_t top = g->f->pub.max_lid;
	int state_change = mad_get_field((void *)old, 0, IB_SW_STATE_CHANGE_F);
	if (mad_get_field((void *)old, 0, IB_SW_LINEAR_FDB_TOP_F) == top && !state_change &&
	    mad_get_field((void *)old, 0, IB_SW_LIFE_TIME_F) == g->sm->opt->packet_life)
		return;
	struct smp_req r;
	req_init(g, &r, node, IB_MAD_METHOD_SET, IB_ATTR_SWITCH_INFO, 0, PK_SWITCHINFO, node);
	memcpy(r.data, old, 64);
	mad_set_field(r.data, 0, IB_SW_LINEAR_FDB_TOP_F, top);
	mad_set_field(r.data, 0, IB_SW_LIFE_TIME_F, g->sm->opt->packet_life);
	mad_set_field(r.data, 0, IB_SW_STATE_CHANGE_F, 1); /* writing 1 clears it */
	transport_submit(g->sm->t, &r);
	g->sets++;
}

static void held_free(gpointer p)
{
	struct held_lft *h = p;
	g_free(h->rows);
	g_free(h->known);
	g_free(h);
}

/* What the switch holds: known from our own writes, empty at first contact when it has no
 * LID or no LinearFDBTop, otherwise unknown until read. Returns the blocks to read. */
static uint32_t held_prepare(struct prog *g, uint32_t sw, uint32_t nblocks)
{
	uint32_t node = g->f->switches[sw].node;
	uint64_t guid = g->f->nodes[node].guid;
	struct held_lft *h = g_hash_table_lookup(g->sm->held_lft, &guid);
	uint16_t sp0_lid_now = (uint16_t)mad_get_field(g->f->px[g->f->nodes[node].port0].portinfo, 0,
						       IB_PORT_LID_F);
	if (h && (!sp0_lid_now || !g->f->nx[node].lft_top)) {
		/* no LID or no LinearFDBTop any more: the switch was reset (rebooted); what we
		 * remembered writing is gone */
		LOG_I("PRG-0005", "switch 0x%016" PRIx64 " (%s) lost its tables: reprogramming it",
		      guid, g->f->nodes[node].desc);
		g_hash_table_remove(g->sm->held_lft, &guid);
		h = NULL;
	}
	if (h && h->nblocks >= nblocks)
		return 0;
	struct held_lft *n = g_new0(struct held_lft, 1);
	n->nblocks = nblocks;
	n->rows = g_malloc((size_t)nblocks * LFT_BLOCK);
	memset(n->rows, IBSM_NO_PORT, (size_t)nblocks * LFT_BLOCK);
	n->known = g_malloc0(nblocks);
	uint32_t from = 0;
	if (h) {
		memcpy(n->rows, h->rows, (size_t)h->nblocks * LFT_BLOCK);
		memcpy(n->known, h->known, h->nblocks);
		from = h->nblocks;
	}
	uint16_t sp0_lid = (uint16_t)mad_get_field(g->f->px[g->f->nodes[node].port0].portinfo, 0,
						   IB_PORT_LID_F);
	uint32_t top = g->f->nx[node].lft_top;
	uint32_t to_read = 0;
	for (uint32_t b = from; b < nblocks; b++) {
		if (h || !sp0_lid || !top || b * LFT_BLOCK > top)
			n->known[b] = 1; /* empty (0xFF) by assumption */
		else
			to_read++;
	}
	uint64_t *k = g_new(uint64_t, 1);
	*k = guid;
	g_hash_table_replace(g->sm->held_lft, k, n);
	for (uint32_t b = from; b < nblocks; b++) {
		if (n->known[b])
			continue;
		struct smp_req r;
		req_init(g, &r, node, IB_MAD_METHOD_GET, IB_ATTR_LINEARFORWTBL, b, PK_LFT_GET,
			 (sw << 16) | b);
		transport_submit(g->sm->t, &r);
	}
	return to_read;
}

static uint32_t lft_blocks_send(struct prog *g, uint32_t nblocks)
{
	uint32_t sent = 0;
	uint32_t ns = g->f->pub.n_switches;
	/* block-major across switches spreads the load over all switches */
	for (uint32_t b = 0; b < nblocks; b++) {
		for (uint32_t sw = 0; sw < ns; sw++) {
			uint32_t node = g->f->switches[sw].node;
			if (!g->f->nx[node].have_switchinfo)
				continue;
			struct held_lft *h = g_hash_table_lookup(g->sm->held_lft, &g->f->nodes[node].guid);
			uint8_t want[LFT_BLOCK];
			memset(want, IBSM_NO_PORT, sizeof(want));
			uint32_t first = b * LFT_BLOCK;
			for (uint32_t i = 0; i < LFT_BLOCK && first + i < g->stride; i++)
				want[i] = g->lft[(size_t)sw * g->stride + first + i];
			if (h && h->known[b] && !memcmp(h->rows + (size_t)b * LFT_BLOCK, want, LFT_BLOCK))
				continue;
			struct smp_req r;
			req_init(g, &r, node, IB_MAD_METHOD_SET, IB_ATTR_LINEARFORWTBL, b, PK_LFT_SET,
				 (sw << 16) | b);
			memcpy(r.data, want, LFT_BLOCK);
			transport_submit(g->sm->t, &r);
			sent++;
		}
	}
	return sent;
}

static int linked_port(const struct fabric *f, uint32_t port)
{
	const struct ibsm_port *p = &f->ports[port];
	return p->num != 0 && p->peer != IBSM_NONE && (p->flags & IBSM_PORT_PRESENT) &&
	       f->px[port].have_portinfo;
}

static uint32_t set_state(struct prog *g, uint8_t from, uint8_t to, int need_peer_from)
{
	uint32_t n = 0;
	for (uint32_t port = 0; port < g->f->pub.n_ports; port++) {
		if (!linked_port(g->f, port) || g->state[port] != from)
			continue;
		uint32_t peer = g->f->ports[port].peer;
		if (need_peer_from && g->state[peer] != from && g->state[peer] != to)
			continue;
		if (!g->f->px[peer].have_portinfo)
			continue;
		uint8_t pi[64];
		pi_base(g, port, pi);
		mad_set_field(pi, 0, IB_PORT_STATE_F, to);
		submit_portinfo_set(g, port, pi);
		n++;
	}
	return n;
}

int program_fabric(struct sm *sm, struct fabric *f, const uint8_t *lft, uint32_t stride)
{
	struct prog g = { .sm = sm, .f = f, .lft = lft, .stride = stride };
	g.state = g_new0(uint8_t, f->pub.n_ports ? f->pub.n_ports : 1);
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		g.state[p] = f->ports[p].state;
	if (!sm->held_lft)
		sm->held_lft = g_hash_table_new_full(model_guid_hash, model_guid_equal, g_free, held_free);

	/* 1. our own port first, so the fabric learns the master's LID */
	uint16_t sm_lid = 0;
	uint32_t n_sm = 0;
	if (f->pub.sm_port != IBSM_NONE) {
		sm_lid = f->ports[f->pub.sm_port].lid;
		sm_phase_begin(sm, "lids");
		n_sm = (uint32_t)end_port_set(&g, f->pub.sm_port, sm_lid);
		transport_drain(sm->t, &sm->stop);
	} else {
		sm_phase_begin(sm, "lids");
	}
	/* 2. every other end port */
	uint32_t n_lid = 0;
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		if (p != f->pub.sm_port && fabric_is_end_port(f, p) && f->px[p].have_portinfo)
			n_lid += (uint32_t)end_port_set(&g, p, sm_lid);
	transport_drain(sm->t, &sm->stop);
	sm_phase_end(sm, "%u end ports set", n_lid + n_sm);

	/* 3. switch links: MTU / OperVLs on INIT ports; SwitchInfo (LinearFDBTop first) */
	sm_phase_begin(sm, "ports");
	uint32_t n_sp = 0;
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		const struct ibsm_node *n = &f->nodes[f->switches[s].node];
		for (uint32_t pn = 1; pn <= n->nports; pn++)
			if (f->px[n->port0 + pn].have_portinfo)
				n_sp += (uint32_t)switch_port_set(&g, n->port0 + pn);
		switchinfo_set(&g, s);
	}
	uint32_t nblocks = stride ? (stride + LFT_BLOCK - 1) / LFT_BLOCK : 0;
	uint32_t n_read = 0;
	uint32_t no_si = 0;
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		if (f->nx[f->switches[s].node].have_switchinfo)
			n_read += held_prepare(&g, s, nblocks);
		else if (no_si++ < 10)
			LOG_E("PRG-0004", "switch 0x%016" PRIx64 " (%s): no SwitchInfo, its tables are not "
			      "programmed", f->nodes[f->switches[s].node].guid, f->nodes[f->switches[s].node].desc);
	}
	if (no_si)
		sm->smp_failures++;
	transport_drain(sm->t, &sm->stop);
	sm_phase_end(sm, "%u switch ports set, %u LFT blocks read", n_sp, n_read);

	/* 3b. P_Key tables of end ports and the switch ports facing them (issue 6, core/pkey.c) */
	sm_phase_begin(sm, "pkeys");
	uint32_t n_pk = pkey_program(sm, f);
	sm_phase_end(sm, "%u P_Key blocks written", n_pk);

	/* 4. LFT blocks that differ, with ARMED on INIT ports streaming beside them */
	sm_phase_begin(sm, "lft");
	uint32_t n_blocks = lft_blocks_send(&g, nblocks);
	uint32_t n_arm = set_state(&g, IBSM_STATE_INIT, IBSM_STATE_ARMED, 0);
	transport_drain(sm->t, &sm->stop);
	sm_phase_end(sm, "%u LFT blocks written, %u ports ARMED", n_blocks, n_arm);

	/* 5. ACTIVE from ARMED, only where the peer is ARMED (or already ACTIVE) too */
	sm_phase_begin(sm, "active");
	uint32_t n_act = set_state(&g, IBSM_STATE_ARMED, IBSM_STATE_ACTIVE, 1);
	transport_drain(sm->t, &sm->stop);
	sm_phase_end(sm, "%u ports ACTIVE", n_act);

	/* verdict: every linked port ACTIVE */
	uint32_t not_active = 0;
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		if (!linked_port(f, p))
			continue;
		f->ports[p].state = g.state[p];
		if (g.state[p] != IBSM_STATE_ACTIVE) {
			if (not_active < 10)
				LOG_E("PRG-0002", "port %u of node 0x%016" PRIx64 " (%s) is in state %u, not ACTIVE",
				      f->ports[p].num, f->nodes[f->ports[p].node].guid,
				      f->nodes[f->ports[p].node].desc, g.state[p]);
			not_active++;
		}
	}
	g_free(g.state);
	sm->sweep_writes = g.sets + n_blocks + n_pk; /* n_pk: issue 6 */
	if (not_active)
		LOG_E("PRG-0003", "%u linked ports are not ACTIVE", not_active);
	return not_active || sm->stop ? -EIO : 0;
}
