/* SPDX-License-Identifier: BSD-2-Clause */
/* discovery.c - finds the fabric with directed-route SMPs as a work queue (no level
 * barriers): NodeInfo once per link, PortInfo for every port, SwitchInfo, NodeDescription;
 * NodeInfo goes through a port only after its PortInfo shows LinkUp; no transit through CAs. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric/carry.h"
#include "fabric/discovery.h"
#include "fabric/neighbors.h"
#include "fabric/patch.h"
#include "fabric/slice.h"
#include "mad/smp.h"

enum probe_kind { K_NODEINFO, K_PORTINFO, K_SWITCHINFO, K_NODEDESC, K_PSC_CLEAR };

#define LOCAL_NODE UINT32_MAX /* cookie id of the first NodeInfo: our own node */

struct disc {
	struct transport *t;
	struct model_builder *b;
	const struct fabric *prev;
	int reread_desc;
	int psc_not_ours;          /* DISCOVER_PSC_NOT_OURS: read every port, clear no PortStateChange */
	int mkeys;                 /* any key to present: protection on, or keys of the last generation */
	GArray *failed_probes;     /* struct probe: NodeInfo that failed for good */
	struct discovery_stats st;
};

struct probe {
	uint32_t node;
	uint8_t port;
};

/* cookie: (kind, parent node index or LOCAL_NODE, port) */
static uint64_t mk_cookie(uint32_t node, uint8_t port, enum probe_kind k)
{
	return smp_cookie(k, node, port);
}

static void on_reply(struct transport *t, const struct smp_req *r, int status,
		     const uint8_t *data, void *ctx);

/* The M_Key of what an SMP out of port `out` of node n reaches: the peer this generation has
 * seen there, else the one the last generation had, else none (a port never protected by us
 * answers Gets at ProtectBits < 2 all the same, and a key we do not know we cannot present). */
/* The key management port `guid` holds as far as we know: the one the last generation
 * presented to it, else the one the configuration derives (0 when protection is off). */
static uint64_t held_mkey(const struct disc *d, uint64_t guid)
{
	uint32_t old = d->prev ? fabric_port_by_guid(d->prev, guid) : IBSM_NONE;
	if (old != IBSM_NONE && d->prev->px[old].mkey)
		return d->prev->px[old].mkey;
	return mkey_held_guess(transport_mkey(d->t), guid);
}

static uint64_t peer_mkey(const struct disc *d, const struct model_node_in *n, uint8_t out)
{
	if (out > n->nports)
		return 0;
	const struct model_port_in *p = &n->ports[out];
	int peer = p->peer_node_guid ? model_find_node(d->b, p->peer_node_guid) : -1;
	if (peer >= 0) {
		const struct model_node_in *pn = model_node(d->b, (uint32_t)peer);
		return pn->type == IBSM_SWITCH ? pn->mkey :
		       p->peer_port <= pn->nports ? held_mkey(d, pn->ports[p->peer_port].guid) : 0;
	}
	uint32_t old = d->prev ? fabric_node_by_guid(d->prev, n->guid) : IBSM_NONE;
	uint32_t q = old != IBSM_NONE && out <= d->prev->nodes[old].nports ?
		     d->prev->ports[d->prev->nodes[old].port0 + out].peer : IBSM_NONE;
	if (q == IBSM_NONE) /* m_key_lookup: OpenSM's neighbors file names who is there */
		return mkey_peer_guess(transport_mkey(d->t),
				       n->type == IBSM_SWITCH ? n->ports[0].guid : n->ports[out].guid, out);
	const struct ibsm_node *qn = &d->prev->nodes[d->prev->ports[q].node];
	return d->prev->px[qn->type == IBSM_SWITCH ? qn->port0 : q].mkey;
}

/* A Get to node n (NULL: our own node), or out of its port extra_port (>= 0), presenting the
 * M_Key of the port it reaches. */
static void send_dr(struct disc *d, const struct model_node_in *n, int extra_port, uint16_t attr,
		    uint32_t mod, uint64_t cookie)
{
	struct smp_req r;
	smp_req_init(&r, IB_MAD_METHOD_GET, attr, mod, on_reply, d, cookie);
	if (!d->mkeys) /* no M_Key anywhere: nothing to look up per SMP */
		r.mkey = 0;
	else if (!n) /* our own port: its key from the last generation */
		r.mkey = d->prev && d->prev->pub.sm_port != IBSM_NONE ?
			 d->prev->px[d->prev->pub.sm_port].mkey : 0;
	else
		r.mkey = extra_port >= 0 ? peer_mkey(d, n, (uint8_t)extra_port) : n->mkey;
	if (n)
		smp_req_route_dr(&r, n->dr_hops, n->dr_path);
	if (extra_port >= 0 && smp_req_route_append(&r, (uint8_t)extra_port) < 0)
		return;
	transport_submit(d->t, &r);
}

