/* SPDX-License-Identifier: BSD-2-Clause */
/* transport.c - the SM's only MAD I/O path: a bounded window of preallocated slots, TIDs of
 * generation << 8 | slot matched on the low 32 bits, a watchdog with retries and back-off
 * (ibsim answers an undeliverable SMP at once with status 110), unsolicited MADs dispatched.
 * A lost SMP is sent again past the configured retries for as long as the transport makes
 * progress (other SMPs are answered meanwhile): on a lossy fabric everything gets through in
 * the end, while an SMP to where nothing answers gives up once nothing else does either. */
#include <errno.h>
#include <glib.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include "base/log.h"
#include "base/thread_sched.h"
#include "mad/smp_encode.h"
#include "mad/transport.h"

#define SLOT_BITS 8
#define MAD_HEADER_BYTES 24    /* the common MAD header (IBA 13.4.3) */
#define MAX_WINDOW 255
#define BACKOFF_BASE_US 2000
#define BACKOFF_MAX_US 20000   /* a back-off never waits longer than this */
#define PERSIST_MAX_ATTEMPTS 64 /* attempts of one SMP while the transport makes progress */
#define PERSIST_MAX_US 5000000  /* ... and for at most this long since its first attempt */
#define PROGRESS_WINDOW_US 1000000 /* progress: an SMP of ours answered this recently */

struct slot {
	struct smp_req req;
	uint32_t gen;          /* 24 bits */
	uint8_t busy, attempts, waiting_resend;
	uint8_t abandoned;     /* its caller gave up on it (a drain cut short): no callback, no resend */
	int64_t deadline_us, resend_at_us;
	int64_t first_send_us;         /* of the first attempt */
	struct smp_buf buf;            /* its umad buffer, reused (mad/smp_encode.h) */
};

struct transport {
	struct transport_io io;
	struct transport_cfg cfg;
	struct slot *slots;
	int nslots;                    /* the window, or window2 when that is larger */
	uint32_t limit;                /* SMPs in flight allowed now: window, more while stalled */
	int64_t full_since_us;         /* the window is full with more queued (0: not), or grown */
	uint32_t *free_stack, n_free, n_busy;
	/* FIFO of queued requests: a growable ring */
	struct smp_req *ring;
	uint32_t ring_cap, ring_head, ring_len;
	uint8_t *rxbuf;
	int umad_len;
	unsolicited_fn unsolicited;
	void *unsolicited_ctx;
	void (*tick)(void *ctx);
	void *tick_ctx;
	int (*work)(void *ctx);        /* queued unsolicited work (the SA's requests) */
	void *work_ctx;
	int work_pending;              /* it said more remains: the next step does not wait */
	int64_t last_tick_us;
	int64_t last_look_us;          /* the umad fd was last looked at (slice statistics) */
	const char *look_label;        /* the label in force then */
	struct thread_sched sched;     /* this thread's CPU and run-queue times, read at sched_us */
	int64_t sched_us;              /* 0: not read (or not available) */
	int64_t last_answer_us;        /* when an SMP of ours was last answered: the progress */
	/* No slot's deadline or resend is due before this (a lower bound: a slot answered since
	 * leaves it early, and the first look at the clock past it finds the true one). The slots
	 * are scanned only then, not twice at every step (for the wait and for the timers): a
	 * step often hands out a single answer, and the window is 64 slots. */
	int64_t next_due_us;
	int64_t now_us;                /* the clock as last read (each step's start, after each wait) */
	int quiescing;                 /* transport_quiesce(): nothing is sent any more */
	struct mkey_cfg mkey;
	struct transport_stats stats;
};

int transport_umad_len(void)
{
	return (int)umad_size() + MAD_SIZE;
}

