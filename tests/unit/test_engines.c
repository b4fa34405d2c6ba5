/* test_engines.c - the engine loader (ABI refusals, search, unknown names), the -R chain with
 * fallback, the scope merge rule by rule, and the switch_hops service. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include <glib/gstdio.h>
#include "routing/loader.h"
#include "routing/fallback_list.h"
#include "routing/merge.h"
#include "routing/run.h"
#include "routing/services.h"
#include "fabric_fixture.h"
#include "fabric/hops.h"
#include "base/log.h"
#include "fabric/model.h"

#define BOTH_DIRS TEST_TPLUGIN_DIR ":" TEST_PLUGIN_DIR

/* ---- fabrics ---- */

#define SW_GUID(i) (0x1000u + (i))
#define CA_GUID(i) (0x2000u + (i))

static void port_up(struct model_builder *b, int node, uint8_t port, uint16_t lid, uint8_t lmc)
{
	struct model_port_in *p = &model_node(b, (uint32_t)node)->ports[port];
	p->flags |= IBSM_PORT_PRESENT | IBSM_PORT_LINKUP;
	p->state = IBSM_STATE_ACTIVE;
	p->lid = lid;
	p->lmc = lmc;
	p->guid = model_node(b, (uint32_t)node)->guid + port;
}

static int add_switch(struct model_builder *b, uint32_t i, uint8_t nports, uint16_t lid)
{
	int n = model_add_node(b, SW_GUID(i), IBSM_SWITCH, nports);
	g_assert_cmpint(n, >=, 0);
	for (uint8_t p = 0; p <= nports; p++)
		port_up(b, n, p, p == 0 ? lid : 0, 0);
	model_node(b, (uint32_t)n)->lft_cap = 49152;
	return n;
}

static struct fabric *freeze(struct model_builder *b)
{
	GError *err = NULL;
	struct fabric *f = model_freeze(b, 1, &err);
	g_assert_no_error(err);
	g_assert_nonnull(f);
	model_builder_free(b);
	return f;
}

/* Two switches S0 - S1 (ports 1), CA0 on S0 port 2, CA1 on S1 port 2. Switch LIDs 1 and 2,
 * CA0 LIDs 4-5, CA1 LIDs 6-7 (LMC 1); LID 3 unused. Switch ids 0, 1 (sorted by GUID). */
static struct fabric *tiny_fabric(void)
{
	struct model_builder *b = model_builder_new();
	int s0 = add_switch(b, 0, 4, 1), s1 = add_switch(b, 1, 4, 2);
	int c0 = model_add_node(b, CA_GUID(0), IBSM_CA, 1);
	int c1 = model_add_node(b, CA_GUID(1), IBSM_CA, 1);
	port_up(b, c0, 1, 4, 1);
	port_up(b, c1, 1, 6, 1);
	model_link(b, (uint32_t)s0, 1, (uint32_t)s1, 1);
	model_link(b, (uint32_t)s0, 2, (uint32_t)c0, 1);
	model_link(b, (uint32_t)s1, 2, (uint32_t)c1, 1);
	struct fabric *f = freeze(b);
	g_assert_cmpuint(f->pub.max_lid, ==, 7);
	g_assert_cmpuint(f->pub.n_switches, ==, 2);
	return f;
}

/* n switches in a line (ring: also n-1 to 0); switch i port 1 -> i+1 port 2. */
static struct fabric *line_fabric(uint32_t n, int ring)
{
	struct model_builder *b = model_builder_new();
	for (uint32_t i = 0; i < n; i++)
		add_switch(b, i, 4, (uint16_t)(i + 1));
	for (uint32_t i = 0; i + 1 < n; i++)
		model_link(b, i, 1, i + 1, 2);
	if (ring)
		model_link(b, n - 1, 1, 0, 2);
	return freeze(b);
}

static uint32_t port_id(const struct fabric *f, uint64_t node_guid, uint8_t num)
{
	uint32_t n = fabric_node_by_guid(f, node_guid);
	g_assert_cmpuint(n, !=, IBSM_NONE);
	return f->nodes[n].port0 + num;
}

static void bit_set(uint64_t *w, uint32_t i)
{
	w[i / 64] |= 1ull << (i % 64);
}

/* ---- loader ---- */

static void expect_refusal(const char *name, int code, const char *const *needles)
{
	GError *err = NULL;
	struct engine *e = engine_load(name, TEST_TPLUGIN_DIR, &err);
	g_assert_null(e);
	g_assert_error(err, ENGINE_ERROR, code);
	g_test_message("%s: %s", name, err->message);
	for (const char *const *n = needles; *n; n++)
		if (!strstr(err->message, *n))
			g_error("refusal of %s lacks '%s': %s", name, *n, err->message);
	g_error_free(err);
}

#define ABI_STR2(a, b) "ABI " #a "." #b
#define ABI_STR(a, b) ABI_STR2(a, b)
#define ABI_NOW ABI_STR(IBSM_ABI_MAJOR, IBSM_ABI_MINOR)
#define ABI_NEXT "ABI 1.5" /* newminor.so: IBSM_ABI_MINOR + 1 */
_Static_assert(IBSM_ABI_MAJOR == 1 && IBSM_ABI_MINOR == 4, "ABI_NEXT is IBSM_ABI_MINOR + 1");

static void test_abi_major(void)
{
	const char *n[] = { "badabi.so", "ABI 2.0", ABI_NOW, "major", NULL };
	expect_refusal("badabi", ENGINE_ERROR_ABI, n);
}

static void test_abi_minor(void)
{
	const char *n[] = { "newminor.so", ABI_NEXT, ABI_NOW, "newer", NULL };
	expect_refusal("newminor", ENGINE_ERROR_ABI, n);
}

static void test_abi_short(void)
{
	char size10[32];
	snprintf(size10, sizeof(size10), "%zu", (size_t)ENGINE_SIZE_ABI_1_1);
	const char *n[] = { "shortabi.so", "16 bytes", size10, "ABI 1.1", NULL };
	expect_refusal("shortabi", ENGINE_ERROR_ABI, n);
	g_assert_cmpuint(ENGINE_SIZE_ABI_1_1, ==, sizeof(struct ibsm_engine));
}

static void test_abi_noroute(void)
{
	const char *n[] = { "noroute.so", "route()", NULL };
	expect_refusal("noroute", ENGINE_ERROR_ABI, n);
}

static void test_not_engine(void)
{
	const char *n[] = { "notengine.so", "ibsm_engine", NULL };
	expect_refusal("notengine", ENGINE_ERROR_ABI, n);
}

static void test_load_ok(void)
{
	GError *err = NULL;
	struct engine *e = engine_load("portone", TEST_TPLUGIN_DIR, &err);
	g_assert_no_error(err);
	g_assert_nonnull(e);
	g_assert_cmpstr(e->ops->name, ==, "portone");
	g_assert_cmpstr(e->path, ==, TEST_TPLUGIN_DIR "/portone.so");
	engine_unload(e);
}

