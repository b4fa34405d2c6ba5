/* SPDX-License-Identifier: BSD-2-Clause */
/* qos_match.c - port groups resolved per generation and the first-match rule scan
 * (sa/qos_match.h). */
#include <string.h>
#include "sa/qos_match.h"

struct qos_match {
	const struct qos_policy *pol;
	GHashTable *part_pkeys;    /* partition name -> 15-bit P_Key (+ 0x10000, never 0) */
	const struct fabric *f;    /* the generation the sets below are for (not referenced) */
	uint32_t n_ports;
	uint8_t **member;          /* [group][port id]: 1 when the port is in the group */
};

struct qos_match *qos_match_new(const struct qos_policy *pol, const struct part_policy *pp)
{
	struct qos_match *m = g_new0(struct qos_match, 1);
	m->pol = pol;
	m->part_pkeys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	for (guint i = 0; pp && pp->parts && i < pp->parts->len; i++) {
		const struct partition *p = g_ptr_array_index(pp->parts, i);
		if (p->name && *p->name && !g_hash_table_contains(m->part_pkeys, p->name))
			g_hash_table_insert(m->part_pkeys, g_strdup(p->name),
					    GUINT_TO_POINTER(0x10000u | (p->pkey & 0x7fff)));
	}
	return m;
}

static void free_sets(struct qos_match *m)
{
	for (guint g = 0; m->member && g < m->pol->groups->len; g++)
		g_free(m->member[g]);
	g_free(m->member);
	m->member = NULL;
	m->f = NULL;
}

void qos_match_free(struct qos_match *m)
{
	if (!m)
		return;
	free_sets(m);
	g_hash_table_destroy(m->part_pkeys);
	g_free(m);
}

static int holds_pkey(const struct sa_pkeys *pk, uint32_t port, const GArray *ranges)
{
	uint32_t n = 0;
	const uint16_t *t = pk ? sa_pkeys_of(pk, port, &n) : NULL;
	for (uint32_t i = 0; t && i < n; i++)
		if ((t[i] & 0x7fff) && qos_ranges_have(ranges, t[i] & 0x7fff))
			return 1;
	return 0;
}

static int holds_one(const struct sa_pkeys *pk, uint32_t port, uint16_t key)
{
	uint32_t n = 0;
	const uint16_t *t = pk ? sa_pkeys_of(pk, port, &n) : NULL;
	for (uint32_t i = 0; t && i < n; i++)
		if ((t[i] & 0x7fff) == key)
			return 1;
	return 0;
}

/* Is end port p (CA/router port, switch port 0) in group g? */
static int in_group(const struct qos_match *m, const struct fabric *f, const struct sa_pkeys *pk,
		    const struct qos_port_group *g, uint32_t p)
{
	const struct ibsm_port *port = &f->ports[p];
	const struct ibsm_node *n = &f->nodes[port->node];
	unsigned t = n->type == IBSM_SWITCH ? QOS_NT_SWITCH : n->type == IBSM_ROUTER ? QOS_NT_ROUTER : QOS_NT_CA;
	if (g->node_types & t)
		return 1;
	if ((g->node_types & QOS_NT_SELF) && p == f->pub.sm_port)
		return 1;
	if (g->guids && qos_ranges_have(g->guids, port->guid))
		return 1;
	for (guint i = 0; g->names && i < g->names->len; i++) {
		const struct qos_port_name *nm = &g_array_index(g->names, struct qos_port_name, i);
		if (nm->port == port->num && n->desc && !strcmp(nm->desc, n->desc))
			return 1;
	}
	if (g->pkeys && g->pkeys->len && holds_pkey(pk, p, g->pkeys))
		return 1;
	for (guint i = 0; g->partitions && i < g->partitions->len; i++) {
		gpointer v = g_hash_table_lookup(m->part_pkeys, g_ptr_array_index(g->partitions, i));
		if (v && holds_one(pk, p, (uint16_t)(GPOINTER_TO_UINT(v) & 0x7fff)))
			return 1;
	}
	return 0;
}

void qos_match_compile(struct qos_match *m, const struct fabric *f, const struct sa_pkeys *pk)
{
	free_sets(m);
	if (!f)
		return;
	guint ng = m->pol->groups->len;
	m->member = g_new0(uint8_t *, ng ? ng : 1);
	m->n_ports = f->pub.n_ports;
	for (guint g = 0; g < ng; g++) {
		const struct qos_port_group *grp = g_ptr_array_index(m->pol->groups, g);
		m->member[g] = g_new0(uint8_t, f->pub.n_ports ? f->pub.n_ports : 1);
		for (uint32_t p = 0; p < f->pub.n_ports; p++)
			if (fabric_is_end_port(f, p))
				m->member[g][p] = (uint8_t)in_group(m, f, pk, grp, p);
	}
	m->f = f;
}

int qos_match_in_group(const struct qos_match *m, const char *name, uint32_t port)
{
	for (guint g = 0; m->member && g < m->pol->groups->len; g++) {
		const struct qos_port_group *grp = g_ptr_array_index(m->pol->groups, g);
		if (port < m->n_ports && grp->name && !strcmp(grp->name, name) && m->member[g][port])
			return 1;
	}
	return 0;
}

static int in_any(const struct qos_match *m, const GArray *groups, uint32_t port)
{
	for (guint i = 0; i < groups->len; i++) {
		guint g = g_array_index(groups, guint, i);
		if (g < m->pol->groups->len && m->member[g][port])
			return 1;
	}
	return 0;
}

const struct qos_level *qos_match_level(const struct qos_match *m, const struct fabric *f,
					uint32_t src, uint32_t dst, const struct qos_query *q,
					int *rule)
{
	*rule = -1;
	if (!m || m->f != f || src >= m->n_ports || dst >= m->n_ports)
		return NULL;
	const struct qos_policy *pol = m->pol;
	for (guint i = 0; i < pol->rules->len; i++) {
		const struct qos_match_rule *r = g_ptr_array_index(pol->rules, i);
		if (r->source && r->source->len && !in_any(m, r->source, src))
			continue;
		if (r->destination && r->destination->len && !in_any(m, r->destination, dst))
			continue;
		if (r->qos_class && r->qos_class->len &&
		    (!q->has_qos_class || !qos_ranges_have(r->qos_class, q->qos_class)))
			continue;
		if (r->service_id && r->service_id->len &&
		    (!q->has_service_id || !qos_ranges_have(r->service_id, q->service_id)))
			continue;
		if (r->pkey && r->pkey->len && (!q->has_pkey || !qos_ranges_have(r->pkey, q->pkey & 0x7fff)))
			continue;
		if (r->level >= pol->levels->len)
			continue;
		*rule = (int)i;
		return g_ptr_array_index(pol->levels, r->level);
	}
	return pol->levels->len ? g_ptr_array_index(pol->levels, 0) : NULL;
}
