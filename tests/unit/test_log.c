/* test_log.c - unit tests of the log file as an administrator meets it: every message stays one
 * printable line (control bytes and bytes >= 0x7f from input files escaped as \xNN), the file
 * is created 0640 whatever the umask, a symbolic link, a second hard link, a FIFO (read or not),
 * a device and a directory are refused (append, -e and the SIGUSR1 reopen alike) and what they
 * lead to left untouched, -e truncates a real file, and lines the file does not take are
 * counted and said once on stderr, then in the log when it takes lines again; state changes
 * (log_sys) reach the file whatever the flags and syslog as RFC 3164 datagrams, unless turned
 * off, and a syslog socket that is absent or full never holds a line up. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/log.h"

static gchar *tmpdir;

static gchar *tmp_path(const char *name)
{
	return g_build_filename(tmpdir, name, NULL);
}

/* Not inlined: GCC 12 otherwise takes the returned buffer for a pointer to the local. */
G_GNUC_NO_INLINE static gchar *slurp(const char *path, gsize *len)
{
	gchar *text = NULL;
	gboolean ok = g_file_get_contents(path, &text, len, NULL);
	g_assert_true(ok);
	return text;
}

static void spit(const char *path, const char *text)
{
	g_assert_true(g_file_set_contents(path, text, -1, NULL));
}

static void open_quiet(const char *path)
{
	g_unlink(path);
	g_assert_cmpint(log_open(path, 0), ==, 0);
	log_set_quiet(1);
	log_set_level(IBSM_LOG_INFO);
}

/* Every byte of TEXT is printable ASCII, except one '\n' at the very end of each line. */
static void assert_printable(const char *text, gsize len)
{
	for (gsize i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		if (c == '\n')
			continue;
		if (c < 0x20 || c >= 0x7f)
			g_error("byte 0x%02x at offset %" G_GSIZE_FORMAT " of the log", c, i);
	}
}

/* OpenSM's log flags: each bit a level; warnings go with errors (0x1) */
static void test_flags(void)
{
	gchar *path = tmp_path("flags.log");
	open_quiet(path);
	log_set_flags(0x1);
	log_msg(IBSM_LOG_ERROR, "TST-0001", "an error");
	log_msg(IBSM_LOG_WARN, "TST-0002", "a warning");
	log_msg(IBSM_LOG_INFO, "TST-0003", "info");
	g_assert_false(log_enabled(IBSM_LOG_VERBOSE));
	log_set_flags(0x4); /* verbose without info, as OpenSM's -D 0x4 */
	log_msg(IBSM_LOG_INFO, "TST-0004", "info again");
	log_msg(IBSM_LOG_VERBOSE, "TST-0005", "verbose");
	log_set_flags(0);
	log_msg(IBSM_LOG_ERROR, "TST-0006", "nothing at all");
	log_close();
	gchar *text = slurp(path, NULL);
	g_assert_nonnull(strstr(text, "ERR  TST-0001 an error"));
	g_assert_nonnull(strstr(text, "WARN TST-0002 a warning"));
	g_assert_null(strstr(text, "TST-0003"));
	g_assert_null(strstr(text, "TST-0004"));
	g_assert_nonnull(strstr(text, "VERB TST-0005 verbose"));
	g_assert_null(strstr(text, "TST-0006"));
	g_free(text);
	g_free(path);
	log_set_level(IBSM_LOG_INFO);
}

/* -L 1: the file is emptied when a line takes it past 1 MB, and goes on */
static void test_max_size(void)
{
	gchar *path = tmp_path("max.log");
	open_quiet(path);
	log_set_max_size(1);
	char line[512];
	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 1] = 0;
	for (int i = 0; i < 3000; i++) /* 1.6 MB of lines */
		log_msg(IBSM_LOG_INFO, "TST-0001", "%d %s", i, line);
	log_close();
	log_set_max_size(0);
	gsize len = 0;
	gchar *text = slurp(path, &len);
	g_assert_cmpuint(len, <=, 1u << 20); /* emptied before a line would cross the limit */
	g_assert_nonnull(strstr(text, "WARN LOG-0001 log file emptied: it reached log_max_size, 1 MB"));
	g_assert_nonnull(strstr(text, "TST-0001 2999 x")); /* the newest line is kept */
	g_free(text);
	g_free(path);
}

