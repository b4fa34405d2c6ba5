/* test_config.c - the configuration chain (defaults -> file -> command line): YAML and opensm.conf
 * files, errors with file:line:column, the --create-config template and SIGHUP reentrancy. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include "config/keys.h"
#include "config/build.h"
#include "config/config_file.h"
#include "config/template.h"
#include "base/log.h"
#include "config/options.h"
#include "config/opensm_keys.h"

static char *tmpdir;
static char *etcdir; /* $IBSM_SYSCONFDIR: no file of this machine's /etc/ibsm or /etc/opensm is read */

static char *write_tmp(const char *name, const char *text)
{
	char *p = g_build_filename(tmpdir, name, NULL);
	g_assert_true(g_file_set_contents(p, text, -1, NULL));
	return p;
}

static int declared_calls; /* test_declared calls: the engines opened to learn their keys */

/* What a routing engine found on the search path would declare: one key of its own. */
static GPtrArray *test_declared(const struct sm_options *o, void *ctx)
{
	(void)o;
	(void)ctx;
	declared_calls++;
	GPtrArray *a = g_ptr_array_new_with_free_func(config_declared_free);
	struct config_declared *k = g_new0(struct config_declared, 1);
	k->engine = g_strdup("demo");
	k->name = g_strdup("demo_threads");
	k->default_value = g_strdup("2");
	k->help = g_strdup("Threads of the demo engine");
	g_ptr_array_add(a, k);
	return a;
}

/* options_build_err with "ibsm" + the NULL-terminated args */
static int build(struct sm_options *o, GError **err, ...)
{
	GPtrArray *a = g_ptr_array_new();
	g_ptr_array_add(a, (char *)"ibsm");
	va_list ap;
	va_start(ap, err);
	for (char *s; (s = va_arg(ap, char *));)
		g_ptr_array_add(a, s);
	va_end(ap);
	g_ptr_array_add(a, NULL);
	int show_version = 0;
	int rc = options_build_err((int)a->len - 1, (char **)a->pdata, o, &show_version, test_declared, NULL, err);
	g_ptr_array_free(a, TRUE);
	return rc;
}

static char *logged(void)
{
	char *p = g_build_filename(tmpdir, "log", NULL), *text = NULL;
	g_assert_true(g_file_get_contents(p, &text, NULL, NULL));
	g_free(p);
	return text;
}

static void log_to_tmp(void)
{
	char *p = g_build_filename(tmpdir, "log", NULL);
	g_unlink(p);
	g_assert_cmpint(log_open(p, 0), ==, 0);
	log_set_quiet(1);
	log_set_level(IBSM_LOG_INFO);
	g_free(p);
}

static void test_yaml_loads(void)
{
	char *f = write_tmp("a.yaml", "# a comment\n---\nlmc: 2\nrouting_engine: \"updn,minhop\"\n"
					"reassign_lids: yes\nconnect_roots: TRUE\nsubnet_prefix: 0xfe80000000000001\n"
					"sweep_interval: 0\nlog_flags: 0x43\nroot_guid_file: /etc/roots\n"
					"accum_log_file: false\ndaemon: true\npid_file: /run/x.pid\nqos: yes\n"
					"partition_config_file: ~\nmax_op_vls: 0x4\n");
	struct sm_options o;
	GError *err = NULL;
	g_assert_cmpint(build(&o, &err, "-F", f, NULL), ==, 0);
	g_assert_no_error(err);
	g_assert_cmpuint(o.lmc, ==, 2);
	g_assert_cmpstr(o.routing_engine, ==, "updn,minhop");
	g_assert_cmpint(o.reassign_lids, ==, 1);
	g_assert_cmpint(o.connect_roots, ==, 1);
	g_assert_cmpuint(o.subnet_prefix, ==, 0xfe80000000000001ULL);
	g_assert_cmpint(o.sweep_interval, ==, 0);
	g_assert_cmpuint(o.debug_flags, ==, 0x43);
	g_assert_cmpint(o.dump_routes, ==, 1);
	g_assert_cmpstr(o.root_guid_file, ==, "/etc/roots");
	g_assert_cmpint(o.erase_log, ==, 1);
	g_assert_cmpint(o.daemon, ==, 1);
	g_assert_cmpstr(o.pid_file, ==, "/run/x.pid");
	g_assert_cmpint(o.qos, ==, 1);
	char *dflt = g_build_filename(etcdir, "ibsm", "partitions.conf", NULL);
	g_assert_cmpstr(o.partition_config_file, ==, dflt); /* ~ = default */
	g_free(dflt);
	g_assert_cmpuint(o.max_op_vls, ==, 4);
	g_assert_cmpstr(o.config_file, ==, f);
	g_assert_cmpint(o.sm_priority, ==, 0); /* untouched */
	options_free(&o);
	g_free(f);
}

