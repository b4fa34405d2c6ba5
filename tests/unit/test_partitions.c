/* test_partitions.c - the partitions.conf parser and its expansion to per-port P_Keys: every
 * example of the OpenSM partition documentation (doc/partition-config.txt, NVIDIA's manual
 * "Partitions"), one test per error class, merging of split definitions, keyword expansion on a
 * small fabric, the default partition, "both". */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include "base/file_read.h"
#include "base/log.h"
#include "fabric_fixture.h"
#include "policy/partitions.h"
#include "sm/policies.h"

#define EX_DIR TEST_SRCDIR "/tests/fuzz/corpus/partitions/"

static struct part_policy *parse_str(const char *s)
{
	GError *err = NULL;
	struct part_policy *p = part_policy_parse_text(s, strlen(s), "t.conf", &err);
	g_assert_no_error(err);
	g_assert_nonnull(p);
	return p;
}

/* The file's text, read as the core reads it, parsed under its name. */
static struct part_policy *parse_path(const char *path, GError **err)
{
	char *text = NULL;
	size_t len = 0;
	g_assert_cmpint(file_read_capped(path, FILE_CAP_TEXT, "partition file", &text, &len, NULL),
			==, 0);
	struct part_policy *p = part_policy_parse_text(text, len, path, err);
	g_free(text);
	return p;
}

static struct part_policy *parse_example(const char *file)
{
	char *path = g_strconcat(EX_DIR, file, NULL);
	GError *err = NULL;
	struct part_policy *p = parse_path(path, &err);
	g_assert_no_error(err);
	g_assert_nonnull(p);
	g_assert_cmpstr(p->source, ==, path);
	g_free(path);
	return p;
}

static void expect_error(const char *s, const char *msg)
{
	GError *err = NULL;
	struct part_policy *p = part_policy_parse_text(s, strlen(s), "t.conf", &err);
	g_assert_null(p);
	g_assert_error(err, PART_ERROR, PART_ERROR_SYNTAX);
	if (!g_str_has_prefix(err->message, msg))
		g_error("error '%s' does not start with '%s'", err->message, msg);
	g_error_free(err);
}

static const struct partition *part(const struct part_policy *p, guint i)
{
	g_assert_cmpuint(i, <, p->parts->len);
	return p->parts->pdata[i];
}

static const struct part_member *mem(const struct partition *pt, guint i)
{
	g_assert_cmpuint(i, <, pt->members->len);
	return &g_array_index(pt->members, struct part_member, i);
}

static void check_member(const struct partition *pt, guint i, enum part_selector sel,
			 uint64_t guid, uint8_t membership)
{
	const struct part_member *m = mem(pt, i);
	g_assert_cmpint(m->sel, ==, sel);
	if (sel == PART_SEL_GUID)
		g_assert_cmphex(m->guid, ==, guid);
	g_assert_cmpuint(m->membership, ==, membership);
}

/* The default partition heads the list with its implicit ALL=limited, SELF=full. */
static void check_default_head(const struct partition *d)
{
	g_assert_cmphex(d->pkey, ==, 0x7fff);
	g_assert_cmpuint(d->members->len, >=, 2);
	check_member(d, 0, PART_SEL_ALL, 0, PART_LIMITED);
	check_member(d, 1, PART_SEL_SELF, 0, PART_FULL);
}

/* ---- the documents' examples ----------------------------------------------------------- */

static void test_ex_default(void)
{
	struct part_policy *p = parse_example("ex1_default");
	g_assert_cmpuint(p->parts->len, ==, 1);
	const struct partition *d = part(p, 0);
	g_assert_cmpstr(d->name, ==, "Default");
	check_default_head(d);
	g_assert_cmpuint(d->members->len, ==, 4);
	check_member(d, 2, PART_SEL_ALL, 0, PART_LIMITED);
	check_member(d, 3, PART_SEL_SELF, 0, PART_FULL);
	g_assert_cmpuint(d->ipoib, ==, 0);
	part_policy_free(p);

	p = parse_example("ex2_default_switches");
	g_assert_cmpuint(p->parts->len, ==, 1);
	d = part(p, 0);
	g_assert_cmpuint(d->members->len, ==, 5);
	check_member(d, 2, PART_SEL_ALL, 0, PART_LIMITED);
	check_member(d, 3, PART_SEL_ALL_SWITCHES, 0, PART_FULL);
	check_member(d, 4, PART_SEL_SELF, 0, PART_FULL);
	g_assert_cmpuint(p->skipped->len, ==, 0);
	part_policy_free(p);
}

