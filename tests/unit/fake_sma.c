/* fake_sma.c - a fabric of fake SMAs behind a struct transport_io: directed-route SMPs are
 * walked hop by hop over the copied links and answered by a table of {attribute, handler} as
 * ibsim's sim_mad.c does, so programming, SMInfo and light-sweep code can be tested without a
 * simulator, judged by what the fabric received and holds. */
#include <errno.h>
#include <arpa/inet.h>
#include <string.h>
#include <glib.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include "fabric/discovery.h"
#include "fabric/lid.h"
#include "fabric_fixture.h"
#include "fake_sma.h"

#define PHYS_POLLING 2
#define PHYS_DISABLED 3
#define LINK_DOWN_DEFAULT_POLLING 2
#define MTU_256 1
#define BOUNCE (-1)            /* a handler's answer: undeliverable (umad status 110) */

struct fake_port {
	uint32_t node, peer;       /* node id, peer port id (IBSM_NONE: no link) */
	uint8_t num, present;
	uint64_t guid;
	uint8_t width, speed, mtu_cap, vl_cap;
	uint8_t pi[SMP_DATA_SIZE]; /* PortInfo as the port holds it */
	uint32_t pkey_cap;
	uint16_t *pkeys;           /* [pkey_cap] */
	int64_t lease_until;       /* M_Key lease running until (monotonic us), 0: not running */
	uint32_t mkey_violations;  /* SMPs refused for their M_Key */
	uint8_t epi_on;            /* answers MlnxExtPortInfo (fsma_port_set_mlnx_epi) */
	uint8_t epi[SMP_DATA_SIZE];
};

struct fake_node {
	uint64_t guid, sysimg_guid;
	char desc[SMP_DATA_SIZE + 1];
	uint8_t type, nports;
	uint32_t port0;
	uint16_t partition_cap, device_id;
	uint8_t si[SMP_DATA_SIZE];  /* switches: SwitchInfo */
	uint32_t lft_cap;
	uint8_t *lft;              /* switches: [lft_cap] */
};

struct fsma {
	uint32_t n_nodes, n_ports;
	struct fake_node *nodes;
	struct fake_port *ports;
	uint32_t sm_port;
	struct fsma_sm other;
	GArray *recs;              /* struct fsma_rec */
	GArray *faults;            /* struct fsma_fault */
	GQueue replies;            /* what the SM reads next: answers and injected requests, umad
	                            * buffers of umad_len bytes, oldest first */
	GPtrArray *responses;      /* copies of what the SM answered (the whole MAD, RMPP too) */
	GArray *response_dlids;    /* where each went (LID) */
	GArray *response_lens;     /* their lengths (uint32_t) */
	int umad_len;
};

/* One request at its target, for the attribute handlers. */
struct smp {
	uint8_t method;
	uint32_t mod;
	uint32_t node;
	uint8_t in_port;
	const uint8_t *req;        /* the request's data */
	uint8_t *resp;             /* the answer's data, zeroed */
	struct fsma_rec *rec;
};

/* ---- power-up state ---------------------------------------------------------------------- */

static int is_switch(const struct fsma *fk, uint32_t node)
{
	return fk->nodes[node].type == IBSM_SWITCH;
}

static int linked(const struct fsma *fk, uint32_t port)
{
	return fk->ports[port].peer != IBSM_NONE;
}

static void port_power_up(struct fsma *fk, uint32_t p)
{
	struct fake_port *fp = &fk->ports[p];
	uint8_t *pi = fp->pi;
	int sw = is_switch(fk, fp->node);
	memset(pi, 0, SMP_DATA_SIZE);
	uint32_t cap = 0;
	if (!sw)
		cap = IB_CAP_CLIENT_REREG;
	if (p == fk->sm_port || p == fk->other.port)
		cap |= IB_CAP_IS_SM;
	mad_set_field(pi, 0, IB_PORT_CAPMASK_F, cap);
	mad_set_field(pi, 0, IB_PORT_LOCAL_PORT_F, fp->num);
	mad_set_field(pi, 0, IB_PORT_LINK_WIDTH_ENABLED_F, fp->width);
	mad_set_field(pi, 0, IB_PORT_LINK_WIDTH_SUPPORTED_F, fp->width);
	mad_set_field(pi, 0, IB_PORT_LINK_WIDTH_ACTIVE_F, fp->width);
	mad_set_field(pi, 0, IB_PORT_LINK_SPEED_SUPPORTED_F, fp->speed);
	mad_set_field(pi, 0, IB_PORT_LINK_SPEED_ENABLED_F, fp->speed);
	mad_set_field(pi, 0, IB_PORT_LINK_SPEED_ACTIVE_F, fp->speed);
	int up = (sw && fp->num == 0) || linked(fk, p);
	uint8_t state = sw && fp->num == 0 ? IBSM_STATE_ACTIVE : up ? IBSM_STATE_INIT : IBSM_STATE_DOWN;
	mad_set_field(pi, 0, IB_PORT_STATE_F, state);
	mad_set_field(pi, 0, IB_PORT_PHYS_STATE_F, up ? IB_PHYS_LINKUP : PHYS_POLLING);
	mad_set_field(pi, 0, IB_PORT_LINK_DOWN_DEF_F, LINK_DOWN_DEFAULT_POLLING);
	mad_set_field(pi, 0, IB_PORT_NEIGHBOR_MTU_F, MTU_256);
	mad_set_field(pi, 0, IB_PORT_MTU_CAP_F, fp->mtu_cap);
	mad_set_field(pi, 0, IB_PORT_VL_CAP_F, fp->vl_cap);
	mad_set_field(pi, 0, IB_PORT_OPER_VLS_F, 1);
	/* P_Key table: end ports come up with the full default key at index 0 */
	fp->pkey_cap = !sw ? fk->nodes[fp->node].partition_cap : fp->num ? FSMA_SW_ENF_CAP : FSMA_SW_PKEY_CAP;
	g_free(fp->pkeys);
	fp->pkeys = g_new0(uint16_t, fp->pkey_cap ? fp->pkey_cap : 1);
	if (fp->pkey_cap && (!sw || fp->num == 0))
		fp->pkeys[0] = PART_DEFAULT_PKEY | PART_FULL_BIT;
}

static void switch_power_up(struct fake_node *n)
{
	memset(n->si, 0, SMP_DATA_SIZE);
	mad_set_field(n->si, 0, IB_SW_LINEAR_FDB_CAP_F, n->lft_cap);
	mad_set_field(n->si, 0, IB_SW_LINEAR_FDB_TOP_F, 0);
	mad_set_field(n->si, 0, IB_SW_STATE_CHANGE_F, 1); /* its links just came up */
	mad_set_field(n->si, 0, IB_SW_PARTITION_ENFORCE_CAP_F, FSMA_SW_ENF_CAP);
	memset(n->lft, IBSM_NO_PORT, n->lft_cap);
}

