/* SPDX-License-Identifier: BSD-2-Clause */
/* ibsm/orchestrator.h - ABI 1.2: the routing orchestrator, the plugin that decides which engines
 * route which part of the fabric (routing chains: NVIDIA's SM manual, "Routing Chains"). It is a
 * shared object exporting one symbol, "ibsm_orchestrator", a const struct ibsm_orchestrator; it is
 * chosen with -R NAME (alone, or with ",no_fallback") or, when rch_policy_file is set and -R names
 * no orchestrator, the default one, "chain". Like an engine it never sends a MAD: it opens engines
 * as chain steps and runs them on scopes through the services below, and the core merges, checks
 * and programs what they route.
 *
 * Lifetime and threads:
 *  - setup() runs on the main thread when the routing chain is built (start-up and every
 *    configuration reload). It reads its policy, opens its steps with step_open() (only
 *    there) and returns 0; < 0 with why refuses the chain: at start-up ibsm exits, on a
 *    reload the previous chain stays in force.
 *  - run() routes one fabric generation on the routing thread: it calls step_route() for each
 *    step it wants, in the order it wants, with the scope it chooses. Each successful
 *    step_route() merges that step's rows under its scope over what earlier calls left (a
 *    later step wins); a failed one changes nothing. After run() returns >= 0 the core walks
 *    the whole table and refuses it if any (switch, LID) pair is not delivered. The fabric and
 *    the scopes are valid during the call only.
 *  - teardown() runs on the main thread after the last run() and after every result computed
 *    by its steps was freed.
 *  - The struct ibsm_orch_core and the strings config() returns stay valid until teardown().
 *  - Files it reads (its policies) go through read_file() (ABI 1.3), never blocking. */
#ifndef IBSM_ORCHESTRATOR_H
#define IBSM_ORCHESTRATOR_H

#include <ibsm/routing.h>

#define IBSM_ORCH_EXPORT IBSM_ENGINE_EXPORT

struct ibsm_orch_core {
	uint32_t size;          /* sizeof(struct ibsm_orch_core) of the core */
	void *cookie;           /* the core's own */
	void (*log)(const struct ibsm_orch_core *, int level, const char *fmt, ...)
		__attribute__((format(printf, 3, 4)));
	/* The main configuration's value of key (file, command line), or NULL when unset. */
	const char *(*config)(const struct ibsm_orch_core *, const char *key);
	/* setup() only. Opens engine `engine` as chain step `id` (ids unique, > 0) with its own
	 * configuration file config_file (NULL: none; its keys override the main file's except
	 * qos*, lmc and routing_engine, which are noted and ignored) and runs the engine's
	 * setup(). Returns a handle >= 0 for step_route(), or < 0 with why ("engine 'x' not
	 * found ...", "FILE:LINE:COL: ..."). */
	int (*step_open)(const struct ibsm_orch_core *, uint32_t id, const char *engine,
			 const char *config_file, char *why, size_t why_len);
	/* run() only. Routes step `handle` on scope (its switches, ports, destinations and path
	 * bits; NULL bit sets mean all; scope->step is set by the core to the step's id) and
	 * merges its rows, then walks the merged tables over the scope. 0: merged; < 0: the
	 * engine declined or left holes, why says which rule, nothing was merged. The step's
	 * routes are dumped as opensm-*.<id>.<engine> files with the routing log flags, failed
	 * or not. */
	int (*step_route)(const struct ibsm_orch_core *, int handle, const struct ibsm_scope *scope,
			  char *why, size_t why_len);
	int (*cancelled)(const struct ibsm_orch_core *); /* non-zero: stop, return < 0 */
	/* ---- ABI 1.3 (check size, or call ibsm_orch_read_file() below, which does) ---- */
	/* The core's file reader, as struct ibsm_core's read_file (ibsm/routing.h): a regular
	 * file of at most 16 MiB, never blocking; 0 with *text (free() it) or a negative errno
	 * with why naming key and path. */
	int (*read_file)(const struct ibsm_orch_core *, const char *key, const char *path,
			 char **text, size_t *len, char *why, size_t why_len);
};

/* ABI 1.3: core->read_file() when the core lends it, else -ENOSYS with why (see
 * ibsm_read_file()). */
static inline int ibsm_orch_read_file(const struct ibsm_orch_core *core, const char *key,
				      const char *path, char **text, size_t *len, char *why,
				      size_t why_len)
{
	*text = NULL;
	*len = 0;
	if (!path || !*path) {
		if (why_len)
			snprintf(why, why_len, "%s: no file named", key);
		return -ENOENT;
	}
	if (!IBSM_CORE_HAS(core, struct ibsm_orch_core, read_file)) {
		if (why_len)
			snprintf(why, why_len, "%s %s: not read: this ibsm lends its orchestrators no "
				 "file reader (core of ABI 1.2)", key, path);
		return -ENOSYS;
	}
	return core->read_file(core, key, path, text, len, why, why_len);
}

struct ibsm_orchestrator {
	uint16_t abi_major, abi_minor; /* IBSM_ABI_MAJOR, and 2 or more */
	uint32_t size;                 /* sizeof(struct ibsm_orchestrator) it was built with */
	const char *name;
	const char *summary;           /* one line for listings, or NULL */
	const struct ibsm_config_key *config_keys; /* the main-file keys it reads, or NULL */
	int (*setup)(const struct ibsm_orch_core *core, void **inst, char *why, size_t why_len);
	void (*teardown)(void *inst);
	/* Routes fabric f by calling step_route(); < 0 with why: the generation is not routed
	 * (the previous routes stay programmed). */
	int (*run)(void *inst, const struct ibsm_fabric *f, char *why, size_t why_len);
};

#define IBSM_ORCHESTRATOR_INIT(orch_name) \
	.abi_major = IBSM_ABI_MAJOR, .abi_minor = IBSM_ABI_MINOR, \
	.size = sizeof(struct ibsm_orchestrator), .name = (orch_name)

#endif
