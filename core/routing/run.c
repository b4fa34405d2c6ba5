/* SPDX-License-Identifier: BSD-2-Clause */
/* run.c - one routing run: try the fallback list's engines in order, merge the winner under its scope,
 * keep its result with the generation; and the routing thread that runs it. */
#include <errno.h>
#include <string.h>
#include "base/mad_cpu.h"
#include "base/log.h"
#include "routing/orch.h"
#include "routing/run.h"
#include "routing/step_run.h"

static void append_why(GString *whys, const char *engine, const char *why)
{
	g_string_append_printf(whys, "%s%s: %s", whys->len ? "; " : "", engine, why);
}

static int cancelled(struct fallback_list *c)
{
	return c->candidates->len &&
	       ((struct routing_step *)g_ptr_array_index(c->candidates, 0))->core->cancelled(
		       ((struct routing_step *)g_ptr_array_index(c->candidates, 0))->core);
}

struct routing_result *routing_run(struct fallback_list *c, struct fabric *f, GError **err)
{
	if (c->orch)
		return orch_run(c->orch, f, err);
	gint64 t0 = g_get_monotonic_time();
	/* no tables of its own yet: the winning step's merged rows become r->lft (step_run.h,
	 * scratch NULL), so a run holds one n_switches x stride buffer, not three */
	struct routing_result *r = routing_result_new_untabled(f);
	struct ibsm_routes routes = { .size = sizeof(routes), .stride = r->stride };
	size_t bytes = (size_t)r->n_switches * r->stride;
	routes.lft = routing_tables_new(bytes);
	uint8_t *scratch = NULL;
	struct ibsm_scope scope = { .size = sizeof(scope), .step = 0 }; /* NULL bits: all */
	GString *whys = g_string_new(NULL);
	int routed = 0;
	for (guint i = 0; i < c->candidates->len && !routed && !cancelled(c); i++) {
		if (i == c->n_named && (i > 0 || c->n_skipped))
			LOG_I("RTE-0002", "no engine of '%s' could route%s%s%s; falling back to %s", c->spec,
			      c->n_skipped ? " (not loaded: " : "", c->skipped_names->str,
			      c->n_skipped ? ")" : "", ROUTING_FALLBACK);
		struct routing_step *s = g_ptr_array_index(c->candidates, i);
		char why[512];
		routed = routing_step_try(s, f, &scope, &routes, r, scratch, why, sizeof(why)) == 0;
		if (!routed) {
			LOG_I("RTE-0001", "routing engine %s declined: %s", s->engine->name, why);
			append_why(whys, s->engine->name, why);
		}
	}
	if (!routed && c->fallback_error)
		append_why(whys, ROUTING_FALLBACK, c->fallback_error);
	if (!routed && c->n_skipped) {
		char *pre = g_strdup_printf("%s%s", c->skipped->str, whys->len ? "; " : "");
		g_string_prepend(whys, pre);
		g_free(pre);
	}
	routing_tables_unref(routes.lft);
	if (!routed) {
		if (cancelled(c))
			g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_CANCELLED, "routing cancelled");
		else
			g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_ROUTE,
				    "no routing engine of '%s'%s could route: %s", c->spec,
				    c->candidates->len > c->n_named || c->fallback_error ? " nor " ROUTING_FALLBACK : "",
				    whys->str);
		g_string_free(whys, TRUE);
		routing_result_unref(r);
		return NULL;
	}
	g_string_free(whys, TRUE);
	r->seconds = (double)(g_get_monotonic_time() - t0) / 1e6;
	LOG_I("RTE-0003", "routed by %s in %.3f s (%u switches, LIDs up to %u)%s%s%s", r->engine,
	      r->seconds, r->n_switches, f->pub.max_lid, c->n_skipped ? "; not loaded, skipped: " : "",
	      c->skipped_names->str, c->n_skipped ? " (CHN-0003)" : "");
	return r;
}

/* ---- the routing thread ---- */

struct routing_job {
	struct fallback_list *chain;
	struct fabric *f;
	GThread *thread;
	gint done;
	gint64 t_start, t_end;       /* monotonic us: the thread's start and end */
	struct routing_result *result;
	GError *err;
};

static gpointer job_main(gpointer data)
{
	struct routing_job *j = data;
	j->result = routing_run(j->chain, j->f, &j->err);
	j->t_end = g_get_monotonic_time();
	g_atomic_int_set(&j->done, 1);
	return NULL;
}

struct routing_job *routing_job_start(struct fallback_list *c, struct fabric *f)
{
	struct routing_job *j = g_new0(struct routing_job, 1);
	j->chain = c;
	j->f = fabric_ref(f);
	fallback_list_cancel(c, 0);
	j->t_start = g_get_monotonic_time();
	j->thread = mad_cpu_thread_new("ibsm-routing", job_main, j);
	return j;
}

int routing_job_done(struct routing_job *j)
{
	return g_atomic_int_get(&j->done);
}

double routing_job_seconds(struct routing_job *j)
{
	gint64 end = routing_job_done(j) ? j->t_end : g_get_monotonic_time();
	return (double)(end - j->t_start) / 1e6;
}

struct routing_result *routing_job_join(struct routing_job *j, GError **err)
{
	g_thread_join(j->thread);
	struct routing_result *r = j->result;
	if (j->err)
		g_propagate_error(err, j->err);
	fabric_unref(j->f);
	g_free(j);
	return r;
}
