/* SPDX-License-Identifier: BSD-2-Clause */
/* agent.c - the SA agent's life and its requests: made and freed, a request decoded and
 * checked (master, SM_Key, length), queued, served in turn; its answer computed through the
 * handler table, refusals logged, the response sent (sa/agent.h). */
#include <inttypes.h>
#include <string.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include "base/log.h"
#include "mad/dispatch.h"
#include "mad/phase.h"
#include "mad/transport.h"
#include "routing/result.h"
#include "sa/agent.h"
#include "sa/counters.h"
#include "sa/handlers.h"
#include "sa/inform.h"
#include "sa/mcast_groups.h"
#include "sa/mcmember.h"
#include "sa/path_record.h"
#include "sa/queue.h"
#include "sa/records.h"
#include "sa/service.h"
#include "sa/state.h"
#include "sa/wire.h"

/* The request queue: a requester (LID) may have SA_QUEUE_PER_REQUESTER requests waiting (32
 * outstanding from each of its processes is common), all of them together SA_QUEUE_MAX; more
 * are answered BUSY. SA_SERVE_BUDGET answers go out per I/O step, so a storm of requests
 * never holds a sweep's SMPs back for longer than that many answers take. */
#define SA_QUEUE_MAX 4096
#define SA_QUEUE_PER_REQUESTER 256
#define SA_SERVE_BUDGET 64

/* A queued request carries the time it arrived in front of its MAD (the answer's latency). */
#define SA_ARRIVAL_SIZE sizeof(double)
#define SA_STACK_COPY 2048 /* requests up to this size are framed on the stack */

/* The methods a request may have; the rest are not the SA's (dispatched elsewhere). */
static const uint8_t request_methods[] = { SA_GET, SA_GETTABLE, SA_SET, SA_DELETE, SA_GETMULTI };

/* The port a request came from, in generation f (IBSM_NONE: unknown). */
static uint32_t requester_port(const struct fabric *f, const struct sa_request *rq)
{
	return f && rq->slid && rq->slid <= f->pub.max_lid ? f->pub.lid_port[rq->slid] : IBSM_NONE;
}

/* Is rq's record shorter than its attribute's (a MAD cut short: never read past its end)? */
static int record_short(const struct sa_request *rq)
{
	return rq->record_len < sa_handler_need(rq->attr);
}

void sa_compute(struct sa *sa, const struct sa_request *rq, double now, struct sa_answer *a)
{
	a->status = 0;
	a->table = rq->method == SA_GETTABLE || rq->method == SA_GETMULTI;
	a->method = dispatch_response_method(rq->method);
	a->rec_size = 0;
	g_byte_array_set_size(a->recs, 0);
	const struct sa_attr_handler *h = sa_handler_of(rq->attr);
	if (record_short(rq)) {
		a->status = SA_ERR_REQ_INVALID;
		return;
	}
	if (!h || !(h->methods & SA_METHOD_BIT(rq->method))) {
		a->status = SA_UNSUP_METHOD_ATTR;
		return;
	}
	const struct sa_inputs *in = &sa->in;
	struct sa_view v = { .f = in->r ? in->r->f : NULL, .r = in->r, .pk = in->pk, .mft = in->mft,
			     .vlt = in->vlt, .qos = sa->qos, .part_sl = sa->part_sl,
			     .self = { .sm_key = in->sm_key, .act_count = in->act_count,
				       .priority = in->priority, .state = in->state },
			     .remote = in->remote, .n_remote = in->n_remote };
	v.requester = requester_port(v.f, rq); /* what it may see: doc/sa-partitions.md */
	v.answer_max = SA_ANSWER_MAX;
	v.ix = sa->ix;
	v.bitwise = rq->attr_mod >> 31;
	a->rec_size = sa_handler_rec_size(h);
	sa_handler_answer(h, sa, rq, &v, now, a);
	if (!a->status && a->table && a->recs->len > SA_ANSWER_MAX)
		a->status = SA_ERR_TOO_MANY_RECORDS; /* one requester does not get the SM's memory */
	if (a->status)
		g_byte_array_set_size(a->recs, 0);
	else if (!a->table && a->recs->len != a->rec_size)
		a->status = a->recs->len ? SA_ERR_TOO_MANY_RECORDS : SA_ERR_NO_RECORDS;
}

