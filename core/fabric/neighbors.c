/* SPDX-License-Identifier: BSD-2-Clause */
/* neighbors.c - m_key_lookup's neighbors record from a generation (neighbors.h). */
#include "fabric/neighbors.h"
#include "mad/guid2mkey.h"

/* The GUID a neighbors line names port p by: the switch's (port 0), else the port's own. */
static uint64_t neighbor_guid(const struct fabric *f, uint32_t p)
{
	const struct ibsm_node *n = &f->nodes[f->ports[p].node];
	return n->type == IBSM_SWITCH ? f->ports[n->port0].guid : f->ports[p].guid;
}

/* Port p of f and port pp of prev: the same neighbors line (both ends' GUIDs and numbers). */
static int same_link(const struct fabric *f, uint32_t p, const struct fabric *prev, uint32_t pp)
{
	uint32_t q = f->ports[p].peer, pq = prev->ports[pp].peer;
	return pq != IBSM_NONE && f->ports[p].num == prev->ports[pp].num &&
	       f->ports[q].num == prev->ports[pq].num && neighbor_guid(f, p) == neighbor_guid(prev, pp) &&
	       neighbor_guid(f, q) == neighbor_guid(prev, pq);
}

void fabric_record_neighbors(const struct fabric *f, const struct mkey_cfg *c, const struct fabric *prev,
			     struct slicer *sl)
{
	for (uint32_t n = 0; c && c->lookup && n < f->pub.n_nodes; n++) {
		if (sl)
			slicer_check(sl);
		const struct ibsm_node *a = &f->nodes[n];
		uint32_t pn = prev ? fabric_node_by_guid(prev, a->guid) : IBSM_NONE;
		for (uint32_t num = 0; num <= a->nports; num++) {
			uint32_t p = a->port0 + num, q = f->ports[p].peer;
			if (q == IBSM_NONE)
				continue;
			if (pn != IBSM_NONE && num <= prev->nodes[pn].nports &&
			    same_link(f, p, prev, prev->nodes[pn].port0 + num))
				continue;
			guid2mkey_set_neighbor(c->lookup, neighbor_guid(f, p), f->ports[p].num,
					       neighbor_guid(f, q), f->ports[q].num);
		}
	}
}
