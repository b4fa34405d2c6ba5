/* SPDX-License-Identifier: BSD-2-Clause */
/* tables.h - LFT tables (n_switches rows of stride bytes) behind a reference count of their
 * own: a routing result's (its lft, and the buffer a run routes into before it becomes one),
 * which the walk's memo of a step (routing/verify.h) and the step's services (the rows an
 * engine's last route() left, routing/services.h) keep without the result, which holds the
 * step. A leaf: it needs nothing of routing/. */
#ifndef IBSM_ROUTING_TABLES_H
#define IBSM_ROUTING_TABLES_H

#include <stddef.h>
#include <stdint.h>

/* The bytes are left unset; one reference. */
uint8_t *routing_tables_new(size_t bytes);
uint8_t *routing_tables_ref(uint8_t *lft);
/* The last reference frees them; NULL: nothing. A void * to be a release callback. */
void routing_tables_unref(void *lft);
int routing_tables_refs(const uint8_t *lft); /* how many hold them (tests) */

#endif