static void test_flag_beats_file(void)
{
	char *f = write_tmp("b.yaml", "lmc: 2\nsm_priority: 5\nlog_file: /x/file.log\nguid: 0\n");
	struct sm_options o;
	GError *err = NULL;
	g_assert_cmpint(build(&o, &err, "-l", "1", "--config", f, "-f", "-", "-Q", "-P", "/p.conf",
			      "-Y", "/q.conf", "-B", "--pid_file", "/p.pid", NULL), ==, 0);
	g_assert_cmpuint(o.lmc, ==, 1);
	g_assert_cmpuint(o.sm_priority, ==, 5);
	g_assert_cmpstr(o.log_file, ==, "-");
	g_assert_cmpint(o.guid_given, ==, 0); /* guid 0 in a file: the first usable port */
	g_assert_cmpint(o.qos, ==, 1);
	g_assert_cmpstr(o.partition_config_file, ==, "/p.conf");
	g_assert_cmpstr(o.qos_policy_file, ==, "/q.conf");
	g_assert_cmpint(o.daemon, ==, 1);
	g_assert_cmpstr(o.pid_file, ==, "/p.pid");
	options_free(&o);
	/* -g 0 on the command line lists the ports */
	g_assert_cmpint(build(&o, &err, "-F", f, "-g", "0", "--max_op_vls", "3", NULL), ==, 0);
	g_assert_cmpint(o.guid_given, ==, 1);
	g_assert_cmpuint(o.max_op_vls, ==, 3);
	options_free(&o);
	g_free(f);
}

static void test_opensm_conf(void)
{
	log_to_tmp();
	char *f = write_tmp("opensm.conf", "#\n# DEVICE ATTRIBUTES OPTIONS\n#\nguid 0x0002c90000000001\n\n"
					   "m_key 0x0000000000000000\nmax_msg_fifo_timeout 10000\nlmc 1\nrouting_engine (null)\n"
					   "reassign_lids TRUE\nfsync_high_avail_files TRUE\nlog_flags 0x03\n"
					   "head_of_queue_lifetime 0x13\nmax_wire_smps 4\ndump_files_dir /var/tmp/\n");
	struct sm_options o;
	GError *err = NULL;
	g_assert_cmpint(build(&o, &err, "-F", f, NULL), ==, 0);
	g_assert_no_error(err);
	g_assert_cmpuint(o.guid, ==, 0x0002c90000000001ULL);
	g_assert_cmpint(o.guid_given, ==, 1);
	g_assert_cmpuint(o.lmc, ==, 1);
	g_assert_cmpstr(o.routing_engine, ==, "minhop");
	g_assert_cmpint(o.reassign_lids, ==, 1);
	g_assert_cmpuint(o.hoq_life, ==, 0x13);
	g_assert_cmpint(o.window, ==, 4);
	g_assert_cmpstr(o.tmp_dir, ==, "/var/tmp/");
	options_log_notes(&o, 0);
	options_free(&o);
	char *text = logged();
	/* a line for each key without effect, with its place and the reason */
	char *want = g_strdup_printf("INFO CFG-0003 %s:7:1: max_msg_fifo_timeout 10000 (OpenSM's default): no effect", f);
	g_assert_nonnull(strstr(text, want));
	g_free(want);
	want = g_strdup_printf("INFO CFG-0003 %s:11:1: fsync_high_avail_files TRUE (OpenSM's default): no effect in "
			       "ibsm: guid2lid is always written with fsync", f);
	g_assert_nonnull(strstr(text, want));
	g_free(want);
	want = g_strdup_printf("INFO LOC-0001 configuration file: %s (-F)", f);
	g_assert_nonnull(strstr(text, want));
	g_free(want);
	g_free(text);

	/* a key neither ibsm nor OpenSM 3.3.23 has: a warning naming file:line:col, and the start goes on */
	log_to_tmp();
	char *bad = write_tmp("bad.conf", "# x\nlmc 1\n  no_such_key 5\nsa_key 0x2\nm_key_lease_perod 3\n"
				 "max_msg_fifo_timeout 5\n");
	g_assert_cmpint(build(&o, &err, "-F", bad, NULL), ==, 0);
	g_assert_no_error(err);
	g_assert_cmpuint(o.lmc, ==, 1);
	g_assert_cmphex(o.sa_key, ==, 0x2); /* sa_key: a key of ibsm's (the SA checks it) */
	options_log_notes(&o, 0);
	options_free(&o);
	text = logged();
	want = g_strdup_printf("WARN CFG-0007 %s:3:3: unknown key 'no_such_key' ignored", bad);
	g_assert_nonnull(strstr(text, want));
	g_free(want);
	want = g_strdup_printf("unknown key 'm_key_lease_perod' ignored (not ibsm's, not OpenSM 3.3.23's, and no "
			       "routing engine found declares it); did you mean 'm_key_lease_period'?");
	g_assert_nonnull(strstr(text, want));
	g_free(want);
	/* sa_key is enforced: no ERROR line says otherwise */
	g_assert_null(strstr(text, "CFG-0006"));
	/* not OpenSM's default: a warning */
	want = g_strdup_printf("WARN CFG-0005 %s:6:1: max_msg_fifo_timeout 5: no effect in ibsm: ibsm has no message FIFO", bad);
	g_assert_nonnull(strstr(text, want));
	g_free(want);
	g_free(text);
	/* an engine's declared key is taken, kept for the engine, and not called OpenSM's */
	char *eng = write_tmp("eng.conf", "lmc 1\ndemo_threads 4\n");
	g_assert_cmpint(build(&o, &err, "-F", eng, NULL), ==, 0);
	g_assert_no_error(err);
	const struct config_extra *x = g_hash_table_lookup(o.extra, "demo_threads");
	g_assert_nonnull(x);
	g_assert_cmpstr(x->value, ==, "4");
	g_assert_true(g_str_has_suffix(x->where, "eng.conf:2:1"));
	options_free(&o);
	g_free(eng);
	/* a bad value names the value's column */
	char *badv = write_tmp("badv.conf", "lmc   9\n");
	g_assert_cmpint(build(&o, &err, "-F", badv, NULL), ==, -1);
	g_assert_error(err, CONFIG_ERROR, CONFIG_ERROR_BAD_VALUE);
	want = g_strdup_printf("%s:1:7: lmc:", badv);
	g_assert_true(g_str_has_prefix(err->message, want));
	g_clear_error(&err);
	g_free(want);
	options_free(&o);
	log_close();
	g_free(f);
	g_free(bad);
	g_free(badv);
}

