/* SPDX-License-Identifier: BSD-2-Clause */
/* guid_file.c - reads the GUID list files of the engines line by line: '#' comments and blank
 * lines skipped, bad lines logged as "path:line: why" and skipped, so -a, -u, -G and -i files
 * all report their errors the same way; and the strict hex GUID parser they share. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "guid_file.h"

int guid_file_read(const struct ibsm_core *core, const char *path, struct guid_file_reader *rd)
{
	rd->bad_lines = 0;
	rd->read_error = 0;
	FILE *fp = fopen(path, "r");
	if (!fp)
		return -errno;
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	int rc = 0;
	while (getline(&line, &cap, fp) >= 0) {
		lineno++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *s = line;
		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			continue;
		const char *why = NULL;
		int r = rd->take(rd->ctx, s, &why);
		if (r < 0) {
			rc = r;
			break;
		}
		if (r > 0) {
			rd->bad_lines++;
			core->log(core, rd->bad_level, "%s:%u: %s%s", path, lineno, why,
				  rd->skipped ? rd->skipped : "; line skipped");
		}
	}
	if (!rc && ferror(fp))
		rd->read_error = 1;
	free(line);
	fclose(fp);
	return rc;
}

int guid_parse_hex(char **s, uint64_t *guid, const char **why)
{
	char *p = *s;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	uint64_t g = 0;
	int digits = 0;
	for (; isxdigit((unsigned char)*p); p++, digits++) {
		int c = tolower((unsigned char)*p);
		g = g << 4 | (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
	}
	if (digits == 0 || digits > 16) {
		*why = digits ? "GUID longer than 16 hex digits" : "expected a hex GUID";
		return -1;
	}
	if (*p && !isspace((unsigned char)*p)) {
		*why = "junk after the GUID";
		return -1;
	}
	*s = p;
	*guid = g;
	return 0;
}
