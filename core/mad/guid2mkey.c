/* SPDX-License-Identifier: BSD-2-Clause */
/* guid2mkey.c - OpenSM's guid2mkey file read and written (mad/guid2mkey.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/file_read.h"
#include "base/log.h"
#include "mad/guid2mkey.h"

struct guid2mkey {
	char *path, *npath;
	GHashTable *map;   /* uint64 guid -> uint64 key */
	GHashTable *nbr;   /* "0xGUID:N" -> "0xGUID:N" (OpenSM's neighbors lines) */
	int dirty, ndirty;
};

static guint g64_hash(gconstpointer p)
{
	uint64_t v = *(const uint64_t *)p;
	return (guint)(v ^ (v >> 32));
}

static gboolean g64_equal(gconstpointer a, gconstpointer b)
{
	return *(const uint64_t *)a == *(const uint64_t *)b;
}

static int parse_u64(const char *s, uint64_t *v, const char **end)
{
	char *e;
	errno = 0;
	unsigned long long x = strtoull(s, &e, 0);
	if (e == s || errno || *s == '-')
		return -1;
	*v = x;
	*end = e;
	return 0;
}

static int parse_gp(const char *s, uint64_t *guid, unsigned *num, const char **end)
{
	const char *e;
	if (parse_u64(s, guid, &e) < 0 || *e != ':' || !*guid)
		return -1;
	uint64_t n;
	if (parse_u64(e + 1, &n, end) < 0 || n > 255)
		return -1;
	*num = (unsigned)n;
	return 0;
}

static char *gp_key(uint64_t guid, unsigned num)
{
	return g_strdup_printf("0x%016" PRIx64 ":%u", guid, num);
}

static void load_neighbors(struct guid2mkey *m)
{
	char *text = NULL;
	size_t len = 0;
	GError *err = NULL;
	if (file_read_capped(m->npath, FILE_CAP_TEXT, "neighbors file", &text, &len, &err) < 0) {
		g_error_free(err);
		return;
	}
	uint32_t lineno = 0;
	char *cur = text, *line;
	while ((line = file_next_line(&cur, text + len))) {
		lineno++;
		const char *s = line + strspn(line, " \t\r"), *e;
		if (!*s || *s == '#')
			continue;
		uint64_t a, b;
		unsigned pa, pb;
		if (parse_gp(s, &a, &pa, &e) == 0 && (*e == ' ' || *e == '\t') &&
		    parse_gp(e + strspn(e, " \t"), &b, &pb, &e) == 0 && !e[strspn(e, " \t\r")])
			g_hash_table_replace(m->nbr, gp_key(a, pa), gp_key(b, pb));
		else
			LOG_W("G2M-0002", "%s:%u: malformed neighbors line skipped (want \"0xGUID:PORT "
			      "0xGUID:PORT\")", m->npath, lineno);
	}
	g_free(text);
}

struct guid2mkey *guid2mkey_load(const char *path)
{
	struct guid2mkey *m = g_new0(struct guid2mkey, 1);
	m->path = g_strdup(path);
	char *dir = g_path_get_dirname(path);
	m->npath = g_build_filename(dir, GUID2MKEY_NEIGHBORS_FILE, NULL);
	g_free(dir);
	m->map = g_hash_table_new_full(g64_hash, g64_equal, g_free, g_free);
	m->nbr = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	load_neighbors(m);
	char *text = NULL;
	size_t len = 0;
	GError *err = NULL;
	int rc = file_read_capped(path, FILE_CAP_TEXT, "guid2mkey file", &text, &len, &err);
	if (rc < 0) {
		if (rc != -ENOENT)
			LOG_E("G2M-0001", "%s; the M_Keys ports were given before are not known", err->message);
		g_error_free(err);
		return m;
	}
	uint32_t lineno = 0;
	char *cur = text, *line;
	while ((line = file_next_line(&cur, text + len))) {
		lineno++;
		const char *s = line + strspn(line, " \t\r");
		if (!*s || *s == '#')
			continue;
		uint64_t guid, key;
		const char *e;
		if (parse_u64(s, &guid, &e) == 0 && (*e == ' ' || *e == '\t') &&
		    parse_u64(e + strspn(e, " \t"), &key, &e) == 0 && !e[strspn(e, " \t\r")] && guid) {
			uint64_t *k = g_new(uint64_t, 1), *v = g_new(uint64_t, 1);
			*k = guid;
			*v = key;
			g_hash_table_replace(m->map, k, v);
		} else {
			char *esc = g_strescape(s, NULL);
			LOG_W("G2M-0002", "%s:%u: malformed guid2mkey line skipped (want \"0xGUID 0xMKEY\"): "
			      "%.80s", path, lineno, esc);
			g_free(esc);
		}
	}
	g_free(text);
	return m;
}

void guid2mkey_free(struct guid2mkey *m)
{
	if (!m)
		return;
	g_hash_table_destroy(m->map);
	g_hash_table_destroy(m->nbr);
	g_free(m->path);
	g_free(m->npath);
	g_free(m);
}

