/* SPDX-License-Identifier: BSD-2-Clause */
/* chain_stanza.h - the grammar the routing chain policy files share (NVIDIA's SM, as the
 * Mellanox OFED and UFM manuals describe them: the topology policy and the routing chain
 * policy), read by one reader that both parsers use (topo_parse.c, chain_parse.c), so neither
 * depends on the other for it:
 *  - a file is stanzas, "topology" ... "end-topology" or "unicast-step" ... "end-unicast-step",
 *    each word alone on its line; inside, one "qualifier: value" per line; '#' starts a
 *    comment anywhere on a line (so no value holds a '#'); blank lines are ignored; nothing
 *    else is allowed outside a stanza; stanza words and qualifier names are read without case
 *    ("Path-bit:" is path-bit); blanks are space, tab and CR;
 *  - a value is the rest of the line after the first ':', without surrounding blanks; another
 *    ':' in it refuses the file; every qualifier at most once per stanza;
 *  - numbers are decimal only (0x... is refused), leading zeros allowed.
 * Every error refuses the whole file: NULL and *err "NAME:LINE:COL: what". A word of another
 * routing chain file's stanzas (port-group, topology, unicast-step) is named as such. */
#ifndef IBSM_POLICY_CHAIN_STANZA_H
#define IBSM_POLICY_CHAIN_STANZA_H

#include <glib.h>
#include <stdint.h>

/* Where a value starts in its file; line 0: the qualifier was not given. */
struct chain_at {
	unsigned line, col;
};

#define CHAIN_STANZA_MAX_QUALIFIERS 8

/* What one file's stanzas are. */
struct chain_stanza_spec {
	const char *open, *close;          /* "topology", "end-topology" */
	const char *const *qualifiers;     /* names, lower case; the index is the value's slot */
	unsigned n_qualifiers;             /* at most CHAIN_STANZA_MAX_QUALIFIERS */
	unsigned empty_ok;                 /* bit q: qualifier q may have an empty value */
	GQuark domain;                     /* of the errors */
	int code;
};

struct chain_stanza_value {
	const char *s;             /* into the text read; NULL: not given */
	size_t n;
	struct chain_at at;
};

struct chain_stanza {
	struct chain_at at;        /* the opening word */
	struct chain_stanza_value v[CHAIN_STANZA_MAX_QUALIFIERS];
};

/* The stanzas of text (struct chain_stanza, in file order), or NULL and *err. The values
 * point into text; name is the file as the messages name it. */
GArray *chain_stanza_read(const char *text, size_t len, const char *name,
			  const struct chain_stanza_spec *spec, GError **err);

/* A decimal value no larger than max: 0, -1 not a decimal number, -2 larger than max. */
int chain_stanza_decimal(const struct chain_stanza_value *v, uint64_t max, uint64_t *out);

#endif