/* What a refusal for want of resources says in the log: the first and every 1000th of a kind. */
static void log_refusal(struct sa *sa, const struct sa_request *rq, uint16_t status, double now)
{
	if (status == SA_ERR_TOO_MANY_RECORDS && rq->method == SA_GETTABLE) {
		if (sa->st.too_big++ % 1000 == 0)
			LOG_I("SA-0010", "SA GetTable (attribute 0x%04x) from LID %u would carry more than %u "
			      "bytes: answered TOO_MANY_RECORDS (%" PRIu64 " so far)", rq->attr, rq->slid,
			      SA_ANSWER_MAX, sa->st.too_big);
	} else if (status == SA_ERR_NO_RESOURCES && rq->attr == IB_SA_ATTR_INFORMINFO) {
		if (sa->st.subscriptions_refused++ % 1000 == 0)
			LOG_I("SA-0011", "InformInfo subscription from LID %u refused NO_RESOURCES: %u "
			      "subscriptions of a port at most (%u in all; %" PRIu64 " refused so far)",
			      rq->slid, SA_INFORM_MAX_PER_PORT, SA_INFORM_MAX, sa->st.subscriptions_refused);
	} else if (status == SA_ERR_NO_RESOURCES && rq->attr == MCMR_ATTR) {
		if (sa->st.joins_refused++ % 1000 == 0)
			LOG_I("SA-0012", "multicast join from LID %u refused NO_RESOURCES: the switches hold "
			      "MLIDs up to 0x%04x, %u groups in use, %u groups a port at most (%" PRIu64
			      " refused so far)", rq->slid, mc_mlid_limit(sa->mc), mc_count(sa->mc),
			      SA_MC_MAX_PER_PORT, sa->st.joins_refused);
	} else if (status == SA_ERR_NO_RESOURCES && rq->attr == IB_SA_ATTR_SERVICERECORD) {
		if (sa_services_refused(sa->svc) % 1000 == 1) { /* service.c counts them */
			const struct fabric *f = sa->in.r ? sa->in.r->f : NULL;
			uint32_t p = requester_port(f, rq);
			uint64_t port = p == IBSM_NONE ? 0 : f->ports[p].guid;
			LOG_I("SA-0020", "ServiceRecord Set from LID %u refused NO_RESOURCES: its port "
			      "holds %u services (at most %u a port, %u in all; %" PRIu64 " refused "
			      "so far)", rq->slid, sa_services_held(sa->svc, port, now),
			      SR_MAX_PER_PORT, SR_MAX, sa_services_refused(sa->svc));
		}
	}
}

/* rq answered with status, arrived at `arrived` (sa/counters.h). */
static void count_answer(struct sa *sa, const struct sa_request *rq, uint16_t status, double arrived)
{
	sa_counters_note(&sa->cnt, rq->attr, rq->method, status, phase_now() - arrived);
}

static void answer(struct sa *sa, const struct sa_request *rq, double arrived)
{
	struct sa_answer a = { .recs = g_byte_array_new() };
	double now = phase_now();
	sa_compute(sa, rq, now, &a);
	log_refusal(sa, rq, a.status, now);
	if (a.status == SA_UNSUP_METHOD_ATTR)
		sa->st.unsupported++;
	else if (a.status)
		sa->st.no_records++;
	else
		sa->st.answered++;
	if (a.status)
		sa_respond_status(sa->d, rq, a.status);
	else if (a.table)
		sa_respond_table(sa->d, rq, a.method, a.recs->data, a.recs->len / (guint)a.rec_size, a.rec_size);
	else
		sa_respond_one(sa->d, rq, a.method, a.recs->data, a.rec_size);
	count_answer(sa, rq, a.status, arrived);
	g_byte_array_free(a.recs, TRUE);
}

