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
#include "config/file.h"
#include "config/keys.h"
#include "config/template.h"

/* Every file key outside the table is an engine's, or OpenSM's (listed once), or an error naming
 * its place. Sorted, so the error and the list do not depend on hash order. */
static int check_extra_keys(struct sm_options *o, const GPtrArray *declared, GError **err)
{
	if (!o->extra)
		return 0;
	GHashTable *known = g_hash_table_new(g_str_hash, g_str_equal);
	for (guint i = 0; declared && i < declared->len; i++)
		g_hash_table_add(known, ((struct config_declared *)g_ptr_array_index(declared, i))->name);
	GList *keys = g_list_sort(g_hash_table_get_keys(o->extra), (GCompareFunc)strcmp);
	GString *ignored = g_string_new(NULL);
	unsigned n_ignored = 0;
	int rc = 0;
	for (GList *l = keys; l && rc == 0; l = l->next) {
		const char *key = l->data;
		const struct config_extra *x = g_hash_table_lookup(o->extra, key);
		if (g_hash_table_contains(known, key))
			continue;
		if (config_is_opensm_only(key)) {
			/* one log line: it stops at about 700 characters */
			if (ignored->len < 700)
				g_string_append_printf(ignored, "%s%s", n_ignored ? ", " : "", key);
			n_ignored++;
			continue;
		}
		g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_UNKNOWN_KEY,
			    "%s: unknown key '%s' (neither ibsm nor any routing engine found declares it)",
			    x->where, key);
		rc = -1;
	}
	if (rc == 0 && n_ignored)
		LOG_I("CFG-0003", "%s: %u OpenSM setting%s not used by ibsm, ignored: %s%s", o->config_file,
		      n_ignored, n_ignored == 1 ? "" : "s", ignored->str, ignored->len >= 700 ? " ..." : "");
	g_string_free(ignored, TRUE);
	g_list_free(keys);
	g_hash_table_destroy(known);
	return rc;
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
	x.config_file = NULL;
	if (!path && !x.show_version && g_file_test(IBSM_DEFAULT_CONFIG, G_FILE_TEST_EXISTS))
		path = g_strdup(IBSM_DEFAULT_CONFIG);
	if (path && !x.show_version && config_load(path, o, err) < 0) {
		LOG_E("CFG-0001", "%s", (*err)->message);
		g_free(path);
		goto fail;
	}
	o->config_file = path;
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
	declared = declared_fn ? declared_fn(o, declared_ctx) : NULL;
	if (check_extra_keys(o, declared, err) < 0) {
		LOG_E("CFG-0001", "%s", (*err)->message);
		goto fail;
	}
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
		if (strcmp(o->create_config, "-"))
			printf("ibsm: configuration template written to %s\n", o->create_config);
		options_free(o);
		exit(0);
	}
	return 0;
}
