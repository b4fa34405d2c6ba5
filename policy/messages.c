/* SPDX-License-Identifier: BSD-2-Clause */
/* messages.c - "NAME:LINE:COL: what" for the policy parsers, and their reports
 * (policy/messages.h). */
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

int policy_error(GError **err, GQuark domain, int code, const char *name, unsigned line,
		 unsigned col, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	policy_error_v(err, domain, code, name, line, col, fmt, ap);
	va_end(ap);
	return -1;
}

void policy_message_add(GPtrArray *messages, const char *name, unsigned line, unsigned col,
			const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_ptr_array_add(messages, policy_message_v(name, line, col, fmt, ap));
	va_end(ap);
}

static void fail_v(struct policy_report *r, int code, unsigned line, unsigned col,
		   const char *fmt, va_list ap)
{
	if (r->failed)
		return;
	r->failed = 1;
	policy_error_v(r->err, r->domain, code, r->name, line, col, fmt, ap);
}

void policy_fail(struct policy_report *r, unsigned line, unsigned col, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fail_v(r, r->code, line, col, fmt, ap);
	va_end(ap);
}

void policy_fail_code(struct policy_report *r, int code, unsigned line, unsigned col,
		      const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fail_v(r, code, line, col, fmt, ap);
	va_end(ap);
}

void policy_note(struct policy_report *r, unsigned line, unsigned col, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_ptr_array_add(r->notes, policy_message_v(r->name, line, col, fmt, ap));
	va_end(ap);
}
