/* SPDX-License-Identifier: BSD-2-Clause */
/* sminfo.c - the SM's identity on the wire: answers SMInfo Get (GUID, priority, state,
 * ActCount; the SM_Key only to a requester presenting it), asks every other IsSM port for its
 * SMInfo to decide master or standby, polls the master while standby, and hands mastership
 * over as IBA 14.4 has it: a master that finds a better SM in STANDBY sends it SMInfo Set
 * (HANDOVER); that SM answers, sends SMInfo Set (ACKNOWLEDGE) back and becomes master; the old
 * master, acknowledged, becomes STANDBY. An SM whose SMInfo shows an SM_Key other than ours
 * (not 0: a hidden key) belongs to another management domain and is neither obeyed nor
 * handed to. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "mad/phase.h"
#include "fabric/dr.h"
#include "sa/agent.h"
#include "sa/inputs.h"
#include "sm/sminfo.h"

static uint64_t our_sm_key(const struct sm *sm)
{
	return sm->opt->sm_key ? sm->opt->sm_key : SM_KEY_DEFAULT;
}

uint32_t sminfo_act_count(const struct sm *sm)
{
	uint64_t sent = 0; /* SMP requests (Gets and Sets, retries too): OpenSM's QP0 MADs sent */
	if (sm->t) {
		const struct transport_stats *s = transport_stats(sm->t);
		for (int i = 0; i < 64; i++)
			sent += s->by_attr[0][i] + s->by_attr[1][i];
	}
	return (uint32_t)(sm->act_count + sent);
}

