/* SPDX-License-Identifier: BSD-2-Clause */
/* test_rmpp.c - the RMPP engine of tests/tools/rmpp.so without ibsim: two engines (a sender,
 * "the SA", and a receiver, "the client") joined by a fake wire that the tests drive MAD by
 * MAD, so that segments and ACKs can be looked at, lost, duplicated and reordered, and time
 * is whatever the test says. Checked against IBA 13.6 as the kernel's mad_rmpp.c runs it:
 * segment headers, lengths and flags, reassembly, ACKs and windows, retransmission, STOP and
 * ABORT, the -ENOSPC read; then the request timeouts and the store of the MAD ends umad2sim
 * loses. */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include <glib.h>
#include <infiniband/umad.h>
#include "tests/tools/rmpp/rmpp_engine.h"
#include "tests/tools/rmpp/tail_stash.h"

#define HDR sizeof(struct ib_user_mad)
#define SA_HDR 56                  /* MAD + RMPP + SA headers */
#define SA_DATA 200                /* data bytes per full SA segment */
#define T0 1000000                 /* the tests' clock, in ms */
#define SA_LID 1
#define CLIENT_LID 13
#define SA_AGENT 2
#define CLIENT_AGENT 0
#define RTIME_FLAGS (14 << 3)      /* RRespTime 14, as OpenSM sets it */

/* One end of the fake wire: its engine and what it put on the wire, oldest first. */
struct side {
	struct rmpp_engine *e;
	GPtrArray *out;            /* GBytes: umad header + MAD */
	uint16_t lid;
	uint32_t agent;
};

static int side_send(void *ctx, const void *umad, size_t len)
{
	struct side *s = ctx;
	g_assert_cmpuint(len, ==, HDR + RMPP_MAD_SIZE);
	g_ptr_array_add(s->out, g_bytes_new(umad, len));
	return 0;
}

static void side_init(struct side *s, uint16_t lid, uint32_t agent, const struct rmpp_config *cfg)
{
	s->out = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
	s->lid = lid;
	s->agent = agent;
	struct rmpp_io io = { s, side_send, NULL };
	s->e = rmpp_engine_new(&io, cfg);
	g_assert_nonnull(s->e);
	g_assert_cmpint(rmpp_engine_add_agent(s->e, agent, 0x03, 1), ==, 0);
}

static void side_free(struct side *s)
{
	rmpp_engine_free(s->e);
	g_ptr_array_unref(s->out);
}

static const uint8_t *mad_of(GBytes *b)
{
	return (const uint8_t *)g_bytes_get_data(b, NULL) + HDR;
}

static uint32_t be32(const uint8_t *p)
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

static uint8_t type_of(GBytes *b) { return mad_of(b)[RMPP_OFF_TYPE]; }
static uint8_t flags_of(GBytes *b) { return mad_of(b)[RMPP_OFF_FLAGS] & 7; }
static uint32_t seg_of(GBytes *b) { return be32(mad_of(b) + RMPP_OFF_SEGNUM); }
static uint32_t paylen_of(GBytes *b) { return be32(mad_of(b) + RMPP_OFF_PAYLEN); }

/* Hands MAD (as FROM put it on the wire) to TO, addressed as umad2sim would: TO's agent, the
 * sender's LID. */
static int deliver(const struct side *from, struct side *to, GBytes *mad, uint64_t now)
{
	gsize len;
	const uint8_t *data = g_bytes_get_data(mad, &len);
	uint8_t *buf = g_memdup2(data, len);
	struct ib_user_mad *u = (struct ib_user_mad *)buf;
	u->agent_id = to->agent;
	u->status = 0;
	u->addr.lid = htons(from->lid);
	int n = rmpp_engine_receive(to->e, buf, len, now);
	g_free(buf);
	return n;
}

/* Takes FROM's oldest MAD off the wire (the caller unrefs it). */
static GBytes *take(struct side *from)
{
	g_assert_cmpuint(from->out->len, >, 0);
	return g_ptr_array_steal_index(from->out, 0);
}

static void pass_one(struct side *from, struct side *to, uint64_t now)
{
	GBytes *b = take(from);
	deliver(from, to, b, now);
	g_bytes_unref(b);
}

/* Everything on the wire goes across, both ways, until both ends are quiet. */
static void run_until_quiet(struct side *a, struct side *b, uint64_t now)
{
	while (a->out->len || b->out->len) {
		while (a->out->len)
			pass_one(a, b, now);
		while (b->out->len)
			pass_one(b, a, now);
	}
}

static void drop_all(struct side *s)
{
	g_ptr_array_set_size(s->out, 0);
}

/* A GetTableResp from the SA to the client: SA header with attribute offset 14 (112-byte
 * records), DATA_LEN bytes of numbered data; umad header addressed to the client. */
static uint8_t *make_table(size_t data_len, uint32_t tid, uint32_t retries, size_t *len)
{
	*len = HDR + SA_HDR + data_len;
	uint8_t *buf = g_malloc0(*len);
	struct ib_user_mad *u = (struct ib_user_mad *)buf;
	u->agent_id = SA_AGENT;
	u->retries = retries;
	u->addr.lid = htons(CLIENT_LID);
	u->addr.qpn = htonl(1);
	uint8_t *mad = buf + HDR;
	mad[0] = 1;                /* base version */
	mad[1] = 0x03;             /* SA */
	mad[2] = 2;
	mad[3] = 0x92;             /* GetTableResp */
	put_be32(mad + 12, tid);
	mad[16] = 0x00;
	mad[17] = 0x11;            /* NodeRecord */
	mad[RMPP_OFF_VERSION] = 1;
	mad[RMPP_OFF_TYPE] = RMPP_TYPE_DATA;
	mad[RMPP_OFF_FLAGS] = RTIME_FLAGS | RMPP_FLAG_ACTIVE;
	mad[44] = 0;
	mad[45] = 14;              /* attribute offset, in 8-byte words */
	for (size_t i = 0; i < data_len; i++)
		mad[SA_HDR + i] = (uint8_t)(i * 7 + 3 + i / 256);
	return buf;
}

