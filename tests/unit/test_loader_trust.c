/* test_loader_trust.c - the plugin loader refuses engine files, and the directories they are
 * in, that others than their owner may write, or that someone other than root or the running
 * user owns: a world-writable minhop.so or --plugin-dir (IBSM_PLUGIN_PATH too, a sticky /tmp-like
 * directory too, a symlink into one too) makes loading that engine fail with a message naming
 * the path, its mode and its owner, without falling back to a trusted file of the same name
 * further down the search path; listing engines and collecting their keys skip such files and
 * log why. Ownership is checked through the check function, with uid and mode as parameters. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib.h>
#include <glib/gstdio.h>
#include "base/log.h"
#include "config/template.h"
#include "routing/loader.h"

static char *tmp;

static char *tpath(const char *name)
{
	return g_build_filename(tmp, name, NULL);
}

/* A directory under tmp with mode dmode holding a copy of the built minhop.so (mode fmode). */
static char *engine_dir(const char *name, mode_t dmode, mode_t fmode)
{
	char *dir = tpath(name), *so = g_build_filename(dir, "minhop.so", NULL), *data = NULL;
	gsize len = 0;
	g_assert_cmpint(g_mkdir(dir, 0755), ==, 0);
	g_assert_true(g_file_get_contents(TEST_PLUGIN_DIR "/minhop.so", &data, &len, NULL));
	g_assert_true(g_file_set_contents(so, data, (gssize)len, NULL));
	g_assert_cmpint(chmod(so, fmode), ==, 0);
	g_assert_cmpint(chmod(dir, dmode), ==, 0);
	g_free(data);
	g_free(so);
	return dir;
}

/* engine_load("minhop") with plugin_dir dirs: refused, with the message naming what. */
static void expect_refused(const char *dirs, const char *what, const char *mode)
{
	GError *err = NULL;
	struct engine *e = engine_load("minhop", dirs, &err);
	if (e)
		g_test_message("loaded %s", e->path);
	g_assert_null(e);
	g_assert_error(err, ENGINE_ERROR, ENGINE_ERROR_UNTRUSTED);
	if (!strstr(err->message, what) || !strstr(err->message, mode) ||
	    !strstr(err->message, "owner uid"))
		g_test_message("message: %s", err->message);
	g_assert_nonnull(strstr(err->message, what));   /* the path */
	g_assert_nonnull(strstr(err->message, mode));   /* its mode */
	g_assert_nonnull(strstr(err->message, "owner uid"));
	g_error_free(err);
}

static void test_world_writable_file(void)
{
	char *bad = engine_dir("wfile", 0755, 0666), *good = engine_dir("wfile-good", 0755, 0755);
	char *dirs = g_strconcat(bad, ":", good, NULL), *so = g_build_filename(bad, "minhop.so", NULL);
	/* the trusted copy further down the path is not a fall-back */
	expect_refused(dirs, so, "mode 0666");
	/* group-writable is refused as well */
	g_assert_cmpint(chmod(so, 0775), ==, 0);
	expect_refused(dirs, so, "mode 0775");
	/* owner-writable only: loads */
	g_assert_cmpint(chmod(so, 0755), ==, 0);
	GError *err = NULL;
	struct engine *e = engine_load("minhop", dirs, &err);
	g_assert_no_error(err);
	g_assert_nonnull(e);
	g_assert_cmpstr(e->path, ==, so);
	engine_unload(e);
	g_free(so);
	g_free(dirs);
	g_free(good);
	g_free(bad);
}

static void test_world_writable_dir(void)
{
	char *bad = engine_dir("wdir", 0777, 0755), *good = engine_dir("wdir-good", 0755, 0755);
	char *dirs = g_strconcat(bad, ":", good, NULL);
	expect_refused(dirs, bad, "mode 0777");
	/* sticky, like /tmp: still anyone may add a file */
	g_assert_cmpint(chmod(bad, 01777), ==, 0);
	expect_refused(dirs, bad, "mode 1777");
	g_assert_cmpint(chmod(bad, 0775), ==, 0);
	expect_refused(dirs, bad, "mode 0775");
	/* through IBSM_PLUGIN_PATH, searched first */
	g_assert_cmpint(chmod(bad, 0777), ==, 0);
	g_setenv("IBSM_PLUGIN_PATH", bad, TRUE);
	expect_refused(good, bad, "mode 0777");
	g_unsetenv("IBSM_PLUGIN_PATH");
	g_free(dirs);
	g_free(good);
	g_free(bad);
}

