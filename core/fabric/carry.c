/* SPDX-License-Identifier: BSD-2-Clause */
/* carry.c - carrying nodes a lossy discovery could not reach over from the last generation
 * (see carry.h): a fixpoint over the last generation's links, outward from what was found. */
#include <inttypes.h>
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric/carry.h"
#include "fabric/patch.h"

/* Port pn of builder node n: its link was seen down this sweep, or it leads to another node
 * than `guid`; either way nothing of the last generation is behind it any more. */
static int port_closed(const struct model_node_in *n, uint8_t pn, uint64_t guid)
{
	const struct model_port_in *p = &n->ports[pn];
	if (p->peer_node_guid && p->peer_node_guid != guid)
		return 1;
	return p->have_portinfo && pn != 0 && p->phys_state != IB_PHYS_LINKUP;
}

/* Is prev node o behind a port of a node in b that leaves it reachable? */
static int reachable_from_b(const struct model_builder *b, const struct fabric *prev, uint32_t o)
{
	const struct ibsm_node *on = &prev->nodes[o];
	for (uint32_t p = 1; p <= on->nports; p++) {
		uint32_t q = prev->ports[on->port0 + p].peer;
		if (q == IBSM_NONE)
			continue;
		int idx = model_find_node(b, prev->nodes[prev->ports[q].node].guid);
		if (idx >= 0 && !port_closed(model_node((struct model_builder *)b, (uint32_t)idx),
					     prev->ports[q].num, on->guid))
			return 1;
	}
	return 0;
}

/* A copy of prev node o in b, as prev knew it, one more miss counted; its links follow. */
static void carry_node(struct model_builder *b, const struct fabric *prev, uint32_t o)
{
	int idx = patch_copy_node(b, prev, o);
	if (idx < 0)
		return;
	struct model_node_in *n = model_node(b, (uint32_t)idx);
	n->missed = (uint8_t)(prev->nx[o].missed + 1);
	for (uint32_t p = 0; p <= prev->nodes[o].nports; p++)
		n->ports[p].flags = (uint16_t)(n->ports[p].flags & ~IBSM_PORT_SM);
}

/* The links of carried node o to whatever of prev's peers b holds, where those ports are open. */
static void carry_links(struct model_builder *b, const struct fabric *prev, uint32_t o)
{
	const struct ibsm_node *on = &prev->nodes[o];
	int me = model_find_node(b, on->guid);
	for (uint32_t p = 1; p <= on->nports; p++) {
		uint32_t q = prev->ports[on->port0 + p].peer;
		if (q == IBSM_NONE)
			continue;
		int peer = model_find_node(b, prev->nodes[prev->ports[q].node].guid);
		if (peer < 0 || port_closed(model_node(b, (uint32_t)peer), prev->ports[q].num, on->guid))
			continue;
		model_link(b, (uint32_t)me, (uint8_t)p, (uint32_t)peer, prev->ports[q].num);
	}
}

/* Port pn of builder node n leads nowhere that this sweep knows and was not seen down. */
static int port_open_unlinked(const struct model_node_in *n, uint8_t pn)
{
	return pn >= 1 && pn <= n->nports && !n->ports[pn].peer_node_guid && !port_closed(n, pn, 0);
}

/* Links of prev between two nodes b holds, on ports b left open and unlinked: the NodeInfo
 * through them failed, the nodes answered by other paths. Returns how many. */
static uint32_t carry_found_links(struct model_builder *b, const struct fabric *prev)
{
	uint32_t links = 0;
	for (uint32_t idx = 0; idx < model_count(b); idx++) {
		struct model_node_in *n = model_node(b, idx);
		uint32_t o = fabric_node_by_guid(prev, n->guid);
		if (o == IBSM_NONE || prev->nodes[o].nports != n->nports)
			continue;
		for (uint32_t p = 1; p <= n->nports; p++) {
			uint32_t q = prev->ports[prev->nodes[o].port0 + p].peer;
			if (q == IBSM_NONE || !port_open_unlinked(n, (uint8_t)p))
				continue;
			const struct ibsm_node *qn = &prev->nodes[prev->ports[q].node];
			int peer = model_find_node(b, qn->guid);
			if (peer < 0 || (uint32_t)peer == idx)
				continue;
			struct model_node_in *pn = model_node(b, (uint32_t)peer);
			if (pn->nports != qn->nports || !port_open_unlinked(pn, prev->ports[q].num))
				continue;
			model_link(b, idx, (uint8_t)p, (uint32_t)peer, prev->ports[q].num);
			links++;
		}
	}
	if (links)
		LOG_I("CRY-0003", "%u links whose NodeInfo failed this sweep, between nodes found by other "
		      "paths, kept as the last sweep saw them", links);
	return links;
}

void carry_over(struct model_builder *b, const struct fabric *prev, struct carry_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!prev)
		return;
	st->links = carry_found_links(b, prev);
	uint32_t n = prev->pub.n_nodes;
	uint8_t *done = g_new0(uint8_t, n ? n : 1); /* 1 carried, 2 dropped */
	GArray *carried = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	/* outward from what was found: each pass carries the nodes next to the last pass's */
	for (int more = 1; more;) {
		more = 0;
		for (uint32_t o = 0; o < n; o++) {
			if (done[o] || model_find_node(b, prev->nodes[o].guid) >= 0 ||
			    !reachable_from_b(b, prev, o))
				continue;
			const struct ibsm_node *on = &prev->nodes[o];
			if (prev->nx[o].missed + 1 >= CARRY_MAX_MISSES) {
				done[o] = 2;
				st->dropped++;
				LOG_E("CRY-0002", "%s 0x%016" PRIx64 " (%s) not reached by %u sweeps in a row: "
				      "dropped from the fabric", on->type == IBSM_SWITCH ? "switch" : "CA",
				      on->guid, on->desc, prev->nx[o].missed + 1);
				continue;
			}
			carry_node(b, prev, o);
			done[o] = 1;
			g_array_append_val(carried, o);
			st->carried++;
			more = 1;
		}
	}
	for (guint i = 0; i < carried->len; i++)
		carry_links(b, prev, g_array_index(carried, uint32_t, i));
	if (st->carried)
		LOG_I("CRY-0001", "%u nodes not reached by this sweep (SMPs failed) carried over from the "
		      "last one with their LIDs and links, e.g. 0x%016" PRIx64 " (%s)", st->carried,
		      prev->nodes[g_array_index(carried, uint32_t, 0)].guid,
		      prev->nodes[g_array_index(carried, uint32_t, 0)].desc);
	g_array_free(carried, TRUE);
	g_free(done);
}
