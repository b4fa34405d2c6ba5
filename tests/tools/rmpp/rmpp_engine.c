/* SPDX-License-Identifier: BSD-2-Clause */
/* rmpp_engine.c - RMPP (IBA 13.6) over buffers: segmentation under the receiver's window with
 * retransmission, reassembly with ACKs, STOP/ABORT, and the kernel's read semantics, following
 * the Linux kernel's drivers/infiniband/core/mad_rmpp.c; the I/O is the caller's (rmpp_io). */
#include "rmpp_engine.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <infiniband/umad.h>

#define UMAD_HDR sizeof(struct ib_user_mad)
#define MAD_OFF_CLASS 1
#define MAD_OFF_METHOD 3
#define MAD_OFF_TID_LOW 12     /* low 32 bits of the TID: ibsim and umad2sim rewrite the rest */
#define MAD_COMMON_HDR 24
#define METHOD_RESPONSE 0x80
#define MAX_AGENTS 32
#define ETIMEDOUT_STATUS ETIMEDOUT /* user_mad's status of a send that got no ACK */

_Static_assert(sizeof(struct ib_user_mad) == 64, "libibumad's umad header (ABI 5, pkey index)");

/* Which transfer a MAD belongs to: the kernel matches TID, class and the peer. */
struct xfer_key {
	uint32_t tid_low;
	uint16_t peer_lid;
	uint8_t mgmt_class;
};

struct send_xfer {                 /* one message being segmented */
	struct send_xfer *next;
	struct xfer_key key;
	uint8_t umad[UMAD_HDR];    /* the application's header: agent, address, retries */
	uint8_t *mad;              /* the whole message */
	size_t mad_len;
	unsigned hdr_len, seg_data;    /* seg_data: data bytes per segment */
	uint32_t seg_count, pad, unit; /* unit: what PayloadLength counts per segment */
	uint32_t seg_sent;         /* highest segment sent since the last (re)start */
	uint32_t last_ack, newwin;
	uint32_t retries_left, max_retries, timeout_ms;
	uint32_t response_timeout_ms;  /* a request: wait this long for the response, then fail */
	uint8_t rmpp_version;
	uint64_t deadline;
};

struct recv_xfer {                 /* one message being reassembled (or just finished) */
	struct recv_xfer *next;
	struct xfer_key key;
	uint8_t umad[UMAD_HDR];    /* header of the first segment: agent, the sender's address */
	uint8_t (*seg)[RMPP_MAD_SIZE]; /* seg[n - 1]: segment n, when have[n - 1] */
	uint8_t *have;
	uint32_t cap;              /* entries of seg/have */
	uint32_t seg_num;          /* segments 1..seg_num are all here */
	uint32_t newwin, last_ack;
	bool complete;
	uint64_t expires;          /* unfinished: abort; finished: forget */
};

struct request {                   /* a request of ours waiting for its response */
	struct request *next;
	struct xfer_key key;
	uint8_t umad[UMAD_HDR + RMPP_MAD_SIZE]; /* the request, to resend it */
	size_t len;                /* 0: sent with RMPP, not resent */
	uint32_t retries_left, timeout_ms;
	uint64_t deadline;
};

struct message {                   /* queued for the application */
	struct message *next;
	size_t len;
	uint8_t data[];
};

struct agent {
	uint32_t id;
	uint8_t mgmt_class, rmpp_version;
	bool used;
};

struct rmpp_engine {
	struct rmpp_io io;
	struct rmpp_config cfg;
	struct rmpp_stats stats;
	struct agent agents[MAX_AGENTS];
	struct send_xfer *sends;
	struct recv_xfer *recvs;
	struct request *requests;
	struct message *head, *tail;
};

/* ------------------------------------------------------------------ wire helpers */

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

bool rmpp_is_rmpp_class(uint8_t mgmt_class)
{
	return mgmt_class == 0x03 || mgmt_class == 0x06 || mgmt_class == 0x10 || mgmt_class == 0x12 ||
	       (mgmt_class >= 0x30 && mgmt_class <= 0x4f);
}

unsigned rmpp_data_offset(uint8_t mgmt_class)
{
	if (mgmt_class == 0x03)
		return 56;                 /* SA header */
	if (mgmt_class == 0x06 || mgmt_class == 0x10 || mgmt_class == 0x12)
		return 64;                 /* device management, BIS */
	if (mgmt_class >= 0x30 && mgmt_class <= 0x4f)
		return 40;                 /* vendor range 2 (OUI) */
	return MAD_COMMON_HDR;
}

static uint8_t rmpp_flags(const uint8_t *mad)
{
	return mad[RMPP_OFF_FLAGS] & 0x7;
}

static void set_rmpp_flags(uint8_t *mad, uint8_t flags)
{
	mad[RMPP_OFF_FLAGS] = (uint8_t)((mad[RMPP_OFF_FLAGS] & 0xf8) | flags);
}