/* A trusted directory holding a symlink to an engine in a world-writable one. */
static void test_symlink_into_writable(void)
{
	char *bad = engine_dir("wlink-target", 0777, 0755), *dir = tpath("wlink");
	char *target = g_build_filename(bad, "minhop.so", NULL);
	char *link = g_build_filename(dir, "minhop.so", NULL);
	g_assert_cmpint(g_mkdir(dir, 0755), ==, 0);
	g_assert_cmpint(symlink(target, link), ==, 0);
	expect_refused(dir, bad, "mode 0777");
	g_free(link);
	g_free(target);
	g_free(dir);
	g_free(bad);
}

/* The list of engines and their declared keys skip such a file and log why (LDR-0001). */
static void test_listing_skips(void)
{
	char *bad = engine_dir("list-bad", 0777, 0755), *logp = tpath("loader.log");
	char *text = NULL;
	g_assert_cmpint(log_open(logp, 0), ==, 0);
	log_set_quiet(1);
	char *avail = engine_list_available(bad);
	g_assert_null(strstr(avail, "minhop"));
	GPtrArray *keys = engine_declared_keys(bad);
	for (guint i = 0; i < keys->len; i++) {
		const struct config_declared *d = g_ptr_array_index(keys, i);
		g_assert_cmpstr(d->engine, !=, "minhop");
	}
	g_ptr_array_free(keys, TRUE);
	log_close();
	g_assert_true(g_file_get_contents(logp, &text, NULL, NULL));
	g_assert_nonnull(strstr(text, "LDR-0001"));
	g_assert_nonnull(strstr(text, bad));
	g_assert_nonnull(strstr(text, "mode 0777"));
	g_free(text);
	g_free(avail);
	g_free(logp);
	g_free(bad);
}

/* The check itself, for owners and modes a test cannot create without other users. */
static void test_check_function(void)
{
	static const struct {
		uid_t owner;
		mode_t mode;
		uid_t me;
		const char *problem;   /* NULL: trusted */
	} cases[] = {
		{ 0, S_IFREG | 0755, 0, NULL },
		{ 0, S_IFREG | 0644, 1000, NULL },          /* root's file, ibsm as a user */
		{ 1000, S_IFDIR | 0700, 1000, NULL },       /* the user's own */
		{ 1000, S_IFREG | 0755, 0, "is owned by uid 1000, neither root nor the user ibsm "
					   "runs as (uid 0) (mode 0755, owner uid 1000)" },
		{ 1001, S_IFREG | 0755, 1000, "is owned by uid 1001" },
		{ 0, S_IFREG | 0775, 0, "is writable by its group (mode 0775, owner uid 0)" },
		{ 0, S_IFREG | 0757, 0, "is writable by others (mode 0757, owner uid 0)" },
		{ 0, S_IFDIR | 0777, 0, "is writable by its group and by others (mode 0777" },
		{ 0, S_IFDIR | 01777, 0, "(mode 1777, owner uid 0)" },   /* sticky: still refused */
		{ 1000, S_IFDIR | 0770, 1000, "is writable by its group" },
	};
	for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
		char *why = NULL;
		int rc = engine_trust_check("/p/x.so", "engine file", cases[i].owner, cases[i].mode,
					    cases[i].me, &why);
		if (!cases[i].problem) {
			g_assert_cmpint(rc, ==, 0);
			g_assert_null(why);
			continue;
		}
		g_assert_cmpint(rc, ==, -EPERM);
		g_assert_nonnull(why);
		if (!strstr(why, cases[i].problem))
			g_test_message("case %u: %s", i, why);
		g_assert_true(g_str_has_prefix(why, "engine file /p/x.so "));
		g_assert_nonnull(strstr(why, cases[i].problem));
		g_free(why);
	}
}

static void rm_rf(const char *dir)
{
	GDir *d = g_dir_open(dir, 0, NULL);
	const char *e;
	while (d && (e = g_dir_read_name(d))) {
		char *p = g_build_filename(dir, e, NULL);
		if (g_file_test(p, G_FILE_TEST_IS_DIR) && !g_file_test(p, G_FILE_TEST_IS_SYMLINK))
			rm_rf(p);
		else
			g_unlink(p);
		g_free(p);
	}
	if (d)
		g_dir_close(d);
	g_rmdir(dir);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	GError *err = NULL;
	tmp = g_dir_make_tmp("ibsm-trust-XXXXXX", &err);
	g_assert_no_error(err);
	g_unsetenv("IBSM_PLUGIN_PATH");
	g_test_add_func("/loader_trust/check_function", test_check_function);
	g_test_add_func("/loader_trust/world_writable_file", test_world_writable_file);
	g_test_add_func("/loader_trust/world_writable_dir", test_world_writable_dir);
	g_test_add_func("/loader_trust/symlink_into_writable", test_symlink_into_writable);
	g_test_add_func("/loader_trust/listing_skips", test_listing_skips);
	int rc = g_test_run();
	rm_rf(tmp);
	g_free(tmp);
	return rc;
}
