/* SPDX-License-Identifier: BSD-2-Clause */
/* daemon.c - what running as a service takes beyond the SM itself: detaching for -B (the
 * caller waits until the daemon runs or failed), an atomic pid file that refuses a second
 * ibsm but not a stale pid, quiet stdio. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include "sm/daemon.h"
#include "base/file_read.h"

G_DEFINE_QUARK(ibsm-daemon-error-quark, daemon_error)

int daemon_detach(int *ready_fd, GError **err)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0) {
		int e = errno;
		g_set_error(err, DAEMON_ERROR, DAEMON_ERROR_FORK, "-B: pipe: %s", g_strerror(e));
		return -e;
	}
	fflush(NULL); /* buffered output would otherwise be written twice */
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(fds[0]);
		close(fds[1]);
		g_set_error(err, DAEMON_ERROR, DAEMON_ERROR_FORK, "-B: fork: %s", g_strerror(e));
		return -e;
	}
	if (pid > 0) {
		/* The parent: the child's word that it runs, or its exit status. _exit: no atexit
		 * handlers, no stdio flush; the child owns everything now. */
		close(fds[1]);
		char b = 0;
		ssize_t n;
		do
			n = read(fds[0], &b, 1);
		while (n < 0 && errno == EINTR);
		if (n == 1 && b == DAEMON_READY_BYTE)
			_exit(0);
		int st = 0;
		pid_t w;
		do
			w = waitpid(pid, &st, 0);
		while (w < 0 && errno == EINTR);
		if (w == pid && WIFEXITED(st))
			_exit(WEXITSTATUS(st) ? WEXITSTATUS(st) : 1); /* closed without a word: failed */
		if (w == pid && WIFSIGNALED(st))
			_exit(128 + WTERMSIG(st));
		_exit(1);
	}
	close(fds[0]);
	if (setsid() < 0) {
		int e = errno;
		close(fds[1]);
		g_set_error(err, DAEMON_ERROR, DAEMON_ERROR_FORK, "-B: setsid: %s", g_strerror(e));
		return -e;
	}
	*ready_fd = fds[1];
	return 0;
}

void daemon_ready(int *ready_fd)
{
	if (*ready_fd < 0)
		return;
	char b = DAEMON_READY_BYTE;
	ssize_t n;
	do
		n = write(*ready_fd, &b, 1);
	while (n < 0 && errno == EINTR);
	close(*ready_fd);
	*ready_fd = -1;
}

/* The pid in a pid file; 0 when missing, empty, not a regular file or not a pid. */
static pid_t pidfile_read(const char *path)
{
	gchar *text = NULL;
	size_t len = 0;
	if (file_read_capped(path, 64, "pid file", &text, &len, NULL) < 0)
		return 0; /* missing, not a regular file, or not a pid: nothing to respect */
	char *end = NULL;
	errno = 0;
	long v = strtol(text, &end, 10);
	int ok = errno == 0 && end != text && v > 0 && v <= INT32_MAX &&
		 (*end == '\0' || *end == '\n');
	g_free(text);
	return ok ? (pid_t)v : 0;
}

/* The program name of an executable path as /proc shows it: its last component, without the
 * " (deleted)" the kernel adds once the file was replaced (an upgrade under a running SM). */
static gchar *exe_name(const char *link)
{
	char target[PATH_MAX + 16];
	ssize_t n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return NULL; /* errno says why */
	target[n] = '\0';
	if (g_str_has_suffix(target, " (deleted)"))
		target[n - (ssize_t)strlen(" (deleted)")] = '\0';
	const char *slash = strrchr(target, '/');
	return g_strdup(slash ? slash + 1 : target);
}

/* Whether pid is a running ibsm, i.e. a live process (not a zombie) running an executable of
 * our own name; only then does its pid file stand. Its /proc/PID/exe is compared, or its comm
 * (the name truncated to 15 bytes) when exe is not ours to read. Without /proc at all any live
 * process counts, as nothing better can be known. */
static int pid_is_running_ibsm(pid_t pid)
{
	if (kill(pid, 0) < 0 && errno != EPERM)
		return 0;
	gchar *self = exe_name("/proc/self/exe");
	if (!self)
		return 1; /* no /proc: alive is all we know */
	int ours = 0;
	gchar *path = g_strdup_printf("/proc/%d/stat", (int)pid);
	gchar *text = NULL;
	if (g_file_get_contents(path, &text, NULL, NULL)) {
		const char *close_paren = strrchr(text, ')');
		int zombie = close_paren && close_paren[1] == ' ' && close_paren[2] == 'Z';
		g_free(path);
		path = g_strdup_printf("/proc/%d/exe", (int)pid);
		errno = 0;
		gchar *other = zombie ? NULL : exe_name(path);
		if (other) {
			ours = !strcmp(other, self);
		} else if (!zombie && (errno == EACCES || errno == EPERM)) {
			gchar *comm = NULL;
			g_free(path);
			path = g_strdup_printf("/proc/%d/comm", (int)pid);
			if (g_file_get_contents(path, &comm, NULL, NULL)) {
				g_strchomp(comm);
				ours = *comm && !strncmp(comm, self, 15) && strlen(comm) == MIN(strlen(self), 15);
			}
			g_free(comm);
		}
		g_free(other);
	}
	g_free(text);
	g_free(path);
	g_free(self);
	return ours;
}

int daemon_write_pidfile(const char *path, GError **err)
{
	pid_t self = getpid();
	pid_t other = pidfile_read(path);
	if (other > 0 && other != self && pid_is_running_ibsm(other)) {
		g_set_error(err, DAEMON_ERROR, DAEMON_ERROR_RUNNING,
			    "%s: names the running ibsm %d (one SM per pid file): stop it first",
			    path, (int)other);
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