struct fsma *fsma_new(const struct fabric *f, uint32_t sm_port)
{
	g_assert_cmpuint(sm_port, <, f->pub.n_ports);
	g_assert_true(f->nodes[f->ports[sm_port].node].type != IBSM_SWITCH);
	struct fsma *fk = g_new0(struct fsma, 1);
	fk->n_nodes = f->pub.n_nodes;
	fk->n_ports = f->pub.n_ports;
	fk->nodes = g_new0(struct fake_node, fk->n_nodes);
	fk->ports = g_new0(struct fake_port, fk->n_ports);
	fk->sm_port = sm_port;
	fk->other.port = FSMA_ANY;
	fk->recs = g_array_new(FALSE, TRUE, sizeof(struct fsma_rec));
	fk->faults = g_array_new(FALSE, TRUE, sizeof(struct fsma_fault));
	g_queue_init(&fk->replies);
	fk->responses = g_ptr_array_new_with_free_func(g_free);
	fk->response_dlids = g_array_new(FALSE, FALSE, sizeof(uint16_t));
	fk->response_lens = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	fk->umad_len = transport_umad_len();
	for (uint32_t i = 0; i < fk->n_nodes; i++) {
		const struct ibsm_node *in = &f->nodes[i];
		struct fake_node *n = &fk->nodes[i];
		n->guid = in->guid;
		n->sysimg_guid = in->sysimg_guid;
		g_strlcpy(n->desc, in->desc ? in->desc : "", sizeof(n->desc));
		n->type = in->type;
		n->nports = in->nports;
		n->port0 = in->port0;
		n->partition_cap = in->type == IBSM_SWITCH ? FSMA_SW_PKEY_CAP : FSMA_CA_PKEY_CAP;
		n->device_id = 0xfa4e;
		if (in->type == IBSM_SWITCH) {
			n->lft_cap = f->nx[i].lft_cap ? f->nx[i].lft_cap : 0xC000;
			n->lft = g_malloc(n->lft_cap);
			switch_power_up(n);
		}
	}
	for (uint32_t p = 0; p < fk->n_ports; p++) {
		const struct ibsm_port *ip = &f->ports[p];
		struct fake_port *fp = &fk->ports[p];
		fp->node = ip->node;
		fp->num = ip->num;
		fp->present = !!(ip->flags & IBSM_PORT_PRESENT);
		fp->peer = ip->peer;
		fp->guid = ip->guid;
		fp->width = ip->width;
		fp->speed = ip->speed;
		fp->mtu_cap = ip->mtu_cap;
		fp->vl_cap = ip->vl_cap;
	}
	for (uint32_t p = 0; p < fk->n_ports; p++)
		if (fk->ports[p].present)
			port_power_up(fk, p);
	return fk;
}

void fsma_free(struct fsma *fk)
{
	if (!fk)
		return;
	for (uint32_t i = 0; i < fk->n_nodes; i++)
		g_free(fk->nodes[i].lft);
	for (uint32_t p = 0; p < fk->n_ports; p++)
		g_free(fk->ports[p].pkeys);
	g_free(fk->nodes);
	g_free(fk->ports);
	g_array_free(fk->recs, TRUE);
	g_array_free(fk->faults, TRUE);
	uint8_t *buf;
	while ((buf = g_queue_pop_head(&fk->replies)))
		g_free(buf);
	g_ptr_array_free(fk->responses, TRUE);
	g_array_free(fk->response_dlids, TRUE);
	g_array_free(fk->response_lens, TRUE);
	g_free(fk);
}

/* ---- port state ------------------------------------------------------------------------------ */

static uint8_t state_of(const struct fsma *fk, uint32_t port)
{
	return (uint8_t)mad_get_field((void *)fk->ports[port].pi, 0, IB_PORT_STATE_F);
}

static void set_state(struct fsma *fk, uint32_t port, uint8_t state)
{
	mad_set_field(fk->ports[port].pi, 0, IB_PORT_STATE_F, state);
}

/* A link retrains (DOWN written, or a switch rebooted): both ends come back INIT, and the
 * switches among them raise PortStateChange. */
static void link_retrain(struct fsma *fk, uint32_t port)
{
	uint32_t ends[2] = { port, fk->ports[port].peer };
	for (int i = 0; i < 2; i++) {
		if (ends[i] == IBSM_NONE)
			continue;
		set_state(fk, ends[i], IBSM_STATE_INIT);
		uint32_t node = fk->ports[ends[i]].node;
		if (is_switch(fk, node))
			mad_set_field(fk->nodes[node].si, 0, IB_SW_STATE_CHANGE_F, 1);
	}
}

/* PortPhysicalState Polling written to a Disabled port: its link trains again (LinkUp, INIT at
 * both ends) if the peer is not disabled itself. */
static void port_enable(struct fsma *fk, uint32_t port)
{
	uint32_t peer = fk->ports[port].peer;
	int up = peer != IBSM_NONE &&
		 mad_get_field(fk->ports[peer].pi, 0, IB_PORT_PHYS_STATE_F) != PHYS_DISABLED;
	mad_set_field(fk->ports[port].pi, 0, IB_PORT_PHYS_STATE_F, up ? IB_PHYS_LINKUP : PHYS_POLLING);
	if (up) {
		mad_set_field(fk->ports[peer].pi, 0, IB_PORT_PHYS_STATE_F, IB_PHYS_LINKUP);
		link_retrain(fk, port);
	}
}

/* The one-step state machine of a PortInfo Set: DOWN from anywhere (the link retrains to INIT),
 * ARMED only from INIT, ACTIVE only from ARMED and only while the peer is ARMED or ACTIVE;
 * anything else (INIT, the state the port is in, reserved values) is invalid. */
static int state_step_ok(const struct fsma *fk, uint32_t port, uint8_t want)
{
	const struct fake_port *fp = &fk->ports[port];
	uint8_t now = state_of(fk, port);
	if (is_switch(fk, fp->node) && fp->num == 0)
		return 0; /* switch port 0 has no link to change */
	switch (want) {
	case IBSM_STATE_DOWN:
		return 1;
	case IBSM_STATE_ARMED:
		return now == IBSM_STATE_INIT;
	case IBSM_STATE_ACTIVE: {
		if (now != IBSM_STATE_ARMED || fp->peer == IBSM_NONE)
			return 0;
		uint8_t peer = state_of(fk, fp->peer);
		return peer == IBSM_STATE_ARMED || peer == IBSM_STATE_ACTIVE;
	}
	default:
		return 0;
	}
}

/* ---- attribute handlers -------------------------------------------------------------------- */

