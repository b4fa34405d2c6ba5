/* SPDX-License-Identifier: BSD-2-Clause */
/* light.c - the light sweep: every switch's SwitchInfo.PortStateChange and our own port's
 * state, so a link change whose trap was lost is still noticed within a sweep interval. */
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric/dr.h"
#include "sm/light.h"

struct light {
	uint32_t changed, failed;
};

static void on_switchinfo(struct transport *t, const struct smp_req *r, int status,
			  const uint8_t *data, void *ctx)
{
	(void)t; (void)r;
	struct light *l = ctx;
	if (status != 0)
		l->failed++;
	else if (mad_get_field((void *)data, 0, IB_SW_STATE_CHANGE_F))
		l->changed++;
}

static void on_portinfo(struct transport *t, const struct smp_req *r, int status,
			const uint8_t *data, void *ctx)
{
	(void)t; (void)r;
	struct light *l = ctx;
	if (status != 0)
		l->failed++;
	else if (mad_get_field((void *)data, 0, IB_PORT_STATE_F) != IBSM_STATE_ACTIVE)
		l->changed++;
}

int light_sweep(struct sm *sm)
{
	struct fabric *f = sm->fabric;
	if (!f)
		return 1;
	struct light l = { 0 };
	struct smp_req r;
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		fabric_smp_to_node(&r, f, f->switches[s].node, IB_MAD_METHOD_GET, IB_ATTR_SWITCH_INFO, 0,
				   on_switchinfo, &l, 0);
		transport_submit(sm->t, &r);
	}
	if (f->pub.sm_port != IBSM_NONE) {
		const struct ibsm_port *p = &f->ports[f->pub.sm_port];
		fabric_smp_to_node(&r, f, p->node, IB_MAD_METHOD_GET, IB_ATTR_PORT_INFO, p->num, on_portinfo, &l, 0);
		transport_submit(sm->t, &r);
	}
	transport_drain(sm->t, &sm->stop);
	if (l.changed || l.failed)
		LOG_I("LSW-0001", "light sweep: %u port state changes, %u switches not answering: "
		      "heavy sweep", l.changed, l.failed);
	return l.changed || l.failed;
}
