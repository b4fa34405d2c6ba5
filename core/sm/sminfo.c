/* SPDX-License-Identifier: BSD-2-Clause */
/* sminfo.c - the SM's identity on the wire: answers SMInfo Get (GUID, priority, state,
 * ActCount; the SM_Key only to a requester presenting it), asks every other IsSM port for its
 * SMInfo to decide master or standby, and polls the master while standby. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric/dr.h"
#include "sm/sminfo.h"

static uint64_t our_sm_key(const struct sm *sm)
{
	return sm->opt->sm_key ? sm->opt->sm_key : SM_KEY_DEFAULT;
}

/* with_key: the requester presented our SM_Key, so it may see it (else the key reads 0) */
static void fill_sminfo(const struct sm *sm, uint8_t *data, int with_key)
{
	memset(data, 0, SMP_DATA_SIZE);
	mad_set_field64(data, 0, IB_SMINFO_GUID_F, sm->port_guid);
	mad_set_field64(data, 0, IB_SMINFO_KEY_F, with_key ? our_sm_key(sm) : 0);
	mad_set_field(data, 0, IB_SMINFO_ACT_F, sm->act_count);
	mad_set_field(data, 0, IB_SMINFO_PRIO_F, sm->opt->sm_priority);
	mad_set_field(data, 0, IB_SMINFO_STATE_F, sm->state);
}

static void on_get(struct dispatch *d, const struct mad_in *m, void *ctx)
{
	struct sm *sm = ctx;
	uint8_t data[SMP_DATA_SIZE];
	uint64_t their_key = mad_get_field64(m->mad + IB_SMP_DATA_OFFS, 0, IB_SMINFO_KEY_F);
	/* OpenSM's well-known default key is no secret and OpenSM ignores an SM that hides it; a
	 * key configured with -k goes only to a requester that presents it */
	fill_sminfo(sm, data, !sm->opt->sm_key || their_key == our_sm_key(sm));
	dispatch_respond(d, m, IB_MAD_METHOD_GET_RESPONSE, 0, data, IB_SMP_DATA_OFFS, SMP_DATA_SIZE);
}

static void on_set(struct dispatch *d, const struct mad_in *m, void *ctx)
{
	/* handover/acknowledge/disable from another SM: report our state (handover: issue 10) */
	struct sm *sm = ctx;
	uint8_t data[SMP_DATA_SIZE];
	LOG_I("SMI-0004", "SMInfo Set (attribute modifier %u) received", m->attr_mod);
	fill_sminfo(sm, data, 0);
	dispatch_respond(d, m, IB_MAD_METHOD_GET_RESPONSE, 0, data, IB_SMP_DATA_OFFS, SMP_DATA_SIZE);
}

void sminfo_agent_register(struct sm *sm)
{
	static const uint8_t classes[] = { IB_SMI_CLASS, IB_SMI_DIRECT_CLASS };
	for (size_t i = 0; i < G_N_ELEMENTS(classes); i++) {
		dispatch_register(sm->dispatch, classes[i], IB_MAD_METHOD_GET, IB_ATTR_SMINFO, on_get, sm);
		dispatch_register(sm->dispatch, classes[i], IB_MAD_METHOD_SET, IB_ATTR_SMINFO, on_set, sm);
	}
}

struct smi_query {
	struct sm *sm;
	int must_stand_by;
	uint32_t answered;
};

static const char *state_name(unsigned s)
{
	static const char *n[] = { "NOTACTIVE", "DISCOVERING", "STANDBY", "MASTER" };
	return s < 4 ? n[s] : "?";
}

/* Is (prio, guid) a better SM than us? Higher priority wins, then the lower GUID. */
int sminfo_better_than_us(const struct sm *sm, unsigned prio, uint64_t guid)
{
	if (prio != sm->opt->sm_priority)
		return prio > sm->opt->sm_priority;
	return guid < sm->port_guid;
}

static void on_sminfo(struct transport *t, const struct smp_req *r, int status,
		      const uint8_t *data, void *ctx)
{
	(void)t;
	struct smi_query *q = ctx;
	if (status != 0) {
		LOG_V("SMI-0001", "SMInfo query over %u hops: no answer (%d)", r->hops, status);
		return;
	}
	uint64_t guid = mad_get_field64((void *)data, 0, IB_SMINFO_GUID_F);
	unsigned prio = mad_get_field((void *)data, 0, IB_SMINFO_PRIO_F);
	unsigned state = mad_get_field((void *)data, 0, IB_SMINFO_STATE_F);
	q->answered++;
	LOG_I("SMI-0002", "SM 0x%016" PRIx64 " priority %u state %s found", guid, prio, state_name(state));
	int better = sminfo_better_than_us(q->sm, prio, guid);
	if (state == IB_SM_MASTER) {
		q->sm->master_guid = guid;
		if (!better)
			LOG_I("SMI-0005", "we outrank the master 0x%016" PRIx64 "; waiting for it to hand over",
			      guid);
		q->must_stand_by = 1;
	} else if ((state == IB_SM_DISCOVERING) && better) {
		q->must_stand_by = 1;
		q->sm->master_guid = guid;
	}
}

int sminfo_poll_others(struct sm *sm)
{
	struct fabric *f = sm->fabric;
	struct smi_query q = { .sm = sm };
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		const struct ibsm_port *port = &f->ports[p];
		if (!(port->flags & IBSM_PORT_ISSM) || (port->flags & IBSM_PORT_SM))
			continue;
		/* to that port itself: on a CA with two ports the SM may sit on the second one */
		struct smp_req r;
		if (fabric_smp_to_port(&r, f, p, IB_MAD_METHOD_GET, IB_ATTR_SMINFO, 0, on_sminfo, &q, 0) < 0)
			continue;
		mad_set_field64(r.data, 0, IB_SMINFO_KEY_F, our_sm_key(sm));
		transport_submit(sm->t, &r);
	}
	transport_drain(sm->t, &sm->stop);
	return q.must_stand_by;
}

/* ---- standby ---- */

struct master_poll {
	int answered;
	uint8_t state;
};

static void on_master(struct transport *t, const struct smp_req *r, int status,
		      const uint8_t *data, void *ctx)
{
	(void)t; (void)r;
	struct master_poll *mp = ctx;
	if (status != 0)
		return;
	mp->answered = 1;
	mp->state = (uint8_t)mad_get_field((void *)data, 0, IB_SMINFO_STATE_F);
}

int sminfo_poll_master(struct sm *sm)
{
	struct fabric *f = sm->fabric;
	if (!f || !sm->master_guid)
		return 0;
	uint32_t port = fabric_port_by_guid(f, sm->master_guid);
	if (port == IBSM_NONE)
		return 0;
	struct master_poll mp = { 0 };
	struct smp_req r;
	if (fabric_smp_to_port(&r, f, port, IB_MAD_METHOD_GET, IB_ATTR_SMINFO, 0, on_master, &mp, 0) < 0)
		return 0;
	mad_set_field64(r.data, 0, IB_SMINFO_KEY_F, our_sm_key(sm));
	transport_submit(sm->t, &r);
	transport_drain(sm->t, &sm->stop);
	return mp.answered && mp.state == IB_SM_MASTER;
}
