/* test_daemon.c - unit tests of the service plumbing: the pid file (write, refuse a running
 * ibsm, replace a stale one or one naming another program, remove only our own), the
 * sd_notify datagram to a path and an abstract socket, stdio to /dev/null, and -B detaching in
 * a forked child (the caller waits until the child runs, or exits with its failure). */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "sm/daemon.h"
#include "sm/notify.h"

static gchar *make_tmpdir(void)
{
	GError *err = NULL;
	gchar *dir = g_dir_make_tmp("ibsm-daemon-XXXXXX", &err);
	g_assert_no_error(err);
	return dir;
}

static void rm_tree(const char *dir)
{
	GDir *d = g_dir_open(dir, 0, NULL);
	if (d) {
		const char *name;
		while ((name = g_dir_read_name(d))) {
			gchar *p = g_build_filename(dir, name, NULL);
			if (g_file_test(p, G_FILE_TEST_IS_DIR) && !g_file_test(p, G_FILE_TEST_IS_SYMLINK))
				rm_tree(p);
			else
				g_unlink(p);
			g_free(p);
		}
		g_dir_close(d);
	}
	g_rmdir(dir);
}

static void write_text(const char *path, const char *text)
{
	GError *err = NULL;
	g_file_set_contents(path, text, -1, &err);
	g_assert_no_error(err);
}

static pid_t read_pid(const char *path)
{
	gchar *text = NULL;
	g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
	char *end = NULL;
	long v = strtol(text, &end, 10);
	g_assert_cmpstr(end, ==, "\n"); /* exactly "<pid>\n" */
	g_free(text);
	return (pid_t)v;
}

static guint count_entries(const char *dir)
{
	GDir *d = g_dir_open(dir, 0, NULL);
	g_assert_nonnull(d);
	guint n = 0;
	while (g_dir_read_name(d))
		n++;
	g_dir_close(d);
	return n;
}

/* A pid that certainly names no process right now: a child that has exited and been reaped. */
static pid_t dead_pid(void)
{
	fflush(NULL);
	pid_t pid = fork();
	g_assert_cmpint(pid, >=, 0);
	if (pid == 0)
		_exit(0);
	int st;
	g_assert_cmpint(waitpid(pid, &st, 0), ==, pid);
	g_assert_cmpint(kill(pid, 0), ==, -1);
	return pid;
}

/* ---- pid file ---- */

static void test_pidfile_write(void)
{
	gchar *dir = make_tmpdir();
	gchar *sub = g_build_filename(dir, "run", "ibsm", NULL);
	gchar *path = g_build_filename(sub, "ibsm.pid", NULL);
	GError *err = NULL;

	g_assert_cmpint(daemon_write_pidfile(path, &err), ==, 0); /* creates run/ibsm/ */
	g_assert_no_error(err);
	g_assert_cmpint(read_pid(path), ==, getpid());
	struct stat st;
	g_assert_cmpint(g_stat(path, &st), ==, 0);
	g_assert_cmpint(st.st_mode & 07777, ==, 0644);
	g_assert_cmpuint(count_entries(sub), ==, 1); /* no temporary file left behind */

	/* A file that already names us is rewritten, not refused (e.g. a restart by exec). */
	g_assert_cmpint(daemon_write_pidfile(path, &err), ==, 0);
	g_assert_no_error(err);
	g_assert_cmpint(read_pid(path), ==, getpid());
	g_assert_cmpuint(count_entries(sub), ==, 1);

	rm_tree(dir);
	g_free(path);
	g_free(sub);
	g_free(dir);
}

static void check_refused(const char *path, pid_t other)
{
	gchar *before = g_strdup_printf("%d\n", (int)other);
	write_text(path, before);
	GError *err = NULL;
	g_assert_cmpint(daemon_write_pidfile(path, &err), ==, -EEXIST);
	g_assert_error(err, DAEMON_ERROR, DAEMON_ERROR_RUNNING);
	g_assert_nonnull(strstr(err->message, path));
	gchar *pid_text = g_strdup_printf(" %d ", (int)other);
	g_assert_nonnull(strstr(err->message, pid_text));
	g_free(pid_text);
	g_clear_error(&err);
	gchar *after = NULL;
	g_assert_true(g_file_get_contents(path, &after, NULL, NULL));
	g_assert_cmpstr(after, ==, before); /* untouched */
	g_free(after);
	g_free(before);
}

