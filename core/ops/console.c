/* SPDX-License-Identifier: BSD-2-Clause */
/* console.c - the console's command registry and the running of one command line: the words
 * split, the command found, its reply built as text lines and a JSON object side by side (so
 * `ibsm-cli --json` and a person at `nc` read the same answer). The server is console_server.c,
 * the built-in commands console_cmds.c. */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include "ops/console.h"
#include "ops/console_int.h"

struct console_cmd {
	const char *name, *usage, *help;
	console_fn fn;
};

struct console_reply {
	GString *text;   /* lines, each ending in '\n' */
	GString *json;   /* the object's members, comma separated, without braces */
};

static GArray *commands; /* of struct console_cmd, in the order added */
static char *version;

void console_set_version(const char *v)
{
	g_free(version);
	version = g_strdup(v);
}

const char *console_version(void)
{
	return version ? version : "?";
}

void console_command_add(const char *name, const char *usage, const char *help, console_fn fn)
{
	if (!commands)
		commands = g_array_new(FALSE, FALSE, sizeof(struct console_cmd));
	struct console_cmd c = { name, usage ? usage : "", help ? help : "", fn };
	for (guint i = 0; i < commands->len; i++)
		if (!strcmp(g_array_index(commands, struct console_cmd, i).name, name)) {
			g_array_index(commands, struct console_cmd, i) = c;
			return;
		}
	g_array_append_val(commands, c);
}

/* The registry for `help`: n commands; NULL past the end. */
int console_command_at(guint i, const char **name, const char **usage, const char **help)
{
	if (!commands || i >= commands->len)
		return -1;
	const struct console_cmd *c = &g_array_index(commands, struct console_cmd, i);
	*name = c->name;
	*usage = c->usage;
	*help = c->help;
	return 0;
}

static const struct console_cmd *find(const char *name)
{
	for (guint i = 0; commands && i < commands->len; i++)
		if (!strcmp(g_array_index(commands, struct console_cmd, i).name, name))
			return &g_array_index(commands, struct console_cmd, i);
	return NULL;
}

void console_printf(struct console_reply *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_string_append_vprintf(r->text, fmt, ap);
	va_end(ap);
	if (!r->text->len || r->text->str[r->text->len - 1] != '\n')
		g_string_append_c(r->text, '\n');
}

void console_json_escape(GString *g, const char *val)
{
	g_string_append_c(g, '"');
	for (const unsigned char *p = (const unsigned char *)(val ? val : ""); *p; p++) {
		switch (*p) {
		case '"': g_string_append(g, "\\\""); break;
		case '\\': g_string_append(g, "\\\\"); break;
		case '\n': g_string_append(g, "\\n"); break;
		case '\r': g_string_append(g, "\\r"); break;
		case '\t': g_string_append(g, "\\t"); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				g_string_append_printf(g, "\\u%04x", *p);
			else
				g_string_append_c(g, (char)*p);
		}
	}
	g_string_append_c(g, '"');
}

static void member(struct console_reply *r, const char *key)
{
	if (r->json->len)
		g_string_append_c(r->json, ',');
	console_json_escape(r->json, key);
	g_string_append_c(r->json, ':');
}

void console_json_str(struct console_reply *r, const char *key, const char *val)
{
	member(r, key);
	if (val)
		console_json_escape(r->json, val);
	else
		g_string_append(r->json, "null");
}

void console_json_int(struct console_reply *r, const char *key, int64_t val)
{
	member(r, key);
	g_string_append_printf(r->json, "%" G_GINT64_FORMAT, val);
}

void console_json_double(struct console_reply *r, const char *key, double val)
{
	member(r, key);
	char buf[G_ASCII_DTOSTR_BUF_SIZE];
	/* JSON has no NaN or infinities */
	if (val != val || val > 1e308 || val < -1e308)
		g_string_append(r->json, "null");
	else
		g_string_append(r->json, g_ascii_formatd(buf, sizeof(buf), "%.6f", val));
}

