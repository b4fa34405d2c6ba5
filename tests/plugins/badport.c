/* SPDX-License-Identifier: BSD-2-Clause */
/* badport.c - test engine that "routes" every LID of every switch out of port 250, which no
 * switch has, and says it succeeded: the core must refuse the entries, find every destination
 * unreachable and treat the engine as failed (fall back, or with no_fallback program nothing). */
#include <string.h>
#include <ibsm/routing.h>

static int badport_route(void *inst, const struct ibsm_fabric *f, const struct ibsm_scope *s,
			 struct ibsm_routes *out, void **result)
{
	(void)inst; (void)s; (void)result;
	memset(out->lft, 250, (size_t)f->n_switches * out->stride);
	return 0;
}

IBSM_ENGINE_EXPORT const struct ibsm_engine ibsm_engine = {
	IBSM_ENGINE_INIT("badport"),
	.route = badport_route,
	.summary = "test engine: every entry out of a port that does not exist",
};
