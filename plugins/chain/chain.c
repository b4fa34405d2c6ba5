/* SPDX-License-Identifier: BSD-2-Clause */
/* chain.c - the default routing orchestrator, "chain": runs the unicast steps of
 * rch_policy_file in ascending id order, each on its topology's part of the fabric, a later
 * step's routes replacing an earlier one's where their parts overlap (NVIDIA's SM manual,
 * "Routing Chains").
 *
 * When a step fails (its engine declines, or its tables leave holes in its part):
 *  - its fallback-to step, if it has one, routes the same part (its own topology and path
 *    bit when it names them);
 *  - when that fails too, or there is none: the first step falls back to minhop over the
 *    whole fabric, as -R does, unless routing_engine says no_fallback (then the generation is
 *    not routed and the previous routes stay); a later step's part keeps the routes of the
 *    steps before it, logged as an error, or under no_fallback the generation is not routed.
 * Every failure is logged with the engine's reason: the rule it found broken. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "chain.h"

static int chain_setup(const struct ibsm_orch_core *core, void **inst, char *why, size_t why_len)
{
	struct chain_inst *ci = g_new0(struct chain_inst, 1);
	ci->core = core;
	ci->handles = g_hash_table_new(g_direct_hash, g_direct_equal);
	ci->unloaded = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	ci->last_resort = -1;
	int rc = chain_policies_load(ci, why, why_len);
	if (rc < 0) {
		chain_policies_free(ci);
		g_hash_table_destroy(ci->handles);
		g_hash_table_destroy(ci->unloaded);
		g_free(ci);
		return rc;
	}
	*inst = ci;
	return 0;
}

static void chain_teardown(void *inst)
{
	struct chain_inst *ci = inst;
	chain_policies_free(ci);
	g_hash_table_destroy(ci->handles);
	g_hash_table_destroy(ci->unloaded);
	g_free(ci);
}

/* Step st on topology `topology`, path bits as path_from says. -ENOENT: the topology has no
 * switch in this fabric. */
static int route_one(struct chain_inst *ci, struct chain_scopes *cs, const struct chain_step *st,
		     uint32_t topology, const struct chain_step *path_from, int first, char *why,
		     size_t why_len)
{
	struct ibsm_scope s;
	if (!chain_scope_of(cs, topology, path_from, first, &s)) {
		snprintf(why, why_len, "topology %u has no switch in this fabric", topology);
		return -ENOENT;
	}
	if (ci->ran)
		g_hash_table_add(ci->ran, GUINT_TO_POINTER(st->id));
	const char *unloaded = g_hash_table_lookup(ci->unloaded, GUINT_TO_POINTER(st->id));
	if (unloaded) {
		snprintf(why, why_len, "skipped: its engine cannot be used (%s)", unloaded);
		return -ENOEXEC;
	}
	int h = GPOINTER_TO_INT(g_hash_table_lookup(ci->handles, GUINT_TO_POINTER(st->id))) - 1;
	return ci->core->step_route(ci->core, h, &s, why, why_len);
}

