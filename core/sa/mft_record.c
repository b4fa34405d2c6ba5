/* SPDX-License-Identifier: BSD-2-Clause */
/* mft_record.c - MulticastForwardingTableRecord (IBA 15.2.5.8): per switch, one record per
 * block of 32 MLIDs and position (16 ports) that has a port in it, as OpenSM answers (empty
 * blocks are not listed), from what the switches hold as the programmer knows it
 * (program/mft.h): a block whose Set failed is not listed. */
#include "sa/records.h"

#define MFTR_SIZE 72  /* LID 2, Position 4 bits + reserved 3 + BlockNum 9, reserved 4, 32 masks */

static void build(const struct sa_view *v, int trusted, GByteArray *out)
{
	(void)trusted;
	const struct fabric *f = v->f;
	if (!v->mft)
		return;
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		const struct ibsm_node *n = &f->nodes[f->switches[s].node];
		uint16_t lid = f->ports[n->port0].lid;
		uint8_t positions;
		uint32_t nblocks = mft_memory_nblocks(v->mft, n->guid, &positions);
		for (uint32_t b = 0; b < nblocks; b++)
			for (uint8_t pos = 0; pos < positions; pos++) {
				uint16_t masks[MFT_BLOCK_MLIDS];
				if (!mft_memory_block(v->mft, n->guid, b, pos, masks))
					continue;
				uint8_t rec[MFTR_SIZE] = { (uint8_t)(lid >> 8), (uint8_t)lid,
							   (uint8_t)(pos << 4 | (b >> 8 & 1)), (uint8_t)b };
				int any = 0;
				for (uint32_t i = 0; i < MFT_BLOCK_MLIDS; i++) {
					rec[8 + 2 * i] = (uint8_t)(masks[i] >> 8);
					rec[9 + 2 * i] = (uint8_t)masks[i];
					any |= masks[i] != 0;
				}
				if (any)
					g_byte_array_append(out, rec, MFTR_SIZE);
			}
	}
}

struct sa_kind sa_mft_record = {
	.layout = { .name = "MulticastForwardingTableRecord", .attr = 0x17, .size = MFTR_SIZE, .n = 6,
		    /* LID, Position, reserved, BlockNum, reserved, MulticastForwardingTable */
		    .width = { 16, 4, 3, 9, 32, 512 } },
	.build = build,
	.by_lid = 1,
};
