/* SPDX-License-Identifier: BSD-2-Clause */
/* engine_glue.h - the boilerplate every bundled engine shares around its route(): the instance
 * (core handle and the stamp of its GUID file), the opening and closing of route() (clock,
 * LFT stride check, result, failure text), the switch hop matrix, configured file names, and
 * the no-op SL/dump hooks. Compiled into every engine (plugins/common), so every non-static
 * name carries the engine_ prefix. */
#ifndef ENGINE_GLUE_H
#define ENGINE_GLUE_H

#include <stddef.h>
#include <stdint.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>
#include "guid_file.h"

/* What setup() makes: the core, and the engine's GUID file (-i or -a) as last read. */
struct engine_inst {
	const struct ibsm_core *core;
	struct guid_file_stamp stamp;
	void *memo;                     /* what an engine keeps between runs (mhc.h: the fill's) */
	void (*memo_free)(void *memo);  /* frees it at teardown */
};

int engine_inst_setup(const struct ibsm_core *core, void **inst); /* 0 or -ENOMEM */
void engine_inst_teardown(void *inst);

/* ---- one route() call --------------------------------------------------------------------- */

/* What an engine's route() opening needs to know, once per engine. */
struct engine_run_spec {
	const char *name;               /* the engine's, for its messages */
	size_t result_size;             /* sizeof the engine's result struct */
	void (*result_free)(void *);    /* frees a result that is not handed over */
	unsigned flags;                 /* ENGINE_RUN_* */
};

#define ENGINE_RUN_ONE_PATH_BIT 0x1 /* decline a scope routing more than one LID per port */

struct engine_run {
	const struct engine_run_spec *spec;
	struct engine_inst *inst;
	const struct ibsm_core *core;
	struct ibsm_routes *out;
	void **result;
	void *res;                      /* the zeroed result, spec->result_size bytes */
	double t0;                      /* engine_now_seconds() at the start */
	uint8_t *dest_ign, *exit_ign;   /* mhc_ignore_apply: the -i file's marks, or NULL */
	uint32_t ignore_matched;
};

/* The opening of every route(): *result = NULL, the clock started, the LFT stride (and with
 * ENGINE_RUN_ONE_PATH_BIT the path bits) checked, run->res allocated. Returns 0, or < 0 with
 * out->why set (run then holds nothing to free). */
int engine_run_begin(struct engine_run *run, const struct engine_run_spec *spec, void *inst,
		     const struct ibsm_fabric *f, const struct ibsm_scope *sc,
		     struct ibsm_routes *out, void **result);

double engine_run_seconds(const struct engine_run *run); /* since engine_run_begin */

/* The closing: frees the run's scratch; rc == 0 hands run->res over as *result, else it is
 * freed (out->why already says why). Returns rc. */
int engine_run_end(struct engine_run *run, int rc);

/* Sets out->why (printf-style) and returns rc: `return engine_fail(out, -EINVAL, ...);`. */
int engine_fail(struct ibsm_routes *out, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* 0, or -EINVAL with out->why set when an LFT row cannot hold every LID of f. */
int engine_check_stride(const struct ibsm_fabric *f, struct ibsm_routes *out);

/* The scope's S x S switch hop matrix from the core (malloc'd into *hops). Returns 0, or < 0
 * with out->why set and *hops NULL. */
int engine_switch_hops(const struct ibsm_core *core, const struct ibsm_fabric *f,
		       const struct ibsm_scope *sc, struct ibsm_routes *out, uint8_t **hops);

/* ---- worker threads (engine_threads.c) ---------------------------------------------------- */

/* How many threads for `work` units: the value of config key (1 .. max) if set, else 1 below
 * `threshold` units and 2 above it on a machine with two or more CPUs. */
unsigned engine_thread_count(const struct ibsm_core *core, const char *key, uint64_t work,
			     uint64_t threshold, unsigned max);

/* Per-thread state written in hot loops: give the struct this attribute and allocate the
 * array with engine_workers_alloc, so two threads never write to one cache line. */
#define ENGINE_WORKER_ALIGNED __attribute__((aligned(64)))

/* n zeroed workers of `size` bytes (a multiple of 64: an ENGINE_WORKER_ALIGNED struct),
 * cache-line aligned; free() frees them. NULL without memory. */
void *engine_workers_alloc(unsigned n, size_t size);

/* Runs fn on the n workers of the array `workers` (elements of `size` bytes): the first on the
 * calling thread, the others on threads of their own, all joined before it returns. Workers
 * must share their work through a common dispenser: one whose thread cannot be created stays
 * idle and the others do its part. Returns the threads that ran (1 .. n). */
unsigned engine_run_workers(void *(*fn)(void *), void *workers, size_t size, unsigned n);

/* ---- configuration, clock, hooks ---------------------------------------------------------- */

/* The file named by config key, or NULL when unset ("(null)" is opensm.conf's unset). */
const char *engine_config_path(const struct ibsm_core *core, const char *key);

double engine_now_seconds(void); /* CLOCK_MONOTONIC */

/* path_sl for engines without SL policy: the hint as given. */
uint8_t engine_path_sl_hint(const void *result, uint8_t sl_hint, uint16_t slid, uint16_t dlid);

/* dump for engines with nothing of their own to write (the core writes the LFT dumps). */
int engine_dump_nothing(const void *result, const char *dir, const char *suffix);

#endif
