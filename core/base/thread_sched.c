/* SPDX-License-Identifier: BSD-2-Clause */
/* thread_sched.c - the calling thread's CPU and run-queue times (base/thread_sched.h): one
 * pread of /proc/thread-self/schedstat ("on_cpu_ns wait_ns timeslices"). */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>
#include "base/thread_sched.h"

static int fd = -2; /* -2: not tried yet; -1: not available */

int thread_sched_read(struct thread_sched *out)
{
	if (fd == -2)
		fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char buf[96];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	uint64_t run, wait;
	if (sscanf(buf, "%" SCNu64 " %" SCNu64, &run, &wait) != 2)
		return -1;
	out->on_cpu_ns = run;
	out->wait_ns = wait;
	return 0;
}