/* A process running our own executable (a forked copy of this test: the same /proc/PID/exe
 * and comm), paused until killed; reaped by ibsm_like_stop(). */
static pid_t ibsm_like_start(void)
{
	fflush(NULL);
	pid_t pid = fork();
	g_assert_cmpint(pid, >=, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0); /* never outlives a failed test */
		if (getppid() == 1)
			_exit(1);
		for (;;)
			pause();
	}
	return pid;
}

static void ibsm_like_stop(pid_t pid)
{
	int st;
	g_assert_cmpint(kill(pid, SIGKILL), ==, 0);
	g_assert_cmpint(waitpid(pid, &st, 0), ==, pid);
}

static void test_pidfile_refuses_running_ibsm(void)
{
	gchar *dir = make_tmpdir();
	gchar *path = g_build_filename(dir, "ibsm.pid", NULL);
	pid_t other = ibsm_like_start();
	check_refused(path, other); /* alive and running our executable: another instance */
	g_assert_cmpuint(count_entries(dir), ==, 1);
	ibsm_like_stop(other);
	rm_tree(dir);
	g_free(path);
	g_free(dir);
}

/* A live process that is not us (a pid reused since the file was written, or whatever a
 * stale file names) does not block the start: the file is replaced. */
static void check_replaced(const char *path, pid_t other)
{
	gchar *before = g_strdup_printf("%d\n", (int)other);
	write_text(path, before);
	g_free(before);
	GError *err = NULL;
	g_assert_cmpint(daemon_write_pidfile(path, &err), ==, 0);
	g_assert_no_error(err);
	g_assert_cmpint(read_pid(path), ==, getpid());
}

static void test_pidfile_replaces_other_program(void)
{
	gchar *dir = make_tmpdir();
	gchar *path = g_build_filename(dir, "ibsm.pid", NULL);
	g_assert_cmpint(kill(1, 0) == 0 || errno == EPERM, ==, 1);
	check_replaced(path, 1);         /* init: alive, not an ibsm */
	check_replaced(path, getppid()); /* whoever runs this test (prove, a shell): not an ibsm */

	/* our own executable, but a zombie (exited, not yet reaped): not running */
	pid_t zombie = ibsm_like_start();
	g_assert_cmpint(kill(zombie, SIGKILL), ==, 0);
	gchar *stat_path = g_strdup_printf("/proc/%d/stat", (int)zombie);
	/* a ceiling that only catches a hang: another process is waited for, not a number of polls */
	for (gint64 end = g_get_monotonic_time() + 60 * G_USEC_PER_SEC; g_get_monotonic_time() < end;) {
		gchar *text = NULL;
		g_assert_true(g_file_get_contents(stat_path, &text, NULL, NULL));
		int z = strstr(text, ") Z ") != NULL;
		g_free(text);
		if (z)
			break;
		g_usleep(1000);
	}
	g_free(stat_path);
	check_replaced(path, zombie);
	int st;
	g_assert_cmpint(waitpid(zombie, &st, 0), ==, zombie);

	g_assert_cmpuint(count_entries(dir), ==, 1);
	rm_tree(dir);
	g_free(path);
	g_free(dir);
}

static void test_pidfile_replaces_stale(void)
{
	gchar *dir = make_tmpdir();
	gchar *path = g_build_filename(dir, "ibsm.pid", NULL);
	GError *err = NULL;

	gchar *stale = g_strdup_printf("%d\n", (int)dead_pid());
	write_text(path, stale);
	g_free(stale);
	g_assert_cmpint(daemon_write_pidfile(path, &err), ==, 0);
	g_assert_no_error(err);
	g_assert_cmpint(read_pid(path), ==, getpid());

	const char *garbage[] = { "", "hello\n", "-5\n", "0\n", "12x\n", "99999999999999\n" };
	for (size_t i = 0; i < G_N_ELEMENTS(garbage); i++) {
		write_text(path, garbage[i]);
		g_assert_cmpint(daemon_write_pidfile(path, &err), ==, 0);
		g_assert_no_error(err);
		g_assert_cmpint(read_pid(path), ==, getpid());
	}
	/* Not a pid, though a sloppy parser would read our live parent's pid from them. */
	gchar *almost[] = {
		g_strdup_printf("%dx\n", (int)getppid()),
		g_strdup_printf("%lld\n", (long long)getppid() + (1LL << 32)), /* truncated */
	};
	for (size_t i = 0; i < G_N_ELEMENTS(almost); i++) {
		write_text(path, almost[i]);
		g_assert_cmpint(daemon_write_pidfile(path, &err), ==, 0);
		g_assert_no_error(err);
		g_assert_cmpint(read_pid(path), ==, getpid());
		g_free(almost[i]);
	}
	g_assert_cmpuint(count_entries(dir), ==, 1);
	rm_tree(dir);
	g_free(path);
	g_free(dir);
}

