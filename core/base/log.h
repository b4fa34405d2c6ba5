/* SPDX-License-Identifier: BSD-2-Clause */
/* log.h - the SM's log: timestamped lines with a level and a stable, greppable message code
 * (e.g. "LID-0003"), to a file or stderr; -V/-D raise verbosity, routing lines have a flag. */
#ifndef IBSM_LOG_H
#define IBSM_LOG_H

#include <stdarg.h>
#include <stdio.h>
#include <ibsm/routing.h> /* IBSM_LOG_* levels */

/* The log file at path, appended to ("-" or NULL: stderr only); created 0640 at most, never
 * through a symbolic link (-ELOOP). also_stderr: error lines are copied to stderr. 0 or
 * negative errno; on error the log is stderr. */
int log_open(const char *path, int also_stderr);
int log_open_erased(const char *path, int also_stderr); /* the same, emptied first (-e) */
void log_close(void);
int log_reopen(void); /* SIGUSR1: the same path again (a new file after rotation); 0 or -errno */
/* Why log_open/log_reopen failed, in words: "a symbolic link: refused (name the file itself)"
 * for -ELOOP, "a FIFO no process reads" for -ENXIO, strerror otherwise. */
const char *log_open_strerror(int rc);
void log_set_level(int level);
int log_level(void);
void log_set_quiet(int quiet); /* no copy to stderr */
void log_msg(int level, const char *code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Every message is escaped before it is written: bytes below 0x20 and from 0x7f up become
 * \xNN, so text from input files cannot split a line or reach a terminal raw. */
void log_vmsg(int level, const char *code, const char *fmt, va_list ap);
/* That escaping: in to out (size bytes, NUL included), cut at a whole character. */
void log_escape(const char *in, char *out, size_t size);

#define LOG_E(code, ...) log_msg(IBSM_LOG_ERROR, code, __VA_ARGS__)
#define LOG_I(code, ...) log_msg(IBSM_LOG_INFO, code, __VA_ARGS__)
#define LOG_V(code, ...) do { if (log_level() >= IBSM_LOG_VERBOSE) log_msg(IBSM_LOG_VERBOSE, code, __VA_ARGS__); } while (0)
#define LOG_D(code, ...) do { if (log_level() >= IBSM_LOG_DEBUG) log_msg(IBSM_LOG_DEBUG, code, __VA_ARGS__); } while (0)

#endif
