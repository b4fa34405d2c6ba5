/* SPDX-License-Identifier: BSD-2-Clause */
/* portinfo.c - the PortInfo writes of a programming pass and their replies. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric/dr.h"
#include "fabric/slice.h"
#include "program/mkey_write.h"
#include "program/portinfo.h"
#include "routing/result.h"

#define CAP_EXT_SPEEDS 0x4000u  /* PortInfo:CapabilityMask IsExtendedSpeedsSupported */
#define SPEED_QDR 0x4           /* LinkSpeedEnabled: 10.0 Gb/s */
#define AM_EXT_SPEEDS 0x80000000u /* AttributeModifier bit 31: SMSupportsExtendedSpeeds */

/* cookie kinds; a read-back's sub is the Set's status (low byte) << 8 | the state it wanted;
 * a Set's sub is PI_SETS_MKEY when it writes the M_Key fields we want */
enum { PI_SET = 0, PI_READBACK = 1 };
#define PI_SETS_MKEY 1

static void on_portinfo(struct transport *t, const struct smp_req *r, int status,
			const uint8_t *data, void *ctx);

/* A Set answered with an error status: its data is not the port's PortInfo (ibsim echoes the
 * request), so the port is read back; the read decides. A retried Set whose first answer was
 * lost gets 0x1C (invalid state transition) with the port already where we asked. */
static void read_back(struct pass *g, uint32_t port, int status, uint8_t want)
{
	struct smp_req r;
	const struct ibsm_port *p = &g->f->ports[port];
	if (fabric_smp_to_port(&r, g->f, port, IB_MAD_METHOD_GET, IB_ATTR_PORT_INFO, p->num,
			       on_portinfo, g, smp_cookie(PI_READBACK, port, (uint16_t)((status & 0xff) << 8 | want))) < 0)
		return;
	transport_submit(g->t, &r);
}

static void on_portinfo(struct transport *t, const struct smp_req *r, int status,
			const uint8_t *data, void *ctx)
{
	(void)t;
	struct pass *g = ctx;
	uint32_t port = smp_cookie_id(r->cookie);
	const struct ibsm_node *n = &g->f->nodes[g->f->ports[port].node];
	char why[64];
	if (status > 0 && data && smp_cookie_kind(r->cookie) == PI_SET) {
		read_back(g, port, status, (uint8_t)mad_get_field((void *)r->data, 0, IB_PORT_STATE_F));
		return;
	}
	if (status < 0 && smp_cookie_kind(r->cookie) == PI_SET &&
	    smp_cookie_sub(r->cookie) == PI_SETS_MKEY && mkey_port_recover(g, port))
		return; /* the port may hold a key we did not present */
	if (status != 0) {
		smp_status_text(status, why, sizeof(why));
		g->failed++;
		g->failures++;
		LOG_E("PIN-0001", "PortInfo %s port %u of node 0x%016" PRIx64 " (%s) failed: %s",
		      smp_cookie_kind(r->cookie) == PI_SET ? "Set" : "read-back after a refused Set",
		      r->mod & 0xff, n->guid, n->desc, why);
		return;
	}
	memcpy(g->f->px[port].portinfo, data, SMP_DATA_SIZE);
	if (g->pi_answered)
		g->pi_answered[port] = 1;
	if (smp_cookie_kind(r->cookie) == PI_SET && smp_cookie_sub(r->cookie) == PI_SETS_MKEY)
		mkey_port_written(g, port, r->data, data);
	uint8_t now = (uint8_t)mad_get_field((void *)data, 0, IB_PORT_STATE_F);
	g->state[port] = now;
	uint8_t want = (uint8_t)smp_cookie_sub(r->cookie);
	if (smp_cookie_kind(r->cookie) == PI_READBACK && (!want || want != now)) {
		g->failed++;
		LOG_E("PIN-0001", "PortInfo Set port %u of node 0x%016" PRIx64 " (%s) refused (status "
		      "0x%02x); read back: state %u%s", r->mod & 0xff, n->guid, n->desc,
		      smp_cookie_sub(r->cookie) >> 8, now, want ? ", not the one asked for" : "");
	}
}

