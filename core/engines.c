/* engines.c - the routing-engine plugins: search and load with ABI checks, the services table
 * lent to engines, the "-R a,b,c" run with fallback, and the merge of a step's rows into the
 * final LFTs (only inside the step's scope, so engines can never write what is not theirs). */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "engines.h"
#include "hops.h"
#include "log.h"

G_DEFINE_QUARK(ibsm-engine-error-quark, engine_error)

#define ENGINE_SYMBOL "ibsm_engine"
#define MERGE_LOG_MAX 5 /* refused entries logged one by one, then counted */

/* ---- search and load ---- */

static void add_dir_list(GPtrArray *dirs, const char *list)
{
	if (!list)
		return;
	gchar **v = g_strsplit(list, ":", -1);
	for (gchar **p = v; *p; p++)
		if (**p)
			g_ptr_array_add(dirs, g_strdup(*p));
	g_strfreev(v);
}

static GPtrArray *search_dirs(const char *plugin_dir)
{
	GPtrArray *dirs = g_ptr_array_new_with_free_func(g_free);
	add_dir_list(dirs, g_getenv("IBSM_PLUGIN_PATH"));
	add_dir_list(dirs, plugin_dir);
	gchar *exe = g_file_read_link("/proc/self/exe", NULL);
	if (exe) {
		gchar *d = g_path_get_dirname(exe);
		g_ptr_array_add(dirs, g_build_filename(d, "plugins", NULL));       /* build tree */
		g_ptr_array_add(dirs, g_build_filename(d, "..", "lib", "ibsm", "plugins", NULL)); /* installed */
		g_free(d);
		g_free(exe);
	}
	g_ptr_array_add(dirs, g_strdup(IBSM_PLUGIN_DIR));
	return dirs;
}

/* An engine name is a file name without ".so": no path, no hidden files, fits engine[64]. */
static int name_valid(const char *name)
{
	if (!name || !*name || *name == '.' || strlen(name) >= 64)
		return 0;
	for (const char *c = name; *c; c++)
		if (!g_ascii_isalnum(*c) && *c != '_' && *c != '-' && *c != '.' && *c != '+')
			return 0;
	return 1;
}

/* Checks the exported table; NULL with *err naming the file and both ABI versions. */
static const struct ibsm_engine *engine_check(GModule *m, const char *path, GError **err)
{
	gpointer sym = NULL;
	if (!g_module_symbol(m, ENGINE_SYMBOL, &sym) || !sym) {
		g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_ABI,
			    "%s: no symbol \"" ENGINE_SYMBOL "\": not an ibsm routing engine "
			    "(this ibsm loads engines of ABI %d.%d)", path, IBSM_ABI_MAJOR, IBSM_ABI_MINOR);
		return NULL;
	}
	const struct ibsm_engine *e = sym;
	if (e->abi_major != IBSM_ABI_MAJOR) {
		g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_ABI,
			    "%s: engine built for ABI %u.%u, this ibsm implements ABI %d.%d: the major "
			    "versions differ, rebuild the engine against this ibsm's SDK",
			    path, e->abi_major, e->abi_minor, IBSM_ABI_MAJOR, IBSM_ABI_MINOR);
		return NULL;
	}
	if (e->abi_minor > IBSM_ABI_MINOR) {
		g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_ABI,
			    "%s: engine built for ABI %u.%u, newer than this ibsm's ABI %d.%d: upgrade "
			    "ibsm or rebuild the engine against this ibsm's SDK",
			    path, e->abi_major, e->abi_minor, IBSM_ABI_MAJOR, IBSM_ABI_MINOR);
		return NULL;
	}
	if (e->size < ENGINE_SIZE_ABI_1_0) {
		g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_ABI,
			    "%s: engine claims ABI %u.%u but its struct ibsm_engine is %u bytes, less "
			    "than the %zu of ABI 1.0 (this ibsm implements ABI %d.%d)",
			    path, e->abi_major, e->abi_minor, e->size, (size_t)ENGINE_SIZE_ABI_1_0,
			    IBSM_ABI_MAJOR, IBSM_ABI_MINOR);
		return NULL;
	}
	if (!e->name || !e->route) {
		g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_ABI,
			    "%s: engine of ABI %u.%u has no %s (required by ABI %d.%d)", path,
			    e->abi_major, e->abi_minor, e->name ? "route()" : "name",
			    IBSM_ABI_MAJOR, IBSM_ABI_MINOR);
		return NULL;
	}
	return e;
}

