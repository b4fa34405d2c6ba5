/* SPDX-License-Identifier: BSD-2-Clause */
/* transport.h - asynchronous SMP transport: a preallocated window of slots over one umad fd,
 * TIDs matched on their low 32 bits, our own watchdog and retries with back-off, DR and
 * LID-routed SMPs, and unsolicited MADs (traps, SMInfo, SA requests) handed to a callback. */
#ifndef IBSM_MAD_TRANSPORT_H
#define IBSM_MAD_TRANSPORT_H

#include <stdint.h>
#include "mad/mkey_derive.h"
#include "mad/ib.h"
#include "mad/smp_req.h"

struct transport;

/* The I/O underneath: the real umad device or a test fake. */
struct transport_io {
	void *ctx;
	/* Send one MAD of class mgmt_class (umad buffer of umad_size() + MAD_SIZE). */
	int (*send)(void *ctx, int mgmt_class, void *umad, int len, int timeout_ms);
	/* Receive one MAD; timeout_ms 0 = do not wait. Returns 0, -EAGAIN/-ETIMEDOUT when none. */
	int (*recv)(void *ctx, void *umad, int *len, int timeout_ms);
	/* Wait for readability up to timeout_ms (< 0 forever); > 0 when readable. */
	int (*wait)(void *ctx, int timeout_ms);
};

/* Unsolicited MAD (not a response to one of ours): the umad buffer and its length. */
typedef void (*unsolicited_fn)(struct transport *t, void *umad, int len, void *ctx);

struct transport_stats {
	uint64_t sent, received, retries, timeouts, failed, dropped_stale, backoffs;
	uint64_t dropped_short;   /* MADs shorter than their header, SMP answers than a whole MAD */
	uint64_t persisted;      /* retries past the configured ones (the transport made progress) */
	uint64_t by_attr[2][64]; /* [0]=Get [1]=Set, attr & 63 */
	/* Stretches of the caller's thread between two looks at the umad fd (nothing received,
	 * no SA request taken in): how many lasted 10, 20, 50, 100 ms or more; the longest since
	 * transport_slices_reset() and the label in force when it began (transport_slice_label). */
	uint64_t slices_over[4];
	uint64_t slice_max_us;
	const char *slice_max_label, *slice_max_label_to; /* in force as it began, as it ended */
};

struct transport_cfg {
	int window;       /* SMPs in flight (1..255) */
	int timeout_ms;   /* per attempt */
	int retries;      /* extra attempts after the first */
	int persist;      /* past those, retry while other SMPs are answered (a lossy fabric) */
	/* OpenSM's max_wire_smps2 / max_smps_timeout: with window2 > window, a full window that
	 * sees no answer for window2_timeout_us lets one more SMP out, up to window2 in flight;
	 * the first answer brings it back to window. 0 (or window2 <= window): off. */
	int window2;
	int window2_timeout_us;
};

struct transport *transport_new(const struct transport_io *io, const struct transport_cfg *cfg);
void transport_free(struct transport *t);
void transport_set_unsolicited(struct transport *t, unsolicited_fn fn, void *ctx);
/* Called at the end of every I/O step, after the MADs that came were handed out: does queued
 * unsolicited work (the SA answers its queue there, a share at a time) and returns nonzero
 * while some remains, so that the next step does not sleep waiting for I/O. May send MADs
 * (transport_send_raw), not submit or drain. */
void transport_set_work(struct transport *t, int (*fn)(void *ctx), void *ctx);
/* Called from every I/O step (at most every ~50 ms): lets the event loop dispatch its signal
 * and timer sources during a long drain. The hook must not submit or drain. */
void transport_set_tick(struct transport *t, void (*fn)(void *ctx), void *ctx);
/* Queues a request (copied) and sends it at once if the window has room. Never blocks, never
 * calls back (answers are handed out by the steps). After transport_quiesce(): dropped. */
void transport_submit(struct transport *t, const struct smp_req *r);
/* Requests queued and not yet sent (the window full). */
uint32_t transport_queued(const struct transport *t);
/* One I/O step that does not wait: what has come is handed out and queued work done (the
 * SA's queue). For long stretches of work in the caller's thread, between their parts. */
void transport_step_now(struct transport *t);
/* Runs I/O until nothing is queued or in flight (or *stop becomes non-zero: then whatever
 * is still queued or in flight is abandoned, no callback and no resend, as its caller's
 * context may go when it returns). */
void transport_drain(struct transport *t, volatile int *stop);
/* Runs I/O for up to timeout_ms (serving unsolicited MADs); returns early once idle and
 * return_when_idle is set. */
void transport_poll(struct transport *t, int timeout_ms, int return_when_idle);
/* transport_poll() (never returning when idle) that returns as soon as *flag is non-zero,
 * looked at after every step: the event loop's wait, cut short by a trap asking for a sweep. */
void transport_poll_until(struct transport *t, int timeout_ms, const volatile int *flag);
uint32_t transport_outstanding(const struct transport *t);
/* Before the port is closed: drops what is queued, forgets every callback (their callers may
 * be gone, e.g. a sweep cut short by SIGTERM) and waits, at most max_ms, for the answers (or
 * the timeouts) of the SMPs still on the wire, sending nothing more. A reply arriving after
 * the port is closed crashes umad2sim's receiver thread; on hardware it is merely lost. */
void transport_quiesce(struct transport *t, int max_ms);
/* The M_Key configuration the SMs' builders present keys from (mad/mkey_derive.h); a copy is kept.
 * transport_mkey() never returns NULL (protection off until set). */
void transport_set_mkey(struct transport *t, const struct mkey_cfg *c);
const struct mkey_cfg *transport_mkey(const struct transport *t);
const struct transport_stats *transport_stats(const struct transport *t);
/* What the caller's thread is doing (a string literal: a phase, "sa-pkeys", ...), for the slice
 * statistics above; process-wide. */
void transport_slice_label(const char *label);
/* Forgets the longest slice (the counts stay cumulative). */
void transport_slices_reset(struct transport *t);
/* Sends a response MAD built by the caller (umad buffer with address already set). */
int transport_send_raw(struct transport *t, int mgmt_class, void *umad, int len);
int transport_umad_len(void);

#endif
