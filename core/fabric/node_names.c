/* SPDX-License-Identifier: BSD-2-Clause */
/* node_names.c - the node name map in force (fabric/node_names.h): parsed once per
 * configuration, swapped under a lock, looked up by copy so a reload never pulls a name from
 * under a reader. */
#include <errno.h>
#include <string.h>
#include "base/file_read.h"
#include "base/log.h"
#include "fabric/node_names.h"

static GMutex lock;
static GHashTable *current;

/* One line (leading blanks skipped, not a comment): the GUID (strtoull, base 0) followed by a
 * blank, '#' or the end, else *bad; then the name as OpenSM's libibnetdisc reads it: the first
 * run of characters that are neither '"' nor '#' (so "a b" gives a b). NULL: no name (the
 * line is passed over, as OpenSM does). */
static char *parse_line(const char *s, uint64_t *guid, int *bad)
{
	char *end;
	*bad = 0;
	*guid = g_ascii_strtoull(s, &end, 0);
	if (end == s || (*end && !g_ascii_isspace(*end) && *end != '#')) {
		*bad = 1;
		return NULL;
	}
	while (g_ascii_isspace(*end))
		end++;
	const char *p = end + strspn(end, "\"#");
	size_t n = strcspn(p, "\"#\r");
	return n ? g_strndup(p, n) : NULL;
}

GHashTable *node_names_parse(const char *path, const char *text, unsigned *bad)
{
	GHashTable *t = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
	char **lines = g_strsplit(text, "\n", -1);
	*bad = 0;
	for (unsigned i = 0; lines[i]; i++) {
		const char *s = lines[i];
		while (g_ascii_isspace(*s))
			s++;
		if (!*s || *s == '#')
			continue;
		uint64_t guid;
		int wrong;
		char *name = parse_line(s, &guid, &wrong);
		if (wrong) { /* OpenSM (libibnetdisc) drops the whole map for one such line */
			LOG_E("NNM-0001", "%s:%u: not a node GUID: the map is not used, nodes are "
			      "named by their NodeDescription, as OpenSM does", path, i + 1);
			(*bad)++;
			g_hash_table_unref(t);
			g_strfreev(lines);
			return NULL;
		}
		gint64 k = (gint64)guid;
		if (!name || g_hash_table_contains(t, &k)) { /* no name; a GUID again: the first */
			g_free(name);
			continue;
		}
		gint64 *key = g_new(gint64, 1);
		*key = k;
		g_hash_table_insert(t, key, name);
	}
	g_strfreev(lines);
	return t;
}

static void set_map(GHashTable *t)
{
	g_mutex_lock(&lock);
	GHashTable *old = current;
	current = t;
	g_mutex_unlock(&lock);
	if (old)
		g_hash_table_unref(old);
}

void node_names_load(const char *path)
{
	if (!path || !*path || !strcmp(path, "(null)")) {
		set_map(NULL);
		return;
	}
	char *text = NULL;
	size_t len = 0;
	GError *err = NULL;
	if (file_read_capped(path, FILE_CAP_TEXT, "node name map", &text, &len, &err) < 0) {
		LOG_E("NNM-0002", "node_name_map_name %s: nodes are named by their NodeDescription",
		      err->message);
		g_clear_error(&err);
		set_map(NULL);
		return;
	}
	unsigned bad;
	GHashTable *t = node_names_parse(path, text, &bad);
	g_free(text);
	if (t)
		LOG_I("NNM-0003", "node_name_map_name %s: %u names", path, g_hash_table_size(t));
	set_map(t);
}

const char *node_names_copy(uint64_t guid, char *buf, size_t len)
{
	const char *out = NULL;
	gint64 k = (gint64)guid;
	g_mutex_lock(&lock);
	const char *name = current ? g_hash_table_lookup(current, &k) : NULL;
	if (name && len) {
		g_strlcpy(buf, name, len);
		out = buf;
	}
	g_mutex_unlock(&lock);
	return out;
}