static int do_nodeinfo(struct fsma *fk, struct smp *s)
{
	if (s->method != IB_MAD_METHOD_GET)
		return MAD_STATUS_UNSUP_METHOD_ATTR;
	const struct fake_node *n = &fk->nodes[s->node];
	uint8_t *d = s->resp;
	uint32_t port = n->port0 + (is_switch(fk, s->node) ? 0 : s->in_port);
	mad_set_field(d, 0, IB_NODE_BASE_VERS_F, 1);
	mad_set_field(d, 0, IB_NODE_CLASS_VERS_F, 1);
	mad_set_field(d, 0, IB_NODE_TYPE_F, n->type);
	mad_set_field(d, 0, IB_NODE_NPORTS_F, n->nports);
	mad_set_field64(d, 0, IB_NODE_SYSTEM_GUID_F, n->sysimg_guid);
	mad_set_field64(d, 0, IB_NODE_GUID_F, n->guid);
	mad_set_field64(d, 0, IB_NODE_PORT_GUID_F, fk->ports[port].guid);
	mad_set_field(d, 0, IB_NODE_PARTITION_CAP_F, n->partition_cap);
	mad_set_field(d, 0, IB_NODE_DEVID_F, n->device_id);
	mad_set_field(d, 0, IB_NODE_REVISION_F, 1);
	mad_set_field(d, 0, IB_NODE_LOCAL_PORT_F, s->in_port);
	mad_set_field(d, 0, IB_NODE_VENDORID_F, 0x0002c9);
	return 0;
}

static int do_nodedesc(struct fsma *fk, struct smp *s)
{
	if (s->method != IB_MAD_METHOD_GET)
		return MAD_STATUS_UNSUP_METHOD_ATTR;
	memcpy(s->resp, fk->nodes[s->node].desc, strnlen(fk->nodes[s->node].desc, SMP_DATA_SIZE));
	return 0;
}

/* PortInfo Set: validated first (a refused Set changes nothing), then what a port stores:
 * LID, MasterSMLID, LMC, GID prefix, SubnetTimeout and M_Key, ProtectBits, LeasePeriod on end
 * ports; NeighborMTU, OperVLs, HOQLife, VLStallCount and the enforcement bits on any port;
 * then the state step. ClientReregister is not stored (nothing here reads it back). */
static int portinfo_set(struct fsma *fk, uint32_t port, const uint8_t *req)
{
	struct fake_port *fp = &fk->ports[port];
	uint8_t *pi = fp->pi;
	void *rq = (void *)req;
	uint8_t want = (uint8_t)mad_get_field(rq, 0, IB_PORT_STATE_F);
	uint8_t vls = (uint8_t)mad_get_field(rq, 0, IB_PORT_OPER_VLS_F);
	uint8_t mtu = (uint8_t)mad_get_field(rq, 0, IB_PORT_NEIGHBOR_MTU_F);
	if (vls > fp->vl_cap || mtu > fp->mtu_cap)
		return MAD_STATUS_INVALID_FIELD;
	if (want && !state_step_ok(fk, port, want))
		return MAD_STATUS_INVALID_FIELD;
	if (!is_switch(fk, fp->node) || fp->num == 0) {
		uint8_t prefix[8];
		mad_set_field(pi, 0, IB_PORT_LID_F, mad_get_field(rq, 0, IB_PORT_LID_F));
		mad_set_field(pi, 0, IB_PORT_SMLID_F, mad_get_field(rq, 0, IB_PORT_SMLID_F));
		mad_set_field(pi, 0, IB_PORT_LMC_F, mad_get_field(rq, 0, IB_PORT_LMC_F));
		mad_get_array(rq, 0, IB_PORT_GID_PREFIX_F, prefix);
		mad_set_array(pi, 0, IB_PORT_GID_PREFIX_F, prefix);
		mad_set_field(pi, 0, IB_PORT_SUBN_TIMEOUT_F, mad_get_field(rq, 0, IB_PORT_SUBN_TIMEOUT_F));
		mad_set_field64(pi, 0, IB_PORT_MKEY_F, mad_get_field64(rq, 0, IB_PORT_MKEY_F));
		mad_set_field(pi, 0, IB_PORT_MKEY_PROT_BITS_F, mad_get_field(rq, 0, IB_PORT_MKEY_PROT_BITS_F));
		mad_set_field(pi, 0, IB_PORT_MKEY_LEASE_F, mad_get_field(rq, 0, IB_PORT_MKEY_LEASE_F));
	}
	if (mtu)
		mad_set_field(pi, 0, IB_PORT_NEIGHBOR_MTU_F, mtu);
	if (vls)
		mad_set_field(pi, 0, IB_PORT_OPER_VLS_F, vls);
	mad_set_field(pi, 0, IB_PORT_HOQ_LIFE_F, mad_get_field(rq, 0, IB_PORT_HOQ_LIFE_F));
	mad_set_field(pi, 0, IB_PORT_VL_STALL_COUNT_F, mad_get_field(rq, 0, IB_PORT_VL_STALL_COUNT_F));
	mad_set_field(pi, 0, IB_PORT_PART_EN_INB_F, mad_get_field(rq, 0, IB_PORT_PART_EN_INB_F));
	mad_set_field(pi, 0, IB_PORT_PART_EN_OUTB_F, mad_get_field(rq, 0, IB_PORT_PART_EN_OUTB_F));
	uint8_t phys = (uint8_t)mad_get_field(rq, 0, IB_PORT_PHYS_STATE_F);
	if (phys == PHYS_DISABLED && fp->num)
		fsma_port_disable(fk, port);
	else if (phys == PHYS_POLLING && fp->num &&
		 mad_get_field(pi, 0, IB_PORT_PHYS_STATE_F) == PHYS_DISABLED)
		port_enable(fk, port);
	else if (want == IBSM_STATE_DOWN)
		link_retrain(fk, port);
	else if (want)
		set_state(fk, port, want);
	return 0;
}

static int do_portinfo(struct fsma *fk, struct smp *s)
{
	const struct fake_node *n = &fk->nodes[s->node];
	uint32_t port;
	if (is_switch(fk, s->node)) {
		if (s->mod > n->nports)
			return MAD_STATUS_INVALID_FIELD;
		port = n->port0 + s->mod;
	} else {
		port = n->port0 + s->in_port; /* a CA answers for the port the SMP entered by */
	}
	struct fake_port *fp = &fk->ports[port];
	s->rec->port = port;
	s->rec->state = state_of(fk, port);
	s->rec->peer_state = fp->peer != IBSM_NONE ? state_of(fk, fp->peer) : 0;
	int status = 0;
	if (s->method == IB_MAD_METHOD_SET)
		status = portinfo_set(fk, port, s->req);
	memcpy(s->resp, fp->pi, SMP_DATA_SIZE);
	return status;
}

