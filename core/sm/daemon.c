/* SPDX-License-Identifier: BSD-2-Clause */
/* daemon.c - what running as a service takes beyond the SM itself: detaching for -B, an
 * atomic pid file that refuses a second instance, quiet stdio. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include "sm/daemon.h"

G_DEFINE_QUARK(ibsm-daemon-error-quark, daemon_error)

int daemon_detach(GError **err)
{
	fflush(NULL); /* buffered output would otherwise be written twice */
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		g_set_error(err, DAEMON_ERROR, DAEMON_ERROR_FORK, "-B: fork: %s", g_strerror(e));
		return -e;
	}
	if (pid > 0)
		_exit(0); /* no atexit handlers, no stdio flush: the child owns everything now */
	if (setsid() < 0) {
		int e = errno;
		g_set_error(err, DAEMON_ERROR, DAEMON_ERROR_FORK, "-B: setsid: %s", g_strerror(e));
		return -e;
	}
	return 0;
}

/* The pid in a pid file; 0 when missing, empty or not a pid. */
static pid_t pidfile_read(const char *path)
{
	gchar *text = NULL;
	if (!g_file_get_contents(path, &text, NULL, NULL))
		return 0;
	char *end = NULL;
	errno = 0;
	long v = strtol(text, &end, 10);
	int ok = errno == 0 && end != text && v > 0 && v <= INT32_MAX &&
		 (*end == '\0' || *end == '\n');
	g_free(text);
	return ok ? (pid_t)v : 0;
}

static int pid_alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

int daemon_write_pidfile(const char *path, GError **err)
{
	pid_t self = getpid();
	pid_t other = pidfile_read(path);
	if (other > 0 && other != self && pid_alive(other)) {
		g_set_error(err, DAEMON_ERROR, DAEMON_ERROR_RUNNING,
			    "%s: names the running process %d (another ibsm?); stop it, or remove "
			    "the file if that process is not an SM", path, (int)other);
		return -EEXIST;
	}

	gchar *dir = g_path_get_dirname(path);
	int e = 0;
	if (g_mkdir_with_parents(dir, 0755) < 0) {
		e = errno;
		g_set_error(err, DAEMON_ERROR, DAEMON_ERROR_IO, "%s: cannot create directory %s: %s",
			    path, dir, g_strerror(e));
		g_free(dir);
		return -e;
	}
	g_free(dir);

	gchar *tmp = g_strdup_printf("%s.XXXXXX", path);
	int fd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0) {
		e = errno;
		g_set_error(err, DAEMON_ERROR, DAEMON_ERROR_IO, "%s: cannot create %s: %s", path, tmp,
			    g_strerror(e));
		g_free(tmp);
		return -e;
	}
	char line[32];
	int len = g_snprintf(line, sizeof(line), "%d\n", (int)self);
	if (fchmod(fd, 0644) < 0) /* readable by logrotate and scripts whatever the umask */
		e = errno;
	errno = 0;
	if (!e && write(fd, line, (size_t)len) != len)
		e = errno ? errno : EIO; /* a short write leaves errno alone */
	if (!e && fsync(fd) < 0)
		e = errno;
	if (close(fd) < 0 && !e)
		e = errno;
	if (!e && rename(tmp, path) < 0)
		e = errno;
	if (e) {
		g_set_error(err, DAEMON_ERROR, DAEMON_ERROR_IO, "%s: cannot write the pid file: %s",
			    path, g_strerror(e));
		unlink(tmp);
	}
	g_free(tmp);
	return -e;
}

void daemon_remove_pidfile(const char *path)
{
	if (path && pidfile_read(path) == getpid())
		unlink(path);
}

void daemon_stdio_to_devnull(void)
{
	fflush(NULL);
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return; /* nothing better to do: the log is open and says what happens */
	for (int target = 0; target <= 2; target++)
		if (fd != target)
			dup2(fd, target); /* dup2 clears O_CLOEXEC on the copy */
	if (fd > 2)
		close(fd);
}
