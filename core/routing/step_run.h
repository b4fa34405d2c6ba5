/* SPDX-License-Identifier: BSD-2-Clause */
/* step_run.h - running one routing step on a fabric generation into a result. */
#ifndef IBSM_ROUTING_STEP_RUN_H
#define IBSM_ROUTING_STEP_RUN_H

#include <glib.h>
#include "fabric/model.h"
#include "routing/result.h"
#include "routing/step.h"

/* One step on f within scope: route(), merge over r->lft (through scratch, r->n_switches *
 * r->stride bytes), walk. On success r->lft holds the merged tables, the step's result is a
 * part of r and owns the scope's LIDs. < 0 with why (the rule the engine found broken, or
 * the first hole), r->lft unchanged. routes->lft keeps the engine's own rows either way.
 * scratch NULL: r->lft must hold no route anywhere (or be NULL, r->n_switches and r->stride
 * set); the merge is done inside routes->lft and on success the two buffers are swapped
 * (routes->lft then gets r->lft's old one, maybe NULL); on failure routes->lft holds the
 * merged rows, not the engine's own. One n_switches x stride buffer instead of three. */
int routing_step_try(struct routing_step *s, struct fabric *f, const struct ibsm_scope *scope,
		     struct ibsm_routes *routes, struct routing_result *r, uint8_t *scratch,
		     char *why, size_t why_len);

#endif
