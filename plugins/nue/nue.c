/* SPDX-License-Identifier: BSD-2-Clause */
/* nue.c - the nue routing engine (OpenSM 3.3.23's -R nue): routes free of credit loops on any
 * topology and any number of VLs, one included, by routing each destination on the channel
 * dependency graph of its virtual layer (Domke, Hoefler, Matsuoka, HPDC 2016). This file is
 * the engine's table: its keys, route() (route.c does the work) and what the core asks later:
 * a path's SL is its destination's layer, and the SL2VL tables map SL to VL one to one. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine_glue.h"
#include "route.h"

static const struct engine_run_spec nue_run = {
	.name = "nue", .result_size = sizeof(struct nue_result), .result_free = nue_result_free,
};

static void read_options(const struct ibsm_core *core, struct nue_options *o)
{
	o->max_vls = (unsigned)ibsm_config_ulong(core, "nue_max_num_vls", 1);
	o->include_switches = ibsm_config_bool(core, "nue_include_switches", 0);
	o->passes = (unsigned)ibsm_config_ulong(core, "nue_passes", 2);
	if (o->passes > 16)
		o->passes = 16;
	o->trials = (unsigned)ibsm_config_ulong(core, "nue_trials", 0);
	o->threads = engine_thread_count(core, "nue_threads", 2, 2, 2);
}

static void log_result(const struct ibsm_core *core, const struct nue_result *r)
{
	char per[16 * 12] = "";
	for (uint32_t l = 0; l < r->layers; l++)
		snprintf(per + strlen(per), sizeof(per) - strlen(per), "%s%u", l ? "/" : "",
			 r->per_layer[l]);
	if (r->escaped_dests)
		core->log(core, IBSM_LOG_VERBOSE,
			  "%u destinations took escape paths at an impasse (%llu switch routes)",
			  r->escaped_dests, (unsigned long long)r->escaped_switches);
	if (r->outside)
		core->log(core, IBSM_LOG_INFO,
			  "%llu switch routes toward switch LIDs are outside the layers' dependency "
			  "graphs (nue_include_switches is FALSE; CA routes are free of credit loops)",
			  (unsigned long long)r->outside);
	if (r->unreachable)
		core->log(core, IBSM_LOG_INFO, "%llu (switch, LID) pairs have no path in scope",
			  (unsigned long long)r->unreachable);
	if (r->cyclic)
		core->log(core, IBSM_LOG_ERROR, "a layer's dependency graph holds a cycle "
			  "(internal error): the routes are not free of credit loops");
	core->log(core, IBSM_LOG_INFO,
		  "%u destination LIDs (%u switch LIDs, %s) on %u virtual layer%s of %u VLs (%s); "
		  "kept trial %u of %u (%u passes each, %u threads) in %.3f s; switch-link load max "
		  "%llu, max/mean %.2f", r->dests, r->switch_dests,
		  r->include_switches ? "routed among the CAs" : "routed after the CAs", r->layers,
		  r->layers == 1 ? "" : "s", r->vls, per, r->kept_trial + 1, r->trials, r->passes,
		  r->threads, r->seconds, (unsigned long long)r->load_max,
		  r->load_mean > 0 ? (double)r->load_max / r->load_mean : 0.0);
}

static int nue_route(void *inst, const struct ibsm_fabric *f, const struct ibsm_scope *sc,
		     struct ibsm_routes *out, void **result)
{
	struct engine_run run;
	int rc = engine_run_begin(&run, &nue_run, inst, f, sc, out, result);
	if (rc < 0)
		return rc;
	struct nue_result *res = run.res;
	res->generation = f->generation;
	struct nue_options o;
	read_options(run.core, &o);
	rc = nue_route_scope(run.core, f, sc, &o, out, res);
	res->seconds = engine_run_seconds(&run);
	if (rc == 0)
		log_result(run.core, res);
	return engine_run_end(&run, rc);
}

/* The destination's layer; with one layer the SL asked for (any VL is free of loops then). */
static uint8_t nue_path_sl(const void *result, uint8_t sl_hint, uint16_t slid, uint16_t dlid)
{
	const struct nue_result *r = result;
	(void)slid;
	if (r->layers <= 1 || dlid > r->max_lid || r->lid_layer[dlid] == 0xFF)
		return sl_hint;
	return r->lid_layer[dlid];
}

/* SL i on VL i for the layers; the other SLs share them (SL mod layers). One layer: the core's
 * tables as configured. */
static int nue_sl2vl(const void *result, uint32_t in_port, uint32_t out_port, uint8_t vl[16])
{
	const struct nue_result *r = result;
	(void)in_port;
	(void)out_port;
	if (r->layers <= 1)
		return -1;
	for (unsigned sl = 0; sl < 16; sl++)
		vl[sl] = (uint8_t)(sl % r->layers);
	return 0;
}

static const struct ibsm_config_key nue_keys[] = {
	{ "nue_max_num_vls", "1", "Virtual layers (VLs) nue may use: 1 keeps every route on one "
	  "VL; 0 takes as many as every switch link has (max_op_vls, VLCap)" },
	{ "nue_include_switches", "FALSE", "Route to switch LIDs as to CAs, counted in the "
	  "balance (FALSE: after the CAs, on their layers where the turns allow)" },
	{ "nue_passes", "2", "Balancing passes after the first: every destination routed again "
	  "against the load of all the others (0: OpenSM's single pass)" },
	{ "nue_trials", "0", "Trials with other escape-tree roots, the best tables kept (0: as "
	  "many as a fixed work budget allows, up to 32)" },
	{ "nue_threads", "0", "Threads running the trials (0: automatic, 1 or 2)" },
	{ "max_op_vls", NULL, "Largest OperVLs the core programs (1..5): caps nue's layers" },
	{ NULL, NULL, NULL },
};

IBSM_ENGINE_EXPORT const struct ibsm_engine ibsm_engine = {
	IBSM_ENGINE_INIT("nue"),
	.caps = IBSM_CAP_LMC,
	.setup = engine_inst_setup,
	.teardown = engine_inst_teardown,
	.route = nue_route,
	.result_free = nue_result_free,
	.path_sl = nue_path_sl,
	.sl2vl = nue_sl2vl,
	.dump = engine_dump_nothing,
	.config_keys = nue_keys,
	.summary = "Nue: routes on the channel dependency graph, free of credit loops on any "
		   "topology with any number of VLs (one included), balanced by link load",
};
