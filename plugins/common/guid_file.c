/* SPDX-License-Identifier: BSD-2-Clause */
/* guid_file.c - reads the GUID list files of the engines line by line: '#' comments and blank
 * lines skipped, bad lines logged as "path:line: why" and skipped, so -a, -u, -G and -i files
 * all report their errors the same way; and the strict hex GUID parser they share. The file
 * itself is read by the core's reader (ibsm_read_file, ABI 1.3): never blocking, capped. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "guid_file.h"

int guid_file_read(const struct ibsm_core *core, const char *key, const char *path,
		   struct guid_file_reader *rd)
{
	rd->bad_lines = 0;
	rd->why[0] = '\0';
	char *text = NULL;
	size_t len = 0;
	int rc = ibsm_read_file(core, key, path, &text, &len, rd->why, sizeof(rd->why));
	if (rc < 0) { /* said once, here: callers add nothing */
		core->log(core, IBSM_LOG_ERROR, "%s", rd->why);
		return rc;
	}
	unsigned lineno = 0;
	for (char *line = text, *next; rc == 0 && line < text + len; line = next) {
		char *nl = memchr(line, '\n', (size_t)(text + len - line));
		next = nl ? nl + 1 : text + len;
		if (nl)
			*nl = '\0';
		lineno++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *s = line;
		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			continue;
		const char *reason = NULL;
		int r = rd->take(rd->ctx, s, &reason);
		if (r < 0) {
			rc = r;
		} else if (r > 0) {
			rd->bad_lines++;
			core->log(core, rd->bad_level, "%s:%u: %s%s", path, lineno, reason,
				  rd->skipped ? rd->skipped : "; line skipped");
		}
	}
	free(text);
	if (rc < 0) {
		snprintf(rd->why, sizeof(rd->why), "%s %s: %s", key, path, strerror(-rc));
		core->log(core, IBSM_LOG_ERROR, "%s", rd->why);
	}
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