static struct engine *engine_open(const char *name, const char *path, GError **err)
{
	/* No G_MODULE_BIND_LAZY: GModule then passes RTLD_NOW, so a missing symbol fails here
	 * and not in the middle of a sweep. */
	GModule *m = g_module_open(path, G_MODULE_BIND_LOCAL);
	if (!m) {
		g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_OPEN, "%s: cannot load routing engine: %s",
			    path, g_module_error());
		return NULL;
	}
	const struct ibsm_engine *ops = engine_check(m, path, err);
	if (!ops) {
		g_module_close(m);
		return NULL;
	}
	struct engine *e = g_new0(struct engine, 1);
	e->module = m;
	e->ops = ops;
	e->name = g_strdup(name);
	e->path = g_strdup(path);
	return e;
}

struct engine *engine_load(const char *name, const char *plugin_dir, GError **err)
{
	if (!name_valid(name)) {
		g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_INVALID,
			    "invalid routing engine name '%s' (a plugin file name without .so)",
			    name ? name : "(null)");
		return NULL;
	}
	GPtrArray *dirs = search_dirs(plugin_dir);
	char *file = g_strconcat(name, ".so", NULL);
	struct engine *e = NULL;
	for (guint i = 0; i < dirs->len; i++) {
		char *path = g_build_filename(g_ptr_array_index(dirs, i), file, NULL);
		int found = g_file_test(path, G_FILE_TEST_IS_REGULAR);
		if (found)
			e = engine_open(name, path, err);
		g_free(path);
		if (found)
			goto out;
	}
	g_ptr_array_add(dirs, NULL);
	char *where = g_strjoinv(", ", (gchar **)dirs->pdata);
	char *avail = engine_list_available(plugin_dir);
	g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_NOT_FOUND,
		    "routing engine '%s' not found (no %s in %s); available engines: %s",
		    name, file, where, avail);
	g_free(where);
	g_free(avail);
out:
	g_free(file);
	g_ptr_array_free(dirs, TRUE);
	return e;
}

void engine_unload(struct engine *e)
{
	if (!e)
		return;
	g_module_close(e->module);
	g_free(e->name);
	g_free(e->path);
	g_free(e);
}

char *engine_list_available(const char *plugin_dir)
{
	GPtrArray *dirs = search_dirs(plugin_dir);
	GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	for (guint i = 0; i < dirs->len; i++) {
		GDir *d = g_dir_open(g_ptr_array_index(dirs, i), 0, NULL);
		if (!d)
			continue;
		const char *ent;
		while ((ent = g_dir_read_name(d))) {
			if (!g_str_has_suffix(ent, ".so") || strlen(ent) <= 3)
				continue;
			char *name = g_strndup(ent, strlen(ent) - 3);
			if (name_valid(name))
				g_hash_table_add(seen, name);
			else
				g_free(name);
		}
		g_dir_close(d);
	}
	GList *names = g_list_sort(g_hash_table_get_keys(seen), (GCompareFunc)strcmp);
	GString *s = g_string_new(NULL);
	for (GList *l = names; l; l = l->next)
		g_string_append_printf(s, "%s%s", s->len ? ", " : "", (const char *)l->data);
	if (!s->len)
		g_string_append(s, "(none)");
	g_list_free(names);
	g_hash_table_destroy(seen);
	g_ptr_array_free(dirs, TRUE);
	return g_string_free(s, FALSE);
}

/* ---- the services lent to an engine ---- */

struct engine_core {
	struct ibsm_core pub;
	char *name;
	GHashTable *config;  /* OpenSM option name -> value */
};

static void core_log(const struct ibsm_core *c, int level, const char *fmt, ...)
{
	const struct engine_core *ec = c->cookie;
	if (level < IBSM_LOG_ERROR)
		level = IBSM_LOG_ERROR;
	if (level > IBSM_LOG_DEBUG)
		level = IBSM_LOG_DEBUG;
	if (level > log_level())
		return;
	va_list ap;
	va_start(ap, fmt);
	char *text = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	log_msg(level, "ENG-0100", "%s: %s", ec->name, text);
	g_free(text);
}

