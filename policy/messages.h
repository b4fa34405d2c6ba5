/* SPDX-License-Identifier: BSD-2-Clause */
/* messages.h - the one shape of every policy parser's messages: "NAME:LINE:COL: what", as an
 * error (the whole file refused) or as a note (read but ignored, or assumed). */
#ifndef IBSM_POLICY_MESSAGES_H
#define IBSM_POLICY_MESSAGES_H

#include <glib.h>
#include <stdarg.h>

/* "name:line:col: " followed by fmt formatted with ap (g_free it). */
char *policy_message_v(const char *name, unsigned line, unsigned col, const char *fmt, va_list ap);
/* Sets *err (domain, code) to that message, unless *err is already set. */
void policy_error_v(GError **err, GQuark domain, int code, const char *name, unsigned line,
		    unsigned col, const char *fmt, va_list ap);

#endif
