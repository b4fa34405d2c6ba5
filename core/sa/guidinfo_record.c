/* SPDX-License-Identifier: BSD-2-Clause */
/* guidinfo_record.c - GUIDInfoRecord (IBA 15.2.5.18): every block of every end port (a CA port
 * with a LID, a switch's port 0), as many as its PortInfo.GUIDCap holds (8 GUIDs a block, at
 * least one): its port GUID at index 0 of block 0; ibsm assigns no alias GUIDs, so every other
 * entry is 0. Only the ports the requester shares a partition with, as OpenSM's
 * osm_sa_guidinfo_record.c. */
#include <infiniband/mad.h>
#include "sa/records.h"

#define GIR_SIZE 72 /* LID 2, BlockNum 1, reserved 1 + 4, 8 GUIDs */

static void build(const struct sa_view *v, int trusted, GByteArray *out)
{
	(void)trusted;
	const struct fabric *f = v->f;
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		const struct ibsm_port *port = &f->ports[p];
		if (!port->lid || !fabric_is_end_port(f, p) || !sa_view_sees(v, p))
			continue;
		unsigned cap = f->px[p].have_portinfo ?
			       mad_get_field(f->px[p].portinfo, 0, IB_PORT_GUID_CAP_F) : 1;
		for (unsigned b = 0; b == 0 || b * 8 < cap; b++) {
			uint8_t rec[GIR_SIZE] = { (uint8_t)(port->lid >> 8), (uint8_t)port->lid, (uint8_t)b };
			for (int i = 0; i < 8 && !b; i++)
				rec[8 + i] = (uint8_t)(port->guid >> (56 - 8 * i));
			g_byte_array_append(out, rec, GIR_SIZE);
		}
	}
}

struct sa_kind sa_guidinfo_record = {
	.layout = { .name = "GUIDInfoRecord", .attr = 0x30, .size = GIR_SIZE, .n = 12,
		    /* LID, BlockNum, reserved, reserved, GUID0..GUID7 */
		    .width = { 16, 8, 8, 32, 64, 64, 64, 64, 64, 64, 64, 64 } },
	.build = build,
};
