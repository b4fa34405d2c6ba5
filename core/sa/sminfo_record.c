/* SPDX-License-Identifier: BSD-2-Clause */
/* sminfo_record.c - SMInfoRecord (IBA 15.2.5.17): this SM (its port's LID and GUID, priority,
 * state, ActCount as the SM last told the SA), then every other SM its last SMInfo poll found,
 * as it answered; an SM_Key reads 0 unless the requester presented ours. */
#include <string.h>
#include <infiniband/mad.h>
#include "sa/records.h"

#define SMIR_SIZE 25 /* LID 2, reserved 2, SMInfo 21 */

static void build(const struct sa_view *v, int trusted, GByteArray *out)
{
	const struct fabric *f = v->f;
	if (f->pub.sm_port == IBSM_NONE)
		return;
	const struct ibsm_port *p = &f->ports[f->pub.sm_port];
	uint8_t rec[SMIR_SIZE + 3] = { (uint8_t)(p->lid >> 8), (uint8_t)p->lid };
	uint8_t *smi = rec + 4;
	mad_set_field64(smi, 0, IB_SMINFO_GUID_F, p->guid);
	mad_set_field64(smi, 0, IB_SMINFO_KEY_F, trusted ? v->self.sm_key : 0);
	mad_set_field(smi, 0, IB_SMINFO_ACT_F, v->self.act_count);
	mad_set_field(smi, 0, IB_SMINFO_PRIO_F, v->self.priority);
	mad_set_field(smi, 0, IB_SMINFO_STATE_F, v->self.state);
	g_byte_array_append(out, rec, SMIR_SIZE);
	for (unsigned i = 0; i < v->n_remote; i++) {
		const struct sa_remote_sm *o = &v->remote[i];
		memset(rec, 0, sizeof(rec));
		rec[0] = (uint8_t)(o->lid >> 8);
		rec[1] = (uint8_t)o->lid;
		mad_set_field64(smi, 0, IB_SMINFO_GUID_F, o->guid);
		mad_set_field64(smi, 0, IB_SMINFO_KEY_F, trusted ? o->sm_key : 0);
		mad_set_field(smi, 0, IB_SMINFO_ACT_F, o->act_count);
		mad_set_field(smi, 0, IB_SMINFO_PRIO_F, o->priority);
		mad_set_field(smi, 0, IB_SMINFO_STATE_F, o->state);
		g_byte_array_append(out, rec, SMIR_SIZE);
	}
}

struct sa_kind sa_sminfo_record = {
	.layout = { .name = "SMInfoRecord", .attr = 0x18, .size = SMIR_SIZE, .n = 7,
		    /* LID, reserved, GUID, SM_Key, ActCount, Priority, SMState */
		    .width = { 16, 16, 64, 64, 32, 4, 4 } },
	.build = build,
	.by_lid = 1,
};