struct transport *transport_new(const struct transport_io *io, const struct transport_cfg *cfg)
{
	struct transport *t = g_new0(struct transport, 1);
	t->io = *io;
	t->cfg = *cfg;
	if (t->cfg.window < 1)
		t->cfg.window = 1;
	if (t->cfg.window > MAX_WINDOW)
		t->cfg.window = MAX_WINDOW;
	if (t->cfg.timeout_ms < 1)
		t->cfg.timeout_ms = 1;
	if (t->cfg.retries < 0)
		t->cfg.retries = 0;
	t->nslots = t->cfg.window2 > t->cfg.window && t->cfg.window2_timeout_us > 0 ?
		    MIN(t->cfg.window2, MAX_WINDOW) : t->cfg.window;
	t->limit = (uint32_t)t->cfg.window;
	t->umad_len = transport_umad_len();
	t->slots = g_new0(struct slot, t->nslots);
	t->free_stack = g_new(uint32_t, t->nslots);
	for (int i = t->nslots - 1; i >= 0; i--) {
		t->slots[i].buf = (struct smp_buf){ g_malloc0(t->umad_len), t->umad_len, 0 };
		t->slots[i].gen = (uint32_t)g_random_int_range(1, 1 << 16);
		t->free_stack[t->n_free++] = (uint32_t)i;
	}
	t->next_due_us = INT64_MAX;
	t->ring_cap = 1024;
	t->ring = g_new(struct smp_req, t->ring_cap);
	t->rxbuf = g_malloc0(t->umad_len);
	return t;
}

void transport_free(struct transport *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->nslots; i++)
		g_free(t->slots[i].buf.umad);
	g_free(t->slots);
	g_free(t->free_stack);
	g_free(t->ring);
	g_free(t->rxbuf);
	g_free(t);
}

void transport_set_unsolicited(struct transport *t, unsolicited_fn fn, void *ctx)
{
	t->unsolicited = fn;
	t->unsolicited_ctx = ctx;
}

void transport_set_work(struct transport *t, int (*fn)(void *ctx), void *ctx)
{
	t->work = fn;
	t->work_ctx = ctx;
	t->work_pending = 0;
}

void transport_set_tick(struct transport *t, void (*fn)(void *ctx), void *ctx)
{
	t->tick = fn;
	t->tick_ctx = ctx;
}

static void fill_window(struct transport *t);

void transport_submit(struct transport *t, const struct smp_req *r)
{
	if (t->quiescing) /* transport_quiesce(): dropped, no callback, as what was queued then */
		return;
	if (t->ring_len == t->ring_cap) {
		/* grow and unwrap */
		struct smp_req *n = g_new(struct smp_req, (size_t)t->ring_cap * 2);
		for (uint32_t i = 0; i < t->ring_len; i++)
			n[i] = t->ring[(t->ring_head + i) % t->ring_cap];
		g_free(t->ring);
		t->ring = n;
		t->ring_head = 0;
		t->ring_cap *= 2;
	}
	t->ring[(t->ring_head + t->ring_len) % t->ring_cap] = *r;
	t->ring_len++;
	/* A free slot sends it now, not at the next step: a phase that queues thousands of SMPs
	 * keeps the fabric busy from its first one, not from the end of its loop. The clock is
	 * read for the deadline: the caller may have worked for ms since the last step. */
	if (t->n_free && t->n_busy < t->limit) {
		t->now_us = g_get_monotonic_time();
		fill_window(t);
	}
}

uint32_t transport_queued(const struct transport *t)
{
	return t->ring_len;
}

uint32_t transport_outstanding(const struct transport *t)
{
	return t->ring_len + t->n_busy;
}

const struct transport_stats *transport_stats(const struct transport *t)
{
	return &t->stats;
}

static uint32_t slot_tid(const struct transport *t, const struct slot *s)
{
	return (s->gen << SLOT_BITS) | (uint32_t)(s - t->slots);
}