static int do_switchinfo(struct fsma *fk, struct smp *s)
{
	if (!is_switch(fk, s->node))
		return MAD_STATUS_UNSUP_METHOD_ATTR;
	struct fake_node *n = &fk->nodes[s->node];
	if (s->method == IB_MAD_METHOD_SET) {
		void *rq = (void *)s->req;
		uint32_t top = mad_get_field(rq, 0, IB_SW_LINEAR_FDB_TOP_F);
		if (top >= n->lft_cap)
			return MAD_STATUS_INVALID_FIELD;
		mad_set_field(n->si, 0, IB_SW_LINEAR_FDB_TOP_F, top);
		mad_set_field(n->si, 0, IB_SW_LIFE_TIME_F, mad_get_field(rq, 0, IB_SW_LIFE_TIME_F));
		if (mad_get_field(rq, 0, IB_SW_STATE_CHANGE_F)) /* writing 1 clears it */
			mad_set_field(n->si, 0, IB_SW_STATE_CHANGE_F, 0);
	}
	memcpy(s->resp, n->si, SMP_DATA_SIZE);
	return 0;
}

static int do_lft(struct fsma *fk, struct smp *s)
{
	if (!is_switch(fk, s->node))
		return MAD_STATUS_UNSUP_METHOD_ATTR;
	struct fake_node *n = &fk->nodes[s->node];
	uint32_t first = s->mod * LFT_BLOCK_SIZE;
	if (s->mod > FSMA_LFT_BLOCK_MAX || first + LFT_BLOCK_SIZE > n->lft_cap)
		return MAD_STATUS_INVALID_FIELD;
	if (s->method == IB_MAD_METHOD_SET)
		memcpy(n->lft + first, s->req, LFT_BLOCK_SIZE);
	memcpy(s->resp, n->lft + first, LFT_BLOCK_SIZE);
	return 0;
}

/* A CA's table is the port the SMP entered by's; a switch names the port in modifier bits
 * 16..23 (0: port 0). The block is the low 16 bits. */
static int do_pkeytable(struct fsma *fk, struct smp *s)
{
	const struct fake_node *n = &fk->nodes[s->node];
	uint32_t port = n->port0 + s->in_port, block = s->mod & 0xffff;
	if (is_switch(fk, s->node)) {
		uint32_t num = (s->mod >> 16) & 0xff;
		if (num > n->nports)
			return MAD_STATUS_INVALID_FIELD;
		port = n->port0 + num;
	}
	struct fake_port *fp = &fk->ports[port];
	s->rec->port = port;
	uint32_t first = block * PKEY_BLOCK_SIZE;
	if (first >= fp->pkey_cap)
		return MAD_STATUS_INVALID_FIELD;
	uint32_t len = MIN(PKEY_BLOCK_SIZE, fp->pkey_cap - first);
	if (s->method == IB_MAD_METHOD_SET)
		for (uint32_t i = 0; i < len; i++)
			fp->pkeys[first + i] = (uint16_t)(s->req[2 * i] << 8 | s->req[2 * i + 1]);
	for (uint32_t i = 0; i < len; i++) {
		s->resp[2 * i] = (uint8_t)(fp->pkeys[first + i] >> 8);
		s->resp[2 * i + 1] = (uint8_t)fp->pkeys[first + i];
	}
	return 0;
}

/* Not an SMA attribute: the port's SM process answers, if there is one. A Set is answered
 * like a Get; only an acknowledging SM in STANDBY acts on one (HANDOVER: it becomes MASTER
 * and sends the SM its ACKNOWLEDGE, an SMInfo Set of its own). */
static int do_sminfo(struct fsma *fk, struct smp *s)
{
	struct fsma_sm *o = &fk->other;
	uint32_t port = fk->nodes[s->node].port0 + s->in_port;
	if (o->port == FSMA_ANY || port != o->port || !o->answering)
		return BOUNCE;
	uint64_t key = mad_get_field64((void *)s->req, 0, IB_SMINFO_KEY_F);
	uint64_t shown = o->reveals_key || key == o->sm_key ? o->sm_key : 0;
	if (s->method == IB_MAD_METHOD_SET && s->mod == 1 && o->acknowledges &&
	    o->state == IB_SM_STANDBY) {
		o->state = IB_SM_MASTER;
		uint8_t ack[SMP_DATA_SIZE] = { 0 };
		mad_set_field64(ack, 0, IB_SMINFO_GUID_F, fk->ports[port].guid);
		mad_set_field64(ack, 0, IB_SMINFO_KEY_F, shown);
		mad_set_field(ack, 0, IB_SMINFO_PRIO_F, o->priority);
		mad_set_field(ack, 0, IB_SMINFO_STATE_F, IB_SM_MASTER);
		fsma_inject(fk, IB_SMI_DIRECT_CLASS, IB_MAD_METHOD_SET, IB_ATTR_SMINFO, 2, ack,
			    0x5eed0000u + o->act_count++);
	}
	mad_set_field64(s->resp, 0, IB_SMINFO_GUID_F, fk->ports[port].guid);
	mad_set_field64(s->resp, 0, IB_SMINFO_KEY_F, shown);
	mad_set_field(s->resp, 0, IB_SMINFO_ACT_F, o->act_count);
	mad_set_field(s->resp, 0, IB_SMINFO_PRIO_F, o->priority);
	mad_set_field(s->resp, 0, IB_SMINFO_STATE_F, o->state);
	return 0;
}

/* MlnxExtPortInfo: a switch names the port in the modifier, a CA answers for the port the SMP
 * entered by; a port not made to answer it refuses it as an unknown attribute. */
static int do_mlnx_epi(struct fsma *fk, struct smp *s)
{
	const struct fake_node *n = &fk->nodes[s->node];
	uint32_t port = n->port0 + s->in_port;
	if (is_switch(fk, s->node)) {
		if ((s->mod & 0xff) > n->nports)
			return MAD_STATUS_INVALID_FIELD;
		port = n->port0 + (s->mod & 0xff);
	}
	struct fake_port *fp = &fk->ports[port];
	s->rec->port = port;
	if (!fp->epi_on)
		return MAD_STATUS_UNSUP_METHOD_ATTR;
	if (s->method == IB_MAD_METHOD_SET && (s->req[FSMA_EPI_STATE_CHANGE_ENABLE] & 1))
		fp->epi[FSMA_EPI_ENABLED] = s->req[FSMA_EPI_ENABLED] & fp->epi[FSMA_EPI_SUPPORTED];
	memcpy(s->resp, fp->epi, SMP_DATA_SIZE);
	return 0;
}

void fsma_set_device_id(struct fsma *fk, uint32_t node, uint16_t device_id)
{
	fk->nodes[node].device_id = device_id;
}

void fsma_port_set_mlnx_epi(struct fsma *fk, uint32_t port, uint8_t supported, uint8_t enabled)
{
	struct fake_port *fp = &fk->ports[port];
	fp->epi_on = 1;
	memset(fp->epi, 0, SMP_DATA_SIZE);
	fp->epi[FSMA_EPI_SUPPORTED] = supported;
	fp->epi[FSMA_EPI_ENABLED] = enabled;
	fp->epi[FSMA_EPI_ACTIVE] = enabled & supported ? 1 : 0;
}

