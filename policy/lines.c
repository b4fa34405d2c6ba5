/* SPDX-License-Identifier: BSD-2-Clause */
/* lines.c - lines, blanks and words of policy files (policy/lines.h). */
#include <string.h>
#include "policy/lines.h"

int policy_line_at(struct policy_report *r, const char *text, size_t len, size_t pos,
		   unsigned no, struct policy_line *ln)
{
	if (pos >= len)
		return 0;
	const char *nl = memchr(text + pos, '\n', len - pos);
	ln->no = no;
	ln->start = pos;
	ln->end = nl ? (size_t)(nl - text) : len;
	ln->next = nl ? ln->end + 1 : len;
	const char *nul = memchr(text + pos, '\0', ln->end - pos);
	if (nul) {
		policy_fail(r, no, policy_col(pos, (size_t)(nul - text)), "NUL byte in the file");
		return -1;
	}
	return 1;
}

int policy_is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

int policy_word_is(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && memcmp(s, word, n) == 0;
}

int policy_word_is_nocase(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && g_ascii_strncasecmp(s, word, n) == 0;
}