static const char *core_config(const struct ibsm_core *c, const char *key)
{
	const struct engine_core *ec = c->cookie;
	return key ? g_hash_table_lookup(ec->config, key) : NULL;
}

static int core_switch_hops(const struct ibsm_core *c, const struct ibsm_fabric *f,
			    const struct ibsm_scope *s, uint8_t *hops)
{
	(void)c;
	return switch_hops(f, s, hops);
}

static int core_cancelled(const struct ibsm_core *c)
{
	(void)c;
	return 0;
}

static void config_str(GHashTable *h, const char *key, const char *value)
{
	if (value && *value)
		g_hash_table_insert(h, g_strdup(key), g_strdup(value));
}

static void config_fill(GHashTable *h, const struct sm_options *o)
{
	config_str(h, "routing_engine", o->routing_engine);
	config_str(h, "root_guid_file", o->root_guid_file);
	config_str(h, "cn_guid_file", o->cn_guid_file);
	config_str(h, "io_guid_file", o->io_guid_file);
	config_str(h, "port_prof_ignore_file", o->port_prof_ignore_file);
	config_str(h, "dump_files_dir", o->tmp_dir);
	g_hash_table_insert(h, g_strdup("max_reverse_hops"), g_strdup_printf("%d", o->max_reverse_hops));
	g_hash_table_insert(h, g_strdup("connect_roots"), g_strdup(o->connect_roots ? "TRUE" : "FALSE"));
	g_hash_table_insert(h, g_strdup("lmc"), g_strdup_printf("%u", o->lmc));
	g_hash_table_insert(h, g_strdup("sm_priority"), g_strdup_printf("%u", o->sm_priority));
	g_hash_table_insert(h, g_strdup("max_op_vls"), g_strdup_printf("%u", o->max_op_vls));
	g_hash_table_insert(h, g_strdup("subnet_prefix"), g_strdup_printf("0x%016" PRIx64, o->subnet_prefix));
}

struct ibsm_core *engine_core_new(const char *engine_name, const struct sm_options *o)
{
	struct engine_core *ec = g_new0(struct engine_core, 1);
	ec->pub.size = sizeof(ec->pub);
	ec->pub.cookie = ec;
	ec->pub.log = core_log;
	ec->pub.config = core_config;
	ec->pub.switch_hops = core_switch_hops;
	ec->pub.cancelled = core_cancelled;
	ec->name = g_strdup(engine_name ? engine_name : "?");
	ec->config = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	if (o)
		config_fill(ec->config, o);
	return &ec->pub;
}

void engine_core_free(struct ibsm_core *core)
{
	if (!core)
		return;
	struct engine_core *ec = core->cookie;
	g_hash_table_destroy(ec->config);
	g_free(ec->name);
	g_free(ec);
}

/* ---- the chain "a,b,c[,no_fallback]" ---- */

static int chain_parse(const char *chain, GPtrArray *names, int *no_fallback, GError **err)
{
	const char *text = chain && *chain ? chain : ENGINE_FALLBACK;
	gchar **v = g_strsplit(text, ",", -1);
	*no_fallback = 0;
	for (gchar **p = v; *p; p++) {
		char *t = g_strstrip(*p);
		if (!*t)
			continue;
		if (!strcmp(t, "no_fallback")) {
			*no_fallback = 1;
			continue;
		}
		int dup = 0;
		for (guint i = 0; i < names->len; i++)
			dup |= !strcmp(g_ptr_array_index(names, i), t);
		if (!dup)
			g_ptr_array_add(names, g_strdup(t));
	}
	g_strfreev(v);
	if (!names->len) {
		g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_INVALID,
			    "routing engine list '%s' names no engine", text);
		return -EINVAL;
	}
	return 0;
}

int engine_chain_check(const char *chain, const char *plugin_dir, GError **err)
{
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	int no_fallback, rc = chain_parse(chain, names, &no_fallback, err);
	for (guint i = 0; rc == 0 && i < names->len; i++) {
		struct engine *e = engine_load(g_ptr_array_index(names, i), plugin_dir, err);
		if (!e)
			rc = -ENOENT;
		engine_unload(e);
	}
	g_ptr_array_free(names, TRUE);
	return rc;
}

