/* SPDX-License-Identifier: BSD-2-Clause */
/* slice.h - the main thread's own long work cut into slices: the SA shares the SM's one event
 * loop with the sweep, so work that runs for tens of ms looks at the fabric between its parts
 * (a transport step) or runs on a thread of its own while the loop goes on serving MADs. */
#ifndef IBSM_FABRIC_SLICE_H
#define IBSM_FABRIC_SLICE_H

#include <stdint.h>
#include "fabric/model.h"
#include "mad/transport.h"

/* A loop's work between two looks at the fabric, at most about this long (wall clock: on a
 * busy machine the loop looks more often, not less). */
#define SLICE_WORK_US 5000
/* ... and this long while SMPs the loop queued wait for the window: the answers are taken and
 * the window filled again before the fabric runs dry (64 SMPs are about 0.2 ms of ibsim's). */
#define SLICE_FEED_US 50
/* A loop that has queued this many SMPs runs the transport until SLICE_QUEUE_LOW are left
 * before it queues more: the queue stays small (a few hundred kB, warm in the cache) and
 * never grows to a phase's 100 000 or more requests (about 180 bytes each, and the ring's
 * doubling); the low mark keeps the window full meanwhile (64 SMPs in flight). */
#define SLICE_QUEUE_HIGH 4096
#define SLICE_QUEUE_LOW  1024

struct slicer {
	struct transport *t; /* NULL: never steps (offline, unit tests) */
	const volatile int *stop; /* non-zero: a pacing wait ends at once (SIGTERM); NULL: none */
	int64_t since_us;    /* the last look at the fabric (or the start) */
	uint32_t n;
	uint32_t steps;      /* transport steps taken */
};

void slicer_init(struct slicer *s, struct transport *t, const volatile int *stop);
/* Cheap enough for every item of a loop: every few calls looks at the clock, and past
 * SLICE_WORK_US (SLICE_FEED_US with SMPs queued) since the last look takes one transport
 * step (replies handed out, the SA's queue served); with SLICE_QUEUE_HIGH SMPs queued, runs
 * the transport until SLICE_QUEUE_LOW are (or *stop). Returns 1 when it stepped. The SMPs go
 * out in the order queued either way. Not from within a transport callback or hook. */
int slicer_check(struct slicer *s);

/* fn(arg) on a thread of its own while this thread serves the fabric (transport_poll);
 * returns once fn has. fn must not touch the transport nor what its callbacks touch. With
 * t NULL, fn runs here. Not from within a transport callback or hook. */
void slice_offload(struct transport *t, const char *name, void (*fn)(void *arg), void *arg);

/* Joins th, a thread that sets *done (atomically) as its last act, while this thread serves
 * the fabric as slice_offload does; th NULL: nothing. With t NULL, a plain join. */
void slice_join(struct transport *t, GThread *th, gint *done);

/* fn(arg) started now on a thread of its own and joined by slice_job_finish, which serves the
 * fabric while it waits: work the loop needs only later runs beside the SMPs it sends
 * meanwhile. fn must not touch the transport nor what its callbacks touch; j and arg must
 * outlive the job. */
struct slice_job {
	GThread *th;
	gint done;
	void (*fn)(void *arg);
	void *arg;
};
void slice_job_start(struct slice_job *j, const char *name, void (*fn)(void *arg), void *arg);
/* Returns once the job has (with t NULL, a plain join); a job not started, or finished: nothing. */
void slice_job_finish(struct transport *t, struct slice_job *j);

/* model_freeze(b) by slice_offload; b, and also_free unless NULL or b, are freed there. */
struct fabric *slice_freeze(struct transport *t, struct model_builder *b, struct model_builder *also_free,
			    uint32_t generation, GError **err);

#endif