uint8_t fsma_port_mlnx_epi_enabled(const struct fsma *fk, uint32_t port)
{
	return fk->ports[port].epi[FSMA_EPI_ENABLED];
}

typedef int (*attr_handler)(struct fsma *fk, struct smp *s);

static const struct {
	uint16_t attr;
	attr_handler fn;
} attr_table[] = {
	{ IB_ATTR_NODE_INFO, do_nodeinfo },
	{ IB_ATTR_NODE_DESC, do_nodedesc },
	{ IB_ATTR_PORT_INFO, do_portinfo },
	{ IB_ATTR_SWITCH_INFO, do_switchinfo },
	{ IB_ATTR_LINEARFORWTBL, do_lft },
	{ IB_ATTR_PKEY_TBL, do_pkeytable },
	{ IB_ATTR_SMINFO, do_sminfo },
	{ FSMA_ATTR_MLNX_EPI, do_mlnx_epi },
};

/* ---- the wire ---------------------------------------------------------------------------------- */

/* Walks the directed route from the SM's port: the SM's CA sends out of its own port, switches
 * forward through any port whose link is physically up, CAs never forward. Returns the target
 * node and the port it is entered by, or FSMA_ANY when the path leads nowhere. */
static uint32_t walk_dr(const struct fsma *fk, const uint8_t *mad, uint8_t *in_port)
{
	uint8_t hops = (uint8_t)mad_get_field((void *)mad, 0, IB_DRSMP_HOPCNT_F);
	uint8_t path[SMP_DR_PATH_MAX];
	mad_get_array((void *)mad, 0, IB_DRSMP_PATH_F, path);
	uint32_t node = fk->ports[fk->sm_port].node;
	uint8_t in = fk->ports[fk->sm_port].num;
	if (hops > SMP_DR_HOPS_MAX)
		return FSMA_ANY;
	for (uint32_t i = 1; i <= hops; i++) {
		const struct fake_node *n = &fk->nodes[node];
		uint8_t out = path[i];
		if (!is_switch(fk, node) && (i > 1 || out != in))
			return FSMA_ANY;
		if (out == 0 || out > n->nports)
			return FSMA_ANY;
		const struct fake_port *fp = &fk->ports[n->port0 + out];
		if (fp->peer == IBSM_NONE ||
		    mad_get_field((void *)fp->pi, 0, IB_PORT_PHYS_STATE_F) != IB_PHYS_LINKUP)
			return FSMA_ANY;
		node = fk->ports[fp->peer].node;
		in = fk->ports[fp->peer].num;
	}
	*in_port = in;
	return node;
}

/* The first fault rule acting on r, copied to *out and used once; 0 when none does. */
static int take_fault(struct fsma *fk, const struct fsma_rec *r, struct fsma_fault *out)
{
	for (guint i = 0; i < fk->faults->len; i++) {
		struct fsma_fault *f = &g_array_index(fk->faults, struct fsma_fault, i);
		if ((f->method != FSMA_ANY && f->method != r->method) ||
		    (f->attr != FSMA_ANY && f->attr != r->attr) ||
		    (f->node != FSMA_ANY && f->node != r->node) || (f->by_mod && f->mod != r->mod))
			continue;
		if (f->skip) {
			f->skip--;
			continue;
		}
		*out = *f;
		if (f->count && --f->count == 0)
			g_array_remove_index(fk->faults, i);
		return 1;
	}
	return 0;
}

/* The answer to request umad: a GetResp with status and data, or the request itself back
 * with umad status 110 when it bounced. The high 32 TID bits are rewritten, as the kernel does. */
static void queue_reply(struct fsma *fk, const uint8_t *umad, int len, int bounce, uint16_t status,
			const uint8_t *data)
{
	uint8_t *buf = g_malloc0(fk->umad_len);
	memcpy(buf, umad, (size_t)MIN(len, fk->umad_len));
	uint8_t *mad = umad_get_mad(buf);
	uint64_t tid = mad_get_field64(mad, 0, IB_MAD_TRID_F);
	mad_set_field64(mad, 0, IB_MAD_TRID_F, (tid & 0xffffffffull) | 0xfeed000000000000ull);
	if (bounce) {
		((struct ib_user_mad *)buf)->status = ETIMEDOUT;
	} else {
		mad[3] = IB_MAD_METHOD_GET_RESPONSE;
		int dr = mad[1] == IB_SMI_DIRECT_CLASS;
		mad[4] = (uint8_t)((dr ? 0x80 : 0) | ((status >> 8) & 0x7f)); /* D bit of a DR response */
		mad[5] = (uint8_t)status;
		memcpy(mad + IB_SMP_DATA_OFFS, data, SMP_DATA_SIZE);
	}
	g_queue_push_tail(&fk->replies, buf);
}

/* The attribute's handler at the target: the MAD status of the answer, or BOUNCE. */
static int handle(struct fsma *fk, struct fsma_rec *rec, uint8_t method, uint8_t *resp)
{
	struct smp s = { .method = method, .mod = rec->mod, .node = rec->node, .in_port = rec->in_port,
			 .req = rec->data, .resp = resp, .rec = rec };
	if (method != IB_MAD_METHOD_GET && method != IB_MAD_METHOD_SET)
		return MAD_STATUS_UNSUP_METHOD_ATTR;
	for (size_t i = 0; i < G_N_ELEMENTS(attr_table); i++)
		if (attr_table[i].attr == rec->attr)
			return attr_table[i].fn(fk, &s);
	return MAD_STATUS_UNSUP_METHOD_ATTR;
}

/* The M_Key check of IBA 14.2.4 at management port mport (a CA port, a switch's port 0). */
enum { MK_PASS, MK_HIDE, MK_FAIL };
static int mkey_check(struct fsma *fk, uint32_t mport, uint64_t key, uint8_t method)
{
	struct fake_port *fp = &fk->ports[mport];
	uint64_t held = mad_get_field64(fp->pi, 0, IB_PORT_MKEY_F);
	unsigned lease = mad_get_field(fp->pi, 0, IB_PORT_MKEY_LEASE_F);
	int64_t now = g_get_monotonic_time();
	if (fp->lease_until && now >= fp->lease_until) { /* the lease ran out: protection off */
		mad_set_field(fp->pi, 0, IB_PORT_MKEY_PROT_BITS_F, 0);
		fp->lease_until = 0;
	}
	if (!held || key == held) {
		fp->lease_until = 0;
		return MK_PASS;
	}
	unsigned protect = mad_get_field(fp->pi, 0, IB_PORT_MKEY_PROT_BITS_F);
	if (method == IB_MAD_METHOD_GET && protect == 0)
		return MK_PASS;
	if (method == IB_MAD_METHOD_GET && protect == 1)
		return MK_HIDE;
	fp->mkey_violations++;
	if (lease && !fp->lease_until)
		fp->lease_until = now + (int64_t)lease * 1000000;
	return MK_FAIL;
}

