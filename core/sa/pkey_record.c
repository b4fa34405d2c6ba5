/* SPDX-License-Identifier: BSD-2-Clause */
/* pkey_record.c - P_KeyTableRecord (IBA 15.2.5.11): every 32-entry block of every port whose
 * table the SA knows (what the programming pass left there): an end port under its own LID,
 * a switch's external ports under the switch's LID with their port number. */
#include "sa/records.h"

#define PKR_SIZE 72 /* LID 2, BlockNum 2, PortNum 1, reserved 3, 32 P_Keys */

static void build(const struct sa_view *v, int trusted, GByteArray *out)
{
	(void)trusted;
	const struct fabric *f = v->f;
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		uint32_t n;
		const uint16_t *t = sa_pkeys_of(v->pk, p, &n);
		if (!t)
			continue;
		const struct ibsm_port *port = &f->ports[p];
		const struct ibsm_node *node = &f->nodes[port->node];
		uint16_t lid = node->type == IBSM_SWITCH ? f->ports[node->port0].lid : port->lid;
		for (uint32_t b = 0; b * 32 < n; b++) {
			/* BlockNum least significant byte first: OpenSM's byte order, which the
			 * clients (saquery) read; the IBA's would be the other */
			uint8_t rec[PKR_SIZE] = { (uint8_t)(lid >> 8), (uint8_t)lid, (uint8_t)b,
						  (uint8_t)(b >> 8), port->num };
			for (uint32_t i = 0; i < 32 && b * 32 + i < n; i++) {
				rec[8 + 2 * i] = (uint8_t)(t[b * 32 + i] >> 8);
				rec[9 + 2 * i] = (uint8_t)t[b * 32 + i];
			}
			g_byte_array_append(out, rec, PKR_SIZE);
		}
	}
}

struct sa_kind sa_pkey_record = {
	.layout = { .name = "P_KeyTableRecord", .attr = 0x33, .size = PKR_SIZE, .n = 5,
		    .width = { 16, 16, 8, 24, 512 } }, /* LID, BlockNum, PortNum, reserved, table */
	.build = build,
	.trusted_only = 1,
	.by_lid = 1, .port_at = 4, /* PortNum */
};
