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
