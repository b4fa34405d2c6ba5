/* SPDX-License-Identifier: BSD-2-Clause */
/* thread_sched.h - how long the calling thread has run on a CPU and waited for one, from the
 * kernel's /proc/thread-self/schedstat (Documentation/scheduler/sched-stats.rst): the SM tells
 * a stretch it spent computing from one the machine kept it off every CPU, so an operator
 * reading "the SA answered late" knows whose time it was. */
#ifndef IBSM_BASE_THREAD_SCHED_H
#define IBSM_BASE_THREAD_SCHED_H

#include <stdint.h>

struct thread_sched {
	uint64_t on_cpu_ns;   /* time spent running */
	uint64_t wait_ns;     /* time spent runnable, waiting on a run queue */
};

/* The calling thread's totals so far: 0, or -1 where the kernel does not give them (the file
 * is opened once, by the first caller's thread, and kept: call it from one thread only). */
int thread_sched_read(struct thread_sched *out);

#endif