/* with_key: the requester presented our SM_Key, so it may see it (else the key reads 0) */
static void fill_sminfo(const struct sm *sm, uint8_t *data, int with_key)
{
	memset(data, 0, SMP_DATA_SIZE);
	mad_set_field64(data, 0, IB_SMINFO_GUID_F, sm->port_guid);
	mad_set_field64(data, 0, IB_SMINFO_KEY_F, with_key ? our_sm_key(sm) : 0);
	mad_set_field(data, 0, IB_SMINFO_ACT_F, sminfo_act_count(sm));
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

/* An SM_Key seen in another SM's SMInfo: ours, or 0 (hidden from us), is our domain. */
static int key_is_ours(const struct sm *sm, uint64_t key)
{
	return key == 0 || key == our_sm_key(sm);
}

static void on_ack_sent(struct transport *t, const struct smp_req *r, int status,
			const uint8_t *data, void *ctx)
{
	(void)t; (void)r; (void)data; (void)ctx;
	char why[64];
	if (status != 0) { /* OpenSM steps down on the answer to its HANDOVER and refuses an ACK */
		smp_status_text(status, why, sizeof(why));
		LOG_I("SMI-0009", "the old master did not take our ACKNOWLEDGE (%s); taking over all "
		      "the same", why);
	}
}

/* HANDOVER to us: accepted while STANDBY from an SM of our domain (1). The old master is sent
 * ACKNOWLEDGE at once (the answer to its Set alone is not the acknowledgement the spec asks
 * for) and the event loop starts the sweep that takes over. -1: refused for its key. */
static int take_handover(struct sm *sm, uint64_t from, uint64_t key)
{
	if (sm->state != IB_SM_STANDBY) {
		LOG_I("SMI-0007", "HANDOVER from SM 0x%016" PRIx64 " ignored: we are %s, not STANDBY",
		      from, sm->state == IB_SM_MASTER ? "MASTER" : sm->state == IB_SM_NOTACTIVE ? "NOTACTIVE" :
		      "DISCOVERING");
		return 0;
	}
	if (!key_is_ours(sm, key)) {
		LOG_E("SMI-0008", "HANDOVER from SM 0x%016" PRIx64 " refused: its SM_Key is not ours "
		      "(another management domain)", from);
		return -1;
	}
	LOG_SYS("SMI-0010", "HANDOVER from master 0x%016" PRIx64 ": acknowledging and taking over",
	        from);
	sm->handed_over_by = from;
	sm->takeover_pending = 1;
	uint32_t port = sm->fabric ? fabric_port_by_guid(sm->fabric, from) : IBSM_NONE;
	struct smp_req r;
	if (port == IBSM_NONE ||
	    fabric_smp_to_port(&r, sm->fabric, port, IB_MAD_METHOD_SET, IB_ATTR_SMINFO,
			       IB_SMINFO_ACKNOWLEDGE, on_ack_sent, NULL, 0) < 0) {
		LOG_I("SMI-0009", "the old master 0x%016" PRIx64 " is no port we know: no "
		      "ACKNOWLEDGE sent; taking over all the same", from);
		return 1;
	}
	fill_sminfo(sm, r.data, 1);
	mad_set_field(r.data, 0, IB_SMINFO_STATE_F, IB_SM_MASTER);
	transport_submit(sm->t, &r);
	return 1;
}

static void on_set(struct dispatch *d, const struct mad_in *m, void *ctx)
{
	struct sm *sm = ctx;
	const uint8_t *in = m->mad + IB_SMP_DATA_OFFS;
	uint64_t from = mad_get_field64((void *)in, 0, IB_SMINFO_GUID_F);
	uint64_t key = mad_get_field64((void *)in, 0, IB_SMINFO_KEY_F);
	uint8_t data[SMP_DATA_SIZE];
	LOG_I("SMI-0004", "SMInfo Set (attribute modifier %u) from SM 0x%016" PRIx64 " received",
	      m->attr_mod, from);
	int took = 0;
	if (m->attr_mod == IB_SMINFO_HANDOVER) {
		took = take_handover(sm, from, key);
	} else if (m->attr_mod == IB_SMINFO_ACKNOWLEDGE) {
		if (sm->handover_to && from == sm->handover_to && key_is_ours(sm, key))
			sm->handover_acked = 1;
		else
			LOG_I("SMI-0007", "ACKNOWLEDGE from SM 0x%016" PRIx64 " ignored: no handover "
			      "to it is pending", from);
	} else {
		LOG_I("SMI-0007", "SMInfo Set (attribute modifier %u) ignored: only HANDOVER and "
		      "ACKNOWLEDGE are acted on", m->attr_mod);
	}
	fill_sminfo(sm, data, 0);
	if (took > 0) /* the answer already shows what the sender handed over */
		mad_set_field(data, 0, IB_SMINFO_STATE_F, IB_SM_MASTER);
	/* refused: an error status, so the sender does not wait for an ACKNOWLEDGE */
	dispatch_respond(d, m, IB_MAD_METHOD_GET_RESPONSE, took < 0 ? MAD_STATUS_INVALID_FIELD : 0,
			 data, IB_SMP_DATA_OFFS, SMP_DATA_SIZE);
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
	uint64_t best_standby;       /* the best SM in STANDBY better than us, 0 = none */
	unsigned best_prio;
	GArray *found;               /* of struct sa_remote_sm: every SM that answered */
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
		char why[64];
		smp_status_text(status, why, sizeof(why));
		LOG_V("SMI-0001", "SMInfo query over %u hops: no answer (%s)", r->hops, why);
		return;
	}
	struct sm *sm = q->sm;
	uint64_t guid = mad_get_field64((void *)data, 0, IB_SMINFO_GUID_F);
	uint64_t key = mad_get_field64((void *)data, 0, IB_SMINFO_KEY_F);
	unsigned prio = mad_get_field((void *)data, 0, IB_SMINFO_PRIO_F);
	unsigned state = mad_get_field((void *)data, 0, IB_SMINFO_STATE_F);
	q->answered++;
	uint32_t port = fabric_port_by_guid(sm->fabric, guid);
	struct sa_remote_sm o = {
		.guid = guid, .sm_key = key, .priority = (uint8_t)prio, .state = (uint8_t)state,
		.act_count = (uint32_t)mad_get_field((void *)data, 0, IB_SMINFO_ACT_F),
		.lid = port == IBSM_NONE ? 0 : sm->fabric->ports[port].lid,
	};
	g_array_append_val(q->found, o);
	LOG_I("SMI-0002", "SM 0x%016" PRIx64 " priority %u state %s found", guid, prio, state_name(state));
	if (!key_is_ours(sm, key)) {
		LOG_E("SMI-0006", "SM 0x%016" PRIx64 " (%s) shows an SM_Key that is not ours: another "
		      "management domain, ignored", guid, state_name(state));
		return;
	}
	int better = sminfo_better_than_us(sm, prio, guid);
	if (state == IB_SM_MASTER) {
		if (guid == sm->handed_over_by) /* it handed over; its ACK may not be seen yet */
			return;
		sm->master_guid = guid;
		if (!better)
			LOG_I("SMI-0005", "we outrank the master 0x%016" PRIx64 "; waiting for it to hand over",
			      guid);
		q->must_stand_by = 1;
	} else if (state == IB_SM_DISCOVERING && better) {
		if (sm->state == IB_SM_MASTER) {
			sm->sminfo_recheck = 1; /* it will be STANDBY: hand over then */
			return;
		}
		q->must_stand_by = 1;
		sm->master_guid = guid;
	} else if (state == IB_SM_STANDBY && better &&
		   !(guid == sm->handover_refused_by && phase_now() < sm->handover_retry_at) &&
		   (!q->best_standby || prio > q->best_prio ||
		    (prio == q->best_prio && guid < q->best_standby))) {
		q->best_standby = guid;
		q->best_prio = prio;
	}
}

