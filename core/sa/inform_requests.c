/* SPDX-License-Identifier: BSD-2-Clause */
/* inform_requests.c - InformInfo and InformInfoRecord requests answered
 * (sa/inform_requests.h). */
#include "routing/result.h"
#include "sa/inform.h"
#include "sa/inform_requests.h"
#include "sa/pkeys.h"
#include "sa/records.h"
#include "sa/state.h"
#include "sa/wire.h"

struct visibility {
	const struct sa *sa;
	uint32_t requester;
};

/* May the requester see a subscription of port guid: is the port in the fabric, and do they
 * share a partition? (OpenSM's osm_sa_informinfo.c: the subscription of a port gone stays,
 * unless drop_event_subscriptions, but no InformInfoRecord shows it.) */
static int shares_partition(void *ctx, uint64_t guid)
{
	const struct visibility *vis = ctx;
	const struct fabric *f = vis->sa->in.r->f;
	uint32_t p = fabric_port_by_guid(f, guid);
	return p != IBSM_NONE && sa_pkeys_share(vis->sa->in.pk, vis->requester, p);
}

/* InformInfo Set: a subscription (or its end) of the requester's port, which Reports must be
 * able to find: refused when the generation does not know it. */
void sa_inform_request(struct sa *sa, const struct sa_request *rq, const struct sa_view *v, double now,
		       struct sa_answer *a)
{
	(void)now;
	uint32_t port = v->requester;
	if (port == IBSM_NONE) {
		a->status = SA_ERR_REQ_INVALID;
		return;
	}
	struct sa_requester who = { .guid = v->f->ports[port].guid, .prefix = sa->in.subnet_prefix,
				    .lid = rq->slid, .qpn = rq->qpn, .trusted = rq->sm_key != 0 /* == sa_key */ };
	uint8_t kept[II_SIZE];
	a->status = sa_inform_set(sa->inform, rq->record, &who, kept);
	if (!a->status)
		g_byte_array_append(a->recs, kept, II_SIZE);
}

/* InformInfoRecord Get/GetTable (and GetMulti, as a table): the subscriptions matching the
 * query, of ports the requester shares a partition with; their QPNs only to a requester
 * presenting our SM_Key. */
void sa_inform_record_request(struct sa *sa, const struct sa_request *rq, const struct sa_view *v,
			      double now, struct sa_answer *a)
{
	(void)now;
	struct visibility vis = { .sa = sa, .requester = v->requester };
	sa_inform_records(sa->inform, rq->record, rq->comp_mask, rq->sm_key != 0,
			  v->f ? shares_partition : NULL, &vis, a->recs);
}