/* An ACK/STOP/ABORT as the client would send it for MSG (one of the SA's segments). */
static GBytes *make_control(GBytes *msg, uint8_t type, uint8_t status, uint32_t seg, uint32_t newwin)
{
	gsize len;
	const void *data = g_bytes_get_data(msg, &len);
	uint8_t *buf = g_memdup2(data, len);
	uint8_t *mad = buf + HDR;
	memset(mad + SA_HDR, 0, RMPP_MAD_SIZE - SA_HDR);
	mad[3] ^= 0x80;
	mad[RMPP_OFF_TYPE] = type;
	mad[RMPP_OFF_FLAGS] = RMPP_FLAG_ACTIVE;
	mad[RMPP_OFF_STATUS] = status;
	put_be32(mad + RMPP_OFF_SEGNUM, seg);
	put_be32(mad + RMPP_OFF_PAYLEN, newwin);
	return g_bytes_new_take(buf, len);
}

/* The client reads the whole message and it equals what the SA sent (headers but the RMPP
 * fields, which are the first segment's, and every data byte). */
static void assert_received(struct side *client, const uint8_t *sent, size_t sent_len)
{
	g_assert_cmpuint(rmpp_engine_pending(client->e), ==, sent_len);
	uint8_t *got = g_malloc(sent_len + 100);
	ssize_t n = rmpp_engine_read(client->e, got, sent_len + 100);
	g_assert_cmpint(n, ==, (ssize_t)sent_len);
	const struct ib_user_mad *u = (const struct ib_user_mad *)got;
	g_assert_cmpuint(u->length, ==, sent_len);
	g_assert_cmpuint(u->agent_id, ==, CLIENT_AGENT);
	g_assert_cmpuint(ntohs(u->addr.lid), ==, SA_LID);
	g_assert_cmpmem(got + HDR, 24, sent + HDR, 24);
	g_assert_cmpuint(got[HDR + RMPP_OFF_FLAGS] & 7, ==, RMPP_FLAG_ACTIVE | RMPP_FLAG_FIRST |
			 (sent_len <= HDR + 256 ? RMPP_FLAG_LAST : 0));
	g_assert_cmpmem(got + HDR + RMPP_HDR_END, sent_len - HDR - RMPP_HDR_END,
			sent + HDR + RMPP_HDR_END, sent_len - HDR - RMPP_HDR_END);
	g_free(got);
}

/* ---------------------------------------------------------------- segmentation */

static void test_segmentation(void)
{
	struct side sa, client;
	side_init(&sa, SA_LID, SA_AGENT, NULL);
	side_init(&client, CLIENT_LID, CLIENT_AGENT, NULL);
	size_t len;
	uint8_t *msg = make_table(950, 0x1234, 3, &len);  /* 5 segments, 50 bytes of padding */
	g_assert_cmpint(rmpp_engine_send(sa.e, msg, len, T0), ==, 0);

	/* window 1 until the receiver's first ACK */
	g_assert_cmpuint(sa.out->len, ==, 1);
	GBytes *s1 = g_ptr_array_index(sa.out, 0);
	g_assert_cmpuint(mad_of(s1)[RMPP_OFF_VERSION], ==, 1);
	g_assert_cmpuint(type_of(s1), ==, RMPP_TYPE_DATA);
	g_assert_cmpuint(flags_of(s1), ==, RMPP_FLAG_ACTIVE | RMPP_FLAG_FIRST);
	g_assert_cmpuint(mad_of(s1)[RMPP_OFF_FLAGS] & 0xf8, ==, RTIME_FLAGS);  /* RRespTime kept */
	g_assert_cmpuint(seg_of(s1), ==, 1);
	g_assert_cmpuint(paylen_of(s1), ==, 5 * 220 - 50);  /* the whole payload, SA headers too */
	g_assert_cmpmem(mad_of(s1), 24, msg + HDR, 24);
	g_assert_cmpmem(mad_of(s1) + RMPP_HDR_END, 20, msg + HDR + RMPP_HDR_END, 20);
	g_assert_cmpmem(mad_of(s1) + SA_HDR, SA_DATA, msg + HDR + SA_HDR, SA_DATA);
	g_assert_cmpuint(rmpp_engine_next_deadline(sa.e), ==, T0 + 2000);

	/* the receiver opens a window of 5: segments 2..5 follow at once */
	GBytes *ack = make_control(s1, RMPP_TYPE_ACK, 0, 1, 5);
	deliver(&client, &sa, ack, T0 + 1);
	g_bytes_unref(ack);
	g_assert_cmpuint(sa.out->len, ==, 5);
	for (uint32_t n = 2; n <= 5; n++) {
		GBytes *s = g_ptr_array_index(sa.out, n - 1);
		g_assert_cmpuint(seg_of(s), ==, n);
		g_assert_cmpuint(type_of(s), ==, RMPP_TYPE_DATA);
		g_assert_cmpuint(flags_of(s), ==, RMPP_FLAG_ACTIVE | (n == 5 ? RMPP_FLAG_LAST : 0));
		g_assert_cmpuint(paylen_of(s), ==, n == 5 ? 220 - 50 : 0);
		g_assert_cmpmem(mad_of(s) + RMPP_HDR_END, 20, msg + HDR + RMPP_HDR_END, 20);  /* SA header */
		size_t from = (n - 1) * SA_DATA, take = n == 5 ? 150 : SA_DATA;
		g_assert_cmpmem(mad_of(s) + SA_HDR, take, msg + HDR + SA_HDR + from, take);
		if (n == 5) {
			static const uint8_t zeros[50];
			g_assert_cmpmem(mad_of(s) + SA_HDR + 150, 50, zeros, 50);
		}
	}
	/* the last ACK ends the send */
	ack = make_control(s1, RMPP_TYPE_ACK, 0, 5, 5);
	deliver(&client, &sa, ack, T0 + 2);
	g_bytes_unref(ack);
	g_assert_cmpuint(rmpp_engine_transfers(sa.e), ==, 0);
	g_assert_cmpuint(rmpp_engine_next_deadline(sa.e), ==, UINT64_MAX);
	g_assert_cmpuint(rmpp_engine_stats(sa.e)->messages_sent, ==, 1);
	g_assert_cmpuint(rmpp_engine_stats(sa.e)->segments_sent, ==, 5);
	g_free(msg);
	side_free(&sa);
	side_free(&client);
}