/* ---- the merge ---- */

int routing_merge(const struct fabric *f, const struct ibsm_scope *scope,
		  const struct ibsm_routes *step, uint8_t *final_lft, uint32_t stride)
{
	if (!f || !scope || !step || !step->lft || !final_lft || step->stride != stride)
		return -EINVAL;
	uint32_t nl = MIN(stride, f->pub.max_lid + 1);
	uint32_t first = scope->path_bit_first, count = scope->path_bit_count;
	/* LIDs this step may write: destination in scope, path bits in range */
	uint8_t *lid_ok = g_malloc0(nl ? nl : 1);
	for (uint32_t l = 1; l < nl; l++) {
		uint32_t p = f->pub.lid_port[l];
		if (p == IBSM_NONE || p >= f->pub.n_ports || !ibsm_bit(&scope->dests, p))
			continue;
		uint32_t off = l - f->pub.ports[p].lid;
		if (count && (off < first || off >= first + count))
			continue;
		lid_ok[l] = 1;
	}
	uint32_t refused = 0;
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		if (!ibsm_bit(&scope->switches, s))
			continue;
		const struct ibsm_node *node = &f->pub.nodes[f->pub.switches[s].node];
		const uint8_t *src = step->lft + (size_t)s * stride;
		uint8_t *dst = final_lft + (size_t)s * stride;
		for (uint32_t l = 1; l < nl; l++) {
			uint8_t port = src[l];
			if (port == IBSM_NO_PORT || !lid_ok[l])
				continue;
			if (port > node->nports) {
				if (refused < MERGE_LOG_MAX)
					LOG_E("ENG-0005", "routing step %u: switch 0x%016" PRIx64 " LID %u: "
					      "exit port %u beyond its %u ports; entry refused",
					      scope->step, node->guid, l, port, node->nports);
				refused++;
				continue;
			}
			dst[l] = port;
		}
	}
	if (refused > MERGE_LOG_MAX)
		LOG_E("ENG-0006", "routing step %u: %u LFT entries refused in all (exit port beyond "
		      "the switch's ports)", scope->step, refused);
	g_free(lid_ok);
	return (int)MIN(refused, (uint32_t)G_MAXINT);
}

/* ---- one run of the chain ---- */

/* Tries one engine; on success keeps its core, instance and result in *out. Appends the
 * decline reason to whys otherwise. */
static int engine_try(struct engine *e, const struct sm_options *o, const struct fabric *f,
		      const struct ibsm_scope *scope, struct ibsm_routes *routes,
		      struct routing_run *out, GString *whys)
{
	const struct ibsm_engine *ops = e->ops;
	struct ibsm_core *core = engine_core_new(e->name, o);
	void *inst = NULL, *result = NULL;
	int rc = ops->setup ? ops->setup(core, &inst) : 0;
	if (rc < 0) {
		LOG_I("ENG-0002", "routing engine %s declined: setup failed: %s", e->name,
		      g_strerror(-rc));
		g_string_append_printf(whys, "%s%s: setup failed: %s", whys->len ? "; " : "",
				       e->name, g_strerror(-rc));
		engine_core_free(core);
		return rc;
	}
	memset(routes->lft, IBSM_NO_PORT, (size_t)f->pub.n_switches * routes->stride);
	routes->why[0] = 0;
	rc = ops->route(inst, &f->pub, scope, routes, &result);
	routes->why[sizeof(routes->why) - 1] = 0;
	if (rc < 0) {
		const char *why = routes->why[0] ? routes->why : "no reason given";
		LOG_I("ENG-0002", "routing engine %s declined: %s", e->name, why);
		g_string_append_printf(whys, "%s%s: %s", whys->len ? "; " : "", e->name, why);
		if (result && ops->result_free)
			ops->result_free(result);
		if (ops->teardown)
			ops->teardown(inst);
		engine_core_free(core);
		return rc;
	}
	int refused = routing_merge(f, scope, routes, out->lft, out->stride);
	out->rejected = refused > 0 ? (uint32_t)refused : 0;
	out->core = core;
	out->inst = inst;
	out->result = result;
	out->loaded = e;
	g_strlcpy(out->engine, e->name, sizeof(out->engine));
	return 0;
}

