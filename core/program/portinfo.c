/* SPDX-License-Identifier: BSD-2-Clause */
/* portinfo.c - the PortInfo writes of a programming pass and their replies. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric/dr.h"
#include "program/mkey_write.h"
#include "program/portinfo.h"

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
		      r->mod, n->guid, n->desc, why);
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
		      "0x%02x); read back: state %u%s", r->mod, n->guid, n->desc,
		      smp_cookie_sub(r->cookie) >> 8, now, want ? ", not the one asked for" : "");
	}
}

static void submit_set_sub(struct pass *g, uint32_t port, const uint8_t *pi, uint16_t sub)
{
	struct smp_req r;
	const struct ibsm_port *p = &g->f->ports[port];
	if (fabric_smp_to_port(&r, g->f, port, IB_MAD_METHOD_SET, IB_ATTR_PORT_INFO, p->num,
			       on_portinfo, g, smp_cookie(PI_SET, port, sub)) < 0)
		return;
	memcpy(r.data, pi, SMP_DATA_SIZE);
	transport_submit(g->t, &r);
	g->sets++;
}

static void submit_set(struct pass *g, uint32_t port, const uint8_t *pi)
{
	submit_set_sub(g, port, pi, 0);
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
	int ca_in_init = g->f->nodes[p->node].type != IBSM_SWITCH && p->state == IBSM_STATE_INIT;
	if (ca_in_init) {
		uint8_t mtu, vls;
		link_params(g, port, &mtu, &vls);
		mad_set_field(pi, 0, IB_PORT_NEIGHBOR_MTU_F, mtu);
		mad_set_field(pi, 0, IB_PORT_OPER_VLS_F, vls);
	}
	int mkey_changed = mkey_port_fields(g, port, pi);
	/* the first sweep as master, and a CA port come back (INIT again: its link or the node was
	 * down, so its multicast memberships were dropped): ask its clients to register again */
	int rereg = (g->first_master || ca_in_init) &&
		    (mad_get_field(pi, 0, IB_PORT_CAPMASK_F) & IB_CAP_CLIENT_REREG);
	if (rereg)
		mad_set_field(pi, 0, IB_PORT_CLIENT_REREG_F, 1);
	mad_get_array((void *)old, 0, IB_PORT_GID_PREFIX_F, old_prefix);
	int changed = mad_get_field((void *)old, 0, IB_PORT_LID_F) != p->lid ||
		      mad_get_field((void *)old, 0, IB_PORT_SMLID_F) != sm_lid ||
		      mad_get_field((void *)old, 0, IB_PORT_LMC_F) != p->lmc ||
		      memcmp(old_prefix, prefix, sizeof(prefix)) || ca_in_init || rereg || mkey_changed;
	if (!changed)
		return 0;
	submit_set_sub(g, port, pi, PI_SETS_MKEY);
	return 1;
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

/* enf_written: "GUID:port" of a switch port -> 1 + the enforcement bits last written to it */
static char *enf_key(const struct fabric *f, uint32_t port)
{
	return g_strdup_printf("%016" PRIx64 ":%u", f->nodes[f->ports[port].node].guid, f->ports[port].num);
}

static void enf_remember(struct pass *g, uint32_t port)
{
	if (g->enf_written && faces_end_port(g->f, port))
		g_hash_table_replace(g->enf_written, enf_key(g->f, port), GINT_TO_POINTER(g->enforce_pkeys + 1));
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
	char *key = g->enf_written ? enf_key(g->f, port) : NULL;
	int written = key ? GPOINTER_TO_INT(g_hash_table_lookup(g->enf_written, key)) - 1 : -1;
	g_free(key);
	if (written >= 0 ? written == want : have == 0)
		return 0;
	uint8_t pi[SMP_DATA_SIZE];
	pi_base(g, port, pi);
	portinfo_enforcement_bits(g->f, port, want, pi);
	submit_set(g, port, pi);
	enf_remember(g, port);
	return 1;
}

int portinfo_switch_port(struct pass *g, uint32_t port)
{
	const struct ibsm_port *p = &g->f->ports[port];
	if (p->peer == IBSM_NONE)
		return 0;
	if (p->state != IBSM_STATE_INIT)
		return switch_port_enforcement(g, port);
	uint8_t pi[SMP_DATA_SIZE], mtu, vls;
	pi_base(g, port, pi);
	link_params(g, port, &mtu, &vls);
	mad_set_field(pi, 0, IB_PORT_NEIGHBOR_MTU_F, mtu);
	mad_set_field(pi, 0, IB_PORT_OPER_VLS_F, vls);
	int to_ca = g->f->nodes[g->f->ports[p->peer].node].type != IBSM_SWITCH;
	mad_set_field(pi, 0, IB_PORT_HOQ_LIFE_F, to_ca ? g->o->leaf_hoq_life : g->o->hoq_life);
	mad_set_field(pi, 0, IB_PORT_VL_STALL_COUNT_F, g->o->vl_stall_count);
	portinfo_enforcement_bits(g->f, port, g->enforce_pkeys, pi);
	submit_set(g, port, pi);
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
	for (uint32_t port = 0; port < g->f->pub.n_ports; port++) {
		if (!portinfo_linked(g->f, port) || g->state[port] != from)
			continue;
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
