/* SPDX-License-Identifier: BSD-2-Clause */
/* orch.h - a routing orchestrator plugin (ABI 1.2, ibsm/orchestrator.h) in the core: the
 * services it is lent (open engines as chain steps, route a step on a scope), its set-up when
 * the chain is built and its run on each fabric generation, with the core's merge, walks and
 * per-step dump records around every step. */
#ifndef IBSM_ROUTING_ORCH_H
#define IBSM_ROUTING_ORCH_H

#include <glib.h>
#include "config/options.h"
#include "fabric/model.h"
#include "routing/loader.h"
#include "routing/result.h"

struct orch;

/* Sets up orchestrator e (taken over, also on failure) for a chain: the steps it opens go into
 * steps (struct routing_step *, owned by the caller), in the order it opens them. o is read during the call only (configuration,
 * plugin directory, dump flags). NULL with *err naming the orchestrator and its reason. */
struct orch *orch_new(struct engine *e, GPtrArray *steps, const struct sm_options *o,
		      GError **err);
void orch_free(struct orch *o);
void orch_cancel(struct orch *o, int on);
int orch_cancelled(const struct orch *o);
const char *orch_name(const struct orch *o);

/* Routes f: the orchestrator's run(), then a walk of the whole table. The routes, or NULL with
 * *err (ENGINE_ERROR_ROUTE with the orchestrator's reason or the first hole;
 * ENGINE_ERROR_CANCELLED). */
struct routing_result *orch_run(struct orch *o, struct fabric *f, GError **err);

#endif