static void test_unknown_lists(void)
{
	GError *err = NULL;
	struct engine *e = engine_load("nosuch", BOTH_DIRS, &err);
	g_assert_null(e);
	g_assert_error(err, ENGINE_ERROR, ENGINE_ERROR_NOT_FOUND);
	g_test_message("%s", err->message);
	g_assert_nonnull(strstr(err->message, "'nosuch'"));
	g_assert_nonnull(strstr(err->message, TEST_TPLUGIN_DIR));
	g_assert_nonnull(strstr(err->message, TEST_PLUGIN_DIR));
	const char *list = strstr(err->message, "available engines: ");
	g_assert_nonnull(list);
	/* sorted: badabi < failing < portone */
	const char *a = strstr(list, "badabi"), *b = strstr(list, "failing"), *c = strstr(list, "portone");
	g_assert_true(a && b && c && a < b && b < c);
	if (g_file_test(TEST_PLUGIN_DIR "/minhop.so", G_FILE_TEST_EXISTS))
		g_assert_nonnull(strstr(list, "minhop"));
	g_error_free(err);

	char *avail = engine_list_available(BOTH_DIRS);
	/* ", "-separated, sorted and unique, whatever other engines sit among the test ones */
	gchar **names = g_strsplit(avail, ", ", -1);
	int seen = 0;
	for (guint i = 0; names[i]; i++) {
		g_assert_null(strstr(names[i], ".so"));
		if (i)
			g_assert_cmpint(strcmp(names[i - 1], names[i]), <, 0);
		seen += !strcmp(names[i], "badabi") || !strcmp(names[i], "failing") ||
			!strcmp(names[i], "portone");
	}
	g_assert_cmpint(seen, ==, 3);
	g_strfreev(names);
	g_free(avail);
}

static void test_bad_name(void)
{
	GError *err = NULL;
	g_assert_null(engine_load("../tests/plugins/failing", TEST_TPLUGIN_DIR, &err));
	g_assert_error(err, ENGINE_ERROR, ENGINE_ERROR_INVALID);
	g_clear_error(&err);
	g_assert_null(engine_load("", TEST_TPLUGIN_DIR, &err));
	g_assert_error(err, ENGINE_ERROR, ENGINE_ERROR_INVALID);
	g_clear_error(&err);
}

static void test_env_path(void)
{
	GError *err = NULL;
	g_assert_null(engine_load("failing", "/nonexistent", &err));
	g_assert_error(err, ENGINE_ERROR, ENGINE_ERROR_NOT_FOUND);
	g_clear_error(&err);
	g_setenv("IBSM_PLUGIN_PATH", "/nonexistent:" TEST_TPLUGIN_DIR, TRUE);
	struct engine *e = engine_load("failing", "/nonexistent", &err);
	g_unsetenv("IBSM_PLUGIN_PATH");
	g_assert_no_error(err);
	g_assert_nonnull(e);
	engine_unload(e);
}

static char *log_path;

static void log_to_file(void)
{
	g_free(log_path);
	int fd = g_file_open_tmp("test_engines-XXXXXX.log", &log_path, NULL);
	g_assert_cmpint(fd, >=, 0);
	close(fd);
	g_assert_cmpint(log_open(log_path, 0), ==, 0);
	log_set_level(IBSM_LOG_INFO);
}

static char *log_text(void)
{
	char *text = NULL;
	log_close();
	g_assert_true(g_file_get_contents(log_path, &text, NULL, NULL));
	g_unlink(log_path);
	return text;
}

static void test_chain_check(void)
{
	GError *err = NULL;
	struct sm_options o = { .plugin_dir = (char *)TEST_TPLUGIN_DIR };
	struct fallback_list *c = fallback_list_new("failing, portone ,no_fallback", &o, &err);
	g_assert_no_error(err);
	g_assert_nonnull(c);
	g_assert_cmpuint(c->candidates->len, ==, 2);  /* no fallback appended */
	g_assert_cmpuint(c->n_named, ==, 2);
	fallback_list_free(c);
	/* a name that does not load is skipped, loudly (CHN-0003, naming the directories
	 * searched), never a failed list */
	log_to_file();
	c = fallback_list_new("failing,nosuch", &o, &err);
	char *log = log_text();
	g_assert_no_error(err);
	g_assert_nonnull(c);
	g_assert_cmpuint(c->n_named, ==, 1);
	g_assert_cmpuint(c->n_skipped, ==, 1);
	g_assert_cmpstr(c->skipped_names->str, ==, "nosuch");
	g_assert_nonnull(strstr(c->skipped->str, "nosuch: routing engine 'nosuch' not found"));
	g_assert_nonnull(strstr(log, "ERR  CHN-0003 routing_engine 'failing,nosuch': engine nosuch "
				"cannot be used: routing engine 'nosuch' not found (no nosuch.so in "
				TEST_TPLUGIN_DIR));
	g_assert_nonnull(strstr(log, "skipped (minhop is tried instead)"));
	g_free(log);
	fallback_list_free(c);
	/* nothing left that can route: an empty list, said (CHN-0005), not a failed one */
	log_to_file();
	c = fallback_list_new("nosuch,no_fallback", &o, &err);
	log = log_text();
	g_assert_no_error(err);
	g_assert_nonnull(c);
	g_assert_cmpuint(c->candidates->len, ==, 0);
	g_assert_nonnull(strstr(log, "CHN-0003 routing_engine 'nosuch,no_fallback': engine nosuch "
				"cannot be used"));
	g_assert_nonnull(strstr(log, "skipped (no_fallback: nothing else is tried)"));
	g_assert_nonnull(strstr(log, "ERR  CHN-0005 routing_engine 'nosuch,no_fallback': no engine "
				"can route (nosuch: routing engine 'nosuch' not found"));
	g_free(log);
	fallback_list_free(c);
	g_assert_null(fallback_list_new("no_fallback", &o, &err));
	g_assert_error(err, ENGINE_ERROR, ENGINE_ERROR_INVALID);
	g_clear_error(&err);
}

/* ABI 1.2: an orchestrator loads as one (no engine table), routes alone, and the default one
 * refuses to start without its policy. */
static void test_orchestrator_load(void)
{
	GError *err = NULL;
	struct engine *e = engine_load("orch_test", TEST_TPLUGIN_DIR, &err);
	g_assert_no_error(err);
	g_assert_nonnull(e);
	g_assert_null(e->ops);
	g_assert_nonnull(e->orch);
	g_assert_cmpstr(e->orch->name, ==, "orch_test");
	g_assert_cmpuint(e->orch->abi_minor, ==, IBSM_ABI_MINOR);
	engine_unload(e);
	struct sm_options o = { .plugin_dir = (char *)TEST_TPLUGIN_DIR ":" TEST_PLUGIN_DIR };
	struct fallback_list *c = fallback_list_new("orch_test", &o, &err);
	g_assert_no_error(err);
	g_assert_nonnull(c);
	g_assert_nonnull(c->orch);
	g_assert_cmpuint(c->candidates->len, ==, 1); /* the step it opened: updn, id 7 */
	g_assert_cmpuint(((struct routing_step *)g_ptr_array_index(c->candidates, 0))->id, ==, 7);
	fallback_list_free(c);
	g_assert_null(fallback_list_new("orch_test,minhop", &o, &err));
	g_assert_error(err, ENGINE_ERROR, ENGINE_ERROR_INVALID);
	g_assert_nonnull(strstr(err->message, "orchestrator"));
	g_clear_error(&err);
	/* the default orchestrator without rch_policy_file */
	g_assert_null(fallback_list_new("chain", &o, &err));
	g_assert_error(err, ENGINE_ERROR, ENGINE_ERROR_INVALID);
	g_assert_nonnull(strstr(err->message, "rch_policy_file is not set"));
	g_clear_error(&err);
	/* a policy file that does not exist: refused, naming it */
	o.rch_policy_file = (char *)"/nonexistent/chain.conf";
	g_assert_null(fallback_list_new("minhop", &o, &err));
	g_assert_nonnull(err);
	g_assert_nonnull(strstr(err->message, "/nonexistent/chain.conf"));
	g_clear_error(&err);
}