static void test_escape(void)
{
	gchar *path = tmp_path("escape.log");
	open_quiet(path);
	/* as a guid2lid or partition line could hold them: escape, bell, CR, LF, tab, DEL, high bytes */
	log_msg(IBSM_LOG_INFO, "TST-0001", "%s", "a\x01" "b\x1b[2J\x07 cr\r lf\n tab\t del\x7f hi\xff\xfe "
		"utf8 \xc3\xa9 back\\slash \"q\" end");
	LOG_I("TST-0002", "plain %d", 42);
	log_close();
	gsize len = 0;
	gchar *text = slurp(path, &len);
	assert_printable(text, len);
	gchar **lines = g_strsplit(text, "\n", -1);
	g_assert_cmpuint(g_strv_length(lines), ==, 3); /* two lines and the empty rest */
	g_assert_cmpstr(lines[2], ==, "");
	g_assert_true(g_str_has_suffix(lines[0],
		" INFO TST-0001 a\\x01b\\x1b[2J\\x07 cr\\x0d lf\\x0a tab\\x09 del\\x7f hi\\xff\\xfe "
		"utf8 \\xc3\\xa9 back\\slash \"q\" end"));
	g_assert_true(g_str_has_suffix(lines[1], " INFO TST-0002 plain 42"));
	g_strfreev(lines);
	g_free(text);
	g_free(path);
}

/* A message made only of bytes to escape: the longest one the log keeps is escaped whole
 * (no truncated "\x0" at its end) and stays one line. */
static void test_escape_long(void)
{
	gchar *path = tmp_path("long.log");
	open_quiet(path);
	gchar *ctl = g_strnfill(5000, '\x01');
	log_msg(IBSM_LOG_INFO, "TST-0003", "%s", ctl);
	log_close();
	gsize len = 0;
	gchar *text = slurp(path, &len);
	assert_printable(text, len);
	g_assert_cmpint(text[len - 1], ==, '\n');
	g_assert_null(memchr(text, '\n', len - 1));
	const char *body = strstr(text, "TST-0003 ");
	g_assert_nonnull(body);
	body += strlen("TST-0003 ");
	gsize n = (gsize)(text + len - 1 - body);
	g_assert_cmpuint(n % 4, ==, 0);     /* whole escapes only */
	g_assert_cmpuint(n, >=, 4 * 1000);  /* at least the first 1000 bytes of the message */
	for (gsize i = 0; i < n; i += 4)
		g_assert_cmpint(strncmp(body + i, "\\x01", 4), ==, 0);
	g_free(text);
	g_free(ctl);
	g_free(path);
}

static void test_mode_under_umask_000(void)
{
	gchar *path = tmp_path("mode.log");
	g_unlink(path);
	mode_t old = umask(0);
	int rc = log_open(path, 0);
	umask(old);
	g_assert_cmpint(rc, ==, 0);
	log_close();
	struct stat st;
	g_assert_cmpint(g_lstat(path, &st), ==, 0);
	g_assert_true(S_ISREG(st.st_mode));
	g_assert_cmpint(st.st_mode & 07777, ==, 0640);
	g_free(path);
}

/* A FIFO as the log: refused at once (-ENXIO, said in words), not a start that hangs in open();
 * with a reader too (a reader that stops reading would block every thread that logs). */
static void test_fifo_refused(void)
{
	gchar *fifo = tmp_path("log.fifo");
	g_unlink(fifo);
	g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
	g_assert_cmpint(log_open(fifo, 0), ==, -ENXIO);
	g_assert_nonnull(strstr(log_open_strerror(-ENXIO), "FIFO"));
	g_assert_nonnull(strstr(log_open_strerror(-ELOOP), "symbolic link"));

	int rd = open(fifo, O_RDONLY | O_NONBLOCK);
	g_assert_cmpint(rd, >=, 0);
	g_assert_cmpint(log_open(fifo, 0), ==, -ENXIO);
	g_assert_cmpint(log_open_erased(fifo, 0), ==, -ENXIO);
	log_set_quiet(1);
	LOG_I("TST-0006", "not through the fifo");
	char buf[256];
	g_assert_cmpint(read(rd, buf, sizeof(buf)), <=, 0); /* nothing was written */
	close(rd);
	g_unlink(fifo);
	g_free(fifo);
}

/* Devices and directories: refused without being opened for writing, each said in words. */
static void test_not_regular_refused(void)
{
	g_assert_cmpint(log_open("/dev/null", 0), ==, -ENODEV);
	g_assert_cmpint(log_open_erased("/dev/zero", 0), ==, -ENODEV);
	g_assert_nonnull(strstr(log_open_strerror(-ENODEV), "device, not a regular file"));
	g_assert_cmpint(log_open(tmpdir, 0), ==, -EISDIR);
	g_assert_nonnull(strstr(log_open_strerror(-EISDIR), "directory"));
}

