/* SPDX-License-Identifier: BSD-2-Clause */
/* mad_cpu.c - the MAD path on one CPU, the threads that compute on all (mad_cpu.h). */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include "base/mad_cpu.h"

static int pinned = MAD_CPU_OFF;
static cpu_set_t process_cpus; /* before the pin: what the threads that compute get back */

static void cpus_text(const cpu_set_t *set, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE && at + 16 < len; c++) {
		if (!CPU_ISSET(c, set))
			continue;
		int end = c;
		while (end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, set))
			end++;
		at += (size_t)g_snprintf(buf + at, len - at, "%s%d", at ? "," : "", c);
		if (end > c)
			at += (size_t)g_snprintf(buf + at, len - at, "-%d", end);
		c = end;
	}
}

int mad_cpu_pin(int cpu, GError **err)
{
	if (cpu == MAD_CPU_OFF)
		return 0;
	cpu_set_t have;
	CPU_ZERO(&have);
	if (sched_getaffinity(0, sizeof(have), &have) < 0) {
		g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "mad_cpu %d: cannot read this process's CPUs: %s", cpu, g_strerror(errno));
		return -1;
	}
	if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &have)) {
		char list[256];
		cpus_text(&have, list, sizeof(list));
		g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_INVAL,
			    "mad_cpu %d: not a CPU this process may use (%s)", cpu, list);
		return -1;
	}
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one) < 0) {
		g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(errno), "mad_cpu %d: %s", cpu,
			    g_strerror(errno));
		return -1;
	}
	process_cpus = have;
	pinned = cpu;
	return 0;
}

int mad_cpu_pinned(void)
{
	return pinned;
}

struct start {
	GThreadFunc fn;
	gpointer data;
};

static gpointer unpinned_main(gpointer p)
{
	struct start s = *(struct start *)p;
	g_free(p);
	(void)sched_setaffinity(0, sizeof(process_cpus), &process_cpus);
	return s.fn(s.data);
}

GThread *mad_cpu_thread_new(const char *name, GThreadFunc fn, gpointer data)
{
	if (pinned == MAD_CPU_OFF)
		return g_thread_new(name, fn, data);
	struct start *s = g_new(struct start, 1);
	s->fn = fn;
	s->data = data;
	return g_thread_new(name, unpinned_main, s);
}
