/* SPDX-License-Identifier: BSD-2-Clause */
/* prefix_routes.c - OpenSM's prefix-routes.conf read once per configuration (start, SIGHUP)
 * and the router it picks for an off-subnet prefix (sa/prefix_routes.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "base/file_read.h"
#include "base/log.h"
#include "sa/prefix_routes.h"

/* "*" -> 0; else hex with an optional 0x, at most 16 digits. 0 or -1. */
static int parse_word(const char *w, uint64_t *v)
{
	if (!strcmp(w, "*")) {
		*v = 0;
		return 0;
	}
	if (w[0] == '0' && (w[1] == 'x' || w[1] == 'X'))
		w += 2;
	size_t n = strlen(w);
	if (n == 0 || n > 16 || strspn(w, "0123456789abcdefABCDEF") != n)
		return -1;
	*v = g_ascii_strtoull(w, NULL, 16);
	return 0;
}

GArray *prefix_routes_parse(const char *path, const char *text, unsigned *bad)
{
	GArray *a = g_array_new(FALSE, FALSE, sizeof(struct prefix_route));
	char **lines = g_strsplit(text, "\n", -1);
	*bad = 0;
	for (unsigned i = 0; lines[i]; i++) {
		char *hash = strchr(lines[i], '#');
		if (hash)
			*hash = 0;
		char **w = g_strsplit_set(g_strstrip(lines[i]), " \t", -1);
		unsigned n = 0;
		const char *words[3] = { NULL, NULL, NULL };
		for (unsigned k = 0; w[k]; k++)
			if (*w[k] && n < 3)
				words[n++] = w[k];
			else if (*w[k])
				n++;
		struct prefix_route r;
		if (n == 0) {
			g_strfreev(w);
			continue;
		}
		if (n != 2 || parse_word(words[0], &r.prefix) < 0 || parse_word(words[1], &r.guid) < 0) {
			LOG_E("PFX-0001", "%s:%u: expected a prefix and a router port GUID (hex, or '*'); "
			      "line skipped", path, i + 1);
			(*bad)++;
		} else {
			g_array_append_val(a, r);
		}
		g_strfreev(w);
	}
	g_strfreev(lines);
	return a;
}

GArray *prefix_routes_load(const char *path, int explicit_path)
{
	if (!path || !*path || !strcmp(path, "(null)"))
		return NULL;
	char *text = NULL;
	size_t len = 0;
	GError *err = NULL;
	int rc = file_read_capped(path, FILE_CAP_TEXT, "prefix routes file", &text, &len, &err);
	if (rc == -ENOENT) {
		if (explicit_path)
			LOG_I("PFX-0004", "prefix_routes_file %s is not there: a path to an off-subnet "
			      "DGID goes to the first router", path);
		g_clear_error(&err);
		return NULL;
	}
	if (rc < 0) {
		LOG_E("PFX-0002", "prefix_routes_file %s: no path leaves the subnet", err->message);
		g_clear_error(&err);
		return g_array_new(FALSE, FALSE, sizeof(struct prefix_route));
	}
	unsigned bad;
	GArray *a = prefix_routes_parse(path, text, &bad);
	g_free(text);
	LOG_I("PFX-0003", "prefix_routes_file %s: %u routes%s", path, a->len, bad ? " (bad lines skipped)" : "");
	return a;
}

uint64_t prefix_routes_pick(const GArray *routes, uint64_t prefix,
			    uint64_t (*present)(void *ctx, uint64_t guid), void *ctx)
{
	for (guint i = 0; routes && i < routes->len; i++) {
		const struct prefix_route *r = &g_array_index(routes, struct prefix_route, i);
		if (r->prefix && r->prefix != prefix)
			continue;
		uint64_t g = present(ctx, r->guid);
		if (g)
			return g;
	}
	return 0;
}