/* Builds the chain, routes f once, frees the chain (the result keeps its step alive). */
static struct routing_result *run_chain(const char *spec, const struct sm_options *o,
					struct fabric *f, GError **err)
{
	struct fallback_list *c = fallback_list_new(spec, o, err);
	if (!c)
		return NULL;
	struct routing_result *r = routing_run(c, f, err);
	fallback_list_free(c);
	return r;
}

/* ---- the run ---- */

static void options_for_test(struct sm_options *o)
{
	memset(o, 0, sizeof(*o));
	o->lmc = 1;
	o->plugin_dir = (char *)BOTH_DIRS;
}

static void test_run_fallback_chain(void)
{
	struct fabric *f = tiny_fabric();
	struct sm_options o;
	options_for_test(&o);
	GError *err = NULL;
	log_to_file();
	struct routing_result *r = run_chain("failing,portone", &o, f, &err);
	char *log = log_text();
	g_assert_no_error(err);
	g_assert_nonnull(r);
	g_assert_cmpstr(r->engine, ==, "portone");
	g_assert_cmpuint(r->stride, ==, 8);
	g_assert_cmpuint(r->n_switches, ==, 2);
	g_assert_cmpuint(r->parts->len, ==, 1);
	g_assert_true(r->f == f);
	/* out of port 1 but what each switch delivers: its own LID (1, 2) on port 0, its CA's
	 * LIDs (4-5 on S0, 6-7 on S1) on port 2; LIDs 0 and 3 have no port */
	static const uint8_t want[2][8] = { { 255, 0, 1, 255, 2, 2, 1, 1 },
					    { 255, 1, 0, 255, 1, 1, 2, 2 } };
	for (uint32_t s = 0; s < 2; s++)
		for (uint32_t l = 0; l < 8; l++)
			g_assert_cmpuint(r->lft[s * 8 + l], ==, want[s][l]);
	g_assert_nonnull(strstr(log, "RTE-0001 routing engine failing declined: test: always fails"));
	/* the core services: log prefix, config by OpenSM name (unknown -> NULL), switch_hops */
	g_assert_nonnull(strstr(log, "ENG-0001 portone: lmc=1 unknown=NULL hops01=1"));
	g_assert_nonnull(strstr(log, "RTE-0003 routed by portone"));
	g_free(log);
	/* the result holds the generation and the engine instance after the chain is gone; the
	 * step's walk memo and its services (last_rows) hold the tables, never the result (which
	 * holds the step): letting the result go lets the generation go */
	g_assert_cmpint(r->refs, ==, 1);
	g_assert_cmpint(routing_tables_refs(r->lft), ==, 3);
	struct fabric *watch = fabric_ref(f);
	fabric_unref(f);
	g_assert_cmpuint(r->f->pub.n_switches, ==, 2);
	routing_result_unref(r);
	g_assert_cmpint(watch->refs, ==, 1);
	fabric_unref(watch);
}

/* Rows copied by minhop on a fat tree with one link between the top two levels gone, as
 * its verbose line says them, "(N rows as the last fill left them" (-1: no such line). */
static long rows_copied(const char *log, int nth)
{
	const char *at = log;
	for (int i = 0; i <= nth; i++) {
		at = strstr(at, "rows as the last fill left them");
		if (!at)
			return -1;
		at++;
	}
	const char *open = at - 1;
	while (open > log && *open != '(')
		open--;
	return strtol(open + 1, NULL, 10);
}

/* -R minhop through the core: the run after a link went away is lent the rows the last run
 * left (ABI 1.4 last_rows: the tables programmed, which the core keeps with their own
 * reference, not a copy in the engine's memo) and copies those whose inputs did not change;
 * its tables equal, byte for byte, a fresh list's on the same fabric. */
static void test_run_last_rows(void)
{
	struct fabric *f1 = fx_kary_ntree(4, 3, 0);
	struct fabric *f2 = fx_first_link_gone(f1, f1->pub.n_switches - 1, 0); /* a top switch's */
	GError *err = NULL;
	struct sm_options o;
	options_for_test(&o);
	o.lmc = 0;
	log_to_file();
	log_set_level(IBSM_LOG_VERBOSE);
	struct fallback_list *c = fallback_list_new("minhop", &o, &err);
	g_assert_no_error(err);
	struct routing_result *r1 = routing_run(c, f1, &err);
	g_assert_no_error(err);
	struct routing_result *r2 = routing_run(c, f2, &err);
	g_assert_no_error(err);
	/* the step lends r2's tables now: one reference more than r2's own */
	g_assert_cmpint(routing_tables_refs(r2->lft), >=, 2);
	fallback_list_free(c);
	struct routing_result *fresh = run_chain("minhop", &o, f2, &err);
	g_assert_no_error(err);
	char *log = log_text();
	g_assert_cmpint(rows_copied(log, 0), ==, 0);  /* the first run: nothing to copy */
	g_assert_cmpint(rows_copied(log, 1), >, 0);   /* after the link: most rows copied */
	g_assert_cmpint(rows_copied(log, 2), ==, 0);  /* the fresh list */
	g_assert_cmpuint(r2->stride, ==, fresh->stride);
	g_assert_cmpmem(r2->lft, (size_t)r2->n_switches * r2->stride, fresh->lft,
			(size_t)fresh->n_switches * fresh->stride);
	g_free(log);
	routing_result_unref(r1);
	routing_result_unref(r2);
	routing_result_unref(fresh);
	fabric_unref(f1);
	fabric_unref(f2);
}

static void test_run_no_fallback(void)
{
	struct fabric *f = tiny_fabric();
	struct sm_options o;
	options_for_test(&o);
	GError *err = NULL;
	log_to_file();
	struct routing_result *r = run_chain("failing,no_fallback", &o, f, &err);
	char *log = log_text();
	g_assert_null(r);
	g_assert_error(err, ENGINE_ERROR, ENGINE_ERROR_ROUTE);
	g_assert_nonnull(strstr(err->message, "failing: test: always fails"));
	g_assert_null(strstr(err->message, "minhop"));
	g_assert_null(strstr(log, "falling back"));
	g_error_free(err);
	g_free(log);
	fabric_unref(f);
}

/* A name that does not load is a failed engine, never a failed start: skipped loudly, the
 * next engine of the list routes, and the run says what was skipped. */