/* NodeInfo through port `port` of node idx, unless its peer is known; 1 if sent. */
static int probe_port(struct disc *d, uint32_t idx, uint8_t port)
{
	struct model_node_in *n = model_node(d->b, idx);
	if (n->dr_hops >= SMP_DR_HOPS_MAX || n->ports[port].peer_node_guid)
		return 0;
	d->st.nodeinfo_sent++;
	send_dr(d, n, port, IB_ATTR_NODE_INFO, 0, mk_cookie(idx, port, K_NODEINFO));
	return 1;
}

/* NodeDescription: from the last generation when it knew the node, else read. */
static void node_description(struct disc *d, struct model_node_in *n, uint32_t idx)
{
	uint32_t old = d->prev && !d->reread_desc ? fabric_node_by_guid(d->prev, n->guid) : IBSM_NONE;
	/* n->desc holds the GUID placeholder: a description that was never read is read now */
	if (old != IBSM_NONE && strcmp(d->prev->nodes[old].desc, n->desc)) {
		g_strlcpy(n->desc, d->prev->nodes[old].desc, sizeof(n->desc));
		return;
	}
	d->st.desc_read++;
	send_dr(d, n, -1, IB_ATTR_NODE_DESC, 0, mk_cookie(idx, 0, K_NODEDESC));
}

/* Is there a switch among the nodes found so far? */
static int any_switch(struct model_builder *b)
{
	for (uint32_t i = 0; i < model_count(b); i++)
		if (model_node(b, i)->type == IBSM_SWITCH)
			return 1;
	return 0;
}

static void got_nodeinfo(struct disc *d, uint32_t parent, uint8_t via_port, const uint8_t *data)
{
	uint64_t guid = mad_get_field64((void *)data, 0, IB_NODE_GUID_F);
	uint8_t type = (uint8_t)mad_get_field((void *)data, 0, IB_NODE_TYPE_F);
	uint8_t nports = (uint8_t)mad_get_field((void *)data, 0, IB_NODE_NPORTS_F);
	uint8_t local_port = (uint8_t)mad_get_field((void *)data, 0, IB_NODE_LOCAL_PORT_F);
	int idx = model_find_node(d->b, guid);
	int is_local = parent == LOCAL_NODE;
	if (idx >= 0) {
		/* a new link to a node we know: record it; a CA reached through another of its
		 * ports still needs that port's PortInfo */
		struct model_node_in *known = model_node(d->b, (uint32_t)idx);
		if (!is_local && (uint32_t)idx == parent && local_port == via_port && via_port &&
		    known->type != IBSM_SWITCH && !d->st.self_link_guid && !any_switch(d->b)) {
			/* two CAs with one GUID linked back to back: a link from a port to itself
			 * (OpenSM's fatal discovery error; exit_on_fatal decides, sm/sweep.c) */
			d->st.self_link_guid = guid;
			d->st.self_link_port = via_port;
			LOG_E("DSC-0004", "duplicate GUID 0x%016" PRIx64 ": port %u of node 0x%016" PRIx64
			      " (DR path %u hops) leads to port %u of another node with the same GUID "
			      "(DR path %u hops, out of port %u): a link from a port to itself", guid,
			      via_port, known->guid, known->dr_hops, local_port, known->dr_hops + 1u, via_port);
		}
		if (!is_local)
			model_link(d->b, parent, via_port, (uint32_t)idx, local_port);
		d->st.dup_links++;
		if (known->type != IBSM_SWITCH && local_port >= 1 && local_port <= known->nports &&
		    !(known->ports[local_port].flags & IBSM_PORT_PRESENT)) {
			known->ports[local_port].guid = mad_get_field64((void *)data, 0, IB_NODE_PORT_GUID_F);
			known->ports[local_port].flags |= IBSM_PORT_PRESENT;
			/* through the link we just used: a CA answers for the port an SMP enters */
			send_dr(d, model_node(d->b, parent), via_port, IB_ATTR_PORT_INFO, local_port,
				mk_cookie((uint32_t)idx, local_port, K_PORTINFO));
		}
		return;
	}
	if (type < IBSM_CA || type > IBSM_ROUTER) {
		LOG_E("DSC-0002", "node 0x%016" PRIx64 " reports unknown type %u: ignored", guid, type);
		return;
	}
	idx = patch_add_nodeinfo(d->b, data, &local_port);
	if (idx < 0)
		return;
	struct model_node_in *n = model_node(d->b, (uint32_t)idx);
	uint64_t port_guid = mad_get_field64((void *)data, 0, IB_NODE_PORT_GUID_F);
	n->mkey = d->mkeys ? held_mkey(d, port_guid) : 0;
	if (is_local) {
		n->dr_hops = 0;
		if (local_port <= nports)
			n->ports[local_port].flags |= IBSM_PORT_SM;
	} else {
		struct model_node_in *pn = model_node(d->b, parent);
		memcpy(n->dr_path, pn->dr_path, sizeof(n->dr_path));
		n->dr_hops = pn->dr_hops + 1;
		n->dr_path[n->dr_hops] = via_port;
		model_link(d->b, parent, via_port, (uint32_t)idx, local_port);
	}
	node_description(d, n, (uint32_t)idx);
	if (type == IBSM_SWITCH) {
		/* port 0 at once; the external ports once SwitchInfo says whether they changed */
		send_dr(d, n, -1, IB_ATTR_SWITCH_INFO, 0, mk_cookie((uint32_t)idx, 0, K_SWITCHINFO));
		send_dr(d, n, -1, IB_ATTR_PORT_INFO, 0, mk_cookie((uint32_t)idx, 0, K_PORTINFO));
	} else {
		send_dr(d, n, -1, IB_ATTR_PORT_INFO, local_port,
			mk_cookie((uint32_t)idx, local_port, K_PORTINFO));
	}
}

