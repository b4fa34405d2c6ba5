/* SPDX-License-Identifier: BSD-2-Clause */
/* fallback_list.c - building the fallback list: parse -R, load, set up one instance per
 * engine (or the orchestrator that routes in its place). */
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
	c->candidates = g_ptr_array_new_with_free_func((GDestroyNotify)routing_step_unref);
	/* every named engine first: a typo in -R fails loudly instead of falling back */
	int has_fallback = 0;
	GPtrArray *engines = g_ptr_array_new();
	struct engine *orch = NULL;
	for (guint i = 0; i < names->len; i++) {
		struct engine *e = engine_load(g_ptr_array_index(names, i), plugin_dir, err);
		if (e && e->orch && (orch || names->len > 1)) {
			g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_INVALID, "routing engine list '%s': "
				    "%s is an orchestrator; it routes alone (only no_fallback may "
				    "follow it)", text, e->name);
			engine_unload(e);
			e = NULL;
		}
		if (!e) {
			unload_all(engines);
			engine_unload(orch);
			g_ptr_array_free(names, TRUE);
			fallback_list_free(c);
			return NULL;
		}
		if (e->orch)
			orch = e;
		else
			g_ptr_array_add(engines, e);
	}
	if (!orch && o && o->rch_policy_file && *o->rch_policy_file) {
		orch = engine_load(ROUTING_ORCHESTRATOR, plugin_dir, err);
		if (orch && !orch->orch) {
			g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_ABI, "%s: not a routing orchestrator",
				    orch->path);
			engine_unload(orch);
			orch = NULL;
		}
		if (!orch) {
			g_prefix_error(err, "rch_policy_file %s: ", o->rch_policy_file);
			unload_all(engines);
			g_ptr_array_free(names, TRUE);
			fallback_list_free(c);
			return NULL;
		}
		LOG_I("CHN-0002", "rch_policy_file %s: routing chain by orchestrator %s; routing_engine "
		      "'%s' is not used%s", o->rch_policy_file, orch->name, text,
		      no_fallback ? " (but for its no_fallback)" : "");
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
	return c;
}

void fallback_list_free(struct fallback_list *c)
{
	if (!c)
		return;
	orch_free(c->orch); /* before its steps: teardown() may still name them */
	g_ptr_array_free(c->candidates, TRUE);
	g_free(c->fallback_error);
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