static void test_ex_newpartition(void)
{
	struct part_policy *p = parse_example("ex3_newpartition");
	g_assert_cmpuint(p->parts->len, ==, 2);
	const struct partition *d = part(p, 0);
	g_assert_cmpstr(d->name, ==, "Default");
	g_assert_cmpuint(d->line, ==, 0); /* built in */
	const struct partition *n = part(p, 1);
	g_assert_cmpstr(n->name, ==, "NewPartition");
	g_assert_cmphex(n->pkey, ==, 0x0001); /* automatic: lowest unused */
	g_assert_cmpuint(n->ipoib, ==, 1);
	g_assert_cmpuint(n->members->len, ==, 3);
	check_member(n, 0, PART_SEL_GUID, 0x123456, PART_FULL);
	check_member(n, 1, PART_SEL_GUID, 0x3456789034ull, PART_LIMITED); /* "=limi": limited */
	check_member(n, 2, PART_SEL_GUID, 0x2134af2306ull, PART_LIMITED); /* omitted */
	g_assert_cmpuint(mem(n, 1)->line, ==, 2);
	g_assert_cmpuint(mem(n, 1)->col, ==, 8);
	part_policy_free(p);
}

static void test_ex_split(void)
{
	struct part_policy *p = parse_example("ex4_split");
	g_assert_cmpuint(p->parts->len, ==, 2);
	const struct partition *y = part(p, 1);
	g_assert_cmpstr(y->name, ==, "YetAnotherOne");
	g_assert_cmphex(y->pkey, ==, 0x300);
	g_assert_cmpuint(y->members->len, ==, 2);
	check_member(y, 0, PART_SEL_SELF, 0, PART_FULL);
	check_member(y, 1, PART_SEL_ALL, 0, PART_LIMITED);
	g_assert_cmpuint(mem(y, 1)->line, ==, 4);
	part_policy_free(p);
}

static void test_ex_shareio(void)
{
	struct part_policy *p = parse_example("ex5_shareio");
	g_assert_cmpuint(p->parts->len, ==, 2);
	const struct partition *s = part(p, 1);
	g_assert_cmpstr(s->name, ==, "ShareIO");
	g_assert_cmphex(s->pkey, ==, 0x80);
	g_assert_cmpuint(s->defmember, ==, PART_FULL); /* the first definition's */
	static const struct { uint64_t guid; uint8_t m; } want[] = {
		{ 0x123451, PART_FULL },    { 0x123452, PART_FULL },    { 0x123453, PART_LIMITED },
		{ 0x123454, PART_LIMITED }, { 0x123455, PART_FULL },    { 0x123456, PART_LIMITED },
		{ 0x123457, PART_LIMITED }, { 0x123458, PART_FULL },    { 0x123459, PART_FULL },
		{ 0x12345a, PART_FULL },    { 0x12345b, PART_FULL },    { 0x12345c, PART_LIMITED },
		{ 0x12345d, PART_FULL },
	};
	g_assert_cmpuint(s->members->len, ==, G_N_ELEMENTS(want));
	for (guint i = 0; i < G_N_ELEMENTS(want); i++)
		check_member(s, i, PART_SEL_GUID, want[i].guid, want[i].m);
	part_policy_free(p);

	/* NVIDIA's manual as printed has its comments broken over lines: ", 0x123454" and
	 * "will be limited" are then not comments, and the file is refused */
	char *path = g_strconcat(EX_DIR, "ex5_shareio_verbatim", NULL);
	GError *err = NULL;
	g_assert_null(parse_path(path, &err));
	g_assert_error(err, PART_ERROR, PART_ERROR_SYNTAX);
	g_assert_true(strstr(err->message, "ex5_shareio_verbatim:6:3: unknown partition flag") != NULL);
	g_error_free(err);
	g_free(path);
}

static void test_ex_mgid(void)
{
	struct part_policy *p = parse_example("ex6_mgid");
	g_assert_cmpuint(p->parts->len, ==, 1);
	const struct partition *d = part(p, 0);
	check_default_head(d);
	g_assert_cmpuint(d->ipoib, ==, 1);
	g_assert_cmpuint(d->members->len, ==, 3);
	check_member(d, 2, PART_SEL_ALL, 0, PART_FULL);
	g_assert_cmpuint(d->mgroups->len, ==, 5);
	const struct part_mgroup *g = (const struct part_mgroup *)(const void *)d->mgroups->data;
	/* ff12:401b::0707: an IPoIB group with a zero P_Key field gets the partition's key */
	static const uint8_t g0[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0x07, 0x07 };
	g_assert_cmpmem(g[0].mgid, 16, g0, 16);
	g_assert_cmpuint(g[0].sl, ==, 1);
	g_assert_cmpuint(g[0].line, ==, 4);
	g_assert_cmphex(g[1].mgid[2], ==, 0x60);
	g_assert_cmphex(g[1].mgid[15], ==, 0x16);
	g_assert_cmpuint(g[1].sl, ==, 0);
	g_assert_cmphex(g[2].mgid[2], ==, 0x40);
	g_assert_cmphex(g[3].mgid[15], ==, 0x02);
	static const uint8_t g4[16] = { 0xff, 0x12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01 };
	g_assert_cmpmem(g[4].mgid, 16, g4, 16); /* not IPoIB: no key filled in */
	g_assert_cmpuint(g[4].sl, ==, 1);
	g_assert_cmphex(g[4].qkey, ==, 0xDEADBEEF);
	g_assert_cmpuint(g[4].rate, ==, 3);
	g_assert_cmpuint(g[4].mtu, ==, 2);
	part_policy_free(p);
}

