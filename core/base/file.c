/* SPDX-License-Identifier: BSD-2-Clause */
/* file.c - reads a file the administrator names into memory, safely: never blocks on a FIFO
 * or a device, refuses anything but a regular file, and stops at a cap (see file.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/file.h"

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

static int fail_type(const char *path, const char *what, mode_t mode, GError **err)
{
	g_set_error(err, FILE_ERROR, FILE_ERROR_NOT_REGULAR, "%s: the %s is %s, not a regular file",
		    path, what, file_type_name(mode));
	return S_ISDIR(mode) ? -EISDIR : -EINVAL;
}

static int fail_size(const char *path, const char *what, size_t cap, unsigned long long size,
		     int exact, GError **err)
{
	g_set_error(err, FILE_ERROR, FILE_ERROR_TOO_BIG, "%s: the %s is larger than %zu MiB "
		    "(%s%llu bytes): refused", path, what, cap >> 20, exact ? "" : "over ", size);
	return -EFBIG;
}

static int fail_errno(const char *path, const char *what, const char *doing, int e, GError **err)
{
	g_set_error(err, FILE_ERROR, e == ENOENT ? FILE_ERROR_MISSING : FILE_ERROR_OPEN,
		    "%s: cannot %s the %s: %s", path, doing, what, g_strerror(e));
	return -e;
}

/* Reads fd (a regular file of st_size bytes) to its end, at most cap bytes. */
static int read_fd(int fd, const char *path, const char *what, size_t cap, off_t st_size,
		   char **text, size_t *len, GError **err)
{
	size_t alloc = (size_t)st_size + 1 + 4096, have = 0; /* room to see it grew */
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
			g_set_error(err, FILE_ERROR, FILE_ERROR_READ, "%s: read error in the %s: %s", path,
				    what, g_strerror(e));
			return -e;
		}
		if (n == 0)
			break;
		have += (size_t)n;
		if (have > cap) { /* it grew beyond the cap while we read it */
			g_free(buf);
			return fail_size(path, what, cap, have, 0, err);
		}
	}
	buf[have] = '\0';
	*text = buf;
	*len = have;
	return 0;
}

int file_read_capped(const char *path, size_t cap, const char *what, char **text, size_t *len,
		     GError **err)
{
	struct stat st;
	*text = NULL;
	*len = 0;
	/* not even opened when it is plainly no regular file (opening a device may act on it) */
	if (stat(path, &st) < 0)
		return fail_errno(path, what, "open", errno, err);
	if (!S_ISREG(st.st_mode))
		return fail_type(path, what, st.st_mode, err);
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return fail_errno(path, what, "open", errno, err);
	int rc;
	if (fstat(fd, &st) < 0) /* what was opened, if the name changed meanwhile */
		rc = fail_errno(path, what, "examine", errno, err);
	else if (!S_ISREG(st.st_mode))
		rc = fail_type(path, what, st.st_mode, err);
	else if ((unsigned long long)st.st_size > cap)
		rc = fail_size(path, what, cap, (unsigned long long)st.st_size, 1, err);
	else
		rc = read_fd(fd, path, what, cap, st.st_size, text, len, err);
	close(fd);
	return rc;
}