void console_json_bool(struct console_reply *r, const char *key, int val)
{
	member(r, key);
	g_string_append(r->json, val ? "true" : "false");
}

void console_json_raw(struct console_reply *r, const char *key, const char *json)
{
	member(r, key);
	g_string_append(r->json, json && *json ? json : "null");
}

char **console_split(const char *line, const char **why)
{
	static const char *dummy;
	if (!why)
		why = &dummy;
	*why = NULL;
	if (!g_utf8_validate(line, -1, NULL)) {
		*why = "not UTF-8 text";
		return NULL;
	}
	GPtrArray *words = g_ptr_array_new_with_free_func(g_free);
	GString *w = NULL;
	int quoted = 0;
	for (const char *p = line;; p++) {
		unsigned char c = (unsigned char)*p;
		if (c && (c < 0x20 || c == 0x7f) && c != '\t') {
			*why = "a control character";
			goto fail;
		}
		if (!c) {
			if (quoted) {
				*why = "an unclosed quote";
				goto fail;
			}
			if (w)
				g_ptr_array_add(words, g_string_free(w, FALSE));
			break;
		}
		if (quoted) {
			if (c == '"') {
				quoted = 0;
			} else if (c == '\\' && (p[1] == '"' || p[1] == '\\')) {
				g_string_append_c(w, *++p);
			} else {
				g_string_append_c(w, (char)c);
			}
			continue;
		}
		if (c == ' ' || c == '\t') {
			if (w)
				g_ptr_array_add(words, g_string_free(w, FALSE));
			w = NULL;
			continue;
		}
		if (!w)
			w = g_string_new(NULL);
		if (c == '"')
			quoted = 1;
		else
			g_string_append_c(w, (char)c);
	}
	g_ptr_array_add(words, NULL);
	return (char **)g_ptr_array_free(words, FALSE);
fail:
	if (w)
		g_string_free(w, TRUE);
	g_ptr_array_free(words, TRUE);
	return NULL;
}

static void finish(GString *out, struct console_reply *r, const char *name, int rc, int json)
{
	if (!json) {
		g_string_append_len(out, r->text->str, (gssize)r->text->len);
		return;
	}
	g_string_append(out, "{\"ok\":");
	g_string_append(out, rc < 0 ? "false" : "true");
	g_string_append(out, ",\"status\":");
	g_string_append_printf(out, "%d", rc < 0 ? rc : 0);
	g_string_append(out, ",\"command\":");
	console_json_escape(out, name ? name : "");
	if (r->json->len) {
		g_string_append_c(out, ',');
		g_string_append_len(out, r->json->str, (gssize)r->json->len);
	}
	g_string_append(out, ",\"text\":[");
	/* the text lines as an array of strings */
	const char *s = r->text->str;
	int first = 1;
	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);
		char *line = g_strndup(s, n);
		if (!first)
			g_string_append_c(out, ',');
		first = 0;
		console_json_escape(out, line);
		g_free(line);
		s += n + (nl ? 1 : 0);
	}
	g_string_append(out, "]}\n");
}

int console_execute(struct sm *sm, const char *line, int json, GString *out)
{
	struct console_reply r = { g_string_new(NULL), g_string_new(NULL) };
	const char *why = NULL;
	char **argv = console_split(line, &why);
	int rc;
	const char *name = NULL;
	if (!argv) {
		console_printf(&r, "error: not a command line (%s)", why);
		rc = -EINVAL;
	} else if (!argv[0]) {
		rc = 0; /* an empty line: an empty reply */
	} else {
		name = argv[0];
		const struct console_cmd *c = find(name);
		if (!c) {
			console_printf(&r, "error: no command '%s' (try help)", name);
			rc = -ENOENT;
		} else {
			rc = c->fn(sm, (int)g_strv_length(argv), argv, &r);
			if (rc > 0)
				rc = 0;
		}
	}
	finish(out, &r, name, rc, json);
	g_strfreev(argv);
	g_string_free(r.text, TRUE);
	g_string_free(r.json, TRUE);
	return rc;
}
