/* engine_glue.c - the pieces of an engine that are the same in minhop, updn, dor and ftree
 * (instance set-up and tear-down, the stride check, configured file names, the clock, the
 * no-op hooks), written once. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "engine_glue.h"

int engine_inst_setup(const struct ibsm_core *core, void **inst)
{
	struct engine_inst *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->core = core;
	*inst = m;
	return 0;
}

void engine_inst_teardown(void *inst)
{
	struct engine_inst *m = inst;
	if (!m)
		return;
	guid_file_stamp_clear(&m->stamp);
	free(m);
}

int engine_check_stride(const struct ibsm_fabric *f, struct ibsm_routes *out)
{
	if (f->max_lid && out->stride < f->max_lid + 1) {
		snprintf(out->why, sizeof(out->why),
			 "LFT row stride %u is shorter than max LID %u + 1", out->stride,
			 f->max_lid);
		return -EINVAL;
	}
	return 0;
}

const char *engine_config_path(const struct ibsm_core *core, const char *key)
{
	const char *v = core->config ? core->config(core, key) : NULL;
	if (!v || !*v || !strcmp(v, "(null)"))
		return NULL;
	return v;
}

double engine_now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

uint8_t engine_path_sl_hint(const void *result, uint8_t sl_hint, uint16_t slid, uint16_t dlid)
{
	(void)result;
	(void)slid;
	(void)dlid;
	return sl_hint;
}

int engine_dump_nothing(const void *result, const char *dir, const char *suffix)
{
	(void)result;
	(void)dir;
	(void)suffix;
	return 0;
}
