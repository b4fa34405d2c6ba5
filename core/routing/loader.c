/* SPDX-License-Identifier: BSD-2-Clause */
/* loader.c - finding and opening routing-engine plugins: the search path, the trust checks
 * (an engine's constructor runs as root: nobody but its owner, root or us, may have written
 * it), the ABI checks with refusals that name both versions, the list of engines available,
 * and the configuration keys every engine found declares (for --create-config and for
 * checking the configuration file). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/log.h"
#include "routing/loader.h"
#include "ibsm_paths.h"         /* IBSM_PLUGIN_DIR: written by make for this build */

G_DEFINE_QUARK(ibsm-engine-error-quark, engine_error)

#define ENGINE_SYMBOL "ibsm_engine"
#define ORCH_SYMBOL "ibsm_orchestrator"

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
	if (!name || !*name || *name == '.' || strlen(name) >= ENGINE_NAME_MAX)
		return 0;
	for (const char *c = name; *c; c++)
		if (!g_ascii_isalnum(*c) && *c != '_' && *c != '-' && *c != '.' && *c != '+')
			return 0;
	return 1;
}

/* ---- trust: who could have written the code we are about to run ---- */

int engine_trust_check(const char *path, const char *kind, uid_t owner, mode_t mode, uid_t me,
		       char **why)
{
	const char *problem = NULL;
	char *owned = NULL;
	if ((mode & (S_IWGRP | S_IWOTH)) == (S_IWGRP | S_IWOTH))
		problem = "is writable by its group and by others";
	else if (mode & S_IWOTH)
		problem = "is writable by others";
	else if (mode & S_IWGRP)
		problem = "is writable by its group";
	else if (owner != 0 && owner != me)
		problem = owned = g_strdup_printf("is owned by uid %u, neither root nor the user ibsm "
						  "runs as (uid %u)", (unsigned)owner, (unsigned)me);
	if (!problem)
		return 0;
	*why = g_strdup_printf("%s %s %s (mode %04o, owner uid %u)", kind, path, problem,
			       (unsigned)(mode & 07777), (unsigned)owner);
	g_free(owned);
	return -EPERM;
}

/* engine_trust_check on what stat(path) says (the target, for a symlink). */
static int trust_path(const char *path, const char *kind, char **why)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		*why = g_strdup_printf("%s %s: %s", kind, path, g_strerror(errno));
		return -errno;
	}
	return engine_trust_check(path, kind, st.st_uid, st.st_mode, geteuid(), why);
}

/* The engine file at dir/file may be loaded: dir, the file and, when the file is a symlink
 * (or dir holds one on the way), the directory its real path is in. */
static int trust_engine_file(const char *dir, const char *path, char **why)
{
	int rc = trust_path(dir, "engine directory", why);
	if (rc == 0)
		rc = trust_path(path, "engine file", why);
	char *real = rc == 0 ? realpath(path, NULL) : NULL;
	if (real) {
		char *rdir = g_path_get_dirname(real);
		rc = trust_path(rdir, "engine directory", why);
		g_free(rdir);
		free(real);
	}
	return rc;
}

/* The version checks engines and orchestrators share; 0, or -1 with *err. */
static int abi_check(const char *path, const char *what, unsigned major, unsigned minor, GError **err)
{
	if (major != IBSM_ABI_MAJOR) {
		g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_ABI,
			    "%s: %s built for ABI %u.%u, this ibsm implements ABI %d.%d: the major "
			    "versions differ, rebuild the %s against this ibsm's SDK",
			    path, what, major, minor, IBSM_ABI_MAJOR, IBSM_ABI_MINOR, what);
		return -1;
	}
	if (minor > IBSM_ABI_MINOR) {
		g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_ABI,
			    "%s: %s built for ABI %u.%u, newer than this ibsm's ABI %d.%d: upgrade "
			    "ibsm or rebuild the %s against this ibsm's SDK",
			    path, what, major, minor, IBSM_ABI_MAJOR, IBSM_ABI_MINOR, what);
		return -1;
	}
	return 0;
}

