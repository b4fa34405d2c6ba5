/* SPDX-License-Identifier: BSD-2-Clause */
/* partitions.h - the partition policy (OpenSM's partitions.conf): parsed into partitions with
 * member selectors, then expanded against a fabric into the P_Keys each end port must hold.
 * Part of the policy library (linked by the core and by plugins; it includes nothing of the
 * core: the public fabric view only, and it logs nothing: messages go back to the caller). */
#ifndef IBSM_POLICY_PARTITIONS_H
#define IBSM_POLICY_PARTITIONS_H

#include <glib.h>
#include <stdint.h>
#include <ibsm/fabric.h>

#define PART_DEFAULT_PKEY 0x7fff
#define PART_FULL_BIT     0x8000

enum part_membership { PART_LIMITED = 1, PART_FULL = 2, PART_BOTH = 3 };

enum part_selector {
	PART_SEL_GUID,         /* one port GUID (CA port, or switch port 0 = switch node GUID) */
	PART_SEL_ALL,          /* every end port */
	PART_SEL_ALL_CAS,
	PART_SEL_ALL_VCAS,     /* virtual CA ports: none here (expands to nothing, logged) */
	PART_SEL_ALL_SWITCHES, /* switch port 0 of every switch */
	PART_SEL_ALL_ROUTERS,
	PART_SEL_SELF,         /* the SM's own port */
};

struct part_member {
	enum part_selector sel;
	uint64_t guid;             /* PART_SEL_GUID */
	uint8_t membership;        /* enum part_membership */
	unsigned line, col;        /* where it was written */
};

/* An mgid= item, kept for the multicast work. As OpenSM 3.3.23's osm_prtn_config.c: it starts
 * with the rate, mtu, sl, Q_Key, FlowLabel and scopes of its definition's header (not TClass),
 * its own flags override them, and each scope= adds a scope: one group per scope in
 * scope_mask (bit N: scope N), the MGID's scope nibble set to it; no scope at all means
 * link-local (2), whatever the MGID's nibble said. */
struct part_mgroup {
	uint8_t mgid[16];
	uint8_t rate, mtu, sl, scope, tclass; /* 0: not given (scope: the last scope= given) */
	uint8_t sl_own;            /* sl= given on the mgid item itself (kept without QoS) */
	uint16_t scope_mask;
	uint32_t qkey, flow_label;
	unsigned line;
};

struct partition {
	char *name;                /* "" when omitted */
	uint16_t pkey;             /* 15 bits; 0 = not given (auto) */
	uint8_t indx0;             /* put this key at index 0 */
	uint8_t ipoib;             /* IPoIB broadcast group wanted */
	uint8_t rate, mtu, sl, scope;   /* IPoIB flags (0 = default; scope: the first given) */
	uint16_t scope_mask;       /* every scope= (bit N: scope N): inherited by the mgid= items
				    * (the broadcast group stays link-local, as OpenSM 3.3.23) */
	uint8_t tclass;            /* TClass=, Q_Key=, FlowLabel= of the header (0 = default) */
	uint32_t qkey, flow_label;
	uint8_t defmember;         /* default membership of its port list (PART_LIMITED default) */
	GArray *members;           /* struct part_member */
	GArray *mgroups;           /* struct part_mgroup */
	unsigned line;
};

struct part_policy {
	char *source;              /* file name, or NULL for the built-in default */
	GPtrArray *skipped;        /* char *: "FILE:LINE:COL: why" for every entry skipped */
	GPtrArray *notes;          /* char *: "FILE:LINE:COL: ..." for every assumption made */
	GPtrArray *parts;          /* struct partition *, merged by P_Key (first name wins);
				    * the default partition 0x7fff is always present */
};

/* Rules (policy/partitions_parse.c): definitions with the same P_Key are merged in file order
 * (first name, first non-zero rate/mtu/sl/scope/Q_Key/TClass/FlowLabel win; ipoib/indx0 and
 * the scope masks OR-ed); a definition without
 * a P_Key is never merged and gets, in file order, the lowest key from 0x0001 that no other
 * partition uses; a P_Key's 0x8000 bit is dropped, 0 / 0x8000 / > 0xffff skip the definition.
 * defmember (header flag, or "Name : defmember=X : list") applies to its own definition only.
 * The default partition 0x7fff is parts[0] and always starts with ALL=limited, SELF=full (as
 * OpenSM's once a file exists; no file at all is part_policy_default below); the file can only
 * add to it (e.g. ALL=full). An unrecognized membership word means limited.
 * Parses a partitions.conf. A structural error (unbalanced ':'/';', unknown keyword) rejects
 * the whole file: NULL and *err = "FILE:LINE:COL: ...". A bad value only skips that entry
 * (in ->skipped with file:line:col; the rest applies); assumptions go to ->notes. The
 * parser does no I/O: the caller reads the file (the core: core/base/file_read.c, which refuses
 * anything but a regular file of bounded size) and names it (name, used in every message). */
struct part_policy *part_policy_parse_text(const char *text, size_t len, const char *name,
					   GError **err);
/* No partitions file (OpenSM): only the default partition, every end port a full member
 * (0xffff), so that hosts can talk to each other. */
struct part_policy *part_policy_default(void);
/* What a file that does not define the default partition gets (and an empty file): the
 * default partition with the SM port full and every other end port limited (0x7fff). */
struct part_policy *part_policy_restricted_default(void);
void part_policy_free(struct part_policy *p);

/* P_Keys of one end port, in policy order, full bit set for full members; a "both" member
 * yields two entries (full and limited). indx0_key: the key (with its full bit) that goes to
 * index 0, or 0 when no partition asks for index 0. */
struct port_pkeys {
	uint32_t n;
	uint16_t *keys;
	uint16_t indx0_key;
};

/* Expands the policy on fabric f: out[port id] for every end port (others n = 0). GUIDs not in
 * the fabric are skipped. Returns an array of f->n_ports entries (free with part_pkeys_free). */
struct port_pkeys *part_policy_expand(const struct part_policy *p, const struct ibsm_fabric *f,
				      uint32_t sm_port);
void part_pkeys_free(struct port_pkeys *pk, uint32_t n_ports);
/* Same; skipped (may be NULL) receives a "FILE:LINE:COL: ..." string for every member skipped
 * (a GUID that is no end port of f), notes (may be NULL) one for every assumption. */
struct port_pkeys *part_policy_expand_msgs(const struct part_policy *p,
					   const struct ibsm_fabric *f, uint32_t sm_port,
					   GPtrArray *skipped, GPtrArray *notes);

#define PART_ERROR part_error_quark()
GQuark part_error_quark(void);
enum part_error { PART_ERROR_SYNTAX = 1 };

#endif
