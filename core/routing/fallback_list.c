/* SPDX-License-Identifier: BSD-2-Clause */
/* fallback_list.c - building the fallback list: parse -R, load, set up one instance per
 * engine (or the orchestrator that routes in its place); an engine that does not load is
 * logged and skipped, never a failed start. */
#include <errno.h>
#include <string.h>
#include "base/log.h"
#include "routing/fallback_list.h"
#include "routing/orch.h"
#include "routing/services.h"

/* "a, b ,c,no_fallback" -> unique names in order; *no_fallback. */
static int chain_parse(const char *text, GPtrArray *names, int *no_fallback, GError **err)
{
	gchar **v = g_strsplit(text, ",", -1);
	*no_fallback = 0;
	for (gchar **p = v; *p; p++) {
		char *t = g_strstrip(*p);
		if (!*t)
			continue;
		if (!strcmp(t, "no_fallback")) {
			*no_fallback = 1;
			continue;
		}
		int dup = 0;
		for (guint i = 0; i < names->len; i++)
			dup |= !strcmp(g_ptr_array_index(names, i), t);
		if (!dup)
			g_ptr_array_add(names, g_strdup(t));
	}
	g_strfreev(v);
	if (!names->len) {
		g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_INVALID,
			    "routing engine list '%s' names no engine", text);
		return -EINVAL;
	}
	return 0;
}

static void unload_all(GPtrArray *engines)
{
	for (guint i = 0; i < engines->len; i++)
		engine_unload(g_ptr_array_index(engines, i));
	g_ptr_array_free(engines, TRUE);
}

/* An engine of the list that cannot be used: said loudly (at start and on every reload, which
 * build the list again), remembered for the run's reasons, and skipped. */
static void skip_engine(struct fallback_list *c, const char *text, const char *name, const GError *e,
			int more, int no_fallback)
{
	LOG_E("CHN-0003", "routing_engine '%s': engine %s cannot be used: %s; skipped (%s)", text,
	      name, e->message, more ? "the next engine of the list is tried" :
	      no_fallback ? "no_fallback: nothing else is tried" : "minhop is tried instead");
	g_string_append_printf(c->skipped, "%s%s: %s", c->skipped->len ? "; " : "", name, e->message);
	g_string_append_printf(c->skipped_names, "%s%s", c->skipped_names->len ? ", " : "", name);
	c->n_skipped++;
}

