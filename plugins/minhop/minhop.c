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

static int minhop_route(void *inst, const struct ibsm_fabric *f, const struct ibsm_scope *sc,
			struct ibsm_routes *out, void **result)
{
	struct engine_inst *m = inst;
	const struct ibsm_core *core = m->core;
	double t0 = engine_now_seconds();
	*result = NULL;
	int rc = engine_check_stride(f, out);
	if (rc < 0)
		return rc;
	struct minhop_result *res = calloc(1, sizeof(*res));
	if (!res) {
		snprintf(out->why, sizeof(out->why), "out of memory");
		return -ENOMEM;
	}
	res->generation = f->generation;
	uint8_t *dest_ign = NULL, *exit_ign = NULL;
	rc = mhc_ignore_apply(core, &m->stamp, f, &dest_ign, &exit_ign, &res->ignore_matched);
	if (rc < 0) {
		snprintf(out->why, sizeof(out->why), "out of memory");
		free(res);
		return rc;
	}
	struct mhc_fill opt = {
		.dest_ignored = dest_ign, .exit_ignored = exit_ign, .threads_key = "minhop_threads",
	};
	rc = mhc_fill_routes(core, f, sc, out, &opt, &res->st);
	res->seconds = engine_now_seconds() - t0;
	free(dest_ign);
	free(exit_ign);
	if (rc < 0) {
		free(res);
		return rc;
	}
	if (res->st.unreachable)
		core->log(core, IBSM_LOG_INFO,
			  "%llu (switch, LID) pairs have no path in scope",
			  (unsigned long long)res->st.unreachable);
	core->log(core, IBSM_LOG_VERBOSE,
		  "%llu LFT entries on %u switches to %u end ports in %.3f s (%u threads)",
		  (unsigned long long)res->st.routed, res->st.rows, res->st.dests, res->seconds,
		  res->st.threads);
	*result = res;
	return 0;
}

static const struct ibsm_config_key minhop_keys[] = {
	MHC_IGNORE_FILE_KEY,
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
