/* SPDX-License-Identifier: BSD-2-Clause */
/* newminor.c - test engine claiming a newer minor ABI than the core's: it may use fields the
 * core does not fill, so the loader must refuse it, naming both versions. */
#include <ibsm/routing.h>

static int newminor_route(void *inst, const struct ibsm_fabric *f, const struct ibsm_scope *s,
			  struct ibsm_routes *out, void **result)
{
	(void)inst; (void)f; (void)s; (void)out; (void)result;
	return 0;
}

__attribute__((visibility("default"))) const struct ibsm_engine ibsm_engine = {
	.abi_major = IBSM_ABI_MAJOR,
	.abi_minor = IBSM_ABI_MINOR + 1,
	.size = sizeof(struct ibsm_engine),
	.name = "newminor",
	.route = newminor_route,
};