/* am_extra: AM_EXT_SPEEDS or 0, or'ed into the attribute modifier (the port number) */
static void submit_set_am(struct pass *g, uint32_t port, const uint8_t *pi, uint16_t sub, uint32_t am_extra)
{
	struct smp_req r;
	const struct ibsm_port *p = &g->f->ports[port];
	if (fabric_smp_to_port(&r, g->f, port, IB_MAD_METHOD_SET, IB_ATTR_PORT_INFO, p->num | am_extra,
			       on_portinfo, g, smp_cookie(PI_SET, port, sub)) < 0)
		return;
	memcpy(r.data, pi, SMP_DATA_SIZE);
	transport_submit(g->t, &r);
	g->sets++;
}

static void submit_set(struct pass *g, uint32_t port, const uint8_t *pi)
{
	submit_set_am(g, port, pi, 0, 0);
}

/* Read-modify-write base: the last PortInfo with no state/phys-state change requested. */
static void pi_base(const struct pass *g, uint32_t port, uint8_t *pi)
{
	memcpy(pi, g->f->px[port].portinfo, SMP_DATA_SIZE);
	mad_set_field(pi, 0, IB_PORT_STATE_F, 0);
	mad_set_field(pi, 0, IB_PORT_PHYS_STATE_F, 0);
	mad_set_field(pi, 0, IB_PORT_LINK_DOWN_DEF_F, 0);
}

static uint8_t min_u8(uint8_t a, uint8_t b) { return a < b ? a : b; }

/* OperVLs and NeighborMTU a link can use: min of both ends (and the configured max VLs). */
static void link_params(const struct pass *g, uint32_t port, uint8_t *mtu, uint8_t *vls)
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
	if (g->o->max_op_vls)
		*vls = min_u8(*vls, g->o->max_op_vls);
	if (!*vls)
		*vls = 1;
}

static void gid_prefix_bytes(uint64_t prefix, uint8_t out[8])
{
	for (int i = 0; i < 8; i++)
		out[i] = (uint8_t)(prefix >> (56 - 8 * i));
}

/* The CapabilityMask that speaks for port: its own, or switch port 0's for a switch port. */
static uint32_t port_capmask(const struct fabric *f, uint32_t port)
{
	const struct ibsm_node *n = &f->nodes[f->ports[port].node];
	uint32_t at = n->type == IBSM_SWITCH ? n->port0 : port;
	return f->px[at].have_portinfo ? mad_get_field((void *)f->px[at].portinfo, 0, IB_PORT_CAPMASK_F) : 0;
}

/* Extended speeds on port and its peer: both say so and support some (a port that claims the
 * capability with LinkSpeedExtSupported 0, as ibsim's, has none to enable). */
static int ext_speeds(const struct fabric *f, uint32_t port)
{
	uint32_t peer = f->ports[port].peer;
	if (peer == IBSM_NONE || !f->px[peer].have_portinfo)
		return 0;
	return (port_capmask(f, port) & CAP_EXT_SPEEDS) && (port_capmask(f, peer) & CAP_EXT_SPEEDS) &&
	       mad_get_field((void *)f->px[port].portinfo, 0, IB_PORT_LINK_SPEED_EXT_SUPPORTED_F) &&
	       mad_get_field((void *)f->px[peer].portinfo, 0, IB_PORT_LINK_SPEED_EXT_SUPPORTED_F);
}