static void test_ex_all_full(void)
{
	struct part_policy *p = parse_example("ex7_all_full");
	g_assert_cmpuint(p->parts->len, ==, 1);
	const struct partition *d = part(p, 0);
	check_default_head(d);
	g_assert_cmpuint(d->ipoib, ==, 1);
	g_assert_cmpuint(d->members->len, ==, 3);
	check_member(d, 2, PART_SEL_ALL, 0, PART_FULL);
	part_policy_free(p);
}

/* ---- structure errors reject the file ----------------------------------------------------- */

static void test_err_structure(void)
{
	expect_error("x=0x10 ALL ;", "t.conf:1:8: expected ':'");
	expect_error("x=0x10 : ALL\n", "t.conf:2:1: missing ';'");
	expect_error("x=0x10 : ALL ;\n;", "t.conf:2:1: expected ':'");
	expect_error("x=1 : ALL ; : ALL ; ;", "t.conf:1:21: expected ':'");
	expect_error("x=1 : 0x1 0x2 ;", "t.conf:1:11: expected ',' or ';'");
	expect_error("x=1 : 0x1 : 0x2 ;", "t.conf:1:11: unexpected ':'");
	expect_error("x=1 : 0x1 = ;", "t.conf:1:13: expected full, limited or both");
	expect_error("x= : ALL;", "t.conf:1:4: expected a P_Key");
	expect_error("x,: ALL;", "t.conf:1:3: expected a partition flag");
}

static void test_err_keyword(void)
{
	expect_error("# c\nx=0x10 :\n  ALL, ALL_CAZ ;", "t.conf:3:8: unknown keyword 'ALL_CAZ'");
	expect_error("x=1 : sl=1 ;", "t.conf:1:7: unknown keyword 'sl'"); /* no mgid before */
	expect_error("x=1 : mgid ;", "t.conf:1:7: expected '=' after mgid");
}

static void test_err_flag(void)
{
	expect_error("x=1, ipoibx : ALL ;", "t.conf:1:6: unknown partition flag 'ipoibx'");
	expect_error("x=1, qkeyx=5 : ALL ;", "t.conf:1:6: unknown partition flag 'qkeyx'");
}

/* The core's loader: a missing file is the default policy; an unreadable one is refused with
 * the reason (core/base/file_read.c) and a policy stays in force. */
static void test_err_missing_file(void)
{
	struct sm_options o = { .partition_config_file = (char *)"/nonexistent/partitions.conf" };
	struct sm sm = { .opt = &o };
	log_set_quiet(1);
	g_assert_cmpint(policies_load_partitions(&sm), ==, 0);
	g_assert_nonnull(sm.part_policy);
	g_assert_null(sm.part_policy->source);      /* the built-in default: all full */
	check_member(part(sm.part_policy, 0), 0, PART_SEL_ALL, 0, PART_FULL);
	o.partition_config_file = (char *)"/";
	g_assert_cmpint(policies_load_partitions(&sm), ==, -1);
	g_assert_nonnull(sm.part_policy);           /* the one in force stays */
	g_assert_null(sm.part_policy->source);
	check_member(part(sm.part_policy, 0), 0, PART_SEL_ALL, 0, PART_FULL);
	policies_free(&sm);
	/* a file given but not taken at start, no saved copy (no cache directory): what OpenSM
	 * 3.3.23 does with a partitions file in error, the default partition, all full */
	g_assert_cmpint(policies_load_partitions(&sm), ==, -1);
	g_assert_nonnull(sm.part_policy);
	g_assert_null(sm.part_policy->source);
	g_assert_cmpuint(sm.part_policy->parts->len, ==, 1);
	check_member(part(sm.part_policy, 0), 0, PART_SEL_ALL, 0, PART_FULL);
	policies_free(&sm);
	log_set_quiet(0);
}

static void write_file(const char *path, const char *text)
{
	g_assert_true(g_file_set_contents(path, text, -1, NULL));
}

static char *read_file(const char *path)
{
	char *text = NULL;
	return g_file_get_contents(path, &text, NULL, NULL) ? text : NULL;
}

/* The log from offset on (the test logs to a file to judge the ERROR lines). */
static char *log_since(const char *path, size_t *off)
{
	char *all = read_file(path);
	g_assert_nonnull(all);
	char *out = g_strdup(all + MIN(*off, strlen(all)));
	*off = strlen(all);
	g_free(all);
	return out;
}

/* The copy of the last partition file taken (cache directory): written when a file is taken,
 * in force at a start whose file does not parse (the ERROR names file:line and the copy), kept
 * as it was; a SIGHUP with a bad file keeps the policy in force; a start without a copy falls
 * back to OpenSM's default (all full); no file at all removes the copy. */