/* Encodes the slot's request into its umad buffer and hands it to the I/O. */
static void slot_send(struct transport *t, struct slot *s)
{
	const struct smp_req *r = &s->req;
	s->gen = (s->gen + 1) & 0xFFFFFF;
	if (!s->gen)
		s->gen = 1;
	int mgtclass = smp_encode(&s->buf, r, slot_tid(t, s), t->cfg.timeout_ms);
	if (mgtclass < 0) {
		LOG_E("MAD-0001", "cannot encode SMP attr 0x%x", r->attr);
		mgtclass = r->dr ? IB_SMI_DIRECT_CLASS : IB_SMI_CLASS;
	}
	/* the clock as read at this step's start or after its wait (step()): at most the
	 * handling of one batch of answers old, not read again for each of 500 000 SMPs */
	int64_t now = t->now_us;
	s->deadline_us = now + (int64_t)t->cfg.timeout_ms * 1000;
	if (s->deadline_us < t->next_due_us)
		t->next_due_us = s->deadline_us;
	s->waiting_resend = 0;
	if (!s->attempts)
		s->first_send_us = now;
	if (s->attempts < 255)
		s->attempts++;
	t->stats.sent++;
	t->stats.by_attr[r->method == IB_MAD_METHOD_SET][r->attr & 63]++;
	int rc = t->io.send(t->io.ctx, mgtclass, s->buf.umad, t->umad_len, t->cfg.timeout_ms);
	if (rc < 0)
		LOG_V("MAD-0002", "umad send failed: %s", strerror(-rc));
	/* a failed send is retried by the watchdog */
}

static void slot_release(struct transport *t, struct slot *s)
{
	s->busy = 0;
	s->waiting_resend = 0;
	t->n_busy--;
	t->free_stack[t->n_free++] = (uint32_t)(s - t->slots);
}

static void slot_complete(struct transport *t, struct slot *s, int status, const uint8_t *data)
{
	if (status < 0)
		t->stats.failed++;
	if (s->req.done)
		s->req.done(t, &s->req, status, data, s->req.ctx);
	slot_release(t, s);
}

/* Another attempt after the configured retries: while SMPs are being answered (the fabric is
 * lossy, not gone), within PERSIST_MAX_ATTEMPTS and PERSIST_MAX_US. An SMP to where nothing
 * answers gives up once the rest of the work is done and nothing was answered for a while. */
static int persist(const struct transport *t, const struct slot *s)
{
	int64_t now = g_get_monotonic_time();
	return t->cfg.persist && s->attempts < PERSIST_MAX_ATTEMPTS && now - s->first_send_us < PERSIST_MAX_US &&
	       now - t->last_answer_us < PROGRESS_WINDOW_US;
}

/* An attempt failed (timeout or transport status): retry with back-off, or give up. */
static void slot_retry(struct transport *t, struct slot *s, int backoff)
{
	if (t->quiescing || s->abandoned) { /* no more attempts: the SMP is over */
		slot_release(t, s);
		return;
	}
	if (s->req.max_attempts && s->attempts >= s->req.max_attempts) {
		t->stats.timeouts++; /* the caller asked for no more attempts */
		slot_complete(t, s, -ETIMEDOUT, NULL);
		return;
	}
	if (s->attempts > (uint8_t)t->cfg.retries) {
		if (!persist(t, s)) {
			t->stats.timeouts++;
			slot_complete(t, s, -ETIMEDOUT, NULL);
			return;
		}
		t->stats.persisted++;
	}
	t->stats.retries++;
	if (backoff) {
		t->stats.backoffs++;
		s->gen = (s->gen + 1) & 0xFFFFFF; /* a late answer to this attempt is stale */
		s->waiting_resend = 1;
		int shift = MIN(s->attempts - 1, 4);
		int64_t wait = MIN((int64_t)BACKOFF_BASE_US << shift, BACKOFF_MAX_US);
		/* spread the resends: losses come in bursts when many SMPs share a lossy switch */
		wait += g_random_int_range(0, (gint32)(wait / 2) + 1);
		s->resend_at_us = g_get_monotonic_time() + wait;
		if (s->resend_at_us < t->next_due_us)
			t->next_due_us = s->resend_at_us;
	} else {
		slot_send(t, s);
	}
}

