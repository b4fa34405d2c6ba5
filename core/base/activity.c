/* SPDX-License-Identifier: BSD-2-Clause */
/* activity.c - the activity report (base/activity.h): the subjects asked for as a bit mask, the
 * file opened when the first line comes and kept open, each line written whole with one
 * write() under a lock (the routing thread and the main thread both report). */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include "base/activity.h"
#include "base/log.h"

#define ACT_MAX 12

static const char *const names[ACT_MAX + 1] = {
	NULL, "mcm_member", "mcg_change", "prtn_guid_add", "prtn_create", "prtn_delete",
	"port_virt_discover", "vport_state_change", "mcg_tree_calc", "routing_succeed",
	"routing_failed", "ucast_cache_invalidated", "ucast_cache_routing_done",
};

#define BIT(a) (1u << (a))
static const struct { const char *name; unsigned mask; } subjects[] = {
	{ "mc", BIT(ACT_MCM_MEMBER) | BIT(ACT_MCG_CHANGE) | BIT(ACT_MCG_TREE_CALC) },
	{ "prtn", BIT(ACT_PRTN_GUID_ADD) | BIT(ACT_PRTN_CREATE) | BIT(ACT_PRTN_DELETE) },
	{ "virt", BIT(ACT_PORT_VIRT_DISCOVER) | BIT(ACT_VPORT_STATE_CHANGE) },
	{ "routing", BIT(ACT_MCG_TREE_CALC) | BIT(ACT_ROUTING_SUCCEED) | BIT(ACT_ROUTING_FAILED) |
		     BIT(ACT_UCAST_CACHE_INVALIDATED) | BIT(ACT_UCAST_CACHE_ROUTING_DONE) },
};

static pthread_mutex_t act_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned act_mask;        /* atomic: read without the lock by activity_on() */
static char *act_path;
static int act_fd = -1;
static int act_failed;           /* the file could not be opened: said once per path */

void activity_configure(const char *list, const char *dir)
{
	unsigned mask = 0;
	gchar **words = g_strsplit(list ? list : "", ",", -1);
	for (int i = 0; words[i]; i++) {
		char *w = g_strstrip(words[i]);
		if (!*w || !g_ascii_strcasecmp(w, "none"))
			continue;
		if (!g_ascii_strcasecmp(w, "all")) {
			mask = ~0u;
			continue;
		}
		size_t k = 0;
		while (k < G_N_ELEMENTS(subjects) && g_ascii_strcasecmp(w, subjects[k].name))
			k++;
		if (k < G_N_ELEMENTS(subjects))
			mask |= subjects[k].mask;
		else
			LOG_W("ACT-0001", "activity_report_subjects: '%s' is no subject (mc, prtn, virt, "
			      "routing, all, none): left out", w);
	}
	g_strfreev(words);
	gchar *path = mask && dir ? g_build_filename(dir, ACTIVITY_FILE, NULL) : NULL;
	pthread_mutex_lock(&act_lock);
	if (g_strcmp0(path, act_path)) {
		if (act_fd >= 0)
			close(act_fd);
		act_fd = -1;
		act_failed = 0;
		g_free(act_path);
		act_path = path;
		path = NULL;
	}
	__atomic_store_n(&act_mask, act_path ? mask : 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&act_lock);
	g_free(path);
}

int activity_on(enum activity a)
{
	return a >= 1 && a <= ACT_MAX && (__atomic_load_n(&act_mask, __ATOMIC_RELAXED) & BIT(a));
}

void activity_report(enum activity a, const char *fmt, ...)
{
	if (!activity_on(a))
		return;
	char fields[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(fields, sizeof(fields), fmt, ap);
	va_end(ap);
	struct timeval tv;
	gettimeofday(&tv, NULL);
	struct tm tm;
	localtime_r(&tv.tv_sec, &tm);
	char ts[32];
	strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", &tm);
	char line[640];
	int n = snprintf(line, sizeof(line), "%s.%06ld %d %s%s%s\n", ts, (long)tv.tv_usec, (int)a,
			 names[a], *fields ? " " : "", fields);
	if (n >= (int)sizeof(line)) {
		n = (int)sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	int e = 0;
	pthread_mutex_lock(&act_lock);
	if (act_fd < 0 && act_path && !act_failed) {
		act_fd = open(act_path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
		if (act_fd < 0) {
			e = errno;
			act_failed = 1;
		}
	}
	if (act_fd >= 0 && write(act_fd, line, (size_t)n) != n && !act_failed) {
		e = errno ? errno : ENOSPC;
		act_failed = 1; /* said once; lines go on being tried */
	}
	gchar *where = e ? g_strdup(act_path) : NULL;
	pthread_mutex_unlock(&act_lock);
	if (e)
		LOG_E("ACT-0002", "activity report %s: %s", where, strerror(e));
	g_free(where);
}

void activity_close(void)
{
	pthread_mutex_lock(&act_lock);
	if (act_fd >= 0)
		close(act_fd);
	act_fd = -1;
	g_free(act_path);
	act_path = NULL;
	__atomic_store_n(&act_mask, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&act_lock);
}
