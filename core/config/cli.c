/* SPDX-License-Identifier: BSD-2-Clause */
/* cli.c - OpenSM's command-line flags (and ours) parsed into struct sm_options with
 * GOptionContext, one entry per row of the option table; reentrant for SIGHUP. A repeated
 * flag's last value wins, except --plugin-dir, whose directories add up in order. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config/cli.h"
#include "config/keys.h"
#include "config/opensm_flags.h"
#include "config/opensm_keys.h"

struct cli_state {
	struct sm_options *o;
	struct cli_extra *x;
	int plugin_dir_given;   /* --plugin-dir seen on this command line: the next one adds */
};

void cli_extra_clear(struct cli_extra *x)
{
	g_free(x->config_file);
	g_free(x->create_config);
	memset(x, 0, sizeof(*x));
}

/* "-l" or "--lmc" -> the table row */
static const struct config_key *key_for_flag(const char *name)
{
	size_t n;
	const struct config_key *ks = config_keys(&n);
	for (size_t i = 0; i < n; i++) {
		if (!ks[i].long_flag)
			continue;
		if (name[1] == '-' ? !strcmp(name + 2, ks[i].long_flag) : (name[1] == ks[i].short_flag && !name[2]))
			return &ks[i];
	}
	return NULL;
}

/* OpenSM reads a GUID, an SM_Key and a subnet prefix on its command line as hex, "0x" or not */
static char *hex_form(const struct config_key *k, const char *value)
{
	int hex = !strcmp(k->key, "guid") || !strcmp(k->key, "sm_key") || !strcmp(k->key, "subnet_prefix");
	if (!hex || !value || (value[0] == '0' && (value[1] == 'x' || value[1] == 'X')))
		return g_strdup(value);
	return g_strdup_printf("0x%s", value);
}

/* VALUE of flag NAME into K's setting, as the command line says it; what a flag marks beyond */
static gboolean set_from_command_line(struct cli_state *st, const struct config_key *k, const char *name,
				      const char *value, GError **err)
{
	GError *e = NULL;
	char *v = hex_form(k, value);
	/* --plugin-dir A --plugin-dir B: both, searched in that order (the file's value is
	 * replaced by the command line's first one, as for any key) */
	if (!strcmp(k->key, "plugin_dir") && st->plugin_dir_given++ && st->o->plugin_dir) {
		char *both = g_strconcat(st->o->plugin_dir, ":", v, NULL);
		g_free(v);
		v = both;
	}
	int rc = config_set(st->o, k, v, &e);
	g_free(v);
	if (rc < 0) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s %s: %s", name, value, e->message);
		g_error_free(e);
		return FALSE;
	}
	if (!strcmp(k->key, "guid"))
		st->o->guid_given = 1; /* on the command line, -g 0 lists the ports and asks */
	if (!strcmp(k->key, "dump_files_dir"))
		st->o->tmp_dir_asked = 1;
	if (!strcmp(k->key, "cache_dir")) /* not the file's: a dry run keeps off the live SM's cache */
		st->o->cache_dir_explicit = 1;
	return TRUE;
}

static gboolean on_setting(const char *name, const char *value, gpointer data, GError **err)
{
	struct cli_state *st = data;
	const struct config_key *k = key_for_flag(name);
	if (!k) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_UNKNOWN_OPTION, "%s: no such option", name);
		return FALSE;
	}
	if (!value || !*value) {
		if (!k->arg) {
			value = k->flag_value;
		} else {
			g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s: empty value", name);
			return FALSE;
		}
	}
	return set_from_command_line(st, k, name, value, err);
}

/* An OpenSM flag outside ibsm's key table: another name of an ibsm setting, or a key without
 * effect here, kept as a command-line extra (config/build.c warns, naming the flag). */