static void test_run_unknown_skipped(void)
{
	struct fabric *f = tiny_fabric();
	struct sm_options o;
	options_for_test(&o);
	GError *err = NULL;
	log_to_file();
	struct routing_result *r = run_chain("nosuch,portone", &o, f, &err);
	char *log = log_text();
	g_assert_no_error(err);
	g_assert_nonnull(r);
	g_assert_cmpstr(r->engine, ==, "portone");
	g_assert_nonnull(strstr(log, "ERR  CHN-0003 routing_engine 'nosuch,portone': engine nosuch "
				"cannot be used: routing engine 'nosuch' not found"));
	g_assert_nonnull(strstr(log, "skipped (the next engine of the list is tried)"));
	g_assert_nonnull(strstr(log, "RTE-0003 routed by portone"));
	g_assert_nonnull(strstr(log, "not loaded, skipped: nosuch (CHN-0003)"));
	g_free(log);
	routing_result_unref(r);
	/* every named engine missing: minhop, and the log says why */
	log_to_file();
	r = run_chain("nosuch,nosuch2", &o, f, &err);
	log = log_text();
	g_assert_no_error(err);
	g_assert_nonnull(r);
	g_assert_cmpstr(r->engine, ==, "minhop");
	g_assert_nonnull(strstr(log, "RTE-0002 no engine of 'nosuch,nosuch2' could route (not "
				"loaded: nosuch, nosuch2); falling back to minhop"));
	g_free(log);
	routing_result_unref(r);
	/* and under no_fallback: the run fails with the reasons, each sweep alike */
	r = run_chain("nosuch,no_fallback", &o, f, &err);
	g_assert_null(r);
	g_assert_error(err, ENGINE_ERROR, ENGINE_ERROR_ROUTE);
	g_assert_nonnull(strstr(err->message, "nosuch: routing engine 'nosuch' not found"));
	g_clear_error(&err);
	fabric_unref(f);
}

/* make check builds minhop before the unit tests: its absence is a failure, not a skip */
/* An engine built against the frozen ABI 1.0 headers (tests/plugins/abi-1.0) still loads in
 * this 1.1 core, without the 1.1 fields, and routes a torus correctly. */
static void test_abi10_engine(void)
{
	GError *err = NULL;
	struct engine *e = engine_load("abi10_minhop", TEST_TPLUGIN_DIR, &err);
	g_assert_no_error(err);
	g_assert_nonnull(e);
	g_assert_cmpuint(e->ops->abi_major, ==, 1);
	g_assert_cmpuint(e->ops->abi_minor, ==, 0);
	g_assert_cmpuint(e->ops->size, ==, ENGINE_SIZE_ABI_1_0);
	g_assert_null(e->keys);     /* a 1.0 engine has no key list: never read past its struct */
	g_assert_null(e->summary);
	engine_unload(e);
	struct fabric *f = fx_torus2d(4, 3, 2, 1);
	struct sm_options o = { .plugin_dir = (char *)TEST_TPLUGIN_DIR };
	struct routing_result *r = run_chain("abi10_minhop,no_fallback", &o, f, &err);
	g_assert_no_error(err);
	g_assert_nonnull(r);
	g_assert_cmpstr(r->engine, ==, "abi10_minhop");
	struct fx_walk_stats st;
	fx_walk_all(&f->pub, r->lft, r->stride, &st);
	g_assert_cmpuint(st.pairs, >, 0);
	g_assert_cmpuint(st.delivered, ==, st.pairs);
	routing_result_unref(r);
	fabric_unref(f);
}

/* cancelled() is real: a routing job on the routing thread stops when the chain is cancelled
 * (what SIGTERM or a trap does during a sweep). The slow engine would give up with "never
 * cancelled" (ENGINE_ERROR_ROUTE) if the flag did not reach it. */
static void test_cancel_job(void)
{
	struct fabric *f = tiny_fabric();
	struct sm_options o = { .plugin_dir = (char *)TEST_TPLUGIN_DIR };
	GError *err = NULL;
	struct fallback_list *c = fallback_list_new("slow,no_fallback", &o, &err);
	g_assert_no_error(err);
	log_to_file();
	struct routing_job *j = routing_job_start(c, f);
	/* let it start waiting, then cancel (the order does not matter: the flag stays set) */
	g_usleep(20000);
	fallback_list_cancel(c, 1);
	struct routing_result *r = routing_job_join(j, &err);
	char *log = log_text();
	g_assert_null(r);
	g_assert_error(err, ENGINE_ERROR, ENGINE_ERROR_CANCELLED);
	g_assert_nonnull(strstr(log, "routing engine slow declined: cancelled"));
	g_clear_error(&err);
	g_free(log);
	/* a new job clears the flag: without a cancel the engine runs to its own limit (here 0 s,
	 * set through its declared key: the configuration reaches the engine) */
	fallback_list_free(c);
	struct sm_options o2 = o;
	options_set_extra(&o2, "slow_seconds", "0", "test:1:1");
	c = fallback_list_new("slow,no_fallback", &o2, &err);
	g_assert_no_error(err);
	fallback_list_cancel(c, 1);
	j = routing_job_start(c, f);
	r = routing_job_join(j, &err);
	g_assert_null(r);
	g_assert_error(err, ENGINE_ERROR, ENGINE_ERROR_ROUTE);
	g_assert_nonnull(strstr(err->message, "never cancelled"));
	g_clear_error(&err);
	fallback_list_free(c);
	g_hash_table_destroy(o2.extra);
	fabric_unref(f);
}

static int have_minhop(void)
{
	g_assert_true(g_file_test(TEST_PLUGIN_DIR "/minhop.so", G_FILE_TEST_EXISTS));
	return 1;
}

static void run_to_minhop_declined(const char *chain, const char *declined)
{
	struct fabric *f = tiny_fabric();
	struct sm_options o;
	options_for_test(&o);
	GError *err = NULL;
	log_to_file();
	struct routing_result *r = run_chain(chain, &o, f, &err);
	char *log = log_text();
	g_assert_no_error(err);
	g_assert_nonnull(r);
	g_assert_cmpstr(r->engine, ==, "minhop");
	g_assert_nonnull(strstr(log, declined));
	/* minhop's tables, not failing's scribbles (port 1 everywhere): S0 reaches CA0 by port 2 */
	g_assert_cmpuint(r->lft[0 * 8 + 4], ==, 2);
	g_assert_cmpuint(r->lft[0 * 8 + 1], ==, 0);
	g_assert_cmpuint(r->lft[1 * 8 + 4], ==, 1);
	g_assert_cmpuint(r->lft[1 * 8 + 6], ==, 2);
	g_free(log);
	routing_result_unref(r);
	fabric_unref(f);
}

static void run_to_minhop(const char *chain)
{
	run_to_minhop_declined(chain, "failing declined: test: always fails");
}

/* An engine that says it succeeded but leaves holes has failed: its tables are not used. */
static void test_run_holes_fall_back(void)
{
	if (have_minhop())
		run_to_minhop_declined("badport", "RTE-0001 routing engine badport declined: its tables "
				       "leave holes: 12 of 12 (switch, LID) pairs not delivered, e.g. switch "
				       "0x0000000000001000 to LID 1: no entry at switch 0x0000000000001000; 12 of "
				       "its entries name ports the switches do not have");
}

static void test_run_holes_no_fallback(void)
{
	struct fabric *f = tiny_fabric();
	struct sm_options o;
	options_for_test(&o);
	GError *err = NULL;
	log_to_file();
	struct routing_result *r = run_chain("badport,no_fallback", &o, f, &err);
	g_free(log_text());
	g_assert_null(r);
	g_assert_error(err, ENGINE_ERROR, ENGINE_ERROR_ROUTE);
	g_assert_nonnull(strstr(err->message, "badport: its tables leave holes"));
	g_clear_error(&err);
	fabric_unref(f);
}

