/* SPDX-License-Identifier: BSD-2-Clause */
/* inform.c - subscriptions and Reports (sa/inform.h). */
#include <string.h>
#include "base/log.h"
#include "sa/inform.h"
#include "sa/wire.h"

/* InformInfo byte offsets (IBA 13.4.8.3) */
#define II_GID 0
#define II_LID_BEGIN 16
#define II_LID_END 18
#define II_IS_GENERIC 22
#define II_SUBSCRIBE 23
#define II_TYPE 24
#define II_TRAP 26
#define II_QPN 28                  /* 24 bits, then 3 reserved and RespTimeValue (5) */
#define II_PRODUCER 33             /* 24 bits */
/* InformInfoRecord: SubscriberGID, Enum, reserved 6, InformInfo, reserved 4 */
#define IIR_ENUM 16
#define IIR_II 24

struct sub {
	uint32_t id;
	uint64_t guid;                 /* the subscriber's port */
	uint64_t prefix;               /* its GID prefix (as it asked) */
	uint16_t lid;                  /* where Reports go */
	uint16_t enumv;                /* InformInfoRecord.Enum: its n-th subscription */
	uint32_t qpn;
	unsigned fails;                /* Reports in a row it did not acknowledge */
	uint8_t ii[II_SIZE];           /* as subscribed, QPN = the subscriber's */
};

struct pending {
	uint64_t tid;
	uint32_t sub;                  /* subscription id */
	uint16_t lid;
	uint32_t qpn;
	unsigned sent;
	double due, interval;
	uint8_t notice[NOTICE_SIZE];
};

struct sa_inform {
	GArray *subs;                  /* struct sub */
	GArray *pending;               /* struct pending */
	uint32_t next_id;
	uint64_t next_tid;
	sa_report_send_fn send;
	void *ctx;
	struct sa_inform_stats st;
};

static struct sa_layout layout = {
	.name = "InformInfoRecord", .attr = 0xF3, .size = IIR_SIZE, .n = 17,
	/* SubscriberGID, Enum, reserved; InformInfo: GID, LIDRangeBegin, LIDRangeEnd, reserved,
	 * IsGeneric, Subscribe, Type, TrapNumber, QPN, reserved, RespTimeValue, reserved,
	 * ProducerType; reserved */
	.width = { 128, 16, 48, 128, 16, 16, 16, 8, 8, 16, 16, 24, 3, 5, 8, 24, 32 },
};

const struct sa_layout *iir_layout(void)
{
	static int ready;
	if (!ready && sa_layout_init(&layout) == 0)
		ready = 1;
	return &layout;
}

