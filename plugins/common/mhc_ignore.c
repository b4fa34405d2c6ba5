/* mhc_ignore.c - the equalize-ignore file of the min-hop engines (-i, port_prof_ignore_file):
 * which routes do not count in the per-port balance. Parsed with line numbers for its errors,
 * then matched against one fabric generation by binary search (no glib in plugins). */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "mhc.h"

static int entry_cmp(const void *x, const void *y)
{
	const struct mhc_ignore_entry *a = x, *b = y;
	if (a->guid != b->guid)
		return a->guid < b->guid ? -1 : 1;
	return (int)a->port - (int)b->port;
}

void mhc_ignore_clear(struct mhc_ignore *ig)
{
	free(ig->v);
	ig->v = NULL;
	ig->n = 0;
	ig->bad_lines = 0;
}

/* Parses one line (comment already cut). Returns 1 with *e filled, 0 for a blank line, or -1
 * with *why set. */
static int parse_line(char *s, struct mhc_ignore_entry *e, const char **why)
{
	while (isspace((unsigned char)*s))
		s++;
	if (!*s)
		return 0;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	uint64_t g = 0;
	int digits = 0;
	for (; isxdigit((unsigned char)*s); s++, digits++) {
		int c = tolower((unsigned char)*s);
		g = g << 4 | (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
	}
	if (digits == 0 || digits > 16) {
		*why = digits ? "GUID longer than 16 hex digits" : "expected a hex GUID";
		return -1;
	}
	if (*s && !isspace((unsigned char)*s)) {
		*why = "junk after the GUID";
		return -1;
	}
	if (g == 0) {
		*why = "GUID 0";
		return -1;
	}
	while (isspace((unsigned char)*s))
		s++;
	unsigned long port = 0;
	if (*s) {
		char *end;
		if (!isdigit((unsigned char)*s)) {
			*why = "expected a port number after the GUID";
			return -1;
		}
		errno = 0;
		port = strtoul(s, &end, 10);
		if (errno || port == 0 || port > 254) {
			*why = "port number out of range 1-254";
			return -1;
		}
		s = end;
		while (isspace((unsigned char)*s))
			s++;
		if (*s) {
			*why = "junk after the port number";
			return -1;
		}
	}
	e->guid = g;
	e->port = (uint8_t)port;
	return 1;
}

int mhc_ignore_load(const struct ibsm_core *core, const char *path, int bad_level,
		       struct mhc_ignore *ig)
{
	mhc_ignore_clear(ig);
	FILE *fp = fopen(path, "r");
	if (!fp) {
		int err = errno;
		core->log(core, IBSM_LOG_ERROR, "cannot read ignore file %s: %s", path,
			  strerror(err));
		return -err;
	}
	char *line = NULL;
	size_t cap = 0, alloc = 0;
	unsigned lineno = 0;
	int rc = 0;
	while (getline(&line, &cap, fp) >= 0) {
		lineno++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		struct mhc_ignore_entry e;
		const char *why = NULL;
		int r = parse_line(line, &e, &why);
		if (r < 0) {
			ig->bad_lines++;
			core->log(core, bad_level, "%s:%u: %s; line skipped", path, lineno, why);
			continue;
		}
		if (r == 0)
			continue;
		if (ig->n == alloc) {
			size_t na = alloc ? alloc * 2 : 16;
			struct mhc_ignore_entry *nv = realloc(ig->v, na * sizeof(*nv));
			if (!nv) {
				rc = -ENOMEM;
				break;
			}
			ig->v = nv;
			alloc = na;
		}
		ig->v[ig->n++] = e;
	}
	if (!rc && ferror(fp)) {
		rc = -EIO;
		core->log(core, IBSM_LOG_ERROR, "read error in ignore file %s", path);
	}
	free(line);
	fclose(fp);
	if (rc < 0) {
		mhc_ignore_clear(ig);
		return rc;
	}
	if (ig->n)
		qsort(ig->v, ig->n, sizeof(*ig->v), entry_cmp);
	return 0;
}

static int ignore_has(const struct mhc_ignore *ig, uint64_t guid, uint8_t port)
{
	struct mhc_ignore_entry key = { .guid = guid, .port = port };
	return ig->n && bsearch(&key, ig->v, ig->n, sizeof(*ig->v), entry_cmp) != NULL;
}

uint32_t mhc_ignore_mark(const struct mhc_ignore *ig, const struct ibsm_fabric *f,
			    uint8_t *dest_ignored, uint8_t *exit_ignored)
{
	uint32_t matched = 0;
	if (!ig->n)
		return 0;
	for (uint32_t p = 0; p < f->n_ports; p++) {
		const struct ibsm_port *port = &f->ports[p];
		const struct ibsm_node *node = &f->nodes[port->node];
		if (node->type == IBSM_SWITCH && port->num != 0) {
			if (ignore_has(ig, node->guid, port->num)) {
				exit_ignored[p] = 1;
				matched++;
			}
		} else if (port->num != 0 || node->type == IBSM_SWITCH) {
			/* an end port: a CA or router port, or switch port 0 */
			if (!port->guid || !ignore_has(ig, port->guid, 0))
				continue;
			dest_ignored[p] = 1;
			matched++;
		}
	}
	return matched;
}

void mhc_ignore_cache_clear(struct mhc_ignore_cache *cache)
{
	free(cache->path);
	memset(cache, 0, sizeof(*cache));
}

int mhc_ignore_apply(const struct ibsm_core *core, struct mhc_ignore_cache *cache,
		     const struct ibsm_fabric *f, uint8_t **dest_ign, uint8_t **exit_ign,
		     uint32_t *matched)
{
	const char *path = core->config ? core->config(core, "port_prof_ignore_file") : NULL;
	*dest_ign = *exit_ign = NULL;
	*matched = 0;
	if (!path || !*path || !strcmp(path, "(null)")) /* opensm.conf's way to say "unset" */
		return 0;
	struct stat st;
	int seen = 0;
	if (stat(path, &st) == 0 && cache->path && !strcmp(cache->path, path) &&
	    st.st_mtim.tv_sec == cache->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == cache->mtime.tv_nsec && st.st_size == cache->size)
		seen = 1;
	struct mhc_ignore ig = { 0 };
	if (mhc_ignore_load(core, path, seen ? IBSM_LOG_VERBOSE : IBSM_LOG_ERROR, &ig) < 0)
		return 0; /* logged; route without it, as OpenSM does */
	free(cache->path);
	cache->path = strdup(path);
	if (stat(path, &st) == 0) {
		cache->mtime = st.st_mtim;
		cache->size = st.st_size;
	}
	*dest_ign = calloc(f->n_ports ? f->n_ports : 1, 1);
	*exit_ign = calloc(f->n_ports ? f->n_ports : 1, 1);
	if (!*dest_ign || !*exit_ign) {
		mhc_ignore_clear(&ig);
		free(*dest_ign);
		free(*exit_ign);
		*dest_ign = *exit_ign = NULL;
		return -ENOMEM;
	}
	*matched = mhc_ignore_mark(&ig, f, *dest_ign, *exit_ign);
	core->log(core, IBSM_LOG_VERBOSE,
		  "ignore file %s: %u entries, %u in this fabric, %u bad lines", path, ig.n,
		  *matched, ig.bad_lines);
	mhc_ignore_clear(&ig);
	return 0;
}