/* An orchestrator's table (ABI 1.2 and later); NULL with *err. */
static const struct ibsm_orchestrator *orch_check(gpointer sym, const char *path, GError **err)
{
	const struct ibsm_orchestrator *o = sym;
	if (abi_check(path, "orchestrator", o->abi_major, o->abi_minor, err) < 0)
		return NULL;
	if (o->abi_minor < 2 || o->size < ORCH_SIZE_ABI_1_2) {
		g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_ABI,
			    "%s: orchestrator claims ABI %u.%u with a struct ibsm_orchestrator of %u "
			    "bytes; orchestrators exist from ABI 1.2 on, with at least %zu bytes (this "
			    "ibsm implements ABI %d.%d)", path, o->abi_major, o->abi_minor, o->size,
			    (size_t)ORCH_SIZE_ABI_1_2, IBSM_ABI_MAJOR, IBSM_ABI_MINOR);
		return NULL;
	}
	if (!o->name || !o->setup || !o->run) {
		g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_ABI,
			    "%s: orchestrator of ABI %u.%u has no %s (required by ABI %d.%d)", path,
			    o->abi_major, o->abi_minor, !o->name ? "name" : !o->setup ? "setup()" : "run()",
			    IBSM_ABI_MAJOR, IBSM_ABI_MINOR);
		return NULL;
	}
	return o;
}

/* Checks the exported table: an engine's, else an orchestrator's. NULL with *err naming the
 * file and both ABI versions. */
