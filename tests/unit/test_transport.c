/* test_transport.c - the SMP transport against a fake fd that answers, delays, drops,
 * duplicates, mis-addresses and bounces (status 110) replies: every request must complete
 * exactly once, with the right data, within the window; on a lossy fabric it keeps retrying
 * while others are answered, and gives up where nothing answers. */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include "base/log.h"
#include "fabric/slice.h"
#include "mad/transport.h"

enum fault { F_NONE = 0, F_DROP = 1, F_DUP = 2, F_LATE = 4, F_MISADDR = 8, F_BOUNCE = 16 };

struct pending_reply {
	int64_t due_us;
	uint8_t buf[512];
	int len;
};

struct fake {
	GQueue q;               /* struct pending_reply *, in due order (insertion sorted) */
	int (*policy)(struct fake *fk, uint32_t mod, int attempt); /* returns enum fault bits */
	GHashTable *attempts;   /* mod -> attempts seen */
	uint32_t started;       /* requests sent a first time */
	uint32_t in_flight_max; /* most requests sent and not yet completed, seen at a send */
	uint32_t sends;
	int late_ms;
	struct transport *t;
};

static uint32_t completions; /* on_done calls since make() */

static void enqueue(struct fake *fk, const uint8_t *umad, int len, int64_t due)
{
	struct pending_reply *r = g_new0(struct pending_reply, 1);
	memcpy(r->buf, umad, (size_t)len);
	r->len = len;
	r->due_us = due;
	GList *l = fk->q.head;
	while (l && ((struct pending_reply *)l->data)->due_us <= due)
		l = l->next;
	if (l)
		g_queue_insert_before(&fk->q, l, r);
	else
		g_queue_push_tail(&fk->q, r);
}

static int fake_send(void *ctx, int mgmt_class, void *umad, int len, int timeout_ms)
{
	(void)mgmt_class; (void)timeout_ms;
	struct fake *fk = ctx;
	fk->sends++;
	uint8_t reply[512];
	memcpy(reply, umad, (size_t)len);
	uint8_t *mad = umad_get_mad(reply);
	uint32_t mod = mad_get_field(mad, 0, IB_MAD_ATTRMOD_F);
	int attempt = GPOINTER_TO_INT(g_hash_table_lookup(fk->attempts, GUINT_TO_POINTER(mod + 1)));
	g_hash_table_insert(fk->attempts, GUINT_TO_POINTER(mod + 1), GINT_TO_POINTER(attempt + 1));
	if (attempt == 0)
		fk->started++;
	/* requests on the wire or waiting for their retry: what the window bounds (not
	 * transport_outstanding(), which counts the queued ones too) */
	if (fk->started - completions > fk->in_flight_max)
		fk->in_flight_max = fk->started - completions;
	int f = fk->policy ? fk->policy(fk, mod, attempt) : F_NONE;
	int64_t now = g_get_monotonic_time();
	if (f & F_BOUNCE) {
		((struct ib_user_mad *)reply)->status = ETIMEDOUT; /* ibsim: undeliverable, answered at once */
		enqueue(fk, reply, len, now);
		return 0;
	}
	mad[3] = IB_MAD_METHOD_GET_RESPONSE;
	mad[4] = 0x80; /* D bit of a DR response, status 0 */
	mad[5] = 0;
	/* the SMA echoes the modifier in the data so the test can check who answered what */
	memset(mad + IB_SMP_DATA_OFFS, 0, IB_SMP_DATA_SIZE);
	mad_set_field(mad + IB_SMP_DATA_OFFS, 0, IB_NODE_GUID_F, 0);
	mad[IB_SMP_DATA_OFFS] = (uint8_t)(mod >> 24);
	mad[IB_SMP_DATA_OFFS + 1] = (uint8_t)(mod >> 16);
	mad[IB_SMP_DATA_OFFS + 2] = (uint8_t)(mod >> 8);
	mad[IB_SMP_DATA_OFFS + 3] = (uint8_t)mod;
	/* the kernel rewrites the high 32 TID bits: matching must use the low 32 only */
	uint64_t tid = mad_get_field64(mad, 0, IB_MAD_TRID_F);
	mad_set_field64(mad, 0, IB_MAD_TRID_F, (tid & 0xffffffffULL) | 0xdead000000000000ULL);
	if (f & F_DROP)
		return 0;
	int64_t due = now + ((f & F_LATE) ? (int64_t)fk->late_ms * 1000 : 100);
	if (f & F_MISADDR) {
		uint8_t other[512];
		memcpy(other, reply, (size_t)len);
		uint8_t *om = umad_get_mad(other);
		mad_set_field64(om, 0, IB_MAD_TRID_F, mad_get_field64(mad, 0, IB_MAD_TRID_F) ^ 0x5500);
		enqueue(fk, other, len, due);
		return 0;
	}
	enqueue(fk, reply, len, due);
	if (f & F_DUP)
		enqueue(fk, reply, len, due + 50);
	return 0;
}

