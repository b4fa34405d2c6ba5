/* SPDX-License-Identifier: BSD-2-Clause */
/* port_groups.h - the port groups policy file of NVIDIA's SM (pgrp_policy_file; NVIDIA's SM manual, "Defining Port Groups"):
 * named groups of ports that routing chains, and later other policy files, refer to. Part of
 * the policy library: the model, its parser, and its resolution against a flat list of ports
 * the caller builds from its fabric (no core types here, and no logging: messages go back to
 * the caller).
 *
 * The file: stanzas "port-group" ... "end-port-group", each with qualifiers "word: value":
 *   name: grp1                      required, once; one visible word without ',' (case-sensitive)
 *   use: free text                  optional, default ""
 *   port-guid: 0x281, 0x282@1/3-5   GUIDs, each optionally with ports (0-254) after '@'
 *   port-guid-range: 0x282-0x286    one range of GUIDs, never a list of ranges
 *   port-name: hostname=kuku; port=2; hca_idx=1, hostname=host2
 *   node-name: SW.*@3               a regular expression, optionally one port after '@'
 *   union-rule: grp1, grp2          exactly two groups
 *   subtract-rule: grp1, grp2       exactly two groups: grp1 without grp2
 * at least one rule (the last six) per group; a group is the union of its rules. The details
 * (continuation lines, blanks, comments, what a match is) are in port_groups_parse.c's and
 * port_groups_resolve.c's top comments.
 *
 * Names and references (the rules the manual's own example needs, where grp3 is defined twice):
 *  - The predefined groups ALL, ALL_SWITCHES, ALL_CAS and ALL_ROUTERS may be referred to and
 *    never defined.
 *  - A reference may point forward: names are resolved after the whole file is read. An
 *    unknown name is an error at the reference.
 *  - A stanza whose name was defined before redefines it (with a note). Inside the
 *    redefinition, a reference to its own name means the definition just before it: so the
 *    manual's "grp3 = grp1 - grp2" then "grp3 = grp3 + grp4" gives (grp1 - grp2) + grp4.
 *  - Every other reference to a name, from anywhere in the file (before, between or after its
 *    definitions), means its final (last) definition; so does pgrp_policy_find(). A group
 *    defined between the two grp3 stanzas that refers to grp3 sees the final grp3.
 *  - A reference cycle (following references from definition to definition comes back) is an
 *    error naming the cycle; a self-reference with no earlier definition is one. */
#ifndef IBSM_POLICY_PORT_GROUPS_H
#define IBSM_POLICY_PORT_GROUPS_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#define PGRP_MAX_PORT 254          /* port numbers 0-254 (0: a switch's management port) */

enum pgrp_predefined { PGRP_ALL, PGRP_ALL_SWITCHES, PGRP_ALL_CAS, PGRP_ALL_ROUTERS,
		       PGRP_N_PREDEFINED };

/* The predefined group's name ("ALL", ...). */
const char *pgrp_predefined_name(enum pgrp_predefined p);
/* The predefined group named name (exact case), or -1. */
int pgrp_predefined_lookup(const char *name);

enum pgrp_rule_kind {
	PGRP_RULE_PORT_GUID,       /* port-guid */
	PGRP_RULE_GUID_RANGE,      /* port-guid-range */
	PGRP_RULE_PORT_NAME,       /* port-name */
	PGRP_RULE_NODE_NAME,       /* node-name (or its older name port-regexp) */
	PGRP_RULE_UNION,           /* union-rule */
	PGRP_RULE_SUBTRACT,        /* subtract-rule */
};

/* A set of port numbers 0-254: bit p of bits[p / 64]. */
struct pgrp_port_set {
	uint64_t bits[4];
};

static inline int pgrp_port_set_has(const struct pgrp_port_set *s, unsigned p)
{
	return p <= PGRP_MAX_PORT && (s->bits[p / 64] >> (p % 64)) & 1;
}

struct pgrp_guid {             /* one item of a port-guid list */
	uint64_t guid;             /* not 0 */
	int all_ports;             /* 1: no '@' (every port); 0: only those in ports */
	struct pgrp_port_set ports;
	unsigned line, col;
};

struct pgrp_name {             /* one entry of a port-name list */
	char *hostname;            /* not empty */
	int port;                  /* 1-254, or -1: every port */
	int hca_idx;               /* >= 0 (the N of "HCA-N"), or -1: every HCA */
	unsigned line, col;
};

struct pgrp_ref {              /* a group named by union-rule or subtract-rule */
	char *name;
	unsigned line, col;
	int group;                 /* index in groups of the definition meant, or -1 */
	int predefined;            /* enum pgrp_predefined when it names one, else -1 */
};