static void on_request(struct dispatch *d, const struct mad_in *m, void *ctx)
{
	(void)d;
	struct sa *sa = ctx;
	struct sa_request rq;
	double arrived = phase_now();
	sa->st.requests++;
	int rc = sa_decode(m, &rq);
	if (rc < 0) {
		sa->st.bad++;
		LOG_V("SA-0001", "SA MAD of %d bytes dropped: too short", m->len);
		return;
	}
	if (!sa->in.master) {
		sa->st.not_master++;
		return;
	}
	if (rq.sm_key && rq.sm_key != sa->in.sa_key) { /* a wrong SA_Key is not answered (as OpenSM; osmtest expects the silence) */
		sa->st.bad_key++;
		LOG_V("SA-0003", "SA request from LID %u with a wrong SM_Key (not sa_key) dropped", rq.slid);
		return;
	}
	if (rc > 0) {
		sa->st.bad++;
		sa_respond_status(sa->d, &rq, (uint16_t)rc);
		count_answer(sa, &rq, (uint16_t)rc, arrived);
		return;
	}
	if (record_short(&rq)) {
		sa->st.bad++;
		LOG_V("SA-0009", "SA request from LID %u (method 0x%02x, attribute 0x%04x) carries %zu "
		      "record bytes of %zu: answered REQ_INVALID", rq.slid, rq.method, rq.attr,
		      rq.record_len, sa_handler_need(rq.attr));
		sa_respond_status(sa->d, &rq, SA_ERR_REQ_INVALID);
		count_answer(sa, &rq, SA_ERR_REQ_INVALID, arrived);
		return;
	}
	/* queued with its arrival time in front */
	uint8_t stack[SA_STACK_COPY];
	size_t framed = SA_ARRIVAL_SIZE + (size_t)m->len;
	uint8_t *buf = framed <= sizeof(stack) ? stack : g_malloc(framed);
	memcpy(buf, &arrived, SA_ARRIVAL_SIZE);
	memcpy(buf + SA_ARRIVAL_SIZE, m->umad, (size_t)m->len);
	int queued = sa_queue_push(sa->q, rq.slid, buf, (int)framed);
	if (buf != stack)
		g_free(buf);
	if (queued < 0) {
		/* the queue, or this requester's share of it, is full: BUSY, retry later */
		if (sa->st.busy++ % 1000 == 0)
			LOG_I("SA-0007", "SA queue full (%u requests waiting): BUSY to LID %u (%" PRIu64
			      " BUSY answers so far)", sa_queue_len(sa->q), rq.slid, sa->st.busy);
		sa_respond_status(sa->d, &rq, SA_BUSY);
		count_answer(sa, &rq, SA_BUSY, arrived);
	}
}

/* The transport's work hook: answers up to SA_SERVE_BUDGET queued requests, round-robin by
 * requester; nonzero while some wait. Called after every I/O step, so the SMPs of a sweep
 * go on between shares and the SA goes on during a sweep's long drains. */
static int serve(void *ctx)
{
	struct sa *sa = ctx;
	for (int n = 0; n < SA_SERVE_BUDGET; n++) {
		int len;
		uint8_t *framed = sa_queue_pop(sa->q, &len);
		if (!framed)
			return 0;
		double arrived;
		memcpy(&arrived, framed, SA_ARRIVAL_SIZE);
		struct mad_in m;
		struct sa_request rq;
		dispatch_mad_in(&m, framed + SA_ARRIVAL_SIZE, len - (int)SA_ARRIVAL_SIZE);
		if (sa_decode(&m, &rq) == 0 && sa->in.master)
			answer(sa, &rq, arrived);
		g_free(framed);
	}
	return sa_queue_len(sa->q) > 0;
}

struct sa *sa_new(struct dispatch *d)
{
	const char *bad = NULL;
	if (sa_handlers_check(&bad) < 0) {
		LOG_E("SA-0002", "SA record layout %s does not add up to its size: SA disabled", bad);
		return NULL;
	}
	struct sa *sa = g_new0(struct sa, 1);
	sa->d = d;
	sa_inputs_init(&sa->in);
	sa->svc = sa_services_new();
	sa->q = sa_queue_new(SA_QUEUE_MAX, SA_QUEUE_PER_REQUESTER);
	sa_mcast_init(sa);
	pr_layout();
	if (d) {
		for (size_t i = 0; i < G_N_ELEMENTS(request_methods); i++)
			dispatch_register(d, IB_SA_CLASS, request_methods[i], DISPATCH_ANY_ATTR, on_request, sa);
	}
	sa_reports_init(sa);
	if (d)
		transport_set_work(dispatch_transport(d), serve, sa);
	return sa;
}

void sa_free(struct sa *sa)
{
	if (!sa)
		return;
	if (sa->d) {
		for (size_t i = 0; i < G_N_ELEMENTS(request_methods); i++)
			dispatch_register(sa->d, IB_SA_CLASS, request_methods[i], DISPATCH_ANY_ATTR, NULL, NULL);
		transport_set_work(dispatch_transport(sa->d), NULL, NULL);
	}
	sa_reports_fini(sa);
	sa_queue_free(sa->q);
	sa_mcast_fini(sa);
	sa_services_free(sa->svc);
	sa_publish_release(sa);
	g_free(sa);
}

const struct sa_counters *sa_counters(const struct sa *sa)
{
	return &sa->cnt;
}

const struct sa_stats *sa_stats(struct sa *sa)
{
	const struct sa_inform_stats *is = sa_inform_stats(sa->inform);
	sa->st.reports_sent = is->reports_sent + is->reports_resent;
	sa->st.reports_acked = is->reports_acked;
	sa->st.subscriptions = sa_inform_count(sa->inform);
	sa->st.mcast_groups = mc_count(sa->mc);
	sa->st.queued_max = sa_queue_high_water(sa->q);
	return &sa->st;
}
