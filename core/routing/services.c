/* SPDX-License-Identifier: BSD-2-Clause */
/* services.c - what the core lends an engine through struct ibsm_core. */
#include <errno.h>
#include <string.h>
#include "base/file_read.h"
#include "base/log.h"
#include "config/keys.h"
#include "fabric/hops.h"
#include "routing/services.h"
#include "routing/tables.h"

struct services {
	struct ibsm_core pub;
	char *name;
	GHashTable *config;  /* key -> value, a snapshot for the step's life */
	gint cancel;         /* atomic */
	uint8_t *rows;       /* last_rows(): a reference (routing/tables.h), or NULL */
	uint32_t rows_switches, rows_stride;
};

void services_vlog(int level, const char *code, const char *who, const char *fmt, va_list ap)
{
	if (level < IBSM_LOG_ERROR)
		level = IBSM_LOG_ERROR;
	if (level > IBSM_LOG_DEBUG)
		level = IBSM_LOG_DEBUG;
	if (!log_enabled(level))
		return;
	char *text = g_strdup_vprintf(fmt, ap);
	log_msg(level, code, "%s: %s", who, text);
	g_free(text);
}

static void core_log(const struct ibsm_core *c, int level, const char *fmt, ...)
{
	const struct services *sv = c->cookie;
	va_list ap;
	va_start(ap, fmt);
	services_vlog(level, "ENG-0001", sv->name, fmt, ap);
	va_end(ap);
}

static const char *core_config(const struct ibsm_core *c, const char *key)
{
	const struct services *sv = c->cookie;
	return key ? g_hash_table_lookup(sv->config, key) : NULL;
}

static int core_switch_hops(const struct ibsm_core *c, const struct ibsm_fabric *f,
			    const struct ibsm_scope *s, uint8_t *hops)
{
	(void)c;
	return switch_hops(f, s, hops);
}

static int core_cancelled(const struct ibsm_core *c)
{
	struct services *sv = c->cookie;
	return g_atomic_int_get(&sv->cancel);
}

int services_read_file(const char *key, const char *path, char **text, size_t *len, char *why,
		       size_t why_len)
{
	GError *err = NULL;
	/* g_malloc is malloc (GLib 2.46 on): the plugin frees the text with free() */
	int rc = file_read_setting(key && *key ? key : "file", path, FILE_CAP_TEXT, text, len, &err);
	if (rc < 0) {
		if (why && why_len)
			g_strlcpy(why, err->message, why_len);
		g_error_free(err);
	}
	return rc;
}

static int core_read_file(const struct ibsm_core *c, const char *key, const char *path,
			  char **text, size_t *len, char *why, size_t why_len)
{
	(void)c;
	return services_read_file(key, path, text, len, why, why_len);
}

static const uint8_t *core_last_rows(const struct ibsm_core *c, uint32_t *n_switches, uint32_t *stride)
{
	const struct services *sv = c->cookie;
	*n_switches = sv->rows ? sv->rows_switches : 0;
	*stride = sv->rows ? sv->rows_stride : 0;
	return sv->rows;
}

void services_keep_rows(struct ibsm_core *core, uint8_t *rows, uint32_t n_switches, uint32_t stride)
{
	struct services *sv = core->cookie;
	routing_tables_unref(sv->rows);
	sv->rows = rows ? routing_tables_ref(rows) : NULL;
	sv->rows_switches = n_switches;
	sv->rows_stride = stride;
}

static void put(GHashTable *h, const char *key, const char *value)
{
	if (value && !g_hash_table_contains(h, key))
		g_hash_table_insert(h, g_strdup(key), g_strdup(value));
}

/* First come, first kept: the step's file, the options, the declared defaults. */
static void config_fill(GHashTable *h, const struct sm_options *o, GHashTable *step_config,
			const struct ibsm_config_key *declared)
{
	if (step_config) {
		GHashTableIter it;
		gpointer k, v;
		g_hash_table_iter_init(&it, step_config);
		while (g_hash_table_iter_next(&it, &k, &v))
			put(h, k, v);
	}
	if (o) {
		size_t n;
		const struct config_key *ks = config_keys(&n);
		for (size_t i = 0; i < n; i++) {
			char *v = config_format(o, &ks[i]);
			put(h, ks[i].key, v);
			g_free(v);
		}
		if (o->extra) {
			GHashTableIter it;
			gpointer k, v;
			g_hash_table_iter_init(&it, o->extra);
			while (g_hash_table_iter_next(&it, &k, &v))
				put(h, k, ((const struct config_extra *)v)->value);
		}
	}
	for (const struct ibsm_config_key *k = declared; k && k->name; k++)
		put(h, k->name, k->default_value);
}

struct ibsm_core *services_new(const char *engine_name, const struct sm_options *o,
			       GHashTable *step_config, const struct ibsm_config_key *declared)
{
	struct services *sv = g_new0(struct services, 1);
	sv->pub.size = sizeof(sv->pub);
	sv->pub.cookie = sv;
	sv->pub.log = core_log;
	sv->pub.config = core_config;
	sv->pub.switch_hops = core_switch_hops;
	sv->pub.cancelled = core_cancelled;
	sv->pub.read_file = core_read_file;
	sv->pub.last_rows = core_last_rows;
	sv->name = g_strdup(engine_name ? engine_name : "?");
	sv->config = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	config_fill(sv->config, o, step_config, declared);
	return &sv->pub;
}

void services_free(struct ibsm_core *core)
{
	if (!core)
		return;
	struct services *sv = core->cookie;
	routing_tables_unref(sv->rows);
	g_hash_table_destroy(sv->config);
	g_free(sv->name);
	g_free(sv);
}

void services_cancel(struct ibsm_core *core, int on)
{
	struct services *sv = core->cookie;
	g_atomic_int_set(&sv->cancel, on ? 1 : 0);
}
