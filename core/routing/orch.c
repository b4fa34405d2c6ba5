/* SPDX-License-Identifier: BSD-2-Clause */
/* orch.c - the core side of a routing orchestrator: step_open() loads an engine with the
 * step's own configuration file, step_route() runs it under the core's merge and walks, and
 * every run ends with a walk of the whole table. The orchestrator decides; the core checks. */
#include <errno.h>
#include <string.h>
#include "base/log.h"
#include "config/config_file.h"
#include "config/keys.h"
#include "config/opensm_keys.h"
#include "routing/deadlock.h"
#include "routing/joins.h"
#include "routing/orch.h"
#include "routing/services.h"
#include "routing/step_run.h"
#include "routing/verify.h"
#include "policy/chain_policy.h"

/* What one run() works on (routing thread only). */
struct orch_run {
	struct fabric *f;
	struct routing_result *r;
	struct ibsm_routes routes;
	uint8_t *scratch;
	unsigned ok, failed;
	struct chain_parts *parts;      /* the scopes of the steps that merged, in order */
};

struct orch {
	struct ibsm_orch_core pub;
	struct engine *e;
	void *inst;
	int setup_done;
	struct ibsm_core *svc;          /* its configuration and log, as an engine's */
	GPtrArray *steps;               /* struct routing_step *: a handle is an index */
	const struct sm_options *opt;   /* during orch_new() only */
	int dump;                       /* record each step's routes for its dump files */
	gint cancel;
	struct orch_run *run;           /* during orch_run() only */
};

static void o_log(const struct ibsm_orch_core *c, int level, const char *fmt, ...)
{
	const struct orch *o = c->cookie;
	va_list ap;
	va_start(ap, fmt);
	services_vlog(level, "RCH-0001", o->e->name, fmt, ap);
	va_end(ap);
}

static const char *o_config(const struct ibsm_orch_core *c, const char *key)
{
	const struct orch *o = c->cookie;
	return o->svc->config(o->svc, key);
}

static int o_cancelled(const struct ibsm_orch_core *c)
{
	const struct orch *o = c->cookie;
	return g_atomic_int_get(&o->cancel);
}

static int o_read_file(const struct ibsm_orch_core *c, const char *key, const char *path,
		       char **text, size_t *len, char *why, size_t why_len)
{
	(void)c;
	return services_read_file(key, path, text, len, why, why_len);
}

/* The step's own configuration file: key -> value, without the keys only the main file sets
 * (noted). Unknown keys (not the core's, not the engine's, not OpenSM's) refuse it. */
static GHashTable *step_config_load(const char *path, const struct engine *e, char *why,
				    size_t why_len)
{
	GError *err = NULL;
	GHashTable *pairs = config_load_pairs(path, &err);
	if (!pairs) {
		g_strlcpy(why, err->message, why_len);
		g_error_free(err);
		return NULL;
	}
	GHashTable *out = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	GList *keys = g_list_sort(g_hash_table_get_keys(pairs), (GCompareFunc)strcmp);
	for (GList *l = keys; l; l = l->next) {
		const char *key = l->data;
		const struct config_extra *x = g_hash_table_lookup(pairs, key);
		int declared = config_key_find(key) != NULL || opensm_key_find(key) != NULL;
		for (const struct ibsm_config_key *k = e->keys; !declared && k && k->name; k++)
			declared = !strcmp(k->name, key);
		if (!declared) {
			g_snprintf(why, why_len, "%s: unknown key '%s' (neither ibsm nor engine %s "
				   "declares it)", x->where, key, e->name);
			g_hash_table_destroy(out);
			out = NULL;
			break;
		}
		if (!chain_step_key_allowed(key)) {
			LOG_I("RCH-0002", "%s: %s is set only by the main configuration file; ignored "
			      "for this step", x->where, key);
			continue;
		}
		if (x->value)
			g_hash_table_insert(out, g_strdup(key), g_strdup(x->value));
	}
	g_list_free(keys);
	g_hash_table_destroy(pairs);
	return out;
}

static int o_step_open(const struct ibsm_orch_core *c, uint32_t id, const char *engine,
		       const char *config_file, char *why, size_t why_len)
{
	struct orch *o = c->cookie;
	if (!o->opt || o->setup_done) {
		g_strlcpy(why, "step_open() is only for setup()", why_len);
		return -EINVAL;
	}
	GPtrArray *steps = o->steps;
	for (guint i = 0; i < steps->len; i++)
		if (id == 0 || ((struct routing_step *)g_ptr_array_index(steps, i))->id == id) {
			g_snprintf(why, why_len, "step id %u is %s", id, id ? "already open" : "reserved");
			return -EINVAL;
		}
	if (steps->len >= ROUTING_NO_PART) {
		g_snprintf(why, why_len, "more than %u steps", ROUTING_NO_PART - 1);
		return -E2BIG;
	}
	GError *err = NULL;
	struct engine *e = engine_load(engine, o->opt->plugin_dir, &err);
	if (!e) {
		g_strlcpy(why, err->message, why_len);
		g_error_free(err);
		return -ENOENT;
	}
	if (!e->ops) {
		g_snprintf(why, why_len, "%s is an orchestrator, not a routing engine", e->path);
		engine_unload(e);
		return -EINVAL;
	}
	GHashTable *step_config = NULL;
	if (config_file && *config_file) {
		step_config = step_config_load(config_file, e, why, why_len);
		if (!step_config) {
			engine_unload(e);
			return -EINVAL;
		}
	}
	struct routing_step *s = routing_step_new(e, id, o->opt, step_config);
	if (step_config)
		g_hash_table_destroy(step_config);
	g_ptr_array_add(steps, s);
	return (int)steps->len - 1;
}