/* A log name that is a second hard link of another file: refused (append, -e, SIGUSR1), the
 * other file neither written nor emptied. */
static void test_hard_link_refused(void)
{
	gchar *target = tmp_path("hl-precious");
	gchar *second = tmp_path("hl.log");
	spit(target, "keep me\n");
	g_unlink(second);
	g_assert_cmpint(link(target, second), ==, 0);
	g_assert_cmpint(log_open(second, 0), ==, -EMLINK);
	g_assert_cmpint(log_open_erased(second, 0), ==, -EMLINK);
	g_assert_nonnull(strstr(log_open_strerror(-EMLINK), "more than one hard link"));
	LOG_I("TST-0011", "must not reach the target");
	gchar *after = slurp(target, NULL);
	g_assert_cmpstr(after, ==, "keep me\n");
	g_free(after);
	/* SIGUSR1 after a rotation that left a hard link at the name: the old file goes on */
	gchar *path = tmp_path("hl-rot.log"), *moved = tmp_path("hl-rot.log.1");
	open_quiet(path);
	g_assert_cmpint(g_rename(path, moved), ==, 0);
	g_assert_cmpint(link(target, path), ==, 0);
	g_assert_cmpint(log_reopen(), ==, -EMLINK);
	LOG_I("TST-0012", "after");
	log_close();
	after = slurp(target, NULL);
	g_assert_cmpstr(after, ==, "keep me\n");
	g_free(after);
	after = slurp(moved, NULL);
	g_assert_nonnull(strstr(after, "TST-0012 after"));
	g_free(after);
	g_unlink(path);
	g_unlink(moved);
	g_unlink(second);
	g_free(path);
	g_free(moved);
	g_free(second);
	g_free(target);
}

