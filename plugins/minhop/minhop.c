/* SPDX-License-Identifier: BSD-2-Clause */
/* minhop.c - the default routing engine (and every chain's fallback): each switch sends each
 * LID out of a minimum-hop port, picking among equal ports the one that carries the fewest
 * LIDs so far, LMC-aware (the LIDs of one port leave by different systems, then nodes).
 * The fill loop, its threads and the -i ignore file live in plugins/common (mhc.h), shared
 * with dor, and the engine boilerplate in engine_glue.h; this file is the engine around them. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>
#include "engine_glue.h"
#include "mhc.h"

struct minhop_result {
	uint32_t generation;
	struct mhc_fill_stats st;
	uint32_t ignore_matched;
	double seconds;
};

static const struct engine_run_spec minhop_run = {
	.name = "minhop", .result_size = sizeof(struct minhop_result), .result_free = free,
};

static int minhop_route(void *inst, const struct ibsm_fabric *f, const struct ibsm_scope *sc,
			struct ibsm_routes *out, void **result)
{
	struct engine_run run;
	int rc = engine_run_begin(&run, &minhop_run, inst, f, sc, out, result);
	if (rc < 0)
		return rc;
	const struct ibsm_core *core = run.core;
	struct minhop_result *res = run.res;
	res->generation = f->generation;
	rc = mhc_ignore_apply(&run, f);
	if (rc < 0)
		return engine_run_end(&run, rc);
	res->ignore_matched = run.ignore_matched;
	struct mhc_order_opts order;
	struct mhc_fill opt = {
		.memo_owner = run.inst, /* a link change refills only the rows it touched */
		.dest_ignored = run.dest_ign, .exit_ignored = run.exit_ign,
		.threads_key = "minhop_threads",
	};
	if ((rc = mhc_inputs_load(core, f, &order, &opt, out)) < 0)
		return engine_run_end(&run, rc);
	const char *opath = engine_config_path(core, "port_search_ordering_file");
	uint8_t *search_rank = NULL;
	if (opath && (rc = mhc_search_order_load(core, f, opath, &search_rank, out)) < 0) {
		free((uint8_t *)opt.weights);
		return engine_run_end(&run, rc);
	}
	opt.search_rank = search_rank;
	rc = mhc_fill_routes(core, f, sc, out, &opt, &res->st);
	free((uint8_t *)opt.weights);
	free(search_rank);
	res->seconds = engine_run_seconds(&run);
	if (rc < 0)
		return engine_run_end(&run, rc);
	mhc_fill_log(core, &res->st, "", res->seconds);
	return engine_run_end(&run, 0);
}

static const struct ibsm_config_key minhop_keys[] = {
	MHC_IGNORE_FILE_KEY,
	MHC_ORDER_KEYS,
	{ "port_search_ordering_file", NULL, "Switch GUID and port numbers a line: the order its "
	  "ports are searched for the least loaded (the others after, in port order; OpenSM's -O)" },
	{ "minhop_threads", "0", "Threads filling the switch rows (0: automatic, 1 or 2)" },
	{ NULL, NULL, NULL },
};

IBSM_ENGINE_EXPORT const struct ibsm_engine ibsm_engine = {
	IBSM_ENGINE_INIT("minhop"),
	.caps = IBSM_CAP_LMC,
	.setup = engine_inst_setup,     /* engine_inst's stamp: the -i file as last read */
	.teardown = engine_inst_teardown,
	.route = minhop_route,
	.result_free = free,
	.path_sl = engine_path_sl_hint,
	.dump = engine_dump_nothing, /* nothing of its own; the core writes the LFT dumps */
	.config_keys = minhop_keys,
	.summary = "Min-hop routing: every LID out of a shortest-path port, balanced per switch "
		   "and LMC-aware; the fallback of every chain",
};
