/* SPDX-License-Identifier: BSD-2-Clause */
/* badabi.c - test engine built for a future incompatible ABI (major 2): the loader must refuse
 * it with a message naming both versions. */
#include <ibsm/routing.h>

static int badabi_route(void *inst, const struct ibsm_fabric *f, const struct ibsm_scope *s,
			struct ibsm_routes *out, void **result)
{
	(void)inst; (void)f; (void)s; (void)out; (void)result;
	return 0;
}

__attribute__((visibility("default"))) const struct ibsm_engine ibsm_engine = {
	.abi_major = 2,
	.abi_minor = 0,
	.size = sizeof(struct ibsm_engine),
	.name = "badabi",
	.route = badabi_route,
};
