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
	DAEMON_ERROR_FORK,    /* fork() or setsid() failed */
	DAEMON_ERROR_RUNNING, /* the pid file names another live process */
	DAEMON_ERROR_IO,      /* the pid file (or its directory) could not be written */
};

/* -B: fork; the parent _exit(0)s at once, the child setsid()s and gets 0. The caller calls it
 * before any libibumad call (umad2sim and the kernel's umad fds belong to the process that
 * opened them) and before starting threads. The working directory is kept: under ibsim,
 * umad2sim creates ./sys-<pid>/ there. Negative errno (and *err) when fork/setsid fails;
 * never returns in the parent. */
int daemon_detach(GError **err);

/* Writes "<our pid>\n" to path atomically (temporary file in the same directory, then
 * rename), creating the directory (0755) when missing. Refuses with DAEMON_ERROR_RUNNING
 * when the file already names a live process that is not us; a file naming a dead process
 * (or holding garbage) is replaced. 0 or negative errno. */
int daemon_write_pidfile(const char *path, GError **err);

/* Removes path if it still names us (a successor's file is left alone). */
void daemon_remove_pidfile(const char *path);

/* stdin, stdout and stderr to /dev/null: call it after the log file is open (never when the
 * log is stderr, "-f -"), so stray writes from libraries cannot hit a closed terminal. */
void daemon_stdio_to_devnull(void);

#endif
