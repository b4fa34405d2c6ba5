/* SPDX-License-Identifier: BSD-2-Clause */
/* partitions_expand.c - turns a parsed partition policy into the P_Keys each end port of a
 * fabric must hold (policy order, full bit for full members, "both" as two keys). Works on
 * the public fabric view only. */
#include <string.h>
#include "policy/partitions.h"

/* End ports: CA and router ports with a link, and switch port 0. */
static int end_port(const struct ibsm_fabric *f, uint32_t p)
{
	const struct ibsm_port *pt = ibsm_port_at(f, p);
	if (!(pt->flags & IBSM_PORT_PRESENT) || pt->node >= f->n_nodes)
		return 0;
	if (ibsm_node_at(f, pt->node)->type == IBSM_SWITCH)
		return pt->num == 0;
	return pt->peer != IBSM_NONE;
}

/* full over limited; both stays both */
static uint8_t combine(uint8_t a, uint8_t b)
{
	if (a == PART_BOTH || b == PART_BOTH)
		return PART_BOTH;
	return a > b ? a : b;
}

static int type_matches(const struct ibsm_fabric *f, uint32_t p, enum part_selector sel)
{
	uint8_t t = ibsm_node_at(f, ibsm_port_at(f, p)->node)->type;
	switch (sel) {
	case PART_SEL_ALL: return 1;
	case PART_SEL_ALL_CAS: return t == IBSM_CA;
	case PART_SEL_ALL_SWITCHES: return t == IBSM_SWITCH;
	case PART_SEL_ALL_ROUTERS: return t == IBSM_ROUTER;
	default: return 0;
	}
}

struct port_pkeys *part_policy_expand_msgs(const struct part_policy *pol,
					   const struct ibsm_fabric *f, uint32_t sm_port,
					   GPtrArray *skipped, GPtrArray *notes)
{
	uint32_t n = f->n_ports;
	struct port_pkeys *out = g_new0(struct port_pkeys, n ? n : 1);
	GHashTable *by_guid = g_hash_table_new(g_int64_hash, g_int64_equal);
	uint8_t *is_end = g_new0(uint8_t, n ? n : 1);
	for (uint32_t p = 0; p < n; p++) {
		is_end[p] = (uint8_t)end_port(f, p);
		if (is_end[p])
			g_hash_table_insert(by_guid, (gpointer)&ibsm_port_at(f, p)->guid, GUINT_TO_POINTER(p + 1));
	}
	int self_ok = sm_port < n && is_end[sm_port];
	uint8_t *mem = g_new0(uint8_t, n ? n : 1);
	GArray **keys = g_new0(GArray *, n ? n : 1);
	const char *src = pol->source ? pol->source : "<partitions>";
	for (guint i = 0; i < pol->parts->len; i++) {
		const struct partition *part = pol->parts->pdata[i];
		memset(mem, 0, n);
		for (guint j = 0; j < part->members->len; j++) {
			const struct part_member *m = &g_array_index(part->members, struct part_member, j);
			switch (m->sel) {
			case PART_SEL_GUID: {
				gpointer v = g_hash_table_lookup(by_guid, &m->guid);
				if (!v) {
					char *s = g_strdup_printf("%s:%u:%u: port GUID 0x%016" G_GINT64_MODIFIER
								  "x is no end port of the fabric, skipped",
								  src, m->line, m->col, (guint64)m->guid);
					if (skipped)
						g_ptr_array_add(skipped, s);
					else
						g_free(s);
					break;
				}
				uint32_t p = GPOINTER_TO_UINT(v) - 1;
				mem[p] = combine(mem[p], m->membership);
				break;
			}
			case PART_SEL_SELF:
				if (self_ok)
					mem[sm_port] = combine(mem[sm_port], m->membership);
				break;
			case PART_SEL_ALL_VCAS:
				if (notes)
					g_ptr_array_add(notes, g_strdup_printf("%s:%u:%u: ALL_VCAS: no virtual "
									       "ports, nothing added", src,
									       m->line, m->col));
				break;
			default:
				for (uint32_t p = 0; p < n; p++)
					if (is_end[p] && type_matches(f, p, m->sel))
						mem[p] = combine(mem[p], m->membership);
				break;
			}
		}
		for (uint32_t p = 0; p < n; p++) {
			if (!mem[p])
				continue;
			if (!keys[p])
				keys[p] = g_array_new(FALSE, FALSE, sizeof(uint16_t));
			uint16_t full = (uint16_t)(part->pkey | PART_FULL_BIT), lim = part->pkey;
			if (mem[p] & PART_FULL)
				g_array_append_val(keys[p], full);
			if (mem[p] & PART_LIMITED)
				g_array_append_val(keys[p], lim);
			if (part->indx0 && !out[p].indx0_key)
				out[p].indx0_key = (mem[p] & PART_FULL) ? full : lim;
		}
	}
	for (uint32_t p = 0; p < n; p++) {
		if (!keys[p])
			continue;
		out[p].n = keys[p]->len;
		out[p].keys = (uint16_t *)(void *)g_array_free(keys[p], FALSE);
	}
	g_free(keys);
	g_free(mem);
	g_free(is_end);
	g_hash_table_destroy(by_guid);
	return out;
}

struct port_pkeys *part_policy_expand(const struct part_policy *p, const struct ibsm_fabric *f,
				      uint32_t sm_port)
{
	return part_policy_expand_msgs(p, f, sm_port, NULL, NULL);
}

void part_pkeys_free(struct port_pkeys *pk, uint32_t n_ports)
{
	if (!pk)
		return;
	for (uint32_t i = 0; i < n_ports; i++)
		g_free(pk[i].keys);
	g_free(pk);
}
