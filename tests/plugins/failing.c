/* SPDX-License-Identifier: BSD-2-Clause */
/* failing.c - test engine that always declines, saying why: drives the fallback of
 * "-R failing,next" and the no_fallback case. */
#include <stdio.h>
#include <ibsm/routing.h>

static int failing_route(void *inst, const struct ibsm_fabric *f, const struct ibsm_scope *s,
			 struct ibsm_routes *out, void **result)
{
	(void)inst; (void)f; (void)s; (void)result;
	/* scribble on the table first: a declined engine's rows must never reach the switches */
	for (uint32_t i = 0; i < f->n_switches * out->stride; i++)
		out->lft[i] = 1;
	snprintf(out->why, sizeof(out->why), "test: always fails");
	return -1;
}

__attribute__((visibility("default"))) const struct ibsm_engine ibsm_engine = {
	IBSM_ENGINE_INIT("failing"),
	.route = failing_route,
};
