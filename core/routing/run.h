/* SPDX-License-Identifier: BSD-2-Clause */
/* run.h - routing one generation with a fallback list, on the caller's thread or on the routing
 * thread while the main thread keeps serving MADs (SMInfo, traps, later the SA). */
#ifndef IBSM_ROUTING_RUN_H
#define IBSM_ROUTING_RUN_H

#include <glib.h>
#include "fabric/model.h"
#include "routing/fallback_list.h"
#include "routing/result.h"

/* Routes f with a full scope: each candidate of c in order until one's route() returns >= 0
 * (each decline logged with its why), merged by the core. Returns the routes (one reference),
 * or NULL with *err: ENGINE_ERROR_ROUTE when every engine declined (the message lists every
 * why), ENGINE_ERROR_CANCELLED when cancelled (fallback_list_cancel(); routing_job_start()
 * clears the flag first). */
struct routing_result *routing_run(struct fallback_list *c, struct fabric *f, GError **err);

/* The same on the routing thread. c and f must outlive the job (f is referenced). */
struct routing_job;
struct routing_job *routing_job_start(struct fallback_list *c, struct fabric *f);
int routing_job_done(struct routing_job *j);             /* non-zero once it finished */
/* Seconds from the job's start to its end (so far, while it runs). */
double routing_job_seconds(struct routing_job *j);
/* Waits for the job, frees it and returns what routing_run() would have. */
struct routing_result *routing_job_join(struct routing_job *j, GError **err);

#endif
