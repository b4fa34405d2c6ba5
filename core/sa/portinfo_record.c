/* SPDX-License-Identifier: BSD-2-Clause */
/* portinfo_record.c - PortInfoRecord (IBA 15.2.5.3): EndportLID, PortNum, Options and the
 * PortInfo as the SM last read or wrote it, for every port of every node (a switch's ports
 * under the switch's LID, as OpenSM answers). Its components are the PortInfo fields in wire
 * order with every reserved gap a component of its own, taken from libibmad's field table
 * (sa/fields.h); CapabilityMask and CapabilityMask2 are matched bit by bit when the request's
 * AttributeModifier has bit 31 set, else exactly; Options is not matched but echoed (both as
 * OpenSM's osm_sa_portinfo_record.c). The M_Key reads 0 unless the requester presented our
 * SM_Key. Only the ports
 * the requester shares a partition with, each judged by its own P_Key table (a switch's
 * external ports too), as OpenSM's osm_sa_portinfo_record.c. */
#include <string.h>
#include <infiniband/mad.h>
#include "sa/fields.h"
#include "sa/records.h"

#define PIR_SIZE 68   /* LID 2, PortNum 1, Options 1, PortInfo 64 */
#define PI_BITS 512

static const enum MAD_FIELDS pi_fields[] = {
	IB_PORT_MKEY_F, IB_PORT_GID_PREFIX_F, IB_PORT_LID_F, IB_PORT_SMLID_F, IB_PORT_CAPMASK_F,
	IB_PORT_DIAG_F, IB_PORT_MKEY_LEASE_F, IB_PORT_LOCAL_PORT_F, IB_PORT_LINK_WIDTH_ENABLED_F,
	IB_PORT_LINK_WIDTH_SUPPORTED_F, IB_PORT_LINK_WIDTH_ACTIVE_F, IB_PORT_LINK_SPEED_SUPPORTED_F,
	IB_PORT_STATE_F, IB_PORT_PHYS_STATE_F, IB_PORT_LINK_DOWN_DEF_F, IB_PORT_MKEY_PROT_BITS_F,
	IB_PORT_LMC_F, IB_PORT_LINK_SPEED_ACTIVE_F, IB_PORT_LINK_SPEED_ENABLED_F,
	IB_PORT_NEIGHBOR_MTU_F, IB_PORT_SMSL_F, IB_PORT_VL_CAP_F, IB_PORT_INIT_TYPE_F,
	IB_PORT_VL_HIGH_LIMIT_F, IB_PORT_VL_ARBITRATION_HIGH_CAP_F, IB_PORT_VL_ARBITRATION_LOW_CAP_F,
	IB_PORT_INIT_TYPE_REPLY_F, IB_PORT_MTU_CAP_F, IB_PORT_VL_STALL_COUNT_F, IB_PORT_HOQ_LIFE_F,
	IB_PORT_OPER_VLS_F, IB_PORT_PART_EN_INB_F, IB_PORT_PART_EN_OUTB_F, IB_PORT_FILTER_RAW_INB_F,
	IB_PORT_FILTER_RAW_OUTB_F, IB_PORT_MKEY_VIOL_F, IB_PORT_PKEY_VIOL_F, IB_PORT_QKEY_VIOL_F,
	IB_PORT_GUID_CAP_F, IB_PORT_CLIENT_REREG_F, IB_PORT_MCAST_PKEY_SUPR_ENAB_F,
	IB_PORT_SUBN_TIMEOUT_F, IB_PORT_RESP_TIME_VAL_F, IB_PORT_LOCAL_PHYS_ERR_F,
	IB_PORT_OVERRUN_ERR_F, IB_PORT_MAX_CREDIT_HINT_F, IB_PORT_LINK_ROUND_TRIP_F,
	IB_PORT_CAPMASK2_F, IB_PORT_LINK_SPEED_EXT_ACTIVE_F, IB_PORT_LINK_SPEED_EXT_SUPPORTED_F,
	IB_PORT_LINK_SPEED_EXT_ENABLED_F,
};