static void test_single_segment(void)
{
	struct side sa, client;
	side_init(&sa, SA_LID, SA_AGENT, NULL);
	side_init(&client, CLIENT_LID, CLIENT_AGENT, NULL);
	size_t len;
	uint8_t *msg = make_table(112, 7, 3, &len);
	g_assert_cmpint(rmpp_engine_send(sa.e, msg, len, T0), ==, 0);
	GBytes *s1 = g_ptr_array_index(sa.out, 0);
	g_assert_cmpuint(flags_of(s1), ==, RMPP_FLAG_ACTIVE | RMPP_FLAG_FIRST | RMPP_FLAG_LAST);
	g_assert_cmpuint(paylen_of(s1), ==, 20 + 112);
	run_until_quiet(&sa, &client, T0);
	assert_received(&client, msg, len);
	/* the receiver ACKed the one segment: the sender is done, the receiver lingers */
	g_assert_cmpuint(rmpp_engine_transfers(sa.e), ==, 0);
	g_assert_cmpuint(rmpp_engine_stats(client.e)->acks_sent, ==, 1);
	g_free(msg);
	side_free(&sa);
	side_free(&client);
}

/* ---------------------------------------------------------------- reassembly */

static void test_reassembly_in_order(void)
{
	struct side sa, client;
	side_init(&sa, SA_LID, SA_AGENT, NULL);
	side_init(&client, CLIENT_LID, CLIENT_AGENT, NULL);
	size_t len;
	uint8_t *msg = make_table(200 * 112, 0xabcdef01, 3, &len);  /* 112 segments: two windows */
	g_assert_cmpint(rmpp_engine_send(sa.e, msg, len, T0), ==, 0);
	run_until_quiet(&sa, &client, T0);
	assert_received(&client, msg, len);
	const struct rmpp_stats *c = rmpp_engine_stats(client.e), *s = rmpp_engine_stats(sa.e);
	g_assert_cmpuint(s->segments_sent, ==, 112);
	g_assert_cmpuint(s->segments_resent, ==, 0);
	g_assert_cmpuint(c->segments_received, ==, 112);
	/* ACKs: segment 1 (window to 65), segment 65 (window to 129), the last one */
	g_assert_cmpuint(c->acks_sent, ==, 3);
	g_assert_cmpuint(s->messages_sent, ==, 1);
	g_assert_cmpint(rmpp_engine_read(client.e, msg, len), ==, -EAGAIN);
	g_free(msg);
	side_free(&sa);
	side_free(&client);
}

static void test_reassembly_out_of_order(void)
{
	struct side sa, client;
	side_init(&sa, SA_LID, SA_AGENT, NULL);
	side_init(&client, CLIENT_LID, CLIENT_AGENT, NULL);
	size_t len;
	uint8_t *msg = make_table(950, 42, 3, &len);
	rmpp_engine_send(sa.e, msg, len, T0);
	pass_one(&sa, &client, T0);        /* segment 1 */
	g_assert_cmpuint(client.out->len, ==, 1);
	GBytes *ack = g_ptr_array_index(client.out, 0);
	g_assert_cmpuint(type_of(ack), ==, RMPP_TYPE_ACK);
	g_assert_cmpuint(mad_of(ack)[3], ==, 0x12);  /* GetTableResp turned around */
	g_assert_cmpuint(seg_of(ack), ==, 1);
	g_assert_cmpuint(paylen_of(ack), ==, 65);    /* NewWindowLast: 1 + the kernel's 64 */
	pass_one(&client, &sa, T0);
	g_assert_cmpuint(sa.out->len, ==, 4);        /* 2..5 */
	GBytes *seg[6] = { 0 };
	for (int n = 2; n <= 5; n++)
		seg[n] = take(&sa);
	/* beyond the window: the same segment numbered 70 */
	gsize l;
	const void *data = g_bytes_get_data(seg[2], &l);
	uint8_t *far = g_memdup2(data, l);
	put_be32(far + HDR + RMPP_OFF_SEGNUM, 70);
	GBytes *seg70 = g_bytes_new_take(far, l);

	const struct rmpp_stats *c = rmpp_engine_stats(client.e);
	g_assert_cmpint(deliver(&sa, &client, seg[3], T0), ==, 0);
	g_assert_cmpint(deliver(&sa, &client, seg[3], T0), ==, 0);   /* duplicate */
	g_assert_cmpuint(c->segments_dropped, ==, 1);
	g_assert_cmpint(deliver(&sa, &client, seg70, T0), ==, 0);     /* out of the window */
	g_assert_cmpuint(c->segments_dropped, ==, 2);
	g_assert_cmpint(deliver(&sa, &client, seg[2], T0), ==, 0);
	g_assert_cmpint(deliver(&sa, &client, seg[5], T0), ==, 0);
	g_assert_cmpuint(client.out->len, ==, 0);                    /* no ACK inside the window */
	g_assert_cmpuint(rmpp_engine_pending(client.e), ==, 0);
	g_assert_cmpint(deliver(&sa, &client, seg[4], T0), ==, 1);    /* fills the gap: done */
	g_assert_cmpuint(client.out->len, ==, 1);
	ack = g_ptr_array_index(client.out, 0);
	g_assert_cmpuint(seg_of(ack), ==, 5);
	assert_received(&client, msg, len);
	/* a late duplicate is ACKed again (the sender may have lost the ACK), not delivered */
	g_assert_cmpint(deliver(&sa, &client, seg[2], T0 + 5), ==, 0);
	g_assert_cmpuint(client.out->len, ==, 2);
	g_assert_cmpuint(seg_of(g_ptr_array_index(client.out, 1)), ==, 5);
	g_assert_cmpuint(rmpp_engine_pending(client.e), ==, 0);
	/* the finished transfer is forgotten after 10 s */
	rmpp_engine_tick(client.e, T0 + 5 + 10000);
	g_assert_cmpuint(rmpp_engine_transfers(client.e), ==, 0);
	for (int n = 2; n <= 5; n++)
		g_bytes_unref(seg[n]);
	g_bytes_unref(seg70);
	g_free(msg);
	side_free(&sa);
	side_free(&client);
}