uint32_t portinfo_link_settings(const struct fabric *f, const struct sm_options *o, uint32_t port, uint8_t *pi)
{
	const uint8_t *old = f->px[port].portinfo;
	uint32_t am = 0;
	mad_set_field(pi, 0, IB_PORT_LOCAL_PHYS_ERR_F, o->local_phy_errors_threshold);
	mad_set_field(pi, 0, IB_PORT_OVERRUN_ERR_F, o->overrun_errors_threshold);
	uint32_t lse = mad_get_field((void *)old, 0, IB_PORT_LINK_SPEED_ENABLED_F);
	if (o->force_link_speed &&
	    (o->force_link_speed != 15 || lse != mad_get_field((void *)old, 0, IB_PORT_LINK_SPEED_SUPPORTED_F))) {
		mad_set_field(pi, 0, IB_PORT_LINK_SPEED_ENABLED_F, o->force_link_speed);
		if (((o->force_link_speed ^ lse) & SPEED_QDR) && (port_capmask(f, port) & CAP_EXT_SPEEDS))
			am = AM_EXT_SPEEDS;
	}
	if (o->force_link_speed_ext && ext_speeds(f, port) &&
	    (o->force_link_speed_ext != 31 || mad_get_field((void *)old, 0, IB_PORT_LINK_SPEED_EXT_ENABLED_F) !=
	     mad_get_field((void *)old, 0, IB_PORT_LINK_SPEED_EXT_SUPPORTED_F)))
		mad_set_field(pi, 0, IB_PORT_LINK_SPEED_EXT_ENABLED_F, o->force_link_speed_ext);
	/* 255 (set to supported) on CA and router ports only, any other value on every port: as
	 * OpenSM 3.3.23 writes it (tests/sim/70-wire-parity.t) */
	if (o->force_link_width &&
	    (o->force_link_width != 255 ||
	     (f->nodes[f->ports[port].node].type != IBSM_SWITCH &&
	      mad_get_field((void *)old, 0, IB_PORT_LINK_WIDTH_ENABLED_F) !=
	      mad_get_field((void *)old, 0, IB_PORT_LINK_WIDTH_SUPPORTED_F))))
		mad_set_field(pi, 0, IB_PORT_LINK_WIDTH_ENABLED_F, o->force_link_width);
	return am;
}

/* enf_written: 1 + the value remembered for port and kind (0: none); and remembering one. */
static int written_get(const struct pass *g, uint32_t port, enum port_written_kind kind)
{
	const struct ibsm_port *p = &g->f->ports[port];
	struct port_written k = { g->f->nodes[p->node].guid, p->num, (uint8_t)kind };
	return GPOINTER_TO_INT(g_hash_table_lookup(g->enf_written, &k));
}

static void written_put(struct pass *g, uint32_t port, enum port_written_kind kind, int value)
{
	const struct ibsm_port *p = &g->f->ports[port];
	struct port_written *k = g_new(struct port_written, 1);
	*k = (struct port_written){ g->f->nodes[p->node].guid, p->num, (uint8_t)kind };
	g_hash_table_replace(g->enf_written, k, GINT_TO_POINTER(value + 1));
}

/* MasterSMSL of an end port: sm_sl, or the SL the routing engine gives the path from the
 * port's LID to the SM's (torus-2QoS: the SL that path needs to be deadlock-free). Before the
 * routes are known (r NULL, program_before_routes()): the SL last written to the port, else
 * sm_sl, what most engines give (their path_sl returns the hint); portinfo_end_ports_smsl()
 * mends the ports the routes say otherwise of. */
static uint8_t master_smsl(const struct pass *g, uint32_t port, uint16_t sm_lid)
{
	uint16_t lid = g->f->ports[port].lid;
	if (!lid || !sm_lid)
		return g->o->sm_sl;
	if (g->r)
		return (uint8_t)(routing_path_sl(g->r, g->o->sm_sl, lid, sm_lid) & 0xf);
	if (g->enf_written) {
		int written = written_get(g, port, WRITTEN_SMSL) - 1;
		if (written >= 0)
			return (uint8_t)written;
	}
	return g->o->sm_sl;
}

/* enf_written's WRITTEN_SMSL: the MasterSMSL last written, so that a port that does not keep
 * it (ibsim, the unit tests' fake) is not written at every sweep for it */
static int smsl_differs(const struct pass *g, uint32_t port, uint8_t smsl)
{
	if (mad_get_field((void *)g->f->px[port].portinfo, 0, IB_PORT_SMSL_F) == smsl)
		return 0;
	if (!g->enf_written)
		return 1;
	return written_get(g, port, WRITTEN_SMSL) - 1 != smsl;
}

static void smsl_remember(struct pass *g, uint32_t port, uint8_t smsl)
{
	if (g->enf_written)
		written_put(g, port, WRITTEN_SMSL, smsl);
}

