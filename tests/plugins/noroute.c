/* SPDX-License-Identifier: BSD-2-Clause */
/* noroute.c - test engine of the right ABI but without route(): the loader must refuse it. */
#include <ibsm/routing.h>

__attribute__((visibility("default"))) const struct ibsm_engine ibsm_engine = {
	IBSM_ENGINE_INIT("noroute"),
};
