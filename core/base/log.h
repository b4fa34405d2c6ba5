/* SPDX-License-Identifier: BSD-2-Clause */
/* log.h - the SM's log: timestamped lines with a level and a stable, greppable message code
 * (e.g. "LID-0003"), to a file, stdout or stderr, and syslog (state changes by default, more
 * with syslog_log_level); OpenSM's log flags (-D) choose the levels. */
#ifndef IBSM_LOG_H
#define IBSM_LOG_H

#include <stdarg.h>
#include <stdio.h>
#include <ibsm/routing.h> /* IBSM_LOG_* levels */

/* A level of the core's own beyond the engines' IBSM_LOG_*: shown with the error flag (0x1). */
#define IBSM_LOG_WARN 4

/* The log file at path, appended to ("-" or NULL: stderr only, "stdout": standard output);
 * created 0640 at most. It must be a regular file with one name: a symbolic link (-ELOOP), a
 * FIFO (-ENXIO), a device (-ENODEV), a directory (-EISDIR), another kind (-EINVAL) or a file
 * with more than one hard link (-EMLINK) is refused, and not emptied by -e. also_stderr:
 * error lines are copied to stderr. 0 or negative errno; on error the log is stderr. */
int log_open(const char *path, int also_stderr);
int log_open_erased(const char *path, int also_stderr); /* the same, emptied first (-e) */
void log_close(void);
int log_reopen(void); /* SIGUSR1: the same path again (a new file after rotation); 0 or -errno */
/* Why log_open/log_reopen failed, in words: "a symbolic link: refused (name the file itself)"
 * for -ELOOP, "a FIFO, not a regular file: refused" for -ENXIO, the same for the other
 * refusals above, strerror otherwise. */
const char *log_open_strerror(int rc);
/* Lines the log file did not take since start (a write failed: ENOSPC, EIO, ...). Each run of
 * failures is said on stderr and syslog (LOG-0002) at once and then at most once a minute,
 * and in the log (LOG-0003, with the count lost) when it takes lines again. */
unsigned long long log_write_failures(void);
/* OpenSM's log flags: 0x1 errors and warnings, 0x2 info, 0x4 verbose, 0x8 debug; 0: nothing */
void log_set_flags(unsigned flags);
void log_set_level(int level); /* every level up to LEVEL */
int log_enabled(int level);
/* Lines whose level is in FLAGS also go to syslog (facility daemon) as IDENT (NULL: "ibsm");
 * FLAGS 0: none. */
void log_set_syslog(unsigned flags, const char *ident);
/* Where syslog lines go: the unix datagram socket at SOCKET_PATH (NULL: /dev/log), sent
 * without ever waiting (a full socket drops the line, counted); SYS_LINES: state changes
 * (log_sys) reach syslog whatever the flags (OpenSM's default; 0: only the flags' lines). */
void log_set_syslog_target(int sys_lines, const char *socket_path);
void log_syslog_counts(unsigned long long *sent, unsigned long long *dropped);
/* A state change operators look for (MASTER, STANDBY, NOTACTIVE, SUBNET UP, handovers, fatal
 * errors: OpenSM's OSM_LOG_SYS lines): in the log whatever the flags, and to syslog. */
void log_sys(int level, const char *code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The log file is emptied when a line would take it past MB megabytes (0: no limit). */
void log_set_max_size(int mb);
void log_set_quiet(int quiet); /* no copy to stderr */
/* Lines of LEVEL are written where stderr goes: the log is stderr ("-", "stderr"), or "stdout"
 * while stdout and stderr are the same open file (one terminal, one pipe); 0 when LEVEL is not
 * logged. --progress leaves out what the log shows there already. */
int log_reaches_stderr(int level);
void log_msg(int level, const char *code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Every message is escaped before it is written: bytes below 0x20 and from 0x7f up become
 * \xNN, so text from input files cannot split a line or reach a terminal raw. */
void log_vmsg(int level, const char *code, const char *fmt, va_list ap);
/* That escaping: in to out (size bytes, NUL included), cut at a whole character. */
void log_escape(const char *in, char *out, size_t size);

#define LOG_E(code, ...) log_msg(IBSM_LOG_ERROR, code, __VA_ARGS__)
#define LOG_I(code, ...) log_msg(IBSM_LOG_INFO, code, __VA_ARGS__)
#define LOG_W(code, ...) log_msg(IBSM_LOG_WARN, code, __VA_ARGS__)
#define LOG_V(code, ...) do { if (log_enabled(IBSM_LOG_VERBOSE)) log_msg(IBSM_LOG_VERBOSE, code, __VA_ARGS__); } while (0)
#define LOG_SYS(code, ...) log_sys(IBSM_LOG_INFO, code, __VA_ARGS__)
#define LOG_SYS_E(code, ...) log_sys(IBSM_LOG_ERROR, code, __VA_ARGS__)
#define LOG_D(code, ...) do { if (log_enabled(IBSM_LOG_DEBUG)) log_msg(IBSM_LOG_DEBUG, code, __VA_ARGS__); } while (0)

#endif
