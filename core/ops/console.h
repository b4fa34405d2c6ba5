/* SPDX-License-Identifier: BSD-2-Clause */
/* console.h - the operator's console (OpenSM's `console` setting: a unix socket by default,
 * loopback TCP, or the terminal): a registry of commands, each answering one line of words
 * with text lines and, side by side, one JSON object (ibsm-cli --json). Modules above the SM
 * (perfmgr, report) add their commands through console_command_add(). */
#ifndef IBSM_OPS_CONSOLE_H
#define IBSM_OPS_CONSOLE_H

#include <glib.h>
#include <stdint.h>
#include "sm/sm.h"

/* A reply being built: text lines and a JSON object's members. */
struct console_reply;

/* A command: argv[0] is the command's name; returns 0 ok, < 0 error (the text says why; the
 * client's exit status is 1). Runs on the main thread from the event loop's tick (sm/loop.h):
 * it must not block nor sweep (ask with loop_request()); bounded work, like an SA answer. */
typedef int (*console_fn)(struct sm *sm, int argc, char **argv, struct console_reply *r);

/* Adds (or replaces) a command. name: one word; usage: its arguments ("[heavy|light]", may be
 * ""); help: one line. The strings are kept as given (use literals). */
void console_command_add(const char *name, const char *usage, const char *help, console_fn fn);

/* The i-th command added (for `help`): 0, or -1 past the end. */
int console_command_at(guint i, const char **name, const char **usage, const char **help);

/* One text line (no newline needed; embedded newlines make several lines). */
void console_printf(struct console_reply *r, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* JSON members of the reply's object, in order; keys are plain words. A string is escaped;
 * raw is inserted as given (an array or object the caller built: must be valid JSON). */
void console_json_str(struct console_reply *r, const char *key, const char *val);
void console_json_int(struct console_reply *r, const char *key, int64_t val);
void console_json_double(struct console_reply *r, const char *key, double val);
void console_json_bool(struct console_reply *r, const char *key, int val);
void console_json_raw(struct console_reply *r, const char *key, const char *json);
/* Appends val to g as a JSON string (quoted, escaped): for building arrays for _raw. */
void console_json_escape(GString *g, const char *val);

/* Runs one command line against the registry, as a client's line is run: the reply's text
 * (lines ending in '\n') or, json, its JSON object (one line). Returns the command's status
 * (0, < 0; -ENOENT: no such command, -EINVAL: not a command line). For tests and the server. */
int console_execute(struct sm *sm, const char *line, int json, GString *out);

/* Splits a command line into words (blanks separate; "double quotes" keep blanks; \ escapes
 * inside quotes). Returns a NULL-terminated vector (g_strfreev) or NULL with *why set (an
 * unclosed quote, a control byte, not UTF-8). */
char **console_split(const char *line, const char **why);

/* The built-in commands (help, status, ...) and those of the modules (below); idempotent. */
void console_register_all(void);

/* Modules' registration functions: each module that adds commands defines one in its
 * core/ops/console_<name>.c; console_register_all() calls those whose file exists (it tests
 * with __has_include: touch core/ops/console_modules.c after creating yours, or make clean). */
void console_builtin_register(void);   /* console_cmds.c */
void console_perfmgr_register(void);   /* console_perfmgr.c: perfmgr ... */
void console_report_register(void);    /* console_report.c: report ... */

/* The server: opens what sm->opt's console settings ask for (console off|local|loopback|
 * socket, console_port, console_socket) and serves it from the event loop's tick (version:
 * what `version` answers). Never fatal: a console that cannot start is logged and the SM goes
 * on; returns 0 (also for `off`), or -EACCES (not ours, cannot bind), -EADDRINUSE (another
 * process has the socket or port), -ENOTTY (local without a terminal). */
int console_start(struct sm *sm, const char *version);
void console_stop(void);

/* The socket protocol (doc/console.md): one command per line ("json CMD ARGS" for the JSON
 * object); the reply's text lines (a line starting with '.' is sent with one more '.'), then a
 * line of its own: ".OK", or ".ERR N" with the command's negative status. */

#endif