static int fake_wait(void *ctx, int timeout_ms)
{
	struct fake *fk = ctx;
	int64_t now = g_get_monotonic_time();
	struct pending_reply *r = g_queue_peek_head(&fk->q);
	if (r && r->due_us <= now)
		return 1;
	int64_t until = now + (int64_t)(timeout_ms < 0 ? 1000 : timeout_ms) * 1000;
	if (r && r->due_us < until) {
		g_usleep((gulong)(r->due_us - now));
		return 1;
	}
	g_usleep((gulong)(until - now));
	return 0;
}

static int fake_recv(void *ctx, void *umad, int *len, int timeout_ms)
{
	(void)timeout_ms;
	struct fake *fk = ctx;
	struct pending_reply *r = g_queue_peek_head(&fk->q);
	if (!r || r->due_us > g_get_monotonic_time())
		return -EAGAIN;
	g_queue_pop_head(&fk->q);
	memcpy(umad, r->buf, (size_t)r->len);
	*len = r->len;
	g_free(r);
	return 0;
}

struct result {
	uint32_t done_count[512];
	int status[512];
	uint32_t wrong_data;
};

static void on_done(struct transport *t, const struct smp_req *r, int status, const uint8_t *data,
		    void *ctx)
{
	(void)t;
	struct result *res = ctx;
	uint32_t mod = r->mod;
	completions++;
	res->done_count[mod]++;
	res->status[mod] = status;
	if (status == 0) {
		uint32_t echoed = ((uint32_t)data[0] << 24) | ((uint32_t)data[1] << 16) |
				  ((uint32_t)data[2] << 8) | data[3];
		if (echoed != mod)
			res->wrong_data++;
	}
}

static struct transport *make_p(struct fake *fk, int window, int timeout_ms, int retries, int persist)
{
	memset(fk, 0, sizeof(*fk));
	completions = 0;
	g_queue_init(&fk->q);
	fk->attempts = g_hash_table_new(NULL, NULL);
	fk->late_ms = timeout_ms * 3;
	struct transport_io io = { .ctx = fk, .send = fake_send, .recv = fake_recv, .wait = fake_wait };
	struct transport_cfg cfg = { .window = window, .timeout_ms = timeout_ms, .retries = retries,
				     .persist = persist };
	fk->t = transport_new(&io, &cfg);
	return fk->t;
}

static struct transport *make(struct fake *fk, int window, int timeout_ms, int retries)
{
	return make_p(fk, window, timeout_ms, retries, 0);
}

static void destroy(struct fake *fk);
static void submit_n(struct transport *t, struct result *res, uint32_t n);
static void check_all_once(const struct result *res, uint32_t n, int want_status);

/* OpenSM's second window (max_wire_smps2, max_smps_timeout): every answer comes 300 ms late,
 * well before the 2 s timeout but long after the 10 ms the second window waits. */
static int late_policy(struct fake *fk, uint32_t mod, int attempt)
{
	(void)fk; (void)mod; (void)attempt;
	return F_LATE;
}

static void run_window2(int window, int window2, uint32_t n, uint32_t want_in_flight)
{
	struct fake fk;
	memset(&fk, 0, sizeof(fk));
	completions = 0;
	g_queue_init(&fk.q);
	fk.attempts = g_hash_table_new(NULL, NULL);
	fk.late_ms = 300;
	fk.policy = late_policy;
	struct transport_io io = { .ctx = &fk, .send = fake_send, .recv = fake_recv, .wait = fake_wait };
	struct transport_cfg cfg = { .window = window, .timeout_ms = 2000, .retries = 2,
				     .window2 = window2, .window2_timeout_us = 10000 };
	fk.t = transport_new(&io, &cfg);
	static struct result res;
	memset(&res, 0, sizeof(res));
	submit_n(fk.t, &res, n);
	transport_drain(fk.t, NULL);
	check_all_once(&res, n, 0);
	g_assert_cmpuint(fk.started, ==, n);
	g_assert_cmpuint(fk.sends, ==, n); /* no retry: the extra SMPs are new ones */
	g_assert_cmpuint(fk.in_flight_max, ==, want_in_flight);
	destroy(&fk);
}

/* A window stalled past max_smps_timeout grows one SMP at a time up to max_wire_smps2, never
 * beyond; with max_wire_smps2 not above max_wire_smps (OpenSM's default) it stays put. */
static void test_window2(void)
{
	run_window2(2, 5, 10, 5);
	run_window2(2, 2, 10, 2);
	run_window2(3, 0, 10, 3);
}

static void destroy(struct fake *fk)
{
	transport_free(fk->t);
	struct pending_reply *r;
	while ((r = g_queue_pop_head(&fk->q)))
		g_free(r);
	g_hash_table_destroy(fk->attempts);
}

