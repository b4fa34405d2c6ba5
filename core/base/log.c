/* SPDX-License-Identifier: BSD-2-Clause */
/* log.c - the SM's log file: one line per event with time, level and a stable code, so
 * administrators can grep and alert on codes; SIGUSR1 re-opens it for log rotation. Text from
 * input files (guid2lid, policies, NodeDescriptions) is escaped so a line stays one printable
 * line, and the file is never reached through a symbolic link. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include "base/log.h"

#define LOG_MSG_MAX 1024   /* bytes of one message before escaping */
#define LOG_FILE_MODE 0640 /* new log files: the group reads (logrotate: root adm), others nothing */

static FILE *log_fp;
static char *log_path;
static int log_lvl = IBSM_LOG_INFO;
static int log_quiet;
static int log_stderr_copy = 1;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

/* The log file at path for appending (and emptied first with erase), created 0640 at most;
 * never through a symbolic link (O_NOFOLLOW: -ELOOP), and never waiting: a FIFO nobody reads
 * is -ENXIO at once instead of a start (or SIGUSR1) that hangs. Writes then block as usual. */
static FILE *log_file_open(const char *path, int erase, int *err)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK |
			    (erase ? O_TRUNC : 0), LOG_FILE_MODE);
	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		*err = -errno;
		close(fd);
		return NULL;
	}
	FILE *fp = fdopen(fd, "a");
	if (!fp) {
		*err = -errno;
		close(fd);
		return NULL;
	}
	setvbuf(fp, NULL, _IOLBF, 0);
	return fp;
}

const char *log_open_strerror(int rc)
{
	if (rc == -ELOOP)
		return "a symbolic link: refused (name the file itself)";
	if (rc == -ENXIO)
		return "a FIFO no process reads: refused";
	return strerror(-rc);
}

static int log_open_mode(const char *path, int also_stderr, int erase)
{
	log_close();
	log_stderr_copy = also_stderr;
	if (!path || !strcmp(path, "-"))
		return 0;
	int err = 0;
	FILE *fp = log_file_open(path, erase, &err);
	if (!fp)
		return err;
	pthread_mutex_lock(&log_lock);
	log_fp = fp;
	log_path = g_strdup(path);
	pthread_mutex_unlock(&log_lock);
	return 0;
}

int log_open(const char *path, int also_stderr)
{
	return log_open_mode(path, also_stderr, 0);
}

int log_open_erased(const char *path, int also_stderr)
{
	return log_open_mode(path, also_stderr, 1);
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
		FILE *fp = log_file_open(log_path, 0, &rc);
		if (fp) {
			if (log_fp)
				fclose(log_fp);
			log_fp = fp;
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

void log_escape(const char *in, char *out, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;
	if (!size)
		return;
	for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
		if (*p >= 0x20 && *p < 0x7f) {
			if (n + 1 >= size)
				break;
			out[n++] = (char)*p;
		} else {
			if (n + 4 >= size)
				break; /* whole escapes only */
			out[n++] = '\\';
			out[n++] = 'x';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 15];
		}
	}
	out[n] = '\0';
}

void log_vmsg(int level, const char *code, const char *fmt, va_list ap)
{
	if (level > log_lvl)
		return;
	char raw[LOG_MSG_MAX];
	vsnprintf(raw, sizeof(raw), fmt, ap);
	char msg[4 * LOG_MSG_MAX];
	log_escape(raw, msg, sizeof(msg));
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