static void test_pidfile_unwritable(void)
{
	gchar *dir = make_tmpdir();
	gchar *file = g_build_filename(dir, "plain-file", NULL);
	write_text(file, "x");
	gchar *path = g_build_filename(file, "ibsm.pid", NULL); /* parent is not a directory */
	GError *err = NULL;
	g_assert_cmpint(daemon_write_pidfile(path, &err), <, 0);
	g_assert_error(err, DAEMON_ERROR, DAEMON_ERROR_IO);
	g_assert_nonnull(strstr(err->message, path));
	g_clear_error(&err);
	rm_tree(dir);
	g_free(path);
	g_free(file);
	g_free(dir);
}

static void test_pidfile_remove(void)
{
	gchar *dir = make_tmpdir();
	gchar *path = g_build_filename(dir, "ibsm.pid", NULL);
	GError *err = NULL;

	g_assert_cmpint(daemon_write_pidfile(path, &err), ==, 0);
	g_assert_no_error(err);
	daemon_remove_pidfile(path);
	g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
	daemon_remove_pidfile(path); /* missing: no crash */
	daemon_remove_pidfile(NULL);

	/* A successor's pid file is not ours to delete. */
	gchar *other = g_strdup_printf("%d\n", (int)getppid());
	write_text(path, other);
	daemon_remove_pidfile(path);
	gchar *after = NULL;
	g_assert_true(g_file_get_contents(path, &after, NULL, NULL));
	g_assert_cmpstr(after, ==, other);
	g_free(after);
	g_free(other);

	rm_tree(dir);
	g_free(path);
	g_free(dir);
}

/* ---- sd_notify ---- */

struct listener {
	int fd;
	gchar *env;  /* the NOTIFY_SOCKET value */
	gchar *dir;  /* path sockets: the directory holding it */
};