static void test_run_failing_minhop(void)
{
	if (have_minhop())
		run_to_minhop("failing,minhop");
}

static void test_run_implicit_fallback(void)
{
	if (have_minhop())
		run_to_minhop("failing");
}

/* ---- the merge ---- */

static void fill(uint8_t *lft, uint8_t v)
{
	memset(lft, v, 2 * 8);
}

static void test_merge_switch_scope(void)
{
	struct fabric *f = tiny_fabric();
	uint8_t step_lft[16], final[16];
	uint64_t sw[1] = { 0 };
	bit_set(sw, 0);
	struct ibsm_scope s = { .size = sizeof(s), .switches = { sw, 2 } };
	struct ibsm_routes step = { .size = sizeof(step), .stride = 8, .lft = step_lft };
	fill(step_lft, 3);
	fill(final, IBSM_NO_PORT);
	g_assert_cmpint(routing_merge(f, &s, &step, final, 8, NULL, 0), ==, 0);
	for (uint32_t l = 0; l < 8; l++) {
		g_assert_cmpuint(final[l], ==, (l == 0 || l == 3) ? IBSM_NO_PORT : 3);
		g_assert_cmpuint(final[8 + l], ==, IBSM_NO_PORT);  /* switch 1 outside scope */
	}
	fabric_unref(f);
}

static void test_merge_dest_scope(void)
{
	struct fabric *f = tiny_fabric();
	uint8_t step_lft[16], final[16];
	uint64_t dests[1] = { 0 };
	bit_set(dests, port_id(f, CA_GUID(0), 1));
	bit_set(dests, port_id(f, SW_GUID(1), 0));
	struct ibsm_scope s = { .size = sizeof(s), .dests = { dests, f->pub.n_ports } };
	struct ibsm_routes step = { .size = sizeof(step), .stride = 8, .lft = step_lft };
	fill(step_lft, 3);
	fill(final, IBSM_NO_PORT);
	g_assert_cmpint(routing_merge(f, &s, &step, final, 8, NULL, 0), ==, 0);
	for (uint32_t sw = 0; sw < 2; sw++)
		for (uint32_t l = 0; l < 8; l++)
			g_assert_cmpuint(final[sw * 8 + l], ==, (l == 2 || l == 4 || l == 5) ? 3 : IBSM_NO_PORT);
	fabric_unref(f);
}

static void test_merge_path_bits(void)
{
	struct fabric *f = tiny_fabric();
	uint8_t step_lft[16], final[16];
	struct ibsm_scope s = { .size = sizeof(s), .path_bit_first = 1, .path_bit_count = 1 };
	struct ibsm_routes step = { .size = sizeof(step), .stride = 8, .lft = step_lft };
	fill(step_lft, 3);
	fill(final, IBSM_NO_PORT);
	g_assert_cmpint(routing_merge(f, &s, &step, final, 8, NULL, 0), ==, 0);
	for (uint32_t sw = 0; sw < 2; sw++)
		for (uint32_t l = 0; l < 8; l++)  /* offset 1: LIDs 5 and 7 only (switches have 0) */
			g_assert_cmpuint(final[sw * 8 + l], ==, (l == 5 || l == 7) ? 3 : IBSM_NO_PORT);
	/* offset 0 only */
	s.path_bit_first = 0;
	fill(final, IBSM_NO_PORT);
	g_assert_cmpint(routing_merge(f, &s, &step, final, 8, NULL, 0), ==, 0);
	for (uint32_t l = 0; l < 8; l++)
		g_assert_cmpuint(final[l], ==, (l == 1 || l == 2 || l == 4 || l == 6) ? 3 : IBSM_NO_PORT);
	fabric_unref(f);
}

static void test_merge_no_port_keeps(void)
{
	struct fabric *f = tiny_fabric();
	uint8_t step_lft[16], final[16];
	struct ibsm_scope s = { .size = sizeof(s) };
	struct ibsm_routes step = { .size = sizeof(step), .stride = 8, .lft = step_lft };
	fill(final, 2);             /* an earlier step routed everything by port 2 */
	fill(step_lft, IBSM_NO_PORT);
	step_lft[4] = 3;            /* this step routes only (S0, LID 4) */
	step_lft[8 + 7] = 0;        /* and (S1, LID 7) through port 0 */
	g_assert_cmpint(routing_merge(f, &s, &step, final, 8, NULL, 0), ==, 0);
	for (uint32_t i = 0; i < 16; i++)
		g_assert_cmpuint(final[i], ==, i == 4 ? 3 : i == 15 ? 0 : 2);
	fabric_unref(f);
}

static void test_merge_later_overrides(void)
{
	struct fabric *f = tiny_fabric();
	uint8_t a[16], b[16], final[16];
	struct ibsm_scope s = { .size = sizeof(s) };
	struct ibsm_routes sa = { .size = sizeof(sa), .stride = 8, .lft = a };
	struct ibsm_routes sb = { .size = sizeof(sb), .stride = 8, .lft = b };
	fill(final, IBSM_NO_PORT);
	fill(a, 1);
	fill(b, 4);
	g_assert_cmpint(routing_merge(f, &s, &sa, final, 8, NULL, 0), ==, 0);
	g_assert_cmpuint(final[6], ==, 1);
	g_assert_cmpint(routing_merge(f, &s, &sb, final, 8, NULL, 0), ==, 0);
	for (uint32_t l = 0; l < 8; l++)
		g_assert_cmpuint(final[8 + l], ==, (l == 0 || l == 3) ? IBSM_NO_PORT : 4);
	fabric_unref(f);
}

static void test_merge_bad_port(void)
{
	struct fabric *f = tiny_fabric();
	uint8_t step_lft[16], final[16];
	struct ibsm_scope s = { .size = sizeof(s) };
	struct ibsm_routes step = { .size = sizeof(step), .stride = 8, .lft = step_lft };
	fill(final, 2);
	fill(step_lft, IBSM_NO_PORT);
	step_lft[4] = 5;            /* switches have 4 ports */
	step_lft[5] = 4;
	step_lft[8 + 6] = 200;
	log_to_file();
	g_assert_cmpint(routing_merge(f, &s, &step, final, 8, NULL, 0), ==, 2);
	char *log = log_text();
	g_assert_nonnull(strstr(log, "MRG-0001"));
	g_assert_nonnull(strstr(log, "exit port 5 beyond its 4 ports"));
	g_free(log);
	g_assert_cmpuint(final[4], ==, 2);
	g_assert_cmpuint(final[5], ==, 4);
	g_assert_cmpuint(final[8 + 6], ==, 2);
	step.stride = 9;
	g_assert_cmpint(routing_merge(f, &s, &step, final, 8, NULL, 0), ==, -EINVAL);
	fabric_unref(f);
}

/* routing_merge_in_place() leaves in the step's own rows exactly what routing_merge() writes
 * over tables with no route, for scopes of switches, destinations and path bits, with
 * refused ports and no-route entries among the rows. */