static void serve_request(struct fsma *fk, const uint8_t *umad, int len)
{
	const uint8_t *mad = umad_get_mad((void *)umad);
	struct fsma_rec rec = {
		.mgmt_class = mad[1], .method = mad[3],
		.attr = (uint16_t)mad_get_field((void *)mad, 0, IB_MAD_ATTRID_F),
		.mod = mad_get_field((void *)mad, 0, IB_MAD_ATTRMOD_F),
		.node = FSMA_ANY, .port = FSMA_ANY,
	};
	memcpy(rec.data, mad + IB_SMP_DATA_OFFS, SMP_DATA_SIZE);
	/* LID-routed and hybrid SMPs are not simulated: they bounce like an unroutable one */
	if (rec.mgmt_class == IB_SMI_DIRECT_CLASS &&
	    mad_get_field((void *)mad, 0, IB_DRSMP_DRSLID_F) == 0xffff &&
	    mad_get_field((void *)mad, 0, IB_DRSMP_DRDLID_F) == 0xffff) {
		rec.hops = (uint8_t)mad_get_field((void *)mad, 0, IB_DRSMP_HOPCNT_F);
		rec.node = walk_dr(fk, mad, &rec.in_port);
	}
	uint8_t resp[SMP_DATA_SIZE] = { 0 };
	int answer = BOUNCE, lost = 0;
	if (rec.node != FSMA_ANY) {
		rec.port = fk->nodes[rec.node].port0 + rec.in_port;
		/* M_Key first (SMInfo goes to the SM, not the SMA): a request failing it is dropped
		 * (a real SMA sends a Bad M_Key trap); a Get at ProtectBits 1 is answered with the
		 * M_Key hidden */
		const struct fake_node *tn = &fk->nodes[rec.node];
		uint32_t mport = is_switch(fk, rec.node) ? tn->port0 : rec.port;
		int mk = rec.attr == IB_ATTR_SMINFO ? MK_PASS :
			 mkey_check(fk, mport, mad_get_field64((void *)mad, 0, IB_MAD_MKEY_F), rec.method);
		struct fsma_fault fault = { 0 };
		enum fsma_action act = mk == MK_FAIL ? FSMA_DROP :
				       take_fault(fk, &rec, &fault) ? fault.action : 0;
		if (act == FSMA_STATUS) {
			answer = handle(fk, &rec, IB_MAD_METHOD_GET, resp); /* not applied */
			if (answer != BOUNCE)
				answer = fault.status;
		} else if (act == FSMA_STATUS_ECHO) {
			answer = fault.status;
			memcpy(resp, rec.data, SMP_DATA_SIZE);
		} else if (act != FSMA_DROP && act != FSMA_BOUNCE) {
			answer = handle(fk, &rec, rec.method, resp);
			if (mk == MK_HIDE && rec.attr == IB_ATTR_PORT_INFO)
				mad_set_field64(resp, 0, IB_PORT_MKEY_F, 0);
		}
		lost = act == FSMA_DROP || act == FSMA_LOSE_ANSWER;
	}
	rec.outcome = lost ? FSMA_DROPPED : answer == BOUNCE ? FSMA_BOUNCED : FSMA_ANSWERED;
	rec.status = answer == BOUNCE ? 0 : (uint16_t)answer;
	g_array_append_val(fk->recs, rec);
	if (!lost)
		queue_reply(fk, umad, len, answer == BOUNCE, rec.status, resp);
}

static int fsma_send(void *ctx, int mgmt_class, void *umad, int len, int timeout_ms)
{
	(void)mgmt_class; (void)timeout_ms;
	struct fsma *fk = ctx;
	uint8_t *mad = umad_get_mad(umad);
	/* the SM answering a request we injected, or the SA reporting to a subscriber */
	if ((mad[3] & MAD_METHOD_RESPONSE_BIT) || mad[1] == IB_SA_CLASS) {
		uint32_t n = len > (int)umad_size() ? (uint32_t)(len - (int)umad_size()) : 0;
		uint8_t *copy = g_malloc0(n > MAD_SIZE ? n : MAD_SIZE);
		memcpy(copy, mad, n);
		g_ptr_array_add(fk->responses, copy);
		g_array_append_val(fk->response_lens, n);
		uint16_t dlid = ntohs(umad_get_mad_addr(umad)->lid);
		g_array_append_val(fk->response_dlids, dlid);
		return 0;
	}
	serve_request(fk, umad, len);
	return 0;
}

static int fsma_recv(void *ctx, void *umad, int *len, int timeout_ms)
{
	(void)timeout_ms;
	struct fsma *fk = ctx;
	uint8_t *buf = g_queue_pop_head(&fk->replies);
	if (!buf)
		return -EAGAIN;
	memcpy(umad, buf, (size_t)fk->umad_len);
	*len = fk->umad_len;
	g_free(buf);
	return 0;
}

/* Answers are ready as soon as a request is sent; with none queued nothing will come before
 * the caller's timeout (a dropped request), so sleep it out. */
static int fsma_wait(void *ctx, int timeout_ms)
{
	struct fsma *fk = ctx;
	if (!g_queue_is_empty(&fk->replies))
		return 1;
	g_usleep((gulong)(timeout_ms < 0 ? 100 : timeout_ms) * 1000);
	return 0;
}

struct transport_io fsma_io(struct fsma *fk)
{
	struct transport_io io = { .ctx = fk, .send = fsma_send, .recv = fsma_recv, .wait = fsma_wait };
	return io;
}

/* ---- records --------------------------------------------------------------------------------- */

uint32_t fsma_nrec(const struct fsma *fk)
{
	return fk->recs->len;
}

const struct fsma_rec *fsma_rec(const struct fsma *fk, uint32_t i)
{
	g_assert_cmpuint(i, <, fk->recs->len);
	return &g_array_index(fk->recs, struct fsma_rec, i);
}

static int rec_matches(const struct fsma_rec *r, uint32_t method, uint32_t attr, uint32_t node)
{
	return (method == FSMA_ANY || r->method == method) && (attr == FSMA_ANY || r->attr == attr) &&
	       (node == FSMA_ANY || r->node == node);
}

uint32_t fsma_count(const struct fsma *fk, uint32_t from, uint32_t method, uint32_t attr,
		    uint32_t node)
{
	uint32_t n = 0;
	for (uint32_t i = from; i < fk->recs->len; i++)
		n += rec_matches(fsma_rec(fk, i), method, attr, node);
	return n;
}