static unsigned count(const char *text, const char *needle)
{
	unsigned n = 0;
	for (const char *p = text; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* The file stops taking lines (here: RLIMIT_FSIZE, EFBIG; a full disk is ENOSPC): every lost
 * line counted, said on stderr once (not once per line, not a loop), and when it takes lines
 * again, the log says how many were lost before the next line. In a subprocess: the limit and
 * stderr are the child's. */
static void test_write_failure(void)
{
	if (!g_test_subprocess()) {
		g_test_trap_subprocess(NULL, 20 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_DEFAULT);
		g_test_trap_assert_passed();
		return;
	}
	gchar *path = tmp_path("full.log");
	int pipefd[2]; /* stderr into a pipe: the file size limit below does not apply to it */
	g_assert_cmpint(pipe(pipefd), ==, 0);
	g_assert_cmpint(fcntl(pipefd[0], F_SETFL, O_NONBLOCK), ==, 0);
	int saved_err = dup(STDERR_FILENO);
	g_assert_cmpint(dup2(pipefd[1], STDERR_FILENO), ==, STDERR_FILENO);
	close(pipefd[1]);
	g_unlink(path);
	g_assert_cmpint(log_open(path, 0), ==, 0);
	log_set_quiet(0); /* the failure is said on stderr */
	log_set_level(IBSM_LOG_INFO);
	LOG_I("TST-0013", "before the limit");
	signal(SIGXFSZ, SIG_IGN); /* a write past the limit is EFBIG, not a signal */
	struct rlimit old, lim;
	g_assert_cmpint(getrlimit(RLIMIT_FSIZE, &old), ==, 0);
	struct stat st;
	g_assert_cmpint(stat(path, &st), ==, 0);
	lim = old;
	lim.rlim_cur = (rlim_t)st.st_size; /* not one byte more */
	g_assert_cmpint(setrlimit(RLIMIT_FSIZE, &lim), ==, 0);
	unsigned long long before = log_write_failures();
	for (int i = 0; i < 100; i++)
		LOG_I("TST-0014", "lost line %d", i);
	g_assert_cmpuint(log_write_failures() - before, ==, 100);
	g_assert_cmpint(setrlimit(RLIMIT_FSIZE, &old), ==, 0);
	LOG_I("TST-0015", "after the limit");
	log_close();
	dup2(saved_err, STDERR_FILENO); /* what fails below is seen */
	close(saved_err);
	char errs[8192];
	ssize_t n = read(pipefd[0], errs, sizeof(errs) - 1);
	errs[n > 0 ? n : 0] = '\0';
	close(pipefd[0]);
	gchar *text = slurp(path, NULL);
	g_assert_nonnull(strstr(text, "TST-0013 before the limit"));
	g_assert_null(strstr(text, "TST-0014"));
	const char *back = strstr(text, "WARN LOG-0003 the log file takes lines again: 100 lines lost");
	g_assert_nonnull(back);
	g_assert_nonnull(strstr(back, "TST-0015 after the limit")); /* after the count */
	g_assert_cmpuint(count(errs, "LOG-0002"), ==, 1);            /* once, not per line */
	g_assert_nonnull(strstr(errs, "cannot write the log file"));
	g_assert_nonnull(strstr(errs, path));
	g_assert_nonnull(strstr(errs, g_strerror(EFBIG)));
	g_free(text);
	g_unlink(path);
	g_free(path);
}

static void test_symlink_refused(void)
{
	gchar *target = tmp_path("precious");
	gchar *link = tmp_path("link.log");
	spit(target, "keep me\n");
	g_unlink(link);
	g_assert_cmpint(symlink(target, link), ==, 0);

	g_assert_cmpint(log_open(link, 0), ==, -ELOOP);
	LOG_I("TST-0004", "must not reach the target");
	g_assert_cmpint(log_open_erased(link, 0), ==, -ELOOP); /* -e */
	LOG_I("TST-0005", "must not reach the target");
	gchar *after = slurp(target, NULL);
	g_assert_cmpstr(after, ==, "keep me\n");
	g_free(after);

	g_unlink(link);
	g_free(link);
	g_free(target);
}

static void test_erase(void)
{
	gchar *path = tmp_path("erase.log");
	spit(path, "old line\n");
	g_assert_cmpint(log_open(path, 0), ==, 0); /* appends */
	log_set_quiet(1);
	LOG_I("TST-0006", "appended");
	log_close();
	gchar *text = slurp(path, NULL);
	g_assert_true(g_str_has_prefix(text, "old line\n"));
	g_assert_nonnull(strstr(text, "TST-0006 appended"));
	g_free(text);

	g_assert_cmpint(log_open_erased(path, 0), ==, 0); /* -e: starts empty */
	LOG_I("TST-0007", "after erase");
	log_close();
	text = slurp(path, NULL);
	g_assert_null(strstr(text, "old line"));
	g_assert_null(strstr(text, "TST-0006"));
	g_assert_nonnull(strstr(text, "TST-0007 after erase"));
	g_free(text);
	g_free(path);
}

/* SIGUSR1 after logrotate: a symbolic link planted at the log's name is not followed; the log
 * goes on in the file it had. */
static void test_reopen_refuses_symlink(void)
{
	gchar *path = tmp_path("rot.log");
	gchar *moved = tmp_path("rot.log.1");
	gchar *target = tmp_path("rot-target");
	open_quiet(path);
	LOG_I("TST-0008", "before");
	g_assert_cmpint(g_rename(path, moved), ==, 0);
	spit(target, "keep me\n");
	g_assert_cmpint(symlink(target, path), ==, 0);
	g_assert_cmpint(log_reopen(), ==, -ELOOP);
	LOG_I("TST-0009", "after");
	log_close();
	gchar *text = slurp(target, NULL);
	g_assert_cmpstr(text, ==, "keep me\n");
	g_free(text);
	text = slurp(moved, NULL);
	g_assert_nonnull(strstr(text, "TST-0009 after"));
	g_free(text);
	g_unlink(path);

	/* and a real file at the name is taken again, created 0640 */
	mode_t old = umask(0);
	g_assert_cmpint(log_open(moved, 0), ==, 0);
	g_assert_cmpint(g_rename(moved, path), ==, 0);
	g_assert_cmpint(log_reopen(), ==, 0); /* the name is free: a new file */
	umask(old);
	LOG_I("TST-0010", "new file");
	log_close();
	struct stat st;
	g_assert_cmpint(g_lstat(path, &st), ==, 0);
	g_assert_cmpint(st.st_mode & 07777, ==, 0640);
	g_free(target);
	g_free(moved);
	g_free(path);
}

static void rm_tmpdir(void)
{
	GDir *d = g_dir_open(tmpdir, 0, NULL);
	const char *name;
	while (d && (name = g_dir_read_name(d))) {
		gchar *p = tmp_path(name);
		g_unlink(p);
		g_free(p);
	}
	if (d)
		g_dir_close(d);
	g_rmdir(tmpdir);
}

/* A datagram socket bound at PATH, non-blocking. */
static int syslog_sink(const char *path)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	g_strlcpy(a.sun_path, path, sizeof(a.sun_path));
	g_unlink(path);
	g_assert_cmpint(bind(fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
	return fd;
}

static void test_syslog_state_changes(void)
{
	gchar *lp = tmp_path("sys.log"), *sp = tmp_path("syslog.sock");
	g_assert_cmpint(log_open(lp, 0), ==, 0);
	log_set_flags(0x1);                    /* errors only in the file */
	log_set_syslog(0, "ibsm-u");           /* no flags' lines to syslog */
	log_set_syslog_target(1, sp);
	unsigned long long sent0, dropped0, sent, dropped;
	log_syslog_counts(&sent0, &dropped0);
	LOG_SYS("TST-0001", "entering MASTER state"); /* the socket is not there yet: dropped */
	log_syslog_counts(&sent, &dropped);
	g_assert_cmpuint(dropped, ==, dropped0 + 1);
	int fd = syslog_sink(sp);
	LOG_I("TST-0002", "an info line");     /* neither in the file nor in syslog */
	LOG_SYS("TST-0003", "SUBNET UP");
	LOG_SYS_E("TST-0004", "fatal: %d", 7);
	char buf[512];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
	g_assert_cmpint(n, >, 0);
	buf[n] = '\0';
	gchar *want = g_strdup_printf("^<30>\\w{3} [ \\d]\\d \\d\\d:\\d\\d:\\d\\d ibsm-u\\[%d\\]: "
				      "INFO TST-0003 SUBNET UP$", (int)getpid());
	g_assert_true(g_regex_match_simple(want, buf, 0, 0));
	g_free(want);
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	g_assert_cmpint(n, >, 0);
	buf[n] = '\0';
	g_assert_true(g_str_has_prefix(buf, "<27>") && g_str_has_suffix(buf, "ERR  TST-0004 fatal: 7"));
	g_assert_cmpint(recv(fd, buf, sizeof(buf), 0), <, 0); /* the INFO line went nowhere */
	/* turned off: state changes stay in the file */
	log_set_syslog_target(0, sp);
	LOG_SYS("TST-0005", "entering STANDBY state");
	g_assert_cmpint(recv(fd, buf, sizeof(buf), 0), <, 0);
	/* the flags' lines still go: syslog_log_level is not state changes */
	log_set_syslog(0x2, "ibsm-u");
	LOG_I("TST-0006", "flagged");
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	g_assert_cmpint(n, >, 0);
	buf[n] = '\0';
	g_assert_true(g_str_has_suffix(buf, "INFO TST-0006 flagged"));
	log_syslog_counts(&sent, &dropped);
	g_assert_cmpuint(sent, ==, sent0 + 3);
	/* a socket nobody reads: filled, then dropped without waiting */
	for (int i = 0; i < 2000; i++)
		LOG_I("TST-0007", "flood %d", i);
	log_syslog_counts(&sent, &dropped);
	g_assert_cmpuint(dropped, >, dropped0 + 1);
	gsize len;
	gchar *text = slurp(lp, &len);
	g_assert_null(strstr(text, "TST-0002"));
	g_assert_nonnull(strstr(text, "INFO TST-0001 entering MASTER state\n"));
	g_assert_nonnull(strstr(text, "INFO TST-0005 entering STANDBY state\n"));
	g_assert_nonnull(strstr(text, "ERR  TST-0004 fatal: 7\n"));
	g_free(text);
	close(fd);
	log_set_syslog(0, NULL);
	log_set_syslog_target(1, NULL);
	log_set_flags(0x3);
	log_close();
	g_unlink(sp);
	g_free(sp);
	g_free(lp);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	tmpdir = g_dir_make_tmp("ibsm-log-XXXXXX", NULL);
	g_assert_nonnull(tmpdir);
	g_test_add_func("/log/flags", test_flags);
	g_test_add_func("/log/max-size", test_max_size);
	g_test_add_func("/log/escape", test_escape);
	g_test_add_func("/log/escape-long", test_escape_long);
	g_test_add_func("/log/mode-under-umask-000", test_mode_under_umask_000);
	g_test_add_func("/log/symlink-refused", test_symlink_refused);
	g_test_add_func("/log/fifo-refused", test_fifo_refused);
	g_test_add_func("/log/not-regular-refused", test_not_regular_refused);
	g_test_add_func("/log/hard-link-refused", test_hard_link_refused);
	g_test_add_func("/log/write-failure", test_write_failure);
	g_test_add_func("/log/erase", test_erase);
	g_test_add_func("/log/reopen-refuses-symlink", test_reopen_refuses_symlink);
	g_test_add_func("/log/syslog-state-changes", test_syslog_state_changes);
	int rc = g_test_run();
	log_close();
	rm_tmpdir();
	g_free(tmpdir);
	return rc;
}