static void test_saved_copy(void)
{
	char *dir = g_dir_make_tmp("ibsm-part-XXXXXX", NULL);
	g_assert_nonnull(dir);
	char *conf = g_build_filename(dir, "partitions.conf", NULL);
	char *copy = g_build_filename(dir, PART_SAVED_FILE, NULL);
	char *logf = g_build_filename(dir, "ibsm.log", NULL);
	size_t off = 0;
	g_assert_cmpint(log_open(logf, 0), ==, 0);
	const char *good = "Default=0x7fff : ALL=full ;\nStorage=0x0010 : ALL_CAS=full ;\n";
	const char *bad = "Default=0x7fff : ALL=full ;\nStorage=0x0010 ALL_CAS=full ;\n";
	struct sm_options o = { .partition_config_file = conf, .cache_dir = dir };
	struct sm sm = { .opt = &o };

	write_file(conf, good);
	g_assert_cmpint(policies_load_partitions(&sm), ==, 0);
	char *saved = read_file(copy);
	g_assert_nonnull(saved);
	g_assert_true(g_str_has_prefix(saved, PART_SAVED_TAG));
	g_assert_true(g_str_has_suffix(saved, good));
	g_assert_nonnull(strstr(saved, conf));
	policies_free(&sm);

	/* a start with a bad file: the copy is in force, and stays as it was */
	write_file(conf, bad);
	g_free(log_since(logf, &off));
	g_assert_cmpint(policies_load_partitions(&sm), ==, -1);
	g_assert_nonnull(sm.part_policy);
	g_assert_cmpstr(sm.part_policy->source, ==, copy);
	g_assert_cmpuint(sm.part_policy->parts->len, ==, 2);
	g_assert_cmphex(part(sm.part_policy, 1)->pkey, ==, 0x0010);
	char *again = read_file(copy);
	g_assert_cmpstr(again, ==, saved);
	g_free(again);
	char *said = log_since(logf, &off);
	char *where = g_strdup_printf("%s:2:", conf);
	if (!strstr(said, "POL-0002") || !strstr(said, copy) || !strstr(said, where) ||
	    !strstr(said, "is in force"))
		g_error("no POL-0002 naming %s and %s in '%s'", where, copy, said);
	g_free(said);
	/* SIGHUP with the file still bad: the policy in force stays */
	struct part_policy *in_force = sm.part_policy;
	g_assert_cmpint(policies_load_partitions(&sm), ==, -1);
	g_assert_true(sm.part_policy == in_force);
	policies_free(&sm);

	/* a start with a bad file and no copy: OpenSM's fallback, every end port full, said so */
	g_assert_cmpint(g_unlink(copy), ==, 0);
	g_assert_cmpint(policies_load_partitions(&sm), ==, -1);
	g_assert_null(sm.part_policy->source);
	g_assert_cmpuint(sm.part_policy->parts->len, ==, 1);
	check_member(part(sm.part_policy, 0), 0, PART_SEL_ALL, 0, PART_FULL);
	said = log_since(logf, &off);
	if (!strstr(said, "POL-0002") || !strstr(said, where) || !strstr(said, "full member"))
		g_error("no POL-0002 naming %s and the full default in '%s'", where, said);
	g_free(said);
	g_assert_false(g_file_test(copy, G_FILE_TEST_EXISTS));
	policies_free(&sm);

	/* a good file again: copied; then no file: the default, the copy removed */
	write_file(conf, good);
	g_assert_cmpint(policies_load_partitions(&sm), ==, 0);
	g_assert_true(g_file_test(copy, G_FILE_TEST_EXISTS));
	g_assert_cmpint(g_unlink(conf), ==, 0);
	g_assert_cmpint(policies_load_partitions(&sm), ==, 0);
	g_assert_false(g_file_test(copy, G_FILE_TEST_EXISTS));
	policies_free(&sm);

	log_close();
	g_unlink(logf);
	g_rmdir(dir);
	g_free(where);
	g_free(saved);
	g_free(logf);
	g_free(copy);
	g_free(conf);
	g_free(dir);
}

/* ---- bad values skip one entry ------------------------------------------------------------ */

static void expect_skipped(const struct part_policy *p, guint i, const char *prefix)
{
	g_assert_cmpuint(i, <, p->skipped->len);
	const char *s = p->skipped->pdata[i];
	if (!g_str_has_prefix(s, prefix))
		g_error("skip message '%s' does not start with '%s'", s, prefix);
}