static void got_portinfo(struct disc *d, uint32_t idx, uint8_t port, const uint8_t *data)
{
	struct model_node_in *n = model_node(d->b, idx);
	if (!n || port > n->nports)
		return;
	struct model_port_in *p = &n->ports[port];
	patch_take_portinfo(n, port, data);
	/* Explore: through every LinkUp switch port, and out of our own CA port. */
	if (p->phys_state != IB_PHYS_LINKUP || port == 0)
		return;
	if (n->type == IBSM_SWITCH)
		probe_port(d, idx, port);
	else if (n->dr_hops == 0 && (p->flags & IBSM_PORT_SM))
		probe_port(d, idx, port);
}

static void read_external_ports(struct disc *d, uint32_t idx)
{
	struct model_node_in *n = model_node(d->b, idx);
	for (uint32_t p = 1; p <= n->nports; p++)
		send_dr(d, n, -1, IB_ATTR_PORT_INFO, p, mk_cookie(idx, (uint8_t)p, K_PORTINFO));
	d->st.ports_read += n->nports;
}

/* The previous generation's node of a switch whose external ports can be taken from it: the
 * switch says no port changed state since we cleared PortStateChange (our own PortInfo Sets do
 * not set it), it was known in full and it was not reset (LinearFDBTop 0). IBSM_NONE if not. */
static uint32_t quiet_switch(const struct disc *d, const struct model_node_in *n, int psc)
{
	if (psc || !d->prev || !n->lft_top)
		return IBSM_NONE;
	uint32_t old = fabric_node_by_guid(d->prev, n->guid);
	if (old == IBSM_NONE)
		return IBSM_NONE;
	const struct ibsm_node *on = &d->prev->nodes[old];
	if (on->type != IBSM_SWITCH || on->nports != n->nports || !d->prev->nx[old].have_switchinfo)
		return IBSM_NONE;
	for (uint32_t p = 1; p <= n->nports; p++)
		if (!d->prev->px[on->port0 + p].have_portinfo)
			return IBSM_NONE;
	return old;
}

/* The external ports of a quiet switch as the previous generation left them (its read-backs
 * included), explored as if just read: NodeInfo through every LinkUp port still verifies
 * the peer. */
static void reuse_external_ports(struct disc *d, uint32_t idx, uint32_t old)
{
	struct model_node_in *n = model_node(d->b, idx);
	const struct ibsm_node *on = &d->prev->nodes[old];
	for (uint32_t p = 1; p <= n->nports; p++) {
		n->ports[p].reused = 1;
		got_portinfo(d, idx, (uint8_t)p, d->prev->px[on->port0 + p].portinfo);
	}
	d->st.ports_reused += n->nports;
}

