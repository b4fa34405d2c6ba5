/* sminfo.c - the SM's identity on the wire: answers SMInfo Get (GUID, priority, state,
 * ActCount), asks every other IsSM port for its SMInfo to decide master or standby, and
 * answers traps with TrapRepress (counted here, since ibsim drops TrapRepress). */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include "log.h"
#include "sm.h"

#define SMINFO_STATUS_UNSUP_ATTR 0x0C
#define SA_STATUS_UNSUP_METHOD_ATTR 0x0C

static uint64_t traps_received, trap_represses_sent;

#define UNHEALTHY_TRAPS 3 /* 129-131 reports before a port counts as unhealthy */

/* 128 (link state change) and 144 (capability/description change; a full sweep also re-reads
 * NodeDescription) sweep at once; 129-131 (errors, bad P_Key/M_Key) once one port has reported
 * UNHEALTHY_TRAPS of them; anything else is only logged. */
static int trap_wants_sweep(uint16_t trap_num, uint16_t lid)
{
	static GHashTable *reports; /* issuer LID -> count */
	if (trap_num == 128 || trap_num == 144)
		return 1;
	if (trap_num < 129 || trap_num > 131)
		return 0;
	if (!reports)
		reports = g_hash_table_new(NULL, NULL);
	guint n = GPOINTER_TO_UINT(g_hash_table_lookup(reports, GUINT_TO_POINTER(lid))) + 1;
	if (n >= UNHEALTHY_TRAPS) {
		LOG_I("TRP-0002", "LID %u reported %u error traps: unhealthy, sweeping", lid, n);
		g_hash_table_remove(reports, GUINT_TO_POINTER(lid));
		return 1;
	}
	g_hash_table_insert(reports, GUINT_TO_POINTER(lid), GUINT_TO_POINTER(n));
	return 0;
}

/* OpenSM's default SM_Key: SMs that share it recognise each other's SMInfo. */
#define SM_KEY_DEFAULT 0x0000000000000001ULL

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

/* Builds a response from the request in place: GetResp, D bit for DR, our status. */
static void respond(struct sm *sm, void *umad, int len, uint8_t method, int status,
		    const uint8_t *data)
{
	uint8_t *mad = umad_get_mad(umad);
	uint8_t mclass = mad[1];
	mad[3] = method;
	if (mclass == IB_SMI_DIRECT_CLASS) {
		mad_set_field(mad, 0, IB_DRSMP_STATUS_F, (uint32_t)status);
		mad_set_field(mad, 0, IB_DRSMP_DIRECTION_F, 1);
	} else {
		mad_set_field(mad, 0, IB_MAD_STATUS_F, (uint32_t)status);
	}
	if (data)
		memcpy(mad + IB_SMP_DATA_OFFS, data, SMP_DATA_SIZE);
	umad_set_grh(umad, NULL);
	transport_send_raw(sm->t, mclass, umad, len);
}

