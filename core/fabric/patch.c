/* SPDX-License-Identifier: BSD-2-Clause */
/* patch.c - the next generation as a patch of the last one (patch.h): a builder copied from a
 * frozen generation, the attribute decoders discovery shares, links taken away, directed
 * routes mended and what can no longer be reached left out. */
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric/patch.h"
#include "mad/smp.h"

int patch_copy_node(struct model_builder *b, const struct fabric *prev, uint32_t o)
{
	const struct ibsm_node *on = &prev->nodes[o];
	const struct node_extra *x = &prev->nx[o];
	int idx = model_add_node(b, on->guid, on->type, on->nports);
	if (idx < 0)
		return idx;
	struct model_node_in *n = model_node(b, (uint32_t)idx);
	n->sysimg_guid = on->sysimg_guid;
	g_strlcpy(n->desc, on->desc, sizeof(n->desc));
	n->vendor_id = x->vendor_id;
	n->device_id = x->device_id;
	n->partition_cap = x->partition_cap;
	n->revision = x->revision;
	n->local_port = x->local_port;
	n->lft_cap = x->lft_cap;
	n->lft_top = x->lft_top;
	n->pkey_enf_cap = x->pkey_enf_cap;
	n->mft_cap = x->mft_cap;
	n->have_switchinfo = x->have_switchinfo;
	n->enhanced_sp0 = x->enhanced_sp0;
	memcpy(n->switchinfo, x->switchinfo, sizeof(n->switchinfo));
	n->dr_hops = x->dr_hops;
	memcpy(n->dr_path, x->dr_path, sizeof(n->dr_path));
	n->missed = x->missed;
	for (uint32_t p = 0; p <= on->nports; p++) {
		const struct ibsm_port *op = &prev->ports[on->port0 + p];
		const struct port_extra *px = &prev->px[on->port0 + p];
		struct model_port_in *np = &n->ports[p];
		np->guid = op->guid;
		np->lid = op->lid;
		np->lmc = op->lmc;
		np->state = op->state;
		np->phys_state = px->phys_state;
		np->width = op->width;
		np->speed = op->speed;
		np->mtu_cap = op->mtu_cap;
		np->vl_cap = op->vl_cap;
		np->oper_vls = op->oper_vls;
		np->flags = op->flags;
		np->have_portinfo = px->have_portinfo;
		np->reused = 1;
		memcpy(np->portinfo, px->portinfo, sizeof(np->portinfo));
	}
	n->mkey = patch_node_mkey(prev, o);
	return idx;
}

uint64_t patch_node_mkey(const struct fabric *prev, uint32_t o)
{
	const struct ibsm_node *on = &prev->nodes[o];
	if (on->type == IBSM_SWITCH)
		return prev->px[on->port0].mkey;
	uint64_t key = 0;
	for (uint32_t p = 0; p <= on->nports; p++) /* a CA: the key of the port SMPs reach it by */
		if ((prev->ports[on->port0 + p].flags & IBSM_PORT_PRESENT) && prev->px[on->port0 + p].mkey)
			key = prev->px[on->port0 + p].mkey;
	return key;
}

/* Node o of prev into b as prev knows it now; its links are added afterwards. */
static void copy_from_generation(struct model_builder *b, const struct fabric *prev, uint32_t o)
{
	int idx = patch_copy_node(b, prev, o);
	/* the switch holds what the programmer's SwitchInfo Set left (LinearFDBTop written since
	 * prev was discovered), as a discovery now would read it */
	if (idx >= 0 && prev->nx[o].have_switchinfo)
		patch_take_switchinfo(model_node(b, (uint32_t)idx), prev->nx[o].switchinfo);
}

struct model_builder *patch_builder_from(const struct fabric *prev)
{
	struct model_builder *b = model_builder_new();
	for (uint32_t o = 0; o < prev->pub.n_nodes; o++)
		copy_from_generation(b, prev, o);
	/* prev's node ids are its builder's indexes: nodes were added in id order */
	for (uint32_t o = 0; o < prev->pub.n_nodes; o++) {
		const struct ibsm_node *on = &prev->nodes[o];
		for (uint32_t p = 1; p <= on->nports; p++) {
			uint32_t q = prev->ports[on->port0 + p].peer;
			if (q != IBSM_NONE && prev->ports[q].node >= o)
				model_link(b, o, (uint8_t)p, prev->ports[q].node, prev->ports[q].num);
		}
	}
	return b;
}