static void test_yaml_errors(void)
{
	log_to_tmp();
	struct sm_options o;
	GError *err = NULL;
	struct {
		const char *text, *where;
		int code;
	} cases[] = {
		{ "lmc: 1\nsm_priority:    99\n", ":2:17: sm_priority: '99' is not a number in 0-15", CONFIG_ERROR_BAD_VALUE },
		{ "reassign_lids: maybe\n", ":1:16: reassign_lids: 'maybe' is not a boolean", CONFIG_ERROR_BAD_VALUE },
		{ "lmc: -1\n", ":1:6: lmc:", CONFIG_ERROR_BAD_VALUE },
		{ "guid: 12zz\n", ":1:7: guid:", CONFIG_ERROR_BAD_VALUE },
		{ "lmc: [1, 2]\n", ":1:6: lmc: the value must be a single scalar", CONFIG_ERROR_BAD_VALUE },
		{ "lmc: 1\nsm_priority: 2: 3\n", ":2:15: mapping values are not allowed", CONFIG_ERROR_SYNTAX },
		{ "lmc: 1\nsm_priority: \"abc\n", ":3:1: found unexpected end of stream", CONFIG_ERROR_SYNTAX },
		{ "- lmc\n", ":1:1: expected a mapping", CONFIG_ERROR_SYNTAX },
	};
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		char *f = write_tmp("e.yaml", cases[i].text);
		g_assert_cmpint(build(&o, &err, "-F", f, NULL), ==, -1);
		g_assert_nonnull(err);
		if (!strstr(err->message, cases[i].where) || !g_str_has_prefix(err->message, f))
			g_error("case %zu: '%s' does not say '%s'", i, err->message, cases[i].where);
		g_assert_error(err, CONFIG_ERROR, cases[i].code);
		g_clear_error(&err);
		/* the caller's struct is left valid (defaults) */
		g_assert_cmpstr(o.routing_engine, ==, "minhop");
		options_free(&o);
		g_free(f);
	}
	char *text = logged();
	g_assert_nonnull(strstr(text, "ERR  CFG-0001"));
	g_assert_nonnull(strstr(text, "sm_priority: '99' is not a number in 0-15"));
	g_free(text);
	/* a missing -F file is an error; a bad flag too */
	g_assert_cmpint(build(&o, &err, "-F", "/nonexistent/ibsm.yaml", NULL), ==, -1);
	g_assert_nonnull(strstr(err->message, "/nonexistent/ibsm.yaml"));
	g_clear_error(&err);
	options_free(&o);
	g_assert_cmpint(build(&o, &err, "-p", "16", NULL), ==, -1);
	g_assert_nonnull(strstr(err->message, "-p 16"));
	g_clear_error(&err);
	options_free(&o);
	log_close();
}