static void test_bad_pkey(void)
{
	struct part_policy *p = parse_str("a=0 : ALL ;\nb=0x8000 : ALL;\nc=0x10000: ALL;\n"
					  "d=0x8010 : ALL;\ne=zz : ALL;\nf=32767: SELF;");
	g_assert_cmpuint(p->skipped->len, ==, 4);
	expect_skipped(p, 0, "t.conf:1:3: bad P_Key '0'");
	expect_skipped(p, 1, "t.conf:2:3: bad P_Key '0x8000'");
	expect_skipped(p, 2, "t.conf:3:3: bad P_Key");
	expect_skipped(p, 3, "t.conf:5:3: bad P_Key 'zz'");
	g_assert_cmpuint(p->parts->len, ==, 2);
	g_assert_cmphex(part(p, 1)->pkey, ==, 0x0010);   /* the 0x8000 bit ignored */
	g_assert_cmpstr(part(p, 1)->name, ==, "d");
	g_assert_cmpstr(part(p, 0)->name, ==, "f");      /* decimal 32767 = the default */
	g_assert_cmpuint(part(p, 0)->members->len, ==, 3);
	part_policy_free(p);
}

static void test_bad_values(void)
{
	struct part_policy *p = parse_example("bad_values");
	/* a=0 skipped; b: bad GUID and bad rate skipped, the rest kept; c: bad nothing */
	g_assert_cmpuint(p->skipped->len, ==, 3);
	g_assert_true(strstr(p->skipped->pdata[0], "bad_values:1:3: bad P_Key") != NULL);
	g_assert_true(strstr(p->skipped->pdata[1], "bad_values:1:35: bad rate value '99'") != NULL);
	g_assert_true(strstr(p->skipped->pdata[2], "bad_values:1:40: bad port GUID '0x12zz'") != NULL);
	g_assert_cmpuint(p->parts->len, ==, 3);
	const struct partition *b = part(p, 1);
	g_assert_cmpstr(b->name, ==, "b");
	g_assert_cmphex(b->pkey, ==, 0x10);
	g_assert_cmpuint(b->indx0, ==, 1);
	g_assert_cmpuint(b->rate, ==, 0);
	g_assert_cmpuint(b->members->len, ==, 3);
	check_member(b, 0, PART_SEL_GUID, 5, PART_BOTH);
	check_member(b, 1, PART_SEL_ALL_VCAS, 0, PART_LIMITED);
	check_member(b, 2, PART_SEL_ALL_ROUTERS, 0, PART_FULL);
	const struct partition *c = part(p, 2);
	g_assert_cmphex(c->pkey, ==, 0x1); /* automatic */
	g_assert_cmpuint(c->mgroups->len, ==, 1); /* two scopes: one item, a group per scope */
	const struct part_mgroup *g = (const struct part_mgroup *)(const void *)c->mgroups->data;
	g_assert_cmphex(g[0].scope_mask, ==, 1u << 5 | 1u << 8);
	g_assert_cmphex(g[0].mgid[4], ==, 0x80);
	g_assert_cmphex(g[0].mgid[5], ==, 0x01);
	part_policy_free(p);

	p = parse_str("x=1, mtu=9, sl=16, scope=3 : mgid=fe80::1, sl=2, mgid=ff12::5, tclass=300, "
		      "FlowLabel=7 ;");
	g_assert_cmpuint(p->skipped->len, ==, 4);
	expect_skipped(p, 0, "t.conf:1:10: bad mtu value '9'");
	expect_skipped(p, 1, "t.conf:1:16: bad sl value '16'");
	expect_skipped(p, 2, "t.conf:1:35: bad multicast GID 'fe80::1'");
	expect_skipped(p, 3, "t.conf:1:71: bad tclass value '300'");
	const struct partition *x = part(p, 1);
	g_assert_cmpuint(x->mtu, ==, 0);
	g_assert_cmpuint(x->scope, ==, 3);
	g_assert_cmpuint(x->mgroups->len, ==, 1);
	g_assert_cmpuint(g_array_index(x->mgroups, struct part_mgroup, 0).flow_label, ==, 7);
	g_assert_cmpuint(g_array_index(x->mgroups, struct part_mgroup, 0).sl, ==, 0);
	part_policy_free(p);
}

/* ---- merging, automatic keys -------------------------------------------------------------- */