static void submit_n(struct transport *t, struct result *res, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct smp_req r;
		memset(&r, 0, sizeof(r));
		r.method = IB_MAD_METHOD_GET;
		r.dr = 1;
		r.hops = 2;
		r.path[1] = 1;
		r.path[2] = (uint8_t)(i % 30 + 1);
		r.attr = IB_ATTR_NODE_INFO;
		r.mod = i;
		r.done = on_done;
		r.ctx = res;
		transport_submit(t, &r);
	}
}

static void check_all_once(const struct result *res, uint32_t n, int want_status)
{
	for (uint32_t i = 0; i < n; i++) {
		g_assert_cmpuint(res->done_count[i], ==, 1);
		g_assert_cmpint(res->status[i], ==, want_status);
	}
	g_assert_cmpuint(res->wrong_data, ==, 0);
}

/* n requests through a window: it fills (they are all queued at once) and is never exceeded. */
static void check_window(const struct fake *fk, uint32_t window, uint32_t n)
{
	g_assert_cmpuint(fk->started, ==, n);
	g_assert_cmpuint(fk->in_flight_max, ==, MIN(window, n));
}

static void test_plain(void)
{
	struct fake fk;
	struct transport *t = make(&fk, 16, 50, 2);
	static struct result res;
	memset(&res, 0, sizeof(res));
	submit_n(t, &res, 300);
	transport_drain(t, NULL);
	check_all_once(&res, 300, 0);
	check_window(&fk, 16, 300);
	g_assert_cmpuint(transport_stats(t)->sent, ==, 300);
	g_assert_cmpuint(transport_stats(t)->retries, ==, 0);
	destroy(&fk);
}

/* A submit with room in the window sends at once (a phase's loop keeps the fabric busy from
 * its first request), never calls back, and queues the rest; a slicer in that loop takes the
 * answers and fills the window again within SLICE_FEED_US, not SLICE_WORK_US. */
static void test_submit_sends(void)
{
	struct fake fk;
	struct transport *t = make(&fk, 8, 500, 0);
	static struct result res;
	memset(&res, 0, sizeof(res));
	submit_n(t, &res, 20);
	g_assert_cmpuint(fk.sends, ==, 8);
	g_assert_cmpuint(completions, ==, 0);
	g_assert_cmpuint(transport_queued(t), ==, 12);
	struct slicer sl;
	slicer_init(&sl, t, NULL);
	g_usleep(2 * SLICE_FEED_US + 200); /* the fake answers after 100 us */
	int stepped = 0;
	for (int i = 0; i < 16; i++)
		stepped += slicer_check(&sl);
	/* one step at least (more, and the refilled window answered too, on a slow run): every
	 * answer taken sent the next queued request at once */
	g_assert_cmpint(stepped, >=, 1);
	g_assert_cmpuint(completions, >=, 8);
	g_assert_cmpuint(fk.sends, ==, MIN(20u, 8 + completions));
	g_assert_cmpuint(transport_queued(t), ==, 20 - fk.sends);
	transport_drain(t, NULL);
	check_all_once(&res, 20, 0);
	/* nothing queued: the slicer waits SLICE_WORK_US before it steps (unless this machine
	 * slept that long) */
	slicer_init(&sl, t, NULL);
	int64_t t0 = g_get_monotonic_time();
	g_usleep(2 * SLICE_FEED_US + 200);
	stepped = 0;
	for (int i = 0; i < 16; i++)
		stepped += slicer_check(&sl);
	if (g_get_monotonic_time() - t0 < SLICE_WORK_US)
		g_assert_cmpint(stepped, ==, 0);
	destroy(&fk);
}

/* A loop that queues more than SLICE_QUEUE_HIGH SMPs is paced by its slicer: the queue never
 * holds more than that and what one item queued, each pacing leaves at most SLICE_QUEUE_LOW,
 * and the SMPs are answered once each in the order queued; with *stop set a pacing wait ends
 * at once. Each item queues PACED_BATCH: a step the slicer takes because time went by (a
 * slow or loaded run) hands out at most 256 answers, so the queue grows whatever the clock. */
#define PACED_BATCH 512
static uint32_t paced_next, paced_wrong;

static void on_paced(struct transport *t, const struct smp_req *r, int status, const uint8_t *data,
		     void *ctx)
{
	(void)t; (void)data; (void)ctx;
	completions++;
	if (status != 0 || r->mod != paced_next)
		paced_wrong++;
	paced_next++;
}

/* A NodeInfo Get with modifier mod, answered to done(ctx). */
static void submit_get(struct transport *t, uint32_t mod, smp_done_fn done, void *ctx)
{
	struct smp_req r;
	memset(&r, 0, sizeof(r));
	r.method = IB_MAD_METHOD_GET;
	r.dr = 1;
	r.hops = 1;
	r.path[1] = 1;
	r.attr = IB_ATTR_NODE_INFO;
	r.mod = mod;
	r.done = done;
	r.ctx = ctx;
	transport_submit(t, &r);
}

