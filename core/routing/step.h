/* SPDX-License-Identifier: BSD-2-Clause */
/* step.h - one routing engine set up as a step (of the -R list or of a routing chain): its
 * instance, its services (with the step's own configuration) and its reference count, shared by
 * the -R list, the orchestrator's steps and the results they computed. */
#ifndef IBSM_ROUTING_STEP_H
#define IBSM_ROUTING_STEP_H

#include <glib.h>
#include <ibsm/routing.h>
#include "config/options.h"
#include "routing/loader.h"

/* One engine instance. Reference-counted: the fallback list holds one, and so does every result the
 * instance computed; the last reference tears the instance down and closes the plugin. */
struct routing_step {
	gint refs;
	uint32_t id;                 /* chain step id (scope.step) */
	struct engine *engine;
	struct ibsm_core *core;      /* services lent to this instance */
	void *inst;                  /* from setup() */
	int setup_rc;                /* < 0: setup() failed; the step declines every run */
	struct verify_memo *verify_memo; /* its last whole walk (routing/verify.h): routing thread */
};

/* A step instance of engine e (taken over): its services with configuration from o, overridden
 * by step_config (key -> value, may be NULL), and setup() now; a failure is kept, and the step
 * then declines every run with that reason. */
struct routing_step *routing_step_new(struct engine *e, uint32_t id, const struct sm_options *o,
				      GHashTable *step_config);
struct routing_step *routing_step_ref(struct routing_step *s);
void routing_step_unref(struct routing_step *s);

#endif