/* PortStateChange set: clear it first (a change after the clear sets it again, for the next
 * light sweep), then read every port. The Set writes back what was just read. */
static void clear_state_change(struct disc *d, uint32_t idx, const uint8_t *si)
{
	struct model_node_in *n = model_node(d->b, idx);
	struct smp_req r;
	smp_req_init(&r, IB_MAD_METHOD_SET, IB_ATTR_SWITCH_INFO, 0, on_reply, d,
		     mk_cookie(idx, 0, K_PSC_CLEAR));
	r.mkey = n->mkey;
	smp_req_route_dr(&r, n->dr_hops, n->dr_path);
	memcpy(r.data, si, SMP_DATA_SIZE);
	mad_set_field(r.data, 0, IB_SW_STATE_CHANGE_F, 1); /* writing 1 clears it */
	transport_submit(d->t, &r);
	d->st.psc_cleared++;
}

static void got_switchinfo(struct disc *d, uint32_t idx, const uint8_t *data)
{
	struct model_node_in *n = model_node(d->b, idx);
	int psc = patch_take_switchinfo(n, data);
	if (d->psc_not_ours) {
		/* another SM may be master: the bit is its record of what changed, not ours to
		 * clear (sweep_reset_state_change clears it once this SM is master), and a clear
		 * bit says nothing about what changed since our last sweep */
		if (psc)
			mad_set_field(n->switchinfo, 0, IB_SW_STATE_CHANGE_F, 1);
		read_external_ports(d, idx);
		return;
	}
	uint32_t old = quiet_switch(d, n, psc);
	if (old != IBSM_NONE)
		reuse_external_ports(d, idx, old);
	else if (psc)
		clear_state_change(d, idx, data);
	else
		read_external_ports(d, idx);
}

static void got_nodedesc(struct disc *d, uint32_t idx, const uint8_t *data)
{
	patch_take_nodedesc(model_node(d->b, idx), data);
}

/* A NodeInfo through a port whose PortInfo came from the last sweep failed: something
 * changed that PortStateChange did not show (e.g. a port disabled from outside). Read the
 * port (once); its reply decides whether to explore again. Returns 1 if a read was sent. */
static int reread_reused_port(struct disc *d, uint32_t idx, uint8_t port)
{
	struct model_node_in *n = model_node(d->b, idx);
	if (!n || port > n->nports || !n->ports[port].reused)
		return 0;
	n->ports[port].reused = 0;
	n->ports[port].reread = 1;
	n->ports[port].flags &= (uint16_t)~IBSM_PORT_LINKUP;
	send_dr(d, n, -1, IB_ATTR_PORT_INFO, port, mk_cookie(idx, port, K_PORTINFO));
	d->st.ports_read++;
	d->st.reused_reread++;
	return 1;
}

/* A port's PortInfo could not be read (SMPs failed): the last generation's, if it knew the
 * port and it was not already read after all, and exploring goes on through it. A lost read
 * must not look like a port that went down. Returns 1 if taken. */
static int portinfo_from_prev(struct disc *d, uint32_t idx, uint8_t port)
{
	struct model_node_in *n = model_node(d->b, idx);
	if (!d->prev || !n || port > n->nports || n->ports[port].reread || n->ports[port].have_portinfo)
		return 0;
	uint32_t old = fabric_node_by_guid(d->prev, n->guid);
	if (old == IBSM_NONE || d->prev->nodes[old].nports != n->nports)
		return 0;
	uint32_t op = d->prev->nodes[old].port0 + port;
	if (!d->prev->px[op].have_portinfo)
		return 0;
	n->ports[port].reused = 1;
	n->ports[port].reread = 1; /* once */
	got_portinfo(d, idx, port, d->prev->px[op].portinfo);
	d->st.ports_from_prev++;
	return 1;
}

/* A switch's SwitchInfo could not be read (SMPs failed): the last generation's, if it knew the
 * switch, so that the switch keeps being programmed as before (its tables are known) rather
 * than left out. PortStateChange is unknown, so its external ports are read (a read that fails
 * is taken from the last generation in turn); exploring beyond it goes on either way. */