static void submit_paced(struct transport *t, uint32_t mod)
{
	submit_get(t, mod, on_paced, NULL);
}

static void test_slicer_paces(void)
{
	struct fake fk;
	struct transport *t = make(&fk, 64, 500, 0);
	paced_next = paced_wrong = 0;
	struct slicer sl;
	slicer_init(&sl, t, NULL);
	uint32_t n = 8 * SLICE_QUEUE_HIGH, queued_max = 0, paced = 0;
	for (uint32_t i = 0; i < n; i += PACED_BATCH) {
		for (uint32_t j = i; j < i + PACED_BATCH; j++)
			submit_paced(t, j);
		uint32_t q = transport_queued(t);
		queued_max = MAX(queued_max, q);
		slicer_check(&sl);
		if (q >= SLICE_QUEUE_HIGH) {
			g_assert_cmpuint(transport_queued(t), <=, SLICE_QUEUE_LOW);
			paced++;
		} else {
			g_assert_cmpuint(transport_queued(t), <, SLICE_QUEUE_HIGH);
		}
	}
	g_assert_cmpuint(queued_max, >=, SLICE_QUEUE_HIGH);
	g_assert_cmpuint(queued_max, <, SLICE_QUEUE_HIGH + PACED_BATCH);
	g_assert_cmpuint(paced, >=, 3);
	transport_drain(t, NULL);
	g_assert_cmpuint(paced_next, ==, n);
	g_assert_cmpuint(paced_wrong, ==, 0);
	g_assert_cmpuint(fk.in_flight_max, <=, 64);
	/* stopping (SIGTERM): the slicer does not wait for the queue to go down */
	volatile int stop = 1;
	slicer_init(&sl, t, &stop);
	for (uint32_t i = 0; i < SLICE_QUEUE_HIGH + 100; i++) /* 64 of them go on the wire */
		submit_paced(t, n + i);
	g_assert_cmpint(slicer_check(&sl), ==, 1);
	g_assert_cmpuint(transport_queued(t), >, SLICE_QUEUE_LOW);
	transport_drain(t, NULL);
	g_assert_cmpuint(paced_next, ==, n + SLICE_QUEUE_HIGH + 100);
	g_assert_cmpuint(paced_wrong, ==, 0);
	destroy(&fk);
}

/* The window bounds what is on the wire: count sends not yet answered. */
static uint32_t on_wire, on_wire_max;
static int window_policy(struct fake *fk, uint32_t mod, int attempt)
{
	(void)fk; (void)mod; (void)attempt;
	return F_NONE;
}

static void on_done_wire(struct transport *t, const struct smp_req *r, int status,
			 const uint8_t *data, void *ctx)
{
	on_wire--;
	on_done(t, r, status, data, ctx);
}

static int wire_send(void *ctx, int c, void *umad, int len, int to)
{
	on_wire++;
	if (on_wire > on_wire_max)
		on_wire_max = on_wire;
	return fake_send(ctx, c, umad, len, to);
}

static void test_window(void)
{
	struct fake fk;
	memset(&fk, 0, sizeof(fk));
	completions = 0;
	g_queue_init(&fk.q);
	fk.attempts = g_hash_table_new(NULL, NULL);
	fk.policy = window_policy;
	struct transport_io io = { .ctx = &fk, .send = wire_send, .recv = fake_recv, .wait = fake_wait };
	struct transport_cfg cfg = { .window = 8, .timeout_ms = 100, .retries = 0 };
	fk.t = transport_new(&io, &cfg);
	static struct result res;
	memset(&res, 0, sizeof(res));
	on_wire = on_wire_max = 0;
	for (uint32_t i = 0; i < 100; i++) {
		struct smp_req r;
		memset(&r, 0, sizeof(r));
		r.method = IB_MAD_METHOD_GET;
		r.dr = 1;
		r.attr = IB_ATTR_NODE_INFO;
		r.mod = i;
		r.done = on_done_wire;
		r.ctx = &res;
		transport_submit(fk.t, &r);
	}
	transport_drain(fk.t, NULL);
	check_all_once(&res, 100, 0);
	g_assert_cmpuint(on_wire_max, <=, 8);
	g_assert_cmpuint(on_wire_max, ==, 8);
	destroy(&fk);
}

static int drop_first(struct fake *fk, uint32_t mod, int attempt)
{
	(void)fk;
	return (mod % 3 == 0 && attempt == 0) ? F_DROP : F_NONE;
}

static void test_drops_retried(void)
{
	struct fake fk;
	struct transport *t = make(&fk, 32, 20, 2);
	fk.policy = drop_first;
	static struct result res;
	memset(&res, 0, sizeof(res));
	submit_n(t, &res, 90);
	transport_drain(t, NULL);
	check_all_once(&res, 90, 0);
	check_window(&fk, 32, 90);
	g_assert_cmpuint(transport_stats(t)->retries, ==, 30);
	destroy(&fk);
}