static void test_template_round_trip(void)
{
	char *t = g_build_filename(tmpdir, "template.yaml", NULL);
	struct sm_options o, d;
	GError *err = NULL;
	char *empty = write_tmp("empty.yaml", "# nothing\n");
	g_assert_cmpint(build(&o, &err, "-F", empty, "-c", t, NULL), ==, 0);
	g_assert_cmpstr(o.create_config, ==, t);
	options_free(&o);
	char *text = NULL;
	g_assert_true(g_file_get_contents(t, &text, NULL, NULL));
	size_t n;
	const struct config_key *ks = config_keys(&n);
	for (size_t i = 0; i < n; i++) { /* every key, with its doc line, commented out at its default */
		char *line = g_strdup_printf("\n# %s: ", ks[i].key);
		char *doc = g_strdup_printf("# %s", ks[i].doc);
		if (!strstr(text, line) || !strstr(text, doc))
			g_error("template lacks key %s or its doc", ks[i].key);
		g_free(line);
		g_free(doc);
	}
	/* the keys the engines declare, commented out at their default, with their help */
	g_assert_nonnull(strstr(text, "# ---- routing engine demo ----\n\n# Threads of the demo engine\n"
				      "# demo_threads: 2\n"));
	/* so the template of the defaults sets no key (it does not hide an opensm.conf) */
	GHashTable *set = config_load_pairs(t, &err);
	g_assert_no_error(err);
	g_assert_cmpuint(g_hash_table_size(set), ==, 0);
	g_hash_table_destroy(set);
	g_free(text);
	g_assert_cmpint(build(&o, &err, "-F", t, NULL), ==, 0);
	options_defaults(&d);
	for (size_t i = 0; i < n; i++) {
		char *a = config_format(&o, &ks[i]), *b = config_format(&d, &ks[i]);
		g_assert_cmpstr(a, ==, b);
		g_free(a);
		g_free(b);
	}
	g_assert_cmpint(o.cache_dir_explicit, ==, d.cache_dir_explicit);
	g_assert_cmpint(o.guid_given, ==, d.guid_given);
	options_free(&o);
	/* a template of changed settings reads back as those settings */
	g_assert_cmpint(build(&o, &err, "-F", empty, "-l", "3", "-R", "a b:c", "-a", "#x", "-c", t, NULL), ==, 0);
	options_free(&o);
	g_assert_cmpint(build(&o, &err, "-F", t, NULL), ==, 0);
	g_assert_cmpuint(o.lmc, ==, 3);
	g_assert_cmpstr(o.routing_engine, ==, "a b:c");
	g_assert_cmpstr(o.root_guid_file, ==, "#x");
	options_free(&o);
	/* an engine key set in the file is written uncommented and reads back */
	char *eng = write_tmp("eng.yaml", "demo_threads: 7\n");
	g_assert_cmpint(build(&o, &err, "-F", eng, "-c", t, NULL), ==, 0);
	options_free(&o);
	g_assert_cmpint(build(&o, &err, "-F", t, NULL), ==, 0);
	g_assert_cmpstr(((struct config_extra *)g_hash_table_lookup(o.extra, "demo_threads"))->value, ==, "7");
	options_free(&o);
	g_free(eng);
	options_free(&d);
	g_free(t);
	g_free(empty);
}

/* a note with CODE whose text contains WHAT, at LEVEL */
static int has_note(const struct sm_options *o, int level, const char *code, const char *what)
{
	for (guint i = 0; o->notes && i < o->notes->len; i++) {
		const struct config_note *n = g_ptr_array_index(o->notes, i);
		if (n->level == level && !strcmp(n->code, code) && strstr(n->text, what))
			return 1;
	}
	return 0;
}

