/* SPDX-License-Identifier: BSD-2-Clause */
/* numbers.h - the one reader of unsigned numbers the policy parsers share (decimal, or hex
 * with 0x), so a GUID or a port reads the same in every policy file. */
#ifndef IBSM_POLICY_NUMBERS_H
#define IBSM_POLICY_NUMBERS_H

#include <stddef.h>
#include <stdint.h>

/* s[0, n) as a whole: decimal, or hex after 0x/0X. 0 and *out, -1 not such a number, -2 more
 * than 64 bits. */
int policy_parse_u64(const char *s, size_t n, uint64_t *out);

#endif
