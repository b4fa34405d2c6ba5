/* SPDX-License-Identifier: BSD-2-Clause */
/* slow.c - test engine that routes nothing and waits to be cancelled: route() polls
 * core->cancelled() and returns -ECANCELED when it says so, or gives up with -ETIMEDOUT and a
 * "never cancelled" why after `slow_seconds` (default 60), so a test can tell a working
 * cancellation from a broken one by the outcome, not by the clock. */
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <ibsm/routing.h>

static const struct ibsm_config_key slow_keys[] = {
	{ "slow_seconds", "60", "How long the slow test engine waits to be cancelled" },
	{ NULL, NULL, NULL },
};

static int slow_setup(const struct ibsm_core *core, void **inst)
{
	*inst = (void *)core;
	return 0;
}

static int slow_route(void *inst, const struct ibsm_fabric *f, const struct ibsm_scope *s,
		      struct ibsm_routes *out, void **result)
{
	const struct ibsm_core *core = inst;
	(void)f; (void)s; (void)result;
	unsigned long limit_ms = ibsm_config_ulong(core, "slow_seconds", 60) * 1000;
	core->log(core, IBSM_LOG_INFO, "routing slowly, waiting to be cancelled");
	for (unsigned long ms = 0; ms < limit_ms; ms++) {
		if (core->cancelled(core)) {
			snprintf(out->why, sizeof(out->why), "cancelled after %lu ms", ms);
			return -ECANCELED;
		}
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	snprintf(out->why, sizeof(out->why), "never cancelled");
	return -ETIMEDOUT;
}

IBSM_ENGINE_EXPORT const struct ibsm_engine ibsm_engine = {
	IBSM_ENGINE_INIT("slow"),
	.setup = slow_setup,
	.route = slow_route,
	.config_keys = slow_keys,
	.summary = "test engine: waits to be cancelled",
};
