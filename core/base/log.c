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
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include "base/log.h"

#define LOG_MSG_MAX 1024   /* bytes of one message before escaping */
#define LOG_FILE_MODE 0640 /* new log files: the group reads (logrotate: root adm), others nothing */

static FILE *log_fp;
static char *log_path;
static unsigned log_mask = 0x3;  /* OpenSM's default: errors and info */
static unsigned syslog_mask;
static char *syslog_ident;
static long long log_max_bytes;   /* 0: no limit */
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
	if (!path || !strcmp(path, "-") || !strcmp(path, "stderr"))
		return 0;
	if (!strcmp(path, "stdout")) { /* OpenSM's -f stdout */
		setvbuf(stdout, NULL, _IOLBF, 0);
		pthread_mutex_lock(&log_lock);
		log_fp = stdout;
		log_stderr_copy = 0;
		pthread_mutex_unlock(&log_lock);
		return 0;
	}
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
	if (log_fp && log_fp != stdout)
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

/* the dump thread logs while SIGHUP changes these: atomic flags, the size under the lock */
void log_set_flags(unsigned flags)
{
	__atomic_store_n(&log_mask, flags, __ATOMIC_RELAXED);
}

void log_set_level(int level)
{
	log_set_flags((2u << level) - 1);
}

void log_set_max_size(int mb)
{
	pthread_mutex_lock(&log_lock);
	log_max_bytes = (long long)mb << 20;
	pthread_mutex_unlock(&log_lock);
}

static unsigned level_bit(int level)
{
	return level == IBSM_LOG_WARN ? 0x1 : 1u << level;
}

int log_enabled(int level)
{
	/* a hint for skipping work (LOG_V/LOG_D); log_vmsg decides under the lock */
	return ((__atomic_load_n(&log_mask, __ATOMIC_RELAXED) | __atomic_load_n(&syslog_mask, __ATOMIC_RELAXED)) &
		level_bit(level)) != 0;
}

void log_set_syslog(unsigned flags, const char *ident)
{
	const char *want = ident && *ident ? ident : "ibsm";
	pthread_mutex_lock(&log_lock);
	if (flags && (!syslog_mask || g_strcmp0(syslog_ident, want))) {
		/* openlog keeps the pointer and another thread may be in syslog() with it: an
		 * identity once given is kept for the life of the process (one per SIGHUP change) */
		static GPtrArray *idents;
		if (!idents)
			idents = g_ptr_array_new();
		syslog_ident = g_strdup(want);
		g_ptr_array_add(idents, syslog_ident);
		openlog(syslog_ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	}
	__atomic_store_n(&syslog_mask, flags, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&log_lock);
}

/* A line of LEN bytes would take the file past the size limit: it starts again, with a line
 * saying so, before the line is written (OpenSM's -L truncates, too). Under the lock. */
static void make_room(size_t len, const char *ts)
{
	struct stat st;
	if (!log_max_bytes || !log_fp || log_fp == stdout || fstat(fileno(log_fp), &st) < 0 ||
	    st.st_size + (long long)len <= log_max_bytes)
		return;
	fflush(log_fp);
	if (ftruncate(fileno(log_fp), 0) == 0)
		fprintf(log_fp, "%s WARN %s log file emptied: it reached log_max_size, %lld MB\n", ts, "LOG-0001",
			log_max_bytes >> 20);
}

static int syslog_priority(int level)
{
	switch (level) {
	case IBSM_LOG_ERROR: return LOG_ERR;
	case IBSM_LOG_WARN: return LOG_WARNING;
	case IBSM_LOG_INFO: return LOG_INFO;
	default: return LOG_DEBUG;
	}
}
void log_set_quiet(int quiet) { log_quiet = quiet; }

static const char *level_name(int level)
{
	switch (level) {
	case IBSM_LOG_ERROR: return "ERR ";
	case IBSM_LOG_WARN: return "WARN";
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
	unsigned bit = level_bit(level);
	if (!log_enabled(level))
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
	if (__atomic_load_n(&log_mask, __ATOMIC_RELAXED) & bit) {
		if (log_fp) {
			make_room(strlen(ts) + strlen(code) + strlen(msg) + 8, ts);
			fprintf(log_fp, "%s %s %s %s\n", ts, level_name(level), code, msg);
		}
		if ((!log_fp || (log_stderr_copy && level == IBSM_LOG_ERROR)) && !log_quiet)
			fprintf(stderr, "%s %s %s %s\n", ts, level_name(level), code, msg);
	}
	int to_syslog = (__atomic_load_n(&syslog_mask, __ATOMIC_RELAXED) & bit) != 0;
	pthread_mutex_unlock(&log_lock);
	/* outside the lock: a slow syslog socket must not stall the other threads' file lines */
	if (to_syslog)
		syslog(syslog_priority(level), "%s %s %s", level_name(level), code, msg);
}

void log_msg(int level, const char *code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_vmsg(level, code, fmt, ap);
	va_end(ap);
}
