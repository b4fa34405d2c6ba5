/* SPDX-License-Identifier: BSD-2-Clause */
/* records.c - the table of record kinds the SA serves, and what of them a requester may see
 * (sa/records.h). */
#include <string.h>
#include "sa/records.h"

extern struct sa_kind sa_node_record, sa_portinfo_record, sa_link_record, sa_lft_record,
	sa_guidinfo_record, sa_sminfo_record, sa_pkey_record, sa_switchinfo_record, sa_sl2vl_record,
	sa_vlarb_record, sa_mft_record;

static struct sa_kind *const kinds[] = { &sa_node_record, &sa_portinfo_record, &sa_link_record,
					 &sa_lft_record, &sa_guidinfo_record, &sa_sminfo_record,
					 &sa_pkey_record, &sa_switchinfo_record, &sa_sl2vl_record,
					 &sa_vlarb_record, &sa_mft_record };

int sa_kinds_check(const char **bad)
{
	for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++) {
		if ((kinds[i]->init && kinds[i]->init(&kinds[i]->layout) < 0) ||
		    sa_layout_init(&kinds[i]->layout) < 0) {
			if (bad)
				*bad = kinds[i]->layout.name;
			return -1;
		}
	}
	return 0;
}

const struct sa_kind *sa_kind_of(uint16_t attr)
{
	for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++)
		if (kinds[i]->layout.attr == attr)
			return kinds[i];
	return NULL;
}

int sa_view_sees(const struct sa_view *v, uint32_t p)
{
	if (p == IBSM_NONE) /* a record about no port of the generation */
		return !v->pk;
	return sa_pkeys_share(v->pk, v->requester, p);
}

/* The kinds whose builder shows every port's records: their records begin with the LID of a
 * port (a switch's LID names its port 0), and some name one of a switch's ports by number at
 * byte port_at (0: none). Each record is shown when the requester shares a partition with that
 * port, as OpenSM 3.3.23 answers them (its osm_sa_slvl_record.c, osm_sa_vlarb_record.c,
 * osm_sa_pkey_record.c, osm_sa_sw_info_record.c, osm_sa_lft_record.c, osm_sa_mft_record.c,
 * osm_sa_sminfo_record.c). NodeRecord, PortInfoRecord, LinkRecord and GUIDInfoRecord judge each
 * port in their builders. */
static const struct { uint16_t attr; uint8_t port_at; } by_lid[] = {
	{ 0x13, 3 },   /* SL2VLTableRecord: OutputPortNum */
	{ 0x36, 2 },   /* VLArbitrationTableRecord: OutputPortNum */
	{ 0x33, 4 },   /* P_KeyTableRecord: PortNum */
	{ 0x14, 0 },   /* SwitchInfoRecord */
	{ 0x15, 0 },   /* LinearForwardingTableRecord */
	{ 0x17, 0 },   /* MulticastForwardingTableRecord */
	{ 0x18, 0 },   /* SMInfoRecord */
};

/* The port a record of size bytes names by its LID (and port number at port_at), or
 * IBSM_NONE. */
static uint32_t named_port(const struct fabric *f, const uint8_t *rec, size_t size, uint8_t port_at)
{
	uint16_t lid = (uint16_t)(rec[0] << 8 | rec[1]);
	uint32_t p = lid && lid <= f->pub.max_lid ? f->pub.lid_port[lid] : IBSM_NONE;
	if (p == IBSM_NONE)
		return p;
	const struct ibsm_node *n = &f->nodes[f->ports[p].node];
	if (n->type != IBSM_SWITCH)
		return p;
	if (port_at && port_at < size && rec[port_at] <= n->nports)
		return n->port0 + rec[port_at];
	return n->port0;
}

void sa_kind_build(const struct sa_kind *k, const struct sa_view *v, int trusted, GByteArray *out)
{
	guint start = out->len;
	k->build(v, trusted, out);
	size_t i, size = k->layout.size;
	for (i = 0; i < G_N_ELEMENTS(by_lid) && by_lid[i].attr != k->layout.attr; i++)
		;
	if (i == G_N_ELEMENTS(by_lid) || !v->pk)
		return;
	guint kept = start;
	for (guint off = start; off + size <= out->len; off += (guint)size) {
		if (!sa_view_sees(v, named_port(v->f, out->data + off, size, by_lid[i].port_at)))
			continue;
		if (kept != off)
			memmove(out->data + kept, out->data + off, size);
		kept += (guint)size;
	}
	g_byte_array_set_size(out, kept);
}