static int init(struct sa_layout *l)
{
	unsigned end;
	l->n = 0;
	l->width[l->n++] = 16; /* EndportLID */
	l->width[l->n++] = 8;  /* PortNum */
	l->width[l->n++] = 8;  /* Options */
	static const enum MAD_FIELDS bit_sets[] = { IB_PORT_CAPMASK_F, IB_PORT_CAPMASK2_F, IB_NO_FIELD };
	return sa_layout_add_fields(l, pi_fields, G_N_ELEMENTS(pi_fields), PI_BITS, bit_sets, &end);
}

#define PIR_OPTIONS 2 /* the Options component (byte 3) */

/* Options is no match field: OpenSM 3.3.23 answers every port whatever it says... */
static void query(const struct sa_view *v, uint64_t *mask, uint8_t *record)
{
	(void)v, (void)record;
	*mask &= ~(1ULL << PIR_OPTIONS);
}

/* ...and echoes it in each record when the mask names it (0 otherwise). */
static void answer(uint64_t mask, const uint8_t *query, uint8_t *record)
{
	if (mask & (1ULL << PIR_OPTIONS))
		record[3] = query[3];
}

/* The record of port (if the scan answers one: every port of a switch, under the switch's
 * LID, a CA's or router's ports from 1 that are there; with its PortInfo read; that the
 * requester may see). */
static void one(const struct sa_view *v, int trusted, uint32_t port, GByteArray *out)
{
	const struct fabric *f = v->f;
	const struct ibsm_port *p = &f->ports[port];
	const struct ibsm_node *n = &f->nodes[p->node];
	int sw = n->type == IBSM_SWITCH;
	if ((!sw && !p->num) || !f->px[port].have_portinfo || (!sw && !(p->flags & IBSM_PORT_PRESENT)) ||
	    !sa_view_sees(v, port))
		return;
	uint16_t lid = sw ? f->ports[n->port0].lid : p->lid;
	uint8_t rec[PIR_SIZE] = { 0 };
	rec[0] = (uint8_t)(lid >> 8);
	rec[1] = (uint8_t)lid;
	rec[2] = p->num;
	memcpy(rec + 4, f->px[port].portinfo, 64);
	if (!trusted)
		mad_set_field64(rec + 4, 0, IB_PORT_MKEY_F, 0);
	g_byte_array_append(out, rec, PIR_SIZE);
}

static void build(const struct sa_view *v, int trusted, GByteArray *out)
{
	const struct fabric *f = v->f;
	for (uint32_t node = 0; node < f->pub.n_nodes; node++) {
		const struct ibsm_node *n = &f->nodes[node];
		for (uint32_t pn = n->type == IBSM_SWITCH ? 0 : 1; pn <= n->nports; pn++)
			one(v, trusted, n->port0 + pn, out);
	}
}

extern struct sa_kind sa_portinfo_record;

/* EndportLID: component 0 */
static const struct sa_ix_spec keys[] = {
	{ .bit = 0, .key = SA_IX_PIR_LID },
};

static int build_indexed(const struct sa_view *v, int trusted, uint64_t mask, const uint8_t *query,
			 GByteArray *out)
{
	const uint32_t *ports;
	size_t n;
	if (!sa_index_pick(v->ix, &sa_portinfo_record.layout, keys, G_N_ELEMENTS(keys), mask, query,
			   &ports, &n))
		return 0;
	for (size_t i = 0; i < n; i++)
		one(v, trusted, ports[i], out);
	return 1;
}

struct sa_kind sa_portinfo_record = {
	.layout = { .name = "PortInfoRecord", .attr = 0x12, .size = PIR_SIZE },
	.init = init,
	.build = build,
	.build_indexed = build_indexed,
	.query = query,
	.answer = answer,
};