void patch_take_portinfo(struct model_node_in *n, uint8_t port, const uint8_t *data)
{
	struct model_port_in *p = &n->ports[port];
	void *pi = (void *)data;
	memcpy(p->portinfo, data, SMP_DATA_SIZE);
	p->have_portinfo = 1;
	p->flags |= IBSM_PORT_PRESENT;
	p->state = (uint8_t)mad_get_field(pi, 0, IB_PORT_STATE_F);
	p->phys_state = (uint8_t)mad_get_field(pi, 0, IB_PORT_PHYS_STATE_F);
	p->width = (uint8_t)mad_get_field(pi, 0, IB_PORT_LINK_WIDTH_ACTIVE_F);
	p->speed = (uint8_t)mad_get_field(pi, 0, IB_PORT_LINK_SPEED_ACTIVE_F);
	p->mtu_cap = (uint8_t)mad_get_field(pi, 0, IB_PORT_MTU_CAP_F);
	p->vl_cap = (uint8_t)mad_get_field(pi, 0, IB_PORT_VL_CAP_F);
	p->oper_vls = (uint8_t)mad_get_field(pi, 0, IB_PORT_OPER_VLS_F);
	uint32_t capmask = mad_get_field(pi, 0, IB_PORT_CAPMASK_F);
	if (capmask & IB_CAP_IS_SM)
		p->flags |= IBSM_PORT_ISSM;
	else
		p->flags &= (uint16_t)~IBSM_PORT_ISSM;
	if (n->type != IBSM_SWITCH || port == 0) {
		p->lid = (uint16_t)mad_get_field(pi, 0, IB_PORT_LID_F);
		p->lmc = (uint8_t)mad_get_field(pi, 0, IB_PORT_LMC_F);
	}
	if ((p->phys_state == IB_PHYS_LINKUP && port != 0) || (n->type == IBSM_SWITCH && port == 0))
		p->flags |= IBSM_PORT_LINKUP;
	else
		p->flags &= (uint16_t)~IBSM_PORT_LINKUP;
}

int patch_take_switchinfo(struct model_node_in *n, const uint8_t *data)
{
	void *si = (void *)data;
	memcpy(n->switchinfo, data, SMP_DATA_SIZE);
	n->have_switchinfo = 1;
	n->lft_cap = (uint16_t)mad_get_field(si, 0, IB_SW_LINEAR_FDB_CAP_F);
	n->lft_top = (uint16_t)mad_get_field(si, 0, IB_SW_LINEAR_FDB_TOP_F);
	n->mft_cap = (uint16_t)mad_get_field(si, 0, IB_SW_MCAST_FDB_CAP_F);
	n->pkey_enf_cap = (uint16_t)mad_get_field(si, 0, IB_SW_PARTITION_ENFORCE_CAP_F);
	n->enhanced_sp0 = (uint8_t)mad_get_field(si, 0, IB_SW_ENHANCED_PORT0_F);
	if (n->enhanced_sp0)
		n->ports[0].flags |= IBSM_PORT_ESP0;
	int psc = (int)mad_get_field(si, 0, IB_SW_STATE_CHANGE_F);
	mad_set_field(n->switchinfo, 0, IB_SW_STATE_CHANGE_F, 0); /* handled by the reader */
	return psc;
}