/* ---------------------------------------------------------------- windows */

static void test_window(void)
{
	struct rmpp_config small;
	rmpp_config_default(&small);
	small.window = 2;
	struct side sa, client;
	side_init(&sa, SA_LID, SA_AGENT, NULL);
	side_init(&client, CLIENT_LID, CLIENT_AGENT, &small);
	size_t len;
	uint8_t *msg = make_table(7 * SA_DATA - 10, 9, 3, &len);  /* 7 segments */
	rmpp_engine_send(sa.e, msg, len, T0);
	uint32_t expect_newwin = 1, highest_sent = 0;
	while (sa.out->len) {
		/* the sender never goes past the window the receiver last opened */
		while (sa.out->len) {
			GBytes *s = take(&sa);
			g_assert_cmpuint(seg_of(s), ==, highest_sent + 1);
			highest_sent = seg_of(s);
			g_assert_cmpuint(highest_sent, <=, expect_newwin);
			deliver(&sa, &client, s, T0);
			g_bytes_unref(s);
		}
		while (client.out->len) {
			GBytes *a = take(&client);
			g_assert_cmpuint(type_of(a), ==, RMPP_TYPE_ACK);
			g_assert_cmpuint(seg_of(a), ==, highest_sent);
			expect_newwin = paylen_of(a);
			/* each ACK opens 2 more, and comes when the window is used up (or at the end) */
			g_assert_true(expect_newwin == highest_sent + 2 || highest_sent == 7);
			deliver(&client, &sa, a, T0);
			g_bytes_unref(a);
		}
	}
	g_assert_cmpuint(highest_sent, ==, 7);
	/* ACKs at 1 (window 3), 3 (5), 5 (7), 7 (the end) */
	g_assert_cmpuint(rmpp_engine_stats(client.e)->acks_sent, ==, 4);
	assert_received(&client, msg, len);
	g_assert_cmpuint(rmpp_engine_transfers(sa.e), ==, 0);
	g_free(msg);
	side_free(&sa);
	side_free(&client);
}

/* An ACK that says the window ends before the segment it acknowledges: the sender aborts. */
static void test_bad_ack(void)
{
	struct side sa, client;
	side_init(&sa, SA_LID, SA_AGENT, NULL);
	side_init(&client, CLIENT_LID, CLIENT_AGENT, NULL);
	size_t len;
	uint8_t *msg = make_table(950, 10, 3, &len);
	rmpp_engine_send(sa.e, msg, len, T0);
	GBytes *s1 = take(&sa);
	GBytes *ack = make_control(s1, RMPP_TYPE_ACK, 0, 3, 2);
	deliver(&client, &sa, ack, T0);
	g_assert_cmpuint(rmpp_engine_transfers(sa.e), ==, 0);
	g_assert_cmpuint(sa.out->len, ==, 1);
	GBytes *abort = g_ptr_array_index(sa.out, 0);
	g_assert_cmpuint(type_of(abort), ==, RMPP_TYPE_ABORT);
	g_assert_cmpuint(mad_of(abort)[RMPP_OFF_STATUS], ==, RMPP_STATUS_W2S);
	g_bytes_unref(ack);
	g_bytes_unref(s1);
	g_free(msg);
	side_free(&sa);
	side_free(&client);
}

/* ---------------------------------------------------------------- losses */

static void test_lost_segment(void)
{
	struct side sa, client;
	side_init(&sa, SA_LID, SA_AGENT, NULL);
	side_init(&client, CLIENT_LID, CLIENT_AGENT, NULL);
	size_t len;
	uint8_t *msg = make_table(950, 11, 3, &len);
	rmpp_engine_send(sa.e, msg, len, T0);
	pass_one(&sa, &client, T0);
	pass_one(&client, &sa, T0);
	pass_one(&sa, &client, T0);       /* 2 */
	GBytes *lost = take(&sa);         /* 3 is lost */
	g_bytes_unref(lost);
	pass_one(&sa, &client, T0);       /* 4 */
	pass_one(&sa, &client, T0);       /* 5 */
	g_assert_cmpuint(client.out->len, ==, 0);
	g_assert_cmpuint(rmpp_engine_pending(client.e), ==, 0);
	/* nothing before the ACK timeout */
	rmpp_engine_tick(sa.e, T0 + 1999);
	g_assert_cmpuint(sa.out->len, ==, 0);
	rmpp_engine_tick(sa.e, T0 + 2000);
	/* resent from the last segment ACKed: 2..5 */
	g_assert_cmpuint(sa.out->len, ==, 4);
	g_assert_cmpuint(seg_of(g_ptr_array_index(sa.out, 0)), ==, 2);
	g_assert_cmpuint(rmpp_engine_stats(sa.e)->segments_resent, ==, 4);
	run_until_quiet(&sa, &client, T0 + 2001);
	assert_received(&client, msg, len);
	g_assert_cmpuint(rmpp_engine_transfers(sa.e), ==, 0);
	g_assert_cmpuint(rmpp_engine_stats(client.e)->messages_received, ==, 1);
	g_free(msg);
	side_free(&sa);
	side_free(&client);
}

