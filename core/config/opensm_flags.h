/* SPDX-License-Identifier: BSD-2-Clause */
/* opensm_flags.h - OpenSM 3.3.23's command-line flags that are not a flag of ibsm's own key table
 * (config/keys.c): other names of ibsm's settings (--smkey) and flags of OpenSM keys ibsm has no
 * setting for (--lfts_file), so every flag of `opensm --help` is accepted and means what it
 * means there, or is named in a warning saying it has no effect. */
#ifndef IBSM_CONFIG_OPENSM_FLAGS_H
#define IBSM_CONFIG_OPENSM_FLAGS_H

struct opensm_flag {
	const char *long_name;  /* without "--" */
	char short_name;        /* 0: none */
	const char *arg;        /* argument name, NULL: a flag without argument */
	const char *key;        /* the opensm.conf key it sets: ibsm's or config/opensm_keys.h's */
	const char *noarg_value;/* the value a flag without argument sets */
	const char *doc;
};

const struct opensm_flag *opensm_flags(unsigned *n);
/* "-x" or "--honor_guid2lid" -> its row, or NULL */
const struct opensm_flag *opensm_flag_find(const char *name);
/* OpenSM's -d N: the key it sets ("ignore_other_sm" ...), "" for -d 10 (no key), NULL: unknown */
const char *opensm_debug_option_key(long n);

#endif