struct pgrp_rule {
	enum pgrp_rule_kind kind;
	unsigned line, col;        /* of the qualifier */
	GArray *guids;             /* PORT_GUID: struct pgrp_guid, in file order, each GUID once */
	uint64_t lo, hi;           /* GUID_RANGE: lo <= hi */
	GArray *names;             /* PORT_NAME: struct pgrp_name, in file order */
	char *pattern;             /* NODE_NAME: the regular expression as written */
	GRegex *regex;             /* NODE_NAME: it, compiled (see port_groups_resolve.c) */
	int port;                  /* NODE_NAME: 0-254, or -1: every port */
	struct pgrp_ref ref[2];    /* UNION, SUBTRACT: the two groups, in order */
};

struct pgrp_group {            /* one stanza */
	char *name;
	char *use;                 /* "" when not given */
	unsigned line;             /* of its "port-group" line */
	unsigned name_line, name_col;
	GPtrArray *rules;          /* struct pgrp_rule *, in file order, at least one */
	int previous;              /* index in groups of the definition of this name before this
				    * one, or -1 */
	int final;                 /* 1: the last definition of its name */
};

struct pgrp_policy {
	char *source;              /* the file name the messages use */
	GPtrArray *groups;         /* struct pgrp_group *: every stanza, in file order */
	GArray *order;             /* int: indexes of groups such that each comes after every
				    * definition its references mean (an evaluation order) */
	GPtrArray *notes;          /* char *: "FILE:LINE:COL: ..." things read but ignored, and
				    * assumptions made */
};

/* Parses a port groups policy text. Any error rejects the whole file: NULL and *err set to
 * "NAME:LINE:COL: what is wrong" (PGRP_POLICY_ERROR_SYNTAX, or PGRP_POLICY_ERROR_REFERENCE
 * for an unknown group or a cycle). The parser does no I/O; NAME is used in every message. */
struct pgrp_policy *pgrp_policy_parse_text(const char *text, size_t len, const char *name,
					   GError **err);
void pgrp_policy_free(struct pgrp_policy *p);

/* The final definition of name, or NULL (also for the predefined groups). */
const struct pgrp_group *pgrp_policy_find(const struct pgrp_policy *p, const char *name);
/* 1 when name may be referred to (a predefined group, or defined in p; p may be NULL), else
 * 0: for other policy files that name port groups. */
int pgrp_policy_has(const struct pgrp_policy *p, const char *name);

#define PGRP_POLICY_ERROR pgrp_policy_error_quark()
GQuark pgrp_policy_error_quark(void);
enum pgrp_policy_error { PGRP_POLICY_ERROR_SYNTAX = 1, PGRP_POLICY_ERROR_REFERENCE };

/* ---- resolution against a fabric ------------------------------------------------------- */

enum { PGRP_NODE_CA = 1, PGRP_NODE_SWITCH = 2, PGRP_NODE_ROUTER = 3 };

/* One physical port of the fabric: every CA and router port, every external switch port and
 * every switch's port 0. A switch's ports carry the switch's node GUID as port_guid. */
struct pgrp_port {
	uint64_t node_guid, port_guid;
	uint8_t port_num;
	uint8_t node_type;         /* PGRP_NODE_* */
	const char *node_desc;     /* NodeDescription; NULL reads as "" */
};

/* The groups of a policy over one array of ports. A port set is a bit set over the indexes of
 * that array: port i is in set s when pgrp_set_has(s, i); it has pgrp_resolved_words() words
 * (bits past the last port are 0). */
struct pgrp_resolved;

static inline int pgrp_set_has(const uint64_t *s, size_t i)
{
	return (s[i / 64] >> (i % 64)) & 1;
}

/* Resolves every group of p (p may be NULL: only the predefined ones) over ports[0..n). The
 * port array is read during the call only. */
struct pgrp_resolved *pgrp_policy_resolve(const struct pgrp_policy *p,
					  const struct pgrp_port *ports, size_t n);
void pgrp_resolved_free(struct pgrp_resolved *r);
size_t pgrp_resolved_words(const struct pgrp_resolved *r);
/* The ports of the group named name (its final definition, or a predefined group), or NULL
 * when there is no such group. */
const uint64_t *pgrp_resolved_group(const struct pgrp_resolved *r, const char *name);
/* The ports of one definition: index i of p->groups (earlier definitions of a name too). */
const uint64_t *pgrp_resolved_definition(const struct pgrp_resolved *r, guint i);
/* How many ports a set holds. */
size_t pgrp_resolved_count(const struct pgrp_resolved *r, const uint64_t *set);

#endif
