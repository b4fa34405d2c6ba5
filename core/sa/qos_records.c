/* SPDX-License-Identifier: BSD-2-Clause */
/* qos_records.c - SL2VLTableRecord (IBA 15.2.5.4) and VLArbitrationTableRecord (15.2.5.9):
 * the SL-to-VL tables of every end port (a CA or router port: one table, ports 0/0) and of
 * every (input, output) port pair of each switch, ports 0 to NumPorts; the VL arbitration
 * blocks 1-4 (low 0-31, low 32-63, high 0-31, high 32-63) of every switch port and CA port.
 * The core programs neither table yet (QoS programming is issue 13, which publishes what it
 * wrote with the generation), so the records carry the tables as this SM knows them: nothing
 * mapped, no weights (all zero) — the same records OpenSM 3.3.23 answers without QoS. */
#include "sa/records.h"

#define SL2VLR_SIZE 16  /* LID 2, InputPortNum 1, OutputPortNum 1, reserved 4, table 8 */
#define VLAR_SIZE 72    /* LID 2, OutputPortNum 1, BlockNum 1, reserved 4, 32 entries */

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
					g_byte_array_append(out, rec, SL2VLR_SIZE);
				}
			continue;
		}
		for (unsigned i = 1; i <= node->nports; i++) {
			uint16_t lid = f->ports[node->port0 + i].lid;
			if (!lid)
				continue;
			uint8_t rec[SL2VLR_SIZE] = { (uint8_t)(lid >> 8), (uint8_t)lid };
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
};

struct sa_kind sa_vlarb_record = {
	.layout = { .name = "VLArbitrationTableRecord", .attr = 0x36, .size = VLAR_SIZE, .n = 5,
		    /* LID, OutputPortNum, BlockNum, reserved, VLArbitrationTable */
		    .width = { 16, 8, 8, 32, 512 } },
	.build = vlarb,
};