/* OpenSM's flags mean what they mean in OpenSM, or are named in a warning */
static void test_opensm_flags(void)
{
	struct sm_options o;
	GError *err = NULL;
	g_assert_cmpint(build(&o, &err, "-D", "0x1", NULL), ==, 0);
	g_assert_cmpuint(o.debug_flags, ==, 0x1);
	options_free(&o);
	g_assert_cmpint(build(&o, &err, "--D", "0x1", "-v", "-v", NULL), ==, 0);
	g_assert_cmpuint(o.debug_flags, ==, 0x7);
	options_free(&o);
	g_assert_cmpint(build(&o, &err, "-V", NULL), ==, 0);
	g_assert_cmpuint(o.debug_flags, ==, 0xff);
	g_assert_cmpint(o.dump_routes, ==, 1);
	options_free(&o);
	g_assert_cmpint(build(&o, &err, "--smkey", "0x55", "--subnet_prefix", "0xfe80000000000002", "-Z", "in",
			      "--maxsmps", "0", "-L", "5", "--log_prefix", "sm1", "-I", NULL), ==, 0);
	g_assert_cmpuint(o.sm_key, ==, 0x55);
	g_assert_cmpuint(o.subnet_prefix, ==, 0xfe80000000000002ULL);
	g_assert_cmpint(options_part_enforce(&o), ==, PART_ENFORCE_IN);
	g_assert_cmpint(o.window, ==, DEFAULT_SMP_WINDOW);
	g_assert_cmpint(o.log_max_mb, ==, 5);
	g_assert_cmpstr(o.log_prefix, ==, "sm1");
	g_assert_cmpint(o.sm_inactive, ==, 1);
	options_free(&o);
	g_assert_cmpint(build(&o, &err, "-Z", "out", "-N", NULL), ==, 0);
	g_assert_cmpint(options_part_enforce(&o), ==, 0);
	options_free(&o);
	g_assert_cmpint(build(&o, &err, NULL), ==, 0);
	g_assert_cmpint(options_part_enforce(&o), ==, PART_ENFORCE_IN | PART_ENFORCE_OUT);
	options_free(&o);
	g_assert_cmpint(build(&o, &err, "-Z", "sideways", NULL), ==, -1);
	g_assert_nonnull(strstr(err->message, "-Z sideways: 'sideways' is not both, in, out or off"));
	g_clear_error(&err);
	options_free(&o);
	/* flags without effect: a warning each, naming the flag */
	g_assert_cmpint(build(&o, &err, "-y", "-x", "-d", "2", "-d", "10", "-q", "local",
			      "--port-shifting", NULL), ==, 0);
	/* -y is OpenSM's exit_on_fatal FALSE, a key of ibsm's now: it takes effect, no warning */
	g_assert_false(has_note(&o, IBSM_LOG_WARN, "CFG-0005", "command line: -y"));
	g_assert_cmpint(o.exit_on_fatal, ==, 0);
	/* -x is OpenSM's honor_guid2lid_file, a key of ibsm's now: it takes effect, no warning */
	g_assert_false(has_note(&o, IBSM_LOG_WARN, "CFG-0005", "command line: -x"));
	g_assert_cmpint(o.honor_guid2lid_file, ==, 1);
	g_assert_true(has_note(&o, IBSM_LOG_WARN, "CFG-0005", "command line: -d 2: sets force_log_flush: no effect"));
	g_assert_true(has_note(&o, IBSM_LOG_WARN, "CLI-0001", "-d 10 (OpenSM's testability mode): no effect"));
	g_assert_false(has_note(&o, IBSM_LOG_WARN, "CFG-0005", "command line: -q local")); /* the console */
	g_assert_cmpstr(o.console, ==, "local");
	/* --port-shifting sets an engine's key (minhop, dor): with no engine found, it is unknown */
	g_assert_false(has_note(&o, IBSM_LOG_WARN, "CFG-0005", "--port-shifting: sets port_shifting"));
	g_assert_true(has_note(&o, IBSM_LOG_WARN, "CFG-0007", "port_shifting"));
	options_free(&o);
	/* the console: -q and -C take effect; a mode ibsm does not have is an error */
	g_assert_cmpint(build(&o, &err, "-q", "loopback", "-C", "10001", NULL), ==, 0);
	g_assert_cmpstr(o.console, ==, "loopback");
	g_assert_cmpint(o.console_port, ==, 10001);
	options_free(&o);
	g_assert_cmpint(build(&o, &err, NULL), ==, 0);
	g_assert_cmpstr(o.console, ==, "socket");
	g_assert_cmpstr(o.console_socket, ==, "/run/ibsm/console.sock");
	options_free(&o);
	g_assert_cmpint(build(&o, &err, "-q", "everywhere", NULL), ==, -1);
	g_assert_nonnull(strstr(err->message, "'everywhere' is not off, local, loopback or socket"));
	g_clear_error(&err);
	options_free(&o);
	/* an unknown -d: OpenSM warns and runs */
	g_assert_cmpint(build(&o, &err, "-d", "7", NULL), ==, 0);
	g_assert_true(has_note(&o, IBSM_LOG_WARN, "CLI-0002", "-d 7: OpenSM's debug options are 0, 1, 2, 3 and 10"));
	options_free(&o);
	/* getopt_long_only's forms: a value attached to a short option, a long option with one dash */
	g_assert_cmpint(build(&o, &err, "-d0", "-D0x7", "-Zout", "-p15", "-once", "-smkey", "5", "-l1", NULL), ==, 0);
	g_assert_cmpint(o.ignore_other_sm, ==, 1);
	g_assert_cmpuint(o.debug_flags, ==, 0x7);
	g_assert_cmpint(options_part_enforce(&o), ==, PART_ENFORCE_OUT);
	g_assert_cmpuint(o.sm_priority, ==, 15);
	g_assert_cmpint(o.once, ==, 1);
	g_assert_cmpuint(o.lmc, ==, 1);
	g_assert_cmpuint(o.sm_key, ==, 5);
	options_free(&o);
	/* a value is never taken for an option */
	g_assert_cmpint(build(&o, &err, "-f", "-once", "--log_prefix", "-p15", NULL), ==, 0);
	g_assert_cmpstr(o.log_file, ==, "-once");
	g_assert_cmpstr(o.log_prefix, ==, "-p15");
	g_assert_cmpint(o.once, ==, 0);
	options_free(&o);
	/* GUID, SM_Key and subnet prefix are hex on the command line, "0x" or not, as OpenSM reads them */
	g_assert_cmpint(build(&o, &err, "-g", "0002c9030001abcd", "-k", "10", "--subnet_prefix", "fe80000000000010",
			      NULL), ==, 0);
	g_assert_cmpuint(o.guid, ==, 0x0002c9030001abcdULL);
	g_assert_cmpuint(o.sm_key, ==, 0x10);
	g_assert_cmpuint(o.subnet_prefix, ==, 0xfe80000000000010ULL);
	options_free(&o);
	g_assert_cmpint(build(&o, &err, "--smkey", "0x20", NULL), ==, 0);
	g_assert_cmpuint(o.sm_key, ==, 0x20);
	options_free(&o);
	/* a dry run writes dumps only where asked */
	g_assert_cmpint(build(&o, &err, "--fabric", "/f.net", NULL), ==, 0);
	g_assert_null(o.tmp_dir);
	g_assert_true(has_note(&o, IBSM_LOG_INFO, "CFG-0011", "no dump files written"));
	options_free(&o);
	char *f = write_tmp("d.conf", "dump_files_dir /var/log/\ncache_dir /var/cache/ibsm\n");
	g_assert_cmpint(build(&o, &err, "-F", f, "--fabric", "/f.net", NULL), ==, 0);
	g_assert_null(o.tmp_dir); /* the live SM's directory, from its file: not asked */
	g_assert_cmpint(o.cache_dir_explicit, ==, 0); /* nor its guid2lid (core/ops/main.c) */
	options_free(&o);
	g_assert_cmpint(build(&o, &err, "-F", f, "--fabric", "/f.net", "--cache-dir", "/c", NULL), ==, 0);
	g_assert_cmpint(o.cache_dir_explicit, ==, 1);
	options_free(&o);
	g_assert_cmpint(build(&o, &err, "-F", f, "--fabric", "/f.net", "--dump_files_dir", "/d", NULL), ==, 0);
	g_assert_cmpstr(o.tmp_dir, ==, "/d");
	options_free(&o);
	g_setenv("OSM_TMP_DIR", "/e", TRUE);
	g_assert_cmpint(build(&o, &err, "--fabric", "/f.net", NULL), ==, 0);
	g_assert_cmpstr(o.tmp_dir, ==, "/e");
	options_free(&o);
	g_unsetenv("OSM_TMP_DIR");
	g_assert_cmpint(build(&o, &err, "-F", f, NULL), ==, 0);
	g_assert_cmpstr(o.tmp_dir, ==, "/var/log/"); /* online: the file's */
	options_free(&o);
	g_free(f);
}

