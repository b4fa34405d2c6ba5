/* SPDX-License-Identifier: BSD-2-Clause */
/* keys.h - the one table of run-time settings (key = OpenSM's opensm.conf key where one exists,
 * type, field, range, command-line flag, doc line), values parsed into and formatted from
 * struct sm_options. The file reader, the command line and the template all go through it. */
#ifndef IBSM_CONFIG_KEYS_H
#define IBSM_CONFIG_KEYS_H

#include <glib.h>
#include <stddef.h>
#include "config/options.h"

enum config_type {
	CONFIG_BOOL,   /* int: true/false/TRUE/FALSE/yes/no */
	CONFIG_INT,    /* int in [min, max] */
	CONFIG_U8,     /* uint8_t in [min, max] */
	CONFIG_U32,    /* uint32_t */
	CONFIG_U64,    /* uint64_t (GUIDs, prefixes: 0x hex) */
	CONFIG_STRING, /* char *, g_free'd; null/empty/(null) = the default */
	CONFIG_QOS,    /* char *, a qos_* value checked by policy/qos_options.h (min = its param) */
	/* OpenSM's congestion control value syntaxes (config/keys.c, doc/congestion-control.md) */
	CONFIG_MASK256,   /* uint8_t[32]: a 256-bit hex number, 0x optional, byte 0 its top */
	CONFIG_CCT_ENTRY, /* uint16_t: SHIFT:MULTIPLIER (0-3, 0-16383) as shift << 14 | multiplier */
	CONFIG_CA_CONG,   /* struct cc_ca_entry[16]: "SL VALUE" sets one SL's field (min: which) */
	CONFIG_CCT,       /* uint16_t[128] + int count after it: SHIFT:MULTIPLIER,... */
};

/* CONFIG_CA_CONG's fields (its min) */
enum { CC_CA_TIMER, CC_CA_INCREASE, CC_CA_TRIGGER, CC_CA_MIN };

#define CONFIG_F_INVERT 0x1    /* bool stored inverted (accum_log_file -> erase_log) */
#define CONFIG_F_ENV 0x2       /* default comes from the environment: template comments it out */
#define CONFIG_F_FALLBACK 0x4  /* default is ibsm's file, else OpenSM's (config/locations.h): commented out too */

struct config_key {
	const char *key;        /* YAML / opensm.conf key */
	enum config_type type;
	size_t offset;          /* into struct sm_options */
	long long min, max;     /* CONFIG_INT / CONFIG_U8 range */
	unsigned flags;         /* CONFIG_F_* */
	char short_flag;        /* command line, 0 = none */
	const char *long_flag;  /* command line, NULL = file only */
	const char *arg;        /* flag argument name, NULL = flag without argument */
	const char *flag_value; /* value a flag without argument sets ("true") */
	const char *doc;        /* one line */
	const char *flag_doc;   /* --help line when the flag reads differently from the key, or NULL */
};

#define CONFIG_ERROR config_error_quark()
GQuark config_error_quark(void);
enum { CONFIG_ERROR_IO, CONFIG_ERROR_SYNTAX, CONFIG_ERROR_UNKNOWN_KEY, CONFIG_ERROR_BAD_VALUE };

const struct config_key *config_keys(size_t *n);
const struct config_key *config_key_find(const char *key);

/* Parses VALUE for K into *o (a null/empty/"(null)" value restores the default). On a bad value
 * returns -1 with a message without location (the caller prefixes file:line:col). */
int config_set(struct sm_options *o, const struct config_key *k, const char *value, GError **err);
/* K's value in *o as the file would spell it (g_free it); NULL for an unset string. */
char *config_format(const struct sm_options *o, const struct config_key *k);

/* Numbers: decimal or 0x hex (a leading '-' only when minus_ok); 0 or -1. */
int config_parse_number(const char *s, int minus_ok, long long *out_signed, unsigned long long *out);
/* true/false/yes/no in any case; 0 or -1. */
int config_parse_bool(const char *s, int *out);

#endif