static void listener_path(struct listener *l)
{
	l->dir = make_tmpdir();
	gchar *path = g_build_filename(l->dir, "notify", NULL);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	g_assert_cmpuint(strlen(path), <, sizeof(a.sun_path));
	strcpy(a.sun_path, path);
	l->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	g_assert_cmpint(l->fd, >=, 0);
	g_assert_cmpint(bind(l->fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
	l->env = path;
}

static void listener_abstract(struct listener *l)
{
	l->dir = NULL;
	gchar *name = g_strdup_printf("ibsm-test-notify-%d-%08x", (int)getpid(), g_random_int());
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t len = strlen(name);
	memcpy(a.sun_path + 1, name, len); /* sun_path[0] = '\0': abstract namespace */
	l->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	g_assert_cmpint(l->fd, >=, 0);
	g_assert_cmpint(bind(l->fd, (struct sockaddr *)&a,
			     (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len)), ==, 0);
	l->env = g_strdup_printf("@%s", name);
	g_free(name);
}

static void listener_free(struct listener *l)
{
	close(l->fd);
	if (l->dir)
		rm_tree(l->dir);
	g_free(l->dir);
	g_free(l->env);
}

/* The next datagram, exactly as sent (length included), or NULL after a second. */
static gchar *listener_recv(struct listener *l)
{
	struct pollfd p = { .fd = l->fd, .events = POLLIN };
	if (poll(&p, 1, 1000) != 1)
		return NULL;
	char buf[512];
	ssize_t n = recv(l->fd, buf, sizeof(buf), MSG_DONTWAIT);
	g_assert_cmpint(n, >=, 0);
	g_assert_null(memchr(buf, '\0', (size_t)n)); /* no terminating NUL on the wire */
	return g_strndup(buf, (gsize)n);
}

static uint64_t monotonic_usec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void check_messages(struct listener *l)
{
	g_setenv("NOTIFY_SOCKET", l->env, TRUE);
	gchar *got;

	g_assert_cmpint(service_notify_send("STATUS=hello"), ==, 1);
	got = listener_recv(l);
	g_assert_cmpstr(got, ==, "STATUS=hello");
	g_free(got);

	g_assert_cmpint(service_notify_ready("SUBNET UP: 12 ports"), ==, 1);
	got = listener_recv(l);
	g_assert_cmpstr(got, ==, "READY=1\nSTATUS=SUBNET UP: 12 ports");
	g_free(got);

	g_assert_cmpint(service_notify_ready(NULL), ==, 1);
	got = listener_recv(l);
	g_assert_cmpstr(got, ==, "READY=1");
	g_free(got);

	g_assert_cmpint(service_notify_status("standby"), ==, 1);
	got = listener_recv(l);
	g_assert_cmpstr(got, ==, "STATUS=standby");
	g_free(got);

	g_assert_cmpint(service_notify_stopping(), ==, 1);
	got = listener_recv(l);
	g_assert_cmpstr(got, ==, "STOPPING=1");
	g_free(got);

	uint64_t before = monotonic_usec();
	g_assert_cmpint(service_notify_reloading(), ==, 1);
	uint64_t after = monotonic_usec();
	got = listener_recv(l);
	g_assert_nonnull(got);
	const char *prefix = "RELOADING=1\nMONOTONIC_USEC=";
	g_assert_true(g_str_has_prefix(got, prefix));
	char *end = NULL;
	guint64 usec = g_ascii_strtoull(got + strlen(prefix), &end, 10);
	g_assert_cmpstr(end, ==, "");
	g_assert_cmpuint(usec, >=, before);
	g_assert_cmpuint(usec, <=, after);
	g_free(got);

	g_unsetenv("NOTIFY_SOCKET");
}

static void test_notify_path(void)
{
	struct listener l;
	listener_path(&l);
	check_messages(&l);
	listener_free(&l);
}

static void test_notify_abstract(void)
{
	struct listener l;
	listener_abstract(&l);
	check_messages(&l);

	/* An abstract name nobody bound is an error, not a silent success. */
	gchar *wrong = g_strdup_printf("%sx", l.env);
	g_setenv("NOTIFY_SOCKET", wrong, TRUE);
	g_assert_cmpint(service_notify_ready(NULL), <, 0); /* nobody bound: ECONNREFUSED */
	gchar *got = listener_recv(&l);
	g_assert_null(got);
	g_free(wrong);
	g_unsetenv("NOTIFY_SOCKET");
	listener_free(&l);
}

static void test_notify_unset_and_bad(void)
{
	g_unsetenv("NOTIFY_SOCKET");
	g_assert_cmpint(service_notify_ready("x"), ==, 0);
	g_assert_cmpint(service_notify_stopping(), ==, 0);
	g_setenv("NOTIFY_SOCKET", "", TRUE);
	g_assert_cmpint(service_notify_ready("x"), ==, 0);

	g_setenv("NOTIFY_SOCKET", "relative/path", TRUE);
	g_assert_cmpint(service_notify_ready(NULL), ==, -EAFNOSUPPORT);
	gchar *dir = make_tmpdir();
	gchar *missing = g_build_filename(dir, "no-such-socket", NULL);
	g_setenv("NOTIFY_SOCKET", missing, TRUE);
	g_assert_cmpint(service_notify_ready(NULL), ==, -ENOENT);
	gchar *huge = g_strnfill(200, 'a');
	huge[0] = '/';
	g_setenv("NOTIFY_SOCKET", huge, TRUE);
	g_assert_cmpint(service_notify_ready(NULL), ==, -ENAMETOOLONG);
	g_unsetenv("NOTIFY_SOCKET");
	g_free(huge);
	g_free(missing);
	rm_tree(dir);
	g_free(dir);
}

/* ---- stdio and detaching (in forked children; never a process left behind) ---- */

static int is_devnull(int fd, const struct stat *null)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == null->st_rdev;
}

static void test_stdio_to_devnull(void)
{
	struct stat null;
	g_assert_cmpint(stat("/dev/null", &null), ==, 0);
	fflush(NULL);
	pid_t pid = fork();
	g_assert_cmpint(pid, >=, 0);
	if (pid == 0) {
		int fds_before = open("/dev/zero", O_RDONLY); /* the lowest free fd, for the leak check */
		close(fds_before);
		if (is_devnull(1, &null))
			_exit(10); /* the check below would prove nothing */
		daemon_stdio_to_devnull();
		int code = 0;
		for (int fd = 0; fd <= 2; fd++)
			if (!is_devnull(fd, &null))
				code = 20 + fd;
		if (write(2, "x", 1) != 1)
			code = 30;
		int next = open("/dev/zero", O_RDONLY);
		if (next != fds_before)
			code = 40; /* /dev/null fd kept open */
		_exit(code);
	}
	int st;
	g_assert_cmpint(waitpid(pid, &st, 0), ==, pid);
	g_assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 10) {
		g_test_skip("stdout is /dev/null already");
		return;
	}
	g_assert_cmpint(WEXITSTATUS(st), ==, 0);
}

