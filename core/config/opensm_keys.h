/* SPDX-License-Identifier: BSD-2-Clause */
/* opensm_keys.h - the opensm.conf keys of OpenSM 3.3.23 that ibsm has no setting for, each with
 * OpenSM's default and the reason it has no effect, so a site's existing opensm.conf (or an
 * OpenSM flag) is read whole and every key without effect gets its own line naming why. Keys
 * ibsm uses are in config/keys.c; keys no table knows are a warning (config/build.c). */
#ifndef IBSM_CONFIG_OPENSM_KEYS_H
#define IBSM_CONFIG_OPENSM_KEYS_H

enum opensm_key_kind {
	OSK_NO_EFFECT, /* accepted, no effect: INFO at OpenSM's default, WARN otherwise */
	OSK_SECURITY,  /* a protection ibsm does not give yet: always an ERROR line */
};

struct opensm_key {
	const char *key;
	const char *osm_default; /* as `opensm -c` (3.3.23) writes it; NULL: (null) */
	enum opensm_key_kind kind;
	const char *reason;      /* why it has no effect in ibsm, one clause */
};

/* The row of KEY, or NULL when ibsm's own table has it or OpenSM 3.3.23 has no such key. */
const struct opensm_key *opensm_key_find(const char *key);
/* Does VALUE (NULL: null) mean OpenSM's default for K? Case and number base do not matter. */
int opensm_key_is_default(const struct opensm_key *k, const char *value);
/* every row, for the tests and the documentation */
const struct opensm_key *opensm_keys(unsigned *n);

#endif
