/* SPDX-License-Identifier: BSD-2-Clause */
/* daemon.h - running ibsm as a long-lived service: -B detaching, the pid file, stdio to
 * /dev/null once the log is open (systemd's notification: sm/notify.h). */
#ifndef IBSM_SM_DAEMON_H
#define IBSM_SM_DAEMON_H

#include <glib.h>

#define DAEMON_PIDFILE_DEFAULT "/run/ibsm/ibsm.pid" /* /run/ibsm is systemd's RuntimeDirectory */

#define DAEMON_ERROR daemon_error_quark()
GQuark daemon_error_quark(void);
enum daemon_error_code {
	DAEMON_ERROR_FORK,    /* pipe(), fork() or setsid() failed */
	DAEMON_ERROR_RUNNING, /* the pid file names another running ibsm */
	DAEMON_ERROR_IO,      /* the pid file (or its directory) could not be written */
};

/* -B: fork and setsid. The parent does not return: it waits until the child calls
 * daemon_ready() and exits 0, or, when the child exits first (a start-up error, its message
 * already on stderr and in the log), exits with the child's status (1 when it was 0, 128+N for
 * signal N). The child gets 0 and *ready_fd. The caller calls it before any libibumad call
 * (umad2sim and the kernel's umad fds belong to the process that opened them) and before
 * starting threads. The working directory is kept: under ibsim, umad2sim creates ./sys-<pid>/
 * there. Negative errno (and *err) when pipe/fork/setsid fails. */
#define DAEMON_READY_BYTE 'R'
int daemon_detach(int *ready_fd, GError **err);

/* In the -B child once it runs (bound to its port, stdio on /dev/null): lets the waiting
 * parent exit 0. Closes *ready_fd and sets it to -1; nothing when it is already -1. */
void daemon_ready(int *ready_fd);

/* Writes "<our pid>\n" to path atomically (temporary file in the same directory, then
 * rename; mode 0644 whatever the umask), creating the directory (0755) when missing. Refuses
 * with DAEMON_ERROR_RUNNING when the file already names a running ibsm that is not us (a live
 * process, not a zombie, whose /proc/PID/exe, or comm when exe is unreadable, has our own
 * executable's name); a file naming a dead process or any other program (a pid reused since,
 * e.g. 1), or holding garbage, is replaced. 0 or negative errno. */
int daemon_write_pidfile(const char *path, GError **err);

/* Removes path if it still names us (a successor's file is left alone). */
void daemon_remove_pidfile(const char *path);

/* stdin, stdout and stderr to /dev/null: call it after the log file is open (never when the
 * log is stderr, "-f -"), so stray writes from libraries cannot hit a closed terminal. */
void daemon_stdio_to_devnull(void);

#endif