static void test_merge_in_place(void)
{
	struct fabric *f = tiny_fabric();
	uint64_t sw[1] = { 0 }, dests[1] = { 0 };
	bit_set(sw, 1);
	bit_set(dests, port_id(f, CA_GUID(0), 1));
	bit_set(dests, port_id(f, SW_GUID(1), 0));
	struct ibsm_scope scopes[] = {
		{ .size = sizeof(struct ibsm_scope) },
		{ .size = sizeof(struct ibsm_scope), .switches = { sw, 2 } },
		{ .size = sizeof(struct ibsm_scope), .dests = { dests, f->pub.n_ports } },
		{ .size = sizeof(struct ibsm_scope), .path_bit_first = 1, .path_bit_count = 1 },
	};
	for (unsigned k = 0; k < G_N_ELEMENTS(scopes); k++) {
		uint8_t rows[16], final[16];
		for (unsigned i = 0; i < 16; i++)  /* routes, no-routes, ports beyond the 4 */
			rows[i] = (uint8_t)(i % 5 == 4 ? IBSM_NO_PORT : i % 7 == 6 ? 9 : 1 + i % 4);
		struct ibsm_routes step = { .size = sizeof(step), .stride = 8, .lft = rows };
		fill(final, IBSM_NO_PORT);
		int want = routing_merge(f, &scopes[k], &step, final, 8, NULL, 0);
		g_assert_cmpint(routing_merge_in_place(f, &scopes[k], &step), ==, want);
		for (unsigned i = 0; i < 16; i++)
			g_assert_cmpuint(rows[i], ==, final[i]);
	}
	fabric_unref(f);
}

/* ---- switch_hops ---- */

static const enum hops_method methods[] = { HOPS_AUTO, HOPS_BFS, HOPS_BITSET };

static void test_hops_ring(void)
{
	const uint32_t n = 7;
	struct fabric *f = line_fabric(n, 1);
	struct ibsm_scope s = { .size = sizeof(s) };
	uint8_t *hops = g_malloc(n * n);
	for (unsigned m = 0; m < G_N_ELEMENTS(methods); m++) {
		g_assert_cmpint(switch_hops_method(&f->pub, &s, hops, methods[m]), ==, 0);
		for (uint32_t a = 0; a < n; a++)
			for (uint32_t b = 0; b < n; b++) {
				uint32_t d = a > b ? a - b : b - a;
				g_assert_cmpuint(hops[a * n + b], ==, MIN(d, n - d));
			}
	}
	/* the same through the service lent to engines */
	struct ibsm_core *core = services_new("t", NULL, NULL, NULL);
	memset(hops, 0, n * n);
	g_assert_cmpint(core->switch_hops(core, &f->pub, &s, hops), ==, 0);
	g_assert_cmpuint(hops[0 * n + 4], ==, 3);
	g_assert_null(core->config(core, "lmc"));
	services_free(core);
	g_free(hops);
	fabric_unref(f);
}

static void test_hops_excluded_link(void)
{
	/* ring of 6 with the link 5 -> 0 excluded (port 2 of switch 0 out of scope): a line */
	const uint32_t n = 6;
	struct fabric *f = line_fabric(n, 1);
	uint64_t *ports = g_new0(uint64_t, (f->pub.n_ports + 63) / 64);
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		bit_set(ports, p);
	uint32_t cut = port_id(f, SW_GUID(0), 2);
	ports[cut / 64] &= ~(1ull << (cut % 64));
	struct ibsm_scope s = { .size = sizeof(s), .ports = { ports, f->pub.n_ports } };
	uint8_t *hops = g_malloc(n * n);
	for (unsigned m = 0; m < G_N_ELEMENTS(methods); m++) {
		g_assert_cmpint(switch_hops_method(&f->pub, &s, hops, methods[m]), ==, 0);
		for (uint32_t a = 0; a < n; a++)
			for (uint32_t b = 0; b < n; b++)
				g_assert_cmpuint(hops[a * n + b], ==, a > b ? a - b : b - a);
	}
	/* and a line of 5 cut between 1 and 2 (port 1 of switch 1): two islands */
	g_free(hops);
	g_free(ports);
	fabric_unref(f);

	f = line_fabric(5, 0);
	ports = g_new0(uint64_t, (f->pub.n_ports + 63) / 64);
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		bit_set(ports, p);
	cut = port_id(f, SW_GUID(1), 1);
	ports[cut / 64] &= ~(1ull << (cut % 64));
	s.ports = (struct ibsm_bits){ ports, f->pub.n_ports };
	hops = g_malloc(25);
	for (unsigned m = 0; m < G_N_ELEMENTS(methods); m++) {
		g_assert_cmpint(switch_hops_method(&f->pub, &s, hops, methods[m]), ==, 0);
		for (uint32_t a = 0; a < 5; a++)
			for (uint32_t b = 0; b < 5; b++) {
				uint32_t want = (a < 2) != (b < 2) ? 0xFF : a > b ? a - b : b - a;
				g_assert_cmpuint(hops[a * 5 + b], ==, want);
			}
	}
	g_free(hops);
	g_free(ports);
	fabric_unref(f);
}

/* A synthetic public view (no model): switch u has links to the given peers. */
struct synth {
	struct ibsm_fabric pub;
	struct ibsm_node *nodes;
	struct ibsm_switch *sws;
	GArray *adj;
};

static void synth_init(struct synth *y, uint32_t n)
{
	memset(y, 0, sizeof(*y));
	y->nodes = g_new0(struct ibsm_node, n);
	y->sws = g_new0(struct ibsm_switch, n);
	y->adj = g_array_new(FALSE, TRUE, sizeof(struct ibsm_adj));
	for (uint32_t i = 0; i < n; i++) {
		y->nodes[i].type = IBSM_SWITCH;
		y->nodes[i].sw = i;
		y->nodes[i].nports = 255;
		y->nodes[i].port0 = i * 256;
		y->sws[i].node = i;
	}
	y->pub.size = sizeof(y->pub);
	y->pub.node_size = sizeof(struct ibsm_node);
	y->pub.port_size = sizeof(struct ibsm_port);
	y->pub.switch_size = sizeof(struct ibsm_switch);
	y->pub.adj_size = sizeof(struct ibsm_adj);
	y->pub.n_nodes = y->pub.n_switches = n;
	y->pub.nodes = y->nodes;
	y->pub.switches = y->sws;
}

/* edges[u] lists peers of u; adjacency grouped by switch as the model does */
static void synth_finish(struct synth *y, GArray **edges)
{
	for (uint32_t u = 0; u < y->pub.n_switches; u++) {
		y->sws[u].adj0 = y->adj->len;
		for (guint i = 0; i < edges[u]->len; i++) {
			struct ibsm_adj a = { .peer_sw = g_array_index(edges[u], uint32_t, i),
					      .port = (uint8_t)(i + 1), .peer_port = 1 };
			g_array_append_val(y->adj, a);
		}
		y->sws[u].nadj = y->adj->len - y->sws[u].adj0;
	}
	y->pub.adj = (const struct ibsm_adj *)(void *)y->adj->data;
	y->pub.n_adj = y->adj->len;
}

static void synth_free(struct synth *y)
{
	g_free(y->nodes);
	g_free(y->sws);
	g_array_free(y->adj, TRUE);
}