int patch_add_nodeinfo(struct model_builder *b, const uint8_t *data, uint8_t *port_out)
{
	void *ni = (void *)data;
	uint64_t guid = mad_get_field64(ni, 0, IB_NODE_GUID_F);
	uint8_t type = (uint8_t)mad_get_field(ni, 0, IB_NODE_TYPE_F);
	uint8_t nports = (uint8_t)mad_get_field(ni, 0, IB_NODE_NPORTS_F);
	uint8_t local_port = (uint8_t)mad_get_field(ni, 0, IB_NODE_LOCAL_PORT_F);
	if (type < IBSM_CA || type > IBSM_ROUTER)
		return -1;
	int idx = model_add_node(b, guid, type, nports);
	if (idx < 0)
		return -1;
	struct model_node_in *n = model_node(b, (uint32_t)idx);
	n->sysimg_guid = mad_get_field64(ni, 0, IB_NODE_SYSTEM_GUID_F);
	n->partition_cap = (uint16_t)mad_get_field(ni, 0, IB_NODE_PARTITION_CAP_F);
	n->device_id = (uint16_t)mad_get_field(ni, 0, IB_NODE_DEVID_F);
	n->vendor_id = mad_get_field(ni, 0, IB_NODE_VENDORID_F);
	n->revision = mad_get_field(ni, 0, IB_NODE_REVISION_F);
	n->local_port = local_port;
	uint64_t port_guid = mad_get_field64(ni, 0, IB_NODE_PORT_GUID_F);
	if (type == IBSM_SWITCH) {
		n->ports[0].guid = port_guid;
		n->ports[0].flags |= IBSM_PORT_PRESENT;
		for (uint32_t p = 1; p <= nports; p++)
			n->ports[p].guid = guid;
	} else if (local_port <= nports) {
		n->ports[local_port].guid = port_guid;
		n->ports[local_port].flags |= IBSM_PORT_PRESENT;
	}
	g_snprintf(n->desc, sizeof(n->desc), "0x%016" G_GINT64_MODIFIER "x", guid);
	*port_out = local_port;
	return idx;
}

void patch_take_nodedesc(struct model_node_in *n, const uint8_t *data)
{
	char desc[SMP_DATA_SIZE + 1];
	memcpy(desc, data, SMP_DATA_SIZE);
	desc[SMP_DATA_SIZE] = 0;
	for (char *c = desc; *c; c++)
		if ((unsigned char)*c < 0x20)
			*c = ' ';
	g_strchomp(desc);
	if (desc[0])
		g_strlcpy(n->desc, desc, sizeof(n->desc));
}

void patch_unlink(struct model_builder *b, uint32_t idx, uint8_t port)
{
	struct model_node_in *n = model_node(b, idx);
	if (!n || port > n->nports || !n->ports[port].peer_node_guid)
		return;
	int peer = model_find_node(b, n->ports[port].peer_node_guid);
	uint8_t pp = n->ports[port].peer_port;
	n->ports[port].peer_node_guid = 0;
	n->ports[port].peer_port = 0;
	struct model_node_in *pn = peer >= 0 ? model_node(b, (uint32_t)peer) : NULL;
	if (pn && pp <= pn->nports && pn->ports[pp].peer_node_guid == n->guid) {
		pn->ports[pp].peer_node_guid = 0;
		pn->ports[pp].peer_port = 0;
	}
}

/* The local node (hop 0): the node whose port carries IBSM_PORT_SM; -1 if none. */
static int local_node(struct model_builder *b)
{
	for (uint32_t i = 0; i < model_count(b); i++) {
		struct model_node_in *n = model_node(b, i);
		if (n->dr_hops)
			continue;
		for (uint32_t p = 0; p <= n->nports; p++)
			if (n->ports[p].flags & IBSM_PORT_SM)
				return (int)i;
	}
	return -1;
}

/* May an SMP leave node n (the local node or not) by port p? */
static int may_leave(const struct model_node_in *n, int local, uint8_t p)
{
	if (p < 1 || p > n->nports || !n->ports[p].peer_node_guid)
		return 0;
	if (n->type == IBSM_SWITCH)
		return 1;
	return local && (n->ports[p].flags & IBSM_PORT_SM);
}

/* Does node idx's directed route still lead to it over b's links? */
static int route_works(struct model_builder *b, uint32_t start, uint32_t idx, const uint8_t *no_transit)
{
	struct model_node_in *n = model_node(b, idx), *cur = model_node(b, start);
	for (uint32_t h = 1; h <= n->dr_hops; h++) {
		if (!may_leave(cur, h == 1, n->dr_path[h]))
			return 0;
		int next = model_find_node(b, cur->ports[n->dr_path[h]].peer_node_guid);
		if (next < 0 || (no_transit && h < n->dr_hops && no_transit[next]))
			return 0;
		cur = model_node(b, (uint32_t)next);
	}
	return cur == n;
}