static void test_lost_ack(void)
{
	struct side sa, client;
	side_init(&sa, SA_LID, SA_AGENT, NULL);
	side_init(&client, CLIENT_LID, CLIENT_AGENT, NULL);
	size_t len;
	uint8_t *msg = make_table(950, 12, 3, &len);
	rmpp_engine_send(sa.e, msg, len, T0);
	pass_one(&sa, &client, T0);
	pass_one(&client, &sa, T0);
	while (sa.out->len)
		pass_one(&sa, &client, T0);
	assert_received(&client, msg, len);
	drop_all(&client);                 /* the last ACK is lost */
	g_assert_cmpuint(rmpp_engine_transfers(sa.e), ==, 1);
	rmpp_engine_tick(sa.e, T0 + 2000);
	g_assert_cmpuint(sa.out->len, ==, 4);
	run_until_quiet(&sa, &client, T0 + 2000);  /* the finished receiver ACKs again */
	g_assert_cmpuint(rmpp_engine_transfers(sa.e), ==, 0);
	g_assert_cmpuint(rmpp_engine_pending(client.e), ==, 0);  /* delivered once */
	g_assert_cmpuint(rmpp_engine_stats(client.e)->messages_received, ==, 1);
	g_free(msg);
	side_free(&sa);
	side_free(&client);
}

/* Nobody ACKs: RETRIES resends, then the sender's program reads an ETIMEDOUT notice. */
static void test_send_times_out(void)
{
	struct side sa;
	side_init(&sa, SA_LID, SA_AGENT, NULL);
	size_t len;
	uint8_t *msg = make_table(950, 13, 2, &len);
	rmpp_engine_send(sa.e, msg, len, T0);
	drop_all(&sa);
	rmpp_engine_tick(sa.e, T0 + 2000);
	rmpp_engine_tick(sa.e, T0 + 4000);
	g_assert_cmpuint(sa.out->len, ==, 2);
	g_assert_cmpuint(rmpp_engine_pending(sa.e), ==, 0);
	rmpp_engine_tick(sa.e, T0 + 6000);
	g_assert_cmpuint(sa.out->len, ==, 2);
	g_assert_cmpuint(rmpp_engine_pending(sa.e), ==, HDR + 24);
	uint8_t note[HDR + 256];
	g_assert_cmpint(rmpp_engine_read(sa.e, note, sizeof(note)), ==, HDR + 24);
	const struct ib_user_mad *u = (const struct ib_user_mad *)note;
	g_assert_cmpuint(u->status, ==, ETIMEDOUT);
	g_assert_cmpuint(u->agent_id, ==, SA_AGENT);
	g_assert_cmpmem(note + HDR, 24, msg + HDR, 24);
	g_assert_cmpuint(rmpp_engine_transfers(sa.e), ==, 0);
	g_assert_cmpuint(rmpp_engine_stats(sa.e)->sends_timed_out, ==, 1);
	g_free(msg);
	side_free(&sa);
}

/* ---------------------------------------------------------------- STOP, ABORT, errors */

static void test_abort_receive(void)
{
	struct side sa, client;
	side_init(&sa, SA_LID, SA_AGENT, NULL);
	side_init(&client, CLIENT_LID, CLIENT_AGENT, NULL);
	size_t len;
	uint8_t *msg = make_table(950, 14, 3, &len);
	rmpp_engine_send(sa.e, msg, len, T0);
	GBytes *s1 = take(&sa);
	deliver(&sa, &client, s1, T0);
	pass_one(&client, &sa, T0);
	g_assert_cmpuint(rmpp_engine_transfers(client.e), ==, 1);
	/* the sender gives up: an ABORT (its own template: a data MAD's headers) */
	GBytes *abort = make_control(s1, RMPP_TYPE_ABORT, RMPP_STATUS_T2L, 0, 0);
	gsize l;
	const void *data = g_bytes_get_data(abort, &l);
	uint8_t *a = g_memdup2(data, l);
	a[HDR + 3] = 0x92;                 /* from the sender: its method */
	GBytes *abort_from_sa = g_bytes_new_take(a, l);
	g_assert_cmpint(deliver(&sa, &client, abort_from_sa, T0), ==, 0);
	g_assert_cmpuint(rmpp_engine_transfers(client.e), ==, 0);
	g_assert_cmpuint(rmpp_engine_stats(client.e)->aborts_received, ==, 1);
	/* what follows belongs to no transfer: dropped, no ACK, nothing delivered */
	while (sa.out->len)
		pass_one(&sa, &client, T0);
	g_assert_cmpuint(client.out->len, ==, 0);
	g_assert_cmpuint(rmpp_engine_pending(client.e), ==, 0);
	g_assert_cmpuint(rmpp_engine_stats(client.e)->segments_dropped, ==, 4);
	g_bytes_unref(abort);
	g_bytes_unref(abort_from_sa);
	g_bytes_unref(s1);
	g_free(msg);
	side_free(&sa);
	side_free(&client);
}

