/* SPDX-License-Identifier: BSD-2-Clause */
/* engine_threads.c - the worker threads of the engines that fill their tables in parallel
 * (the min-hop fill, ftree's columns): how many to start, and starting and joining them, so
 * that a thread that cannot be created only makes routing slower, never different. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "engine_glue.h"

unsigned engine_thread_count(const struct ibsm_core *core, const char *key, uint64_t work,
			     uint64_t threshold, unsigned max)
{
	unsigned long n = key ? ibsm_config_ulong(core, key, 0) : 0;
	if (n >= 1)
		return n > max ? max : (unsigned)n;
	if (work < threshold)
		return 1;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return cpus >= 2 ? 2 : 1;
}

void *engine_workers_alloc(unsigned n, size_t size)
{
	size_t bytes = (size_t)(n ? n : 1) * size;
	void *w = aligned_alloc(64, bytes);
	if (w)
		memset(w, 0, bytes);
	return w;
}

unsigned engine_run_workers(void *(*fn)(void *), void *workers, size_t size, unsigned n)
{
	pthread_t *tid = n > 1 ? malloc((n - 1) * sizeof(*tid)) : NULL;
	unsigned started = 1;
	for (unsigned i = 1; i < n && tid; i++, started++)
		if (pthread_create(&tid[i - 1], NULL, fn, (char *)workers + i * size) != 0)
			break; /* fewer threads: the same tables, just slower */
	fn(workers);
	for (unsigned i = 1; i < started; i++)
		pthread_join(tid[i - 1], NULL);
	free(tid);
	return started;
}