static void synth_random(struct synth *y, uint32_t n, uint32_t degree, guint32 seed)
{
	GRand *r = g_rand_new_with_seed(seed);
	GArray **edges = g_new(GArray *, n);
	for (uint32_t u = 0; u < n; u++)
		edges[u] = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	synth_init(y, n);
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t k = 0; k < degree / 2; k++) {
			uint32_t v = (uint32_t)g_rand_int_range(r, 0, (gint32)n);
			if (edges[u]->len >= 250 || edges[v]->len >= 250)
				continue;
			g_array_append_val(edges[u], v);  /* parallel links and self links happen too */
			g_array_append_val(edges[v], u);
		}
	synth_finish(y, edges);
	for (uint32_t u = 0; u < n; u++)
		g_array_free(edges[u], TRUE);
	g_free(edges);
	g_rand_free(r);
}

static void test_hops_methods_agree(void)
{
	static const uint32_t shapes[][2] = { { 50, 2 }, { 200, 3 }, { 300, 8 }, { 130, 40 } };
	for (unsigned i = 0; i < G_N_ELEMENTS(shapes); i++) {
		struct synth y;
		uint32_t n = shapes[i][0];
		synth_random(&y, n, shapes[i][1], 17 + i);
		struct ibsm_scope s = { .size = sizeof(s) };
		uint8_t *a = g_malloc((size_t)n * n), *b = g_malloc((size_t)n * n);
		g_assert_cmpint(switch_hops_method(&y.pub, &s, a, HOPS_BFS), ==, 0);
		g_assert_cmpint(switch_hops_method(&y.pub, &s, b, HOPS_BITSET), ==, 0);
		g_assert_cmpmem(a, (gsize)n * n, b, (gsize)n * n);
		/* BFS sanity: symmetric, zero diagonal, neighbours at 1 */
		for (uint32_t u = 0; u < n; u++) {
			g_assert_cmpuint(a[u * n + u], ==, 0);
			for (uint32_t j = 0; j < y.sws[u].nadj; j++) {
				uint32_t v = y.pub.adj[y.sws[u].adj0 + j].peer_sw;
				g_assert_cmpuint(a[u * n + v], ==, v == u ? 0 : 1);
			}
			for (uint32_t v = 0; v < n; v++)
				g_assert_cmpuint(a[u * n + v], ==, a[v * n + u]);
		}
		g_free(a);
		g_free(b);
		synth_free(&y);
	}
}

static void test_hops_too_far(void)
{
	/* a line of 300: distances beyond HOPS_MAX read as unreachable */
	const uint32_t n = 300;
	struct synth y;
	GArray **edges = g_new(GArray *, n);
	for (uint32_t u = 0; u < n; u++) {
		edges[u] = g_array_new(FALSE, FALSE, sizeof(uint32_t));
		uint32_t v;
		if (u > 0) {
			v = u - 1;
			g_array_append_val(edges[u], v);
		}
		if (u + 1 < n) {
			v = u + 1;
			g_array_append_val(edges[u], v);
		}
	}
	synth_init(&y, n);
	synth_finish(&y, edges);
	struct ibsm_scope s = { .size = sizeof(s) };
	uint8_t *h = g_malloc((size_t)n * n);
	for (unsigned m = 0; m < G_N_ELEMENTS(methods); m++) {
		g_assert_cmpint(switch_hops_method(&y.pub, &s, h, methods[m]), ==, 0);
		g_assert_cmpuint(h[0 * n + HOPS_MAX], ==, HOPS_MAX);
		g_assert_cmpuint(h[0 * n + HOPS_MAX + 1], ==, 0xFF);
		g_assert_cmpuint(h[(n - 1) * n + 0], ==, 0xFF);
		g_assert_cmpuint(h[(n - 1) * n + n - 1 - HOPS_MAX], ==, HOPS_MAX);
	}
	g_free(h);
	for (uint32_t u = 0; u < n; u++)
		g_array_free(edges[u], TRUE);
	g_free(edges);
	synth_free(&y);
}

static void test_hops_speed(void)
{
	/* 2304 switches, ~70k directed adjacencies; the bound is loose (sanitizer build): it
	 * catches a method gone quadratic in edges, not a few percent */
	const uint32_t n = 2304;
	struct synth y;
	synth_random(&y, n, 30, 99);
	g_assert_cmpuint(y.pub.n_adj, >, 60000);
	struct ibsm_scope s = { .size = sizeof(s) };
	uint8_t *h = g_malloc((size_t)n * n);
	gint64 t0 = g_get_monotonic_time();
	g_assert_cmpint(switch_hops(&y.pub, &s, h), ==, 0);
	double secs = (double)(g_get_monotonic_time() - t0) / 1e6;
	g_test_message("switch_hops: %u switches, %u adjacencies: %.3f s", n, y.pub.n_adj, secs);
	g_assert_cmpfloat(secs, <, 1.5);
	g_assert_cmpuint(h[5 * n + 5], ==, 0);
	g_assert_cmpuint(h[5 * n + 6], <, 6);
	g_free(h);
	synth_free(&y);
}

static void test_hops_fixture_shapes(void)
{
	/* against the fixture's own BFS: a torus with every port of switch 5 out of scope, and a
	 * 3-level fat tree */
	struct fabric *t = fx_torus2d(5, 4, 1, 0);
	struct ibsm_bits ports = fx_bits_new(t->pub.n_ports);
	for (uint32_t p = 0; p < t->pub.n_ports; p++)
		if (t->ports[p].node != t->switches[5].node)
			fx_bits_set(&ports, p);
	struct ibsm_scope s = fx_scope_all();
	s.ports = ports;
	uint32_t n = t->pub.n_switches;
	uint8_t *want = g_malloc((size_t)n * n), *got = g_malloc((size_t)n * n);
	fx_switch_hops(&t->pub, &s, want);
	g_assert_cmpuint(want[5 * n + 6], ==, 0xFF);
	for (unsigned m = 0; m < G_N_ELEMENTS(methods); m++) {
		g_assert_cmpint(switch_hops_method(&t->pub, &s, got, methods[m]), ==, 0);
		g_assert_cmpmem(got, (gsize)n * n, want, (gsize)n * n);
	}
	g_free(want);
	g_free(got);
	fx_bits_free(&ports);
	fabric_unref(t);

	static const unsigned m3[] = { 4, 4, 8 }, w3[] = { 1, 4, 4 };
	struct fabric *x = fx_xgft(3, m3, w3, 0);
	n = x->pub.n_switches;
	uint8_t *ref = fx_switch_hops_all(&x->pub);
	got = g_malloc((size_t)n * n);
	struct ibsm_scope all = fx_scope_all();
	for (unsigned m = 0; m < G_N_ELEMENTS(methods); m++) {
		g_assert_cmpint(switch_hops_method(&x->pub, &all, got, methods[m]), ==, 0);
		g_assert_cmpmem(got, (gsize)n * n, ref, (gsize)n * n);
	}
	g_free(ref);
	g_free(got);
	fabric_unref(x);
}

/* Runs one engine from the test plugin dirs through the core's services on scope s. */
static void run_step(const char *name, const struct fabric *f, const struct ibsm_scope *s,
		     uint8_t *step_lft)
{
	GError *err = NULL;
	struct engine *e = engine_load(name, BOTH_DIRS, &err);
	g_assert_no_error(err);
	struct ibsm_core *core = services_new(name, NULL, NULL, NULL);
	void *inst = NULL, *result = NULL;
	if (e->ops->setup)
		g_assert_cmpint(e->ops->setup(core, &inst), ==, 0);
	uint32_t stride = f->pub.max_lid + 1;
	struct ibsm_routes r = { .size = sizeof(r), .stride = stride, .lft = step_lft };
	memset(step_lft, IBSM_NO_PORT, (size_t)f->pub.n_switches * stride);
	int rc = e->ops->route(inst, &f->pub, s, &r, &result);
	g_assert_cmpint(rc, >=, 0);
	if (result && e->ops->result_free)
		e->ops->result_free(result);
	if (e->ops->teardown)
		e->ops->teardown(inst);
	services_free(core);
	engine_unload(e);
}