/* with nothing under SYSCONFDIR/ibsm, OpenSM's files are read, and the log says so */
static void test_locations(void)
{
	struct sm_options o;
	GError *err = NULL;
	char *osm = g_build_filename(etcdir, "opensm", NULL), *own = g_build_filename(etcdir, "ibsm", NULL);
	g_assert_cmpint(g_mkdir_with_parents(osm, 0755), ==, 0);
	char *conf = g_build_filename(osm, "opensm.conf", NULL), *parts = g_build_filename(osm, "partitions.conf", NULL);
	char *qos = g_build_filename(osm, "qos-policy.conf", NULL);
	g_assert_true(g_file_set_contents(conf, "lmc 2\nqos TRUE\n", -1, NULL));
	g_assert_true(g_file_set_contents(parts, "Default=0x7fff, ipoib : ALL=full ;\n", -1, NULL));
	g_assert_true(g_file_set_contents(qos, "\n", -1, NULL));
	g_assert_cmpint(build(&o, &err, NULL), ==, 0);
	g_assert_cmpuint(o.lmc, ==, 2);
	g_assert_cmpstr(o.config_file, ==, conf);
	g_assert_cmpstr(o.partition_config_file, ==, parts);
	g_assert_cmpstr(o.qos_policy_file, ==, qos);
	g_assert_true(has_note(&o, IBSM_LOG_INFO, "LOC-0001", "(OpenSM's;"));
	g_assert_true(has_note(&o, IBSM_LOG_INFO, "LOC-0002", "partition_config_file: "));
	options_free(&o);
	/* a file named on the command line is the one read, even if missing */
	g_assert_cmpint(build(&o, &err, "-P", "/nonexistent.conf", NULL), ==, 0);
	g_assert_cmpstr(o.partition_config_file, ==, "/nonexistent.conf");
	options_free(&o);
	/* ibsm's own files win */
	g_assert_cmpint(g_mkdir_with_parents(own, 0755), ==, 0);
	char *yaml = g_build_filename(own, "ibsm.yaml", NULL), *ownp = g_build_filename(own, "partitions.conf", NULL);
	g_assert_true(g_file_set_contents(yaml, "lmc: 1\n", -1, NULL));
	g_assert_true(g_file_set_contents(ownp, "Default=0x7fff : ALL=full ;\n", -1, NULL));
	g_assert_cmpint(build(&o, &err, NULL), ==, 0);
	g_assert_cmpuint(o.lmc, ==, 1);
	g_assert_cmpstr(o.config_file, ==, yaml);
	g_assert_cmpstr(o.partition_config_file, ==, ownp);
	g_assert_true(has_note(&o, IBSM_LOG_WARN, "LOC-0003", "opensm.conf is NOT read"));
	options_free(&o);
	/* an ibsm.yaml that sets no key (the packaged template: comments only) leaves it to opensm.conf */
	g_assert_true(g_file_set_contents(yaml, "# lmc: 0\n\n# sm_priority: 0\n", -1, NULL));
	g_assert_cmpint(build(&o, &err, NULL), ==, 0);
	g_assert_cmpuint(o.lmc, ==, 2);
	g_assert_cmpstr(o.config_file, ==, conf);
	g_assert_true(has_note(&o, IBSM_LOG_INFO, "LOC-0001", "sets no key: ignored"));
	g_assert_false(has_note(&o, IBSM_LOG_WARN, "LOC-0003", ""));
	options_free(&o);
	/* ... and is read (the defaults) when there is no opensm.conf */
	g_assert_cmpint(g_unlink(conf), ==, 0);
	g_assert_cmpint(build(&o, &err, NULL), ==, 0);
	g_assert_cmpstr(o.config_file, ==, yaml);
	g_assert_true(has_note(&o, IBSM_LOG_INFO, "LOC-0001", "sets no key: the defaults"));
	options_free(&o);
	g_assert_true(g_file_set_contents(conf, "lmc 2\nqos TRUE\n", -1, NULL));
	g_assert_cmpint(g_unlink(yaml), ==, 0);
	g_assert_cmpint(g_unlink(ownp), ==, 0);
	g_assert_cmpint(g_unlink(conf), ==, 0);
	g_assert_cmpint(g_unlink(parts), ==, 0);
	g_assert_cmpint(g_unlink(qos), ==, 0);
	g_assert_cmpint(build(&o, &err, NULL), ==, 0);
	g_assert_null(o.config_file);
	g_assert_true(has_note(&o, IBSM_LOG_INFO, "LOC-0001", "no configuration file"));
	options_free(&o);
	g_free(yaml);
	g_free(ownp);
	g_free(conf);
	g_free(parts);
	g_free(qos);
	g_free(osm);
	g_free(own);
}

