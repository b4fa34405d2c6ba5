/* SPDX-License-Identifier: BSD-2-Clause */
/* scopes.c - a topology's part of one fabric generation as a routing scope. The port groups
 * are resolved over every port of the fabric (CA and router ports, switch ports 0..N); then
 *  - the switches are those with any port in the topology's sw-grp,
 *  - the usable ports are the sw-grp's switch ports and the hca-grp's CA and router ports (an
 *    engine sees a link only when both ends are usable),
 *  - the destinations are the hca-grp's CA and router ports and the port 0 of every switch
 *    whose port 0 is in the sw-grp,
 * as NVIDIA's SM manual ("Defining Topology Policy") describes sw-grp ("all switches and switch
 * ports used in this topology") and hca-grp ("all HCAs used in this topology"). */
#include <string.h>
#include "chain.h"

struct topo_scope {
	uint64_t *switches, *ports, *dests;
	uint32_t n_switches;
};

struct chain_scopes {
	const struct ibsm_fabric *f;
	struct pgrp_resolved *res;
	uint32_t *port_id;            /* pgrp port index -> fabric port id */
	size_t n;                     /* pgrp ports */
	GHashTable *topo;             /* topology id -> struct topo_scope * */
};

static void topo_scope_free(gpointer p)
{
	struct topo_scope *t = p;
	g_free(t->switches);
	g_free(t->ports);
	g_free(t->dests);
	g_free(t);
}

struct chain_scopes *chain_scopes_new(const struct chain_inst *ci, const struct ibsm_fabric *f)
{
	struct chain_scopes *cs = g_new0(struct chain_scopes, 1);
	cs->f = f;
	struct pgrp_port *ports = g_new0(struct pgrp_port, f->n_ports ? f->n_ports : 1);
	cs->port_id = g_new(uint32_t, f->n_ports ? f->n_ports : 1);
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		const struct ibsm_node *n = ibsm_node_at(f, i);
		for (unsigned k = n->type == IBSM_SWITCH ? 0 : 1; k <= n->nports; k++) {
			uint32_t pid = n->port0 + k;
			const struct ibsm_port *p = ibsm_port_at(f, pid);
			if (!(p->flags & IBSM_PORT_PRESENT))
				continue;
			struct pgrp_port *q = &ports[cs->n];
			q->node_guid = n->guid;
			q->port_guid = n->type == IBSM_SWITCH ? n->guid : p->guid;
			q->port_num = (uint8_t)k;
			q->node_type = n->type == IBSM_SWITCH ? PGRP_NODE_SWITCH :
				       n->type == IBSM_ROUTER ? PGRP_NODE_ROUTER : PGRP_NODE_CA;
			q->node_desc = n->desc;
			cs->port_id[cs->n++] = pid;
		}
	}
	cs->res = pgrp_policy_resolve(ci->groups, ports, cs->n);
	g_free(ports);
	cs->topo = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, topo_scope_free);
	for (guint i = 0; ci->topos && i < ci->topos->topologies->len; i++) {
		const struct topo_def *t = g_ptr_array_index(ci->topos->topologies, i);
		const uint64_t *sw = pgrp_resolved_group(cs->res, t->sw_grp);
		const uint64_t *hca = pgrp_resolved_group(cs->res, t->hca_grp);
		size_t sw_words = ((size_t)f->n_switches + 63) / 64 + 1;
		size_t port_words = ((size_t)f->n_ports + 63) / 64 + 1;
		struct topo_scope *ts = g_new0(struct topo_scope, 1);
		ts->switches = g_new0(uint64_t, sw_words);
		ts->ports = g_new0(uint64_t, port_words);
		ts->dests = g_new0(uint64_t, port_words);
		for (size_t k = 0; k < cs->n; k++) {
			uint32_t pid = cs->port_id[k];
			const struct ibsm_port *p = ibsm_port_at(f, pid);
			const struct ibsm_node *n = ibsm_node_at(f, p->node);
			int is_sw = n->type == IBSM_SWITCH;
			if (is_sw ? !(sw && pgrp_set_has(sw, k)) : !(hca && pgrp_set_has(hca, k)))
				continue;
			ts->ports[pid / 64] |= 1ull << (pid % 64);
			if (is_sw)
				ts->switches[n->sw / 64] |= 1ull << (n->sw % 64);
			if (!is_sw || p->num == 0)
				ts->dests[pid / 64] |= 1ull << (pid % 64);
		}
		for (uint32_t s = 0; s < f->n_switches; s++)
			ts->n_switches += (ts->switches[s / 64] >> (s % 64)) & 1;
		g_hash_table_insert(cs->topo, GUINT_TO_POINTER(t->id), ts);
	}
	return cs;
}

void chain_scopes_free(struct chain_scopes *cs)
{
	if (!cs)
		return;
	g_hash_table_destroy(cs->topo);
	pgrp_resolved_free(cs->res);
	g_free(cs->port_id);
	g_free(cs);
}

uint32_t chain_scope_of(struct chain_scopes *cs, uint32_t topology, const struct chain_step *step,
			int first, struct ibsm_scope *s)
{
	memset(s, 0, sizeof(*s));
	s->size = sizeof(*s);
	/* a step that names its path bit routes that LID offset only; one that does not, and the
	 * first step (which must cover the fabric), route every LID of their ports */
	if (step && !first && step->at[CHAIN_Q_PATH_BIT].line) {
		s->path_bit_first = step->path_bit;
		s->path_bit_count = 1;
	}
	if (topology == 0)
		return cs->f->n_switches;
	const struct topo_scope *ts = g_hash_table_lookup(cs->topo, GUINT_TO_POINTER(topology));
	if (!ts)
		return 0;
	s->switches = (struct ibsm_bits){ ts->switches, cs->f->n_switches };
	s->ports = (struct ibsm_bits){ ts->ports, cs->f->n_ports };
	s->dests = (struct ibsm_bits){ ts->dests, cs->f->n_ports };
	return ts->n_switches;
}
