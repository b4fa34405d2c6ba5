/* SPDX-License-Identifier: BSD-2-Clause */
/* guids.c - reads the GUID lists the fat-tree engine takes (root switches -a, compute nodes -u,
 * I/O nodes -G): one GUID a line, as OpenSM's files are; bad lines are named and skipped. The
 * file is read by plugins/common/guid_file.c; this file knows ftree's (strtoull) line rule. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ftree.h"

/* One line of the file (comment cut, not blank): 0 taken, 1 bad, or -ENOMEM. */
static int take_line(void *ctx, char *p, const char **why)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(p, &end, 16);
	while (isspace((unsigned char)*end))
		end++;
	if (errno || end == p || *end || v == 0) {
		*why = "not a GUID";
		return 1;
	}
	return guid_list_add(ctx, v);
}

int ftree_guids_load(const struct ibsm_core *core, const char *key, const char *path,
		     struct guid_list *g, char *why, size_t why_len)
{
	guid_list_clear(g);
	struct guid_file_reader rd = {
		.bad_level = IBSM_LOG_ERROR, .skipped = ", line skipped", .take = take_line, .ctx = g,
	};
	int rc = guid_file_read(core, key, path, &rd);
	g->bad_lines = rd.bad_lines;
	if (rc < 0) { /* guid_file_read logged why */
		snprintf(why, why_len, "%s", rd.why);
		guid_list_clear(g);
		return rc;
	}
	guid_list_sort_unique(g);
	return 0;
}
