/* minhop.c - the default routing engine (and every chain's fallback): each switch sends each
 * LID out of a minimum-hop port, picking among equal ports the one that carries the fewest
 * LIDs so far, LMC-aware (the LIDs of one port leave by different systems, then nodes).
 * The fill loop, its threads and the -i ignore file live in plugins/common (mhc.h), shared
 * with dor; this file is the engine around them. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>
#include "mhc.h"

#define MINHOP_EXPORT __attribute__((visibility("default")))

struct minhop {
	const struct ibsm_core *core;
	struct mhc_ignore_cache ignore;
};

struct minhop_result {
	uint32_t generation;
	struct mhc_fill_stats st;
	uint32_t ignore_matched;
	double seconds;
};

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int minhop_setup(const struct ibsm_core *core, void **inst)
{
	struct minhop *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->core = core;
	*inst = m;
	return 0;
}

static void minhop_teardown(void *inst)
{
	struct minhop *m = inst;
	if (!m)
		return;
	mhc_ignore_cache_clear(&m->ignore);
	free(m);
}

static int minhop_route(void *inst, const struct ibsm_fabric *f, const struct ibsm_scope *sc,
			struct ibsm_routes *out, void **result)
{
	struct minhop *m = inst;
	const struct ibsm_core *core = m->core;
	double t0 = now_seconds();
	*result = NULL;
	if (f->max_lid && out->stride < f->max_lid + 1) {
		snprintf(out->why, sizeof(out->why),
			 "LFT row stride %u is shorter than max LID %u + 1", out->stride,
			 f->max_lid);
		return -EINVAL;
	}
	struct minhop_result *res = calloc(1, sizeof(*res));
	if (!res) {
		snprintf(out->why, sizeof(out->why), "out of memory");
		return -ENOMEM;
	}
	res->generation = f->generation;
	uint8_t *dest_ign = NULL, *exit_ign = NULL;
	int rc = mhc_ignore_apply(core, &m->ignore, f, &dest_ign, &exit_ign, &res->ignore_matched);
	if (rc < 0) {
		snprintf(out->why, sizeof(out->why), "out of memory");
		free(res);
		return rc;
	}
	struct mhc_fill opt = {
		.dest_ignored = dest_ign, .exit_ignored = exit_ign, .threads_key = "minhop_threads",
	};
	rc = mhc_fill_routes(core, f, sc, out, &opt, &res->st);
	res->seconds = now_seconds() - t0;
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

static void minhop_result_free(void *result)
{
	free(result);
}

static uint8_t minhop_path_sl(const void *result, uint8_t sl_hint, uint16_t slid, uint16_t dlid)
{
	(void)result;
	(void)slid;
	(void)dlid;
	return sl_hint;
}

/* minhop has nothing of its own to dump; the core writes the LFT dumps. */
static int minhop_dump(const void *result, const char *dir, const char *suffix)
{
	(void)result;
	(void)dir;
	(void)suffix;
	return 0;
}

MINHOP_EXPORT const struct ibsm_engine ibsm_engine = {
	IBSM_ENGINE_INIT("minhop"),
	.caps = IBSM_CAP_LMC,
	.setup = minhop_setup,
	.teardown = minhop_teardown,
	.route = minhop_route,
	.result_free = minhop_result_free,
	.path_sl = minhop_path_sl,
	.dump = minhop_dump,
};