/* The second window (OpenSM's max_wire_smps2): the window full with more queued and no answer
 * for window2_timeout_us since it filled (or since it last grew): one more slot. */
static void maybe_grow(struct transport *t)
{
	if (!t->full_since_us || (int)t->limit >= t->nslots || !t->ring_len || t->n_busy < t->limit)
		return;
	int64_t now = g_get_monotonic_time();
	if (now - t->full_since_us < t->cfg.window2_timeout_us)
		return;
	t->limit++;
	t->full_since_us = now;
}

static void fill_window(struct transport *t)
{
	if (t->quiescing) /* transport_quiesce(): nothing is sent any more */
		return;
	maybe_grow(t);
	while (t->n_free && t->ring_len && t->n_busy < t->limit) {
		uint32_t idx = t->free_stack[--t->n_free];
		struct slot *s = &t->slots[idx];
		s->req = t->ring[t->ring_head];
		t->ring_head = (t->ring_head + 1) % t->ring_cap;
		t->ring_len--;
		s->busy = 1;
		s->attempts = 0;
		s->abandoned = 0;
		t->n_busy++;
		slot_send(t, s);
	}
	if (t->nslots > t->cfg.window && t->n_busy >= t->limit && t->ring_len && !t->full_since_us)
		t->full_since_us = g_get_monotonic_time();
}

static void handle_rx(struct transport *t, uint8_t *umad, int len)
{
	uint8_t *mad = umad_get_mad(umad);
	t->stats.received++;
	if (len < (int)umad_size() + MAD_HEADER_BYTES) { /* not even a MAD header: nobody's */
		t->stats.dropped_short++;
		return;
	}
	uint8_t method = mad[3];
	uint8_t mclass = mad[1];
	int ustatus = umad_status(umad);
	int ours = (mclass == IB_SMI_DIRECT_CLASS || mclass == IB_SMI_CLASS) &&
		   ((method & IB_MAD_RESPONSE) || ustatus);
	if (!ours) {
		if (t->unsolicited)
			t->unsolicited(t, umad, len, t->unsolicited_ctx);
		return;
	}
	uint32_t tid = (uint32_t)(mad_get_field64(mad, 0, IB_MAD_TRID_F) & 0xffffffffu);
	uint32_t idx = tid & ((1u << SLOT_BITS) - 1);
	struct slot *s = idx < (uint32_t)t->nslots ? &t->slots[idx] : NULL;
	uint16_t attr = (uint16_t)mad_get_field(mad, 0, IB_MAD_ATTRID_F);
	if (!s || !s->busy || s->waiting_resend || (tid >> SLOT_BITS) != s->gen ||
	    attr != s->req.attr) {
		t->stats.dropped_stale++;
		return;
	}
	t->limit = (uint32_t)t->cfg.window; /* an answer: the second window closes */
	t->full_since_us = 0;
	if (ustatus) { /* the request came back undelivered (ibsim: at once, status 110) */
		slot_retry(t, s, 1);
		return;
	}
	if (len < (int)umad_size() + IB_MAD_SIZE) { /* an SMP is a whole MAD, its data included */
		t->stats.dropped_short++;
		return; /* its retry comes with the timeout */
	}
	int status = ((mad[4] << 8) | mad[5]) & 0x7fff;
	t->last_answer_us = t->now_us; /* read after the wait or at the last send: recent enough */
	slot_complete(t, s, status, mad + IB_SMP_DATA_OFFS);
}

static int64_t next_event_us(struct transport *t)
{
	int64_t next = t->next_due_us;
	if (t->full_since_us && (int)t->limit < t->nslots && t->full_since_us + t->cfg.window2_timeout_us < next)
		next = t->full_since_us + t->cfg.window2_timeout_us; /* the second window may open */
	return next;
}

/* Fires what is due; the scan also finds the next due time (a resend or retry sent here
 * lowers it again through slot_send and slot_retry). */
