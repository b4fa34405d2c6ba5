/* SPDX-License-Identifier: BSD-2-Clause */
/* test_mad_cpu.c - mad_cpu (base/mad_cpu.h): the pinned thread on its one CPU, a thread started
 * by mad_cpu_thread_new() back on every CPU the process had, a CPU the process may not use
 * refused with the list it may, and nothing changed when the key is off. */
#include <sched.h>
#include <string.h>
#include <glib.h>
#include "base/mad_cpu.h"

static cpu_set_t start_cpus;

static int first_cpu(const cpu_set_t *set)
{
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, set))
			return c;
	return -1;
}

static gpointer report_cpus(gpointer out)
{
	CPU_ZERO((cpu_set_t *)out);
	g_assert_cmpint(sched_getaffinity(0, sizeof(cpu_set_t), out), ==, 0);
	return NULL;
}

/* Runs first: off is nothing (no pin, threads as g_thread_new's). */
static void test_off(void)
{
	GError *err = NULL;
	g_assert_cmpint(mad_cpu_pin(MAD_CPU_OFF, &err), ==, 0);
	g_assert_no_error(err);
	g_assert_cmpint(mad_cpu_pinned(), ==, MAD_CPU_OFF);
	cpu_set_t seen;
	g_thread_join(mad_cpu_thread_new("t-off", report_cpus, &seen));
	g_assert_true(CPU_EQUAL(&seen, &start_cpus));
}

static void test_refused(void)
{
	GError *err = NULL;
	/* a CPU outside the mask: past the last one this machine has, or 1023 */
	int outside = -1;
	for (int c = CPU_SETSIZE - 1; c >= 0 && outside < 0; c--)
		if (!CPU_ISSET(c, &start_cpus))
			outside = c;
	g_assert_cmpint(outside, >=, 0);
	g_assert_cmpint(mad_cpu_pin(outside, &err), ==, -1);
	g_assert_nonnull(err);
	char *want = g_strdup_printf("mad_cpu %d: not a CPU this process may use (", outside);
	g_assert_true(g_str_has_prefix(err->message, want));
	g_free(want);
	/* the list names the first CPU the process may use */
	char *first = g_strdup_printf("(%d", first_cpu(&start_cpus));
	g_assert_nonnull(strstr(err->message, first));
	g_free(first);
	g_clear_error(&err);
	g_assert_cmpint(mad_cpu_pinned(), ==, MAD_CPU_OFF);
	cpu_set_t now;
	report_cpus(&now);
	g_assert_true(CPU_EQUAL(&now, &start_cpus)); /* a refused pin changes nothing */
}

static void test_pinned(void)
{
	GError *err = NULL;
	/* the last CPU of the mask: not the one a default would pick */
	int cpu = -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &start_cpus))
			cpu = c;
	g_assert_cmpint(mad_cpu_pin(cpu, &err), ==, 0);
	g_assert_no_error(err);
	g_assert_cmpint(mad_cpu_pinned(), ==, cpu);
	cpu_set_t now, one;
	report_cpus(&now);
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	g_assert_true(CPU_EQUAL(&now, &one));
	/* a thread that computes: every CPU of the process; a plain one inherits the pin */
	cpu_set_t seen;
	g_thread_join(mad_cpu_thread_new("t-compute", report_cpus, &seen));
	g_assert_true(CPU_EQUAL(&seen, &start_cpus));
	g_thread_join(g_thread_new("t-plain", report_cpus, &seen));
	g_assert_true(CPU_EQUAL(&seen, &one));
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	CPU_ZERO(&start_cpus);
	g_assert_cmpint(sched_getaffinity(0, sizeof(start_cpus), &start_cpus), ==, 0);
	g_test_add_func("/mad_cpu/off", test_off);
	g_test_add_func("/mad_cpu/refused", test_refused);
	g_test_add_func("/mad_cpu/pinned", test_pinned); /* last: the process stays pinned */
	return g_test_run();
}