uint32_t fsma_first(const struct fsma *fk, uint32_t from, uint32_t method, uint32_t attr,
		    uint32_t node)
{
	for (uint32_t i = from; i < fk->recs->len; i++)
		if (rec_matches(fsma_rec(fk, i), method, attr, node))
			return i;
	return FSMA_ANY;
}

/* ---- what the fabric holds --------------------------------------------------------------------- */

void fsma_portinfo(const struct fsma *fk, uint32_t port, uint8_t out[64])
{
	g_assert_cmpuint(port, <, fk->n_ports);
	memcpy(out, fk->ports[port].pi, SMP_DATA_SIZE);
}

uint8_t fsma_port_state(const struct fsma *fk, uint32_t port)
{
	g_assert_cmpuint(port, <, fk->n_ports);
	return state_of(fk, port);
}

uint16_t fsma_port_lid(const struct fsma *fk, uint32_t port)
{
	g_assert_cmpuint(port, <, fk->n_ports);
	return (uint16_t)mad_get_field((void *)fk->ports[port].pi, 0, IB_PORT_LID_F);
}

const uint8_t *fsma_switchinfo(const struct fsma *fk, uint32_t node)
{
	g_assert_cmpuint(node, <, fk->n_nodes);
	g_assert_true(is_switch(fk, node));
	return fk->nodes[node].si;
}

uint8_t fsma_lft_raw(const struct fsma *fk, uint32_t node, uint32_t lid)
{
	g_assert_cmpuint(node, <, fk->n_nodes);
	g_assert_true(is_switch(fk, node));
	return lid < fk->nodes[node].lft_cap ? fk->nodes[node].lft[lid] : IBSM_NO_PORT;
}

uint8_t fsma_lft_entry(const struct fsma *fk, uint32_t node, uint32_t lid)
{
	if (lid > mad_get_field((void *)fsma_switchinfo(fk, node), 0, IB_SW_LINEAR_FDB_TOP_F))
		return IBSM_NO_PORT;
	return fsma_lft_raw(fk, node, lid);
}

uint32_t fsma_pkey_cap(const struct fsma *fk, uint32_t port)
{
	g_assert_cmpuint(port, <, fk->n_ports);
	return fk->ports[port].pkey_cap;
}

uint16_t fsma_pkey(const struct fsma *fk, uint32_t port, uint32_t index)
{
	g_assert_cmpuint(index, <, fsma_pkey_cap(fk, port));
	return fk->ports[port].pkeys[index];
}

/* ---- changes behind the SM's back ------------------------------------------------------------- */

void fsma_set_port_state(struct fsma *fk, uint32_t port, uint8_t state)
{
	g_assert_cmpuint(port, <, fk->n_ports);
	set_state(fk, port, state);
}

void fsma_set_state_change(struct fsma *fk, uint32_t node, int on)
{
	g_assert_true(is_switch(fk, node));
	mad_set_field(fk->nodes[node].si, 0, IB_SW_STATE_CHANGE_F, on ? 1 : 0);
}

void fsma_link_down(struct fsma *fk, uint32_t port)
{
	g_assert_cmpuint(port, <, fk->n_ports);
	uint32_t ends[2] = { port, fk->ports[port].peer };
	for (int i = 0; i < 2; i++) {
		if (ends[i] == IBSM_NONE)
			continue;
		set_state(fk, ends[i], IBSM_STATE_DOWN);
		mad_set_field(fk->ports[ends[i]].pi, 0, IB_PORT_PHYS_STATE_F, PHYS_POLLING);
		uint32_t node = fk->ports[ends[i]].node;
		if (is_switch(fk, node))
			mad_set_field(fk->nodes[node].si, 0, IB_SW_STATE_CHANGE_F, 1);
	}
}

void fsma_reset_switch(struct fsma *fk, uint32_t node)
{
	g_assert_true(is_switch(fk, node));
	struct fake_node *n = &fk->nodes[node];
	switch_power_up(n);
	for (uint32_t pn = 0; pn <= n->nports; pn++) {
		uint32_t p = n->port0 + pn;
		port_power_up(fk, p);
		if (pn && linked(fk, p))
			link_retrain(fk, p);
	}
}

/* ---- faults, the other SM, requests to the SM ------------------------------------------------ */

void fsma_add_fault(struct fsma *fk, const struct fsma_fault *fault)
{
	g_array_append_val(fk->faults, *fault);
}

void fsma_clear_faults(struct fsma *fk)
{
	g_array_set_size(fk->faults, 0);
}

void fsma_set_other_sm(struct fsma *fk, const struct fsma_sm *sm)
{
	uint32_t old = fk->other.port;
	fk->other = *sm;
	uint32_t ports[2] = { old, sm->port };
	for (int i = 0; i < 2; i++) {
		uint32_t p = ports[i];
		if (p == FSMA_ANY || p == fk->sm_port)
			continue;
		g_assert_cmpuint(p, <, fk->n_ports);
		g_assert_false(is_switch(fk, fk->ports[p].node));
		uint32_t cap = mad_get_field(fk->ports[p].pi, 0, IB_PORT_CAPMASK_F) & ~IB_CAP_IS_SM;
		if (p == sm->port)
			cap |= IB_CAP_IS_SM;
		mad_set_field(fk->ports[p].pi, 0, IB_PORT_CAPMASK_F, cap);
	}
}

void fsma_inject(struct fsma *fk, uint8_t mgmt_class, uint8_t method, uint16_t attr, uint32_t mod,
		 const uint8_t *data, uint64_t tid)
{
	uint8_t *buf = g_malloc0(fk->umad_len);
	uint8_t *mad = umad_get_mad(buf);
	mad[0] = 1; /* base version */
	mad[1] = mgmt_class;
	mad[2] = mgmt_class == IB_SA_CLASS ? 2 : 1; /* class version */
	mad[3] = method;
	mad_set_field64(mad, 0, IB_MAD_TRID_F, tid);
	mad_set_field(mad, 0, IB_MAD_ATTRID_F, attr);
	mad_set_field(mad, 0, IB_MAD_ATTRMOD_F, mod);
	if (mgmt_class == IB_SMI_DIRECT_CLASS) {
		mad_set_field(mad, 0, IB_DRSMP_DRSLID_F, 0xffff);
		mad_set_field(mad, 0, IB_DRSMP_DRDLID_F, 0xffff);
	}
	if (data)
		memcpy(mad + IB_SMP_DATA_OFFS, data, SMP_DATA_SIZE);
	g_queue_push_tail(&fk->replies, buf);
}

void fsma_inject_mad(struct fsma *fk, const uint8_t *mad256)
{
	fsma_inject_mad_from(fk, mad256, 0, 0);
}

void fsma_inject_mad_from(struct fsma *fk, const uint8_t *mad256, uint16_t slid, uint32_t qpn)
{
	uint8_t *buf = g_malloc0(fk->umad_len);
	memcpy(umad_get_mad(buf), mad256, MAD_SIZE);
	umad_get_mad_addr(buf)->lid = htons(slid);
	umad_get_mad_addr(buf)->qpn = htonl(qpn);
	g_queue_push_tail(&fk->replies, buf);
}

