/* SPDX-License-Identifier: BSD-2-Clause */
/* messages.h - the one shape of every policy parser's messages: "NAME:LINE:COL: what", as an
 * error (the whole file refused) or as a note (read but ignored, or assumed), and the report
 * each parser keeps while it reads a file, so no parser carries its own copy of them. */
#ifndef IBSM_POLICY_MESSAGES_H
#define IBSM_POLICY_MESSAGES_H

#include <glib.h>
#include <stdarg.h>

/* Text quoted in a message, for "%.*s": at most 60 bytes of s[0, n). */
#define POLICY_SHOW(s, n) (int)((n) > 60 ? 60 : (n)), (s)

/* "name:line:col: " followed by fmt formatted with ap (g_free it). */
char *policy_message_v(const char *name, unsigned line, unsigned col, const char *fmt, va_list ap);
/* Sets *err (domain, code) to that message, unless *err is already set. */
void policy_error_v(GError **err, GQuark domain, int code, const char *name, unsigned line,
		    unsigned col, const char *fmt, va_list ap);
/* The same from the arguments: sets *err unless set already; -1, for "return policy_error()". */
G_GNUC_PRINTF(7, 8)
int policy_error(GError **err, GQuark domain, int code, const char *name, unsigned line,
		 unsigned col, const char *fmt, ...);
/* Appends that message to messages (char *, g_free). */
G_GNUC_PRINTF(5, 6)
void policy_message_add(GPtrArray *messages, const char *name, unsigned line, unsigned col,
			const char *fmt, ...);

/* What a parser says about one file while it reads it: the first error, which refuses the
 * file, and its notes. */
struct policy_report {
	const char *name;          /* the file as the messages name it */
	GQuark domain;             /* of the error */
	int code;                  /* of the error, unless policy_fail_code names another */
	GError **err;              /* where the error goes (NULL: nowhere) */
	GPtrArray *notes;          /* char *: where notes go (the parser's result) */
	int failed;                /* an error was reported: the file is refused; later errors
				    * are dropped */
};

/* The file is refused: the first error of r goes to *r->err, r->failed is set. */
G_GNUC_PRINTF(4, 5)
void policy_fail(struct policy_report *r, unsigned line, unsigned col, const char *fmt, ...);
G_GNUC_PRINTF(5, 6)
void policy_fail_code(struct policy_report *r, int code, unsigned line, unsigned col,
		      const char *fmt, ...);
/* A note: appended to r->notes. */
G_GNUC_PRINTF(4, 5)
void policy_note(struct policy_report *r, unsigned line, unsigned col, const char *fmt, ...);

#endif
