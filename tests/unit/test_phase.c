/* test_phase.c - unit tests of --progress: each phase of a sweep is shown once wherever the user
 * looks. With the log on stderr (-f -) the log line is the only one (the progress line would
 * repeat it); with the log in a file, or on stdout going elsewhere, or INFO not logged, the
 * progress line is printed on stderr. Each case runs in a subprocess whose stderr is read. */
#include <glib.h>
#include <glib/gstdio.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "base/log.h"
#include "mad/phase.h"

static gchar *tmpdir;

/* Occurrences of NEEDLE in HAY. */
static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* In the child: its stderr (and stdout, unless SAME: stdout joins stderr, as 2>&1 does) go to
 * files of the test's own, so fstat sees real files and the parent can count lines. */
static void redirect(const char *name, int same)
{
	gchar *ep = g_strdup_printf("%s/%s.err", tmpdir, name), *op = g_strdup_printf("%s/%s.out", tmpdir, name);
	int e = g_open(ep, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	g_assert_cmpint(e, >=, 0);
	fflush(stderr);
	fflush(stdout);
	g_assert_cmpint(dup2(e, STDERR_FILENO), ==, STDERR_FILENO);
	if (same) {
		g_assert_cmpint(dup2(e, STDOUT_FILENO), ==, STDOUT_FILENO);
	} else {
		int o = g_open(op, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		g_assert_cmpint(o, >=, 0);
		g_assert_cmpint(dup2(o, STDOUT_FILENO), ==, STDOUT_FILENO);
		close(o);
	}
	close(e);
	g_free(ep);
	g_free(op);
}

/* What the child NAME wrote to stderr (err) or stdout (out); "" when nothing. */
static gchar *captured(const char *name, const char *which)
{
	gchar *path = g_strdup_printf("%s/%s.%s", tmpdir, name, which), *text = NULL;
	if (!g_file_get_contents(path, &text, NULL, NULL))
		text = g_strdup("");
	g_unlink(path);
	g_free(path);
	return text;
}

/* One sweep of two phases with --progress on (offline: no transport, 0 SMPs). */
static void two_phases(void)
{
	struct phase_log pl;
	phase_log_init(&pl, NULL, 1);
	phase_begin(&pl, "discovery");
	phase_end(&pl, "%d nodes", 7);
	phase_begin(&pl, "routing");
	phase_end(&pl, "engine %s", "minhop");
}

/* The progress line of phase NAME, as phase_end prints it: two spaces, the name padded. */
#define PROGRESS_LINE(name) "  " name " "

static void child_log_stderr(void)
{
	redirect("log-stderr", 0);
	g_assert_cmpint(log_open("-", 1), ==, 0);
	log_set_flags(0x3);
	two_phases();
	fflush(stdout);
	fflush(stderr);
}

static void child_log_stderr_errors_only(void)
{
	redirect("errors-only", 0);
	g_assert_cmpint(log_open("-", 1), ==, 0);
	log_set_flags(0x1); /* -D 0x1: the PHS-0001 lines are not logged */
	two_phases();
	fflush(stdout);
	fflush(stderr);
}

static void child_log_file(void)
{
	redirect("log-file", 0);
	gchar *path = g_build_filename(tmpdir, "phase.log", NULL);
	g_assert_cmpint(log_open(path, 1), ==, 0);
	log_set_flags(0x3);
	two_phases();
	log_close();
	gchar *text = NULL;
	g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
	/* the file has the log lines; the test reads stdout for them */
	fputs(text, stdout);
	g_free(text);
	g_free(path);
}

static void child_log_stdout_same_as_stderr(void)
{
	redirect("stdout-same", 1);
	g_assert_cmpint(log_open("stdout", 1), ==, 0);
	log_set_flags(0x3);
	two_phases();
	fflush(stdout);
}

static void child_log_stdout_elsewhere(void)
{
	redirect("stdout-elsewhere", 0);
	g_assert_cmpint(log_open("stdout", 1), ==, 0);
	log_set_flags(0x3);
	two_phases();
	fflush(stdout);
}

static void test_log_on_stderr_once(void)
{
	if (g_test_subprocess()) {
		child_log_stderr();
		return;
	}
	g_test_trap_subprocess(NULL, 0, 0);
	g_test_trap_assert_passed();
	gchar *err = captured("log-stderr", "err");
	g_assert_cmpint(count(err, "phase discovery: 7 nodes"), ==, 1);
	g_assert_cmpint(count(err, "phase routing: engine minhop"), ==, 1);
	g_assert_cmpint(count(err, PROGRESS_LINE("discovery")), ==, 0);
	g_assert_cmpint(count(err, PROGRESS_LINE("routing  ")), ==, 0);
	g_free(err);
}

static void test_info_not_logged_progress_shown(void)
{
	if (g_test_subprocess()) {
		child_log_stderr_errors_only();
		return;
	}
	g_test_trap_subprocess(NULL, 0, 0);
	g_test_trap_assert_passed();
	gchar *err = captured("errors-only", "err");
	g_assert_cmpint(count(err, "PHS-0001"), ==, 0);
	g_assert_cmpint(count(err, PROGRESS_LINE("discovery")), ==, 1);
	g_assert_cmpint(count(err, PROGRESS_LINE("routing  ")), ==, 1);
	g_assert_cmpint(count(err, "7 nodes"), ==, 1);
	g_free(err);
}

static void test_log_file_progress_on_stderr(void)
{
	if (g_test_subprocess()) {
		child_log_file();
		return;
	}
	g_test_trap_subprocess(NULL, 0, 0);
	g_test_trap_assert_passed();
	gchar *err = captured("log-file", "err"), *out = captured("log-file", "out");
	g_assert_cmpint(count(err, PROGRESS_LINE("discovery")), ==, 1);
	g_assert_cmpint(count(err, PROGRESS_LINE("routing  ")), ==, 1);
	g_assert_cmpint(count(err, "PHS-0001"), ==, 0);
	g_assert_cmpint(count(out, "phase discovery: 7 nodes"), ==, 1);
	g_assert_cmpint(count(out, "phase routing: engine minhop"), ==, 1);
	g_free(out);
	g_free(err);
}

static void test_log_stdout_joined_once(void)
{
	if (g_test_subprocess()) {
		child_log_stdout_same_as_stderr();
		return;
	}
	g_test_trap_subprocess(NULL, 0, 0);
	g_test_trap_assert_passed();
	gchar *err = captured("stdout-same", "err");
	g_assert_cmpint(count(err, "phase discovery: 7 nodes"), ==, 1);
	g_assert_cmpint(count(err, "7 nodes"), ==, 1);
	g_assert_cmpint(count(err, PROGRESS_LINE("discovery")), ==, 0);
	g_free(err);
}

static void test_log_stdout_elsewhere_progress_shown(void)
{
	if (g_test_subprocess()) {
		child_log_stdout_elsewhere();
		return;
	}
	g_test_trap_subprocess(NULL, 0, 0);
	g_test_trap_assert_passed();
	gchar *err = captured("stdout-elsewhere", "err"), *out = captured("stdout-elsewhere", "out");
	g_assert_cmpint(count(out, "phase discovery: 7 nodes"), ==, 1);
	g_assert_cmpint(count(err, PROGRESS_LINE("discovery")), ==, 1);
	g_assert_cmpint(count(err, "PHS-0001"), ==, 0);
	g_free(out);
	g_free(err);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	/* the subprocesses run main() again: they write into the parent's directory */
	const char *inherited = g_getenv("IBSM_TEST_PHASE_DIR");
	tmpdir = inherited ? g_strdup(inherited) : g_dir_make_tmp("ibsm-phase-XXXXXX", NULL);
	g_assert_nonnull(tmpdir);
	g_setenv("IBSM_TEST_PHASE_DIR", tmpdir, TRUE);
	g_test_add_func("/phase/progress/log-on-stderr-once", test_log_on_stderr_once);
	g_test_add_func("/phase/progress/info-not-logged", test_info_not_logged_progress_shown);
	g_test_add_func("/phase/progress/log-file", test_log_file_progress_on_stderr);
	g_test_add_func("/phase/progress/stdout-joined", test_log_stdout_joined_once);
	g_test_add_func("/phase/progress/stdout-elsewhere", test_log_stdout_elsewhere_progress_shown);
	int rc = g_test_run();
	if (!inherited) { /* the children's files: captured() took most, the rest go now */
		GDir *d = g_dir_open(tmpdir, 0, NULL);
		for (const char *name; d && (name = g_dir_read_name(d));) {
			gchar *path = g_build_filename(tmpdir, name, NULL);
			g_unlink(path);
			g_free(path);
		}
		if (d)
			g_dir_close(d);
		g_rmdir(tmpdir);
	}
	g_free(tmpdir);
	return rc;
}
