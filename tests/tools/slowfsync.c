/* SPDX-License-Identifier: BSD-2-Clause */
/* slowfsync.c - a disk that takes its time, on demand: an LD_PRELOAD shim whose fsync() of a
 * file whose path contains $SLOWFSYNC_MATCH waits while the file $SLOWFSYNC_GATE exists (at
 * most 300 s), after creating $SLOWFSYNC_GATE.held once, so a test knows a writer is stuck in
 * it. Unset variables change nothing. tests/sim/87-dumps-slow.t: the SM's dump thread stuck
 * writing opensm-subnet.lst while the next sweep reaches its dumps. */

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*fsync_fn)(int);

static int held_here(int fd)
{
	const char *match = getenv("SLOWFSYNC_MATCH"), *gate = getenv("SLOWFSYNC_GATE");
	if (!match || !*match || !gate || !*gate)
		return 0;
	char link[64], path[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return 0;
	path[n] = 0;
	if (!strstr(path, match) || access(gate, F_OK) != 0)
		return 0;
	char held[PATH_MAX];
	snprintf(held, sizeof(held), "%s.held", gate);
	int h = open(held, O_WRONLY | O_CREAT, 0644);
	if (h >= 0)
		close(h);
	for (int ms = 0; ms < 300000 && access(gate, F_OK) == 0; ms += 10)
		usleep(10000);
	return 1;
}

int fsync(int fd)
{
	static fsync_fn real;
	if (!real)
		real = (fsync_fn)dlsym(RTLD_NEXT, "fsync");
	held_here(fd);
	return real(fd);
}