static gboolean on_opensm_flag(const char *name, const char *value, gpointer data, GError **err)
{
	struct cli_state *st = data;
	const struct opensm_flag *f = opensm_flag_find(name);
	if (!f) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_UNKNOWN_OPTION, "%s: no such option", name);
		return FALSE;
	}
	const char *given = value; /* as written, for the warning */
	if (!f->arg)
		value = f->noarg_value;
	const char *key = f->key;
	if (!key) { /* -d N */
		long long n;
		unsigned long long u;
		if (config_parse_number(value, 0, &n, &u) < 0 || !(key = opensm_debug_option_key((long)n))) {
			/* OpenSM says "unknown debug option" and runs */
			options_note(st->o, IBSM_LOG_WARN, "CLI-0002", "command line: %s %s: OpenSM's debug options "
				     "are 0, 1, 2, 3 and 10; ignored", name, value);
			return TRUE;
		}
		if (!*key) {
			options_note(st->o, IBSM_LOG_WARN, "CLI-0001", "command line: %s %s (OpenSM's testability "
				     "mode): no effect in ibsm", name, value);
			return TRUE;
		}
		value = "TRUE";
	}
	const struct config_key *k = config_key_find(key);
	if (k)
		return set_from_command_line(st, k, name, value, err);
	char *where = g_strdup_printf("command line: %s%s%s", name, f->arg ? " " : "", f->arg ? given : "");
	options_set_extra(st->o, key, value, where);
	g_free(where);
	return TRUE;
}

/* -v: one more level, as OpenSM shifts its log flags (0x3 -> 0x7 -> 0xf ...) */
static gboolean on_verbose(const char *n, const char *v, gpointer data, GError **e)
{
	(void)n; (void)v; (void)e;
	struct sm_options *o = ((struct cli_state *)data)->o;
	o->debug_flags = ((o->debug_flags << 1) | 1) & 0xff;
	return TRUE;
}

/* -V: every log flag (OpenSM's -D 0xFF -d 2; ibsm writes every line at once anyway) */
static gboolean on_max_verbose(const char *n, const char *v, gpointer data, GError **e)
{
	(void)n; (void)v; (void)e;
	((struct cli_state *)data)->o->debug_flags = 0xff;
	return TRUE;
}

/* ENTRIES' row for long name NAME (up to '=' or its end), or NULL */
static const GOptionEntry *entry_long(const GOptionEntry *entries, const char *name)
{
	size_t n = strcspn(name, "=");
	for (const GOptionEntry *e = entries; e->long_name; e++)
		if (strlen(e->long_name) == n && !strncmp(e->long_name, name, n))
			return e;
	return NULL;
}

static const GOptionEntry *entry_short(const GOptionEntry *entries, char c)
{
	for (const GOptionEntry *e = entries; e->long_name; e++)
		if (e->short_name == c)
			return e;
	return NULL;
}

static int takes_value(const GOptionEntry *e)
{
	return e && !(e->flags & G_OPTION_FLAG_NO_ARG) && e->arg != G_OPTION_ARG_NONE;
}

/* A copy of argv in the forms GOption reads, from the forms OpenSM's getopt_long_only also
 * takes: "-d0", "-D0x7", "-Zoff" (a short option with its value attached) become two words,
 * "-once", "-smkey 5" (a long option with one dash) get two dashes. Values are never touched. */
static char **getopt_forms(int argc, char **argv, const GOptionEntry *entries)
{
	GPtrArray *out = g_ptr_array_new();
	int value_next = 0, rest = 0;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (i == 0 || rest || value_next || a[0] != '-' || !a[1]) {
			value_next = 0;
			g_ptr_array_add(out, g_strdup(a));
			continue;
		}
		if (!strcmp(a, "--")) {
			rest = 1;
			g_ptr_array_add(out, g_strdup(a));
			continue;
		}
		const GOptionEntry *e;
		if (a[1] == '-') {
			e = entry_long(entries, a + 2);
			value_next = takes_value(e) && !strchr(a, '=');
			g_ptr_array_add(out, g_strdup(a));
		} else if (a[2] && (e = entry_long(entries, a + 1))) {
			value_next = takes_value(e) && !strchr(a, '=');
			g_ptr_array_add(out, g_strdup_printf("-%s", a));
		} else if (a[2] && takes_value(e = entry_short(entries, a[1]))) {
			g_ptr_array_add(out, g_strndup(a, 2));
			g_ptr_array_add(out, g_strdup(a + 2));
		} else {
			e = entry_short(entries, a[1]);
			value_next = !a[2] && takes_value(e);
			g_ptr_array_add(out, g_strdup(a));
		}
	}
	g_ptr_array_add(out, NULL);
	return (char **)g_ptr_array_free(out, FALSE);
}

