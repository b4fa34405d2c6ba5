/* SPDX-License-Identifier: BSD-2-Clause */
/* guid_stamp.c - remembers which GUID file an engine instance read last (path, mtime, size),
 * so a file read again every sweep logs its bad lines as errors once, then quietly. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "guid_file.h"

int guid_file_stamp_same(const struct guid_file_stamp *stamp, const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && stamp->path && !strcmp(stamp->path, path) &&
	       st.st_mtim.tv_sec == stamp->mtime.tv_sec &&
	       st.st_mtim.tv_nsec == stamp->mtime.tv_nsec && st.st_size == stamp->size;
}

void guid_file_stamp_note(struct guid_file_stamp *stamp, const char *path)
{
	struct stat st;
	free(stamp->path);
	stamp->path = strdup(path);
	if (stat(path, &st) == 0) {
		stamp->mtime = st.st_mtim;
		stamp->size = st.st_size;
	}
}

void guid_file_stamp_clear(struct guid_file_stamp *stamp)
{
	free(stamp->path);
	memset(stamp, 0, sizeof(*stamp));
}
