/* SPDX-License-Identifier: BSD-2-Clause */
/* config_file.c - reads the configuration file: YAML (a mapping of key: scalar, libyaml, with line and
 * column of every problem) or an existing OpenSM opensm.conf ("key value" lines). */
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>
#include "base/file_read.h"
#include "config/config_file.h"
#include "config/keys.h"

struct load_ctx {
	const char *path;
	struct sm_options *o;
	GHashTable *pairs;   /* config_load_pairs(): every key read -> struct config_extra */
};

/* applies KEY VALUE found at LINE:COL (1-based); VALUE NULL = null */
static int apply(struct load_ctx *c, const char *key, unsigned kline, unsigned kcol, const char *value,
		 unsigned vline, unsigned vcol, GError **err)
{
	const struct config_key *k = config_key_find(key);
	if (c->pairs) {
		char *where = g_strdup_printf("%s:%u:%u", c->path, kline, kcol);
		struct config_extra *x = g_new0(struct config_extra, 1);
		x->where = where;
		x->value = g_strdup(value);
		g_hash_table_replace(c->pairs, g_strdup(key), x);
		if (!k)
			return 0;
		/* a core key's value is checked, then kept as the file would spell it */
	}
	if (!k) {
		/* an engine's key, an OpenSM key ibsm does not use, or a mistake: config/build.c
		 * decides once it knows which keys the engines declare */
		char *where = g_strdup_printf("%s:%u:%u", c->path, kline, kcol);
		options_set_extra(c->o, key, value, where);
		g_free(where);
		return 0;
	}
	GError *e = NULL;
	if (config_set(c->o, k, value, &e) < 0) {
		g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_BAD_VALUE, "%s:%u:%u: %s: %s", c->path, vline, vcol,
			    key, e->message);
		g_error_free(e);
		return -1;
	}
	if (c->pairs) {
		struct config_extra *x = g_hash_table_lookup(c->pairs, key);
		g_free(x->value);
		x->value = config_format(c->o, k);
	}
	return 0;
}

static int is_plain_null(const yaml_event_t *ev)
{
	const char *v = (const char *)ev->data.scalar.value;
	if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	return !*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") || !strcmp(v, "NULL");
}

static int load_yaml(struct load_ctx *c, const char *text, size_t len, GError **err)
{
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser)) {
		g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_IO, "%s: cannot start the YAML parser", c->path);
		return -1;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	enum { TOP, DOC, KEY, VALUE, END } st = TOP;
	char *key = NULL;
	unsigned kline = 0, kcol = 0;
	int rc = -1, docs = 0;
	for (;;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&parser, &ev)) {
			g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_SYNTAX, "%s:%zu:%zu: %s%s%s", c->path,
				    parser.problem_mark.line + 1, parser.problem_mark.column + 1,
				    parser.problem ? parser.problem : "YAML syntax error",
				    parser.context ? " " : "", parser.context ? parser.context : "");
			break;
		}
		unsigned line = (unsigned)ev.start_mark.line + 1, col = (unsigned)ev.start_mark.column + 1;
		yaml_event_type_t t = ev.type;
		int bad = 0;
		if (t == YAML_STREAM_END_EVENT) {
			rc = 0;
		} else if (t == YAML_STREAM_START_EVENT || t == YAML_DOCUMENT_END_EVENT) {
			/* nothing */
		} else if (t == YAML_DOCUMENT_START_EVENT) {
			if (docs++) {
				g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_SYNTAX,
					    "%s:%u:%u: only one YAML document is allowed", c->path, line, col);
				bad = 1;
			}
			st = DOC;
		} else if (st == DOC && t == YAML_MAPPING_START_EVENT) {
			st = KEY;
		} else if (st == DOC && t == YAML_SCALAR_EVENT && is_plain_null(&ev)) {
			st = END; /* an empty document */
		} else if (st == KEY && t == YAML_MAPPING_END_EVENT) {
			st = END;
		} else if (st == KEY && t == YAML_SCALAR_EVENT) {
			g_free(key);
			key = g_strdup((const char *)ev.data.scalar.value);
			kline = line;
			kcol = col;
			st = VALUE;
		} else if (st == VALUE && t == YAML_SCALAR_EVENT) {
			const char *v = is_plain_null(&ev) ? NULL : (const char *)ev.data.scalar.value;
			bad = apply(c, key, kline, kcol, v, line, col, err) < 0;
			st = KEY;
		} else if (st == VALUE) {
			g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_BAD_VALUE,
				    "%s:%u:%u: %s: the value must be a single scalar (key: value)", c->path, line, col,
				    key);
			bad = 1;
		} else if (st == KEY) {
			g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_SYNTAX,
				    "%s:%u:%u: a key must be a plain word (key: value)", c->path, line, col);
			bad = 1;
		} else {
			g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_SYNTAX,
				    "%s:%u:%u: expected a mapping of key: value lines", c->path, line, col);
			bad = 1;
		}
		yaml_event_delete(&ev);
		if (bad || t == YAML_STREAM_END_EVENT)
			break;
	}
	g_free(key);
	yaml_parser_delete(&parser);
	return rc == 0 && !(err && *err) ? 0 : -1;
}