struct detach_report {
	pid_t pid, sid, pgid, ppid, intermediate, sid_before;
	int rc, ready_fd_valid;
	char cwd[256];
};

static int file_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static void test_detach(void)
{
	int fds[2];
	g_assert_cmpint(pipe(fds), ==, 0);
	/* Orphans are re-parented to us, not to init: we can reap the grandchild, and see that
	 * the intermediate parent is gone. */
	g_assert_cmpint(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), ==, 0);
	pid_t me = getpid();
	char cwd[256];
	g_assert_nonnull(getcwd(cwd, sizeof(cwd)));
	gchar *dir = make_tmpdir();
	gchar *marker = g_build_filename(dir, "started", NULL);

	fflush(NULL); /* daemon_detach() flushes: TAP lines buffered here would print twice */
	pid_t child = fork();
	g_assert_cmpint(child, >=, 0);
	if (child == 0) {
		close(fds[0]);
		struct detach_report r = { .intermediate = getpid(), .sid_before = getsid(0) };
		int ready_fd = -1;
		r.rc = daemon_detach(&ready_fd, NULL);
		/* Only the grandchild gets here (the intermediate parent waits inside, then exits). */
		r.ready_fd_valid = ready_fd >= 0;
		g_usleep(200 * 1000); /* a slow start: the caller must not be back before it ends */
		int mfd = open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (mfd >= 0)
			close(mfd);
		daemon_ready(&ready_fd);
		if (ready_fd != -1)
			r.ready_fd_valid = 2; /* not reset */
		daemon_ready(&ready_fd); /* a second call does nothing */
		gint64 end = g_get_monotonic_time() + 60 * G_USEC_PER_SEC; /* catches a hang only */
		while (getppid() != me && g_get_monotonic_time() < end)
			g_usleep(1000); /* until the intermediate parent is reaped */
		r.pid = getpid();
		r.sid = getsid(0);
		r.pgid = getpgid(0);
		r.ppid = getppid();
		if (!getcwd(r.cwd, sizeof(r.cwd)))
			r.cwd[0] = '\0';
		ssize_t n = write(fds[1], &r, sizeof(r));
		_exit(n == (ssize_t)sizeof(r) ? 0 : 1);
	}
	close(fds[1]);

	int st;
	g_assert_cmpint(waitpid(child, &st, 0), ==, child);
	g_assert_true(WIFEXITED(st));
	g_assert_cmpint(WEXITSTATUS(st), ==, 0); /* the parent of -B exits 0 once the child runs ... */
	g_assert_true(file_exists(marker));      /* ... and not before */

	struct detach_report r;
	struct pollfd p = { .fd = fds[0], .events = POLLIN };
	g_assert_cmpint(poll(&p, 1, 5000), ==, 1);
	g_assert_cmpint(read(fds[0], &r, sizeof(r)), ==, (ssize_t)sizeof(r));
	close(fds[0]);
	g_assert_cmpint(waitpid(r.pid, &st, 0), ==, r.pid); /* reap it: nothing left behind */
	g_assert_true(WIFEXITED(st));
	g_assert_cmpint(WEXITSTATUS(st), ==, 0);
	g_assert_cmpint(prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0), ==, 0);

	g_assert_cmpint(r.rc, ==, 0);
	g_assert_cmpint(r.ready_fd_valid, ==, 1);
	g_assert_cmpint(r.intermediate, ==, child);
	g_assert_cmpint(r.pid, !=, child);           /* a new process ... */
	g_assert_cmpint(r.ppid, ==, me);             /* ... whose parent exited */
	g_assert_cmpint(r.sid, ==, r.pid);           /* setsid(): leader of a new session */
	g_assert_cmpint(r.pgid, ==, r.pid);          /* and of a new process group */
	g_assert_cmpint(r.sid, !=, r.sid_before);
	g_assert_cmpstr(r.cwd, ==, cwd);             /* no chdir("/"): umad2sim needs the cwd */
	rm_tree(dir);
	g_free(marker);
	g_free(dir);
}