int routing_run(const char *chain, const struct sm_options *o, const struct fabric *f,
		struct routing_run *out, GError **err)
{
	memset(out, 0, sizeof(*out));
	if (!f) {
		g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_INVALID, "no fabric to route");
		return -EINVAL;
	}
	const char *plugin_dir = o ? o->plugin_dir : NULL;
	const char *text = chain && *chain ? chain : ENGINE_FALLBACK;
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	int no_fallback;
	int rc = chain_parse(chain, names, &no_fallback, err);
	if (rc < 0) {
		g_ptr_array_free(names, TRUE);
		return rc;
	}
	/* Load every named engine first: a typo in -R fails loudly instead of falling back. */
	guint n_named = names->len;
	struct engine **engines = g_new0(struct engine *, n_named + 1);
	for (guint i = 0; i < n_named; i++) {
		engines[i] = engine_load(g_ptr_array_index(names, i), plugin_dir, err);
		if (!engines[i]) {
			for (guint j = 0; j < i; j++)
				engine_unload(engines[j]);
			g_free(engines);
			g_ptr_array_free(names, TRUE);
			return -ENOENT;
		}
	}
	int try_fallback = !no_fallback;
	for (guint i = 0; i < n_named; i++)
		if (!strcmp(g_ptr_array_index(names, i), ENGINE_FALLBACK))
			try_fallback = 0;  /* already tried in its place in the chain */

	gint64 t0 = g_get_monotonic_time();
	out->n_switches = f->pub.n_switches;
	out->stride = f->pub.max_lid + 1;
	size_t bytes = (size_t)out->n_switches * out->stride;
	out->lft = g_malloc(bytes ? bytes : 1);
	memset(out->lft, IBSM_NO_PORT, bytes);
	struct ibsm_routes routes = { .size = sizeof(routes), .stride = out->stride };
	routes.lft = g_malloc(bytes ? bytes : 1);
	struct ibsm_scope scope = { .size = sizeof(scope), .step = 0 }; /* NULL bits: all */
	GString *whys = g_string_new(NULL);

	int routed = 0;
	for (guint i = 0; i < n_named && !routed; i++) {
		if (engine_try(engines[i], o, f, &scope, &routes, out, whys) == 0) {
			engines[i] = NULL;  /* now owned by out */
			routed = 1;
		}
	}
	if (!routed && try_fallback) {
		LOG_I("ENG-0003", "no engine of '%s' could route; falling back to %s", text,
		      ENGINE_FALLBACK);
		GError *lerr = NULL;
		struct engine *e = engine_load(ENGINE_FALLBACK, plugin_dir, &lerr);
		if (!e) {
			g_string_append_printf(whys, "%s%s: %s", whys->len ? "; " : "",
					       ENGINE_FALLBACK, lerr->message);
			g_clear_error(&lerr);
		} else if (engine_try(e, o, f, &scope, &routes, out, whys) == 0) {
			routed = 1;
		} else {
			engine_unload(e);
		}
	}
	for (guint i = 0; i < n_named; i++)
		engine_unload(engines[i]);
	g_free(engines);
	g_free(routes.lft);
	g_ptr_array_free(names, TRUE);
	if (!routed) {
		g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_ROUTE,
			    "no routing engine of '%s'%s could route: %s", text,
			    try_fallback ? " nor " ENGINE_FALLBACK : "", whys->str);
		g_string_free(whys, TRUE);
		routing_run_clear(out);
		return -EHOSTUNREACH;
	}
	g_string_free(whys, TRUE);
	out->seconds = (double)(g_get_monotonic_time() - t0) / 1e6;
	LOG_I("ENG-0004", "routed by %s in %.3f s (%u switches, LIDs up to %u)", out->engine,
	      out->seconds, out->n_switches, f->pub.max_lid);
	return 0;
}

void routing_run_clear(struct routing_run *r)
{
	if (!r)
		return;
	if (r->loaded) {
		const struct ibsm_engine *ops = r->loaded->ops;
		if (r->result && ops->result_free)
			ops->result_free(r->result);
		if (ops->teardown)
			ops->teardown(r->inst);
	}
	engine_core_free(r->core);
	engine_unload(r->loaded);
	g_free(r->lft);
	memset(r, 0, sizeof(*r));
}