void sm_unsolicited(struct transport *t, void *umad, int len, void *ctx)
{
	(void)t;
	struct sm *sm = ctx;
	uint8_t *mad = umad_get_mad(umad);
	uint8_t mclass = mad[1], method = mad[3];
	uint16_t attr = (uint16_t)mad_get_field(mad, 0, IB_MAD_ATTRID_F);
	if (mclass == IB_SA_CLASS) {
		/* no SA yet: answer every request at once instead of letting clients time out */
		if (!(method & IB_MAD_RESPONSE) && method != IB_MAD_METHOD_REPORT_RESPONSE) {
			mad[3] = IB_MAD_METHOD_GET_RESPONSE;
			if (method == IB_MAD_METHOD_GET_TABLE)
				mad[3] = IB_MAD_METHOD_GET_TABLE | IB_MAD_RESPONSE;
			mad_set_field(mad, 0, IB_MAD_STATUS_F, SA_STATUS_UNSUP_METHOD_ATTR);
			umad_set_grh(umad, NULL);
			transport_send_raw(sm->t, IB_SA_CLASS, umad, len);
		}
		return;
	}
	if (mclass != IB_SMI_CLASS && mclass != IB_SMI_DIRECT_CLASS)
		return;
	if (method == IB_MAD_METHOD_TRAP) {
		uint8_t *d = mad + IB_SMP_DATA_OFFS;
		/* Notice: IsGeneric|Type, ProducerType (24 bits), TrapNumber, IssuerLID */
		uint16_t trap_num = (uint16_t)((d[4] << 8) | d[5]);
		uint16_t src_lid = (uint16_t)((d[6] << 8) | d[7]);
		traps_received++;
		LOG_I("TRP-0001", "trap %u from LID %u received", trap_num, src_lid);
		respond(sm, umad, len, IB_MAD_METHOD_TRAP_REPRESS, 0, NULL);
		trap_represses_sent++; /* ibsim drops TrapRepress: counted here */
		if (trap_wants_sweep(trap_num, src_lid))
			sm->trap_pending = 1;
		return;
	}
	if (method == IB_MAD_METHOD_GET && attr == IB_ATTR_SMINFO) {
		uint8_t data[SMP_DATA_SIZE];
		uint64_t their_key = mad_get_field64(mad + IB_SMP_DATA_OFFS, 0, IB_SMINFO_KEY_F);
		/* OpenSM's well-known default key is no secret and OpenSM ignores an SM that hides
		 * it; a key configured with -k goes only to a requester that presents it */
		fill_sminfo(sm, data, !sm->opt->sm_key || their_key == our_sm_key(sm));
		respond(sm, umad, len, IB_MAD_METHOD_GET_RESPONSE, 0, data);
		return;
	}
	if (method == IB_MAD_METHOD_SET && attr == IB_ATTR_SMINFO) {
		/* handover/acknowledge/disable from another SM: report our state (issue: handover) */
		uint8_t data[SMP_DATA_SIZE];
		LOG_I("SMI-0004", "SMInfo Set (attribute modifier %u) received",
		      mad_get_field(mad, 0, IB_MAD_ATTRMOD_F));
		fill_sminfo(sm, data, 0);
		respond(sm, umad, len, IB_MAD_METHOD_GET_RESPONSE, 0, data);
		return;
	}
	if (method == IB_MAD_METHOD_GET || method == IB_MAD_METHOD_SET) {
		respond(sm, umad, len, IB_MAD_METHOD_GET_RESPONSE, SMINFO_STATUS_UNSUP_ATTR, NULL);
		return;
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
static int better_than_us(const struct sm *sm, unsigned prio, uint64_t guid)
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
	int better = better_than_us(q->sm, prio, guid);
	if (state == SM_MASTER) {
		q->sm->master_guid = guid;
		if (!better)
			LOG_I("SMI-0005", "we outrank the master 0x%016" PRIx64 "; waiting for it to hand over",
			      guid);
		q->must_stand_by = 1;
	} else if ((state == SM_DISCOVERING) && better) {
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
		const struct node_extra *x = &f->nx[port->node];
		struct smp_req r;
		memset(&r, 0, sizeof(r));
		r.method = IB_MAD_METHOD_GET;
		r.dr = 1;
		r.hops = x->dr_hops;
		memcpy(r.path, x->dr_path, sizeof(r.path));
		r.attr = IB_ATTR_SMINFO;
		mad_set_field64(r.data, 0, IB_SMINFO_KEY_F, our_sm_key(sm));
		r.done = on_sminfo;
		r.ctx = &q;
		transport_submit(sm->t, &r);
	}
	transport_drain(sm->t, &sm->stop);
	return q.must_stand_by;
}

void sminfo_trap_counts(uint64_t *received, uint64_t *represses)
{
	*received = traps_received;
	*represses = trap_represses_sent;
}
