/* SPDX-License-Identifier: BSD-2-Clause */
/* qos_policy.h - the QoS policy file (OpenSM's qos-policy.conf; doc/QoS_management_in_OpenSM.txt, NVIDIA's SM manual "Quality of Service Management in OpenSM"): port
 * groups, QoS levels and match rules (full syntax), the qos-ulps section (simplified syntax)
 * turned into match rules and SL-only levels, qos-setup read and reported as not applied.
 * Part of the policy library: the model and its parser only; no fabric here (the core resolves
 * port groups against each generation: core/sa/qos_match.c) and no logging (messages go back
 * to the caller). */
#ifndef IBSM_POLICY_QOS_POLICY_H
#define IBSM_POLICY_QOS_POLICY_H

#include <glib.h>
#include <stdint.h>

/* An inclusive range of numbers (GUIDs, P_Keys, Service IDs, QoS classes, path bits). */
struct qos_range {
	uint64_t lo, hi;
};

/* node-type flags of a port group */
enum {
	QOS_NT_CA = 1,
	QOS_NT_SWITCH = 2,     /* a switch's port 0 */
	QOS_NT_ROUTER = 4,
	QOS_NT_SELF = 8,       /* the SM's own port */
};

struct qos_port_name {         /* "node description/P<n>" */
	char *desc;                /* compared with the node's NodeDescription */
	unsigned port;             /* >= 1 */
};

struct qos_port_group {
	char *name;
	char *use;                 /* description, may be NULL */
	GArray *guids;             /* struct qos_range: port GUIDs */
	GArray *names;             /* struct qos_port_name */
	GArray *pkeys;             /* struct qos_range: P_Keys, 0x8000 bit dropped (15 bits) */
	GPtrArray *partitions;     /* char *: partition names (partitions.conf) */
	unsigned node_types;       /* QOS_NT_* */
	int generated;             /* made from a qos-ulps line (target/source port GUIDs) */
	unsigned line;
};

struct qos_level {
	char *name;
	char *use;
	int sl;                    /* 0-15, -1 not set */
	int mtu_limit;             /* IB MTU code 1-5, -1 not set */
	int rate_limit;            /* IB rate code 2-18 (IBA extended codes), -1 not set */
	int packet_life;           /* 0-31 (IBA encoded), -1 not set */
	GArray *path_bits;         /* struct qos_range: LID offsets allowed (empty: any) */
	GArray *pkeys;             /* struct qos_range: 15-bit P_Keys allowed (empty: any) */
	unsigned line;
	int from_ulps;             /* made by qos-ulps: an SL-only level ("qos-ulps SL <n>"), or
				    * the DEFAULT of a "default : SL" line; no name of the file */
};

struct qos_match_rule {
	char *use;                 /* may be NULL */
	GArray *qos_class;         /* struct qos_range (empty: not a criterion) */
	GArray *service_id;        /* struct qos_range */
	GArray *pkey;              /* struct qos_range, 15 bits */
	GArray *source;            /* guint: indexes into qos_policy.groups (empty: any source) */
	GArray *destination;       /* guint: indexes into qos_policy.groups */
	guint level;               /* index into qos_policy.levels */
	int from_ulps;             /* made from a qos-ulps line */
	unsigned line;
};

struct qos_policy {
	char *source;              /* the file name the messages use */
	GPtrArray *groups;         /* struct qos_port_group * (named ones, then generated ones) */
	GPtrArray *levels;         /* struct qos_level *; levels->pdata[0] is the DEFAULT level */
	GPtrArray *rules;          /* struct qos_match_rule *: qos-match-rules in file order, then
				    * the qos-ulps rules in file order (the full syntax first) */
	GArray *ipoib_pkeys;       /* struct qos_range: P_Keys named by qos-ulps ipoib lines (the
				    * default 0x7fff for a bare "ipoib"): the core checks them
				    * against the partitions, as OpenSM does */
	GPtrArray *notes;          /* char *: "FILE:LINE:COL: ..." things read but not applied
				    * (qos-setup), and assumptions made */
};

/* Parses a QoS policy file's text. Any error rejects the whole file: NULL and *err set to
 * "NAME:LINE:COL: what is wrong" (the previous policy stays in force). The parser does no
 * I/O; NAME is used in every message. */
struct qos_policy *qos_policy_parse_text(const char *text, size_t len, const char *name,
					 GError **err);
void qos_policy_free(struct qos_policy *p);

/* Is v in one of the ranges? */
int qos_ranges_have(const GArray *ranges, uint64_t v);

#define QOS_POLICY_ERROR qos_policy_error_quark()
GQuark qos_policy_error_quark(void);
enum qos_policy_error { QOS_POLICY_ERROR_SYNTAX = 1 };

#endif
