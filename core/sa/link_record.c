/* SPDX-License-Identifier: BSD-2-Clause */
/* link_record.c - LinkRecord (IBA 15.2.5.13): one per direction of every link, FromLID
 * (a switch's LID for its ports, the CA port's own), FromPort, ToPort, ToLID. Only links whose
 * two ends share a partition and the requester one with each end, as OpenSM's
 * osm_sa_link_record.c. */
#include "sa/records.h"

#define LR_SIZE 8

static uint16_t lid_of(const struct fabric *f, uint32_t port)
{
	const struct ibsm_node *n = &f->nodes[f->ports[port].node];
	return n->type == IBSM_SWITCH ? f->ports[n->port0].lid : f->ports[port].lid;
}

static void build(const struct sa_view *v, int trusted, GByteArray *out)
{
	(void)trusted;
	const struct fabric *f = v->f;
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		uint32_t q = f->ports[p].peer;
		if (q == IBSM_NONE || !f->ports[p].num)
			continue;
		/* the two ends share a partition, and the requester one with each end */
		if (!sa_pkeys_share(v->pk, p, q) || !sa_view_sees(v, p) || !sa_view_sees(v, q))
			continue;
		uint16_t from = lid_of(f, p), to = lid_of(f, q);
		uint8_t rec[LR_SIZE] = { (uint8_t)(from >> 8), (uint8_t)from, f->ports[p].num,
					 f->ports[q].num, (uint8_t)(to >> 8), (uint8_t)to, 0, 0 };
		g_byte_array_append(out, rec, LR_SIZE);
	}
}

struct sa_kind sa_link_record = {
	.layout = { .name = "LinkRecord", .attr = 0x20, .size = LR_SIZE, .n = 5,
		    .width = { 16, 8, 8, 16, 16 } }, /* FromLID, FromPort, ToPort, ToLID, reserved */
	.build = build,
};