int sminfo_poll_others(struct sm *sm, uint64_t *hand_to)
{
	struct fabric *f = sm->fabric;
	struct smi_query q = { .sm = sm, .found = g_array_new(FALSE, TRUE, sizeof(struct sa_remote_sm)) };
	sm->sminfo_recheck = 0;
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
	if (sm->sa) { /* the SA shows them as SMInfoRecords */
		sa_inputs_set_remote_sms(&sm->sa_in, (const struct sa_remote_sm *)(void *)q.found->data,
					 q.found->len);
		sa_publish(sm->sa, &sm->sa_in);
	}
	g_array_free(q.found, TRUE);
	sm->handed_over_by = 0; /* one sweep of grace is enough */
	if (hand_to)
		*hand_to = q.must_stand_by ? 0 : q.best_standby;
	return q.must_stand_by;
}

int sminfo_master_check(struct sm *sm)
{
	uint64_t hand_to = 0;
	int standby = sminfo_poll_others(sm, &hand_to);
	return standby || hand_to || sm->sminfo_recheck;
}

/* ---- handing over ---- */

struct handover {
	int answered;
	uint8_t state;
};

static void on_handover_answer(struct transport *t, const struct smp_req *r, int status,
			       const uint8_t *data, void *ctx)
{
	(void)t; (void)r;
	struct handover *h = ctx;
	if (status != 0)
		return;
	h->answered = 1;
	h->state = (uint8_t)mad_get_field((void *)data, 0, IB_SMINFO_STATE_F);
}

int sminfo_hand_over(struct sm *sm, uint64_t to)
{
	uint32_t port = fabric_port_by_guid(sm->fabric, to);
	struct handover h = { 0 };
	struct smp_req r;
	if (port == IBSM_NONE ||
	    fabric_smp_to_port(&r, sm->fabric, port, IB_MAD_METHOD_SET, IB_ATTR_SMINFO,
			       IB_SMINFO_HANDOVER, on_handover_answer, &h, 0) < 0)
		return 0;
	LOG_SYS("SMI-0011", "SM 0x%016" PRIx64 " in STANDBY outranks us: sending HANDOVER", to);
	fill_sminfo(sm, r.data, 1);
	sm->handover_to = to;
	sm->handover_acked = 0;
	transport_submit(sm->t, &r);
	transport_drain(sm->t, &sm->stop);
	double until = phase_now() + HANDOVER_ACK_S;
	while (h.answered && h.state != IB_SM_MASTER && !sm->handover_acked && !sm->stop &&
	       phase_now() < until)
		transport_poll(sm->t, 50, 0); /* its ACKNOWLEDGE comes as a Set of its own */
	/* The spec's acknowledgement is an SMInfo Set (ACKNOWLEDGE); OpenSM 3.3.23 sends none
	 * and is master once it answers: its answer, or its SMInfo asked again, says MASTER. */
	int acked = sm->handover_acked || (h.answered && h.state == IB_SM_MASTER);
	if (!acked && h.answered && !sm->stop) {
		struct handover again = { 0 };
		if (fabric_smp_to_port(&r, sm->fabric, port, IB_MAD_METHOD_GET, IB_ATTR_SMINFO, 0,
				       on_handover_answer, &again, 0) == 0) {
			mad_set_field64(r.data, 0, IB_SMINFO_KEY_F, our_sm_key(sm));
			transport_submit(sm->t, &r);
			transport_drain(sm->t, &sm->stop);
			acked = again.answered && again.state == IB_SM_MASTER;
		}
	}
	sm->handover_to = 0;
	sm->handover_acked = 0;
	if (acked) {
		LOG_SYS("SMI-0012", "SM 0x%016" PRIx64 " took the HANDOVER: it is master, we are "
		        "STANDBY", to);
		sm->master_guid = to;
		return 1;
	}
	sm->handover_refused_by = to; /* not every sweep: in a minute again */
	sm->handover_retry_at = phase_now() + HANDOVER_RETRY_S;
	LOG_E("SMI-0013", "SM 0x%016" PRIx64 " %s: staying master", to,
	      h.answered ? "answered the HANDOVER but neither acknowledged it nor became master" :
			   "did not answer the HANDOVER");
	return 0;
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