static int always_drop(struct fake *fk, uint32_t mod, int attempt)
{
	(void)fk; (void)mod; (void)attempt;
	return F_DROP;
}

static void test_give_up(void)
{
	struct fake fk;
	struct transport *t = make(&fk, 4, 10, 2);
	fk.policy = always_drop;
	static struct result res;
	memset(&res, 0, sizeof(res));
	submit_n(t, &res, 5);
	transport_drain(t, NULL);
	check_all_once(&res, 5, -ETIMEDOUT);
	check_window(&fk, 4, 5);
	g_assert_cmpuint(fk.sends, ==, 15); /* 1 + 2 retries each */
	g_assert_cmpuint(transport_stats(t)->timeouts, ==, 5);
	destroy(&fk);
}

static int dup_all(struct fake *fk, uint32_t mod, int attempt)
{
	(void)fk; (void)mod; (void)attempt;
	return F_DUP;
}

static void test_duplicates(void)
{
	struct fake fk;
	struct transport *t = make(&fk, 16, 50, 1);
	fk.policy = dup_all;
	static struct result res;
	memset(&res, 0, sizeof(res));
	submit_n(t, &res, 64);
	transport_drain(t, NULL);
	/* let the duplicates arrive too */
	transport_poll(t, 20, 0);
	check_all_once(&res, 64, 0);
	check_window(&fk, 16, 64);
	g_assert_cmpuint(transport_stats(t)->dropped_stale, ==, 64);
	destroy(&fk);
}

static int late_first(struct fake *fk, uint32_t mod, int attempt)
{
	(void)fk;
	return (mod % 2 == 0 && attempt == 0) ? F_LATE : F_NONE;
}

static void test_late_reply_ignored(void)
{
	struct fake fk;
	struct transport *t = make(&fk, 8, 15, 2);
	fk.policy = late_first;
	static struct result res;
	memset(&res, 0, sizeof(res));
	submit_n(t, &res, 20);
	transport_drain(t, NULL);
	transport_poll(t, 80, 0); /* the late answers to the first attempts arrive now */
	check_all_once(&res, 20, 0);
	check_window(&fk, 8, 20);
	g_assert_cmpuint(transport_stats(t)->retries, ==, 10);
	g_assert_cmpuint(transport_stats(t)->dropped_stale, ==, 10);
	destroy(&fk);
}

/* The transport looks at its slots' deadlines only once the earliest it knew of is due: SMPs
 * sent later must neither time out then nor be forgotten. SMP 0 is answered at once; SMPs 1 and
 * 2 are sent 100 ms later: SMP 1 is answered 150 ms after it was sent, past SMP 0's deadline
 * (200 ms) but before its own (300 ms); SMP 2 is never answered and must time out. */
static int late_second(struct fake *fk, uint32_t mod, int attempt)
{
	(void)fk; (void)attempt;
	return mod == 1 ? F_LATE : mod == 2 ? F_DROP : F_NONE;
}

static void submit_mod(struct transport *t, struct result *res, uint32_t mod)
{
	submit_get(t, mod, on_done, res);
}

static void test_deadline_after_answered(void)
{
	struct fake fk;
	struct transport *t = make(&fk, 4, 200, 0);
	fk.policy = late_second;
	fk.late_ms = 150;
	static struct result res;
	memset(&res, 0, sizeof(res));
	submit_mod(t, &res, 0);
	transport_poll(t, 100, 0); /* SMP 0 is sent and answered; its deadline stays the earliest */
	g_assert_cmpuint(res.done_count[0], ==, 1);
	submit_mod(t, &res, 1);
	submit_mod(t, &res, 2);
	/* not transport_drain(): where SMP 2's deadline were forgotten it would never return */
	transport_poll(t, 10000, 1);
	g_assert_cmpuint(transport_outstanding(t), ==, 0);
	g_assert_cmpuint(res.done_count[1], ==, 1);
	g_assert_cmpint(res.status[1], ==, 0); /* not timed out at SMP 0's deadline */
	g_assert_cmpuint(res.done_count[2], ==, 1);
	g_assert_cmpint(res.status[2], ==, -ETIMEDOUT);
	g_assert_cmpuint(fk.sends, ==, 3); /* no retries (-r 0) */
	g_assert_cmpuint(transport_stats(t)->timeouts, ==, 1);
	destroy(&fk);
}

static int misaddr_first(struct fake *fk, uint32_t mod, int attempt)
{
	(void)fk;
	return (mod % 4 == 1 && attempt == 0) ? F_MISADDR : F_NONE;
}

static void test_misaddressed(void)
{
	struct fake fk;
	struct transport *t = make(&fk, 16, 15, 2);
	fk.policy = misaddr_first;
	static struct result res;
	memset(&res, 0, sizeof(res));
	submit_n(t, &res, 40);
	transport_drain(t, NULL);
	check_all_once(&res, 40, 0);
	check_window(&fk, 16, 40);
	/* every mis-addressed answer (mods 1, 5, .. 37) dropped as stale, nothing else */
	g_assert_cmpuint(transport_stats(t)->dropped_stale, ==, 10);
	destroy(&fk);
}

