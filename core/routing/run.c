/* SPDX-License-Identifier: BSD-2-Clause */
/* run.c - one routing run: try the chain's engines in order, merge the winner under its scope,
 * keep its result with the generation; and the routing thread that runs it. */
#include <errno.h>
#include <string.h>
#include "base/log.h"
#include "routing/merge.h"
#include "routing/orch.h"
#include "routing/run.h"
#include "routing/verify.h"

static void append_why(GString *whys, const char *engine, const char *why)
{
	g_string_append_printf(whys, "%s%s: %s", whys->len ? "; " : "", engine, why);
}

/* The step's rows merged over what earlier steps left (r->lft) into scratch, then walked:
 * holes make the step a failure whatever route() returned. 0, or -EHOSTUNREACH with why. */
static int merge_and_verify(struct routing_step *s, struct fabric *f, const struct ibsm_scope *scope,
			    const struct ibsm_routes *routes, struct routing_result *r, uint8_t *scratch,
			    char *why, size_t why_len)
{
	size_t bytes = (size_t)r->n_switches * r->stride;
	memcpy(scratch, r->lft, bytes);
	int refused = routing_merge(f, scope, routes, scratch, r->stride, NULL, 0);
	r->rejected = refused > 0 ? (uint32_t)refused : 0;
	struct routing_holes h;
	gint64 t0 = g_get_monotonic_time();
	uint64_t holes = routing_verify(f, scope, scratch, r->stride, &h);
	LOG_V("RTE-0004", "tables of %s walked: %" G_GUINT64_FORMAT " (switch, LID) pairs, %"
	      G_GUINT64_FORMAT " not delivered, %.3f s", s->engine->name, h.walks, holes,
	      (double)(g_get_monotonic_time() - t0) / 1e6);
	if (holes) {
		char text[320];
		routing_hole_text(f, &h, text, sizeof(text));
		if (r->rejected)
			g_snprintf(why, why_len, "its tables leave holes: %s; %u of its entries name ports "
				   "the switches do not have", text, r->rejected);
		else
			g_snprintf(why, why_len, "its tables leave holes: %s", text);
		return -EHOSTUNREACH;
	}
	return 0;
}

int routing_step_try(struct routing_step *s, struct fabric *f, const struct ibsm_scope *scope,
		    struct ibsm_routes *routes, struct routing_result *r, uint8_t *scratch,
		    GString *whys)
{
	const struct ibsm_engine *ops = s->engine->ops;
	memset(routes->lft, IBSM_NO_PORT, (size_t)f->pub.n_switches * routes->stride);
	if (s->setup_rc < 0) {
		char why[96];
		g_snprintf(why, sizeof(why), "setup failed: %s", g_strerror(-s->setup_rc));
		LOG_I("RTE-0001", "routing engine %s declined: %s", s->engine->name, why);
		append_why(whys, s->engine->name, why);
		return s->setup_rc;
	}
	void *result = NULL;
	routes->why[0] = 0;
	int rc = ops->route(s->inst, &f->pub, scope, routes, &result);
	routes->why[sizeof(routes->why) - 1] = 0;
	if (rc < 0) {
		const char *why = routes->why[0] ? routes->why : "no reason given";
		if (s->core->cancelled(s->core))
			why = "cancelled";
		LOG_I("RTE-0001", "routing engine %s declined: %s", s->engine->name, why);
		append_why(whys, s->engine->name, why);
		if (result && ops->result_free)
			ops->result_free(result);
		return rc;
	}
	char why[400];
	rc = merge_and_verify(s, f, scope, routes, r, scratch, why, sizeof(why));
	if (rc < 0) {
		LOG_I("RTE-0001", "routing engine %s declined: %s", s->engine->name, why);
		append_why(whys, s->engine->name, why);
		if (result && ops->result_free)
			ops->result_free(result);
		return rc;
	}
	memcpy(r->lft, scratch, (size_t)r->n_switches * r->stride);
	uint8_t part = routing_result_add(r, s, result);
	for (uint32_t lid = 1; lid < r->stride; lid++)
		if (ibsm_scope_routes_lid(&f->pub, scope, lid))
			r->lid_part[lid] = part;
	g_strlcpy(r->engine, s->engine->name, sizeof(r->engine));
	return 0;
}

static int cancelled(struct routing_chain *c)
{
	return c->candidates->len &&
	       ((struct routing_step *)g_ptr_array_index(c->candidates, 0))->core->cancelled(
		       ((struct routing_step *)g_ptr_array_index(c->candidates, 0))->core);
}

struct routing_result *routing_run(struct routing_chain *c, struct fabric *f, GError **err)
{
	if (c->orch)
		return orch_run(c->orch, f, err);
	gint64 t0 = g_get_monotonic_time();
	struct routing_result *r = routing_result_new(f);
	struct ibsm_routes routes = { .size = sizeof(routes), .stride = r->stride };
	size_t bytes = (size_t)r->n_switches * r->stride;
	routes.lft = g_malloc(bytes ? bytes : 1);
	uint8_t *scratch = g_malloc(bytes ? bytes : 1);
	struct ibsm_scope scope = { .size = sizeof(scope), .step = 0 }; /* NULL bits: all */
	GString *whys = g_string_new(NULL);
	int routed = 0;
	for (guint i = 0; i < c->candidates->len && !routed && !cancelled(c); i++) {
		if (i == c->n_named && i > 0)
			LOG_I("RTE-0002", "no engine of '%s' could route; falling back to %s", c->spec,
			      ROUTING_FALLBACK);
		routed = routing_step_try(g_ptr_array_index(c->candidates, i), f, &scope, &routes, r, scratch,
				  whys) == 0;
	}
	if (!routed && c->fallback_error)
		append_why(whys, ROUTING_FALLBACK, c->fallback_error);
	g_free(routes.lft);
	g_free(scratch);
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
	LOG_I("RTE-0003", "routed by %s in %.3f s (%u switches, LIDs up to %u)", r->engine, r->seconds,
	      r->n_switches, f->pub.max_lid);
	return r;
}

/* ---- the routing thread ---- */

struct routing_job {
	struct routing_chain *chain;
	struct fabric *f;
	GThread *thread;
	gint done;
	struct routing_result *result;
	GError *err;
};

static gpointer job_main(gpointer data)
{
	struct routing_job *j = data;
	j->result = routing_run(j->chain, j->f, &j->err);
	g_atomic_int_set(&j->done, 1);
	return NULL;
}

struct routing_job *routing_job_start(struct routing_chain *c, struct fabric *f)
{
	struct routing_job *j = g_new0(struct routing_job, 1);
	j->chain = c;
	j->f = fabric_ref(f);
	routing_chain_cancel(c, 0);
	j->thread = g_thread_new("ibsm-routing", job_main, j);
	return j;
}

int routing_job_done(struct routing_job *j)
{
	return g_atomic_int_get(&j->done);
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