struct fallback_list *fallback_list_new(const char *spec, const struct sm_options *o, GError **err)
{
	const char *text = spec && *spec ? spec : ROUTING_FALLBACK;
	const char *plugin_dir = o ? o->plugin_dir : NULL;
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	int no_fallback;
	if (chain_parse(text, names, &no_fallback, err) < 0) {
		g_ptr_array_free(names, TRUE);
		return NULL;
	}
	struct fallback_list *c = g_new0(struct fallback_list, 1);
	c->spec = g_strdup(text);
	c->no_fallback = no_fallback;
	c->skipped = g_string_new(NULL);
	c->skipped_names = g_string_new(NULL);
	c->candidates = g_ptr_array_new_with_free_func((GDestroyNotify)routing_step_unref);
	/* every named engine first; one that does not load is a failed engine, never a failed
	 * start: logged and skipped, as OpenSM skips an engine it cannot set up */
	int has_fallback = 0;
	GPtrArray *engines = g_ptr_array_new();
	struct engine *orch = NULL;
	for (guint i = 0; i < names->len; i++) {
		GError *lerr = NULL;
		const char *name = g_ptr_array_index(names, i);
		struct engine *e = engine_load(name, plugin_dir, &lerr);
		if (e && e->orch && (orch || names->len > 1)) {
			g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_INVALID, "routing engine list '%s': "
				    "%s is an orchestrator; it routes alone (only no_fallback may "
				    "follow it)", text, e->name);
			engine_unload(e);
			unload_all(engines);
			engine_unload(orch);
			g_ptr_array_free(names, TRUE);
			fallback_list_free(c);
			return NULL;
		}
		if (!e) {
			skip_engine(c, text, name, lerr, i + 1 < names->len, no_fallback);
			g_error_free(lerr);
			continue;
		}
		if (e->orch)
			orch = e;
		else
			g_ptr_array_add(engines, e);
	}
	if (!orch && o && o->rch_policy_file && *o->rch_policy_file) {
		GError *lerr = NULL;
		orch = engine_load(ROUTING_ORCHESTRATOR, plugin_dir, &lerr);
		if (orch && !orch->orch) {
			g_set_error(&lerr, ENGINE_ERROR, ENGINE_ERROR_ABI, "%s: not a routing orchestrator",
				    orch->path);
			engine_unload(orch);
			orch = NULL;
		}
		if (!orch) {
			/* a missing orchestrator is a failed engine too: the -R list routes */
			LOG_E("CHN-0004", "rch_policy_file %s: the routing chain's orchestrator %s cannot "
			      "be used: %s; routing_engine '%s' routes instead", o->rch_policy_file,
			      ROUTING_ORCHESTRATOR, lerr->message, text);
			g_string_append_printf(c->skipped, "%s%s: %s", c->skipped->len ? "; " : "",
					       ROUTING_ORCHESTRATOR, lerr->message);
			g_clear_error(&lerr);
		} else {
			LOG_I("CHN-0002", "rch_policy_file %s: routing chain by orchestrator %s; "
			      "routing_engine '%s' is not used%s", o->rch_policy_file, orch->name, text,
			      no_fallback ? " (but for its no_fallback)" : "");
		}
	}
	if (orch) {
		unload_all(engines);
		g_ptr_array_free(names, TRUE);
		c->orch = orch_new(orch, c->candidates, o, err);
		if (!c->orch) {
			fallback_list_free(c);
			return NULL;
		}
		c->n_named = c->candidates->len;
		return c;
	}
	for (guint i = 0; i < engines->len; i++) {
		struct engine *e = g_ptr_array_index(engines, i);
		has_fallback |= !strcmp(e->name, ROUTING_FALLBACK);
		g_ptr_array_add(c->candidates, routing_step_new(e, 0, o, NULL));
	}
	g_ptr_array_free(engines, TRUE);
	g_ptr_array_free(names, TRUE);
	c->n_named = c->candidates->len;
	if (!no_fallback && !has_fallback) {
		GError *lerr = NULL;
		struct engine *e = engine_load(ROUTING_FALLBACK, plugin_dir, &lerr);
		if (e) {
			g_ptr_array_add(c->candidates, routing_step_new(e, 0, o, NULL));
		} else {
			c->fallback_error = g_strdup(lerr->message);
			g_clear_error(&lerr);
		}
	}
	if (!c->candidates->len)
		LOG_E("CHN-0005", "routing_engine '%s': no engine can route (%s%s%s): every sweep fails "
		      "to route and the switches keep the routes in force until the configuration is "
		      "fixed and reloaded (SIGHUP)", text, c->skipped->str,
		      c->fallback_error ? "; " ROUTING_FALLBACK ": " : "",
		      c->fallback_error ? c->fallback_error : no_fallback ? "; no_fallback" : "");
	return c;
}

void fallback_list_free(struct fallback_list *c)
{
	if (!c)
		return;
	orch_free(c->orch); /* before its steps: teardown() may still name them */
	g_ptr_array_free(c->candidates, TRUE);
	g_free(c->fallback_error);
	if (c->skipped)
		g_string_free(c->skipped, TRUE);
	if (c->skipped_names)
		g_string_free(c->skipped_names, TRUE);
	g_free(c->spec);
	g_free(c);
}

void fallback_list_cancel(struct fallback_list *c, int on)
{
	if (c && c->orch)
		orch_cancel(c->orch, on);
	for (guint i = 0; c && i < c->candidates->len; i++)
		services_cancel(((struct routing_step *)g_ptr_array_index(c->candidates, i))->core, on);
}
