/* SPDX-License-Identifier: BSD-2-Clause */
/* lft_record.c - LinearForwardingTableRecord (IBA 15.2.5.6): per switch, one record per
 * 64-entry block up to its top LID, the entries the routing in force put there (what the
 * programming pass wrote: the switches hold these tables). */
#include <string.h>
#include "sa/records.h"

#define LFTR_SIZE 72 /* LID 2, BlockNum 2, reserved 4, 64 entries */

static void build(const struct sa_view *v, int trusted, GByteArray *out)
{
	(void)trusted;
	const struct fabric *f = v->f;
	const struct routing_result *r = v->r;
	if (!r)
		return;
	for (uint32_t s = 0; s < f->pub.n_switches && s < r->n_switches; s++) {
		const struct ibsm_node *n = &f->nodes[f->switches[s].node];
		uint16_t lid = f->ports[n->port0].lid;
		const uint8_t *row = r->lft + (size_t)s * r->stride;
		uint32_t top = r->stride ? r->stride - 1 : 0;
		for (uint32_t b = 0; b * 64 <= top; b++) {
			uint8_t rec[LFTR_SIZE] = { (uint8_t)(lid >> 8), (uint8_t)lid,
						   (uint8_t)(b >> 8), (uint8_t)b };
			for (uint32_t i = 0; i < 64; i++) {
				uint32_t l = b * 64 + i;
				rec[8 + i] = l < r->stride ? row[l] : 0xFF;
			}
			g_byte_array_append(out, rec, LFTR_SIZE);
		}
	}
}

struct sa_kind sa_lft_record = {
	.layout = { .name = "LinearForwardingTableRecord", .attr = 0x15, .size = LFTR_SIZE, .n = 4,
		    .width = { 16, 16, 32, 512 } }, /* LID, BlockNum, reserved, LinearForwardingTable */
	.build = build,
	.by_lid = 1,
};
