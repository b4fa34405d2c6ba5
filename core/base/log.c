/* SPDX-License-Identifier: BSD-2-Clause */
/* log.c - the SM's log file: one line per event with time, level and a stable code, so
 * administrators can grep and alert on codes; SIGUSR1 re-opens it for log rotation. Text from
 * input files (guid2lid, policies, NodeDescriptions) is escaped so a line stays one printable
 * line; the file is a regular file with one name, never reached through a symbolic link; a
 * line the file does not take (a full disk) is counted and said on stderr and syslog, never
 * silently lost and never in a loop. State changes (log_sys: OpenSM's OSM_LOG_SYS lines) reach
 * syslog by default; ibsm sends syslog datagrams itself, never waiting on the socket. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include "base/log.h"

#define LOG_MSG_MAX 1024   /* bytes of one message before escaping */
#define LOG_FILE_MODE 0640 /* new log files: the group reads (logrotate: root adm), others nothing */
#define LOG_FAIL_REPORT_S 60 /* a failing log file is reported again at most this often */

static int log_fd = -1;           /* the log file, STDOUT_FILENO for "stdout", -1: stderr only */
static char *log_path;
static unsigned log_mask = 0x3;  /* OpenSM's default: errors and info */
static unsigned syslog_mask;
static char *syslog_ident;
static long long log_max_bytes;   /* 0: no limit */
static int log_quiet;
static int log_stderr_copy = 1;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

/* syslog: ibsm's own client of the syslog socket (RFC 3164 datagrams, as syslog(3) sends
 * them), never blocking: a datagram the socket does not take at once is counted and dropped.
 * Its own lock, so a line to syslog never holds up the file's. */
#define SYSLOG_DEFAULT_SOCKET "/dev/log"
static pthread_mutex_t syslog_lock = PTHREAD_MUTEX_INITIALIZER;
static int syslog_fd = -1;
static char *syslog_path;             /* NULL: SYSLOG_DEFAULT_SOCKET */
static int syslog_sys_on = 1;         /* state changes (log_sys) reach syslog */
static unsigned long long syslog_sent_n, syslog_dropped_n;

/* Lines the log file did not take (ENOSPC, EIO, ...): counted, said on stderr and syslog at
 * the first and then at most every LOG_FAIL_REPORT_S, and written into the log as soon as it
 * takes lines again. Under log_lock. */
static struct {
	unsigned long long total;     /* since start: log_write_failures() */
	unsigned long long lost;      /* in the current run of failures */
	int last_errno;
	gint64 first_us, reported_us; /* wall clock of the run's first failure; monotonic report */
} log_fail;

/* Why a log file of this (non-regular) type is refused. */
static int refuse_mode(mode_t mode)
{
	if (S_ISFIFO(mode))
		return -ENXIO;
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return -ENODEV;
	if (S_ISDIR(mode))
		return -EISDIR;
	return -EINVAL;
}

static int check_log_stat(const struct stat *st)
{
	if (S_ISLNK(st->st_mode))
		return -ELOOP;
	if (!S_ISREG(st->st_mode))
		return refuse_mode(st->st_mode);
	if (st->st_nlink > 1)
		return -EMLINK;
	return 0;
}

/* The log file at path for appending (and emptied first with erase), created 0640 at most. It
 * must be a regular file with one name: never a symbolic link (-ELOOP), a FIFO (-ENXIO, not
 * even opened: a FIFO nobody reads would block), a device (-ENODEV), a directory (-EISDIR),
 * anything else not regular (-EINVAL), or a file with other hard links (-EMLINK: writing it,
 * or -e emptying it, would change the file behind the other names). Never waits. The fd, or
 * -1 with *err. */