int portinfo_end_port(struct pass *g, uint32_t port, uint16_t sm_lid)
{
	const struct ibsm_port *p = &g->f->ports[port];
	const uint8_t *old = g->f->px[port].portinfo;
	uint8_t pi[SMP_DATA_SIZE], prefix[8], old_prefix[8];
	pi_base(g, port, pi);
	mad_set_field(pi, 0, IB_PORT_LID_F, p->lid);
	mad_set_field(pi, 0, IB_PORT_SMLID_F, sm_lid);
	mad_set_field(pi, 0, IB_PORT_LMC_F, p->lmc);
	gid_prefix_bytes(g->o->subnet_prefix, prefix);
	mad_set_array(pi, 0, IB_PORT_GID_PREFIX_F, prefix);
	mad_set_field(pi, 0, IB_PORT_SUBN_TIMEOUT_F, g->o->subnet_timeout);
	uint8_t smsl = master_smsl(g, port, sm_lid);
	if (!g->r && g->smsl_guess)
		g->smsl_guess[port] = smsl;
	mad_set_field(pi, 0, IB_PORT_SMSL_F, smsl);
	int linked_ca = g->f->nodes[p->node].type != IBSM_SWITCH && p->peer != IBSM_NONE;
	int ca_in_init = linked_ca && p->state == IBSM_STATE_INIT;
	int bounce = 0;
	uint32_t am = 0;
	if (linked_ca) {
		uint8_t mtu, vls;
		link_params(g, port, &mtu, &vls);
		mad_set_field(pi, 0, IB_PORT_NEIGHBOR_MTU_F, mtu);
		mad_set_field(pi, 0, IB_PORT_OPER_VLS_F, vls);
		am = portinfo_link_settings(g->f, g->o, port, pi);
		uint8_t old_mtu = (uint8_t)mad_get_field((void *)old, 0, IB_PORT_NEIGHBOR_MTU_F);
		uint8_t old_vls = (uint8_t)mad_get_field((void *)old, 0, IB_PORT_OPER_VLS_F);
		/* IBA 14.2.5.6: OperVLs (and NeighborMTU) take effect in INIT only; a port past it
		 * with others goes down and comes back to INIT, as OpenSM does (osm_lid_mgr.c) */
		if (!ca_in_init && (p->state == IBSM_STATE_ARMED || p->state == IBSM_STATE_ACTIVE) &&
		    (old_mtu != mtu || old_vls != vls)) {
			bounce = 1;
			mad_set_field(pi, 0, IB_PORT_STATE_F, IBSM_STATE_DOWN);
			LOG_I("PIN-0003", "port %u of node 0x%016" PRIx64 " (%s) is %s with OperVLs %u and "
			      "NeighborMTU %u (wanted %u and %u): its link is bounced (down, back in INIT) for "
			      "them to take effect", p->num, g->f->nodes[p->node].guid, g->f->nodes[p->node].desc,
			      p->state == IBSM_STATE_ACTIVE ? "ACTIVE" : "ARMED", old_vls, old_mtu, vls, mtu);
			g->bounced++;
		}
	}
	int mkey_changed = mkey_port_fields(g, port, pi);
	/* the first sweep as master, and a CA port come back (INIT again: its link or the node was
	 * down, so its multicast memberships were dropped): ask its clients to register again */
	int rereg = (g->first_master || ca_in_init) && !g->o->no_clients_rereg &&
		    (mad_get_field(pi, 0, IB_PORT_CAPMASK_F) & IB_CAP_CLIENT_REREG);
	if (rereg)
		mad_set_field(pi, 0, IB_PORT_CLIENT_REREG_F, 1);
	mad_get_array((void *)old, 0, IB_PORT_GID_PREFIX_F, old_prefix);
	int changed = mad_get_field((void *)old, 0, IB_PORT_LID_F) != p->lid ||
		      mad_get_field((void *)old, 0, IB_PORT_SMLID_F) != sm_lid ||
		      mad_get_field((void *)old, 0, IB_PORT_LMC_F) != p->lmc ||
		      memcmp(old_prefix, prefix, sizeof(prefix)) || ca_in_init || rereg || mkey_changed ||
		      smsl_differs(g, port, smsl) || bounce;
	if (!changed)
		return 0;
	submit_set_am(g, port, pi, PI_SETS_MKEY, am);
	smsl_remember(g, port, smsl);
	return 1;
}

uint32_t portinfo_end_ports_smsl(struct pass *g, uint16_t sm_lid)
{
	uint32_t n = 0;
	const struct fabric *f = g->f;
	for (uint32_t p = 0; g->smsl_guess && p < f->pub.n_ports; p++) {
		if (g->smsl_guess[p] == IBSM_NO_PORT)
			continue; /* not written before the routes */
		uint8_t smsl = master_smsl(g, p, sm_lid);
		if (smsl != g->smsl_guess[p] && smsl_differs(g, p, smsl))
			n += (uint32_t)portinfo_end_port(g, p, sm_lid);
	}
	return n;
}