static void test_merge_and_auto(void)
{
	struct part_policy *p = parse_str("a : 0x1 ;\nb=0x1 : 0x2;\nc : 0x3=full;\n"
					  "B2 = 0x8001, ipoib, indx0 : 0x4 ;\n"
					  "Default=0x7fff : 0x9=full ;\n");
	g_assert_cmpuint(p->parts->len, ==, 4);
	check_default_head(part(p, 0));
	g_assert_cmpuint(part(p, 0)->members->len, ==, 3);
	check_member(part(p, 0), 2, PART_SEL_GUID, 9, PART_FULL);
	g_assert_cmpstr(part(p, 1)->name, ==, "a");
	g_assert_cmphex(part(p, 1)->pkey, ==, 0x2);  /* 0x1 is taken by b */
	const struct partition *b = part(p, 2);
	g_assert_cmpstr(b->name, ==, "b");           /* first name wins */
	g_assert_cmphex(b->pkey, ==, 0x1);
	g_assert_cmpuint(b->ipoib, ==, 1);
	g_assert_cmpuint(b->indx0, ==, 1);
	g_assert_cmpuint(b->members->len, ==, 2);
	check_member(b, 1, PART_SEL_GUID, 4, PART_LIMITED);
	g_assert_cmpstr(part(p, 3)->name, ==, "c");
	g_assert_cmphex(part(p, 3)->pkey, ==, 0x3);
	part_policy_free(p);

	/* empty file, comments only, empty member lists */
	p = parse_str("# nothing\n\n   # more\n");
	g_assert_cmpuint(p->parts->len, ==, 1);
	part_policy_free(p);
	p = parse_str("=0x20:;\n,ipoib:,;\n");
	g_assert_cmpuint(p->parts->len, ==, 3);
	g_assert_cmpstr(part(p, 1)->name, ==, "");
	g_assert_cmphex(part(p, 1)->pkey, ==, 0x20);
	g_assert_cmphex(part(p, 2)->pkey, ==, 0x1);
	g_assert_cmpuint(part(p, 2)->members->len, ==, 0);
	part_policy_free(p);
	/* a file that does not define the default partition: the restricted one */
	p = part_policy_restricted_default();
	g_assert_null(p->source);
	g_assert_cmpuint(p->parts->len, ==, 1);
	check_default_head(part(p, 0));
	g_assert_cmpuint(part(p, 0)->members->len, ==, 2);
	part_policy_free(p);
	/* no file at all (OpenSM): every end port a full member */
	p = part_policy_default();
	g_assert_null(p->source);
	g_assert_cmpuint(p->parts->len, ==, 1);
	g_assert_cmphex(part(p, 0)->pkey, ==, 0x7fff);
	g_assert_cmpuint(part(p, 0)->members->len, ==, 2);
	check_member(part(p, 0), 0, PART_SEL_ALL, 0, PART_FULL);
	check_member(part(p, 0), 1, PART_SEL_SELF, 0, PART_FULL);
	part_policy_free(p);
}

/* ---- expansion ---------------------------------------------------------------------------- */

struct small {
	struct fabric *f;
	uint32_t sw0, sw1;        /* switch port 0s */
	uint32_t h0, h1, r0, h3;  /* CA / router port 1s */
	uint32_t h3p2;            /* an unlinked CA port */
	uint32_t sw0p1;           /* a switch external port */
	uint64_t gh0, gh1, gr0, gh3, gsw1;
};

static uint32_t port_by(const struct ibsm_fabric *f, uint64_t guid, uint8_t num)
{
	for (uint32_t p = 0; p < f->n_ports; p++)
		if (f->ports[p].guid == guid && f->ports[p].num == num)
			return p;
	g_error("no port 0x%" G_GINT64_MODIFIER "x/%u", (guint64)guid, num);
	return IBSM_NONE;
}

static void small_fabric(struct small *s)
{
	struct fx_builder x;
	fx_builder_init(&x);
	uint32_t s0 = fx_add_switch(&x, 4, "s0"), s1 = fx_add_switch(&x, 4, "s1");
	uint32_t c0 = fx_add_ca(&x, 1, "h0"), c1 = fx_add_ca(&x, 1, "h1");
	uint32_t r = fx_add_ca(&x, 1, "r0"), c3 = fx_add_ca(&x, 2, "h3");
	model_node(x.b, r)->type = IBSM_ROUTER;
	fx_link(&x, s0, 1, s1, 1);
	fx_link(&x, c0, 1, s0, 2);
	fx_link(&x, c1, 1, s0, 3);
	fx_link(&x, r, 1, s1, 2);
	fx_link(&x, c3, 1, s1, 3);
	s->f = fx_finish(&x, 0);
	const struct ibsm_fabric *f = &s->f->pub;
	s->gh0 = FX_CA_GUID_BASE + 1;
	s->gh1 = FX_CA_GUID_BASE + 0x100 + 1;
	s->gr0 = FX_CA_GUID_BASE + 0x200 + 1;
	s->gh3 = FX_CA_GUID_BASE + 0x300 + 1;
	s->gsw1 = FX_SWITCH_GUID_BASE + 1;
	s->sw0 = port_by(f, FX_SWITCH_GUID_BASE, 0);
	s->sw1 = port_by(f, s->gsw1, 0);
	s->sw0p1 = port_by(f, FX_SWITCH_GUID_BASE, 1);
	s->h0 = port_by(f, s->gh0, 1);
	s->h1 = port_by(f, s->gh1, 1);
	s->r0 = port_by(f, s->gr0, 1);
	s->h3 = port_by(f, s->gh3, 1);
	s->h3p2 = port_by(f, FX_CA_GUID_BASE + 0x302, 2);
	g_assert_cmpuint(f->nodes[f->ports[s->r0].node].type, ==, IBSM_ROUTER);
}

