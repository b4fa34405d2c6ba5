/* SPDX-License-Identifier: BSD-2-Clause */
/* torus_conf.h - the configuration file of the torus-2QoS routing engine (OpenSM's
 * torus-2QoS.conf(5)): the topology (torus or mesh, a radix per dimension), the seeds
 * that give topology discovery its coordinate directions and datelines, the port group size
 * and the CA port order. Part of the policy library: the model, its parser and the check that
 * the seeds suffice; no fabric here (the engine finds the seed switches) and no logging
 * (messages go back to the caller). */
#ifndef IBSM_POLICY_TORUS_CONF_H
#define IBSM_POLICY_TORUS_CONF_H

#include <glib.h>
#include <stdint.h>

enum { TORUS_X, TORUS_Y, TORUS_Z, TORUS_NDIMS };
enum { TORUS_PLUS, TORUS_MINUS, TORUS_NDIRS };   /* xp_link, xm_link */

#define TORUS_CONF_PORTGROUP_DEFAULT 16   /* OpenSM's PORTGRP_MAX_PORTS */
#define TORUS_CONF_MAX_CHANGES       32   /* OpenSM's DEFAULT_MAX_CHANGES */
#define TORUS_CONF_MAX_PORT          254  /* port numbers in port_order: 0-254 */
#define TORUS_CONF_MAX_SWITCHES      49151 /* x*y*z: no more switches than unicast LIDs */

struct torus_conf_link {
	uint64_t from, to;         /* node GUIDs of the two switches; 0 when not given */
	int given;
	unsigned line;
};

struct torus_conf_seed {
	struct torus_conf_link link[TORUS_NDIMS][TORUS_NDIRS];
	int dateline[TORUS_NDIMS];         /* the origin's shift: -radix < d < radix; 0 default */
	int dateline_given[TORUS_NDIMS];
	unsigned line;                     /* where the seed starts (next_seed, or its first
					    * link or dateline keyword) */
};

struct torus_conf {
	char *source;              /* the file name the messages use */
	int topology_given;        /* a torus or mesh line was read */
	unsigned topology_line;
	unsigned radix[TORUS_NDIMS];       /* >= 1 once given, 0 before; 1 drops the dimension */
	int mesh[TORUS_NDIMS];     /* 1: open (mesh), 0: ring (torus). A radix of 2 is always a
				    * mesh (OpenSM: a radix-2 torus is a mesh with parallel links) */
	GArray *seeds;             /* struct torus_conf_seed, in file order */
	unsigned portgroup_max_ports;      /* default 16, the last line wins, at most 254 */
	unsigned max_changes;      /* OpenSM's undocumented max_changes keyword (default 32) */
	GArray *port_order;        /* guint8: CA ports in the order given, without duplicates
				    * (empty: increasing port order); the last line wins */
	GPtrArray *notes;          /* char *: "FILE:LINE:COL: ..." things read but ignored, and
				    * assumptions made */
};

/* Parses a torus-2QoS.conf text. Any error rejects the whole file: NULL and *err set to
 * "NAME:LINE:COL: what is wrong". The parser does no I/O; NAME is used in every message.
 * What it reads as OpenSM 3.3.23 does: tokens are separated by blanks (space, tab, CR); a line
 * whose first token starts with '#' is a comment; tokens after a keyword's arguments are
 * ignored; numbers are C numbers (0x hex, leading 0 octal, else decimal: a GUID written
 * without 0x is decimal, with a note); keywords are case-sensitive; an unknown keyword
 * rejects the file (OpenSM's ERR 4E12). See policy/torus_conf.c for what differs. */
struct torus_conf *torus_conf_parse_text(const char *text, size_t len, const char *name,
					 GError **err);
void torus_conf_free(struct torus_conf *c);

/* Do the seeds suffice for topology discovery (OpenSM's verify_setup)? Every seed (or, with
 * none, the empty seed) needs, in every dimension of radix > 1, a link in at least one
 * direction, and in a torus dimension of radix 4 both directions. 0 when they do; -1 and
 * *err "NAME:LINE: seed N: ..." naming the seed and the dimension (a message to log) when
 * not, or when there is no torus or mesh line at all. */
int torus_conf_check_seeds(const struct torus_conf *c, GError **err);

#define TORUS_CONF_ERROR torus_conf_error_quark()
GQuark torus_conf_error_quark(void);
enum torus_conf_error { TORUS_CONF_ERROR_SYNTAX = 1, TORUS_CONF_ERROR_SEEDS };

#endif