static int bounce_twice(struct fake *fk, uint32_t mod, int attempt)
{
	(void)fk; (void)mod;
	return attempt < 2 ? F_BOUNCE : F_NONE;
}

static void test_bounce_backoff(void)
{
	struct fake fk;
	struct transport *t = make(&fk, 16, 100, 3);
	fk.policy = bounce_twice;
	static struct result res;
	memset(&res, 0, sizeof(res));
	int64_t t0 = g_get_monotonic_time();
	submit_n(t, &res, 10);
	transport_drain(t, NULL);
	int64_t spent = g_get_monotonic_time() - t0;
	check_all_once(&res, 10, 0);
	check_window(&fk, 16, 10);
	g_assert_cmpuint(transport_stats(t)->backoffs, ==, 20);
	g_assert_cmpuint(fk.sends, ==, 30);
	/* backed off (2 ms then 4 ms), not re-sent in a hot loop; not a timing assertion on
	 * speed, only that the back-off happened at all */
	g_assert_cmpint(spent, >=, 6000);
	destroy(&fk);
}

/* A lossy fabric: 60 % of the attempts bounce, by a fixed pseudo-random draw per (request,
 * attempt), so both runs below see the same losses. */
static int lossy(struct fake *fk, uint32_t mod, int attempt)
{
	(void)fk;
	uint32_t h = (mod * 2654435761u) ^ ((uint32_t)attempt * 2246822519u);
	h ^= h >> 15;
	h *= 2654435761u;
	return (h >> 16) % 10 < 6 ? F_BOUNCE : F_NONE;
}

/* The configured retries (3) lose some of them; persisting while others are answered loses none. */
static void test_persist_lossy(void)
{
	uint32_t failed[2] = { 0, 0 };
	for (int persist = 0; persist <= 1; persist++) {
		struct fake fk;
		struct transport *t = make_p(&fk, 32, 50, 3, persist);
		fk.policy = lossy;
		static struct result res;
		memset(&res, 0, sizeof(res));
		submit_n(t, &res, 300);
		transport_drain(t, NULL);
		for (uint32_t i = 0; i < 300; i++) {
			g_assert_cmpuint(res.done_count[i], ==, 1);
			failed[persist] += res.status[i] != 0;
		}
		g_assert_cmpuint(res.wrong_data, ==, 0);
		g_assert_cmpuint(transport_stats(t)->timeouts, ==, failed[persist]);
		if (persist)
			g_assert_cmpuint(transport_stats(t)->persisted, >, 0);
		else
			g_assert_cmpuint(transport_stats(t)->persisted, ==, 0);
		destroy(&fk);
	}
	g_test_message("of 300 SMPs at 60 %% loss per attempt: %u fail with 3 retries, %u when persisting",
		       failed[0], failed[1]);
	g_assert_cmpuint(failed[0], >, 0);
	g_assert_cmpuint(failed[1], ==, 0);
}

static int drop_mod0_five(struct fake *fk, uint32_t mod, int attempt)
{
	(void)fk;
	return mod == 0 && attempt < 5 ? F_DROP : F_NONE;
}

/* Timeouts too: an SMP with no answer five times gets through while others were answered. */
static void test_persist_timeouts(void)
{
	struct fake fk;
	struct transport *t = make_p(&fk, 8, 10, 1, 1);
	fk.policy = drop_mod0_five;
	static struct result res;
	memset(&res, 0, sizeof(res));
	submit_n(t, &res, 20);
	transport_drain(t, NULL);
	check_all_once(&res, 20, 0);
	g_assert_cmpint(GPOINTER_TO_INT(g_hash_table_lookup(fk.attempts, GUINT_TO_POINTER(1))), ==, 6);
	destroy(&fk);
}

static int bounce_mod0(struct fake *fk, uint32_t mod, int attempt)
{
	(void)fk; (void)attempt;
	return mod == 0 ? F_BOUNCE : F_NONE;
}

/* Where nothing ever answers, persisting ends: alone, after the configured retries (nothing
 * was answered); among others, once they are done and nothing answered for a while, or at the
 * attempt cap. */
static void test_persist_gives_up(void)
{
	struct fake fk;
	struct transport *t = make_p(&fk, 8, 10, 2, 1);
	fk.policy = always_drop;
	static struct result res;
	memset(&res, 0, sizeof(res));
	submit_n(t, &res, 1);
	transport_drain(t, NULL);
	check_all_once(&res, 1, -ETIMEDOUT);
	g_assert_cmpuint(fk.sends, ==, 3);
	destroy(&fk);

	t = make_p(&fk, 8, 10, 2, 1);
	fk.policy = bounce_mod0;
	memset(&res, 0, sizeof(res));
	submit_n(t, &res, 20);
	transport_drain(t, NULL);
	g_assert_cmpuint(res.done_count[0], ==, 1);
	g_assert_cmpint(res.status[0], ==, -ETIMEDOUT);
	int tries = GPOINTER_TO_INT(g_hash_table_lookup(fk.attempts, GUINT_TO_POINTER(1)));
	g_test_message("the SMP that always bounced was sent %d times", tries);
	g_assert_cmpint(tries, >, 3);
	g_assert_cmpint(tries, <=, 64);
	for (uint32_t i = 1; i < 20; i++)
		g_assert_cmpint(res.status[i], ==, 0);
	destroy(&fk);
}