static void run_timers(struct transport *t, int64_t now)
{
	if (now < t->next_due_us)
		return;
	t->next_due_us = INT64_MAX;
	for (int i = 0; i < t->nslots; i++) {
		struct slot *s = &t->slots[i];
		if (!s->busy)
			continue;
		int64_t when = s->waiting_resend ? s->resend_at_us : s->deadline_us;
		if (when > now) {
			if (when < t->next_due_us)
				t->next_due_us = when;
		} else if (s->waiting_resend) {
			slot_send(t, s);
		} else {
			slot_retry(t, s, 0);
		}
	}
}

/* One step: send what fits, wait up to max_wait_ms, read all that arrived, fire timers. */
static const char *slice_label = "idle";

void transport_slice_label(const char *label)
{
	slice_label = label;
}

void transport_slices_reset(struct transport *t)
{
	t->stats.slice_max_us = 0;
	t->stats.slice_max_label = t->stats.slice_max_label_to = NULL;
}

/* A slice this long is said, with how much of it (and of the few ms before it) this thread
 * ran and how much it waited for a CPU: the SA's 50 ms budget, whose time it was. */
#define SLICE_SAID_US      50000
#define SCHED_REFRESH_US   20000 /* the reading compared with is at most this old at a slice's start */

static void slice_said(struct transport *t, int64_t now, uint64_t us)
{
	struct thread_sched cur;
	if (!t->sched_us || thread_sched_read(&cur) < 0) {
		t->sched_us = 0;
		LOG_I("MAD-0003", "the event loop was away from the fabric %.1f ms (from %s to %s)",
		      (double)us / 1000.0, t->look_label, slice_label);
		return;
	}
	LOG_I("MAD-0003", "the event loop was away from the fabric %.1f ms (from %s to %s); in the "
	      "last %.1f ms this thread ran %.1f ms and waited %.1f ms for a CPU", (double)us / 1000.0,
	      t->look_label, slice_label, (double)(now - t->sched_us) / 1000.0,
	      (double)(cur.on_cpu_ns - t->sched.on_cpu_ns) / 1e6, (double)(cur.wait_ns - t->sched.wait_ns) / 1e6);
	t->sched = cur;
	t->sched_us = now;
}

/* Before a look at the umad fd: the stretch since the last one is a slice the SA waited out. */
static void slice_end(struct transport *t, int64_t now)
{
	uint64_t us = t->last_look_us ? (uint64_t)(now - t->last_look_us) : 0;
	if (us >= SLICE_SAID_US)
		slice_said(t, now, us); /* against the reading from before the slice; then a new one */
	else if (now - t->sched_us >= SCHED_REFRESH_US)
		t->sched_us = thread_sched_read(&t->sched) == 0 ? now : 0;
	if (!t->last_look_us)
		return;
	static const uint64_t over_us[4] = { 10000, 20000, 50000, 100000 };
	for (int i = 0; i < 4 && us >= over_us[i]; i++)
		t->stats.slices_over[i]++;
	if (us > t->stats.slice_max_us) {
		t->stats.slice_max_us = us;
		t->stats.slice_max_label = t->look_label;
		t->stats.slice_max_label_to = slice_label;
	}
}

static void step(struct transport *t, int max_wait_ms)
{
	int64_t now = t->now_us = g_get_monotonic_time();
	fill_window(t);
	int wait_ms = t->work_pending ? 0 : max_wait_ms;
	if (t->n_busy) {
		int64_t next = next_event_us(t) - now;
		int ms = next <= 0 ? 0 : next >= INT_MAX / 2 ? INT_MAX : (int)((next + 999) / 1000);
		if (ms < wait_ms)
			wait_ms = ms;
	}
	slice_end(t, now);
	int ready = t->io.wait(t->io.ctx, wait_ms);
	t->last_look_us = t->now_us = g_get_monotonic_time();
	t->look_label = slice_label;
	if (ready > 0) {
		int len = t->umad_len;
		int budget = 256; /* then the SA's queue (work) and a look again: 4096 was 30+ ms loaded */
		while (budget-- > 0 && t->io.recv(t->io.ctx, t->rxbuf, &len, 0) == 0) {
			handle_rx(t, t->rxbuf, len);
			len = t->umad_len;
			fill_window(t);
		}
	}
	/* the clock as read after the wait or at the last send: a timer the answers' handling
	 * made late fires at the next step */
	run_timers(t, t->now_us);
	if (t->work)
		t->work_pending = t->work(t->work_ctx);
	if (t->tick) {
		if (t->now_us - t->last_tick_us >= 50000) {
			t->last_tick_us = t->now_us;
			t->tick(t->tick_ctx);
		}
	}
}

