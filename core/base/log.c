/* SPDX-License-Identifier: BSD-2-Clause */
/* log.c - the SM's log file: one line per event with time, level and a stable code, so
 * administrators can grep and alert on codes; SIGUSR1 re-opens it for log rotation. */
#include <errno.h>
#include <glib.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include "base/log.h"

static FILE *log_fp;
static char *log_path;
static int log_lvl = IBSM_LOG_INFO;
static int log_quiet;
static int log_stderr_copy = 1;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

int log_open(const char *path, int also_stderr)
{
	log_close();
	log_stderr_copy = also_stderr;
	if (!path || !strcmp(path, "-"))
		return 0;
	FILE *fp = fopen(path, "a");
	if (!fp)
		return -errno;
	setvbuf(fp, NULL, _IOLBF, 0);
	log_fp = fp;
	log_path = g_strdup(path);
	return 0;
}

void log_close(void)
{
	pthread_mutex_lock(&log_lock);
	if (log_fp)
		fclose(log_fp);
	log_fp = NULL;
	g_free(log_path);
	log_path = NULL;
	pthread_mutex_unlock(&log_lock);
}

int log_reopen(void)
{
	int rc = 0;
	pthread_mutex_lock(&log_lock);
	if (log_path) {
		FILE *fp = fopen(log_path, "a");
		if (fp) {
			setvbuf(fp, NULL, _IOLBF, 0);
			if (log_fp)
				fclose(log_fp);
			log_fp = fp;
		} else {
			rc = -errno;
		}
	}
	pthread_mutex_unlock(&log_lock);
	return rc;
}

void log_set_level(int level) { log_lvl = level; }
int log_level(void) { return log_lvl; }
void log_set_quiet(int quiet) { log_quiet = quiet; }

static const char *level_name(int level)
{
	switch (level) {
	case IBSM_LOG_ERROR: return "ERR ";
	case IBSM_LOG_INFO: return "INFO";
	case IBSM_LOG_VERBOSE: return "VERB";
	default: return "DBG ";
	}
}

void log_vmsg(int level, const char *code, const char *fmt, va_list ap)
{
	if (level > log_lvl)
		return;
	char msg[1024];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	struct timeval tv;
	gettimeofday(&tv, NULL);
	struct tm tm;
	localtime_r(&tv.tv_sec, &tm);
	char ts[40];
	size_t n = strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(ts + n, sizeof(ts) - n, ".%06ld", (long)tv.tv_usec);
	pthread_mutex_lock(&log_lock);
	if (log_fp)
		fprintf(log_fp, "%s %s %s %s\n", ts, level_name(level), code, msg);
	if ((!log_fp || (log_stderr_copy && level == IBSM_LOG_ERROR)) && !log_quiet)
		fprintf(stderr, "%s %s %s %s\n", ts, level_name(level), code, msg);
	pthread_mutex_unlock(&log_lock);
}

void log_msg(int level, const char *code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_vmsg(level, code, fmt, ap);
	va_end(ap);
}
