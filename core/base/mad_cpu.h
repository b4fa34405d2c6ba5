/* SPDX-License-Identifier: BSD-2-Clause */
/* mad_cpu.h - the MAD path on one CPU (key mad_cpu): the event loop's thread, which sends and
 * receives every SMP, and the threads the MAD library starts beside it when the port is opened
 * (umad2sim's receiver under ibsim) share one CPU, so handing an answer from one to the other is
 * a switch on that CPU rather than a wake-up sent to another; the threads that compute (routing,
 * verification, dumps, SA indexes) keep every CPU the process may use. Measured under ibsim on 2
 * CPUs (bench/results): the 8192-host bring-up takes 2.1 s pinned where it took 2.2-3.8 s free. */
#ifndef IBSM_BASE_MAD_CPU_H
#define IBSM_BASE_MAD_CPU_H

#include <glib.h>

#define MAD_CPU_OFF (-1)

/* Puts the calling thread (the event loop's, before the MAD port is opened) on CPU `cpu` and
 * remembers the process's CPUs for the threads started later. MAD_CPU_OFF: nothing. Returns 0,
 * or -1 with *err set (a CPU this process may not use, or the kernel refused). */
int mad_cpu_pin(int cpu, GError **err);

/* The CPU the MAD path is on, or MAD_CPU_OFF. */
int mad_cpu_pinned(void);

/* g_thread_new() for a thread that computes: it runs on every CPU the process had before
 * mad_cpu_pin(), whatever the creating thread is pinned to. The threads it starts in turn (an
 * engine's workers) inherit that. */
GThread *mad_cpu_thread_new(const char *name, GThreadFunc fn, gpointer data);

#endif
