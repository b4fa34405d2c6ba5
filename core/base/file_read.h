/* SPDX-License-Identifier: BSD-2-Clause */
/* file_read.h - the one way ibsm reads a file it is given (-F, -P, -Y, --fabric and its includes,
 * guid2lid, and through struct ibsm_core every engine's and orchestrator's file: GUID lists,
 * torus_config, the chain policies): opened without blocking, refused unless it is a regular
 * file, and never read beyond a cap, so /dev/zero, a FIFO or a huge file cannot hang or
 * exhaust the daemon, at start, on SIGHUP or in the middle of a sweep. */
#ifndef IBSM_BASE_FILE_READ_H
#define IBSM_BASE_FILE_READ_H

#include <glib.h>
#include <stddef.h>
#include <sys/types.h>

/* Caps by kind of file (bytes). A fabric file of 16k hosts is 3.4 MB; a guid2lid file of the
 * whole unicast LID space 2.6 MB; configuration and policy files are hand-written. */
#define FILE_CAP_FABRIC (64u << 20)  /* --fabric, all of its includes together */
#define FILE_CAP_TEXT   (16u << 20)  /* -F, -P, guid2lid, QoS, the plugins' files */

#define FILE_ERROR file_error_quark()
GQuark file_error_quark(void);
enum file_error {
	FILE_ERROR_MISSING = 1,  /* ENOENT (a dangling symlink too) */
	FILE_ERROR_OPEN,         /* other open() failures: permission, ... */
	FILE_ERROR_NOT_REGULAR,  /* a directory, FIFO, device, socket */
	FILE_ERROR_TOO_BIG,      /* larger than the cap */
	FILE_ERROR_READ,         /* read() failed part way */
};

/* Reads the whole file at path into *text (NUL-terminated, g_free; *len bytes without the NUL,
 * which the text may contain). The file is opened O_NONBLOCK | O_NOCTTY | O_CLOEXEC, checked
 * with fstat to be a regular file (a symlink to one is fine) and read up to cap bytes: a file
 * that is, or grows, larger is refused. what names the kind of file in messages ("fabric
 * file"). Returns 0, or a negative errno (-ENOENT missing, -EISDIR, -EINVAL not a regular
 * file, -EFBIG too big, or open()'s / read()'s) with *err "PATH: what is wrong" (domain
 * FILE_ERROR). */
int file_read_capped(const char *path, size_t cap, const char *what, char **text, size_t *len,
		     GError **err);

/* Lines of a text read above, one at a time: *cursor starts at text and end is text + len.
 * Returns the next line with its '\n' replaced by NUL (the cursor moves past it), or NULL
 * when none is left. */
char *file_next_line(char **cursor, char *end);

/* The same read for the file that setting `key` names (a configuration key or a flag), with
 * the messages an administrator greps for: "KEY PATH: a FIFO, not a regular file: not read",
 * "KEY PATH: larger than 16 MiB (N bytes): not read", "KEY PATH: cannot open it: No such file
 * or directory", "KEY PATH: read error: ..."; an empty or NULL path is -ENOENT, "KEY: no file
 * named". The plugins' service (routing/services.c) is this. */
int file_read_setting(const char *key, const char *path, size_t cap, char **text, size_t *len,
		      GError **err);

/* "a FIFO", "a directory", "a character device", ... for a stat mode (for messages). */
const char *file_type_name(mode_t mode);

#endif