static void test_stop_and_abort_send(void)
{
	for (int type = RMPP_TYPE_STOP; type <= RMPP_TYPE_ABORT; type++) {
		struct side sa, client;
		side_init(&sa, SA_LID, SA_AGENT, NULL);
		side_init(&client, CLIENT_LID, CLIENT_AGENT, NULL);
		size_t len;
		uint8_t *msg = make_table(950, 15, 3, &len);
		rmpp_engine_send(sa.e, msg, len, T0);
		GBytes *s1 = take(&sa);
		GBytes *stop = make_control(s1, (uint8_t)type, type == RMPP_TYPE_STOP ? 1 : 127, 0, 0);
		deliver(&client, &sa, stop, T0);
		g_assert_cmpuint(rmpp_engine_transfers(sa.e), ==, 0);
		/* an ACK now opens nothing, and no timer is left to resend */
		GBytes *ack = make_control(s1, RMPP_TYPE_ACK, 0, 1, 65);
		deliver(&client, &sa, ack, T0);
		g_assert_cmpuint(sa.out->len, ==, 0);
		g_assert_cmpuint(rmpp_engine_next_deadline(sa.e), ==, UINT64_MAX);
		g_assert_cmpuint(rmpp_engine_pending(sa.e), ==, 0);
		g_bytes_unref(ack);
		g_bytes_unref(stop);
		g_bytes_unref(s1);
		g_free(msg);
		side_free(&sa);
		side_free(&client);
	}
}

/* The receiver answers what it cannot take with an ABORT naming why. */
static void test_receiver_rejects(void)
{
	struct side sa, client;
	side_init(&sa, SA_LID, SA_AGENT, NULL);
	side_init(&client, CLIENT_LID, CLIENT_AGENT, NULL);
	size_t len;
	uint8_t *msg = make_table(950, 16, 3, &len);
	rmpp_engine_send(sa.e, msg, len, T0);
	GBytes *s1 = take(&sa);
	gsize l;
	static const struct { uint8_t version, type; uint32_t seg; uint8_t flags, status; } bad[] = {
		{ 2, RMPP_TYPE_DATA, 1, RMPP_FLAG_FIRST, RMPP_STATUS_UNV },  /* version 2 */
		{ 1, 9, 1, RMPP_FLAG_FIRST, RMPP_STATUS_BADT },              /* no such type */
		{ 1, RMPP_TYPE_DATA, 2, RMPP_FLAG_FIRST, RMPP_STATUS_BAD_SEG },  /* FIRST on 2 */
		{ 1, RMPP_TYPE_DATA, 1, 0, RMPP_STATUS_BAD_SEG },            /* 1 without FIRST */
	};
	for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
		const void *data = g_bytes_get_data(s1, &l);
		uint8_t *m = g_memdup2(data, l);
		m[HDR + RMPP_OFF_VERSION] = bad[i].version;
		m[HDR + RMPP_OFF_TYPE] = bad[i].type;
		m[HDR + RMPP_OFF_FLAGS] = RMPP_FLAG_ACTIVE | bad[i].flags;
		put_be32(m + HDR + RMPP_OFF_SEGNUM, bad[i].seg);
		GBytes *b = g_bytes_new_take(m, l);
		g_assert_cmpint(deliver(&sa, &client, b, T0), ==, 0);
		g_bytes_unref(b);
		g_assert_cmpuint(client.out->len, ==, i + 1);
		GBytes *abort = g_ptr_array_index(client.out, i);
		g_assert_cmpuint(type_of(abort), ==, RMPP_TYPE_ABORT);
		g_assert_cmpuint(mad_of(abort)[RMPP_OFF_STATUS], ==, bad[i].status);
		g_assert_cmpuint(mad_of(abort)[3], ==, 0x12);
		g_assert_cmpuint(seg_of(abort), ==, 0);
	}
	g_assert_cmpuint(rmpp_engine_pending(client.e), ==, 0);
	g_assert_cmpuint(rmpp_engine_transfers(client.e), ==, 0);
	g_bytes_unref(s1);
	g_free(msg);
	side_free(&sa);
	side_free(&client);
}

/* An unfinished transfer is aborted (T2L) after 40 s. */
static void test_receive_times_out(void)
{
	struct side sa, client;
	side_init(&sa, SA_LID, SA_AGENT, NULL);
	side_init(&client, CLIENT_LID, CLIENT_AGENT, NULL);
	size_t len;
	uint8_t *msg = make_table(950, 17, 3, &len);
	rmpp_engine_send(sa.e, msg, len, T0);
	pass_one(&sa, &client, T0);
	drop_all(&client);
	rmpp_engine_tick(client.e, T0 + 39999);
	g_assert_cmpuint(rmpp_engine_transfers(client.e), ==, 1);
	rmpp_engine_tick(client.e, T0 + 40000);
	g_assert_cmpuint(rmpp_engine_transfers(client.e), ==, 0);
	g_assert_cmpuint(client.out->len, ==, 1);
	GBytes *abort = g_ptr_array_index(client.out, 0);
	g_assert_cmpuint(type_of(abort), ==, RMPP_TYPE_ABORT);
	g_assert_cmpuint(mad_of(abort)[RMPP_OFF_STATUS], ==, RMPP_STATUS_T2L);
	g_assert_cmpuint(rmpp_engine_stats(client.e)->receives_timed_out, ==, 1);
	g_free(msg);
	side_free(&sa);
	side_free(&client);
}

/* ---------------------------------------------------------------- the program's read */

static void test_short_buffer(void)
{
	struct side sa, client;
	side_init(&sa, SA_LID, SA_AGENT, NULL);
	side_init(&client, CLIENT_LID, CLIENT_AGENT, NULL);
	size_t len;
	uint8_t *msg = make_table(24 * 112, 18, 3, &len);  /* saquery -N on ftree-small: 24 records */
	rmpp_engine_send(sa.e, msg, len, T0);
	run_until_quiet(&sa, &client, T0);
	g_assert_cmpuint(rmpp_engine_pending(client.e), ==, len);
	/* saquery's first read: one MAD. -ENOSPC, the header says how much, the message stays */
	uint8_t *buf = g_malloc0(len);
	g_assert_cmpint(rmpp_engine_read(client.e, buf, HDR + 256), ==, -ENOSPC);
	g_assert_cmpuint(((struct ib_user_mad *)buf)->length, ==, len);
	g_assert_cmpmem(buf + HDR, 24, msg + HDR, 24);
	g_assert_cmpmem(buf + HDR + SA_HDR, SA_DATA, msg + HDR + SA_HDR, SA_DATA);
	g_assert_cmpuint(rmpp_engine_pending(client.e), ==, len);
	g_assert_cmpint(rmpp_engine_read(client.e, buf, len - 1), ==, -ENOSPC);
	/* less than one MAD: user_mad says EINVAL */
	g_assert_cmpint(rmpp_engine_read(client.e, buf, HDR + 100), ==, -EINVAL);
	g_free(buf);
	/* the read again with room for it all */
	assert_received(&client, msg, len);
	g_free(msg);
	side_free(&sa);
	side_free(&client);
}

