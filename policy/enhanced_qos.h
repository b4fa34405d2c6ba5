/* SPDX-License-Identifier: BSD-2-Clause */
/* enhanced_qos.h - NVIDIA's enhanced QoS policy (enhanced_qos_policy_file; NVIDIA's SM manual,
 * "Enhanced QoS"): per-SL rate limits for physical ports (BW_RULES) and virtual ports
 * (VPORT_BW_RULES) by names defined in BW_NAMES. The parser does no I/O; errors are
 * "FILE:LINE:COL: what" (policy/messages.h). doc/enhanced-qos.md says what is applied. */
#ifndef IBSM_POLICY_ENHANCED_QOS_H
#define IBSM_POLICY_ENHANCED_QOS_H

#include <glib.h>
#include <stdint.h>

#define EQOS_N_SL 16
/* The widest rate limit the QoSConfigSL attribute carries: 20 bits (bits 0-19 of each SL's
 * 32-bit word; bits 20-31 are the bandwidth allocation, which the policy does not set). */
#define EQOS_RATE_MAX 0xFFFFFu

#define EQOS_POLICY_ERROR eqos_policy_error_quark()
GQuark eqos_policy_error_quark(void);
enum { EQOS_POLICY_ERROR_SYNTAX = 1 };

/* A name of BW_NAMES: "<name> = <rate limit in Mbps>" (0: unlimited). */
struct eqos_bw_name {
	char *name;
	uint32_t mbps;
	unsigned line;
};

enum eqos_target { EQOS_T_DEFAULT = 0, EQOS_T_GUID, EQOS_T_GROUP };

/* One rule: "<target> = <sl>:<name>, ..." where <sl> is 0-15, SL0-SL15 or "all". */
struct eqos_rule {
	enum eqos_target kind;
	uint64_t guid;             /* EQOS_T_GUID */
	char *group;               /* EQOS_T_GROUP: a port group of the QoS policy file */
	uint32_t rate[EQOS_N_SL];  /* Mbps, for the SLs in `named` */
	uint16_t named;            /* bit s: SL s named on its own */
	int has_all;               /* "all:<name>" given: all_rate for every SL not named */
	uint32_t all_rate;
	unsigned line, col;
};

struct eqos_section {
	int present;               /* its header is in the file */
	unsigned line;             /* of the header */
	struct eqos_rule *def;     /* the "default" rule, or NULL */
	GPtrArray *rules;          /* struct eqos_rule *: GUID and port group rules, file order */
};

struct eqos_policy {
	char *source;
	GPtrArray *names;          /* struct eqos_bw_name * */
	struct eqos_section port;  /* BW_RULES */
	struct eqos_section vport; /* VPORT_BW_RULES */
	GPtrArray *notes;          /* char *: read but not applied, as FILE:LINE:COL messages */
};

/* Parses text[0, len) (the file named name, for messages). NULL with *err (FILE:LINE:COL) when
 * the file is refused: a line outside a section, a section twice, a malformed or duplicate
 * name, rate or rule, an SL out of 0-15, a name not defined in BW_NAMES above it, a port group
 * in VPORT_BW_RULES, a NUL byte. */
struct eqos_policy *eqos_policy_parse_text(const char *text, size_t len, const char *name,
					   GError **err);
void eqos_policy_free(struct eqos_policy *p);

/* The rule of section s for port GUID guid: its GUID rule, else the first port group rule
 * whose group holds the port (in_group(group, ctx) != 0; in_group NULL: none), else NULL. */
const struct eqos_rule *eqos_rule_for(const struct eqos_section *s, uint64_t guid,
				      int (*in_group)(const char *group, void *ctx), void *ctx);
/* The per-SL rate limits (Mbps, 0 unlimited) rule r gives within section s: an SL the rule
 * names, else its "all", else what the section's default rule gives that SL (unlimited
 * without one). r NULL: the default rule's, all unlimited without one. With no_default the
 * section's default rule is not consulted (enhanced_qos_vport0_unlimit_default_rl for virtual
 * port 0). */
void eqos_rates(const struct eqos_section *s, const struct eqos_rule *r, int no_default,
		uint32_t out[EQOS_N_SL]);

#endif