static int log_file_open(const char *path, int erase, int *err)
{
	struct stat st;
	/* what is there already is judged before it is opened: opening a device may act on it */
	if (lstat(path, &st) == 0 && (*err = check_log_stat(&st)) < 0)
		return -1;
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK |
			    O_NOCTTY, LOG_FILE_MODE);
	if (fd < 0) {
		*err = -errno;
		return -1;
	}
	*err = fstat(fd, &st) < 0 ? -errno : check_log_stat(&st); /* what was opened */
	if (*err == 0 && erase && ftruncate(fd, 0) < 0) /* -e: only now, once it is known safe */
		*err = -errno;
	int fl = *err ? 0 : fcntl(fd, F_GETFL);
	if (*err == 0 && (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0))
		*err = -errno;
	if (*err < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

const char *log_open_strerror(int rc)
{
	switch (rc) {
	case -ELOOP: return "a symbolic link: refused (name the file itself)";
	case -ENXIO: return "a FIFO, not a regular file: refused";
	case -ENODEV: return "a device, not a regular file: refused";
	case -EISDIR: return "a directory, not a regular file: refused";
	case -EINVAL: return "not a regular file: refused";
	case -EMLINK: return "a file with more than one hard link: refused (writing it would change "
			     "the file behind its other names)";
	default: return strerror(-rc);
	}
}

static void close_fd_locked(void)
{
	if (log_fd >= 0 && log_fd != STDOUT_FILENO)
		close(log_fd);
	log_fd = -1;
}

static int log_open_mode(const char *path, int also_stderr, int erase)
{
	log_close();
	log_stderr_copy = also_stderr;
	if (!path || !strcmp(path, "-") || !strcmp(path, "stderr"))
		return 0;
	if (!strcmp(path, "stdout")) { /* OpenSM's -f stdout */
		setvbuf(stdout, NULL, _IOLBF, 0); /* what else prints there keeps its order */
		pthread_mutex_lock(&log_lock);
		log_fd = STDOUT_FILENO;
		log_stderr_copy = 0;
		pthread_mutex_unlock(&log_lock);
		return 0;
	}
	int err = 0;
	int fd = log_file_open(path, erase, &err);
	if (fd < 0)
		return err;
	pthread_mutex_lock(&log_lock);
	log_fd = fd;
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
	close_fd_locked();
	g_free(log_path);
	log_path = NULL;
	log_fail.lost = 0; /* a run of failures ends with its file; the total stays */
	log_fail.last_errno = 0;
	log_fail.first_us = 0;
	log_fail.reported_us = 0;
	pthread_mutex_unlock(&log_lock);
}

int log_reopen(void)
{
	int rc = 0;
	pthread_mutex_lock(&log_lock);
	if (log_path) {
		int fd = log_file_open(log_path, 0, &rc);
		if (fd >= 0) {
			close_fd_locked();
			log_fd = fd;
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
	pthread_mutex_lock(&syslog_lock);
	if (g_strcmp0(syslog_ident, want)) {
		/* another thread may be formatting with the old one: an identity once given is
		 * kept for the life of the process (one per SIGHUP change) */
		static GPtrArray *idents;
		if (!idents)
			idents = g_ptr_array_new();
		syslog_ident = g_strdup(want);
		g_ptr_array_add(idents, syslog_ident);
	}
	pthread_mutex_unlock(&syslog_lock);
	__atomic_store_n(&syslog_mask, flags, __ATOMIC_RELAXED);
}

void log_set_syslog_target(int sys_lines, const char *socket_path)
{
	pthread_mutex_lock(&syslog_lock);
	syslog_sys_on = sys_lines;
	const char *want = socket_path && *socket_path ? socket_path : NULL;
	if (g_strcmp0(syslog_path, want)) {
		g_free(syslog_path);
		syslog_path = g_strdup(want);
		if (syslog_fd >= 0)
			close(syslog_fd);
		syslog_fd = -1; /* connected again at the next line */
	}
	pthread_mutex_unlock(&syslog_lock);
}

void log_syslog_counts(unsigned long long *sent, unsigned long long *dropped)
{
	pthread_mutex_lock(&syslog_lock);
	*sent = syslog_sent_n;
	*dropped = syslog_dropped_n;
	pthread_mutex_unlock(&syslog_lock);
}

/* The syslog socket, connected (under syslog_lock): 0 or -errno. */
static int syslog_connect_locked(void)
{
	const char *path = syslog_path ? syslog_path : SYSLOG_DEFAULT_SOCKET;
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	strcpy(addr.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	syslog_fd = fd;
	return 0;
}

/* One datagram "<PRI>Mmm dd hh:mm:ss IDENT[PID]: TEXT" (facility daemon) to the syslog
 * socket; reconnects once when the receiver went away (syslogd or journald restarted). */
static void syslog_send(int priority, const char *text)
{
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	char ts[32];
	strftime(ts, sizeof(ts), "%b %e %H:%M:%S", &tm);
	pthread_mutex_lock(&syslog_lock);
	char buf[1200];
	int n = snprintf(buf, sizeof(buf), "<%d>%s %s[%d]: %s", LOG_DAEMON | priority, ts,
			 syslog_ident ? syslog_ident : "ibsm", (int)getpid(), text);
	size_t len = (size_t)MIN(n, (int)sizeof(buf) - 1);
	int ok = 0;
	for (int attempt = 0; attempt < 2 && !ok; attempt++) {
		if (syslog_fd < 0 && syslog_connect_locked() < 0)
			break;
		if (send(syslog_fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0) {
			ok = 1;
		} else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
			break; /* full: dropped, never waited for */
		} else {
			close(syslog_fd);
			syslog_fd = -1;
		}
	}
	if (ok)
		syslog_sent_n++;
	else
		syslog_dropped_n++;
	pthread_mutex_unlock(&syslog_lock);
}

/* Writes all of buf to fd: 0, or the errno of the write that failed (a short write is
 * ENOSPC: nothing more fits). */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		if (n == 0)
			return ENOSPC;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* A line of LEN bytes would take the file past the size limit: it starts again, with a line
 * saying so, before the line is written (OpenSM's -L truncates, too). Under the lock. */
static void make_room(size_t len, const char *ts)
{
	struct stat st;
	if (!log_max_bytes || log_fd < 0 || log_fd == STDOUT_FILENO || fstat(log_fd, &st) < 0 ||
	    st.st_size + (long long)len <= log_max_bytes)
		return;
	if (ftruncate(log_fd, 0) == 0) {
		char line[160];
		int n = snprintf(line, sizeof(line), "%s WARN %s log file emptied: it reached "
				 "log_max_size, %lld MB\n", ts, "LOG-0001", log_max_bytes >> 20);
		(void)write_all(log_fd, line, (size_t)n);
	}
}

/* The log file refused a line with error e: counted; *report gets the words for stderr and
 * syslog at the first failure of a run and then at most every LOG_FAIL_REPORT_S (else ""). */
static void note_write_failure(int e, char *report, size_t report_len)
{
	gint64 now = g_get_monotonic_time();
	report[0] = '\0';
	log_fail.total++;
	if (!log_fail.lost++)
		log_fail.first_us = g_get_real_time();
	else if (now - log_fail.reported_us < (gint64)LOG_FAIL_REPORT_S * G_USEC_PER_SEC &&
		 e == log_fail.last_errno)
		return;
	log_fail.last_errno = e;
	log_fail.reported_us = now;
	snprintf(report, report_len, "%s cannot write the log file %s: %s; %llu line%s lost so far "
		 "(said again at most every %d s while it lasts)", "LOG-0002",
		 log_path ? log_path : "(standard output)",
		 strerror(e), log_fail.lost, log_fail.lost == 1 ? "" : "s", LOG_FAIL_REPORT_S);
}

/* After a run of failures, the line that says what was lost goes first: 0 when the file took
 * it (the run is over), else the errno (the run goes on). */
static int write_recovered(const char *ts)
{
	char since[40] = "";
	time_t t = (time_t)(log_fail.first_us / G_USEC_PER_SEC);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(since, sizeof(since), "%Y-%m-%d %H:%M:%S", &tm);
	char line[400];
	int n = snprintf(line, sizeof(line), "%s WARN %s the log file takes lines again: %llu "
			 "line%s lost since %s (%s)\n", ts, "LOG-0003", log_fail.lost,
			 log_fail.lost == 1 ? "" : "s", since, strerror(log_fail.last_errno));
	int e = write_all(log_fd, line, (size_t)MIN(n, (int)sizeof(line) - 1));
	if (e == 0)
		log_fail.lost = 0;
	return e;
}

/* One line into the log file, under the lock; a failure is noted (and report filled). */
static void write_line_locked(const char *line, size_t len, const char *ts, char *report,
			      size_t report_len)
{
	make_room(len + (log_fail.lost ? 400 : 0), ts);
	int e = log_fail.lost ? write_recovered(ts) : 0;
	if (e == 0)
		e = write_all(log_fd, line, len);
	if (e)
		note_write_failure(e, report, report_len);
}

unsigned long long log_write_failures(void)
{
	pthread_mutex_lock(&log_lock);
	unsigned long long n = log_fail.total;
	pthread_mutex_unlock(&log_lock);
	return n;
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

int log_reaches_stderr(int level)
{
	if (!log_enabled(level))
		return 0;
	pthread_mutex_lock(&log_lock);
	int fd = log_fd, quiet = log_quiet;
	pthread_mutex_unlock(&log_lock);
	if (fd < 0)
		return !quiet;
	if (fd != STDOUT_FILENO)
		return 0;
	struct stat out, err;
	if (fstat(STDOUT_FILENO, &out) < 0 || fstat(STDERR_FILENO, &err) < 0)
		return 0;
	return out.st_dev == err.st_dev && out.st_ino == err.st_ino;
}

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

/* sys: a state change (log_sys): in the log file whatever the flags, as OpenSM's OSM_LOG_SYS
 * lines, and to syslog unless log_set_syslog_target() turned that off. */
static void log_vmsg_mode(int level, int sys, const char *code, const char *fmt, va_list ap)
{
	unsigned bit = level_bit(level);
	if (!sys && !log_enabled(level))
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
	char line[sizeof(msg) + 128];
	int len = snprintf(line, sizeof(line), "%s %s %s %s\n", ts, level_name(level), code, msg);
	if (len >= (int)sizeof(line)) { /* a code too long to be one: the line still ends */
		len = (int)sizeof(line) - 1;
		line[len - 1] = '\n';
	}
	char report[512] = "";
	pthread_mutex_lock(&log_lock);
	if (sys || (__atomic_load_n(&log_mask, __ATOMIC_RELAXED) & bit)) {
		if (log_fd >= 0)
			write_line_locked(line, (size_t)len, ts, report, sizeof(report));
		if ((log_fd < 0 || (log_stderr_copy && level == IBSM_LOG_ERROR)) && !log_quiet)
			fputs(line, stderr);
	}
	int to_syslog = (__atomic_load_n(&syslog_mask, __ATOMIC_RELAXED) & bit) != 0;
	int quiet = log_quiet;
	pthread_mutex_unlock(&log_lock);
	if (sys && !to_syslog) {
		pthread_mutex_lock(&syslog_lock);
		to_syslog = syslog_sys_on;
		pthread_mutex_unlock(&syslog_lock);
	}
	/* outside the lock: a slow syslog socket must not stall the other threads' file lines */
	if (to_syslog) {
		char text[sizeof(msg) + 64];
		snprintf(text, sizeof(text), "%s %s %s", level_name(level), code, msg);
		syslog_send(syslog_priority(level), text);
	}
	if (report[0]) { /* the log file failed: said where it can be seen, never through the log */
		if (!quiet)
			fprintf(stderr, "%s ERR  %s\n", ts, report);
		char text[600];
		snprintf(text, sizeof(text), "ERR  %s", report);
		syslog_send(LOG_ERR, text);
	}
}

void log_vmsg(int level, const char *code, const char *fmt, va_list ap)
{
	log_vmsg_mode(level, 0, code, fmt, ap);
}

void log_sys(int level, const char *code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_vmsg_mode(level, 1, code, fmt, ap);
	va_end(ap);
}

void log_msg(int level, const char *code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_vmsg(level, code, fmt, ap);
	va_end(ap);
}
