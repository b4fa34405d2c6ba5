/* SPDX-License-Identifier: BSD-2-Clause */
/* build.c - one run-time configuration from its sources, in order: defaults, the configuration
 * file, the command line (a flag beats the file); then the file's keys outside the core's table
 * are checked against the keys the engines declare. Reentrant: SIGHUP builds a fresh one and
 * keeps the running one when this fails. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/log.h"
#include "config/build.h"
#include "config/cli.h"
#include "config/config_file.h"
#include "config/keys.h"
#include "config/locations.h"
#include "config/opensm_keys.h"
#include "config/template.h"

/* Edit distance of two short keys, for "did you mean": at most 3 is of interest */
static unsigned distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return 99;
	unsigned d[65][65];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			unsigned c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			c = MIN(c, d[i - 1][j] + 1);
			d[i][j] = MIN(c, d[i][j - 1] + 1);
		}
	return d[la][lb];
}

/* the closest of ibsm's keys and the engines' to KEY, if a slip of the keyboard away */
static const char *closest_key(const char *key, const GPtrArray *declared)
{
	const char *best = NULL;
	unsigned bd = 3;
	size_t n;
	const struct config_key *ks = config_keys(&n);
	for (size_t i = 0; i < n; i++) {
		unsigned d = distance(key, ks[i].key);
		if (d < bd) {
			bd = d;
			best = ks[i].key;
		}
	}
	for (guint i = 0; declared && i < declared->len; i++) {
		const char *name = ((struct config_declared *)g_ptr_array_index(declared, i))->name;
		unsigned d = distance(key, name);
		if (d < bd) {
			bd = d;
			best = name;
		}
	}
	return best;
}

/* the line of a "FILE:LINE:COL" place; 0 for the command line */
static unsigned long place_line(const char *where)
{
	if (g_str_has_prefix(where, "command line"))
		return 0;
	const char *c = strrchr(where, ':');
	const char *l = c ? g_strrstr_len(where, c - where, ":") : NULL;
	return l ? strtoul(l + 1, NULL, 10) : 0;
}

/* the command line first, then the file's keys in the order written */
static gint by_place(gconstpointer a, gconstpointer b, gpointer extra)
{
	const struct config_extra *xa = g_hash_table_lookup(extra, a), *xb = g_hash_table_lookup(extra, b);
	unsigned long la = place_line(xa->where), lb = place_line(xb->where);
	return la != lb ? (la < lb ? -1 : 1) : strcmp(a, b);
}

/* Every key outside the core's table, from the file or an OpenSM flag, gets one line: an
 * engine's is used; an OpenSM 3.3.23 key without effect is INFO at OpenSM's default and a
 * WARN otherwise or from a flag, an unprotected security key an ERROR; any other key is a WARN
 * naming its place (OpenSM warns and runs, too). In the order written, never hash order. */
