/* SPDX-License-Identifier: BSD-2-Clause */
/* switchinfo_record.c - SwitchInfoRecord (IBA 15.2.5.4): LID, reserved and the SwitchInfo of
 * every switch as the SM last read it. Components: the SwitchInfo fields in wire order, from
 * libibmad's field table (sa/fields.h), reserved gaps included. */
#include <string.h>
#include <infiniband/mad.h>
#include "sa/fields.h"
#include "sa/records.h"

#define SI_MAX_BYTES 64

static const enum MAD_FIELDS si_fields[] = {
	IB_SW_LINEAR_FDB_CAP_F, IB_SW_RANDOM_FDB_CAP_F, IB_SW_MCAST_FDB_CAP_F, IB_SW_LINEAR_FDB_TOP_F,
	IB_SW_DEF_PORT_F, IB_SW_DEF_MCAST_PRIM_F, IB_SW_DEF_MCAST_NOT_PRIM_F, IB_SW_LIFE_TIME_F,
	IB_SW_STATE_CHANGE_F, IB_SW_OPT_SLTOVL_MAPPING_F, IB_SW_LIDS_PER_PORT_F,
	IB_SW_PARTITION_ENFORCE_CAP_F, IB_SW_PARTITION_ENF_INB_F, IB_SW_PARTITION_ENF_OUTB_F,
	IB_SW_FILTER_RAW_INB_F, IB_SW_FILTER_RAW_OUTB_F, IB_SW_ENHANCED_PORT0_F, IB_SW_MCAST_FDB_TOP_F,
};

static size_t si_bytes; /* SwitchInfo bytes in the record: through its last field */

static int init(struct sa_layout *l)
{
	unsigned end;
	l->n = 0;
	l->width[l->n++] = 16; /* LID */
	l->width[l->n++] = 16; /* reserved */
	if (sa_layout_add_fields(l, si_fields, G_N_ELEMENTS(si_fields), 0, NULL, &end) < 0 ||
	    end / 8 > SI_MAX_BYTES)
		return -1;
	si_bytes = end / 8;
	l->size = 4 + si_bytes;
	return 0;
}

static void build(const struct sa_view *v, int trusted, GByteArray *out)
{
	(void)trusted;
	const struct fabric *f = v->f;
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		uint32_t node = f->switches[s].node;
		if (!f->nx[node].have_switchinfo)
			continue;
		uint16_t lid = f->ports[f->nodes[node].port0].lid;
		uint8_t rec[4 + SI_MAX_BYTES] = { (uint8_t)(lid >> 8), (uint8_t)lid };
		memcpy(rec + 4, f->nx[node].switchinfo, si_bytes);
		g_byte_array_append(out, rec, (guint)(4 + si_bytes));
	}
}

struct sa_kind sa_switchinfo_record = {
	.layout = { .name = "SwitchInfoRecord", .attr = 0x14 },
	.init = init,
	.build = build,
	.by_lid = 1,
};
