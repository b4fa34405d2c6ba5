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
#include "base/guid_hash.h"
#include "base/log.h"
#include "mad/guid2mkey.h"

struct guid2mkey {
	char *path, *npath;
	GHashTable *map;   /* uint64 guid -> uint64 key */
	GHashTable *nbr;   /* struct nbr, its own key (GUID and port) and value: OpenSM's neighbors
			    * lines */
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

/* One neighbors line: the port (GUID, number) is the key, the port its link leads to the
 * value; one allocation a line (a large fabric has tens of thousands). */
struct nbr {
	uint64_t guid, peer_guid;
	uint8_t num, peer_num;
};

static guint nbr_hash(gconstpointer p)
{
	const struct nbr *n = p;
	return guid_port_hash(n->guid, n->num, 0);
}

static gboolean nbr_equal(gconstpointer a, gconstpointer b)
{
	const struct nbr *x = a, *y = b;
	return x->guid == y->guid && x->num == y->num;
}

static void nbr_put(struct guid2mkey *m, uint64_t guid, unsigned num, uint64_t peer_guid, unsigned peer_num)
{
	struct nbr *n = g_new(struct nbr, 1);
	*n = (struct nbr){ guid, peer_guid, (uint8_t)num, (uint8_t)peer_num };
	g_hash_table_replace(m->nbr, n, n);
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
			nbr_put(m, a, pa, b, pb);
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
	m->nbr = g_hash_table_new_full(nbr_hash, nbr_equal, g_free, NULL);
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
	struct nbr key = { .guid = guid, .num = num };
	const struct nbr *n = g_hash_table_lookup(m->nbr, &key);
	if (n)
		*peer_guid = n->peer_guid;
	return n != NULL;
}

void guid2mkey_set_neighbor(struct guid2mkey *m, uint64_t guid, uint8_t num, uint64_t peer_guid,
			    uint8_t peer_num)
{
	if (!m || !guid || !peer_guid)
		return;
	struct nbr key = { .guid = guid, .num = num };
	const struct nbr *old = g_hash_table_lookup(m->nbr, &key);
	if (old && old->peer_guid == peer_guid && old->peer_num == peer_num)
		return;
	nbr_put(m, guid, num, peer_guid, peer_num);
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

/* The rank of each port number among the decimal strings "0" to "255" ("1" < "10" < "100" <
 * "101" ... < "2"): the file's lines in the order of their text, as before. */
static uint8_t port_text_rank[256];

static void port_text_ranks(void)
{
	static gsize done;
	if (!g_once_init_enter(&done))
		return;
	char text[256][4];
	uint8_t order[256];
	for (unsigned p = 0; p < 256; p++) {
		snprintf(text[p], sizeof(text[p]), "%u", p);
		order[p] = (uint8_t)p;
	}
	for (unsigned i = 1; i < 256; i++) /* insertion sort of 256 short strings, once */
		for (unsigned j = i; j > 0 && strcmp(text[order[j]], text[order[j - 1]]) < 0; j--) {
			uint8_t x = order[j];
			order[j] = order[j - 1];
			order[j - 1] = x;
		}
	for (unsigned r = 0; r < 256; r++)
		port_text_rank[order[r]] = (uint8_t)r;
	g_once_init_leave(&done, 1);
}

static gint cmp_nbr(gconstpointer a, gconstpointer b)
{
	const struct nbr *x = *(const struct nbr *const *)a, *y = *(const struct nbr *const *)b;
	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return (int)port_text_rank[x->num] - (int)port_text_rank[y->num];
}

/* "0x" and 16 hex digits, ":" and the port number, as "0x%016" PRIx64 ":%u" writes them. */
static void append_gp(GString *s, uint64_t guid, unsigned num)
{
	static const char hex[] = "0123456789abcdef";
	char buf[24];
	buf[0] = '0';
	buf[1] = 'x';
	for (int i = 0; i < 16; i++)
		buf[2 + i] = hex[(guid >> (60 - 4 * i)) & 0xF];
	buf[18] = ':';
	int len = 19;
	if (num >= 100)
		buf[len++] = (char)('0' + num / 100);
	if (num >= 10)
		buf[len++] = (char)('0' + num / 10 % 10);
	buf[len++] = (char)('0' + num % 10);
	g_string_append_len(s, buf, len);
}

/* The keys of table h in the order of cmp. */
static GPtrArray *sorted_keys(GHashTable *h, GCompareFunc cmp)
{
	GPtrArray *keys = g_ptr_array_sized_new(g_hash_table_size(h));
	GHashTableIter it;
	gpointer k, v;
	g_hash_table_iter_init(&it, h);
	while (g_hash_table_iter_next(&it, &k, &v))
		g_ptr_array_add(keys, k);
	g_ptr_array_sort(keys, cmp);
	return keys;
}

static int save_neighbors(struct guid2mkey *m)
{
	port_text_ranks();
	GPtrArray *lines = sorted_keys(m->nbr, cmp_nbr);
	GString *text = g_string_sized_new((gsize)lines->len * 48);
	for (guint i = 0; i < lines->len; i++) {
		const struct nbr *n = lines->pdata[i];
		append_gp(text, n->guid, n->num);
		g_string_append_c(text, ' ');
		append_gp(text, n->peer_guid, n->peer_num);
		g_string_append(text, "\n\n");
	}
	g_ptr_array_free(lines, TRUE);
	int rc = write_file(m->npath, text, 0644);
	g_string_free(text, TRUE);
	if (!rc)
		m->ndirty = 0;
	return rc;
}

int guid2mkey_save_neighbors(struct guid2mkey *m)
{
	return m && m->ndirty ? save_neighbors(m) : 0;
}

int guid2mkey_save(struct guid2mkey *m)
{
	if (!m)
		return 0;
	int nrc = m->ndirty ? save_neighbors(m) : 0;
	if (!m->dirty)
		return nrc;
	GPtrArray *keys = sorted_keys(m->map, cmp_guid);
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
