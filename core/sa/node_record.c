/* SPDX-License-Identifier: BSD-2-Clause */
/* node_record.c - NodeRecord (IBA 15.2.5.2): one per switch (its port 0) and one per CA or
 * router port that has a LID, as OpenSM answers: LID, reserved, the NodeInfo as the SM read
 * it with that port's GUID and number, the NodeDescription. Only the ports the requester
 * shares a partition with (sa_view_sees), as OpenSM's osm_sa_node_record.c. */
#include <string.h>
#include <infiniband/mad.h>
#include "sa/records.h"

#define NR_SIZE 108

static void node_record(const struct fabric *f, uint32_t node, uint32_t port, GByteArray *out)
{
	const struct ibsm_node *n = &f->nodes[node];
	const struct node_extra *x = &f->nx[node];
	const struct ibsm_port *p = &f->ports[port];
	uint8_t rec[NR_SIZE] = { 0 };
	uint8_t *ni = rec + 4;
	rec[0] = (uint8_t)(p->lid >> 8);
	rec[1] = (uint8_t)p->lid;
	mad_set_field(ni, 0, IB_NODE_BASE_VERS_F, 1);
	mad_set_field(ni, 0, IB_NODE_CLASS_VERS_F, 1);
	mad_set_field(ni, 0, IB_NODE_TYPE_F, n->type);
	mad_set_field(ni, 0, IB_NODE_NPORTS_F, n->nports);
	mad_set_field64(ni, 0, IB_NODE_SYSTEM_GUID_F, n->sysimg_guid);
	mad_set_field64(ni, 0, IB_NODE_GUID_F, n->guid);
	mad_set_field64(ni, 0, IB_NODE_PORT_GUID_F, p->guid);
	mad_set_field(ni, 0, IB_NODE_PARTITION_CAP_F, x->partition_cap);
	mad_set_field(ni, 0, IB_NODE_DEVID_F, x->device_id);
	mad_set_field(ni, 0, IB_NODE_REVISION_F, x->revision);
	mad_set_field(ni, 0, IB_NODE_LOCAL_PORT_F, p->num); /* the record's port: 0 for a switch */
	mad_set_field(ni, 0, IB_NODE_VENDORID_F, x->vendor_id);
	if (n->desc) /* 64 bytes, NUL-padded, not NUL-terminated when full */
		memcpy(rec + 44, n->desc, strnlen(n->desc, 64));
	g_byte_array_append(out, rec, NR_SIZE);
}

/* The record of port (if the scan answers one: a switch's port 0, a CA's or router's other
 * ports, with a LID, that the requester may see). */
static void one(const struct sa_view *v, uint32_t port, GByteArray *out)
{
	const struct fabric *f = v->f;
	const struct ibsm_port *p = &f->ports[port];
	int sw = f->nodes[p->node].type == IBSM_SWITCH;
	if ((sw ? p->num == 0 : p->num != 0) && p->lid && sa_view_sees(v, port))
		node_record(f, p->node, port, out);
}

static void build(const struct sa_view *v, int trusted, GByteArray *out)
{
	(void)trusted; /* no key in a NodeRecord */
	const struct fabric *f = v->f;
	for (uint32_t node = 0; node < f->pub.n_nodes; node++) {
		const struct ibsm_node *n = &f->nodes[node];
		for (uint32_t pn = n->type == IBSM_SWITCH ? 0 : 1; pn <= n->nports; pn++)
			one(v, n->port0 + pn, out);
	}
}

extern struct sa_kind sa_node_record;

/* LID, NodeGUID, PortGUID: components 0, 7, 8 */
static const struct sa_ix_spec keys[] = {
	{ .bit = 0, .key = SA_IX_NR_LID },
	{ .bit = 7, .key = SA_IX_NR_NODE_GUID },
	{ .bit = 8, .key = SA_IX_NR_PORT_GUID },
};

static int build_indexed(const struct sa_view *v, int trusted, uint64_t mask, const uint8_t *query,
			 GByteArray *out)
{
	(void)trusted;
	const uint32_t *ports;
	size_t n;
	if (!sa_index_pick(v->ix, &sa_node_record.layout, keys, G_N_ELEMENTS(keys), mask, query,
			   &ports, &n))
		return 0;
	for (size_t i = 0; i < n; i++)
		one(v, ports[i], out);
	return 1;
}

/* A LID asked for names the port whose LMC range holds it: the record (which carries the base
 * LID) matches any of them, as OpenSM's osm_sa_node_record.c. */
static void query(const struct sa_view *v, uint64_t *mask, uint8_t *record)
{
	if (!(*mask & 1))
		return;
	const struct fabric *f = v->f;
	uint16_t lid = (uint16_t)(record[0] << 8 | record[1]);
	uint32_t p = lid && lid <= f->pub.max_lid ? f->pub.lid_port[lid] : IBSM_NONE;
	if (p != IBSM_NONE && f->ports[p].lid) {
		record[0] = (uint8_t)(f->ports[p].lid >> 8);
		record[1] = (uint8_t)f->ports[p].lid;
	}
}

struct sa_kind sa_node_record = {
	.layout = { .name = "NodeRecord", .attr = 0x11, .size = NR_SIZE, .n = 15,
		    /* LID, reserved, NodeInfo: BaseVersion, ClassVersion, NodeType, NumPorts,
		     * SystemImageGUID, NodeGUID, PortGUID, PartitionCap, DeviceID, Revision,
		     * LocalPortNum, VendorID; NodeDescription */
		    .width = { 16, 16, 8, 8, 8, 8, 64, 64, 64, 16, 16, 32, 8, 24, 512 } },
	.build = build,
	.build_indexed = build_indexed,
	.query = query,
};
