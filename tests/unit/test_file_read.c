/* test_file_read.c - every file ibsm reads refuses what is not a regular file of sensible size,
 * without blocking: /dev/zero, a FIFO, a directory and a sparse file just over the cap, given
 * to -F (config_load), -P (policies_load_partitions), -Y (policies_load_qos), --fabric
 * (netfile_load) and a fabric file's include, guid2lid (lid_assign), and every file a plugin
 * reads, through the built plugins and the core's read_file service (ABI 1.3): updn's
 * root_guid_file, minhop's and dor's port_prof_ignore_file, ftree's root_guid_file,
 * cn_guid_file and io_guid_file, torus-2QoS's torus_config, the chain orchestrator's
 * pgrp_policy_file, topo_policy_file and rch_policy_file and a step's config: file. A
 * plugin's refusal names the key and the file. A symlink to a regular file is read. Each case
 * runs in a subprocess with a time bound, so a reader that blocks fails instead of hanging.
 * Then the core's helpers themselves (core/base/file_read.c) and the service, also as lent by a
 * core older than ABI 1.3 (refused, not crashed). */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib.h>
#include <glib/gstdio.h>
#include "base/file_read.h"
#include "base/log.h"
#include "config/config_file.h"
#include "config/options.h"
#include "fabric/lid.h"
#include "fabric/netfile.h"
#include "routing/fallback_list.h"
#include "routing/services.h"
#include <ibsm/orchestrator.h>
#include "sm/policies.h"
#include "fabric_fixture.h"

#define BOUND_S 20      /* a case that takes longer is blocked (it takes well under a second) */

enum reader { R_CONFIG, R_PARTITIONS, R_QOS, R_FABRIC, R_INCLUDE, R_GUID2LID, R_ROOTS, R_IGNORE,
	      R_DOR_IGNORE, R_FTREE_ROOTS, R_FTREE_CN, R_FTREE_IO, R_TORUS, R_PGRP, R_TOPO, R_RCH,
	      R_STEP_CONFIG, R_N };
enum kind { K_DEVZERO, K_FIFO, K_DIR, K_BIG, K_SYMLINK, K_N };

static const char *reader_name[R_N] = { "config", "partitions", "qos_policy", "fabric", "include",
					"guid2lid", "updn_roots", "minhop_ignore", "dor_ignore",
					"ftree_roots", "ftree_cn", "ftree_io", "torus_config",
					"pgrp_policy", "topo_policy", "rch_policy", "step_config" };
/* The key a plugin's refusal must name (NULL: a core reader, which names the file only). */
static const char *reader_key[R_N] = {
	[R_ROOTS] = "root_guid_file", [R_IGNORE] = "port_prof_ignore_file",
	[R_DOR_IGNORE] = "port_prof_ignore_file", [R_FTREE_ROOTS] = "root_guid_file",
	[R_FTREE_CN] = "cn_guid_file", [R_FTREE_IO] = "io_guid_file", [R_TORUS] = "torus_config",
	[R_PGRP] = "pgrp_policy_file", [R_TOPO] = "topo_policy_file", [R_RCH] = "rch_policy_file",
};
static const char *kind_name[K_N] = { "devzero", "fifo", "dir", "too_big", "symlink" };

struct tcase {
	enum reader r;
	enum kind k;
};

static char *tmp;

#define RCH_MINHOP "unicast-step\nid: 1\nengine: minhop\nend-unicast-step\n"

static char *tpath(const char *name)
{
	return g_build_filename(tmp, name, NULL);
}

static void put(const char *name, const char *text)
{
	char *p = tpath(name);
	g_assert_true(g_file_set_contents(p, text, -1, NULL));
	g_free(p);
}