uint16_t fsma_response_dlid(const struct fsma *fk, uint32_t i)
{
	g_assert_cmpuint(i, <, fk->response_dlids->len);
	return g_array_index(fk->response_dlids, uint16_t, i);
}

uint32_t fsma_response_len(const struct fsma *fk, uint32_t i)
{
	g_assert_cmpuint(i, <, fk->response_lens->len);
	return g_array_index(fk->response_lens, uint32_t, i);
}

uint32_t fsma_nresponses(const struct fsma *fk)
{
	return fk->responses->len;
}

const uint8_t *fsma_response(const struct fsma *fk, uint32_t i)
{
	g_assert_cmpuint(i, <, fk->responses->len);
	return g_ptr_array_index(fk->responses, i);
}

/* ---- a test bed -------------------------------------------------------------------------------- */

void fsma_bed_init(struct fsma_bed *b, struct fabric *shape, uint32_t sm_port, int timeout_ms)
{
	memset(b, 0, sizeof(*b));
	b->shape = shape;
	b->fk = fsma_new(shape, sm_port);
	struct transport_io io = fsma_io(b->fk);
	struct transport_cfg cfg = { .window = 64, .timeout_ms = timeout_ms, .retries = 1 };
	b->t = transport_new(&io, &cfg);
	b->prog = programmer_new(b->t, &b->stop);
	options_defaults(&b->o);
	phase_log_init(&b->pl, b->t, 0);
}

void fsma_bed_clear(struct fsma_bed *b)
{
	routing_result_unref(b->r);
	fabric_unref(b->f);
	programmer_free(b->prog);
	transport_free(b->t);
	fsma_free(b->fk);
	fabric_unref(b->shape);
	options_free(&b->o);
	memset(b, 0, sizeof(*b));
}

void fsma_bed_discover(struct fsma_bed *b)
{
	struct discovery_stats st;
	fsma_bed_discover_lossy(b, &st);
	g_assert_cmpuint(st.failures, ==, 0);
}

void fsma_bed_discover_lossy(struct fsma_bed *b, struct discovery_stats *stats)
{
	GError *err = NULL;
	struct discovery_stats st;
	struct fabric *f = discover_fabric(b->t, &b->stop, ++b->generation, b->f, 0, &st, &err);
	*stats = st;
	g_assert_no_error(err);
	g_assert_nonnull(f);
	g_assert_cmpuint(f->pub.n_nodes, ==, b->shape->pub.n_nodes);
	g_assert_cmpuint(f->pub.n_ports, ==, b->shape->pub.n_ports);
	g_assert_cmpuint(fabric_topology_signature(f), ==, fabric_topology_signature(b->shape));
	for (uint32_t i = 0; i < f->pub.n_nodes; i++) { /* the fake's ids are the generation's */
		g_assert_cmphex(f->nodes[i].guid, ==, b->shape->nodes[i].guid);
		g_assert_cmpuint(f->nodes[i].port0, ==, b->shape->nodes[i].port0);
	}
	struct lid_opts lo = { .lmc = b->lmc };
	g_assert_cmpint(lid_assign(f, &lo, &err), ==, 0);
	g_assert_no_error(err);
	routing_result_unref(b->r);
	fabric_unref(b->f);
	b->f = f;
	b->r = fsma_shortest_routes(f);
}

int fsma_bed_program(struct fsma_bed *b, const struct part_policy *partitions, int first_master,
		     struct program_report *rep)
{
	phase_log_reset(&b->pl);
	return program_fabric(b->prog, b->f, b->r, &b->o, partitions, &b->pl, first_master, rep);
}

struct routing_result *fsma_shortest_routes(struct fabric *f)
{
	struct routing_result *r = routing_result_new(f);
	const struct ibsm_fabric *pf = &f->pub;
	uint32_t S = pf->n_switches;
	uint8_t *hops = fx_switch_hops_all(pf);
	for (uint32_t lid = 1; lid <= pf->max_lid && lid < r->stride; lid++) {
		uint32_t dst = pf->lid_port[lid];
		uint32_t dsw = dst == IBSM_NONE ? IBSM_NONE : ibsm_port_switch(pf, dst);
		if (dsw == IBSM_NONE)
			continue;
		for (uint32_t s = 0; s < S; s++) {
			const struct ibsm_node *n = &f->nodes[f->switches[s].node];
			uint8_t out = IBSM_NO_PORT, h = hops[(size_t)s * S + dsw];
			if (s == dsw)
				out = f->nodes[f->ports[dst].node].type == IBSM_SWITCH ? 0 :
				      f->ports[f->ports[dst].peer].num;
			for (uint32_t pn = 1; s != dsw && h != 0xFF && pn <= n->nports; pn++) {
				uint32_t peer = f->ports[n->port0 + pn].peer;
				if (peer == IBSM_NONE || f->nodes[f->ports[peer].node].type != IBSM_SWITCH)
					continue;
				uint32_t t = f->nodes[f->ports[peer].node].sw;
				if (hops[(size_t)t * S + dsw] + 1 == h) {
					out = (uint8_t)pn;
					break;
				}
			}
			r->lft[(size_t)s * r->stride + lid] = out;
		}
	}
	g_free(hops);
	return r;
}

void fsma_port_set_mkey(struct fsma *fk, uint32_t port, uint64_t key, uint8_t protect, uint16_t lease)
{
	uint8_t *pi = fk->ports[port].pi;
	mad_set_field64(pi, 0, IB_PORT_MKEY_F, key);
	mad_set_field(pi, 0, IB_PORT_MKEY_PROT_BITS_F, protect);
	mad_set_field(pi, 0, IB_PORT_MKEY_LEASE_F, lease);
	fk->ports[port].lease_until = 0;
}

void fsma_port_mkey(const struct fsma *fk, uint32_t port, uint64_t *key, uint8_t *protect,
		    uint16_t *lease, uint32_t *violations)
{
	const uint8_t *pi = fk->ports[port].pi;
	*key = mad_get_field64((void *)pi, 0, IB_PORT_MKEY_F);
	*protect = (uint8_t)mad_get_field((void *)pi, 0, IB_PORT_MKEY_PROT_BITS_F);
	*lease = (uint16_t)mad_get_field((void *)pi, 0, IB_PORT_MKEY_LEASE_F);
	*violations = fk->ports[port].mkey_violations;
}

void fsma_port_disable(struct fsma *fk, uint32_t port)
{
	g_assert_cmpuint(port, <, fk->n_ports);
	fsma_link_down(fk, port);
	mad_set_field(fk->ports[port].pi, 0, IB_PORT_PHYS_STATE_F, PHYS_DISABLED);
}