static void expect_keys(const struct port_pkeys *pk, uint32_t port, const uint16_t *keys, uint32_t n)
{
	if (pk[port].n != n) {
		GString *g = g_string_new(NULL);
		for (uint32_t i = 0; i < pk[port].n; i++)
			g_string_append_printf(g, " 0x%04x", pk[port].keys[i]);
		g_error("port %u: %u keys (%s), want %u", port, pk[port].n, g->str, n);
	}
	for (uint32_t i = 0; i < n; i++)
		g_assert_cmphex(pk[port].keys[i], ==, keys[i]);
}

#define KEYS(pk, port, ...) do { \
	const uint16_t k_[] = { __VA_ARGS__ }; \
	expect_keys(pk, port, k_, G_N_ELEMENTS(k_)); } while (0)

static void test_expand_default(void)
{
	struct small s;
	small_fabric(&s);
	const struct ibsm_fabric *f = &s.f->pub;
	/* no partitions file: every end port full, so hosts can talk (OpenSM) */
	struct part_policy *p = part_policy_default();
	struct port_pkeys *pk = part_policy_expand(p, f, s.h0);
	KEYS(pk, s.h0, 0xffff);
	KEYS(pk, s.h1, 0xffff);
	KEYS(pk, s.r0, 0xffff);
	KEYS(pk, s.h3, 0xffff);
	KEYS(pk, s.sw0, 0xffff);
	KEYS(pk, s.sw1, 0xffff);
	g_assert_cmpuint(pk[s.h3p2].n, ==, 0);
	part_pkeys_free(pk, f->n_ports);
	pk = part_policy_expand(p, f, IBSM_NONE);
	KEYS(pk, s.h1, 0xffff);
	part_pkeys_free(pk, f->n_ports);
	part_policy_free(p);
	/* a file without the default partition: the SM port full, the rest limited */
	p = part_policy_restricted_default();
	pk = part_policy_expand(p, f, s.h0);
	KEYS(pk, s.h0, 0xffff);
	KEYS(pk, s.h1, 0x7fff);
	KEYS(pk, s.r0, 0x7fff);
	KEYS(pk, s.h3, 0x7fff);
	KEYS(pk, s.sw0, 0x7fff);
	KEYS(pk, s.sw1, 0x7fff);
	g_assert_cmpuint(pk[s.h3p2].n, ==, 0);   /* no link: no end port */
	g_assert_cmpuint(pk[s.sw0p1].n, ==, 0);  /* switch external port */
	g_assert_cmphex(pk[s.h0].indx0_key, ==, 0);
	uint32_t ends = 0;
	for (uint32_t i = 0; i < f->n_ports; i++)
		ends += pk[i].n ? 1 : 0;
	g_assert_cmpuint(ends, ==, 6);
	part_pkeys_free(pk, f->n_ports);
	/* the SM elsewhere (or unknown): nobody full */
	pk = part_policy_expand(p, f, IBSM_NONE);
	KEYS(pk, s.h0, 0x7fff);
	part_pkeys_free(pk, f->n_ports);
	part_policy_free(p);

	p = parse_example("ex7_all_full");
	pk = part_policy_expand(p, f, s.h0);
	KEYS(pk, s.h1, 0xffff);
	KEYS(pk, s.sw1, 0xffff);
	KEYS(pk, s.r0, 0xffff);
	part_pkeys_free(pk, f->n_ports);
	part_policy_free(p);

	p = parse_example("ex2_default_switches");
	pk = part_policy_expand(p, f, s.h1);
	KEYS(pk, s.h0, 0x7fff);
	KEYS(pk, s.h1, 0xffff);
	KEYS(pk, s.sw0, 0xffff);
	part_pkeys_free(pk, f->n_ports);
	part_policy_free(p);
	fabric_unref(s.f);
}

static void test_expand_keywords(void)
{
	struct small s;
	small_fabric(&s);
	const struct ibsm_fabric *f = &s.f->pub;
	struct part_policy *p = parse_str("cas=0x10 : ALL_CAS=full ;\n"
					  "sw=0x20 : ALL_SWITCHES ;\n"
					  "r=0x30 : ALL_ROUTERS=both ;\n"
					  "me=0x40 : SELF=full ;\n"
					  "v=0x50 : ALL_VCAS=full ;\n");
	struct port_pkeys *pk = part_policy_expand(p, f, s.h1);
	KEYS(pk, s.h0, 0x7fff, 0x8010);
	KEYS(pk, s.h1, 0xffff, 0x8010, 0x8040);
	KEYS(pk, s.h3, 0x7fff, 0x8010);
	KEYS(pk, s.sw0, 0x7fff, 0x0020);
	KEYS(pk, s.sw1, 0x7fff, 0x0020);
	KEYS(pk, s.r0, 0x7fff, 0x8030, 0x0030);
	g_assert_cmpuint(pk[s.h3p2].n, ==, 0);
	g_assert_cmpuint(pk[s.sw0p1].n, ==, 0);
	part_pkeys_free(pk, f->n_ports);
	part_policy_free(p);
	fabric_unref(s.f);
}

