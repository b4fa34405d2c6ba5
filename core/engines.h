/* engines.h - routing engines as run-time plugins: find and load NAME.so with ABI checks, run
 * the "-R a,b,c[,no_fallback]" chain with fallback to minhop, and merge an engine's LFT rows
 * into the final tables under its scope (the core merges, never the engine). */
#ifndef IBSM_ENGINES_H
#define IBSM_ENGINES_H

#include <glib.h>
#include <gmodule.h>
#include <stdint.h>
#include <ibsm/routing.h>
#include "model.h"
#include "options.h"

#ifndef IBSM_PLUGIN_DIR
#define IBSM_PLUGIN_DIR "/usr/local/lib/ibsm/plugins"
#endif

#define ENGINE_FALLBACK "minhop"     /* tried last unless the chain says no_fallback */

/* Size of struct ibsm_engine in ABI 1.0: engines declaring less are refused. */
#define ENGINE_SIZE_ABI_1_0 (offsetof(struct ibsm_engine, dump) + sizeof(((struct ibsm_engine *)0)->dump))

#define ENGINE_ERROR engine_error_quark()
GQuark engine_error_quark(void);
enum engine_error {
	ENGINE_ERROR_NOT_FOUND = 1,  /* no NAME.so in any search directory */
	ENGINE_ERROR_OPEN,           /* dlopen failed (missing symbol, bad ELF, ...) */
	ENGINE_ERROR_ABI,            /* not an engine, or an incompatible one */
	ENGINE_ERROR_INVALID,        /* bad name or chain */
	ENGINE_ERROR_ROUTE,          /* every engine of the chain declined */
};

/* A loaded plugin. */
struct engine {
	GModule *module;
	const struct ibsm_engine *ops;
	char *name;                  /* name asked for (= file name without ".so") */
	char *path;                  /* file it came from */
};

/* Searches, in order: each directory of $IBSM_PLUGIN_PATH (colon-separated), of plugin_dir
 * (colon-separated, may be NULL), "plugins" beside the running executable (the build tree),
 * then IBSM_PLUGIN_DIR. The file is NAME.so; the first one found is loaded (RTLD_NOW, local
 * symbols) and checked, or refused with a message naming both ABI versions and the file. */
struct engine *engine_load(const char *name, const char *plugin_dir, GError **err);
void engine_unload(struct engine *e);
/* "minhop, updn, ..." (sorted, unique) from every search directory; "(none)" if empty. */
char *engine_list_available(const char *plugin_dir);
/* Loads and unloads each engine named in the chain, to refuse a bad -R at start-up. */
int engine_chain_check(const char *chain, const char *plugin_dir, GError **err);

/* The services table lent to one engine (log lines carry its name, config reads options). */
struct ibsm_core *engine_core_new(const char *engine_name, const struct sm_options *o);
void engine_core_free(struct ibsm_core *core);

/* Result of routing one generation. */
struct routing_run {
	uint32_t n_switches, stride; /* stride = max_lid + 1 bytes per switch row */
	uint8_t *lft;                /* final tables [n_switches * stride], IBSM_NO_PORT = none */
	char engine[64];             /* engine that routed */
	struct engine *loaded;       /* that engine, its instance and result, kept for */
	struct ibsm_core *core;      /* path_sl, sl2vl, dump, ... until routing_run_clear() */
	void *inst, *result;
	uint32_t rejected;           /* entries the merge refused (exit port beyond nports) */
	double seconds;              /* routing time, all attempts and the merge */
};

/* Runs chain "a,b,c[,no_fallback]" (NULL or "" = minhop) on generation f with a full scope:
 * each engine in order until one's route() returns >= 0, then minhop unless no_fallback; each
 * decline is logged with its why. Returns 0 and fills *out, or a negative errno with *err
 * (unknown engine, or nobody could route: the message lists every engine's why). */
int routing_run(const char *chain, const struct sm_options *o, const struct fabric *f,
		struct routing_run *out, GError **err);
void routing_run_clear(struct routing_run *r);

/* Merges one step's rows into final_lft. Entry (switch s, LID l) enters only if s is in
 * scope->switches, l's port is in scope->dests, l - base LID is in [path_bit_first,
 * path_bit_first + path_bit_count) (count 0 = all), and the entry is a route (no-route never
 * erases a route); it then overrides what earlier steps wrote. Entries whose exit port is
 * beyond the switch's port count are refused and logged. Returns the number refused, or
 * -EINVAL if step->stride != stride. */
int routing_merge(const struct fabric *f, const struct ibsm_scope *scope,
		  const struct ibsm_routes *step, uint8_t *final_lft, uint32_t stride);

#endif
