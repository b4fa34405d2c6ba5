/* SPDX-License-Identifier: BSD-2-Clause */
/* lines.h - the lines, blanks and words of a policy file, read one way by every parser that
 * reads line by line: a line ends at '\n' (or at the end of the text), and a NUL byte in it
 * refuses the file. */
#ifndef IBSM_POLICY_LINES_H
#define IBSM_POLICY_LINES_H

#include <stddef.h>
#include "policy/messages.h"

/* One line of a text. */
struct policy_line {
	unsigned no;               /* its number, from 1 */
	size_t start, end;         /* text[start, end): the line without its '\n' */
	size_t next;               /* where the next line starts (len after the last) */
};

/* The line of text[0, len) that starts at pos, numbered no: 1 and *ln; 0 when pos is at the
 * end of the text; -1 when the line holds a NUL byte: reported through r ("NUL byte in the
 * file", at its column). */
int policy_line_at(struct policy_report *r, const char *text, size_t len, size_t pos,
		   unsigned no, struct policy_line *ln);

/* The column (from 1) of text + i on the line that starts at text + start. */
static inline unsigned policy_col(size_t start, size_t i)
{
	return (unsigned)(i - start + 1);
}

/* A blank inside a line: space, tab, CR, VT or FF. */
int policy_is_blank(char c);
/* s[0, n) is word, byte for byte. */
int policy_word_is(const char *s, size_t n, const char *word);
/* s[0, n) is word, ASCII letters in any case. */
int policy_word_is_nocase(const char *s, size_t n, const char *word);

#endif