/* ---------------------------------------------------------------- not ours */

static void test_passthrough(void)
{
	struct side client;
	side_init(&client, CLIENT_LID, CLIENT_AGENT, NULL);
	uint8_t mad[HDR + 256] = { 0 };
	struct ib_user_mad *u = (struct ib_user_mad *)mad;
	u->agent_id = CLIENT_AGENT;
	u->addr.lid = htons(SA_LID);
	mad[HDR + 1] = 0x03;
	mad[HDR + 3] = 0x01;                     /* a Get: no RMPP */
	mad[HDR + 200] = 0x5a;
	g_assert_cmpint(rmpp_engine_send(client.e, mad, sizeof(mad), T0), ==, 1);
	mad[HDR + RMPP_OFF_FLAGS] = RMPP_FLAG_ACTIVE;  /* an agent the engine does not run */
	u->agent_id = 7;
	g_assert_cmpint(rmpp_engine_send(client.e, mad, sizeof(mad), T0), ==, 1);
	mad[HDR + 1] = 0x81;                     /* an SMP of the RMPP agent's port: not RMPP */
	u->agent_id = CLIENT_AGENT;
	g_assert_cmpint(rmpp_engine_send(client.e, mad, sizeof(mad), T0), ==, 1);
	g_assert_cmpuint(client.out->len, ==, 0);
	/* received as it came, in order */
	g_assert_cmpint(rmpp_engine_receive(client.e, mad, sizeof(mad), T0), ==, 1);
	g_assert_cmpint(rmpp_engine_receive(client.e, mad, 100, T0), ==, 1);
	uint8_t got[HDR + 256];
	g_assert_cmpint(rmpp_engine_read(client.e, got, sizeof(got)), ==, sizeof(mad));
	g_assert_cmpmem(got, sizeof(got), mad, sizeof(mad));
	g_assert_cmpint(rmpp_engine_read(client.e, got, sizeof(got)), ==, 100);
	g_assert_cmpint(rmpp_engine_add_agent(client.e, 9, 0x81, 1), ==, -EINVAL);
	g_assert_cmpint(rmpp_engine_add_agent(client.e, 9, 0x03, 0), ==, -EINVAL);
	side_free(&client);
}

/* ---------------------------------------------------------------- requests */

static void make_request(uint8_t *mad, uint32_t tid, uint32_t timeout_ms, uint32_t retries)
{
	memset(mad, 0, HDR + 256);
	struct ib_user_mad *u = (struct ib_user_mad *)mad;
	u->agent_id = CLIENT_AGENT;
	u->timeout_ms = timeout_ms;
	u->retries = retries;
	u->addr.lid = htons(SA_LID);
	mad[HDR + 0] = 1;
	mad[HDR + 1] = 0x03;
	mad[HDR + 2] = 2;
	mad[HDR + 3] = 0x02;  /* SubnAdmSet: OpenSM leaves SMInfoRecord Sets unanswered */
	put_be32(mad + HDR + 12, tid);
	mad[HDR + 17] = 0x18;
}

static void test_request_timeout(void)
{
	struct side client;
	side_init(&client, CLIENT_LID, CLIENT_AGENT, NULL);
	uint8_t req[HDR + 256];
	make_request(req, 0x37, 1000, 2);
	g_assert_cmpint(rmpp_engine_send(client.e, req, sizeof(req), T0), ==, 1);
	rmpp_engine_tick(client.e, T0 + 999);
	g_assert_cmpuint(client.out->len, ==, 0);
	rmpp_engine_tick(client.e, T0 + 1000);  /* resent, as sent */
	g_assert_cmpuint(client.out->len, ==, 1);
	g_assert_cmpmem(g_bytes_get_data(g_ptr_array_index(client.out, 0), NULL), sizeof(req), req,
			sizeof(req));
	rmpp_engine_tick(client.e, T0 + 2000);
	g_assert_cmpuint(client.out->len, ==, 2);
	g_assert_cmpuint(rmpp_engine_pending(client.e), ==, 0);
	rmpp_engine_tick(client.e, T0 + 3000);  /* retries used up: the notice */
	g_assert_cmpuint(client.out->len, ==, 2);
	uint8_t note[HDR + 256];
	g_assert_cmpint(rmpp_engine_read(client.e, note, sizeof(note)), ==, HDR + 24);
	g_assert_cmpuint(((struct ib_user_mad *)note)->status, ==, ETIMEDOUT);
	g_assert_cmpmem(note + HDR, 24, req + HDR, 24);
	g_assert_cmpuint(rmpp_engine_transfers(client.e), ==, 0);

	/* answered (a short single MAD, as OpenSM's GetResp): no resend, no notice */
	make_request(req, 0x38, 1000, 2);
	req[HDR + 3] = 0x01;
	rmpp_engine_send(client.e, req, sizeof(req), T0);
	uint8_t resp[HDR + 120];
	memcpy(resp, req, sizeof(resp));
	resp[HDR + 3] = 0x81;
	g_assert_cmpint(rmpp_engine_receive(client.e, resp, sizeof(resp), T0 + 10), ==, 1);
	g_assert_cmpint(rmpp_engine_read(client.e, note, sizeof(note)), ==, sizeof(resp));
	rmpp_engine_tick(client.e, T0 + 5000);
	g_assert_cmpuint(client.out->len, ==, 2);
	g_assert_cmpuint(rmpp_engine_pending(client.e), ==, 0);
	/* no timeout asked for: not waited for */
	make_request(req, 0x39, 0, 2);
	rmpp_engine_send(client.e, req, sizeof(req), T0);
	g_assert_cmpuint(rmpp_engine_transfers(client.e), ==, 0);
	side_free(&client);
}