/* doc/opensm-dropin.md lists every OpenSM key without effect, with its reason, and no other */
static void test_dropin_doc(void)
{
	char *path = g_build_filename(TEST_SRCDIR, "doc", "opensm-dropin.md", NULL), *text = NULL;
	g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
	unsigned n;
	const struct opensm_key *ks = opensm_keys(&n);
	g_assert_cmpuint(n, >, 10); /* 3.3.23 keys ibsm has no setting for: fewer as features come (issue 30 took many) */
	for (unsigned i = 0; i < n; i++) {
		char *row = g_strdup_printf("| `%s` |", ks[i].key);
		char *line = strstr(text, row);
		if (!line)
			g_error("doc/opensm-dropin.md has no row for %s", ks[i].key);
		char *eol = strchr(line, '\n');
		char *reason_start = g_strndup(ks[i].reason, 30);
		if (!g_strstr_len(line, eol ? eol - line : -1, reason_start))
			g_error("doc/opensm-dropin.md: the row of %s does not give its reason", ks[i].key);
		g_free(reason_start);
		g_free(row);
		g_assert_null(config_key_find(ks[i].key)); /* not both ibsm's and without effect */
	}
	unsigned rows = 0; /* the table's rows: up to its end (a blank line; other tables follow) */
	const char *start = strstr(text, "| key | OpenSM's default |");
	const char *end = start ? strstr(start, "\n\n") : NULL;
	for (const char *p = start; p && (p = strstr(p, "\n| `")) && (!end || p < end); p++)
		rows++;
	g_assert_cmpuint(rows, ==, n);
	g_free(text);
	g_free(path);
}