int cli_parse(int argc, char **argv, struct sm_options *o, struct cli_extra *x, GError **err)
{
	struct cli_state st = { .o = o, .x = x };
	int show_version = 0;
	char *config_file = NULL, *create_config = NULL;
	size_t n;
	const struct config_key *ks = config_keys(&n);
	GArray *entries = g_array_new(TRUE, TRUE, sizeof(GOptionEntry));
	for (size_t i = 0; i < n; i++) {
		if (!ks[i].long_flag)
			continue;
		GOptionEntry e = { ks[i].long_flag, ks[i].short_flag, ks[i].arg ? 0 : G_OPTION_FLAG_NO_ARG,
				   G_OPTION_ARG_CALLBACK, (gpointer)on_setting,
				   ks[i].flag_doc ? ks[i].flag_doc : ks[i].doc, ks[i].arg };
		g_array_append_val(entries, e);
	}
	unsigned nf;
	const struct opensm_flag *fs = opensm_flags(&nf);
	for (unsigned i = 0; i < nf; i++) {
		GOptionEntry e = { fs[i].long_name, fs[i].short_name, fs[i].arg ? 0 : G_OPTION_FLAG_NO_ARG,
				   G_OPTION_ARG_CALLBACK, (gpointer)on_opensm_flag, fs[i].doc, fs[i].arg };
		g_array_append_val(entries, e);
	}
	GOptionEntry extra[] = {
		{ "verbose", 'v', G_OPTION_FLAG_NO_ARG, G_OPTION_ARG_CALLBACK, (gpointer)on_verbose,
		  "One more log level (repeatable: shifts the log flags as OpenSM's -v)", NULL },
		{ "V", 'V', G_OPTION_FLAG_NO_ARG, G_OPTION_ARG_CALLBACK, (gpointer)on_max_verbose,
		  "Every log level (-D 0xff)", NULL },
		{ "config", 'F', 0, G_OPTION_ARG_FILENAME, &config_file,
		  "Configuration file, YAML or opensm.conf (default /etc/ibsm/ibsm.yaml, else "
		  "/etc/opensm/opensm.conf)", "FILE" },
		{ "create-config", 'c', 0, G_OPTION_ARG_FILENAME, &create_config,
		  "Write a commented configuration template with the current settings ('-': stdout), then exit", "FILE" },
		{ "version", 0, 0, G_OPTION_ARG_NONE, &show_version, "Print the version", NULL },
	};
	g_array_append_vals(entries, extra, G_N_ELEMENTS(extra));
	GOptionContext *ctx = g_option_context_new("- InfiniBand subnet manager");
	GOptionGroup *grp = g_option_group_new("ibsm", "ibsm", "ibsm", &st, NULL);
	g_option_group_add_entries(grp, (const GOptionEntry *)(void *)entries->data);
	g_option_context_set_main_group(ctx, grp);
	g_option_context_set_summary(ctx, "Discovers the fabric, assigns LIDs, routes with plugin engines, "
				     "programs every switch and brings ports to ACTIVE.");
	/* parse a copy: GOption removes what it parsed, and SIGHUP parses the same argv again */
	char **args = getopt_forms(argc, argv, (const GOptionEntry *)(void *)entries->data);
	int rc = 0;
	if (!g_option_context_parse_strv(ctx, &args, err)) {
		rc = -1;
	} else if (args[0] && args[1]) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "unexpected argument '%s'", args[1]);
		rc = -1;
	}
	g_strfreev(args);
	g_option_context_free(ctx);
	g_array_free(entries, TRUE);
	if (rc < 0) {
		g_free(config_file);
		g_free(create_config);
		return -1;
	}
	x->show_version = show_version;
	g_free(x->config_file);
	x->config_file = config_file;
	g_free(x->create_config);
	x->create_config = create_config;

	if (o->debug_flags & IBSM_DEBUG_ROUTING)
		o->dump_routes = 1;
	return 0;
}