/* SIGTERM in the middle of a sweep: queued SMPs are dropped, SMPs on the wire are waited for
 * (or their timeout) without a callback (their caller is gone) and without a resend. */
static void test_quiesce(void)
{
	struct fake fk;
	struct transport *t = make(&fk, 4, 200, 3);
	fk.policy = always_drop;
	static struct result res;
	memset(&res, 0, sizeof(res));
	submit_n(t, &res, 20);
	transport_poll(t, 20, 0); /* the first 4 go out (a 1 ms poll may round down to no step) */
	uint32_t sent = fk.sends;
	g_assert_cmpuint(sent, ==, 4);
	gint64 t0 = g_get_monotonic_time();
	transport_quiesce(t, 1000);
	g_assert_cmpint(g_get_monotonic_time() - t0, <, 500000); /* one timeout, not the retries */
	g_assert_cmpuint(transport_outstanding(t), ==, 0);
	g_assert_cmpuint(fk.sends, ==, sent); /* nothing sent again, nothing queued sent */
	for (uint32_t i = 0; i < 20; i++)
		g_assert_cmpuint(res.done_count[i], ==, 0);
	/* what is submitted after it (a module released later) is dropped: not sent, not queued,
	 * and a drain returns */
	submit_n(t, &res, 3);
	g_assert_cmpuint(transport_outstanding(t), ==, 0);
	g_assert_cmpuint(fk.sends, ==, sent);
	transport_drain(t, NULL);
	destroy(&fk);
}

/* A drain cut short by *stop (SIGTERM reaching the event loop mid-sweep) returns with SMPs
 * queued and on the wire, and its caller returns with them: their callbacks' context (a
 * programming pass, a discovery, an SMInfo poll: stack frames) is gone. Whatever step hands
 * out their answers later (the rest of the sweep, slice_offload's polls) must call nothing
 * and send nothing more; the slots come free. (The SIGSEGV of a standby taking over and
 * stopped at once: on_pk_done and on_block called into a dead frame from save_guid2lid.) */
static volatile int stop_flag;
static uint32_t stop_after;       /* set stop_flag at this many completions (0: by the tick) */

static void on_done_then_stop(struct transport *t, const struct smp_req *r, int status,
			      const uint8_t *data, void *ctx)
{
	on_done(t, r, status, data, ctx);
	if (stop_after && completions >= stop_after)
		stop_flag = 1;
}

static void tick_stop(void *ctx)
{
	(void)ctx;
	stop_flag = 1;
}

static void run_drain_stopped(int drop)
{
	struct fake fk;
	struct transport *t = make(&fk, 4, 50, 3);
	static struct result res;
	memset(&res, 0, sizeof(res));
	stop_flag = 0;
	if (drop) { /* nothing answers: the signal comes through the tick */
		fk.policy = always_drop;
		stop_after = 0;
		transport_set_tick(t, tick_stop, NULL);
	} else {    /* the signal comes after the first answer */
		stop_after = 1;
	}
	for (uint32_t i = 0; i < 20; i++) {
		struct smp_req r;
		memset(&r, 0, sizeof(r));
		r.method = IB_MAD_METHOD_GET;
		r.dr = 1;
		r.hops = 1;
		r.path[1] = 1;
		r.attr = IB_ATTR_NODE_INFO;
		r.mod = i;
		r.done = on_done_then_stop;
		r.ctx = &res;
		transport_submit(t, &r);
	}
	transport_drain(t, &stop_flag);
	g_assert_true(stop_flag);
	uint32_t done_then = completions, sends_then = fk.sends;
	g_assert_cmpuint(done_then, <, 20); /* it did stop early */
	/* the caller is gone; later steps (4 timeouts and retries' worth) hand out the answers */
	transport_set_tick(t, NULL, NULL);
	transport_poll(t, 400, 0);
	g_assert_cmpuint(completions, ==, done_then); /* not one callback after the drain */
	g_assert_cmpuint(fk.sends, ==, sends_then);    /* not one SMP more: no queued one, no resend */
	g_assert_cmpuint(transport_outstanding(t), ==, 0);
	/* the transport goes on: a new request is sent and called back */
	stop_flag = 0;
	stop_after = 0;
	fk.policy = NULL;
	submit_n(t, &res, 1);
	transport_drain(t, &stop_flag);
	g_assert_cmpuint(completions, ==, done_then + 1);
	destroy(&fk);
}

