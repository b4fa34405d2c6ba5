/* SPDX-License-Identifier: BSD-2-Clause */
/* shortabi.c - test engine whose declared struct size is shorter than ABI 1.0's: the loader
 * must refuse it rather than read fields past its end. */
#include <ibsm/routing.h>

static int shortabi_route(void *inst, const struct ibsm_fabric *f, const struct ibsm_scope *s,
			  struct ibsm_routes *out, void **result)
{
	(void)inst; (void)f; (void)s; (void)out; (void)result;
	return 0;
}

__attribute__((visibility("default"))) const struct ibsm_engine ibsm_engine = {
	.abi_major = IBSM_ABI_MAJOR,
	.abi_minor = IBSM_ABI_MINOR,
	.size = 16,
	.name = "shortabi",
	.route = shortabi_route,
};