static const struct ibsm_engine *engine_check(GModule *m, const char *path,
					      const struct ibsm_orchestrator **orch, GError **err)
{
	gpointer sym = NULL;
	*orch = NULL;
	if (!g_module_symbol(m, ENGINE_SYMBOL, &sym) || !sym) {
		if (g_module_symbol(m, ORCH_SYMBOL, &sym) && sym) {
			*orch = orch_check(sym, path, err);
			return NULL;
		}
		g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_ABI,
			    "%s: no symbol \"" ENGINE_SYMBOL "\" nor \"" ORCH_SYMBOL "\": not an ibsm "
			    "routing engine or orchestrator (this ibsm loads plugins of ABI %d.%d)",
			    path, IBSM_ABI_MAJOR, IBSM_ABI_MINOR);
		return NULL;
	}
	const struct ibsm_engine *e = sym;
	if (abi_check(path, "engine", e->abi_major, e->abi_minor, err) < 0)
		return NULL;
	if (e->size < ENGINE_SIZE_ABI_1_0 || (e->abi_minor >= 1 && e->size < ENGINE_SIZE_ABI_1_1)) {
		g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_ABI,
			    "%s: engine claims ABI %u.%u but its struct ibsm_engine is %u bytes, less "
			    "than the %zu of ABI %u.%u (this ibsm implements ABI %d.%d)",
			    path, e->abi_major, e->abi_minor, e->size,
			    e->abi_minor >= 1 ? (size_t)ENGINE_SIZE_ABI_1_1 : (size_t)ENGINE_SIZE_ABI_1_0,
			    e->abi_major, e->abi_minor >= 1 ? 1u : 0u, IBSM_ABI_MAJOR, IBSM_ABI_MINOR);
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
	const struct ibsm_orchestrator *orch;
	const struct ibsm_engine *ops = engine_check(m, path, &orch, err);
	if (!ops && !orch) {
		g_module_close(m);
		return NULL;
	}
	/* Never unmapped once taken: a plugin built with GLib registers static strings with it
	 * (G_DEFINE_QUARK's error domains in the policy parsers chain.so and torus2qos.so carry),
	 * and GLib keeps those pointers for the life of the process; a -R list refused on SIGHUP
	 * would otherwise leave them pointing into an unmapped plugin for the next lookup. */
	g_module_make_resident(m);
	struct engine *e = g_new0(struct engine, 1);
	e->module = m;
	e->ops = ops;
	e->orch = orch;
	e->name = g_strdup(name);
	e->path = g_strdup(path);
	if (orch) {
		e->keys = orch->config_keys;
		e->summary = orch->summary;
	} else if (ops->abi_minor >= 1) { /* ABI 1.1 fields: the size check above guarantees them */
		e->keys = ops->config_keys;
		e->summary = ops->summary;
	}
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
		const char *dir = g_ptr_array_index(dirs, i);
		char *path = g_build_filename(dir, file, NULL), *why = NULL;
		int found = g_file_test(path, G_FILE_TEST_IS_REGULAR);
		if (found && trust_engine_file(dir, path, &why) < 0) /* no fall-back to another */
			g_set_error(err, ENGINE_ERROR, ENGINE_ERROR_UNTRUSTED, "routing engine '%s' "
				    "refused: %s: others than its owner could have changed the code "
				    "ibsm would run; no other %s is tried", name, why, file);
		else if (found)
			e = engine_open(name, path, err);
		g_free(why);
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
	/* name -> 1 listed, or 0 refused: its first file decides, as for engine_load */
	GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	for (guint i = 0; i < dirs->len; i++) {
		const char *dir = g_ptr_array_index(dirs, i);
		GDir *d = g_dir_open(dir, 0, NULL);
		if (!d)
			continue;
		const char *ent;
		while ((ent = g_dir_read_name(d))) {
			if (!g_str_has_suffix(ent, ".so") || strlen(ent) <= 3)
				continue;
			char *name = g_strndup(ent, strlen(ent) - 3);
			if (!name_valid(name) || g_hash_table_contains(seen, name)) {
				g_free(name);
				continue;
			}
			char *path = g_build_filename(dir, ent, NULL), *why = NULL;
			int ok = trust_engine_file(dir, path, &why) == 0;
			if (!ok)
				LOG_E("LDR-0001", "routing engine %s skipped: %s: others than its owner "
				      "could have changed it", path, why);
			g_hash_table_insert(seen, name, GINT_TO_POINTER(ok));
			g_free(why);
			g_free(path);
		}
		g_dir_close(d);
	}
	GList *names = NULL;
	GHashTableIter it;
	gpointer key, ok;
	g_hash_table_iter_init(&it, seen);
	while (g_hash_table_iter_next(&it, &key, &ok))
		if (GPOINTER_TO_INT(ok))
			names = g_list_prepend(names, key);
	names = g_list_sort(names, (GCompareFunc)strcmp);
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

/* ---- the keys engines declare ---- */

static int cmp_declared(gconstpointer a, gconstpointer b)
{
	const struct config_declared *x = *(struct config_declared *const *)a;
	const struct config_declared *y = *(struct config_declared *const *)b;
	int c = strcmp(x->engine, y->engine);
	return c ? c : strcmp(x->name, y->name);
}

GPtrArray *engine_declared_keys(const char *plugin_dir)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(config_declared_free);
	char *avail = engine_list_available(plugin_dir);
	gchar **names = g_strsplit(avail, ", ", -1);
	for (gchar **n = names; *n; n++) {
		if (!strcmp(*n, "(none)"))
			continue;
		GError *err = NULL;
		struct engine *e = engine_load(*n, plugin_dir, &err);
		if (!e) {
			g_clear_error(&err); /* a broken plugin declares nothing; -R names it loudly */
			continue;
		}
		for (const struct ibsm_config_key *k = e->keys; k && k->name; k++) {
			struct config_declared *d = g_new0(struct config_declared, 1);
			d->engine = g_strdup(e->name);
			d->name = g_strdup(k->name);
			d->default_value = g_strdup(k->default_value);
			d->help = g_strdup(k->help);
			g_ptr_array_add(out, d);
		}
		engine_unload(e);
	}
	g_strfreev(names);
	g_free(avail);
	g_ptr_array_sort(out, cmp_declared);
	return out;
}
