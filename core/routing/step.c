/* SPDX-License-Identifier: BSD-2-Clause */
/* step.c - a routing engine instance: set up with its services, torn down and closed with the
 * last reference (the fallback list's, or a result's). */
#include <errno.h>
#include "base/log.h"
#include "routing/services.h"
#include "routing/step.h"
#include "routing/verify.h"

struct routing_step *routing_step_ref(struct routing_step *s)
{
	if (s)
		g_atomic_int_inc(&s->refs);
	return s;
}

void routing_step_unref(struct routing_step *s)
{
	if (!s || !g_atomic_int_dec_and_test(&s->refs))
		return;
	if (s->setup_rc == 0 && s->engine->ops->teardown)
		s->engine->ops->teardown(s->inst);
	services_free(s->core);
	engine_unload(s->engine);
	verify_memo_free(s->verify_memo);
	g_free(s);
}

struct routing_step *routing_step_new(struct engine *e, uint32_t id, const struct sm_options *o,
				      GHashTable *step_config)
{
	struct routing_step *s = g_new0(struct routing_step, 1);
	s->refs = 1;
	s->id = id;
	s->engine = e;
	s->core = services_new(e->name, o, step_config, e->keys);
	s->setup_rc = e->ops->setup ? e->ops->setup(s->core, &s->inst) : 0;
	if (s->setup_rc < 0)
		LOG_E("STP-0001", "routing engine %s%s: setup failed (%s); it will decline every run",
		      e->name, id ? " (chain step)" : "", g_strerror(-s->setup_rc));
	return s;
}