static void report_extra_keys(struct sm_options *o, const GPtrArray *declared)
{
	if (!o->extra)
		return;
	GHashTable *known = g_hash_table_new(g_str_hash, g_str_equal);
	for (guint i = 0; declared && i < declared->len; i++)
		g_hash_table_add(known, ((struct config_declared *)g_ptr_array_index(declared, i))->name);
	GList *keys = g_list_sort_with_data(g_hash_table_get_keys(o->extra), by_place, o->extra);
	for (GList *l = keys; l; l = l->next) {
		const char *key = l->data;
		const struct config_extra *x = g_hash_table_lookup(o->extra, key);
		const char *v = x->value ? x->value : "(null)";
		if (g_hash_table_contains(known, key))
			continue;
		const struct opensm_key *k = opensm_key_find(key);
		int flag = g_str_has_prefix(x->where, "command line");
		if (k && k->kind == OSK_SECURITY) {
			options_note(o, IBSM_LOG_ERROR, "CFG-0006", "%s: %s %s is NOT in force: %s", x->where, key, v,
				     k->reason);
		} else if (k && !flag && opensm_key_is_default(k, x->value)) {
			options_note(o, IBSM_LOG_INFO, "CFG-0003", "%s: %s %s (OpenSM's default): no effect in ibsm: %s",
				     x->where, key, v, k->reason);
		} else if (k) {
			options_note(o, IBSM_LOG_WARN, "CFG-0005", "%s: %s %s: no effect in ibsm: %s", x->where,
				     flag ? "sets" : key, flag ? key : v, k->reason);
		} else {
			const char *near = closest_key(key, declared);
			options_note(o, IBSM_LOG_WARN, "CFG-0007", "%s: unknown key '%s' ignored (not ibsm's, not OpenSM "
				     "3.3.23's, and no routing engine found declares it)%s%s%s", x->where, key,
				     near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
		}
	}
	g_list_free(keys);
	g_hash_table_destroy(known);
}

void options_log_notes(struct sm_options *o, int problems_only)
{
	for (guint i = 0; o->notes && i < o->notes->len; i++) {
		const struct config_note *n = g_ptr_array_index(o->notes, i);
		if (!problems_only || n->level == IBSM_LOG_ERROR || n->level == IBSM_LOG_WARN)
			log_msg(n->level, n->code, "%s", n->text);
	}
	if (o->notes)
		g_ptr_array_set_size(o->notes, 0);
}

/* What the command line and the file leave to be settled: an offline run writes dumps only
 * where asked; OpenSM's max_wire_smps 0 (unlimited) is ibsm's default window. */
static void settle(struct sm_options *o)
{
	if (o->fabric_file && !o->tmp_dir_asked && o->tmp_dir) {
		options_note(o, IBSM_LOG_INFO, "CFG-0011", "--fabric: no dump files written (the live SM's "
			     "directory %s is not touched; name one with --dump_files_dir or OSM_TMP_DIR)", o->tmp_dir);
		g_free(o->tmp_dir);
		o->tmp_dir = NULL;
	}
	if (o->window == 0)
		o->window = DEFAULT_SMP_WINDOW;
	config_resolve_policy_files(o);
}

/* Reentrant (SIGHUP): everything lives in *o and locals. The command line is parsed twice: first
 * only to learn -F (so GOption, not a hand-written scan, decides what is a flag), then over the
 * file's values so a flag beats the file. */
int options_build_err(int argc, char **argv, struct sm_options *o, int *show_version,
		      config_declared_fn declared_fn, void *declared_ctx, GError **errp)
{
	struct cli_extra x = { 0 };
	GPtrArray *declared = NULL;
	GError *e = NULL, **err = &e;
	options_defaults(o);
	if (cli_parse(argc, argv, o, &x, err) < 0) {
		LOG_E("CFG-0002", "%s (see --help)", (*err)->message);
		goto fail;
	}
	options_free(o);
	options_defaults(o);
	char *path = x.config_file;
	int named = path != NULL;
	x.config_file = NULL;
	if (!path && !x.show_version)
		path = config_default_file();
	if (path && !x.show_version && config_load(path, o, err) < 0) {
		LOG_E("CFG-0001", "%s", (*err)->message);
		g_free(path);
		goto fail;
	}
	o->config_file = path;
	config_note_file(o, path, named); /* before the command line's notes */
	cli_extra_clear(&x);
	if (cli_parse(argc, argv, o, &x, err) < 0) { /* cannot fail where the first parse passed */
		LOG_E("CFG-0002", "%s (see --help)", (*err)->message);
		goto fail;
	}
	if (show_version)
		*show_version = x.show_version;
	if (x.show_version) {
		cli_extra_clear(&x);
		return 0;
	}
	/* every engine is opened to learn the keys it declares only when they are asked about:
	 * keys the core does not know, or a template to write (a dozen dlopens at each start) */
	if (declared_fn && ((o->extra && g_hash_table_size(o->extra)) || x.create_config))
		declared = declared_fn(o, declared_ctx);
	report_extra_keys(o, declared);
	settle(o);
	if (x.create_config) {
		if (config_write_template(x.create_config, o, declared, err) < 0) {
			LOG_E("CFG-0004", "cannot write the configuration template: %s", (*err)->message);
			goto fail;
		}
		o->create_config = x.create_config;
		x.create_config = NULL;
	}
	if (declared)
		g_ptr_array_free(declared, TRUE);
	cli_extra_clear(&x);
	return 0;
fail:
	if (declared)
		g_ptr_array_free(declared, TRUE);
	cli_extra_clear(&x);
	options_free(o);
	options_defaults(o);
	g_propagate_error(errp, e);
	return -1;
}

int options_build(int argc, char **argv, struct sm_options *o, int *show_version,
		  config_declared_fn declared, void *declared_ctx)
{
	GError *err = NULL;
	if (options_build_err(argc, argv, o, show_version, declared, declared_ctx, &err) < 0) {
		g_error_free(err); /* already logged */
		return -1;
	}
	if (o->create_config) {
		options_log_notes(o, 1); /* the flags and keys without effect (stderr), not the files read */
		if (strcmp(o->create_config, "-"))
			printf("ibsm: configuration template written to %s\n", o->create_config);
		options_free(o);
		exit(0);
	}
	return 0;
}