void transport_set_mkey(struct transport *t, const struct mkey_cfg *c)
{
	t->mkey = *c;
}

const struct mkey_cfg *transport_mkey(const struct transport *t)
{
	return &t->mkey;
}

void transport_quiesce(struct transport *t, int max_ms)
{
	t->quiescing = 1;
	t->ring_len = 0;
	t->unsolicited = NULL; /* traps, SMInfo: their agents are going */
	t->tick = NULL;
	t->work = NULL;
	t->work_pending = 0;
	for (int i = 0; i < t->nslots; i++) {
		struct slot *s = &t->slots[i];
		if (!s->busy)
			continue;
		s->req.done = NULL; /* its caller is gone */
		if (s->waiting_resend) /* not on the wire */
			slot_release(t, s);
	}
	int64_t end = g_get_monotonic_time() + (int64_t)max_ms * 1000;
	while (t->n_busy && g_get_monotonic_time() < end)
		step(t, 20);
}

void transport_step_now(struct transport *t)
{
	step(t, 0);
}

/* What is queued is dropped and what is on the wire is kept until its answer or timeout, with
 * no callback and no resend: the callers it would call back may be gone. */
static void abandon(struct transport *t)
{
	t->ring_len = 0;
	for (int i = 0; i < t->nslots; i++) {
		struct slot *s = &t->slots[i];
		if (!s->busy)
			continue;
		s->req.done = NULL;
		s->abandoned = 1;
		if (s->waiting_resend) /* not on the wire */
			slot_release(t, s);
	}
}

void transport_drain(struct transport *t, volatile int *stop)
{
	while ((t->ring_len || t->n_busy) && !(stop && *stop))
		step(t, 100);
	/* Cut short by *stop (SIGTERM mid-sweep): the caller returns now, and with it the context
	 * its callbacks write to, often its stack frame (a discovery, a programming pass, an
	 * SMInfo poll). An answer handed out later, by any step until the port is closed (the rest
	 * of the sweep, a thread's slice_offload), must not call into it. */
	if (stop && *stop && (t->ring_len || t->n_busy))
		abandon(t);
}

/* Steps for up to timeout_ms; early once idle (return_when_idle) or once *flag is set. */
static void poll_loop(struct transport *t, int timeout_ms, int return_when_idle, const volatile int *flag)
{
	int64_t end = g_get_monotonic_time() + (int64_t)timeout_ms * 1000;
	while (!(flag && *flag)) {
		/* rounded up: a 1 ms poll waits up to 1 ms, not 0 once a microsecond has passed */
		int64_t left = (end - g_get_monotonic_time() + 999) / 1000;
		if (left <= 0)
			break;
		step(t, left > 100 ? 100 : (int)left);
		if (return_when_idle && !t->ring_len && !t->n_busy)
			break;
	}
}

void transport_poll(struct transport *t, int timeout_ms, int return_when_idle)
{
	poll_loop(t, timeout_ms, return_when_idle, NULL);
}

void transport_poll_until(struct transport *t, int timeout_ms, const volatile int *flag)
{
	poll_loop(t, timeout_ms, 0, flag);
}

int transport_send_raw(struct transport *t, int mgmt_class, void *umad, int len)
{
	t->stats.sent++;
	return t->io.send(t->io.ctx, mgmt_class, umad, len, t->cfg.timeout_ms);
}