static void switchinfo_from_prev(struct disc *d, uint32_t idx)
{
	struct model_node_in *n = model_node(d->b, idx);
	if (!n)
		return;
	uint32_t old = d->prev ? fabric_node_by_guid(d->prev, n->guid) : IBSM_NONE;
	if (old != IBSM_NONE && d->prev->nodes[old].type == IBSM_SWITCH &&
	    d->prev->nodes[old].nports == n->nports && d->prev->nx[old].have_switchinfo) {
		/* the raw attribute, as the programmer's SwitchInfo Set left it (LinearFDBTop
		 * written since that generation was discovered) */
		patch_take_switchinfo(n, d->prev->nx[old].switchinfo);
		d->st.switchinfo_from_prev++;
	}
	read_external_ports(d, idx);
}

static void on_reply(struct transport *t, const struct smp_req *r, int status,
		     const uint8_t *data, void *ctx)
{
	(void)t;
	struct disc *d = ctx;
	uint32_t node = smp_cookie_id(r->cookie);
	uint8_t port = (uint8_t)smp_cookie_sub(r->cookie);
	enum probe_kind k = (enum probe_kind)smp_cookie_kind(r->cookie);
	if (status != 0 && k == K_NODEINFO && node != LOCAL_NODE && reread_reused_port(d, node, port))
		return; /* the port's state was taken from the last sweep: read it now instead */
	if (status != 0) {
		char why[64];
		smp_status_text(status, why, sizeof(why));
		d->st.failures++;
		LOG_E("DSC-0001", "discovery SMP attr 0x%02x mod %u over %u hops failed: %s",
		      r->attr, r->mod, r->hops, why);
		if (k == K_NODEINFO && node != LOCAL_NODE) {
			struct probe pr = { node, port };
			g_array_append_val(d->failed_probes, pr);
		}
		if (k == K_PSC_CLEAR)
			read_external_ports(d, node); /* not cleared: read the ports all the same */
		if (k == K_SWITCHINFO)
			switchinfo_from_prev(d, node);
		if (k == K_PORTINFO)
			portinfo_from_prev(d, node, port);
		return;
	}
	switch (k) {
	case K_NODEINFO: got_nodeinfo(d, node, port, data); break;
	case K_PORTINFO: got_portinfo(d, node, port, data); break;
	case K_SWITCHINFO: got_switchinfo(d, node, data); break;
	case K_NODEDESC: got_nodedesc(d, node, data); break;
	case K_PSC_CLEAR: read_external_ports(d, node); break;
	}
}

/* NodeInfo through port `port` of node idx failed, and the answer is known: the node the last
 * generation had behind it was found by another path with that port of its own read down
 * (not LinkUp): the link is down at the far end (a port disabled there: ibsim leaves the near
 * end LinkUp); or the last generation already had this port LinkUp with nothing behind it (such
 * a dead end, still tried every sweep, does not keep every sweep incomplete). Nothing was lost. */
static int failure_explained(const struct disc *d, uint32_t idx, uint8_t port)
{
	const struct model_node_in *n = model_node(d->b, idx);
	uint32_t old = d->prev ? fabric_node_by_guid(d->prev, n->guid) : IBSM_NONE;
	if (old == IBSM_NONE || port > d->prev->nodes[old].nports || d->prev->nodes[old].nports != n->nports)
		return 0;
	uint32_t op = d->prev->nodes[old].port0 + port;
	uint32_t q = d->prev->ports[op].peer;
	if (q == IBSM_NONE)
		return d->prev->px[op].have_portinfo && d->prev->px[op].phys_state == IB_PHYS_LINKUP;
	int peer = model_find_node(d->b, d->prev->nodes[d->prev->ports[q].node].guid);
	if (peer < 0)
		return 0;
	const struct model_node_in *pn = model_node(d->b, (uint32_t)peer);
	uint8_t qn = d->prev->ports[q].num;
	if (qn > pn->nports)
		return 0;
	const struct model_port_in *pp = &pn->ports[qn];
	return pp->have_portinfo && !pp->peer_node_guid && pp->phys_state != IB_PHYS_LINKUP;
}

/* Another NodeInfo through every port that was seen LinkUp (read now or taken from the last
 * generation) but leads to nothing: its NodeInfo failed for good. On a lossy fabric each round
 * gives what the last one missed a fresh set of attempts, so a live node is not taken for
 * gone because one SMP lost every retry. Only switches' ports and our own are explored, as in
 * the first round. Returns how many were sent. */