static void sparse(const char *name, off_t size)
{
	char *p = tpath(name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(ftruncate(fd, size), ==, 0);
	close(fd);
	g_free(p);
}

static void link_to(const char *target, const char *name)
{
	char *p = tpath(name);
	g_assert_cmpint(symlink(target, p), ==, 0);
	g_free(p);
}

static int is_fabric(enum reader r)
{
	return r == R_FABRIC || r == R_INCLUDE;
}

/* The special file of kind k for reader r (g_free). */
static char *target(enum reader r, enum kind k)
{
	switch (k) {
	case K_DEVZERO: return g_strdup("/dev/zero");
	case K_FIFO:    return tpath("fifo");
	case K_DIR:     return tpath("dir");
	case K_BIG:     return tpath(is_fabric(r) ? "big64" : "big16");
	default: {
		char *n = g_strdup_printf("link-%s", reader_name[r]), *p = tpath(n);
		g_free(n);
		return p;
	}
	}
}

/* What the message must say about kind k. */
static const char *kind_word(enum reader r, enum kind k)
{
	switch (k) {
	case K_DEVZERO: return "character device";
	case K_FIFO:    return "FIFO";
	case K_DIR:     return "directory";
	case K_BIG:     return is_fabric(r) ? "larger than 64 MiB" : "larger than 16 MiB";
	default:        return NULL;
	}
}

static void setup_tree(void)
{
	GError *err = NULL;
	tmp = g_dir_make_tmp("ibsm-file-XXXXXX", &err);
	g_assert_no_error(err);
	char *p = tpath("fifo");
	g_assert_cmpint(mkfifo(p, 0600), ==, 0);
	g_free(p);
	p = tpath("dir");
	g_assert_cmpint(g_mkdir(p, 0755), ==, 0);
	g_free(p);
	sparse("big16", ((off_t)16 << 20) + 1);
	sparse("big64", ((off_t)64 << 20) + 1);
	/* what each reader takes, behind a symlink */
	put("good-config", "sweep_interval: 7\n");
	put("good-partitions", "Default=0x7fff : ALL=full ;\n");
	put("good-guid2lid", "0x0002c90000000001 0x0010 0x0010\n");
	put("good-roots", "0x0002c90100000001\n");
	put("good-ignore", "0x0002c90000000101\n");
	put("good-qos_policy", "qos-ulps\n  default : 0\nend-qos-ulps\n");
	put("good-torus_config", "torus 2 2 1\n");
	put("good-pgrp_policy", "port-group\nname: hosts\nnode-name: ^h\nend-port-group\n");
	put("good-topo_policy", "topology\nid: 1\nsw-grp: ALL_SWITCHES\nhca-grp: ALL_CAS\n"
	    "end-topology\n");
	put("good-rch_policy", RCH_MINHOP);
	put("good-step_config", "minhop_threads: 1\n");
	char *tiny = g_build_filename(TEST_SRCDIR, "tests", "fabrics", "tiny.net", NULL);
	link_to(tiny, "link-fabric");
	link_to(tiny, "link-include");
	g_free(tiny);
	static const char *const plain[] = { "config", "partitions", "guid2lid", "roots", "ignore",
					     "ignore", "roots", "ignore", "ignore", "qos_policy",
					     "torus_config", "pgrp_policy", "topo_policy",
					     "rch_policy", "step_config" };
	static const char *const links[] = { "link-config", "link-partitions", "link-guid2lid",
					     "link-updn_roots", "link-minhop_ignore",
					     "link-dor_ignore", "link-ftree_roots", "link-ftree_cn",
					     "link-ftree_io", "link-qos_policy", "link-torus_config",
					     "link-pgrp_policy", "link-topo_policy",
					     "link-rch_policy", "link-step_config" };
	G_STATIC_ASSERT(G_N_ELEMENTS(plain) == G_N_ELEMENTS(links));
	for (unsigned i = 0; i < G_N_ELEMENTS(plain); i++) {
		char *good = g_strdup_printf("%s/good-%s", tmp, plain[i]);
		link_to(good, links[i]);
		g_free(good);
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

static char *log_start(void)
{
	char *p = tpath("ibsm.log");
	g_unlink(p);
	g_assert_cmpint(log_open(p, 0), ==, 0);
	log_set_quiet(1);
	log_set_level(IBSM_LOG_INFO);
	return p;
}

static char *log_text(char *p)
{
	char *text = NULL;
	log_close();
	g_assert_true(g_file_get_contents(p, &text, NULL, NULL));
	g_free(p);
	return text;
}

/* ---- one reader each: 0 when it took the file, else -1 and *msg what it said ---- */

static int read_config(const char *path, char **msg)
{
	struct sm_options o;
	GError *err = NULL;
	options_defaults(&o);
	int rc = config_load(path, &o, &err);
	if (rc == 0)
		g_assert_cmpint(o.sweep_interval, ==, 7);
	*msg = err ? g_strdup(err->message) : NULL;
	g_clear_error(&err);
	options_free(&o);
	return rc;
}

static int read_partitions(const char *path, char **msg)
{
	struct sm_options o;
	struct sm sm = { .opt = &o };
	options_defaults(&o);
	g_free(o.partition_config_file);
	o.partition_config_file = g_strdup(path);
	char *lp = log_start();
	int rc = policies_load_partitions(&sm);
	*msg = log_text(lp);
	g_assert_nonnull(sm.part_policy);       /* a policy is in force either way */
	if (rc == 0)
		g_assert_cmpstr(sm.part_policy->source, ==, path);
	policies_free(&sm);
	options_free(&o);
	return rc;
}

static int read_qos(const char *path, char **msg)
{
	struct sm_options o;
	struct sm sm = { .opt = &o };
	options_defaults(&o);
	o.qos = 1;
	g_free(o.qos_policy_file);
	o.qos_policy_file = g_strdup(path);
	char *lp = log_start();
	g_assert_cmpint(policies_load_partitions(&sm), ==, 0);
	int rc = policies_load_qos(&sm);
	*msg = log_text(lp);
	if (rc == 0)
		g_assert_nonnull(sm.qos_policy);
	policies_free(&sm);
	options_free(&o);
	return rc < 0 || strstr(*msg, "POL-0007") ? -1 : 0;
}

static int read_fabric(const char *path, char **msg)
{
	struct model_builder *b = model_builder_new();
	GError *err = NULL;
	int rc = netfile_load(path, b, &err);
	if (rc == 0)
		g_assert_cmpuint(model_count(b), ==, 6);  /* tiny.net */
	*msg = err ? g_strdup(err->message) : NULL;
	g_clear_error(&err);
	model_builder_free(b);
	return rc;
}

static int read_include(const char *path, char **msg)
{
	char *text = g_strdup_printf("# includes a file\ninclude \"%s\"\n", path);
	put("main.net", text);
	g_free(text);
	char *main_net = tpath("main.net");
	int rc = read_fabric(main_net, msg);
	if (rc < 0) /* the including line is named */
		g_assert_nonnull(strstr(*msg, "main.net:2: cannot include"));
	g_free(main_net);
	return rc;
}

/* guid2lid is not required: lid_assign always succeeds; an unreadable one is LID-0001. */
static int read_guid2lid(const char *path, char **msg)
{
	char *cache = tpath("cache"), *g2l = g_build_filename(cache, LID_GUID2LID_FILE, NULL);
	g_assert_cmpint(g_mkdir(cache, 0755), ==, 0);
	g_assert_cmpint(symlink(path, g2l), ==, 0);
	struct fabric *f = fx_line(2, 1, 0);
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		f->ports[p].lid = 0;
	struct lid_opts o = { .cache_dir = cache };
	GError *err = NULL;
	char *lp = log_start();
	g_assert_cmpint(lid_assign(f, &o, &err), ==, 0);
	g_assert_no_error(err);
	g_assert_cmpint(lid_save_guid2lid(f, cache, &err), ==, 0); /* reads the old one too */
	g_assert_no_error(err);
	*msg = log_text(lp);
	int rc = strstr(*msg, "LID-0001") ? -1 : 0;
	fabric_unref(f);
	g_free(g2l);
	g_free(cache);
	return rc;
}

/* An engine's GUID file (plugins/common/guid_file.c, its own reader): the engine routes
 * either way; an unreadable file is an error line naming it. */
static int read_guid_list(const char *engine, const char *key, const char *path, char **msg)
{
	char *so = g_strdup_printf("%s/%s.so", TEST_PLUGIN_DIR, engine);
	GModule *m = NULL;
	const struct ibsm_engine *e = fx_engine_open(so, &m);
	g_assert_nonnull(e);
	struct fabric *f = fx_line(2, 1, 0);
	struct fx_core c;
	struct fx_run run;
	fx_core_init(&c);
	fx_core_set(&c, key, path);
	g_assert_cmpint(fx_route(e, &c, &f->pub, NULL, &run), ==, 0);
	GString *s = g_string_new(NULL);
	int rc = 0;
	for (guint i = 0; i < c.log->len; i++) {
		const char *l = g_ptr_array_index(c.log, i);
		g_string_append_printf(s, "%s\n", l);
		if (l[0] == 'E' && strstr(l, path))
			rc = -1;
	}
	*msg = g_string_free(s, FALSE);
	fx_run_clear(&run);
	fx_core_clear(&c);
	fabric_unref(f);
	g_module_close(m);
	g_free(so);
	return rc;
}

/* A plugin's file, read through fx_core's read_file (the core's service): refused when the
 * engine logged, or declined with, "KEY PATH: ..." (the reader's words). The engine may
 * decline the little fabric for reasons of its own; only the reader's refusal counts. */
static int read_plugin_file(const char *engine, const char *key, const char *path, char **msg)
{
	char *so = g_strdup_printf("%s/%s.so", TEST_PLUGIN_DIR, engine);
	GModule *m = NULL;
	const struct ibsm_engine *e = fx_engine_open(so, &m);
	g_assert_nonnull(e);
	struct fabric *f = fx_line(2, 1, 0);
	struct fx_core c;
	struct fx_run run;
	fx_core_init(&c);
	fx_core_set(&c, key, path);
	int rrc = fx_route(e, &c, &f->pub, NULL, &run);
	g_assert_cmpuint(c.read_calls, >=, 1); /* through the service, not a reader of its own */
	char *head = g_strdup_printf("%s %s: ", key, path);
	GString *s = g_string_new(NULL);
	int rc = rrc < 0 && strstr(run.routes.why, head) ? -1 : 0;
	g_string_append_printf(s, "route %d: %s\n", rrc, run.routes.why);
	for (guint i = 0; i < c.log->len; i++) {
		const char *l = g_ptr_array_index(c.log, i);
		g_string_append_printf(s, "%s\n", l);
		if (l[0] == 'E' && strstr(l, head))
			rc = -1;
	}
	*msg = g_string_free(s, FALSE);
	g_free(head);
	fx_run_clear(&run);
	fx_core_clear(&c);
	fabric_unref(f);
	g_module_close(m);
	g_free(so);
	return rc;
}

/* The chain orchestrator's policies: the chain is refused naming the key and the file. */
static int read_chain(enum reader r, const char *path, char **msg)
{
	struct sm_options o;
	options_defaults(&o);
	g_free(o.plugin_dir);
	o.plugin_dir = g_strdup(TEST_PLUGIN_DIR);
	char *rch = tpath("good-rch_policy"), *step_rch = NULL;
	o.rch_policy_file = g_strdup(rch);
	if (r == R_PGRP) {
		o.pgrp_policy_file = g_strdup(path);
	} else if (r == R_TOPO) {
		o.topo_policy_file = g_strdup(path);
	} else if (r == R_RCH) {
		g_free(o.rch_policy_file);
		o.rch_policy_file = g_strdup(path);
	} else { /* a step's own configuration file */
		char *text = g_strdup_printf("unicast-step\nid: 1\nengine: minhop\nconfig: %s\n"
					     "end-unicast-step\n", path);
		put("step-rch", text);
		g_free(text);
		step_rch = tpath("step-rch");
		g_free(o.rch_policy_file);
		o.rch_policy_file = g_strdup(step_rch);
	}
	GError *err = NULL;
	char *lp = log_start();
	struct fallback_list *c = fallback_list_new("minhop", &o, &err);
	char *logged = log_text(lp);
	int rc = c ? 0 : -1;
	if (c) {
		g_assert_nonnull(c->orch);
		fallback_list_free(c);
	}
	*msg = g_strdup_printf("%s\n%s", err ? err->message : "", logged);
	if (!c && reader_key[r]) /* the reader's words, "KEY PATH: ..." */
		g_assert_nonnull(strstr(err->message, reader_key[r]));
	g_clear_error(&err);
	g_free(logged);
	g_free(rch);
	g_free(step_rch);
	options_free(&o);
	return rc;
}

static int read_with(enum reader r, const char *path, char **msg)
{
	switch (r) {
	case R_CONFIG:     return read_config(path, msg);
	case R_PARTITIONS: return read_partitions(path, msg);
	case R_FABRIC:     return read_fabric(path, msg);
	case R_INCLUDE:    return read_include(path, msg);
	case R_GUID2LID:   return read_guid2lid(path, msg);
	case R_QOS:        return read_qos(path, msg);
	case R_ROOTS:      return read_guid_list("updn", "root_guid_file", path, msg);
	case R_IGNORE:     return read_guid_list("minhop", "port_prof_ignore_file", path, msg);
	case R_DOR_IGNORE: return read_plugin_file("dor", "port_prof_ignore_file", path, msg);
	case R_FTREE_ROOTS:
	case R_FTREE_CN:
	case R_FTREE_IO:   return read_plugin_file("ftree", reader_key[r], path, msg);
	case R_TORUS:      return read_plugin_file("torus-2QoS", "torus_config", path, msg);
	default:           return read_chain(r, path, msg);
	}
}

static void check_case(const struct tcase *t)
{
	char *path = target(t->r, t->k), *msg = NULL;
	int rc = read_with(t->r, path, &msg);
	const char *word = kind_word(t->r, t->k);
	if (g_getenv("TEST_FILE_SHOW")) /* what each reader said, for a person reading */
		g_printerr("%s/%s: %d: %s\n", reader_name[t->r], kind_name[t->k], rc, msg);
	if (!word) {
		if (rc != 0)
			g_printerr("refused: %s\n", msg ? msg : "(no message)");
		g_assert_cmpint(rc, ==, 0);
	} else {
		g_assert_cmpint(rc, ==, -1);
		g_assert_nonnull(msg);
		if (!strstr(msg, word) || !strstr(msg, t->r == R_GUID2LID ? "guid2lid" : path))
			g_printerr("message: %s\n", msg);
		g_assert_nonnull(strstr(msg, word));  /* says what is wrong */
		g_assert_nonnull(strstr(msg, t->r == R_GUID2LID ? "guid2lid" : path)); /* and where */
		if (reader_key[t->r]) { /* a plugin's file: "KEY PATH: what" */
			char *head = g_strdup_printf("%s %s: ", reader_key[t->r], path);
			g_assert_nonnull(strstr(msg, head));
			g_free(head);
		}
	}
	g_free(msg);
	g_free(path);
}

static void test_case(gconstpointer data)
{
	if (g_test_subprocess()) {
		check_case(data);
		return;
	}
	/* the child's messages (g_printerr) come through; a child that blocks is killed */
	g_test_trap_subprocess(NULL, (guint64)BOUND_S * G_USEC_PER_SEC,
			       G_TEST_SUBPROCESS_INHERIT_STDERR);
	g_test_trap_assert_passed();
}

/* ---- the core's helper ---- */

static void test_helper(void)
{
	char *text = NULL;
	size_t len = 99;
	GError *err = NULL;
	char *p = tpath("exact");
	/* exactly the cap is read, with what it holds (a NUL too), NUL-terminated */
	g_assert_true(g_file_set_contents(p, "ab\0cd", 5, NULL));
	g_assert_cmpint(file_read_capped(p, 5, "test file", &text, &len, &err), ==, 0);
	g_assert_no_error(err);
	g_assert_cmpuint(len, ==, 5);
	g_assert_cmpint(memcmp(text, "ab\0cd", 6), ==, 0);
	g_free(text);
	/* one byte more than the cap is refused, naming the file, the kind and the cap */
	g_assert_cmpint(file_read_capped(p, 4, "test file", &text, &len, &err), ==, -EFBIG);
	g_assert_error(err, FILE_ERROR, FILE_ERROR_TOO_BIG);
	g_assert_null(text);
	g_assert_nonnull(strstr(err->message, p));
	g_assert_nonnull(strstr(err->message, "test file is larger than 0 MiB (5 bytes)"));
	g_clear_error(&err);
	/* empty: an empty string */
	g_assert_true(g_file_set_contents(p, "", 0, NULL));
	g_assert_cmpint(file_read_capped(p, 5, "test file", &text, &len, &err), ==, 0);
	g_assert_cmpuint(len, ==, 0);
	g_assert_cmpstr(text, ==, "");
	g_free(text);
	g_free(p);
	/* missing: -ENOENT, a domain code of its own (callers treat it as "no file") */
	p = tpath("missing");
	g_assert_cmpint(file_read_capped(p, 5, "test file", &text, &len, &err), ==, -ENOENT);
	g_assert_error(err, FILE_ERROR, FILE_ERROR_MISSING);
	g_assert_nonnull(strstr(err->message, "cannot open the test file: "));
	g_clear_error(&err);
	g_free(p);
	/* not regular: -EISDIR for a directory, -EINVAL for the others, never opened */
	p = tpath("dir");
	g_assert_cmpint(file_read_capped(p, 5, "test file", &text, &len, &err), ==, -EISDIR);
	g_assert_error(err, FILE_ERROR, FILE_ERROR_NOT_REGULAR);
	g_clear_error(&err);
	g_free(p);
	p = tpath("fifo");
	g_assert_cmpint(file_read_capped(p, 5, "test file", &text, &len, &err), ==, -EINVAL);
	g_assert_error(err, FILE_ERROR, FILE_ERROR_NOT_REGULAR);
	g_assert_nonnull(strstr(err->message, "test file is a FIFO, not a regular file"));
	g_clear_error(&err);
	g_free(p);
}

/* file_read_setting: the same checks, in words naming the key and the file. */
static void test_setting(void)
{
	char *text = NULL;
	size_t len = 99;
	GError *err = NULL;
	char *p = tpath("exact"), *fifo = tpath("fifo"), *missing = tpath("missing");
	g_assert_true(g_file_set_contents(p, "abcde", 5, NULL));
	g_assert_cmpint(file_read_setting("k", p, 5, &text, &len, &err), ==, 0);
	g_assert_cmpuint(len, ==, 5);
	g_assert_cmpstr(text, ==, "abcde");
	g_free(text);
	struct { const char *path; size_t cap; int rc; enum file_error code; const char *says; } c[] = {
		{ p, 4, -EFBIG, FILE_ERROR_TOO_BIG, ": larger than 0 MiB (5 bytes): not read" },
		{ fifo, 5, -EINVAL, FILE_ERROR_NOT_REGULAR, ": a FIFO, not a regular file: not read" },
		{ "/dev/zero", 5, -EINVAL, FILE_ERROR_NOT_REGULAR, ": a character device, not a regular" },
		{ missing, 5, -ENOENT, FILE_ERROR_MISSING, ": cannot open it: " },
	};
	for (unsigned i = 0; i < G_N_ELEMENTS(c); i++) {
		char *want = g_strdup_printf("torus_config %s%s", c[i].path, c[i].says);
		g_assert_cmpint(file_read_setting("torus_config", c[i].path, c[i].cap, &text, &len,
						  &err), ==, c[i].rc);
		g_assert_error(err, FILE_ERROR, (gint)c[i].code);
		g_assert_null(text);
		if (!g_str_has_prefix(err->message, want))
			g_error("'%s' does not start with '%s'", err->message, want);
		g_clear_error(&err);
		g_free(want);
	}
	/* no name at all */
	g_assert_cmpint(file_read_setting("torus_config", "", 5, &text, &len, &err), ==, -ENOENT);
	g_assert_cmpstr(err->message, ==, "torus_config: no file named");
	g_clear_error(&err);
	g_free(p);
	g_free(fifo);
	g_free(missing);
}

/* The service the core lends engines (ABI 1.3): text freed with free(), refusals in why. */
static void test_service(void)
{
	struct ibsm_core *core = services_new("t", NULL, NULL, NULL);
	g_assert_cmpuint(core->size, ==, sizeof(struct ibsm_core));
	g_assert_nonnull(core->read_file);
	char *p = tpath("svc"), *fifo = tpath("fifo"), *text = NULL, why[200];
	size_t len = 0;
	g_assert_true(g_file_set_contents(p, "0x1\n", -1, NULL));
	g_assert_cmpint(ibsm_read_file(core, "root_guid_file", p, &text, &len, why, sizeof(why)), ==, 0);
	g_assert_cmpuint(len, ==, 4);
	g_assert_cmpstr(text, ==, "0x1\n");
	free(text); /* as the SDK says */
	g_assert_cmpint(ibsm_read_file(core, "root_guid_file", fifo, &text, &len, why, sizeof(why)),
			==, -EINVAL);
	char *want = g_strdup_printf("root_guid_file %s: a FIFO, not a regular file: not read", fifo);
	g_assert_cmpstr(why, ==, want);
	g_free(want);
	/* a short why is cut, not overrun */
	char small[8];
	memset(small, 'x', sizeof(small));
	g_assert_cmpint(core->read_file(core, "root_guid_file", fifo, &text, &len, small, 5), <, 0);
	g_assert_cmpstr(small, ==, "root");
	g_assert_cmpint(small[5], ==, 'x');
	services_free(core);
	g_free(p);
	g_free(fifo);
}

static int never_called(const struct ibsm_core *c, const char *key, const char *path, char **text,
			size_t *len, char *why, size_t why_len)
{
	(void)c; (void)key; (void)path; (void)text; (void)len; (void)why; (void)why_len;
	g_assert_not_reached();
	return 0;
}

static int orch_never_called(const struct ibsm_orch_core *c, const char *key, const char *path,
			     char **text, size_t *len, char *why, size_t why_len)
{
	(void)c; (void)key; (void)path; (void)text; (void)len; (void)why; (void)why_len;
	g_assert_not_reached();
	return 0;
}

/* A core of ABI 1.2 (its struct ends before read_file): the SDK's helpers refuse the file,
 * naming it, and never touch what lies beyond the core's size. */
static void test_service_old_core(void)
{
	struct ibsm_core core = { .size = offsetof(struct ibsm_core, read_file),
				  .read_file = never_called };
	char *text = (char *)"junk", why[200];
	size_t len = 7;
	g_assert_cmpint(ibsm_read_file(&core, "torus_config", "/etc/t.conf", &text, &len, why,
				       sizeof(why)), ==, -ENOSYS);
	g_assert_null(text);
	g_assert_cmpuint(len, ==, 0);
	g_assert_nonnull(strstr(why, "torus_config /etc/t.conf: not read"));
	/* of the right size but without the function: the same */
	core.size = sizeof(core);
	core.read_file = NULL;
	g_assert_cmpint(ibsm_read_file(&core, "torus_config", "/etc/t.conf", &text, &len, why,
				       sizeof(why)), ==, -ENOSYS);
	struct ibsm_orch_core oc = { .size = offsetof(struct ibsm_orch_core, read_file),
				     .read_file = orch_never_called };
	g_assert_cmpint(ibsm_orch_read_file(&oc, "rch_policy_file", "/etc/r", &text, &len, why,
					    sizeof(why)), ==, -ENOSYS);
	g_assert_nonnull(strstr(why, "rch_policy_file /etc/r: not read"));
	/* no path: nothing asked of the core */
	core.size = sizeof(core);
	core.read_file = never_called;
	g_assert_cmpint(ibsm_read_file(&core, "torus_config", NULL, &text, &len, why, sizeof(why)),
			==, -ENOENT);
	g_assert_cmpstr(why, ==, "torus_config: no file named");
}

/* The fabric cap holds for a file and its includes together: 2 x 33 MiB of comments. */
static void test_fabric_includes_together(void)
{
	char *big = tpath("comments.net");
	FILE *fp = fopen(big, "w");
	g_assert_nonnull(fp);
	char line[201];
	memset(line, 'x', sizeof(line) - 1);
	line[0] = '#';
	line[sizeof(line) - 2] = '\n';
	line[sizeof(line) - 1] = '\0';
	for (size_t n = 0; n < ((size_t)33 << 20); n += sizeof(line) - 1)
		fputs(line, fp);
	g_assert_cmpint(fclose(fp), ==, 0);
	put("twice.net", "include \"comments.net\"\ninclude \"comments.net\"\n");
	char *twice = tpath("twice.net"), *msg = NULL;
	g_assert_cmpint(read_fabric(twice, &msg), ==, -1);
	g_assert_nonnull(strstr(msg, "twice.net:2: cannot include"));
	g_assert_nonnull(strstr(msg, "read before it, larger than 64 MiB"));
	g_free(msg);
	g_free(twice);
	g_unlink(big);
	g_free(big);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	setup_tree();
	for (int r = 0; r < R_N; r++) {
		for (int k = 0; k < K_N; k++) {
			struct tcase *t = g_new(struct tcase, 1);
			*t = (struct tcase){ (enum reader)r, (enum kind)k };
			char *name = g_strdup_printf("/file/%s/%s", reader_name[r], kind_name[k]);
			g_test_add_data_func_full(name, t, test_case, g_free);
			g_free(name);
		}
	}
	g_test_add_func("/file/helper", test_helper);
	g_test_add_func("/file/setting", test_setting);
	g_test_add_func("/file/service", test_service);
	g_test_add_func("/file/service/old_core", test_service_old_core);
	g_test_add_func("/file/fabric/includes_together", test_fabric_includes_together);
	int rc = g_test_run();
	rm_rf(tmp);
	g_free(tmp);
	return rc;
}
