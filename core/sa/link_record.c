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

/* The record of the link from port p (if p is linked, not a port 0, and its two ends share a
 * partition, and the requester one with each end). */
static void one(const struct sa_view *v, uint32_t p, GByteArray *out)
{
	const struct fabric *f = v->f;
	uint32_t q = f->ports[p].peer;
	if (q == IBSM_NONE || !f->ports[p].num)
		return;
	if (!sa_pkeys_share(v->pk, p, q) || !sa_view_sees(v, p) || !sa_view_sees(v, q))
		return;
	uint16_t from = lid_of(f, p), to = lid_of(f, q);
	uint8_t rec[LR_SIZE] = { (uint8_t)(from >> 8), (uint8_t)from, f->ports[p].num,
				 f->ports[q].num, (uint8_t)(to >> 8), (uint8_t)to, 0, 0 };
	g_byte_array_append(out, rec, LR_SIZE);
}

static void build(const struct sa_view *v, int trusted, GByteArray *out)
{
	(void)trusted;
	for (uint32_t p = 0; p < v->f->pub.n_ports; p++)
		one(v, p, out);
}

extern struct sa_kind sa_link_record;

/* FromLID, ToLID: components 0 and 3 */
static const struct sa_ix_spec keys[] = {
	{ .bit = 0, .key = SA_IX_LR_FROM },
	{ .bit = 3, .key = SA_IX_LR_TO },
};

static int build_indexed(const struct sa_view *v, int trusted, uint64_t mask, const uint8_t *query,
			 GByteArray *out)
{
	(void)trusted;
	const uint32_t *ports;
	size_t n;
	if (!sa_index_pick(v->ix, &sa_link_record.layout, keys, G_N_ELEMENTS(keys), mask, query,
			   &ports, &n))
		return 0;
	for (size_t i = 0; i < n; i++)
		one(v, ports[i], out);
	return 1;
}

struct sa_kind sa_link_record = {
	.layout = { .name = "LinkRecord", .attr = 0x20, .size = LR_SIZE, .n = 5,
		    .width = { 16, 8, 8, 16, 16 } }, /* FromLID, FromPort, ToPort, ToLID, reserved */
	.build = build,
	.build_indexed = build_indexed,
};