static void test_expand_guids_both(void)
{
	struct small s;
	small_fabric(&s);
	const struct ibsm_fabric *f = &s.f->pub;
	char *text = g_strdup_printf(
		"p=0x60, indx0 : 0x%" G_GINT64_MODIFIER "x=limited, 0x%" G_GINT64_MODIFIER "x=full,\n"
		"  0x%" G_GINT64_MODIFIER "x=both, 0x%" G_GINT64_MODIFIER "x=limited,\n"
		"  %" G_GINT64_MODIFIER "u, 0x123 ;\n"
		"q=0x61 : 0x%" G_GINT64_MODIFIER "x=limited, ALL_CAS=limited ;\n"
		"q=0x61 : 0x%" G_GINT64_MODIFIER "x=full ;\n",
		(guint64)s.gh0, (guint64)s.gh0, (guint64)s.gh1, (guint64)s.gh1, (guint64)s.gsw1,
		(guint64)s.gh3, (guint64)s.gh3);
	struct part_policy *p = parse_str(text);
	GPtrArray *msgs = g_ptr_array_new_with_free_func(g_free);
	struct port_pkeys *pk = part_policy_expand_msgs(p, f, IBSM_NONE, msgs, NULL);
	KEYS(pk, s.h0, 0x7fff, 0x8060, 0x0061);          /* limited then full: full */
	KEYS(pk, s.h1, 0x7fff, 0x8060, 0x0060, 0x0061);  /* both then limited: both */
	KEYS(pk, s.sw1, 0x7fff, 0x0060);                 /* switch GUID (decimal): port 0 */
	KEYS(pk, s.h3, 0x7fff, 0x8061);                  /* merged definition: full */
	KEYS(pk, s.r0, 0x7fff);
	g_assert_cmphex(pk[s.h0].indx0_key, ==, 0x8060);
	g_assert_cmphex(pk[s.h1].indx0_key, ==, 0x8060);
	g_assert_cmphex(pk[s.sw1].indx0_key, ==, 0x0060);
	g_assert_cmphex(pk[s.h3].indx0_key, ==, 0);
	g_assert_cmpuint(msgs->len, ==, 1);               /* 0x123: no such port */
	g_assert_true(g_str_has_prefix(msgs->pdata[0], "t.conf:3:"));
	g_assert_true(strstr(msgs->pdata[0], "0x0000000000000123") != NULL);
	part_pkeys_free(pk, f->n_ports);
	g_ptr_array_free(msgs, TRUE);
	part_policy_free(p);
	g_free(text);
	fabric_unref(s.f);
}

static void test_all_examples_together(void)
{
	/* every example of the documents in one file (comments rejoined) */
	const char *files[] = { "ex1_default", "ex2_default_switches", "ex3_newpartition",
				"ex4_split", "ex5_shareio", "ex6_mgid", "ex7_all_full" };
	GString *all = g_string_new(NULL);
	for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
		char *path = g_strconcat(EX_DIR, files[i], NULL), *data;
		g_assert_true(g_file_get_contents(path, &data, NULL, NULL));
		g_string_append(all, data);
		g_free(data);
		g_free(path);
	}
	struct part_policy *p = parse_str(all->str);
	g_assert_cmpuint(p->parts->len, ==, 4);  /* Default, NewPartition, YetAnotherOne, ShareIO */
	g_assert_cmpuint(p->skipped->len, ==, 0);
	g_assert_cmpstr(part(p, 0)->name, ==, "Default");
	g_assert_cmpuint(part(p, 0)->mgroups->len, ==, 5);
	g_assert_cmpstr(part(p, 1)->name, ==, "NewPartition");
	g_assert_cmpstr(part(p, 3)->name, ==, "ShareIO");
	part_policy_free(p);
	g_string_free(all, TRUE);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/partitions/example/default", test_ex_default);
	g_test_add_func("/partitions/example/newpartition", test_ex_newpartition);
	g_test_add_func("/partitions/example/split", test_ex_split);
	g_test_add_func("/partitions/example/shareio", test_ex_shareio);
	g_test_add_func("/partitions/example/mgid", test_ex_mgid);
	g_test_add_func("/partitions/example/all_full", test_ex_all_full);
	g_test_add_func("/partitions/example/together", test_all_examples_together);
	g_test_add_func("/partitions/error/structure", test_err_structure);
	g_test_add_func("/partitions/error/keyword", test_err_keyword);
	g_test_add_func("/partitions/error/flag", test_err_flag);
	g_test_add_func("/partitions/error/missing_file", test_err_missing_file);
	g_test_add_func("/partitions/error/saved_copy", test_saved_copy);
	g_test_add_func("/partitions/bad/pkey", test_bad_pkey);
	g_test_add_func("/partitions/bad/values", test_bad_values);
	g_test_add_func("/partitions/merge_and_auto", test_merge_and_auto);
	g_test_add_func("/partitions/expand/default", test_expand_default);
	g_test_add_func("/partitions/expand/keywords", test_expand_keywords);
	g_test_add_func("/partitions/expand/guids_both", test_expand_guids_both);
	return g_test_run();
}
