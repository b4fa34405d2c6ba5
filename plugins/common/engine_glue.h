/* engine_glue.h - the boilerplate every bundled engine shares around its route(): the instance
 * (core handle and the stamp of its GUID file), the LFT stride check, configured file names,
 * the clock, and the no-op SL/dump hooks. Compiled into every engine (plugins/common), so
 * every non-static name carries the engine_ prefix. */
#ifndef ENGINE_GLUE_H
#define ENGINE_GLUE_H

#include <stdint.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>
#include "guid_file.h"

/* What setup() makes: the core, and the engine's GUID file (-i or -a) as last read. */
struct engine_inst {
	const struct ibsm_core *core;
	struct guid_file_stamp stamp;
};

int engine_inst_setup(const struct ibsm_core *core, void **inst); /* 0 or -ENOMEM */
void engine_inst_teardown(void *inst);

/* 0, or -EINVAL with out->why set when an LFT row cannot hold every LID of f. */
int engine_check_stride(const struct ibsm_fabric *f, struct ibsm_routes *out);

/* The file named by config key, or NULL when unset ("(null)" is opensm.conf's unset). */
const char *engine_config_path(const struct ibsm_core *core, const char *key);

double engine_now_seconds(void); /* CLOCK_MONOTONIC */

/* path_sl for engines without SL policy: the hint as given. */
uint8_t engine_path_sl_hint(const void *result, uint8_t sl_hint, uint16_t slid, uint16_t dlid);

/* dump for engines with nothing of their own to write (the core writes the LFT dumps). */
int engine_dump_nothing(const void *result, const char *dir, const char *suffix);

#endif