enum detach_failure { FAIL_EXIT_3, FAIL_EXIT_0, FAIL_SIGNAL };

/* -B whose child fails before daemon_ready(): the caller's exit status is the child's (1 for a
 * child that exited 0 without a word, 128+N for signal N), and the child's message is on the
 * caller's stderr by the time the caller has exited. */
static void check_detach_failure(enum detach_failure how, int want_status)
{
	int err_pipe[2];
	g_assert_cmpint(pipe(err_pipe), ==, 0);
	fflush(NULL);
	pid_t child = fork();
	g_assert_cmpint(child, >=, 0);
	if (child == 0) {
		close(err_pipe[0]);
		dup2(err_pipe[1], 2);
		close(err_pipe[1]);
		int ready_fd = -1;
		if (daemon_detach(&ready_fd, NULL) < 0)
			_exit(99);
		/* the grandchild: a slow start-up that fails */
		g_usleep(200 * 1000);
		static const char msg[] = "ibsm: start-up error XYZ\n";
		if (write(2, msg, sizeof(msg) - 1) != (ssize_t)sizeof(msg) - 1)
			_exit(98);
		if (how == FAIL_SIGNAL)
			raise(SIGKILL);
		_exit(how == FAIL_EXIT_3 ? 3 : 0);
	}
	close(err_pipe[1]);
	int st;
	g_assert_cmpint(waitpid(child, &st, 0), ==, child); /* the grandchild was reaped by it */
	g_assert_true(WIFEXITED(st));
	g_assert_cmpint(WEXITSTATUS(st), ==, want_status);
	char buf[256];
	g_assert_cmpint(fcntl(err_pipe[0], F_SETFL, O_NONBLOCK), ==, 0);
	ssize_t n = read(err_pipe[0], buf, sizeof(buf) - 1);
	g_assert_cmpint(n, >, 0);
	buf[n] = '\0';
	g_assert_cmpstr(buf, ==, "ibsm: start-up error XYZ\n");
	close(err_pipe[0]);
}

static void test_detach_failure(void)
{
	check_detach_failure(FAIL_EXIT_3, 3);
	check_detach_failure(FAIL_EXIT_0, 1);
	check_detach_failure(FAIL_SIGNAL, 128 + SIGKILL);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/daemon/pidfile/write", test_pidfile_write);
	g_test_add_func("/daemon/pidfile/refuses-running-ibsm", test_pidfile_refuses_running_ibsm);
	g_test_add_func("/daemon/pidfile/replaces-other-program", test_pidfile_replaces_other_program);
	g_test_add_func("/daemon/pidfile/replaces-stale", test_pidfile_replaces_stale);
	g_test_add_func("/daemon/pidfile/unwritable", test_pidfile_unwritable);
	g_test_add_func("/daemon/pidfile/remove", test_pidfile_remove);
	g_test_add_func("/daemon/notify/path", test_notify_path);
	g_test_add_func("/daemon/notify/abstract", test_notify_abstract);
	g_test_add_func("/daemon/notify/unset-and-bad", test_notify_unset_and_bad);
	g_test_add_func("/daemon/stdio-to-devnull", test_stdio_to_devnull);
	g_test_add_func("/daemon/detach", test_detach);
	g_test_add_func("/daemon/detach-failure", test_detach_failure);
	return g_test_run();
}
