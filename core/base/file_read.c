/* SPDX-License-Identifier: BSD-2-Clause */
/* file_read.c - reads a file the administrator names into memory, safely: never blocks on a FIFO
 * or a device, refuses anything but a regular file, and stops at a cap (see file_read.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/file_read.h"

G_DEFINE_QUARK(ibsm-file-error-quark, file_error)

const char *file_type_name(mode_t mode)
{
	if (S_ISREG(mode))
		return "a regular file";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

/* Why a read failed, before it is put in words: the two readers below word it differently. */
struct refusal {
	enum file_error code;
	mode_t mode;                 /* FILE_ERROR_NOT_REGULAR */
	unsigned long long size;     /* FILE_ERROR_TOO_BIG: bytes seen */
	int exact;                   /* ... the whole size (fstat), else "over" */
	const char *doing;           /* FILE_ERROR_MISSING, _OPEN: "open", "examine" */
	int e;                       /* errno, FILE_ERROR_MISSING, _OPEN, _READ */
};

static int refuse_type(struct refusal *r, mode_t mode)
{
	*r = (struct refusal){ .code = FILE_ERROR_NOT_REGULAR, .mode = mode };
	return S_ISDIR(mode) ? -EISDIR : -EINVAL;
}

static int refuse_size(struct refusal *r, unsigned long long size, int exact)
{
	*r = (struct refusal){ .code = FILE_ERROR_TOO_BIG, .size = size, .exact = exact };
	return -EFBIG;
}

static int refuse_errno(struct refusal *r, const char *doing, int e)
{
	*r = (struct refusal){ .code = e == ENOENT ? FILE_ERROR_MISSING : FILE_ERROR_OPEN,
			       .doing = doing, .e = e };
	return -e;
}

/* Reads fd (a regular file of st_size bytes) to its end, at most cap bytes. */
static int read_fd(int fd, size_t cap, off_t st_size, char **text, size_t *len, struct refusal *r)
{
	size_t alloc = (size_t)st_size + 1 + 4096, have = 0; /* room to see it grew */
	if (alloc > cap + 1)
		alloc = cap + 1;
	char *buf = g_malloc(alloc + 1);
	for (;;) {
		if (have == alloc) {
			alloc = MIN(alloc * 2, cap + 1);
			buf = g_realloc(buf, alloc + 1);
		}
		ssize_t n = read(fd, buf + have, alloc - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			g_free(buf);
			*r = (struct refusal){ .code = FILE_ERROR_READ, .e = e };
			return -e;
		}
		if (n == 0)
			break;
		have += (size_t)n;
		if (have > cap) { /* it grew beyond the cap while we read it */
			g_free(buf);
			return refuse_size(r, have, 0);
		}
	}
	buf[have] = '\0';
	*text = buf;
	*len = have;
	return 0;
}

/* The reading itself: 0 with *text, or a negative errno with *r saying why. */
static int read_checked(const char *path, size_t cap, char **text, size_t *len, struct refusal *r)
{
	struct stat st;
	*text = NULL;
	*len = 0;
	/* not even opened when it is plainly no regular file (opening a device may act on it) */
	if (stat(path, &st) < 0)
		return refuse_errno(r, "open", errno);
	if (!S_ISREG(st.st_mode))
		return refuse_type(r, st.st_mode);
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return refuse_errno(r, "open", errno);
	int rc;
	if (fstat(fd, &st) < 0) /* what was opened, if the name changed meanwhile */
		rc = refuse_errno(r, "examine", errno);
	else if (!S_ISREG(st.st_mode))
		rc = refuse_type(r, st.st_mode);
	else if ((unsigned long long)st.st_size > cap)
		rc = refuse_size(r, (unsigned long long)st.st_size, 1);
	else
		rc = read_fd(fd, cap, st.st_size, text, len, r);
	close(fd);
	return rc;
}

int file_read_capped(const char *path, size_t cap, const char *what, char **text, size_t *len,
		     GError **err)
{
	struct refusal r;
	int rc = read_checked(path, cap, text, len, &r);
	if (rc == 0)
		return 0;
	switch (r.code) {
	case FILE_ERROR_NOT_REGULAR:
		g_set_error(err, FILE_ERROR, r.code, "%s: the %s is %s, not a regular file", path,
			    what, file_type_name(r.mode));
		break;
	case FILE_ERROR_TOO_BIG:
		g_set_error(err, FILE_ERROR, r.code, "%s: the %s is larger than %zu MiB (%s%llu "
			    "bytes): refused", path, what, cap >> 20, r.exact ? "" : "over ", r.size);
		break;
	case FILE_ERROR_READ:
		g_set_error(err, FILE_ERROR, r.code, "%s: read error in the %s: %s", path, what,
			    g_strerror(r.e));
		break;
	default:
		g_set_error(err, FILE_ERROR, r.code, "%s: cannot %s the %s: %s", path, r.doing, what,
			    g_strerror(r.e));
	}
	return rc;
}

int file_read_setting(const char *key, const char *path, size_t cap, char **text, size_t *len,
		      GError **err)
{
	struct refusal r;
	if (!path || !*path) {
		*text = NULL;
		*len = 0;
		g_set_error(err, FILE_ERROR, FILE_ERROR_MISSING, "%s: no file named", key);
		return -ENOENT;
	}
	int rc = read_checked(path, cap, text, len, &r);
	if (rc == 0)
		return 0;
	switch (r.code) {
	case FILE_ERROR_NOT_REGULAR:
		g_set_error(err, FILE_ERROR, r.code, "%s %s: %s, not a regular file: not read", key,
			    path, file_type_name(r.mode));
		break;
	case FILE_ERROR_TOO_BIG:
		g_set_error(err, FILE_ERROR, r.code, "%s %s: larger than %zu MiB (%s%llu bytes): "
			    "not read", key, path, cap >> 20, r.exact ? "" : "over ", r.size);
		break;
	case FILE_ERROR_READ:
		g_set_error(err, FILE_ERROR, r.code, "%s %s: read error: %s", key, path,
			    g_strerror(r.e));
		break;
	default:
		g_set_error(err, FILE_ERROR, r.code, "%s %s: cannot %s it: %s", key, path, r.doing,
			    g_strerror(r.e));
	}
	return rc;
}

char *file_next_line(char **cursor, char *end)
{
	char *line = *cursor;
	if (line >= end)
		return NULL;
	char *nl = memchr(line, '\n', (size_t)(end - line));
	*cursor = nl ? nl + 1 : end;
	if (nl)
		*nl = '\0';
	return line;
}