static int o_step_route(const struct ibsm_orch_core *c, int handle, const struct ibsm_scope *in,
			char *why, size_t why_len)
{
	struct orch *o = c->cookie;
	struct orch_run *run = o->run;
	GPtrArray *steps = o->steps;
	if (!run || !in || handle < 0 || (guint)handle >= steps->len) {
		g_strlcpy(why, !run ? "step_route() is only for run()" : "no such step", why_len);
		return -EINVAL;
	}
	struct routing_step *s = g_ptr_array_index(steps, handle);
	struct ibsm_scope scope;
	memset(&scope, 0, sizeof(scope));
	memcpy(&scope, in, MIN(sizeof(scope), in->size ? in->size : sizeof(scope)));
	scope.size = sizeof(scope);
	scope.step = s->id;
	int rc = routing_step_try(s, run->f, &scope, &run->routes, run->r, run->scratch, why,
				  why_len);
	if (o->dump)
		routing_result_add_step_dump(run->r, s, &scope, run->routes.lft, rc < 0);
	if (rc < 0) {
		LOG_I("RCH-0003", "step %u: routing engine %s declined: %s", s->id, s->engine->name, why);
		run->failed++;
	} else {
		run->ok++;
		chain_parts_add(run->parts, &scope, s->id);
		LOG_V("RCH-0003", "step %u: routing engine %s routed", s->id, s->engine->name);
	}
	return rc < 0 ? rc : 0;
}

struct orch *orch_new(struct engine *e, GPtrArray *steps, const struct sm_options *opt,
		      GError **err)
{
	struct orch *o = g_new0(struct orch, 1);
	o->pub.size = sizeof(o->pub);
	o->pub.cookie = o;
	o->pub.log = o_log;
	o->pub.config = o_config;
	o->pub.step_open = o_step_open;
	o->pub.step_route = o_step_route;
	o->pub.cancelled = o_cancelled;
	o->pub.read_file = o_read_file;
	o->e = e;
	o->steps = steps;
	o->opt = opt;
	o->dump = opt && opt->dump_routes;
	o->svc = services_new(e->name, opt, NULL, e->keys);
	char why[512] = "";
	int rc = e->orch->setup(&o->pub, &o->inst, why, sizeof(why));
	o->opt = NULL;
	o->setup_done = 1;
	if (rc < 0) {
		g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_INVALID, "routing orchestrator %s: %s",
			    e->name, why[0] ? why : g_strerror(-rc));
		o->inst = NULL;
		orch_free(o);
		return NULL;
	}
	LOG_I("RCH-0004", "routing orchestrator %s (%s) set up with %u step%s", e->name, e->path,
	      steps->len, steps->len == 1 ? "" : "s");
	return o;
}

void orch_free(struct orch *o)
{
	if (!o)
		return;
	if (o->inst && o->e->orch->teardown)
		o->e->orch->teardown(o->inst);
	services_free(o->svc);
	engine_unload(o->e);
	g_free(o);
}

void orch_cancel(struct orch *o, int on)
{
	g_atomic_int_set(&o->cancel, on ? 1 : 0);
}

int orch_cancelled(const struct orch *o)
{
	return g_atomic_int_get(&o->cancel);
}

const char *orch_name(const struct orch *o)
{
	return o->e->name;
}

/* The routes into the chain's parts over every link that joins them (routing/joins.h), unless
 * rch_balance_joins is false; kept only if the whole table still delivers. */
static void balance_joins(struct orch *o, struct fabric *f, struct routing_result *r,
			  const struct chain_parts *parts)
{
	if (!ibsm_config_bool(o->svc, "rch_balance_joins", 1) || chain_parts_count(parts) < 2)
		return;
	size_t bytes = (size_t)r->n_switches * r->stride;
	uint8_t *before = g_memdup2(r->lft, bytes ? bytes : 1);
	struct join_part_report rep[16];
	guint n = joins_balance(f, parts, r->lid_part, r->lft, r->stride, rep, G_N_ELEMENTS(rep));
	struct ibsm_scope all = { .size = sizeof(all) };
	struct routing_holes h;
	if (n && routing_verify(f, &all, r->lft, r->stride, &h)) {
		char text[320];
		routing_hole_text(f, &h, text, sizeof(text));
		LOG_E("RCH-0008", "routes between the chain's parts not balanced: spread over the "
		      "joining links they leave %" G_GUINT64_FORMAT " (switch, LID) pairs undelivered "
		      "(%s); the steps' own routes are kept", h.holes, text);
		memcpy(r->lft, before, bytes);
		n = 0;
	}
	g_free(before);
	for (guint i = 0; i < MIN(n, (guint)G_N_ELEMENTS(rep)); i++)
		LOG_I("RCH-0007", "step %u's part: its %u LIDs reached from outside over its %u "
		      "joining links, %u to %u LIDs each (%" G_GUINT64_FORMAT " entries of the "
		      "whole-fabric steps rewritten)", rep[i].step, rep[i].lids, rep[i].links,
		      rep[i].min_lids, rep[i].max_lids, rep[i].entries);
}