static void test_reentrant(void)
{
	char *f = write_tmp("r.yaml", "lmc: 2\n");
	char *argv[] = { (char *)"ibsm", (char *)"-F", f, (char *)"-p", (char *)"3", (char *)"-v", NULL };
	char *copy[G_N_ELEMENTS(argv)];
	memcpy(copy, argv, sizeof(argv));
	struct sm_options cur, next;
	GError *err = NULL;
	int sv;
	g_assert_cmpint(options_build_err(6, argv, &cur, &sv, test_declared, NULL, &err), ==, 0);
	g_assert_cmpmem(argv, sizeof(argv), copy, sizeof(copy)); /* argv untouched for SIGHUP */
	g_assert_cmpuint(cur.lmc, ==, 2);
	g_assert_cmpuint(cur.debug_flags, ==, 0x7); /* OpenSM's -v: 0x3 -> 0x7 */
	/* SIGHUP: a changed file is picked up */
	g_assert_true(g_file_set_contents(f, "lmc: 1\n", -1, NULL));
	g_assert_cmpint(options_build_err(6, argv, &next, &sv, test_declared, NULL, &err), ==, 0);
	g_assert_cmpuint(next.lmc, ==, 1);
	g_assert_cmpuint(next.sm_priority, ==, 3);
	g_assert_cmpuint(next.debug_flags, ==, 0x7); /* -v counted once, not twice */
	options_free(&next);
	/* SIGHUP with a broken file: -1, the running options untouched */
	g_assert_true(g_file_set_contents(f, "lmc: 1\nlmc 2 : : x\n", -1, NULL));
	log_set_quiet(1);
	g_assert_cmpint(options_build_err(6, argv, &next, &sv, test_declared, NULL, &err), ==, -1);
	log_set_quiet(0);
	g_assert_nonnull(err);
	g_assert_true(g_str_has_prefix(err->message, f));
	g_clear_error(&err);
	options_free(&next);
	g_assert_cmpuint(cur.lmc, ==, 2);
	g_assert_cmpuint(cur.sm_priority, ==, 3);
	options_free(&cur);
	g_free(f);
}

/* The engines are opened for the keys they declare only when some key is not the core's (or a
 * template is written): a start with none opens no plugin it was not asked to run. */
static void test_declared_lazily(void)
{
	struct sm_options o;
	GError *err = NULL;
	char *plain = write_tmp("plain.yaml", "lmc: 1\nsm_priority: 3\n");
	declared_calls = 0;
	g_assert_cmpint(build(&o, &err, "-F", plain, NULL), ==, 0);
	g_assert_cmpuint(o.lmc, ==, 1);
	g_assert_cmpint(declared_calls, ==, 0);
	options_free(&o);
	char *engine = write_tmp("engine.yaml", "lmc: 1\ndemo_threads: 3\n");
	g_assert_cmpint(build(&o, &err, "-F", engine, NULL), ==, 0);
	g_assert_cmpint(declared_calls, ==, 1);
	g_assert_false(has_note(&o, IBSM_LOG_WARN, "CFG-0007", "demo_threads"));
	options_free(&o);
	char *slip = write_tmp("slip.yaml", "demo_thread: 3\n");
	g_assert_cmpint(build(&o, &err, "-F", slip, NULL), ==, 0);
	g_assert_cmpint(declared_calls, ==, 2);
	g_assert_true(has_note(&o, IBSM_LOG_WARN, "CFG-0007", "did you mean 'demo_threads'"));
	options_free(&o);
	g_free(plain);
	g_free(engine);
	g_free(slip);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	tmpdir = g_dir_make_tmp("ibsm-config-XXXXXX", NULL);
	g_assert_nonnull(tmpdir);
	etcdir = g_build_filename(tmpdir, "etc", NULL);
	g_setenv("IBSM_SYSCONFDIR", etcdir, TRUE);
	g_unsetenv("OSM_TMP_DIR");
	g_test_add_func("/config/opensm_flags", test_opensm_flags);
	g_test_add_func("/config/declared_lazily", test_declared_lazily);
	g_test_add_func("/config/locations", test_locations);
	g_test_add_func("/config/dropin_doc", test_dropin_doc);
	g_test_add_func("/config/yaml_loads", test_yaml_loads);
	g_test_add_func("/config/flag_beats_file", test_flag_beats_file);
	g_test_add_func("/config/opensm_conf", test_opensm_conf);
	g_test_add_func("/config/yaml_errors", test_yaml_errors);
	g_test_add_func("/config/template_round_trip", test_template_round_trip);
	g_test_add_func("/config/reentrant", test_reentrant);
	int rc = g_test_run();
	char *cmd[] = { (char *)"rm", (char *)"-rf", tmpdir, NULL };
	g_spawn_sync(NULL, cmd, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
	g_free(tmpdir);
	return rc;
}