/* a switch port facing an end port (a CA or router port): where partitions are enforced */
static int faces_end_port(const struct fabric *f, uint32_t port)
{
	const struct ibsm_port *p = &f->ports[port];
	return p->num && f->nodes[p->node].type == IBSM_SWITCH && p->peer != IBSM_NONE &&
	       f->nodes[f->ports[p->peer].node].type != IBSM_SWITCH;
}

void portinfo_enforcement_bits(const struct fabric *f, uint32_t port, int enforce, uint8_t *pi)
{
	if (!faces_end_port(f, port))
		return;
	mad_set_field(pi, 0, IB_PORT_PART_EN_INB_F, (enforce & PART_ENFORCE_IN) != 0);
	mad_set_field(pi, 0, IB_PORT_PART_EN_OUTB_F, (enforce & PART_ENFORCE_OUT) != 0);
}

/* enf_written's WRITTEN_ENFORCEMENT: the bits last written to a switch port */
static void enf_remember(struct pass *g, uint32_t port)
{
	if (g->enf_written && faces_end_port(g->f, port))
		written_put(g, port, WRITTEN_ENFORCEMENT, g->enforce_pkeys);
}

/* A linked port past INIT: its enforcement bits written again when this SM wrote others (a
 * SIGHUP changed part_enforce), or, with nothing written yet, when the port holds bits that are
 * not the ones asked (another SM's: OpenSM's other mode, or enforcement to clear). A port that
 * shows none while some are asked is left for its next INIT: a port that does not keep them (as
 * under ibsim) looks the same, and a restart must not rewrite a fabric that is up. */
static int switch_port_enforcement(struct pass *g, uint32_t port)
{
	if (!faces_end_port(g->f, port))
		return 0;
	const uint8_t *cur = g->f->px[port].portinfo;
	int want = g->enforce_pkeys;
	int have = (mad_get_field((void *)cur, 0, IB_PORT_PART_EN_INB_F) ? PART_ENFORCE_IN : 0) |
		   (mad_get_field((void *)cur, 0, IB_PORT_PART_EN_OUTB_F) ? PART_ENFORCE_OUT : 0);
	if (have == want) /* the common case: no key built, nothing looked up */
		return 0;
	int written = g->enf_written ? written_get(g, port, WRITTEN_ENFORCEMENT) - 1 : -1;
	if (written >= 0 ? written == want : have == 0)
		return 0;
	uint8_t pi[SMP_DATA_SIZE];
	pi_base(g, port, pi);
	portinfo_enforcement_bits(g->f, port, want, pi);
	submit_set(g, port, pi);
	enf_remember(g, port);
	return 1;
}

/* A field the Set of a linked switch port writes differs from what the port holds: written
 * again on a port past INIT too (a fabric another SM left: OperVLs at VL0, HOQLife at its reset
 * value). Thresholds and link speed and width only ride along: a device that does not keep
 * them (ibsim) would otherwise be written at every sweep and restart. */
static int switch_port_differs(const uint8_t *old, const uint8_t *pi)
{
	static const int fields[] = { IB_PORT_NEIGHBOR_MTU_F, IB_PORT_OPER_VLS_F, IB_PORT_HOQ_LIFE_F,
				      IB_PORT_VL_STALL_COUNT_F };
	for (unsigned i = 0; i < G_N_ELEMENTS(fields); i++)
		if (mad_get_field((void *)old, 0, fields[i]) != mad_get_field((void *)pi, 0, fields[i]))
			return 1;
	return 0;
}