static int run_step(struct chain_inst *ci, struct chain_scopes *cs, const struct chain_step *st,
		    int first, char *why, size_t why_len)
{
	const struct ibsm_orch_core *core = ci->core;
	char ewhy[512] = "";
	int rc = route_one(ci, cs, st, st->topology, st, first, ewhy, sizeof(ewhy));
	if (rc == 0) {
		core->log(core, IBSM_LOG_VERBOSE, "step %u (%s, topology %u) routed", st->id,
			  st->engine, st->topology);
		return 0;
	}
	if (rc == -ENOENT) {
		core->log(core, IBSM_LOG_INFO, "step %u (%s): %s; nothing to route", st->id,
			  st->engine, ewhy);
		return 0;
	}
	if (rc == -ENOEXEC)
		core->log(core, IBSM_LOG_ERROR, "step %u (%s, topology %u) %s", st->id, st->engine,
			  st->topology, ewhy);
	else
		core->log(core, IBSM_LOG_ERROR, "step %u (%s, topology %u) failed: %s", st->id,
			  st->engine, st->topology, ewhy);
	const struct chain_step *fb = st->fallback;
	if (fb) {
		uint32_t topo = fb->at[CHAIN_Q_TOPOLOGY].line ? fb->topology : st->topology;
		const struct chain_step *bits = fb->at[CHAIN_Q_PATH_BIT].line ? fb : st;
		char fwhy[512] = "";
		core->log(core, IBSM_LOG_INFO, "step %u (%s) falls back to step %u (%s, topology %u)",
			  st->id, st->engine, fb->id, fb->engine, topo);
		if (route_one(ci, cs, fb, topo, bits, first, fwhy, sizeof(fwhy)) == 0) {
			core->log(core, IBSM_LOG_INFO, "fallback step %u (%s) routed step %u's part",
				  fb->id, fb->engine, st->id);
			return 0;
		}
		core->log(core, IBSM_LOG_ERROR, "fallback step %u (%s) failed too: %s", fb->id,
			  fb->engine, fwhy);
	}
	if (first && ci->last_resort >= 0) {
		struct ibsm_scope all;
		char lwhy[512] = "";
		chain_scope_of(cs, 0, NULL, 1, &all);
		core->log(core, IBSM_LOG_INFO, "the first step failed; minhop (step %u) routes the "
			  "whole fabric", ci->last_resort_id);
		if (core->step_route(core, ci->last_resort, &all, lwhy, sizeof(lwhy)) == 0)
			return 0;
		snprintf(why, why_len, "step %u (%s) failed (%s) and so did minhop: %s", st->id,
			 st->engine, ewhy, lwhy);
		return -EHOSTUNREACH;
	}
	if (first || ci->no_fallback) {
		snprintf(why, why_len, "step %u (%s) failed%s: %s", st->id, st->engine,
			 ci->no_fallback ? " (no_fallback)" : "", ewhy);
		return -EHOSTUNREACH;
	}
	core->log(core, IBSM_LOG_ERROR, "step %u (%s): its part keeps the routes of the steps "
		  "before it", st->id, st->engine);
	return 0;
}

/* The fallback-to steps this run did not need, named (their step routed, or did not run). */
static void log_unused_fallbacks(const struct chain_inst *ci)
{
	for (guint i = 0; i < ci->chain->steps->len; i++) {
		const struct chain_step *st = g_ptr_array_index(ci->chain->steps, i);
		if (!st->fallback_to || g_hash_table_contains(ci->ran, GUINT_TO_POINTER(st->id)))
			continue;
		ci->core->log(ci->core, IBSM_LOG_INFO, "step %u (%s): the fallback-to of step %u, not "
			      "run (step %u %s)", st->id, st->engine, st->fallback_to, st->fallback_to,
			      g_hash_table_contains(ci->ran, GUINT_TO_POINTER(st->fallback_to)) ?
			      "routed its part" : "did not run");
	}
}

static int chain_run(void *inst, const struct ibsm_fabric *f, char *why, size_t why_len)
{
	struct chain_inst *ci = inst;
	struct chain_scopes *cs = chain_scopes_new(ci, f);
	ci->ran = g_hash_table_new(g_direct_hash, g_direct_equal);
	int rc = 0;
	for (guint i = 0; i < ci->chain->order->len && rc == 0; i++) {
		if (ci->core->cancelled(ci->core)) {
			snprintf(why, why_len, "cancelled");
			rc = -ECANCELED;
			break;
		}
		rc = run_step(ci, cs, g_ptr_array_index(ci->chain->order, i), i == 0, why, why_len);
	}
	if (rc == 0)
		log_unused_fallbacks(ci);
	g_hash_table_destroy(ci->ran);
	ci->ran = NULL;
	chain_scopes_free(cs);
	return rc;
}

static const struct ibsm_config_key chain_keys[] = {
	{ "rch_policy_file", NULL, "the unicast steps (required)" },
	{ "topo_policy_file", NULL, "the topologies the steps name" },
	{ "pgrp_policy_file", NULL, "the port groups the topologies name" },
	{ "rch_balance_joins", "TRUE", "routes into a part from outside spread over every link "
	  "joining it (the core rewrites the whole-fabric steps' entries)" },
	{ NULL, NULL, NULL },
};

IBSM_ORCH_EXPORT const struct ibsm_orchestrator ibsm_orchestrator = {
	IBSM_ORCHESTRATOR_INIT("chain"),
	.summary = "routing chains: unicast steps of rch_policy_file, each an engine on a topology",
	.config_keys = chain_keys,
	.setup = chain_setup,
	.teardown = chain_teardown,
	.run = chain_run,
};
