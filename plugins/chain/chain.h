/* SPDX-License-Identifier: BSD-2-Clause */
/* chain.h - the default routing orchestrator (NVIDIA's routing chains): what setup() keeps
 * (the three policies and a step handle per unicast step) and how a topology becomes a scope. */
#ifndef CHAIN_ORCH_H
#define CHAIN_ORCH_H

#include <glib.h>
#include <ibsm/orchestrator.h>
#include "policy/chain_policy.h"
#include "policy/port_groups.h"

struct chain_inst {
	const struct ibsm_orch_core *core;
	struct pgrp_policy *groups;     /* NULL: no pgrp_policy_file (the predefined groups only) */
	struct topo_policy *topos;      /* NULL: no topo_policy_file (topology 0 only) */
	struct chain_policy *chain;
	GHashTable *handles;            /* step id -> handle + 1 (GUINT_TO_POINTER) */
	GHashTable *unloaded;           /* step id -> why its engine cannot be used (char *): the
					 * step is skipped like one that failed, its fallback used */
	GHashTable *ran;                /* during run(): ids of the steps tried (a set) */
	int last_resort;                /* handle of minhop over everything, or -1 (no_fallback) */
	uint32_t last_resort_id;
	int no_fallback;                /* routing_engine says no_fallback */
};

/* setup(): reads and checks the policies named by the configuration, opens every step (and
 * the last resort). 0, or < 0 with why ("FILE:LINE:COL: ..."). */
int chain_policies_load(struct chain_inst *ci, char *why, size_t why_len);
void chain_policies_free(struct chain_inst *ci);

/* The scopes of one fabric generation: the port groups resolved over its ports. */
struct chain_scopes;
struct chain_scopes *chain_scopes_new(const struct chain_inst *ci, const struct ibsm_fabric *f);
void chain_scopes_free(struct chain_scopes *cs);
/* The scope of topology id (0: the whole fabric) with the step's path bits: filled into *s
 * (its bit sets live in cs). Returns the number of switches in it (n_switches for 0). */
uint32_t chain_scope_of(struct chain_scopes *cs, uint32_t topology, const struct chain_step *step,
			int first, struct ibsm_scope *s);

#endif