int portinfo_switch_port(struct pass *g, uint32_t port)
{
	const struct ibsm_port *p = &g->f->ports[port];
	if (p->peer == IBSM_NONE)
		return 0;
	uint8_t pi[SMP_DATA_SIZE], mtu, vls;
	pi_base(g, port, pi);
	link_params(g, port, &mtu, &vls);
	mad_set_field(pi, 0, IB_PORT_NEIGHBOR_MTU_F, mtu);
	mad_set_field(pi, 0, IB_PORT_OPER_VLS_F, vls);
	int to_ca = g->f->nodes[g->f->ports[p->peer].node].type != IBSM_SWITCH;
	mad_set_field(pi, 0, IB_PORT_HOQ_LIFE_F, to_ca ? g->o->leaf_hoq_life : g->o->hoq_life);
	mad_set_field(pi, 0, IB_PORT_VL_STALL_COUNT_F, to_ca ? g->o->leaf_vl_stall_count : g->o->vl_stall_count);
	uint32_t am = portinfo_link_settings(g->f, g->o, port, pi);
	if (p->state != IBSM_STATE_INIT) {
		if (!switch_port_differs(g->f->px[port].portinfo, pi))
			return switch_port_enforcement(g, port);
		if (g->reasserted++ < 10)
			LOG_I("PIN-0004", "port %u of switch 0x%016" PRIx64 " (%s) is up with OperVLs %u, "
			      "NeighborMTU %u, HOQLife %u, VLStallCount %u: written again as configured",
			      p->num, g->f->nodes[p->node].guid, g->f->nodes[p->node].desc,
			      mad_get_field(g->f->px[port].portinfo, 0, IB_PORT_OPER_VLS_F),
			      mad_get_field(g->f->px[port].portinfo, 0, IB_PORT_NEIGHBOR_MTU_F),
			      mad_get_field(g->f->px[port].portinfo, 0, IB_PORT_HOQ_LIFE_F),
			      mad_get_field(g->f->px[port].portinfo, 0, IB_PORT_VL_STALL_COUNT_F));
	}
	portinfo_enforcement_bits(g->f, port, g->enforce_pkeys, pi);
	submit_set_am(g, port, pi, 0, am);
	enf_remember(g, port);
	return 1;
}

uint32_t portinfo_enable_disabled(struct pass *g)
{
	uint32_t n = 0;
	for (uint32_t s = 0; s < g->f->pub.n_switches; s++) {
		const struct ibsm_node *node = &g->f->nodes[g->f->switches[s].node];
		for (uint32_t pn = 1; pn <= node->nports; pn++) {
			uint32_t port = node->port0 + pn;
			if (!g->f->px[port].have_portinfo || g->f->px[port].phys_state != IB_PHYS_DISABLED)
				continue;
			LOG_I("PIN-0002", "port %u of switch 0x%016" PRIx64 " (%s) was disabled by someone "
			      "else (with M_Key protection only the SM may): enabled again", pn, node->guid,
			      node->desc);
			uint8_t pi[SMP_DATA_SIZE];
			pi_base(g, port, pi);
			mad_set_field(pi, 0, IB_PORT_PHYS_STATE_F, IB_PHYS_POLLING);
			submit_set(g, port, pi);
			n++;
		}
	}
	return n;
}

int portinfo_linked(const struct fabric *f, uint32_t port)
{
	const struct ibsm_port *p = &f->ports[port];
	return p->num != 0 && p->peer != IBSM_NONE && (p->flags & IBSM_PORT_PRESENT) &&
	       f->px[port].have_portinfo;
}

uint32_t portinfo_step_state(struct pass *g, uint8_t from, uint8_t to, int need_peer)
{
	uint32_t n = 0;
	struct slicer sl; /* answers taken as the loop goes: a peer's state may move on meanwhile */
	slicer_init(&sl, g->t, g->stop);
	for (uint32_t port = 0; port < g->f->pub.n_ports; port++) {
		if (!portinfo_linked(g->f, port) || g->state[port] != from)
			continue;
		slicer_check(&sl);
		uint32_t peer = g->f->ports[port].peer;
		if (need_peer && g->state[peer] != from && g->state[peer] != to)
			continue;
		if (!g->f->px[peer].have_portinfo)
			continue;
		uint8_t pi[SMP_DATA_SIZE];
		pi_base(g, port, pi);
		mad_set_field(pi, 0, IB_PORT_STATE_F, to);
		submit_set(g, port, pi);
		n++;
	}
	return n;
}

int portinfo_vl_high_limit(struct pass *g, uint32_t port, uint8_t limit)
{
	if (!g->f->px[port].have_portinfo)
		return 0;
	uint8_t pi[SMP_DATA_SIZE];
	pi_base(g, port, pi);
	mad_set_field(pi, 0, IB_PORT_VL_HIGH_LIMIT_F, limit);
	submit_set(g, port, pi);
	return 1;
}
