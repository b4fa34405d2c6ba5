/* SPDX-License-Identifier: BSD-2-Clause */
/* mft_record.c - MulticastForwardingTableRecord (IBA 15.2.5.8): per switch, one record per
 * block of 32 MLIDs and position (16 ports) that has a port in it, as OpenSM answers (empty
 * blocks are not listed). The switches' MFTs come from the multicast groups of the
 * generation (v->mft); until multicast exists (issue 12) no group has a member and every
 * block is empty, so the table has no records. */
#include "sa/records.h"

#define MFTR_SIZE 72  /* LID 2, Position 4 bits + reserved 3 + BlockNum 9, reserved 4, 32 masks */

static void build(const struct sa_view *v, int trusted, GByteArray *out)
{
	(void)trusted;
	const struct fabric *f = v->f;
	const struct sa_mft *m = v->mft;
	if (!m)
		return;
	for (uint32_t s = 0; s < f->pub.n_switches && s < m->n_switches; s++) {
		uint16_t lid = f->ports[f->nodes[f->switches[s].node].port0].lid;
		for (uint32_t b = 0; b * 32 < m->n_mlids; b++)
			for (unsigned pos = 0; pos < m->positions; pos++) {
				uint8_t rec[MFTR_SIZE] = { (uint8_t)(lid >> 8), (uint8_t)lid,
							   (uint8_t)(pos << 4 | (b >> 8 & 1)), (uint8_t)b };
				int any = 0;
				for (uint32_t i = 0; i < 32 && b * 32 + i < m->n_mlids; i++) {
					uint16_t mask = m->masks[((size_t)s * m->n_mlids + b * 32 + i) *
								 m->positions + pos];
					rec[8 + 2 * i] = (uint8_t)(mask >> 8);
					rec[9 + 2 * i] = (uint8_t)mask;
					any |= mask != 0;
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
};