static void test_merge_two_steps(void)
{
	/* minhop on everything, then halfbit on path bit 1: halfbit's rows (first half of the
	 * switches, offset-1 LIDs) win, minhop's stay everywhere else, and the result delivers */
	if (!have_minhop())
		return;
	struct fabric *f = fx_torus2d(4, 3, 2, 1);
	uint32_t n = f->pub.n_switches, stride = f->pub.max_lid + 1;
	size_t bytes = (size_t)n * stride;
	uint8_t *a = g_malloc(bytes), *b = g_malloc(bytes), *final = g_malloc(bytes);
	memset(final, IBSM_NO_PORT, bytes);
	struct ibsm_scope all = fx_scope_all();
	struct ibsm_scope bit1 = fx_scope_all();
	bit1.step = 1;
	bit1.path_bit_first = 1;
	bit1.path_bit_count = 1;
	run_step("minhop", f, &all, a);
	run_step("halfbit", f, &bit1, b);
	g_assert_cmpint(routing_merge(f, &all, &(struct ibsm_routes){ sizeof(struct ibsm_routes), stride, a, "" }, final, stride, NULL, 0), ==, 0);
	g_assert_cmpint(routing_merge(f, &bit1, &(struct ibsm_routes){ sizeof(struct ibsm_routes), stride, b, "" }, final, stride, NULL, 0), ==, 0);
	unsigned from_b = 0, differ = 0;
	for (uint32_t sw = 0; sw < n; sw++)
		for (uint32_t l = 1; l < stride; l++) {
			size_t i = (size_t)sw * stride + l;
			uint32_t p = f->lid_port[l];
			int off1 = p != IBSM_NONE && l - f->ports[p].lid == 1;
			if (off1 && sw < (n + 1) / 2 && b[i] != IBSM_NO_PORT) {
				g_assert_cmpuint(final[i], ==, b[i]);
				from_b++;
				differ += a[i] != b[i];
			} else {
				g_assert_cmpuint(final[i], ==, a[i]);
			}
		}
	g_test_message("halfbit entries merged: %u (%u differ from minhop)", from_b, differ);
	g_assert_cmpuint(from_b, >, 0);
	struct fx_walk_stats st;
	fx_walk_all(&f->pub, final, stride, &st);
	g_assert_cmpuint(st.delivered, ==, st.pairs);
	g_free(a);
	g_free(b);
	g_free(final);
	fabric_unref(f);
}

static void test_hops_fat_tree_2304(void)
{
	/* XGFT(3; 16,16,64; 1,16,16): 16384 hosts, 2304 switches, the size the budget is for */
	if (!g_test_slow() && !g_getenv("IBSM_TEST_BIG")) {
		g_test_skip("big fat tree: run with -m slow or IBSM_TEST_BIG=1");
		return;
	}
	static const unsigned m[] = { 16, 16, 64 }, w[] = { 1, 16, 16 };
	struct fabric *f = fx_xgft(3, m, w, 0);
	uint32_t n = f->pub.n_switches;
	g_assert_cmpuint(n, ==, 2304);
	struct ibsm_scope all = fx_scope_all();
	uint8_t *h = g_malloc((size_t)n * n);
	gint64 t0 = g_get_monotonic_time();
	g_assert_cmpint(switch_hops(&f->pub, &all, h), ==, 0);
	double secs = (double)(g_get_monotonic_time() - t0) / 1e6;
	g_test_message("switch_hops on XGFT 2304 switches, %u adjacencies: %.3f s", f->pub.n_adj, secs);
	uint8_t *ref = fx_switch_hops_all(&f->pub);
	g_assert_cmpmem(h, (gsize)n * n, ref, (gsize)n * n);
	g_assert_cmpfloat(secs, <, 1.5);
	g_free(ref);
	g_free(h);
	fabric_unref(f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	log_set_quiet(1);
	g_test_add_func("/engines/abi/major", test_abi_major);
	g_test_add_func("/engines/abi/minor", test_abi_minor);
	g_test_add_func("/engines/abi/short", test_abi_short);
	g_test_add_func("/engines/abi/noroute", test_abi_noroute);
	g_test_add_func("/engines/abi/not-engine", test_not_engine);
	g_test_add_func("/engines/abi/abi10-engine-loads", test_abi10_engine);
	g_test_add_func("/engines/run/cancel", test_cancel_job);
	g_test_add_func("/engines/load/ok", test_load_ok);
	g_test_add_func("/engines/load/unknown-lists", test_unknown_lists);
	g_test_add_func("/engines/load/bad-name", test_bad_name);
	g_test_add_func("/engines/load/env-path", test_env_path);
	g_test_add_func("/engines/load/chain-check", test_chain_check);
	g_test_add_func("/engines/load/orchestrator", test_orchestrator_load);
	g_test_add_func("/engines/run/last-rows", test_run_last_rows);
	g_test_add_func("/engines/run/fallback-chain", test_run_fallback_chain);
	g_test_add_func("/engines/run/no-fallback", test_run_no_fallback);
	g_test_add_func("/engines/run/unknown-skipped", test_run_unknown_skipped);
	g_test_add_func("/engines/run/failing-minhop", test_run_failing_minhop);
	g_test_add_func("/engines/run/implicit-fallback", test_run_implicit_fallback);
	g_test_add_func("/engines/run/holes-fall-back", test_run_holes_fall_back);
	g_test_add_func("/engines/run/holes-no-fallback", test_run_holes_no_fallback);
	g_test_add_func("/engines/merge/switch-scope", test_merge_switch_scope);
	g_test_add_func("/engines/merge/dest-scope", test_merge_dest_scope);
	g_test_add_func("/engines/merge/path-bits", test_merge_path_bits);
	g_test_add_func("/engines/merge/no-port-keeps", test_merge_no_port_keeps);
	g_test_add_func("/engines/merge/later-overrides", test_merge_later_overrides);
	g_test_add_func("/engines/merge/bad-port", test_merge_bad_port);
	g_test_add_func("/engines/merge/in-place", test_merge_in_place);
	g_test_add_func("/engines/hops/ring", test_hops_ring);
	g_test_add_func("/engines/hops/excluded-link", test_hops_excluded_link);
	g_test_add_func("/engines/hops/methods-agree", test_hops_methods_agree);
	g_test_add_func("/engines/hops/too-far", test_hops_too_far);
	g_test_add_func("/engines/hops/speed", test_hops_speed);
	g_test_add_func("/engines/hops/fixture-shapes", test_hops_fixture_shapes);
	g_test_add_func("/engines/hops/fat-tree-2304", test_hops_fat_tree_2304);
	g_test_add_func("/engines/merge/two-steps", test_merge_two_steps);
	int rc = g_test_run();
	g_free(log_path);
	return rc;
}
