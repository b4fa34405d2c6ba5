/* SPDX-License-Identifier: BSD-2-Clause */
/* loader.h - routing engines as run-time plugins: find NAME.so on the search path, open it
 * with RTLD_NOW and local symbols, and check its ABI (refusals name both versions and the
 * file). Also what every engine found declares: its configuration keys. */
#ifndef IBSM_ROUTING_LOADER_H
#define IBSM_ROUTING_LOADER_H

#include <glib.h>
#include <gmodule.h>
#include <stddef.h>
#include <sys/types.h>
#include <ibsm/orchestrator.h>
#include <ibsm/routing.h>
#include "config/template.h"

#define ENGINE_NAME_MAX 64 /* an engine name is shorter (it fits routing_result.engine) */

/* Size of struct ibsm_engine in ABI 1.0 and 1.1: engines declaring less are refused. */
#define ENGINE_SIZE_ABI_1_0 (offsetof(struct ibsm_engine, dump) + sizeof(((struct ibsm_engine *)0)->dump))
#define ENGINE_SIZE_ABI_1_1 (offsetof(struct ibsm_engine, summary) + sizeof(((struct ibsm_engine *)0)->summary))
/* Size of struct ibsm_orchestrator in ABI 1.2, where it appeared. */
#define ORCH_SIZE_ABI_1_2 (offsetof(struct ibsm_orchestrator, run) + sizeof(((struct ibsm_orchestrator *)0)->run))

#define ENGINE_ERROR engine_error_quark()
GQuark engine_error_quark(void);
enum engine_error {
	ENGINE_ERROR_NOT_FOUND = 1,  /* no NAME.so in any search directory */
	ENGINE_ERROR_OPEN,           /* dlopen failed (missing symbol, bad ELF, ...) */
	ENGINE_ERROR_ABI,            /* not an engine, or an incompatible one */
	ENGINE_ERROR_INVALID,        /* bad name, -R list or orchestrator set-up */
	ENGINE_ERROR_ROUTE,          /* the -R list's every engine, or the orchestrator, declined */
	ENGINE_ERROR_CANCELLED,      /* stopped by SIGTERM or a newer sweep request */
	ENGINE_ERROR_UNTRUSTED,      /* the file or its directory may be written by others */
};

/* An opened plugin: a routing engine (ops) or, from ABI 1.2, an orchestrator (orch). */
struct engine {
	GModule *module;
	const struct ibsm_engine *ops;      /* NULL for an orchestrator */
	const struct ibsm_orchestrator *orch; /* NULL for an engine */
	char *name;                  /* name asked for (= file name without ".so") */
	char *path;                  /* file it came from */
	const struct ibsm_config_key *keys; /* ABI >= 1.1: what it reads; NULL for 1.0 engines */
	const char *summary;         /* ABI >= 1.1, may be NULL */
};

/* Searches, in order: each directory of $IBSM_PLUGIN_PATH (colon-separated), of plugin_dir
 * (colon-separated, may be NULL), "plugins" beside the running executable (the build tree),
 * ../lib/ibsm/plugins beside it, then IBSM_PLUGIN_DIR. The file is NAME.so; the first one found
 * is opened and checked, or refused with a message naming both ABI versions and the file.
 * Its code runs as root: the first one found is refused (ENGINE_ERROR_UNTRUSTED, and no other
 * NAME.so is tried) unless it, its directory and, for a symlink, the directory of its target
 * pass engine_trust_check. */
struct engine *engine_load(const char *name, const char *plugin_dir, GError **err);
void engine_unload(struct engine *e);

/* Whether an engine file or directory (kind: "engine file", "engine directory") at path, owned
 * by owner with mode, may be trusted by a process running as me: not writable by its group or
 * by others (a sticky directory, like /tmp, is no exception), and owned by root or by me.
 * 0 if so; else -EPERM with *why (g_free) naming the path, the problem, its mode and owner. */
int engine_trust_check(const char *path, const char *kind, uid_t owner, mode_t mode, uid_t me,
		       char **why);
/* "minhop, updn, ..." (sorted, unique) from every search directory; "(none)" if empty. A name
 * whose first file is refused by engine_trust_check is left out, the reason logged (LDR-0001). */
char *engine_list_available(const char *plugin_dir);
/* The configuration keys of every engine found (struct config_declared *), sorted by engine
 * then key. Engines that fail to load declare nothing; refused files are skipped as above. */
GPtrArray *engine_declared_keys(const char *plugin_dir);

#endif
