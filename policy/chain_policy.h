/* SPDX-License-Identifier: BSD-2-Clause */
/* chain_policy.h - routing chains (NVIDIA's SM manual, "Routing Chains"): the topology policy
 * (topo_policy_file: numbered topologies, each a switch port group and a CA port group) and the
 * routing chain policy (rch_policy_file: unicast steps, each an engine over a topology, with its
 * own configuration file, fallback and path bit). Part of the policy library: the models, their
 * parsers, the check of the two files against each other and against the port groups; no
 * fabric here and no logging (messages go back to the caller).
 * The grammar both files share is policy/chain_stanza.h's (struct chain_at too); the choices
 * within each file are policy/topo_parse.c's and policy/chain_parse.c's. Every error refuses
 * the whole file: NULL and *err "NAME:LINE:COL: what". */
#ifndef IBSM_POLICY_CHAIN_POLICY_H
#define IBSM_POLICY_CHAIN_POLICY_H

#include <glib.h>
#include <stdint.h>
#include "policy/chain_stanza.h"

/* ---- the topology policy (topo_policy_file) --------------------------------------------- */

enum topo_qualifier { TOPO_Q_ID, TOPO_Q_SW_GRP, TOPO_Q_HCA_GRP, TOPO_Q_N };

struct topo_def {
	uint32_t id;               /* 1 and up, unique; 0 is the whole fabric, never defined here */
	char *sw_grp;              /* port group of the switches (and switch ports) it holds */
	char *hca_grp;             /* port group of the CAs it holds */
	unsigned line;             /* the "topology" line */
	struct chain_at at[TOPO_Q_N];      /* where each value starts (all three are mandatory) */
};

struct topo_policy {
	char *source;              /* the file name the messages use */
	GPtrArray *topologies;     /* struct topo_def *, in file order */
	GPtrArray *notes;          /* char *: "FILE:LINE:COL: ..." assumptions made */
};

struct topo_policy *topo_policy_parse_text(const char *text, size_t len, const char *name,
					   GError **err);
void topo_policy_free(struct topo_policy *t);
/* The topology with that id, or NULL (also for 0, the whole fabric, and for t NULL). */
const struct topo_def *topo_policy_find(const struct topo_policy *t, uint32_t id);

#define TOPO_POLICY_ERROR topo_policy_error_quark()
GQuark topo_policy_error_quark(void);
enum topo_policy_error { TOPO_POLICY_ERROR_SYNTAX = 1 };

/* ---- the routing chain policy (rch_policy_file) ----------------------------------------- */

enum chain_qualifier {
	CHAIN_Q_ID, CHAIN_Q_ENGINE, CHAIN_Q_USE, CHAIN_Q_CONFIG, CHAIN_Q_TOPOLOGY,
	CHAIN_Q_FALLBACK_TO, CHAIN_Q_PATH_BIT, CHAIN_Q_N
};

#define CHAIN_ENGINE_NAME_MAX 63   /* the loader's: an engine name is shorter than 64 bytes */
#define CHAIN_PATH_BIT_MAX    127  /* a LID offset below 2^lmc, and lmc is at most 7 */

struct chain_step {
	uint32_t id;               /* 1 and up, unique: steps run in ascending id order */
	char *engine;              /* a plugin name ([A-Za-z0-9_.+-], not starting with '.'); the
				    * parser does not know which plugins exist: the caller checks */
	char *use;                 /* what the step is for; "" when not given */
	char *config;              /* the step's own configuration file, or NULL */
	uint32_t topology;         /* the topology it routes; 0 (also when not given): all */
	uint32_t fallback_to;      /* this step replaces step fallback_to when that one fails;
				    * 0: not a fallback (a fallback is not in the chain's order) */
	uint8_t path_bit;          /* the LID offset it routes, 0 to CHAIN_PATH_BIT_MAX; 0 when
				    * not given (at[CHAIN_Q_PATH_BIT].line tells "path-bit: 0") */
	unsigned line;             /* the "unicast-step" line */
	struct chain_at at[CHAIN_Q_N];     /* where each value starts; line 0: not given */
	const struct chain_step *fallback; /* the step that replaces this one, or NULL */
};

struct chain_policy {
	char *source;              /* the file name the messages use */
	GPtrArray *steps;          /* struct chain_step *, in file order (at least one) */
	GPtrArray *order;          /* the chain as it runs: the steps that are not fallbacks, by
				    * ascending id (borrowed pointers into steps) */
	GPtrArray *notes;          /* char *: "FILE:LINE:COL: ..." assumptions made */
};

/* Within the file: the stanza grammar above; id and engine mandatory; unique ids from 1;
 * fallback-to names another step of the file (before or after it) that is not itself a
 * fallback and has no other fallback; the step that runs first (the lowest id; also the lowest
 * id that is not a fallback, and that one's fallback) routes topology 0 with path bit 0. */
struct chain_policy *chain_policy_parse_text(const char *text, size_t len, const char *name,
					     GError **err);
void chain_policy_free(struct chain_policy *c);
const struct chain_step *chain_policy_find(const struct chain_policy *c, uint32_t id);

/* The two files together, with the port groups and the main configuration's LMC: every step's
 * topology is 0 or defined in t (t may be NULL: no topology file); every topology's sw-grp and
 * hca-grp name a port group for which group_exists(name, ctx) is nonzero (the callback also
 * answers for the predefined ALL, ALL_SWITCHES, ALL_CAS and ALL_ROUTERS); every path bit is
 * below 2^lmc (a path bit above 0 needs lmc > 0). 0 when all hold; -1 and *err
 * (CHAIN_POLICY_ERROR_CHECK) "FILE:LINE:COL: what" at the value that refers, in its file. */
int chain_policy_check(const struct chain_policy *c, const struct topo_policy *t,
		       int (*group_exists)(const char *name, void *ctx), void *ctx, unsigned lmc,
		       GError **err);

/* May a step's own configuration file set this key? 0 for those that take effect only in the
 * main configuration file: qos, qos_*, lmc and routing_engine (the caller notes and ignores
 * them); 1 for every other key (whether it is a key at all is the caller's question). */
int chain_step_key_allowed(const char *key);

#define CHAIN_POLICY_ERROR chain_policy_error_quark()
GQuark chain_policy_error_quark(void);
enum chain_policy_error { CHAIN_POLICY_ERROR_SYNTAX = 1, CHAIN_POLICY_ERROR_CHECK };

#endif
