/* SPDX-License-Identifier: BSD-2-Clause */
/* guid_file.h - the GUID list files the engines read (-a roots, -u/-G nodes, -i ignore): one
 * reader for "one entry a line, '#' comments, bad lines reported as file:line and skipped"
 * (the file read through the core's reader: regular files of bounded size only),
 * the strict hex GUID parser, a sorted GUID set, and a file stamp so that a file read again
 * every sweep reports its bad lines loudly only once. Compiled into every engine
 * (plugins/common), so every non-static name carries the guid_ prefix. */
#ifndef GUID_FILE_H
#define GUID_FILE_H

#include <stdint.h>
#include <time.h>
#include <sys/types.h>
#include <ibsm/routing.h>

/* ---- the line reader ---------------------------------------------------------------------- */

/* Takes one line of the file, comment cut, leading blanks skipped and not empty. Returns 0
 * (taken), 1 (bad: *why says why) or a negative errno that stops the read (-ENOMEM). */
typedef int (*guid_file_line_fn)(void *ctx, char *s, const char **why);

struct guid_file_reader {
	int bad_level;              /* log level of the "path:line: why; line skipped" lines */
	const char *skipped;        /* the words after why; NULL: "; line skipped" */
	guid_file_line_fn take;
	void *ctx;
	uint32_t bad_lines;         /* out: lines reported and skipped */
	char why[320];              /* out: why the file was not read ("" when it was) */
};

/* Reads path, the file of configuration key `key`, into rd->take, line by line. The core
 * reads it (ibsm_read_file: a regular file, a symlink to one is fine, of at most 16 MiB,
 * opened without blocking): /dev/zero, a FIFO or a directory is refused at once and whole,
 * nothing taken. Returns 0, take's negative return, or -errno when the file cannot be read:
 * -ENOENT, -EISDIR, -EINVAL (a FIFO, device or socket), -EFBIG (too big), -ENOSYS (a core
 * without the reader), open()'s or read()'s. Any failure is logged here once at ERROR and
 * kept in rd->why, naming the key and the file: "root_guid_file /x: a FIFO, not a regular
 * file: not read"; the caller says only what it does without the file. */
int guid_file_read(const struct ibsm_core *core, const char *key, const char *path,
		   struct guid_file_reader *rd);

/* Parses a hex GUID (optional 0x, at most 16 digits) at *s and moves *s past it; what follows
 * must be the end or a blank. Returns 0 with *guid (possibly 0: the caller decides), or -1
 * with *why. */
int guid_parse_hex(char **s, uint64_t *guid, const char **why);

/* ---- a list of GUIDs ---------------------------------------------------------------------- */

struct guid_list {
	uint64_t *v;
	uint32_t n, cap;
	uint32_t bad_lines;
};

int guid_list_add(struct guid_list *g, uint64_t guid);  /* 0 or -ENOMEM */
void guid_list_sort_unique(struct guid_list *g);        /* ascending, duplicates dropped */
int guid_list_has(const struct guid_list *g, uint64_t guid); /* g sorted (or NULL) */
void guid_list_clear(struct guid_list *g);

/* ---- has the file changed since it was last read? ----------------------------------------- */

/* Zeroed to start; guid_file_stamp_clear frees it. */
struct guid_file_stamp {
	char *path;
	struct timespec mtime;
	off_t size;
};

/* Non-zero when path is the file stamp saw last, with the same mtime and size. */
int guid_file_stamp_same(const struct guid_file_stamp *stamp, const char *path);
void guid_file_stamp_note(struct guid_file_stamp *stamp, const char *path);
void guid_file_stamp_clear(struct guid_file_stamp *stamp);

#endif
