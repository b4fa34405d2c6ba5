/* SPDX-License-Identifier: BSD-2-Clause */
/* state_change.c - clears the PortStateChange bits a discovery left set while this SM was not
 * master (sm/state_change.h). */
#include <inttypes.h>
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric/dr.h"
#include "mad/smp.h"
#include "sm/state_change.h"

static void on_cleared(struct transport *t, const struct smp_req *r, int status, const uint8_t *data,
		       void *ctx)
{
	(void)t; (void)data; (void)ctx;
	if (status) {
		char why[64];
		smp_status_text(status, why, sizeof(why));
		LOG_W("PSC-0001", "clearing PortStateChange on switch 0x%016" PRIx64 " (%u hops) failed: %s; "
		      "the next light sweep sees the bit and sweeps again", r->cookie, (unsigned)r->hops, why);
	}
}

uint32_t sweep_reset_state_change(struct sm *sm)
{
	struct fabric *f = sm->fabric;
	if (!f || !sm->t)
		return 0;
	uint32_t sent = 0;
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		uint32_t node = f->switches[s].node;
		uint8_t *si = f->nx[node].switchinfo;
		if (!f->nx[node].have_switchinfo || !mad_get_field(si, 0, IB_SW_STATE_CHANGE_F))
			continue;
		struct smp_req r;
		/* the cookie carries the switch's GUID, for the message if the Set fails */
		fabric_smp_to_node(&r, f, node, IB_MAD_METHOD_SET, IB_ATTR_SWITCH_INFO, 0, on_cleared, NULL,
				   f->nodes[node].guid);
		memcpy(r.data, si, SMP_DATA_SIZE); /* what was read, PortStateChange 1: clears it */
		transport_submit(sm->t, &r);
		mad_set_field(si, 0, IB_SW_STATE_CHANGE_F, 0);
		sent++;
	}
	if (sent)
		LOG_I("PSC-0002", "master now: PortStateChange cleared on %u switches (left set while "
		      "another SM could be master)", sent);
	return sent;
}
