/* SPDX-License-Identifier: BSD-2-Clause */
/* guid_file.c - reads the GUID list files of the engines line by line: '#' comments and blank
 * lines skipped, bad lines logged as "path:line: why" and skipped, so -a, -u, -G and -i files
 * all report their errors the same way; and the strict hex GUID parser they share. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "guid_file.h"

static const char *type_name(mode_t mode)
{
	return S_ISDIR(mode) ? "a directory" : S_ISFIFO(mode) ? "a FIFO" : S_ISCHR(mode) ?
	       "a character device" : S_ISBLK(mode) ? "a block device" : S_ISSOCK(mode) ?
	       "a socket" : "not a regular file";
}

/* The whole file into *text (NUL-terminated, *len bytes): only a regular file of at most
 * GUID_FILE_MAX bytes, opened without blocking. 0, or -errno with why[] for the log (empty
 * when strerror says it: a missing file, no permission). */
static int read_whole(const char *path, char **text, size_t *len, char *why, size_t why_len,
		      int *read_error)
{
	struct stat st;
	why[0] = '\0';
	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode)) { /* not opened: a FIFO would block, a device act */
		snprintf(why, why_len, "%s, not a regular file", type_name(st.st_mode));
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	}
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = 0;
	char *buf = NULL;
	size_t have = 0, cap = 0;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
	} else if (!S_ISREG(st.st_mode)) {
		snprintf(why, why_len, "%s, not a regular file", type_name(st.st_mode));
		rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	} else if ((unsigned long long)st.st_size > GUID_FILE_MAX) {
		snprintf(why, why_len, "larger than %u MiB (%lld bytes)", GUID_FILE_MAX >> 20,
			 (long long)st.st_size);
		rc = -EFBIG;
	}
	while (rc == 0) {
		if (have == cap) {
			size_t ncap = cap ? cap * 2 : (size_t)st.st_size + 4096;
			if (ncap > (size_t)GUID_FILE_MAX + 1)
				ncap = (size_t)GUID_FILE_MAX + 1;
			char *nb = realloc(buf, ncap + 1);
			if (!nb) {
				rc = -ENOMEM;
				break;
			}
			buf = nb;
			cap = ncap;
		}
		ssize_t n = read(fd, buf + have, cap - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			*read_error = 1;
		} else if (n == 0) {
			break;
		} else if ((have += (size_t)n) > GUID_FILE_MAX) {
			snprintf(why, why_len, "larger than %u MiB (it grew while read)",
				 GUID_FILE_MAX >> 20);
			rc = -EFBIG;
		}
	}
	close(fd);
	if (rc < 0) {
		free(buf);
		return rc;
	}
	if (!buf && !(buf = malloc(1)))
		return -ENOMEM;
	buf[have] = '\0';
	*text = buf;
	*len = have;
	return 0;
}

int guid_file_read(const struct ibsm_core *core, const char *path, struct guid_file_reader *rd)
{
	rd->bad_lines = 0;
	rd->read_error = 0;
	char *text = NULL, why[96];
	size_t len = 0;
	int rc = read_whole(path, &text, &len, why, sizeof(why), &rd->read_error);
	if (rc < 0) { /* said once, here: callers add nothing */
		if (why[0]) /* the reason strerror(-rc) would not say */
			core->log(core, IBSM_LOG_ERROR, "GUID file %s is %s: not read", path, why);
		else
			core->log(core, IBSM_LOG_ERROR, "GUID file %s: %s: not read", path,
				  strerror(-rc));
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
	if (rc < 0)
		core->log(core, IBSM_LOG_ERROR, "GUID file %s: %s", path, strerror(-rc));
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