/* A response that comes by RMPP answers its request once it is whole. */
static void test_request_answered_by_rmpp(void)
{
	struct side sa, client;
	side_init(&sa, SA_LID, SA_AGENT, NULL);
	side_init(&client, CLIENT_LID, CLIENT_AGENT, NULL);
	uint8_t req[HDR + 256];
	make_request(req, 0x40, 1000, 0);
	req[HDR + 3] = 0x12;                     /* GetTable */
	rmpp_engine_send(client.e, req, sizeof(req), T0);
	size_t len;
	uint8_t *msg = make_table(950, 0x40, 3, &len);
	rmpp_engine_send(sa.e, msg, len, T0);
	run_until_quiet(&sa, &client, T0);
	rmpp_engine_tick(client.e, T0 + 1000);
	g_assert_cmpuint(rmpp_engine_stats(client.e)->requests_timed_out, ==, 0);
	assert_received(&client, msg, len);
	g_free(msg);
	side_free(&sa);
	side_free(&client);
}

/* ---------------------------------------------------------------- segment size */

/* A sender that fills 224 bytes of each MAD (rmpp_config.segment_bytes): PayloadLength counts
 * 188 per segment and the receiver, with the kernel's defaults, takes it from the first and
 * last segments. */
static void test_short_segments(void)
{
	struct rmpp_config short_segments;
	rmpp_config_default(&short_segments);
	short_segments.segment_bytes = RMPP_UMAD2SIM_BYTES;
	struct side sa, client;
	side_init(&sa, SA_LID, SA_AGENT, &short_segments);
	side_init(&client, CLIENT_LID, CLIENT_AGENT, NULL);
	size_t len;
	uint8_t *msg = make_table(1000, 19, 3, &len);  /* 6 segments of 168 bytes, 8 of padding */
	rmpp_engine_send(sa.e, msg, len, T0);
	GBytes *s1 = g_ptr_array_index(sa.out, 0);
	g_assert_cmpuint(paylen_of(s1), ==, 6 * 188 - 8);
	run_until_quiet(&sa, &client, T0);
	g_assert_cmpuint(rmpp_engine_stats(sa.e)->segments_sent, ==, 6);
	assert_received(&client, msg, len);
	g_free(msg);
	side_free(&sa);
	side_free(&client);
}

/* ---------------------------------------------------------------- umad2sim's lost ends */

static void test_tail_stash(void)
{
	tail_stash_clear();
	uint8_t mad[256], other[256], got[256];
	for (int i = 0; i < 256; i++) {
		mad[i] = (uint8_t)i;
		other[i] = (uint8_t)(255 - i);
	}
	tail_stash_put(mad);
	tail_stash_put(other);
	memcpy(got, mad, sizeof(got));
	memset(got + 224, 0xee, 32);            /* what umad2sim hands over */
	g_assert_true(tail_stash_restore(got, sizeof(got)));
	g_assert_cmpmem(got, sizeof(got), mad, sizeof(mad));
	g_assert_false(tail_stash_restore(got, sizeof(got)));  /* used once */
	memcpy(got, other, sizeof(got));
	memset(got + 224, 0, 32);
	g_assert_true(tail_stash_restore(got, 240));             /* a shorter MAD: its part */
	g_assert_cmpmem(got, 240, other, 240);
	g_assert_cmpuint(got[240], ==, 0);
	got[0] ^= 1;                              /* a head never put aside */
	g_assert_false(tail_stash_restore(got, sizeof(got)));
	g_assert_false(tail_stash_restore(got, 224));
	/* the ring forgets the oldest */
	tail_stash_put(mad);
	for (int i = 0; i < TAIL_STASH_SLOTS; i++) {
		other[0] = (uint8_t)i;
		other[1] = (uint8_t)(i >> 8);
		tail_stash_put(other);
	}
	memcpy(got, mad, sizeof(got));
	g_assert_false(tail_stash_restore(got, sizeof(got)));
	tail_stash_clear();
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/rmpp/segmentation", test_segmentation);
	g_test_add_func("/rmpp/single-segment", test_single_segment);
	g_test_add_func("/rmpp/reassembly-in-order", test_reassembly_in_order);
	g_test_add_func("/rmpp/reassembly-out-of-order-duplicate-out-of-window",
			test_reassembly_out_of_order);
	g_test_add_func("/rmpp/window", test_window);
	g_test_add_func("/rmpp/bad-ack-aborts", test_bad_ack);
	g_test_add_func("/rmpp/lost-segment-resent", test_lost_segment);
	g_test_add_func("/rmpp/lost-ack-resent", test_lost_ack);
	g_test_add_func("/rmpp/send-times-out", test_send_times_out);
	g_test_add_func("/rmpp/abort-drops-receive", test_abort_receive);
	g_test_add_func("/rmpp/stop-and-abort-drop-send", test_stop_and_abort_send);
	g_test_add_func("/rmpp/receiver-rejects", test_receiver_rejects);
	g_test_add_func("/rmpp/receive-times-out", test_receive_times_out);
	g_test_add_func("/rmpp/short-buffer-enospc", test_short_buffer);
	g_test_add_func("/rmpp/passthrough", test_passthrough);
	g_test_add_func("/rmpp/request-timeout", test_request_timeout);
	g_test_add_func("/rmpp/request-answered-by-rmpp", test_request_answered_by_rmpp);
	g_test_add_func("/rmpp/short-segments", test_short_segments);
	g_test_add_func("/rmpp/tail-stash", test_tail_stash);
	return g_test_run();
}
