/* SPDX-License-Identifier: BSD-2-Clause */
/* service_requests.c - ServiceRecord requests judged and answered (sa/service_requests.h). */
#include "routing/result.h"
#include "sa/pkeys.h"
#include "sa/records.h"
#include "sa/service.h"
#include "sa/service_requests.h"
#include "sa/state.h"
#include "sa/wire.h"

/* A ServiceRecord request as the SA judges it (doc/sa-partitions.md). */
struct sr_ctx {
	const struct sa_view *v;
	int trusted;               /* the requester presented our SM_Key */
};

/* The port a ServiceGID names, by its port GUID alone as OpenSM (clients, osmtest among them,
 * write the prefix in host byte order), or IBSM_NONE. */
static uint32_t service_port(const struct fabric *f, const uint8_t *rec)
{
	return f ? fabric_port_by_guid(f, sa_be64(rec + 16)) : IBSM_NONE;
}

static uint16_t service_pkey(const uint8_t *rec)
{
	return (uint16_t)(rec[24] << 8 | rec[25]);
}

/* May the requester see service rec? When it names a partition (a valid ServiceP_Key) the
 * requester must hold that key, as on OpenSM; otherwise it must share a partition with the
 * port of its ServiceGID (OpenSM shows such a service to every port). */
static int sr_visible(void *ctx, const uint8_t *rec, const struct sr_owner *owner)
{
	(void)owner;
	const struct sr_ctx *c = ctx;
	uint16_t pkey = service_pkey(rec);
	if (pkey & 0x7fff)
		return sa_pkeys_has(c->v->pk, c->v->requester, pkey);
	return sa_view_sees(c->v, service_port(c->v->f, rec));
}

/* Is the requester the service's owner: on the node that registered it or on the node of its
 * ServiceGID's port (or presenting our SM_Key)? */
static int sr_owns(const struct sr_ctx *c, const uint8_t *rec, const struct sr_owner *owner)
{
	const struct fabric *f = c->v->f;
	uint32_t r = c->v->requester, p = service_port(f, rec);
	if (c->trusted)
		return 1;
	if (r == IBSM_NONE)
		return 0;
	uint64_t node = f->nodes[f->ports[r].node].guid;
	return (owner && owner->node == node) || (p != IBSM_NONE && f->nodes[f->ports[p].node].guid == node);
}

/* Delete: only a service the requester may see (else there is none for it) and owns. */
static uint16_t sr_may_delete(void *ctx, const uint8_t *rec, const struct sr_owner *owner)
{
	const struct sr_ctx *c = ctx;
	if (!sr_visible(ctx, rec, owner))
		return SA_ERR_NO_RECORDS;
	return sr_owns(c, rec, owner) ? 0 : SA_ERR_REQ_INVALID;
}

/* The ServiceP_Key check of OpenSM's osm_sa_service_record.c (validate_sr): the requester and
 * the ServiceGID's port both hold it. OpenSM checks it when the mask names it; a Set here
 * also when the record carries a valid key the mask does not name (it is kept and decides who
 * sees the service). */
static int sr_pkey_ok(const struct sr_ctx *c, const uint8_t *rec, uint64_t mask, int set)
{
	uint16_t pkey = service_pkey(rec);
	if (!(mask & 1u << SR_PKEY) && !(set && (pkey & 0x7fff)))
		return 1;
	if (!sa_pkeys_has(c->v->pk, c->v->requester, pkey))
		return 0;
	if (!set && !(mask & 1u << SR_GID))
		return 1;
	uint32_t p = service_port(c->v->f, rec);
	return p != IBSM_NONE && sa_pkeys_has(c->v->pk, p, pkey);
}

/* ServiceRecord Set, Delete, Get, GetTable, as OpenSM 3.3.23 answers them and stricter where
 * doc/sa-partitions.md says: a Set names a port of the requester's own node and a P_Key both
 * hold, at most SR_MAX_PER_PORT services per requester port; a Delete takes the one service
 * its record names (never a pattern) and only the owner's; Get shows what the requester's
 * partitions let it see. Any other method (GetMulti) is a query, as Get. */
void sa_service_request(struct sa *sa, const struct sa_request *rq, const struct sa_view *v, double now,
			struct sa_answer *a)
{
	struct sr_ctx c = { .v = v, .trusted = rq->sm_key != 0 /* == sa_key */ };
	const uint8_t *rec = rq->record;
	if (rq->method == SA_SET) {
		uint8_t kept[SR_SIZE];
		uint32_t r = v->requester;
		if (!(rq->comp_mask & 1u << SR_ID) || !(rq->comp_mask & 1u << SR_GID))
			a->status = SA_ERR_REQ_INSUFFICIENT_COMPONENTS;
		else if (service_port(v->f, rec) == IBSM_NONE)
			a->status = SA_ERR_REQ_INVALID_GID;
		else if (!sr_pkey_ok(&c, rec, rq->comp_mask, 1) || !sr_owns(&c, rec, NULL))
			a->status = SA_ERR_REQ_INVALID;
		else {
			const struct fabric *f = v->f;
			struct sr_owner who = { 0 };
			if (r != IBSM_NONE) {
				who.port = f->ports[r].guid;
				who.node = f->nodes[f->ports[r].node].guid;
			}
			/* a refusal (NO_RESOURCES) is logged by the agent (sa/agent.c) */
			a->status = sa_service_set(sa->svc, rec, rq->comp_mask, &who,
						   c.trusted ? 0 : SR_MAX_PER_PORT, now, kept);
		}
		if (!a->status)
			g_byte_array_append(a->recs, kept, SR_SIZE);
	} else if (rq->method == SA_DELETE) {
		if (!sr_pkey_ok(&c, rec, rq->comp_mask, 0))
			a->status = SA_ERR_REQ_INVALID;
		else
			a->status = sa_service_delete(sa->svc, rec, now, sr_may_delete, &c, a->recs);
	} else {
		sa_service_query(sa->svc, rec, rq->comp_mask, now, sr_visible, &c, a->recs);
	}
}

