/* SPDX-License-Identifier: BSD-2-Clause */
/* slice.c - the main thread's long work cut into slices, or run beside it (slice.h). */
#include <glib.h>
#include "base/mad_cpu.h"
#include "fabric/slice.h"

#define SLICE_CHECK_EVERY 16  /* items between two looks at the clock */
#define OFFLOAD_POLL_MS   4   /* longest wait for an offloaded fn once it is done */
#define OFFLOAD_FAST_US   50000 /* ... after this long; until then 1 ms */

void slicer_init(struct slicer *s, struct transport *t, const volatile int *stop)
{
	s->t = t;
	s->stop = stop;
	s->since_us = g_get_monotonic_time();
	s->n = 0;
	s->steps = 0;
}

int slicer_check(struct slicer *s)
{
	if (!s->t)
		return 0;
	if (transport_queued(s->t) >= SLICE_QUEUE_HIGH) { /* looked at every call: an item may queue many */
		while (transport_queued(s->t) > SLICE_QUEUE_LOW && !(s->stop && *s->stop))
			transport_poll(s->t, 1, 0);
		s->n = 0;
		s->since_us = g_get_monotonic_time();
		s->steps++;
		return 1;
	}
	if (++s->n < SLICE_CHECK_EVERY)
		return 0;
	s->n = 0;
	int64_t now = g_get_monotonic_time();
	if (now - s->since_us < (transport_queued(s->t) ? SLICE_FEED_US : SLICE_WORK_US))
		return 0;
	transport_step_now(s->t);
	s->since_us = g_get_monotonic_time();
	s->steps++;
	return 1;
}

struct freeze_job {
	struct model_builder *b, *also_free;
	uint32_t generation;
	struct fabric *f;
	GError *err;
};

static void freeze_main(void *p)
{
	struct freeze_job *j = p;
	j->f = model_freeze(j->b, j->generation, &j->err);
	if (j->also_free != j->b)
		model_builder_free(j->also_free);
	model_builder_free(j->b);
}

struct fabric *slice_freeze(struct transport *t, struct model_builder *b, struct model_builder *also_free,
			    uint32_t generation, GError **err)
{
	struct freeze_job j = { b, also_free, generation, NULL, NULL };
	slice_offload(t, "ibsm-freeze", freeze_main, &j);
	if (!j.f)
		g_propagate_error(err, j.err);
	return j.f;
}

static gpointer job_main(gpointer p)
{
	struct slice_job *j = p;
	j->fn(j->arg);
	g_atomic_int_set(&j->done, 1);
	return NULL;
}

void slice_job_start(struct slice_job *j, const char *name, void (*fn)(void *arg), void *arg)
{
	*j = (struct slice_job){ .fn = fn, .arg = arg };
	j->th = mad_cpu_thread_new(name, job_main, j);
}

void slice_job_finish(struct transport *t, struct slice_job *j)
{
	slice_join(t, j->th, &j->done);
	j->th = NULL;
}

void slice_offload(struct transport *t, const char *name, void (*fn)(void *arg), void *arg)
{
	if (!t) {
		fn(arg);
		return;
	}
	struct slice_job j;
	slice_job_start(&j, name, fn, arg);
	slice_job_finish(t, &j);
}

void slice_join(struct transport *t, GThread *th, gint *done)
{
	if (!th)
		return;
	if (t) {
		/* a short wait is taken up at once and looks every ms (a freeze of 8 ms must not wait
		 * for a 4 ms look); a long one costs the loop a look every few ms */
		transport_step_now(t);
		int64_t start = g_get_monotonic_time();
		while (!g_atomic_int_get(done))
			transport_poll(t, g_get_monotonic_time() - start < OFFLOAD_FAST_US ? 1 : OFFLOAD_POLL_MS, 0);
	}
	g_thread_join(th);
}
