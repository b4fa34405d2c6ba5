/* guids.c - reads the GUID lists the fat-tree engine takes (root switches -a, compute nodes -u,
 * I/O nodes -G): one GUID a line, as OpenSM's files are; bad lines are named and skipped. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ftree.h"

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

int ftree_guids_load(const struct ibsm_core *core, const char *path, struct ftree_guids *g)
{
	ftree_guids_clear(g);
	FILE *fp = fopen(path, "r");
	if (!fp) {
		int e = errno;
		core->log(core, IBSM_LOG_ERROR, "cannot read GUID file %s: %s", path, strerror(e));
		return -e;
	}
	char *line = NULL;
	size_t cap = 0, alloc = 0;
	unsigned lineno = 0;
	int rc = 0;
	while (getline(&line, &cap, fp) >= 0) {
		lineno++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		char *p = line;
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			continue;
		char *end;
		errno = 0;
		unsigned long long v = strtoull(p, &end, 16);
		while (isspace((unsigned char)*end))
			end++;
		if (errno || end == p || *end || v == 0) {
			g->bad_lines++;
			core->log(core, IBSM_LOG_ERROR, "%s:%u: not a GUID, line skipped", path,
				  lineno);
			continue;
		}
		if (g->n == alloc) {
			size_t na = alloc ? alloc * 2 : 64;
			uint64_t *nv = realloc(g->v, na * sizeof(*nv));
			if (!nv) {
				rc = -ENOMEM;
				break;
			}
			g->v = nv;
			alloc = na;
		}
		g->v[g->n++] = v;
	}
	free(line);
	fclose(fp);
	if (rc < 0) {
		ftree_guids_clear(g);
		return rc;
	}
	if (g->n) {
		qsort(g->v, g->n, sizeof(*g->v), cmp_u64);
		uint32_t k = 1;
		for (uint32_t i = 1; i < g->n; i++)
			if (g->v[i] != g->v[k - 1])
				g->v[k++] = g->v[i];
		g->n = k;
	}
	return 0;
}

int ftree_guids_has(const struct ftree_guids *g, uint64_t guid)
{
	uint32_t lo = 0, hi = g ? g->n : 0;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (g->v[mid] == guid)
			return 1;
		if (g->v[mid] < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

void ftree_guids_clear(struct ftree_guids *g)
{
	free(g->v);
	g->v = NULL;
	g->n = 0;
	g->bad_lines = 0;
}
