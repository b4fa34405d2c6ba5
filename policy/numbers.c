/* SPDX-License-Identifier: BSD-2-Clause */
/* numbers.c - unsigned numbers in policy files (numbers.h). */
#include <glib.h>
#include "policy/numbers.h"

int policy_parse_u64(const char *s, size_t n, uint64_t *out)
{
	unsigned base = 10;
	size_t i = 0;
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i >= n)
		return -1;
	uint64_t v = 0;
	int over = 0;
	for (; i < n; i++) {
		int d = g_ascii_xdigit_value(s[i]);
		if (d < 0 || (base == 10 && !g_ascii_isdigit(s[i])))
			return -1;
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			over = 1;
		else
			v = v * base + (uint64_t)d;
	}
	if (over)
		return -2;
	*out = v;
	return 0;
}

/* The value of a digit in bases up to 16, 99 for any other byte. */
static int digit_value(char c)
{
	int d = g_ascii_xdigit_value(c);
	return d < 0 ? 99 : d;
}

int policy_scan_c_u64(const char *s, size_t n, uint64_t *out, size_t *used, unsigned *base)
{
	size_t i = 0;
	unsigned b = 10;
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && digit_value(s[2]) < 16) {
		b = 16;
		i = 2;
	} else if (n > 0 && s[0] == '0') {
		b = 8;
	}
	size_t start = i;
	uint64_t x = 0;
	for (; i < n; i++) {
		int d = digit_value(s[i]);
		if (d >= (int)b)
			break;
		if (x > (UINT64_MAX - (uint64_t)d) / b)
			return -2;
		x = x * b + (uint64_t)d;
	}
	if (i == start)
		return -1;
	*out = x;
	*used = i;
	*base = b;
	return 0;
}

int policy_parse_c_u64(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	size_t used;
	unsigned base;
	uint64_t v;
	if (policy_scan_c_u64(s, n, &v, &used, &base) < 0 || used != n || v > max)
		return -1;
	*out = v;
	return 0;
}