static void elog(struct rmpp_engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void elog(struct rmpp_engine *e, const char *fmt, ...)
{
	if (!e->io.log)
		return;
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	e->io.log(e->io.ctx, line);
}

static const struct ib_user_mad *umad_of(const void *buf)
{
	return buf;
}

static struct xfer_key key_of(const void *umad)
{
	const uint8_t *mad = (const uint8_t *)umad + UMAD_HDR;
	struct xfer_key k = { get_be32(mad + MAD_OFF_TID_LOW), ntohs(umad_of(umad)->addr.lid),
			      mad[MAD_OFF_CLASS] };
	return k;
}

static bool same_key(const struct xfer_key *a, const struct xfer_key *b)
{
	return a->tid_low == b->tid_low && a->peer_lid == b->peer_lid && a->mgmt_class == b->mgmt_class;
}

static const struct agent *find_agent(const struct rmpp_engine *e, uint32_t id)
{
	for (unsigned i = 0; i < MAX_AGENTS; i++)
		if (e->agents[i].used && e->agents[i].id == id)
			return &e->agents[i];
	return NULL;
}

/* ------------------------------------------------------------------ life */

void rmpp_config_default(struct rmpp_config *cfg)
{
	cfg->window = 64;
	cfg->ack_timeout_ms = 2000;
	cfg->recv_timeout_ms = 40000;
	cfg->linger_ms = 10000;
	cfg->segment_bytes = RMPP_MAD_SIZE;
}

struct rmpp_engine *rmpp_engine_new(const struct rmpp_io *io, const struct rmpp_config *cfg)
{
	struct rmpp_engine *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->io = *io;
	if (cfg)
		e->cfg = *cfg;
	else
		rmpp_config_default(&e->cfg);
	if (e->cfg.window == 0)
		e->cfg.window = 1;
	if (e->cfg.segment_bytes > RMPP_MAD_SIZE || e->cfg.segment_bytes < 64 + 8)
		e->cfg.segment_bytes = RMPP_MAD_SIZE;  /* room for the largest class header and data */
	return e;
}

static void send_free(struct send_xfer *s)
{
	free(s->mad);
	free(s);
}

static void recv_free_segments(struct recv_xfer *r)
{
	free(r->seg);
	free(r->have);
	r->seg = NULL;
	r->have = NULL;
	r->cap = 0;
}

static void recv_free(struct recv_xfer *r)
{
	recv_free_segments(r);
	free(r);
}

void rmpp_engine_free(struct rmpp_engine *e)
{
	if (!e)
		return;
	while (e->sends) {
		struct send_xfer *s = e->sends;
		e->sends = s->next;
		send_free(s);
	}
	while (e->recvs) {
		struct recv_xfer *r = e->recvs;
		e->recvs = r->next;
		recv_free(r);
	}
	while (e->requests) {
		struct request *q = e->requests;
		e->requests = q->next;
		free(q);
	}
	while (e->head) {
		struct message *m = e->head;
		e->head = m->next;
		free(m);
	}
	free(e);
}

int rmpp_engine_add_agent(struct rmpp_engine *e, uint32_t agent_id, uint8_t mgmt_class,
			  uint8_t rmpp_version)
{
	if (!rmpp_version || !rmpp_is_rmpp_class(mgmt_class))
		return -EINVAL;
	rmpp_engine_remove_agent(e, agent_id);
	for (unsigned i = 0; i < MAX_AGENTS; i++) {
		if (!e->agents[i].used) {
			e->agents[i] = (struct agent){ agent_id, mgmt_class, rmpp_version, true };
			return 0;
		}
	}
	return -ENOSPC;
}

void rmpp_engine_remove_agent(struct rmpp_engine *e, uint32_t agent_id)
{
	for (unsigned i = 0; i < MAX_AGENTS; i++)
		if (e->agents[i].used && e->agents[i].id == agent_id)
			e->agents[i].used = false;
}

/* ------------------------------------------------------------------ the application's queue */

static int enqueue(struct rmpp_engine *e, const void *hdr, size_t hdr_len, const void *body,
		   size_t body_len)
{
	struct message *m = malloc(sizeof(*m) + hdr_len + body_len);
	if (!m)
		return -ENOMEM;
	m->next = NULL;
	m->len = hdr_len + body_len;
	memcpy(m->data, hdr, hdr_len);
	if (body_len)
		memcpy(m->data + hdr_len, body, body_len);
	if (e->tail)
		e->tail->next = m;
	else
		e->head = m;
	e->tail = m;
	return 0;
}

size_t rmpp_engine_pending(const struct rmpp_engine *e)
{
	return e->head ? e->head->len : 0;
}

ssize_t rmpp_engine_read(struct rmpp_engine *e, void *buf, size_t count)
{
	struct message *m = e->head;
	if (!m)
		return -EAGAIN;
	if (m->len > UMAD_HDR + RMPP_MAD_SIZE && count < m->len) {
		/* user_mad: the first segment, whose header says the length needed */
		if (count < UMAD_HDR + RMPP_MAD_SIZE)
			return -EINVAL;
		memcpy(buf, m->data, UMAD_HDR + RMPP_MAD_SIZE);
		return -ENOSPC;
	}
	size_t n = m->len < count ? m->len : count;
	memcpy(buf, m->data, n);
	e->head = m->next;
	if (!e->head)
		e->tail = NULL;
	free(m);
	return (ssize_t)n;
}

/* ------------------------------------------------------------------ replies we make */

/* An ACK, STOP or ABORT answering TEMPLATE (a received MAD with its umad header): the header
 * bytes of the template's class copied, the method turned around, the RMPP fields given. */
static void send_control(struct rmpp_engine *e, const void *template, uint8_t type, uint8_t status,
			 uint32_t seg_num, uint32_t newwin)
{
	uint8_t out[UMAD_HDR + RMPP_MAD_SIZE];
	memset(out, 0, sizeof(out));
	memcpy(out, template, UMAD_HDR);
	const uint8_t *in = (const uint8_t *)template + UMAD_HDR;
	uint8_t *mad = out + UMAD_HDR;
	memcpy(mad, in, rmpp_data_offset(in[MAD_OFF_CLASS]));
	mad[MAD_OFF_METHOD] ^= METHOD_RESPONSE;
	mad[RMPP_OFF_VERSION] = RMPP_VERSION;
	mad[RMPP_OFF_TYPE] = type;
	set_rmpp_flags(mad, RMPP_FLAG_ACTIVE);
	mad[RMPP_OFF_STATUS] = status;
	put_be32(mad + RMPP_OFF_SEGNUM, seg_num);
	put_be32(mad + RMPP_OFF_PAYLEN, newwin);
	struct ib_user_mad *u = (struct ib_user_mad *)out;
	u->status = 0;
	u->timeout_ms = 0;
	u->retries = 0;
	u->length = UMAD_HDR + RMPP_MAD_SIZE;
	if (!u->addr.qkey)
		u->addr.qkey = htonl(0x80010000); /* the well-known GSI Q_Key */
	int rc = e->io.send(e->io.ctx, out, sizeof(out));
	if (type == RMPP_TYPE_ACK)
		e->stats.acks_sent++;
	else
		e->stats.aborts_sent++;
	elog(e, "%s tid 0x%08x class 0x%02x to lid %u: seg %u %s %u status %u%s",
	     type == RMPP_TYPE_ACK ? "ACK" : type == RMPP_TYPE_STOP ? "STOP" : "ABORT",
	     get_be32(mad + MAD_OFF_TID_LOW), mad[MAD_OFF_CLASS], ntohs(u->addr.lid), seg_num,
	     type == RMPP_TYPE_ACK ? "newwin" : "", newwin, status, rc < 0 ? " (send failed)" : "");
}

static void nack(struct rmpp_engine *e, const void *template, uint8_t status)
{
	send_control(e, template, RMPP_TYPE_ABORT, status, 0, 0);
}

/* ------------------------------------------------------------------ requests */

/* The kernel's ib_response_mad(): a response method, or TrapRepress. */
static bool is_response(const uint8_t *mad)
{
	return (mad[MAD_OFF_METHOD] & METHOD_RESPONSE) || mad[MAD_OFF_METHOD] == 0x07;
}

static struct request **find_request(struct rmpp_engine *e, const struct xfer_key *k)
{
	for (struct request **p = &e->requests; *p; p = &(*p)->next)
		if (same_key(&(*p)->key, k))
			return p;
	return NULL;
}

/* UMAD (LEN bytes, 0: sent with RMPP, not resendable) now waits TIMEOUT_MS for its response. */
static void request_wait(struct rmpp_engine *e, const void *umad, size_t len, uint32_t timeout_ms,
			 uint32_t retries, uint64_t now)
{
	struct xfer_key k = key_of(umad);
	struct request **old = find_request(e, &k);
	struct request *q = old ? *old : calloc(1, sizeof(*q));
	if (!q)
		return;
	if (!old) {
		q->next = e->requests;
		e->requests = q;
	}
	q->key = k;
	q->len = len < sizeof(q->umad) ? len : sizeof(q->umad);
	memcpy(q->umad, umad, len ? q->len : UMAD_HDR + MAD_COMMON_HDR);
	q->retries_left = len ? retries : 0;
	q->timeout_ms = timeout_ms;
	q->deadline = now + timeout_ms;
}

/* A response for the application: the request it answers waits no more. */
static void request_answered(struct rmpp_engine *e, const void *umad)
{
	if (!e->requests || !is_response((const uint8_t *)umad + UMAD_HDR))
		return;
	struct xfer_key k = key_of(umad);
	struct request **p = find_request(e, &k);
	if (p) {
		struct request *q = *p;
		*p = q->next;
		free(q);
	}
}

static void request_timeout(struct rmpp_engine *e, struct request *q, uint64_t now)
{
	if (q->retries_left) {
		q->retries_left--;
		q->deadline = now + q->timeout_ms;
		e->stats.requests_resent++;
		if (e->io.send(e->io.ctx, q->umad, q->len) < 0)
			elog(e, "request tid 0x%08x: resend failed", q->key.tid_low);
		return;
	}
	struct ib_user_mad u;
	memcpy(&u, q->umad, UMAD_HDR);
	u.status = ETIMEDOUT_STATUS;
	u.length = UMAD_HDR + MAD_COMMON_HDR;
	enqueue(e, &u, UMAD_HDR, q->umad + UMAD_HDR, MAD_COMMON_HDR);
	e->stats.requests_timed_out++;
	elog(e, "request tid 0x%08x class 0x%02x to lid %u: no response, timed out", q->key.tid_low,
	     q->key.mgmt_class, q->key.peer_lid);
	struct request **p = find_request(e, &q->key);
	if (p) {
		*p = q->next;
		free(q);
	}
}

/* ------------------------------------------------------------------ sending */

static struct send_xfer *find_send(struct rmpp_engine *e, const struct xfer_key *k)
{
	for (struct send_xfer *s = e->sends; s; s = s->next)
		if (same_key(&s->key, k))
			return s;
	return NULL;
}

static void drop_send(struct rmpp_engine *e, struct send_xfer *s)
{
	for (struct send_xfer **p = &e->sends; *p; p = &(*p)->next) {
		if (*p == s) {
			*p = s->next;
			send_free(s);
			return;
		}
	}
}

/* Segment N of S on the wire: the message's headers with the RMPP fields of segment N, then
 * its share of the data (zero-padded). */
static int send_segment(struct rmpp_engine *e, struct send_xfer *s, uint32_t n)
{
	uint8_t out[UMAD_HDR + RMPP_MAD_SIZE];
	memset(out, 0, sizeof(out));
	memcpy(out, s->umad, UMAD_HDR);
	((struct ib_user_mad *)out)->length = UMAD_HDR + RMPP_MAD_SIZE;
	uint8_t *mad = out + UMAD_HDR;
	memcpy(mad, s->mad, s->hdr_len);
	size_t from = s->hdr_len + (size_t)(n - 1) * s->seg_data;
	size_t take = s->mad_len > from ? s->mad_len - from : 0;
	if (take > s->seg_data)
		take = s->seg_data;
	memcpy(mad + s->hdr_len, s->mad + from, take);
	uint8_t flags = RMPP_FLAG_ACTIVE;
	uint32_t paylen = 0;
	if (n == 1) {
		flags |= RMPP_FLAG_FIRST;
		paylen = s->seg_count * s->unit - s->pad;
	}
	if (n == s->seg_count) {
		flags |= RMPP_FLAG_LAST;
		paylen = s->unit - s->pad;
	}
	mad[RMPP_OFF_VERSION] = s->rmpp_version;
	mad[RMPP_OFF_TYPE] = RMPP_TYPE_DATA;
	set_rmpp_flags(mad, flags);
	mad[RMPP_OFF_STATUS] = 0;
	put_be32(mad + RMPP_OFF_SEGNUM, n);
	put_be32(mad + RMPP_OFF_PAYLEN, paylen);
	return e->io.send(e->io.ctx, out, sizeof(out));
}

/* Sends what the window allows after seg_sent; the ACK timer restarts. */
static void send_window(struct rmpp_engine *e, struct send_xfer *s, uint64_t now, bool resend)
{
	uint32_t last = s->newwin < s->seg_count ? s->newwin : s->seg_count;
	while (s->seg_sent < last) {
		s->seg_sent++;
		if (send_segment(e, s, s->seg_sent) < 0)
			elog(e, "segment %u of tid 0x%08x: send failed", s->seg_sent, s->key.tid_low);
		if (resend)
			e->stats.segments_resent++;
		else
			e->stats.segments_sent++;
	}
	s->deadline = now + s->timeout_ms;
}

int rmpp_engine_send(struct rmpp_engine *e, const void *umad, size_t len, uint64_t now)
{
	if (len < UMAD_HDR + RMPP_HDR_END)
		return 1;
	const struct ib_user_mad *u = umad;
	const uint8_t *mad = (const uint8_t *)umad + UMAD_HDR;
	const struct agent *a = find_agent(e, u->agent_id);
	uint8_t type = mad[RMPP_OFF_TYPE];
	if (!a)
		return 1;
	bool request = !is_response(mad) && u->timeout_ms;
	if (!rmpp_is_rmpp_class(mad[MAD_OFF_CLASS]) || !(rmpp_flags(mad) & RMPP_FLAG_ACTIVE) ||
	    (type != RMPP_TYPE_DATA && type != 0)) {
		/* one MAD (the kernel also sends an ACK/STOP/ABORT of the program's so) */
		if (request)
			request_wait(e, umad, len, u->timeout_ms, u->retries, now);
		return 1;
	}
	struct send_xfer *s = calloc(1, sizeof(*s));
	size_t mad_len = len - UMAD_HDR;
	if (!s || !(s->mad = malloc(mad_len))) {
		free(s);
		return -ENOMEM;
	}
	memcpy(s->umad, umad, UMAD_HDR);
	memcpy(s->mad, mad, mad_len);
	s->mad_len = mad_len;
	s->key = key_of(umad);
	s->rmpp_version = a->rmpp_version;
	s->hdr_len = rmpp_data_offset(mad[MAD_OFF_CLASS]);
	s->seg_data = e->cfg.segment_bytes - s->hdr_len;
	s->unit = e->cfg.segment_bytes - RMPP_HDR_END;
	if (mad_len < s->hdr_len) {
		send_free(s);
		return -EINVAL;
	}
	size_t data_len = mad_len - s->hdr_len;
	s->seg_count = data_len ? (uint32_t)((data_len + s->seg_data - 1) / s->seg_data) : 1;
	s->pad = (uint32_t)(s->seg_count * s->seg_data - data_len);
	s->newwin = 1;  /* until the receiver's first ACK opens its window */
	s->max_retries = s->retries_left = u->retries;
	/* the kernel waits the send's own timeout; here at least ack_timeout_ms: on the test bed
	 * (ASan, a loaded machine) an ACK can take longer than OpenSM's 200 ms, and a segment sent
	 * again after the receiver is gone reaches the next process ibsim seats on that node */
	s->timeout_ms = u->timeout_ms > e->cfg.ack_timeout_ms ? u->timeout_ms : e->cfg.ack_timeout_ms;
	s->response_timeout_ms = request ? u->timeout_ms : 0;
	struct send_xfer *old = find_send(e, &s->key);
	if (old)
		drop_send(e, old);
	s->next = e->sends;
	e->sends = s;
	elog(e, "send tid 0x%08x class 0x%02x to lid %u: %zu bytes, %u segments", s->key.tid_low,
	     s->key.mgmt_class, s->key.peer_lid, mad_len, s->seg_count);
	send_window(e, s, now, false);
	return 0;
}

/* An ACK for one of our sends (mad_rmpp.c process_rmpp_ack). */
static void receive_ack(struct rmpp_engine *e, const void *umad, uint64_t now)
{
	const uint8_t *mad = (const uint8_t *)umad + UMAD_HDR;
	struct xfer_key k = key_of(umad);
	struct send_xfer *s = find_send(e, &k);
	e->stats.acks_received++;
	if (mad[RMPP_OFF_STATUS]) {
		if (s)
			drop_send(e, s);
		nack(e, umad, RMPP_STATUS_BAD_STATUS);
		return;
	}
	uint32_t seg = get_be32(mad + RMPP_OFF_SEGNUM), newwin = get_be32(mad + RMPP_OFF_PAYLEN);
	if (newwin < seg) {
		if (s)
			drop_send(e, s);
		nack(e, umad, RMPP_STATUS_W2S);
		return;
	}
	if (!s)
		return;  /* unmatched: an old transfer's, or a duplicate of the last ACK */
	if (seg > s->seg_count || seg > s->newwin) {
		drop_send(e, s);
		nack(e, umad, RMPP_STATUS_S2B);
		return;
	}
	if (newwin < s->newwin || seg < s->last_ack)
		return;  /* an old ACK */
	if (seg > s->last_ack) {
		s->last_ack = seg;
		s->retries_left = s->max_retries;
	}
	s->newwin = newwin;
	if (s->last_ack == s->seg_count) {
		elog(e, "send tid 0x%08x done: %u segments acknowledged", s->key.tid_low, s->seg_count);
		e->stats.messages_sent++;
		if (s->response_timeout_ms) {
			uint8_t hdr[UMAD_HDR + MAD_COMMON_HDR];
			memcpy(hdr, s->umad, UMAD_HDR);
			memcpy(hdr + UMAD_HDR, s->mad, MAD_COMMON_HDR);
			request_wait(e, hdr, 0, s->response_timeout_ms, 0, now);
		}
		drop_send(e, s);
		return;
	}
	if (s->seg_sent < s->last_ack)
		s->seg_sent = s->last_ack;
	send_window(e, s, now, false);
}

/* ------------------------------------------------------------------ receiving */

static struct recv_xfer *find_recv(struct rmpp_engine *e, const struct xfer_key *k)
{
	for (struct recv_xfer *r = e->recvs; r; r = r->next)
		if (same_key(&r->key, k))
			return r;
	return NULL;
}

static void drop_recv(struct rmpp_engine *e, struct recv_xfer *r)
{
	for (struct recv_xfer **p = &e->recvs; *p; p = &(*p)->next) {
		if (*p == r) {
			*p = r->next;
			recv_free(r);
			return;
		}
	}
}

static int recv_store(struct recv_xfer *r, uint32_t n, const uint8_t *mad)
{
	if (n > r->cap) {
		uint32_t cap = r->cap ? r->cap : 8;
		while (cap < n)
			cap *= 2;
		void *seg = realloc(r->seg, (size_t)cap * RMPP_MAD_SIZE);
		if (!seg)
			return -ENOMEM;
		r->seg = seg;
		uint8_t *have = realloc(r->have, cap);
		if (!have)
			return -ENOMEM;
		memset(have + r->cap, 0, cap - r->cap);
		r->have = have;
		r->cap = cap;
	}
	memcpy(r->seg[n - 1], mad, RMPP_MAD_SIZE);
	r->have[n - 1] = 1;
	return 0;
}

static bool recv_has(const struct recv_xfer *r, uint32_t n)
{
	return n >= 1 && n <= r->cap && r->have[n - 1];
}

static void ack(struct rmpp_engine *e, struct recv_xfer *r, const void *template)
{
	r->last_ack = r->seg_num;
	send_control(e, template, RMPP_TYPE_ACK, 0, r->seg_num, r->newwin);
}

/* PayloadLength per segment of a finished transfer of N segments: the first segment's
 * (the total) less the last one's, over N - 1. A full segment counts RMPP_SEG_PAYLOAD; a
 * sender that fills less of each MAD (rmpp_config.segment_bytes) counts less. */
static uint32_t recv_unit(const struct recv_xfer *r, unsigned hdr_len)
{
	uint32_t n = r->seg_num;
	if (n < 2)
		return RMPP_SEG_PAYLOAD;
	uint32_t first = get_be32(r->seg[0] + RMPP_OFF_PAYLEN);
	uint32_t last = get_be32(r->seg[n - 1] + RMPP_OFF_PAYLEN);
	if (first <= last || (first - last) % (n - 1))
		return RMPP_SEG_PAYLOAD;
	uint32_t unit = (first - last) / (n - 1);
	return unit > hdr_len - RMPP_HDR_END && unit <= RMPP_SEG_PAYLOAD ? unit : RMPP_SEG_PAYLOAD;
}

/* The message of a finished transfer, as the kernel hands it up: the first segment's headers,
 * then every segment's data; its length from the last segment's PayloadLength. */
static int recv_deliver(struct rmpp_engine *e, struct recv_xfer *r)
{
	uint8_t mgmt_class = r->seg[0][MAD_OFF_CLASS];
	unsigned hdr_len = rmpp_data_offset(mgmt_class);
	uint32_t unit = recv_unit(r, hdr_len), seg_data = unit - (hdr_len - RMPP_HDR_END);
	int64_t pad = (int64_t)unit - (int64_t)get_be32(r->seg[r->seg_num - 1] + RMPP_OFF_PAYLEN);
	if (pad < 0 || pad > (int64_t)seg_data)
		pad = 0;
	size_t mad_len = hdr_len + (size_t)r->seg_num * seg_data - (size_t)pad;
	struct message *m = malloc(sizeof(*m) + UMAD_HDR + mad_len);
	if (!m)
		return -ENOMEM;
	m->next = NULL;
	m->len = UMAD_HDR + mad_len;
	memcpy(m->data, r->umad, UMAD_HDR);
	struct ib_user_mad *u = (struct ib_user_mad *)m->data;
	u->status = 0;
	u->length = (uint32_t)m->len;
	uint8_t *out = m->data + UMAD_HDR;
	memcpy(out, r->seg[0], hdr_len);
	size_t at = hdr_len;
	for (uint32_t n = 0; n < r->seg_num && at < mad_len; n++) {
		size_t take = mad_len - at < seg_data ? mad_len - at : seg_data;
		memcpy(out + at, r->seg[n] + hdr_len, take);
		at += take;
	}
	if (e->tail)
		e->tail->next = m;
	else
		e->head = m;
	e->tail = m;
	request_answered(e, m->data);
	e->stats.messages_received++;
	elog(e, "received tid 0x%08x class 0x%02x from lid %u: %zu bytes in %u segments",
	     r->key.tid_low, r->key.mgmt_class, r->key.peer_lid, mad_len, r->seg_num);
	return 1;
}

static int recv_complete(struct rmpp_engine *e, struct recv_xfer *r, const void *template,
			 uint64_t now)
{
	ack(e, r, template);
	int rc = recv_deliver(e, r);
	r->complete = true;
	r->expires = now + e->cfg.linger_ms;
	recv_free_segments(r);
	return rc < 0 ? 0 : rc;
}

/* A DATA segment that is not the first of a new transfer (mad_rmpp.c continue_rmpp). */
static int recv_continue(struct rmpp_engine *e, struct recv_xfer *r, const void *umad, uint64_t now)
{
	const uint8_t *mad = (const uint8_t *)umad + UMAD_HDR;
	uint32_t n = get_be32(mad + RMPP_OFF_SEGNUM);
	if (!r || n > r->newwin || n == 0) {
		e->stats.segments_dropped++;
		return 0;
	}
	if (n <= r->last_ack || r->complete) {
		ack(e, r, umad);  /* the sender missed our ACK */
		return 0;
	}
	if (recv_has(r, n)) {
		e->stats.segments_dropped++;  /* a duplicate inside the window */
		return 0;
	}
	if (recv_store(r, n, mad) < 0)
		return 0;
	if (n != r->seg_num + 1)
		return 0;  /* kept until the gap before it is filled */
	while (recv_has(r, r->seg_num + 1))
		r->seg_num++;
	if (rmpp_flags(r->seg[r->seg_num - 1]) & RMPP_FLAG_LAST)
		return recv_complete(e, r, umad, now);
	if (r->seg_num == r->newwin) {
		r->newwin += e->cfg.window;
		ack(e, r, umad);
	}
	return 0;
}

/* The first segment (mad_rmpp.c start_rmpp). */
static int recv_start(struct rmpp_engine *e, const void *umad, uint64_t now)
{
	const uint8_t *mad = (const uint8_t *)umad + UMAD_HDR;
	struct xfer_key k = key_of(umad);
	struct recv_xfer *r = find_recv(e, &k);
	if (r)
		return recv_continue(e, r, umad, now);  /* a duplicate first segment */
	r = calloc(1, sizeof(*r));
	if (!r || recv_store(r, 1, mad) < 0) {
		if (r)
			recv_free(r);
		return 0;
	}
	r->key = k;
	memcpy(r->umad, umad, UMAD_HDR);
	r->seg_num = 1;
	r->newwin = 1;
	r->next = e->recvs;
	e->recvs = r;
	if (rmpp_flags(mad) & RMPP_FLAG_LAST)
		return recv_complete(e, r, umad, now);
	r->expires = now + e->cfg.recv_timeout_ms;
	r->newwin += e->cfg.window;
	ack(e, r, umad);
	return 0;
}

static int receive_data(struct rmpp_engine *e, const void *umad, uint64_t now)
{
	const uint8_t *mad = (const uint8_t *)umad + UMAD_HDR;
	e->stats.segments_received++;
	if (mad[RMPP_OFF_STATUS]) {
		nack(e, umad, RMPP_STATUS_BAD_STATUS);
		return 0;
	}
	bool first = rmpp_flags(mad) & RMPP_FLAG_FIRST;
	if ((get_be32(mad + RMPP_OFF_SEGNUM) == 1) != first) {
		nack(e, umad, RMPP_STATUS_BAD_SEG);
		return 0;
	}
	if (first)
		return recv_start(e, umad, now);
	struct xfer_key k = key_of(umad);
	return recv_continue(e, find_recv(e, &k), umad, now);
}

/* STOP or ABORT: whatever runs under this key is dropped, sent or received. */
static void receive_stop(struct rmpp_engine *e, const void *umad, uint8_t type)
{
	struct xfer_key k = key_of(umad);
	struct send_xfer *s = find_send(e, &k);
	struct recv_xfer *r = find_recv(e, &k);
	if (type == RMPP_TYPE_STOP)
		e->stats.stops_received++;
	else
		e->stats.aborts_received++;
	elog(e, "%s tid 0x%08x from lid %u status %u: %s", type == RMPP_TYPE_STOP ? "STOP" : "ABORT",
	     k.tid_low, k.peer_lid, ((const uint8_t *)umad)[UMAD_HDR + RMPP_OFF_STATUS],
	     s || (r && !r->complete) ? "transfer dropped" : "no transfer");
	if (s)
		drop_send(e, s);
	if (r && !r->complete)
		drop_recv(e, r);
}

int rmpp_engine_receive(struct rmpp_engine *e, const void *umad, size_t len, uint64_t now)
{
	const uint8_t *mad = (const uint8_t *)umad + UMAD_HDR;
	const struct agent *a = len >= UMAD_HDR + MAD_COMMON_HDR && umad_of(umad)->status == 0 ?
					find_agent(e, umad_of(umad)->agent_id) : NULL;
	if (!a || !rmpp_is_rmpp_class(mad[MAD_OFF_CLASS]) || len < UMAD_HDR + RMPP_HDR_END ||
	    !(rmpp_flags(mad) & RMPP_FLAG_ACTIVE)) {
		if (a)
			request_answered(e, umad);
		return enqueue(e, umad, len, NULL, 0) < 0 ? 0 : 1;
	}
	uint8_t padded[UMAD_HDR + RMPP_MAD_SIZE];
	if (len < sizeof(padded)) {  /* a short MAD: what it lacks reads as zeros */
		memset(padded, 0, sizeof(padded));
		memcpy(padded, umad, len);
		umad = padded;
		mad = padded + UMAD_HDR;
	}
	if (mad[RMPP_OFF_VERSION] != RMPP_VERSION) {
		struct xfer_key k = key_of(umad);
		struct recv_xfer *r = find_recv(e, &k);
		if (r && !r->complete)
			drop_recv(e, r);
		nack(e, umad, RMPP_STATUS_UNV);
		return 0;
	}
	switch (mad[RMPP_OFF_TYPE]) {
	case RMPP_TYPE_DATA:
		return receive_data(e, umad, now);
	case RMPP_TYPE_ACK:
		receive_ack(e, umad, now);
		return 0;
	case RMPP_TYPE_STOP:
	case RMPP_TYPE_ABORT:
		receive_stop(e, umad, mad[RMPP_OFF_TYPE]);
		return 0;
	default:
		nack(e, umad, RMPP_STATUS_BADT);
		return 0;
	}
}

/* ------------------------------------------------------------------ timers */

/* A send whose ACK did not come: retransmit from the last ACKed segment, or give up and tell
 * the application as user_mad does (its header and MAD header, status ETIMEDOUT). */
static void send_timeout(struct rmpp_engine *e, struct send_xfer *s, uint64_t now)
{
	if (s->retries_left == 0) {
		struct ib_user_mad u;
		memcpy(&u, s->umad, UMAD_HDR);
		u.status = ETIMEDOUT_STATUS;
		u.length = UMAD_HDR + MAD_COMMON_HDR;
		enqueue(e, &u, UMAD_HDR, s->mad, MAD_COMMON_HDR);
		e->stats.sends_timed_out++;
		elog(e, "send tid 0x%08x timed out: %u of %u segments acknowledged", s->key.tid_low,
		     s->last_ack, s->seg_count);
		drop_send(e, s);
		return;
	}
	s->retries_left--;
	elog(e, "send tid 0x%08x: no ACK, resending from segment %u", s->key.tid_low, s->last_ack + 1);
	s->seg_sent = s->last_ack;
	send_window(e, s, now, true);
}

static void recv_expire(struct rmpp_engine *e, struct recv_xfer *r)
{
	if (!r->complete) {
		uint8_t template[UMAD_HDR + RMPP_MAD_SIZE];
		memcpy(template, r->umad, UMAD_HDR);
		memcpy(template + UMAD_HDR, r->seg[0], RMPP_MAD_SIZE);
		nack(e, template, RMPP_STATUS_T2L);
		e->stats.receives_timed_out++;
	}
	drop_recv(e, r);
}

void rmpp_engine_tick(struct rmpp_engine *e, uint64_t now)
{
	for (struct send_xfer *s = e->sends, *next; s; s = next) {
		next = s->next;
		if (now >= s->deadline)
			send_timeout(e, s, now);
	}
	for (struct recv_xfer *r = e->recvs, *next; r; r = next) {
		next = r->next;
		if (now >= r->expires)
			recv_expire(e, r);
	}
	for (struct request *q = e->requests, *next; q; q = next) {
		next = q->next;
		if (now >= q->deadline)
			request_timeout(e, q, now);
	}
}

uint64_t rmpp_engine_next_deadline(const struct rmpp_engine *e)
{
	uint64_t next = UINT64_MAX;
	for (const struct send_xfer *s = e->sends; s; s = s->next)
		if (s->deadline < next)
			next = s->deadline;
	for (const struct recv_xfer *r = e->recvs; r; r = r->next)
		if (r->expires < next)
			next = r->expires;
	for (const struct request *q = e->requests; q; q = q->next)
		if (q->deadline < next)
			next = q->deadline;
	return next;
}

unsigned rmpp_engine_transfers(const struct rmpp_engine *e)
{
	unsigned n = 0;
	for (const struct send_xfer *s = e->sends; s; s = s->next)
		n++;
	for (const struct recv_xfer *r = e->recvs; r; r = r->next)
		n++;
	for (const struct request *q = e->requests; q; q = q->next)
		n++;
	return n;
}

const struct rmpp_stats *rmpp_engine_stats(const struct rmpp_engine *e)
{
	return &e->stats;
}