uint32_t patch_fix_routes(struct model_builder *b, uint8_t *reached, const uint8_t *no_transit)
{
	uint32_t count = model_count(b), changed = 0;
	memset(reached, 0, count);
	int start = local_node(b);
	if (start < 0)
		return 0;
	/* breadth first from the local node: parent and exit port of each node reached */
	uint32_t *queue = g_new(uint32_t, count), *parent = g_new(uint32_t, count);
	uint8_t *via = g_new0(uint8_t, count);
	uint32_t head = 0, tail = 0;
	queue[tail++] = (uint32_t)start;
	reached[start] = 1;
	parent[start] = (uint32_t)start;
	while (head < tail) {
		uint32_t i = queue[head++];
		struct model_node_in *n = model_node(b, i);
		uint32_t depth = 0;
		for (uint32_t a = i; a != (uint32_t)start; a = parent[a])
			depth++;
		if (depth >= SMP_DR_HOPS_MAX || (n->type != IBSM_SWITCH && i != (uint32_t)start) ||
		    (no_transit && no_transit[i]))
			continue;
		for (uint32_t p = 1; p <= n->nports; p++) {
			if (!may_leave(n, i == (uint32_t)start, (uint8_t)p))
				continue;
			int q = model_find_node(b, n->ports[p].peer_node_guid);
			if (q < 0 || reached[q])
				continue;
			reached[q] = 1;
			parent[q] = i;
			via[q] = (uint8_t)p;
			queue[tail++] = (uint32_t)q;
		}
	}
	/* in breadth-first order, so a parent's route is settled before its children's. A route
	 * that is its (settled, working) parent's and then the port the search left it by works:
	 * what route_works() would walk hop by hop, found without a look-up (most routes are) */
	for (uint32_t k = 1; k < tail; k++) {
		uint32_t i = queue[k];
		struct model_node_in *n = model_node(b, i), *pn = model_node(b, parent[i]);
		if (n->dr_hops == pn->dr_hops + 1 && n->dr_path[n->dr_hops] == via[i] &&
		    !memcmp(n->dr_path + 1, pn->dr_path + 1, pn->dr_hops))
			continue;
		if (route_works(b, (uint32_t)start, i, no_transit))
			continue;
		memcpy(n->dr_path, pn->dr_path, sizeof(n->dr_path));
		n->dr_hops = (uint8_t)(pn->dr_hops + 1);
		n->dr_path[n->dr_hops] = via[i];
		changed++;
	}
	g_free(queue);
	g_free(parent);
	g_free(via);
	return changed;
}

struct model_builder *patch_reachable(const struct model_builder *b, const uint8_t *reached,
				      uint32_t *dropped)
{
	struct model_builder *out = model_builder_new(), *src = (struct model_builder *)b;
	*dropped = 0;
	for (uint32_t i = 0; i < model_count(src); i++) {
		const struct model_node_in *n = model_node(src, i);
		if (!reached[i]) {
			(*dropped)++;
			continue;
		}
		int idx = model_add_node(out, n->guid, n->type, n->nports);
		if (idx < 0)
			continue;
		struct model_node_in *c = model_node(out, (uint32_t)idx);
		struct model_port_in *ports = c->ports;
		*c = *n;
		c->ports = ports;
		memcpy(ports, n->ports, sizeof(*ports) * ((size_t)n->nports + 1));
	}
	/* links to what was left out go with it */
	for (uint32_t i = 0; i < model_count(out); i++) {
		struct model_node_in *n = model_node(out, i);
		for (uint32_t p = 0; p <= n->nports; p++)
			if (n->ports[p].peer_node_guid && model_find_node(out, n->ports[p].peer_node_guid) < 0) {
				n->ports[p].peer_node_guid = 0;
				n->ports[p].peer_port = 0;
			}
	}
	return out;
}