static uint32_t be(const uint8_t *p, int n)
{
	uint32_t v = 0;
	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static void put_be(uint8_t *p, int n, uint32_t v)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

struct sa_inform *sa_inform_new(sa_report_send_fn send, void *ctx)
{
	struct sa_inform *in = g_new0(struct sa_inform, 1);
	in->subs = g_array_new(FALSE, TRUE, sizeof(struct sub));
	in->pending = g_array_new(FALSE, TRUE, sizeof(struct pending));
	in->send = send;
	in->ctx = ctx;
	in->next_id = 1;
	in->next_tid = 0x5A000000ULL; /* the low half: the MAD layer sets the high one */
	iir_layout();
	return in;
}

void sa_inform_free(struct sa_inform *in)
{
	if (!in)
		return;
	g_array_free(in->subs, TRUE);
	g_array_free(in->pending, TRUE);
	g_free(in);
}

/* The same subscription: the subscriber, its QPN and what it asked for (GID, LID range,
 * IsGeneric, Type, TrapNumber, ProducerType). */
static int same(const struct sub *s, uint64_t guid, uint32_t qpn, const uint8_t *ii)
{
	return s->guid == guid && s->qpn == qpn && !memcmp(s->ii, ii, II_SUBSCRIBE - II_GID - 1) &&
	       s->ii[II_IS_GENERIC] == ii[II_IS_GENERIC] &&
	       !memcmp(s->ii + II_TYPE, ii + II_TYPE, 4) &&
	       be(s->ii + II_PRODUCER, 3) == be(ii + II_PRODUCER, 3);
}

static int find(const struct sa_inform *in, uint64_t guid, uint32_t qpn, const uint8_t *ii)
{
	for (guint i = 0; i < in->subs->len; i++)
		if (same(&g_array_index(in->subs, struct sub, i), guid, qpn, ii))
			return (int)i;
	return -1;
}

static uint16_t free_enum(const struct sa_inform *in, uint64_t guid)
{
	for (uint16_t e = 0;; e++) {
		guint i;
		for (i = 0; i < in->subs->len; i++) {
			const struct sub *s = &g_array_index(in->subs, struct sub, i);
			if (s->guid == guid && s->enumv == e)
				break;
		}
		if (i == in->subs->len)
			return e;
	}
}

static void drop_pending_of(struct sa_inform *in, uint32_t id)
{
	for (guint i = in->pending->len; i-- > 0;)
		if (g_array_index(in->pending, struct pending, i).sub == id)
			g_array_remove_index(in->pending, i);
}

unsigned sa_inform_count_of(const struct sa_inform *in, uint64_t guid)
{
	unsigned n = 0;
	for (guint i = 0; i < in->subs->len; i++)
		n += g_array_index(in->subs, struct sub, i).guid == guid;
	return n;
}

uint16_t sa_inform_set(struct sa_inform *in, const uint8_t *ii, const struct sa_requester *rq,
		       uint8_t *answer)
{
	uint8_t subscribe = ii[II_SUBSCRIBE];
	uint16_t begin = (uint16_t)be(ii + II_LID_BEGIN, 2), end = (uint16_t)be(ii + II_LID_END, 2);
	uint16_t trap = (uint16_t)be(ii + II_TRAP, 2);
	if (subscribe > 1 || ii[II_IS_GENERIC] > 1)
		return SA_ERR_REQ_INVALID;
	/* security traps (256-259) only to a requester presenting the SM_Key (C15-0.2-1.16) */
	if (subscribe && ii[II_IS_GENERIC] && trap >= 256 && trap <= 259 && !rq->trusted)
		return SA_ERR_REQ_INVALID;
	if (subscribe && begin != 0xFFFF && end && end < begin)
		return SA_ERR_REQ_INVALID;
	uint8_t key[II_SIZE];
	memcpy(key, ii, II_SIZE);
	uint32_t qpn = subscribe ? rq->qpn : be(ii + II_QPN, 3);
	put_be(key + II_QPN, 3, qpn);
	int at = find(in, rq->guid, qpn, key);
	if (!subscribe) {
		if (at < 0)
			return SA_ERR_REQ_INVALID; /* no such subscription */
		drop_pending_of(in, g_array_index(in->subs, struct sub, at).id);
		g_array_remove_index(in->subs, (guint)at);
		in->st.unsubscribed++;
	} else if (at >= 0) { /* again: renewed (its RespTimeValue, its address) */
		struct sub *s = &g_array_index(in->subs, struct sub, at);
		memcpy(s->ii, key, II_SIZE);
		s->lid = rq->lid;
		s->fails = 0;
	} else {
		if (in->subs->len >= SA_INFORM_MAX ||
		    (!rq->trusted && sa_inform_count_of(in, rq->guid) >= SA_INFORM_MAX_PER_PORT)) {
			in->st.refused++;
			return SA_ERR_NO_RESOURCES;
		}
		struct sub s = { .id = in->next_id++, .guid = rq->guid, .prefix = rq->prefix,
				 .lid = rq->lid, .qpn = qpn, .enumv = free_enum(in, rq->guid) };
		memcpy(s.ii, key, II_SIZE);
		g_array_append_val(in->subs, s);
		in->st.subscribed++;
	}
	memcpy(answer, ii, II_SIZE);
	return 0;
}

static void record_of(const struct sub *s, int trusted, uint8_t *rec)
{
	memset(rec, 0, IIR_SIZE);
	sa_put_gid(rec, s->prefix, s->guid);
	put_be(rec + IIR_ENUM, 2, s->enumv);
	memcpy(rec + IIR_II, s->ii, II_SIZE);
	if (!trusted) /* the subscriber's QPN only to a trusted requester (C15-0.2-1.16) */
		put_be(rec + IIR_II + II_QPN, 3, 0);
}

void sa_inform_records(struct sa_inform *in, const uint8_t *rec, uint64_t mask, int trusted,
		       int (*visible)(void *ctx, uint64_t guid), void *ctx, GByteArray *out)
{
	uint8_t r[IIR_SIZE];
	for (guint i = 0; i < in->subs->len; i++) {
		const struct sub *s = &g_array_index(in->subs, struct sub, i);
		if (visible && !visible(ctx, s->guid))
			continue;
		record_of(s, trusted, r);
		if (sa_match(iir_layout(), mask, rec, r))
			g_byte_array_append(out, r, IIR_SIZE);
	}
}

/* Does the notice fall under the subscription? */
static int matches(const struct sub *s, const uint8_t *notice)
{
	const uint8_t *ii = s->ii;
	int generic = notice[0] >> 7;
	if (ii[II_IS_GENERIC] != generic)
		return 0;
	uint16_t trap = (uint16_t)be(ii + II_TRAP, 2), type = (uint16_t)be(ii + II_TYPE, 2);
	uint32_t producer = be(ii + II_PRODUCER, 3);
	if (trap != 0xFFFF && trap != be(notice + 4, 2))
		return 0;
	if (generic && type != 0xFFFF && type != (notice[0] & 0x7F))
		return 0;
	if (producer != 0xFFFFFF && producer != be(notice + 1, 3))
		return 0;
	static const uint8_t zero[16];
	if (memcmp(ii + II_GID, zero, 16))
		return !memcmp(ii + II_GID, notice + 64, 16);
	uint16_t begin = (uint16_t)be(ii + II_LID_BEGIN, 2), end = (uint16_t)be(ii + II_LID_END, 2);
	uint16_t issuer = (uint16_t)be(notice + 6, 2);
	if (begin == 0xFFFF)
		return 1;
	return end ? issuer >= begin && issuer <= end : issuer == begin;
}

static double interval_of(const struct sub *s)
{
	double t = 4.096e-6 * (double)(1u << (s->ii[31] & 0x1F)) * 2;
	return t < 0.2 ? 0.2 : t > 4.0 ? 4.0 : t;
}

unsigned sa_inform_notice(struct sa_inform *in, const uint8_t *notice, uint64_t subject,
			  int (*may_see)(void *ctx, uint64_t subscriber, uint64_t subject), void *ctx,
			  double now)
{
	unsigned sent = 0;
	in->st.notices++;
	for (guint i = 0; i < in->subs->len; i++) {
		const struct sub *s = &g_array_index(in->subs, struct sub, i);
		if (!matches(s, notice) || (may_see && !may_see(ctx, s->guid, subject)))
			continue;
		struct pending p = { .tid = in->next_tid++, .sub = s->id, .lid = s->lid, .qpn = s->qpn,
				     .sent = 1, .interval = interval_of(s) };
		p.due = now + p.interval;
		memcpy(p.notice, notice, NOTICE_SIZE);
		g_array_append_val(in->pending, p);
		in->st.reports_sent++;
		sent++;
		if (in->send)
			in->send(in->ctx, p.lid, p.qpn, p.tid, p.notice);
	}
	return sent;
}

void sa_inform_acked(struct sa_inform *in, uint64_t tid)
{
	for (guint i = 0; i < in->pending->len; i++) {
		struct pending *p = &g_array_index(in->pending, struct pending, i);
		if ((uint32_t)p->tid != (uint32_t)tid) /* the MAD layer owns the high half */
			continue;
		for (guint k = 0; k < in->subs->len; k++)
			if (g_array_index(in->subs, struct sub, k).id == p->sub)
				g_array_index(in->subs, struct sub, k).fails = 0;
		g_array_remove_index(in->pending, i);
		in->st.reports_acked++;
		return;
	}
}

static void failed(struct sa_inform *in, uint32_t id)
{
	in->st.reports_failed++;
	for (guint k = 0; k < in->subs->len; k++) {
		struct sub *s = &g_array_index(in->subs, struct sub, k);
		if (s->id != id || ++s->fails < SA_INFORM_MAX_FAILS)
			continue;
		LOG_I("SUB-0001", "subscriber 0x%016" G_GINT64_MODIFIER "x (LID %u) acknowledged none of "
		      "its last %u Reports: its subscription to trap %u is dropped", s->guid, s->lid,
		      s->fails, be(s->ii + II_TRAP, 2));
		in->st.dropped_subscribers++;
		drop_pending_of(in, id);
		g_array_remove_index(in->subs, k);
		return;
	}
}

unsigned sa_inform_tick(struct sa_inform *in, double now)
{
	for (guint i = 0; i < in->pending->len;) {
		struct pending *p = &g_array_index(in->pending, struct pending, i);
		if (p->due > now) {
			i++;
			continue;
		}
		if (p->sent > SA_INFORM_RETRIES) {
			uint32_t id = p->sub;
			g_array_remove_index(in->pending, i);
			failed(in, id); /* may drop more pending Reports: start over */
			i = 0;
			continue;
		}
		p->sent++;
		p->due = now + p->interval;
		in->st.reports_resent++;
		if (in->send)
			in->send(in->ctx, p->lid, p->qpn, p->tid, p->notice);
		i++;
	}
	return in->pending->len;
}

void sa_inform_forget(struct sa_inform *in, uint64_t guid)
{
	for (guint i = in->subs->len; i-- > 0;) {
		struct sub *s = &g_array_index(in->subs, struct sub, i);
		if (s->guid != guid)
			continue;
		drop_pending_of(in, s->id);
		g_array_remove_index(in->subs, i);
	}
}

unsigned sa_inform_count(const struct sa_inform *in)
{
	return in->subs->len;
}

const struct sa_inform_stats *sa_inform_stats(const struct sa_inform *in)
{
	return &in->st;
}

void sa_notice_build(uint8_t *notice, uint16_t trap, uint8_t type, uint32_t producer,
		     uint16_t issuer_lid, const uint8_t *issuer_gid, const uint8_t *details)
{
	memset(notice, 0, NOTICE_SIZE);
	notice[0] = (uint8_t)(0x80 | (type & 0x7F));
	put_be(notice + 1, 3, producer);
	put_be(notice + 4, 2, trap);
	put_be(notice + 6, 2, issuer_lid);
	if (details)
		memcpy(notice + 10, details, 54);
	if (issuer_gid)
		memcpy(notice + 64, issuer_gid, 16);
}

/* ---- kept across a restart (sa/sa_db.c) ---- */

void sa_inform_foreach(const struct sa_inform *in,
		       void (*fn)(void *ctx, const struct sa_inform_sub *s), void *ctx)
{
	for (guint i = 0; i < in->subs->len; i++) {
		const struct sub *s = &g_array_index(in->subs, struct sub, i);
		struct sa_inform_sub x = { .guid = s->guid, .prefix = s->prefix, .lid = s->lid,
					   .enumv = s->enumv, .qpn = s->qpn, .ii = s->ii };
		fn(ctx, &x);
	}
}

int sa_inform_restore(struct sa_inform *in, const struct sa_inform_sub *x)
{
	uint8_t key[II_SIZE];
	memcpy(key, x->ii, II_SIZE);
	put_be(key + II_QPN, 3, x->qpn);
	if (find(in, x->guid, x->qpn, key) >= 0)
		return 1;
	if (in->subs->len >= SA_INFORM_MAX)
		return -1;
	struct sub s = { .id = in->next_id++, .guid = x->guid, .prefix = x->prefix, .lid = x->lid,
			 .qpn = x->qpn, .enumv = x->enumv };
	for (guint i = 0; i < in->subs->len; i++) { /* its Enum, unless taken since */
		const struct sub *o = &g_array_index(in->subs, struct sub, i);
		if (o->guid == x->guid && o->enumv == x->enumv) {
			s.enumv = free_enum(in, x->guid);
			break;
		}
	}
	memcpy(s.ii, key, II_SIZE);
	g_array_append_val(in->subs, s);
	in->st.subscribed++;
	return 0;
}
