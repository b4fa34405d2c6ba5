/* SPDX-License-Identifier: BSD-2-Clause */
/* orch_test.c - a third-party routing orchestrator (ABI 1.2) for tests/sim/37-chains.t: it
 * ignores the chain policy and routes the whole fabric with one step, updn as step 7, so its
 * tables and its step's dump files tell it apart from the default orchestrator. */
#include <stdio.h>
#include <stdlib.h>
#include <ibsm/orchestrator.h>

struct inst {
	const struct ibsm_orch_core *core;
	int step;
};

static int t_setup(const struct ibsm_orch_core *core, void **inst, char *why, size_t why_len)
{
	struct inst *t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(why, why_len, "out of memory");
		return -1;
	}
	t->core = core;
	t->step = core->step_open(core, 7, "updn", NULL, why, why_len);
	if (t->step < 0) {
		free(t);
		return -1;
	}
	core->log(core, IBSM_LOG_INFO, "orch_test: step 7 (updn) over the whole fabric");
	*inst = t;
	return 0;
}

static void t_teardown(void *inst)
{
	free(inst);
}

static int t_run(void *inst, const struct ibsm_fabric *f, char *why, size_t why_len)
{
	struct inst *t = inst;
	struct ibsm_scope all = { .size = sizeof(all) };
	(void)f;
	return t->core->step_route(t->core, t->step, &all, why, why_len);
}

IBSM_ORCH_EXPORT const struct ibsm_orchestrator ibsm_orchestrator = {
	IBSM_ORCHESTRATOR_INIT("orch_test"),
	.summary = "test orchestrator: updn over everything",
	.setup = t_setup,
	.teardown = t_teardown,
	.run = t_run,
};