static uint8_t check_path_sl(const void *ctx, uint16_t slid, uint16_t dlid)
{
	return routing_path_sl(ctx, 0, slid, dlid);
}

static int check_sl2vl(const void *ctx, uint32_t in_port, uint32_t out_port, uint8_t vl[16])
{
	return routing_sl2vl(ctx, in_port, out_port, vl);
}

/* The chain's final tables checked for credit loops: the routes between CA ports (the data
 * traffic; switch port 0 carries management traffic) with their SLs (path_sl of the engine of
 * each destination's part, hint 0) and the SL2VL tables the engines give (identity where none
 * does). Logged, never refused. */
static void check_credit_loops(struct orch *o, struct fabric *f, struct routing_result *r)
{
	struct deadlock_report dr;
	uint32_t n = deadlock_check_flags(f, r->lft, r->stride, check_path_sl, check_sl2vl, r,
					  DEADLOCK_CA_ROUTES, &dr);
	char vls[64] = "";
	for (unsigned v = 0, len = 0; v < 16; v++)
		if (dr.vl_mask & (1u << v))
			len += (unsigned)g_snprintf(vls + len, sizeof(vls) - len, "%s%u",
						    len ? "," : "", v);
	if (n)
		LOG_E("RCH-0006", "routing chain %s: credit loops in the final tables: %u of %u "
		      "channels (link, VL) lie on cycles of the routes' dependencies (%" G_GUINT64_FORMAT
		      " routes between CA ports, VLs %s), e.g. %s", o->e->name,
		      n == UINT32_MAX ? 0 : n, dr.channels, dr.routes, vls[0] ? vls : "none", dr.cycle);
	else
		LOG_I("RCH-0009", "routing chain %s: final tables free of credit loops (%" G_GUINT64_FORMAT
		      " routes between CA ports, %u channels (link, VL), VLs %s; %.3f s)", o->e->name,
		      dr.routes, dr.channels, vls[0] ? vls : "none", dr.seconds);
}

struct routing_result *orch_run(struct orch *o, struct fabric *f, GError **err)
{
	gint64 t0 = g_get_monotonic_time();
	struct orch_run run = { .f = f, .parts = chain_parts_new() };
	run.r = routing_result_new(f);
	run.routes.size = sizeof(run.routes);
	run.routes.stride = run.r->stride;
	size_t bytes = (size_t)run.r->n_switches * run.r->stride;
	run.routes.lft = g_malloc(bytes ? bytes : 1);
	run.scratch = g_malloc(bytes ? bytes : 1);
	o->run = &run;
	char why[512] = "";
	int rc = o->e->orch->run(o->inst, &f->pub, why, sizeof(why));
	o->run = NULL;
	g_free(run.routes.lft);
	g_free(run.scratch);
	struct routing_result *r = run.r;
	if (rc >= 0 && !orch_cancelled(o) && !run.ok) {
		rc = -EINVAL;
		g_snprintf(why, sizeof(why), "no step routed (%u failed)", run.failed);
	}
	if (rc >= 0 && !orch_cancelled(o))
		balance_joins(o, f, r, run.parts);
	chain_parts_free(run.parts);
	if (rc >= 0 && !orch_cancelled(o)) {
		/* the steps' scopes need not cover the fabric: the whole table must deliver */
		struct ibsm_scope all = { .size = sizeof(all) };
		struct routing_holes h;
		if (routing_verify(f, &all, r->lft, r->stride, &h)) {
			char text[320];
			routing_hole_text(f, &h, text, sizeof(text));
			g_snprintf(why, sizeof(why), "the chain's merged tables leave %" G_GUINT64_FORMAT
				   " (switch, LID) pairs undelivered: %s", h.holes, text);
			rc = -EHOSTUNREACH;
		}
	}
	if (rc < 0 || orch_cancelled(o)) {
		if (orch_cancelled(o))
			g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_CANCELLED, "routing cancelled");
		else
			g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_ROUTE, "routing orchestrator %s "
				    "could not route: %s", o->e->name, why[0] ? why : g_strerror(-rc));
		routing_result_unref(r);
		return NULL;
	}
	g_strlcpy(r->engine, o->e->name, sizeof(r->engine));
	check_credit_loops(o, f, r);
	r->seconds = (double)(g_get_monotonic_time() - t0) / 1e6;
	LOG_I("RCH-0005", "routed by %s in %.3f s (%u step%s routed, %u failed; %u switches, LIDs "
	      "up to %u)", r->engine, r->seconds, run.ok, run.ok == 1 ? "" : "s", run.failed,
	      r->n_switches, f->pub.max_lid);
	return r;
}