static uint32_t reprobe(struct disc *d)
{
	uint32_t sent = 0;
	for (uint32_t idx = 0; idx < model_count(d->b); idx++) {
		struct model_node_in *n = model_node(d->b, idx);
		int ours = n->dr_hops == 0 && n->type != IBSM_SWITCH;
		if (n->type != IBSM_SWITCH && !ours)
			continue;
		for (uint32_t p = 1; p <= n->nports; p++) {
			const struct model_port_in *mp = &n->ports[p];
			if (mp->peer_node_guid || !mp->have_portinfo || mp->phys_state != IB_PHYS_LINKUP)
				continue;
			if ((ours && !(mp->flags & IBSM_PORT_SM)) || failure_explained(d, idx, (uint8_t)p))
				continue;
			sent += (uint32_t)probe_port(d, idx, (uint8_t)p);
		}
	}
	d->st.reprobed += sent;
	return sent;
}

struct fabric *discover_fabric(struct transport *t, volatile int *stop, uint32_t generation,
			       const struct fabric *prev, int flags, struct discovery_stats *st,
			       GError **err)
{
	struct disc d = { .t = t, .b = model_builder_new(), .prev = prev, .reread_desc = !!(flags & DISCOVER_REREAD_DESC),
			  .psc_not_ours = !!(flags & DISCOVER_PSC_NOT_OURS),
			  .mkeys = mkey_any(transport_mkey(t)) || (prev && prev->any_mkey),
			  .failed_probes = g_array_new(FALSE, FALSE, sizeof(struct probe)) };
	send_dr(&d, NULL, -1, IB_ATTR_NODE_INFO, 0, mk_cookie(LOCAL_NODE, 0, K_NODEINFO));
	d.st.nodeinfo_sent = 1;
	transport_drain(t, stop);
	/* NodeInfo that failed for good is sent again while the last round lost some */
	uint32_t failed = 0;
	for (int round = 1; round < DISCOVERY_ROUNDS && d.st.failures > failed && !(stop && *stop); round++) {
		failed = d.st.failures;
		if (!reprobe(&d))
			break;
		d.st.rounds++;
		transport_drain(t, stop);
	}
	/* a NodeInfo that failed where the link is known down or a dead end is not a loss */
	for (guint i = 0; i < d.failed_probes->len; i++) {
		const struct probe *pr = &g_array_index(d.failed_probes, struct probe, i);
		struct model_node_in *n = model_node(d.b, pr->node);
		if (n && !n->ports[pr->port].peer_node_guid && failure_explained(&d, pr->node, pr->port)) {
			d.st.failures--;
			d.st.explained++;
		}
	}
	g_array_free(d.failed_probes, TRUE);
	if (d.st.failures && !(stop && *stop)) {
		/* SMPs were lost: what they would have found is carried over, not torn down */
		struct carry_stats cs;
		carry_over(d.b, prev, &cs);
		d.st.carried = cs.carried;
		d.st.dropped = cs.dropped;
		d.st.links_carried = cs.links;
	}
	d.st.nodes = model_count(d.b);
	if (st)
		*st = d.st;
	if (stop && *stop) {
		model_builder_free(d.b);
		g_set_error(err, MODEL_ERROR, EINTR, "discovery interrupted");
		return NULL;
	}
	if (model_count(d.b) == 0) {
		model_builder_free(d.b);
		g_set_error(err, MODEL_ERROR, EIO, "discovery failed: the local port does not answer NodeInfo");
		return NULL;
	}
	LOG_V("DSC-0003", "discovery: %u nodes, %u NodeInfo sent, %u links seen twice, %u NodeDescription "
	      "read, %u switch ports read, %u taken from the last sweep (%u re-read), %u PortStateChange "
	      "cleared, %u failures (%u NodeInfo sent again in %u more rounds; %u ports, %u SwitchInfo, "
	      "%u links and %u nodes carried over, %u nodes dropped; %u NodeInfo failed where the link "
	      "is known down or a dead end)", d.st.nodes,
	      d.st.nodeinfo_sent, d.st.dup_links, d.st.desc_read, d.st.ports_read, d.st.ports_reused,
	      d.st.reused_reread, d.st.psc_cleared, d.st.failures, d.st.reprobed, d.st.rounds,
	      d.st.ports_from_prev, d.st.switchinfo_from_prev, d.st.links_carried, d.st.carried,
	      d.st.dropped, d.st.explained);
	/* freezing a large fabric takes tens of ms: on a thread of its own, the SA served meanwhile */
	struct fabric *f = slice_freeze(t, d.b, NULL, generation, err);
	if (f) {
		fabric_set_mkeys(f, transport_mkey(t), prev);
		struct slicer sl;
		slicer_init(&sl, t, NULL);
		fabric_record_neighbors(f, transport_mkey(t), prev, &sl);
	}
	return f;
}