int guid2mkey_get(const struct guid2mkey *m, uint64_t guid, uint64_t *key)
{
	const uint64_t *v = m ? g_hash_table_lookup(m->map, &guid) : NULL;
	if (!v)
		return 0;
	*key = *v;
	return 1;
}

void guid2mkey_set(struct guid2mkey *m, uint64_t guid, uint64_t key)
{
	if (!m || !guid)
		return;
	uint64_t *v = g_hash_table_lookup(m->map, &guid);
	if (v && *v == key)
		return;
	uint64_t *k = g_new(uint64_t, 1), *nv = g_new(uint64_t, 1);
	*k = guid;
	*nv = key;
	g_hash_table_replace(m->map, k, nv);
	m->dirty = 1;
}

int guid2mkey_neighbor(const struct guid2mkey *m, uint64_t guid, uint8_t num, uint64_t *peer_guid)
{
	if (!m)
		return 0;
	char *k = gp_key(guid, num);
	const char *v = g_hash_table_lookup(m->nbr, k);
	g_free(k);
	unsigned pn;
	const char *e;
	return v && parse_gp(v, peer_guid, &pn, &e) == 0;
}

void guid2mkey_set_neighbor(struct guid2mkey *m, uint64_t guid, uint8_t num, uint64_t peer_guid,
			    uint8_t peer_num)
{
	if (!m || !guid || !peer_guid)
		return;
	char *k = gp_key(guid, num), *v = gp_key(peer_guid, peer_num);
	const char *old = g_hash_table_lookup(m->nbr, k);
	if (old && !strcmp(old, v)) {
		g_free(k);
		g_free(v);
		return;
	}
	g_hash_table_replace(m->nbr, k, v);
	m->ndirty = 1;
}

int guid2mkey_any(const struct guid2mkey *m)
{
	if (!m)
		return 0;
	GHashTableIter it;
	gpointer k, v;
	g_hash_table_iter_init(&it, m->map);
	while (g_hash_table_iter_next(&it, &k, &v))
		if (*(uint64_t *)v)
			return 1;
	return 0;
}

uint32_t guid2mkey_size(const struct guid2mkey *m)
{
	return m ? g_hash_table_size(m->map) : 0;
}

static gint cmp_guid(gconstpointer a, gconstpointer b)
{
	uint64_t x = **(uint64_t *const *)a, y = **(uint64_t *const *)b;
	return x < y ? -1 : x > y;
}

static int write_file(const char *path, const GString *text, int mode)
{
	char *dir = g_path_get_dirname(path);
	char *tmp = g_strconcat(path, ".tmp.XXXXXX", NULL);
	int rc = 0, fd = -1;
	if (g_mkdir_with_parents(dir, 0755) < 0 || (fd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, mode)) < 0) {
		rc = -errno;
		goto out;
	}
	for (size_t off = 0; off < text->len;) {
		ssize_t w = write(fd, text->str + off, text->len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			rc = -errno;
			break;
		}
		off += (size_t)w;
	}
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) < 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
out:
	if (rc)
		LOG_E("G2M-0003", "cannot write %s: %s; what this sweep learnt is kept in memory and "
		      "written at the next sweep", path, g_strerror(-rc));
	g_free(dir);
	g_free(tmp);
	return rc;
}

static int save_neighbors(struct guid2mkey *m)
{
	GList *keys = g_list_sort(g_hash_table_get_keys(m->nbr), (GCompareFunc)strcmp);
	GString *text = g_string_new(NULL);
	for (GList *l = keys; l; l = l->next)
		g_string_append_printf(text, "%s %s\n\n", (char *)l->data,
				       (char *)g_hash_table_lookup(m->nbr, l->data));
	g_list_free(keys);
	int rc = write_file(m->npath, text, 0644);
	g_string_free(text, TRUE);
	if (!rc)
		m->ndirty = 0;
	return rc;
}

int guid2mkey_save(struct guid2mkey *m)
{
	if (!m)
		return 0;
	int nrc = m->ndirty ? save_neighbors(m) : 0;
	if (!m->dirty)
		return nrc;
	GPtrArray *keys = g_ptr_array_new();
	GHashTableIter it;
	gpointer k, v;
	g_hash_table_iter_init(&it, m->map);
	while (g_hash_table_iter_next(&it, &k, &v))
		g_ptr_array_add(keys, k);
	g_ptr_array_sort(keys, cmp_guid);
	GString *text = g_string_new(NULL);
	for (guint i = 0; i < keys->len; i++) { /* OpenSM's osm_db layout: a blank line after each */
		uint64_t *g = keys->pdata[i];
		g_string_append_printf(text, "0x%016" PRIx64 " 0x%016" PRIx64 "\n\n", *g,
				       *(uint64_t *)g_hash_table_lookup(m->map, g));
	}
	g_ptr_array_free(keys, TRUE);
	int rc = write_file(m->path, text, 0600);
	if (!rc)
		m->dirty = 0;
	g_string_free(text, TRUE);
	return rc ? rc : nrc;
}
