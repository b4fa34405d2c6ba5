/* SPDX-License-Identifier: BSD-2-Clause */
/* qos_records.c - SL2VLTableRecord (IBA 15.2.5.4) and VLArbitrationTableRecord (15.2.5.9):
 * the SL-to-VL tables of every end port (a CA or router port: one table, ports 0/0) and of
 * every (input, output) port pair of each switch, ports 0 to NumPorts; the VL arbitration
 * blocks 1-4 (low 0-31, low 32-63, high 0-31, high 32-63) of every switch port and CA port.
 * The tables are what the ports hold as the programmer knows them (program/vltables.h: read or
 * written under -Q); a table not known reads as zeros, which is also what OpenSM 3.3.23
 * answers without QoS. */
#include <string.h>
#include <infiniband/mad.h>
#include "sa/records.h"

#define SL2VLR_SIZE 16  /* LID 2, InputPortNum 1, OutputPortNum 1, reserved 4, table 8 */
#define VLAR_SIZE 72    /* LID 2, OutputPortNum 1, BlockNum 1, reserved 4, 32 entries */

/* The table as the programmer knows it into out (len bytes), zeros when not known. */
static void held(const struct sa_view *v, uint64_t guid, uint8_t port, uint16_t attr, uint32_t mod,
		 uint8_t *out, uint8_t len)
{
	uint8_t have = 0;
	const uint8_t *d = v->vlt ? vlt_memory_held(v->vlt, guid, port, attr, mod, &have) : NULL;
	if (d)
		memcpy(out, d, have < len ? have : len);
}

static void sl2vl(const struct sa_view *v, int trusted, GByteArray *out)
{
	(void)trusted;
	const struct fabric *f = v->f;
	for (uint32_t n = 0; n < f->pub.n_nodes; n++) {
		const struct ibsm_node *node = &f->nodes[n];
		if (node->sw != IBSM_NONE) {
			uint16_t lid = f->ports[node->port0].lid;
			if (!lid)
				continue;
			for (unsigned in = 0; in <= node->nports; in++)
				for (unsigned o = 0; o <= node->nports; o++) {
					uint8_t rec[SL2VLR_SIZE] = { (uint8_t)(lid >> 8), (uint8_t)lid,
								     (uint8_t)in, (uint8_t)o };
					held(v, node->guid, 0, IB_ATTR_SLVL_TABLE, in << 8 | o, rec + 8, 8);
					g_byte_array_append(out, rec, SL2VLR_SIZE);
				}
			continue;
		}
		for (unsigned i = 1; i <= node->nports; i++) {
			uint16_t lid = f->ports[node->port0 + i].lid;
			if (!lid)
				continue;
			uint8_t rec[SL2VLR_SIZE] = { (uint8_t)(lid >> 8), (uint8_t)lid };
			held(v, node->guid, (uint8_t)i, IB_ATTR_SLVL_TABLE, 0, rec + 8, 8);
			g_byte_array_append(out, rec, SL2VLR_SIZE);
		}
	}
}

static void vlarb(const struct sa_view *v, int trusted, GByteArray *out)
{
	(void)trusted;
	const struct fabric *f = v->f;
	for (uint32_t n = 0; n < f->pub.n_nodes; n++) {
		const struct ibsm_node *node = &f->nodes[n];
		int sw = node->sw != IBSM_NONE;
		for (unsigned i = sw ? 0 : 1; i <= node->nports; i++) {
			uint16_t lid = f->ports[node->port0 + (sw ? 0 : i)].lid;
			if (!lid)
				continue;
			for (uint8_t b = 1; b <= 4; b++) {
				uint8_t rec[VLAR_SIZE] = { (uint8_t)(lid >> 8), (uint8_t)lid, (uint8_t)i, b };
				held(v, node->guid, sw ? 0 : (uint8_t)i, IB_ATTR_VL_ARBITRATION,
				     (uint32_t)b << 16 | (sw ? i : 0), rec + 8, 64);
				g_byte_array_append(out, rec, VLAR_SIZE);
			}
		}
	}
}

struct sa_kind sa_sl2vl_record = {
	.layout = { .name = "SL2VLTableRecord", .attr = 0x13, .size = SL2VLR_SIZE, .n = 5,
		    /* LID, InputPortNum, OutputPortNum, reserved, SLtoVLMappingTable */
		    .width = { 16, 8, 8, 32, 64 } },
	.build = sl2vl,
	.by_lid = 1, .port_at = 3, /* OutputPortNum */
};

/* A CA or router port's tables are asked for with OutputPortNum 0 (osmtest does, OpenSM
 * answers with the port the LID names): port 0 of a LID that is not a switch's means its port. */
static void vlarb_query(const struct sa_view *v, uint64_t *mask, uint8_t *q)
{
	if ((*mask & 3) != 3 || q[2] != 0)
		return;
	uint16_t lid = (uint16_t)(q[0] << 8 | q[1]);
	const struct fabric *f = v->f;
	uint32_t p = lid <= f->pub.max_lid ? f->pub.lid_port[lid] : IBSM_NONE;
	if (p != IBSM_NONE && f->nodes[f->ports[p].node].type != IBSM_SWITCH)
		q[2] = f->ports[p].num;
}

struct sa_kind sa_vlarb_record = {
	.layout = { .name = "VLArbitrationTableRecord", .attr = 0x36, .size = VLAR_SIZE, .n = 5,
		    /* LID, OutputPortNum, BlockNum, reserved, VLArbitrationTable */
		    .width = { 16, 8, 8, 32, 512 } },
	.build = vlarb,
	.query = vlarb_query,
	.by_lid = 1, .port_at = 2, /* OutputPortNum */
};