/* OpenSM's opensm.conf: "key value" lines, '#' comments; "(null)" = unset */
static int load_opensm_conf(struct load_ctx *c, char *text, GError **err)
{
	char **lines = g_strsplit(text, "\n", -1);
	int rc = 0;
	for (unsigned i = 0; lines[i] && rc == 0; i++) {
		char *l = lines[i];
		g_strchomp(l);
		char *p = l;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			continue;
		char *k = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		char *v = p;
		if (*p)
			*p++ = 0;
		while (*p == ' ' || *p == '\t')
			p++;
		v = p;
		rc = apply(c, k, i + 1, (unsigned)(k - l) + 1, *v ? v : NULL, i + 1, (unsigned)(v - l) + 1, err);
	}
	g_strfreev(lines);
	return rc;
}

/* first line that is neither blank nor a comment looks like "key value" (no ':' after key) */
static int looks_like_opensm_conf(const char *text)
{
	const char *p = text;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		const char *q = p;
		while (q < p + n && (*q == ' ' || *q == '\t' || *q == '\r'))
			q++;
		if (q < p + n && *q != '#') {
			if (q != p)
				return 0; /* indented: YAML */
			const char *w = q;
			while (w < p + n && (g_ascii_isalnum(*w) || *w == '_'))
				w++;
			if (w == q || w >= p + n || (*w != ' ' && *w != '\t'))
				return 0;
			while (w < p + n && (*w == ' ' || *w == '\t'))
				w++;
			return w < p + n && *w != ':' && *w != '\r';
		}
		p = eol ? eol + 1 : p + n;
	}
	return 0;
}

static int load_file(const char *path, struct sm_options *o, GHashTable *pairs, GError **err)
{
	char *text = NULL;
	size_t len = 0;
	GError *e = NULL;
	/* a regular file of at most 16 MiB: never /dev/zero, a FIFO or a directory */
	if (file_read_capped(path, FILE_CAP_TEXT, "configuration file", &text, &len, &e) < 0) {
		g_set_error_literal(err, CONFIG_ERROR, CONFIG_ERROR_IO, e->message);
		g_error_free(e);
		return -1;
	}
	if (memchr(text, 0, len)) {
		g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_SYNTAX, "%s: not a text file", path);
		g_free(text);
		return -1;
	}
	struct load_ctx c = { path, o, pairs };
	int rc = looks_like_opensm_conf(text) ? load_opensm_conf(&c, text, err) : load_yaml(&c, text, len, err);
	g_free(text);
	return rc;
}


int config_load(const char *path, struct sm_options *o, GError **err)
{
	return load_file(path, o, NULL, err);
}

static void extra_free(gpointer p)
{
	struct config_extra *x = p;
	g_free(x->value);
	g_free(x->where);
	g_free(x);
}

GHashTable *config_load_pairs(const char *path, GError **err)
{
	struct sm_options scratch;
	options_defaults(&scratch);
	GHashTable *pairs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, extra_free);
	int rc = load_file(path, &scratch, pairs, err);
	options_free(&scratch);
	if (rc < 0) {
		g_hash_table_destroy(pairs);
		return NULL;
	}
	return pairs;
}
