/* SPDX-License-Identifier: BSD-2-Clause */
/* numbers.h - the readers of unsigned numbers the policy parsers share, so a GUID or a port
 * reads the same in every policy file of one kind: the policy files' numbers (decimal, or hex
 * with 0x) and C's (as strtoull reads them, for the files and values OpenSM reads so). */
#ifndef IBSM_POLICY_NUMBERS_H
#define IBSM_POLICY_NUMBERS_H

#include <stddef.h>
#include <stdint.h>

/* s[0, n) as a whole: decimal, or hex after 0x/0X. 0 and *out, -1 not such a number, -2 more
 * than 64 bits. */
int policy_parse_u64(const char *s, size_t n, uint64_t *out);

/* A C number at the start of s[0, n) (strtoull with base 0, without sign or blanks): 0x/0X and
 * a hex digit: hex; else a leading 0: octal; else decimal. 0, *out, the bytes read (*used) and
 * the base (16, 8 or 10); -1 no digit; -2 more than 64 bits. */
int policy_scan_c_u64(const char *s, size_t n, uint64_t *out, size_t *used, unsigned *base);
/* s[0, n) as a whole is a C number no larger than max: 0 and *out, else -1. */
int policy_parse_c_u64(const char *s, size_t n, uint64_t max, uint64_t *out);

#endif