static void test_drain_stopped_answered(void)
{
	run_drain_stopped(0);
}

static void test_drain_stopped_lost(void)
{
	run_drain_stopped(1);
}

static int unsolicited_seen;
static void on_unsolicited(struct transport *t, void *umad, int len, void *ctx)
{
	(void)t; (void)len; (void)ctx;
	uint8_t *mad = umad_get_mad(umad);
	if (mad[3] == IB_MAD_METHOD_TRAP)
		unsolicited_seen++;
}

static void test_unsolicited(void)
{
	struct fake fk;
	struct transport *t = make(&fk, 4, 50, 1);
	transport_set_unsolicited(t, on_unsolicited, NULL);
	uint8_t buf[512];
	memset(buf, 0, sizeof(buf));
	uint8_t *mad = umad_get_mad(buf);
	mad[0] = 1;
	mad[1] = IB_SMI_CLASS;
	mad[2] = 1;
	mad[3] = IB_MAD_METHOD_TRAP;
	enqueue(&fk, buf, transport_umad_len(), g_get_monotonic_time());
	transport_poll(t, 30, 0);
	g_assert_cmpint(unsolicited_seen, ==, 1);
	destroy(&fk);
}

/* A stretch of 60 ms away from the fabric (this thread computing) is said once, MAD-0003, with
 * the labels it ran between and this thread's CPU time over it; a short one is not. The test
 * judges what the line says, never how fast anything ran: 60 ms of wall clock pass under any
 * load, and the thread ran at least the part of them the kernel gave it (> 0). */
static void test_slice_said(void)
{
	char *dir = g_dir_make_tmp("ibsm-slice-XXXXXX", NULL);
	char *path = g_build_filename(dir, "log", NULL);
	g_assert_cmpint(log_open(path, 0), ==, 0);
	struct fake fk;
	make(&fk, 4, 1000, 0);
	transport_slice_label("before-spin");
	transport_step_now(fk.t);
	transport_step_now(fk.t); /* a short slice: not said */
	transport_slice_label("spin");
	int64_t end = g_get_monotonic_time() + 60000;
	volatile uint64_t x = 0;
	while (g_get_monotonic_time() < end)
		x++;
	transport_slice_label("after-spin");
	transport_step_now(fk.t);
	log_close();
	transport_slice_label("idle");
	destroy(&fk);
	char *text = NULL;
	g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
	GRegex *rx = g_regex_new("MAD-0003 the event loop was away from the fabric ([0-9.]+) ms \\(from "
				 "before-spin to after-spin\\); in the last ([0-9.]+) ms this thread ran "
				 "([0-9.]+) ms and waited ([0-9.]+) ms for a CPU", 0, 0, NULL);
	GMatchInfo *mi = NULL;
	g_assert_true(g_regex_match(rx, text, 0, &mi));
	char *away = g_match_info_fetch(mi, 1), *ran = g_match_info_fetch(mi, 3);
	g_assert_cmpfloat(g_ascii_strtod(away, NULL), >=, 60.0);
	g_assert_cmpfloat(g_ascii_strtod(ran, NULL), >, 0.0);
	g_assert_null(strstr(strstr(text, "MAD-0003") + 8, "MAD-0003")); /* said once */
	g_free(away);
	g_free(ran);
	g_match_info_free(mi);
	g_regex_unref(rx);
	g_free(text);
	g_unlink(path);
	g_rmdir(dir);
	g_free(path);
	g_free(dir);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/transport/plain", test_plain);
	g_test_add_func("/transport/window", test_window);
	g_test_add_func("/transport/submit_sends", test_submit_sends);
	g_test_add_func("/transport/slicer_paces", test_slicer_paces);
	g_test_add_func("/transport/window2", test_window2);
	g_test_add_func("/transport/drops_retried", test_drops_retried);
	g_test_add_func("/transport/give_up", test_give_up);
	g_test_add_func("/transport/duplicates", test_duplicates);
	g_test_add_func("/transport/late_reply_ignored", test_late_reply_ignored);
	g_test_add_func("/transport/deadline_after_answered", test_deadline_after_answered);
	g_test_add_func("/transport/misaddressed", test_misaddressed);
	g_test_add_func("/transport/bounce_backoff", test_bounce_backoff);
	g_test_add_func("/transport/unsolicited", test_unsolicited);
	g_test_add_func("/transport/persist_lossy", test_persist_lossy);
	g_test_add_func("/transport/persist_timeouts", test_persist_timeouts);
	g_test_add_func("/transport/persist_gives_up", test_persist_gives_up);
	g_test_add_func("/transport/quiesce", test_quiesce);
	g_test_add_func("/transport/drain_stopped_answered", test_drain_stopped_answered);
	g_test_add_func("/transport/drain_stopped_lost", test_drain_stopped_lost);
	g_test_add_func("/transport/slice_said", test_slice_said);
	return g_test_run();
}
