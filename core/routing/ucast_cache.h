/* SPDX-License-Identifier: BSD-2-Clause */
/* ucast_cache.h - the unicast routing cache (-A): the last routed tables kept by switch GUID,
 * with the neighbour behind every port, so a heavy sweep can keep them when still valid. */
#ifndef IBSM_UCAST_CACHE_H
#define IBSM_UCAST_CACHE_H

#include <stdint.h>
#include "fabric/model.h"

struct ucast_cache;

struct ucast_cache *ucast_cache_new(void);
void ucast_cache_free(struct ucast_cache *c);
/* Remembers generation f's final tables (n_switches x stride). */
void ucast_cache_store(struct ucast_cache *c, const struct fabric *f, const uint8_t *lft,
		       uint32_t stride);
/* Fills lft (n_switches x stride for f, stride = f's max_lid + 1) from the cache if the cached
 * routes are still valid on f: every switch known, every live LID routed on every switch, and
 * every exit port used still linked to the same neighbour as when the routes were made. LIDs
 * no port holds any more (a CA gone) get no route, as a fresh routing gives them.
 * Returns 1 when filled, 0 when the routes must be computed (why says why). */
int ucast_cache_apply(const struct ucast_cache *c, const struct fabric *f, uint8_t *lft,
		      uint32_t stride, char *why, size_t why_len);

#endif
