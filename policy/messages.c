/* SPDX-License-Identifier: BSD-2-Clause */
/* messages.c - "NAME:LINE:COL: what" for the policy parsers (policy/messages.h). */
#include "policy/messages.h"

char *policy_message_v(const char *name, unsigned line, unsigned col, const char *fmt, va_list ap)
{
	char *m = g_strdup_vprintf(fmt, ap);
	char *out = g_strdup_printf("%s:%u:%u: %s", name, line, col, m);
	g_free(m);
	return out;
}

void policy_error_v(GError **err, GQuark domain, int code, const char *name, unsigned line,
		    unsigned col, const char *fmt, va_list ap)
{
	if (!err || *err)
		return;
	char *m = policy_message_v(name, line, col, fmt, ap);
	g_set_error_literal(err, domain, code, m);
	g_free(m);
}
