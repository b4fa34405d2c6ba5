/* light.c - the cheap periodic checks between heavy sweeps: a light sweep reads every
 * switch's SwitchInfo.PortStateChange (and our own port), and a standby SM polls the
 * master's SMInfo to notice when it is gone. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <infiniband/mad.h>
#include "log.h"
#include "loop.h"

struct light {
	uint32_t changed, failed, answered;
	uint8_t master_state;
};

static void on_switchinfo(struct transport *t, const struct smp_req *r, int status,
			  const uint8_t *data, void *ctx)
{
	(void)t; (void)r;
	struct light *l = ctx;
	if (status != 0) {
		l->failed++;
		return;
	}
	if (mad_get_field((void *)data, 0, IB_SW_STATE_CHANGE_F))
		l->changed++;
}

static void on_portinfo(struct transport *t, const struct smp_req *r, int status,
			const uint8_t *data, void *ctx)
{
	(void)t; (void)r;
	struct light *l = ctx;
	if (status != 0) {
		l->failed++;
		return;
	}
	if (mad_get_field((void *)data, 0, IB_PORT_STATE_F) != IBSM_STATE_ACTIVE)
		l->changed++;
}

static void dr_get(struct sm *sm, uint32_t node, uint16_t attr, uint32_t mod, smp_done_fn fn,
		   void *ctx)
{
	const struct node_extra *x = &sm->fabric->nx[node];
	struct smp_req r;
	memset(&r, 0, sizeof(r));
	r.method = IB_MAD_METHOD_GET;
	r.dr = 1;
	r.hops = x->dr_hops;
	memcpy(r.path, x->dr_path, sizeof(r.path));
	r.attr = attr;
	r.mod = mod;
	r.done = fn;
	r.ctx = ctx;
	transport_submit(sm->t, &r);
}

int light_sweep(struct sm *sm)
{
	struct fabric *f = sm->fabric;
	if (!f)
		return 1;
	struct light l = { 0 };
	for (uint32_t s = 0; s < f->pub.n_switches; s++)
		dr_get(sm, f->switches[s].node, IB_ATTR_SWITCH_INFO, 0, on_switchinfo, &l);
	if (f->pub.sm_port != IBSM_NONE)
		dr_get(sm, f->ports[f->pub.sm_port].node, IB_ATTR_PORT_INFO,
		       f->ports[f->pub.sm_port].num, on_portinfo, &l);
	transport_drain(sm->t, &sm->stop);
	if (l.changed || l.failed)
		LOG_I("LSW-0001", "light sweep: %u port state changes, %u switches not answering: "
		      "heavy sweep", l.changed, l.failed);
	return l.changed || l.failed;
}

static void on_master(struct transport *t, const struct smp_req *r, int status,
		      const uint8_t *data, void *ctx)
{
	(void)t; (void)r;
	struct light *l = ctx;
	if (status != 0)
		return;
	l->answered = 1;
	l->master_state = (uint8_t)mad_get_field((void *)data, 0, IB_SMINFO_STATE_F);
}

int standby_poll_master(struct sm *sm)
{
	struct fabric *f = sm->fabric;
	if (!f || !sm->master_guid)
		return 0;
	uint32_t port = fabric_port_by_guid(f, sm->master_guid);
	if (port == IBSM_NONE)
		return 0;
	struct light l = { 0 };
	dr_get(sm, f->ports[port].node, IB_ATTR_SMINFO, 0, on_master, &l);
	transport_drain(sm->t, &sm->stop);
	return l.answered && l.master_state == SM_MASTER;
}
