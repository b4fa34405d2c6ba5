/* SPDX-License-Identifier: BSD-2-Clause */
/* engine_glue.c - the pieces of an engine that are the same in minhop, updn, dor and ftree
 * (instance set-up and tear-down, the opening and closing of route(), the stride check, the
 * hop matrix, configured file names, the clock, the no-op hooks), written once. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
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
	if (m->memo && m->memo_free)
		m->memo_free(m->memo);
	free(m);
}

int engine_fail(struct ibsm_routes *out, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out->why, sizeof(out->why), fmt, ap);
	va_end(ap);
	return rc;
}

int engine_run_begin(struct engine_run *run, const struct engine_run_spec *spec, void *inst,
		     const struct ibsm_fabric *f, const struct ibsm_scope *sc,
		     struct ibsm_routes *out, void **result)
{
	memset(run, 0, sizeof(*run));
	run->spec = spec;
	run->inst = inst;
	run->core = run->inst->core;
	run->out = out;
	run->result = result;
	run->t0 = engine_now_seconds();
	*result = NULL;
	int rc = engine_check_stride(f, out);
	if (rc < 0)
		return rc;
	unsigned nbits = sc->path_bit_count ? sc->path_bit_count : 1u << f->lmc;
	if ((spec->flags & ENGINE_RUN_ONE_PATH_BIT) && nbits > 1)
		return engine_fail(out, -EINVAL,
				   "%s routes one path bit per port; the scope asks for %u (LIDs "
				   "offsets %u..%u, LMC %u)", spec->name, nbits, sc->path_bit_first,
				   sc->path_bit_first + nbits - 1, f->lmc);
	run->res = calloc(1, spec->result_size);
	if (!run->res)
		return engine_fail(out, -ENOMEM, "out of memory");
	return 0;
}

double engine_run_seconds(const struct engine_run *run)
{
	return engine_now_seconds() - run->t0;
}

int engine_run_end(struct engine_run *run, int rc)
{
	free(run->dest_ign);
	free(run->exit_ign);
	run->dest_ign = run->exit_ign = NULL;
	if (rc == 0)
		*run->result = run->res;
	else if (run->res)
		run->spec->result_free(run->res);
	run->res = NULL;
	return rc;
}

int engine_switch_hops(const struct ibsm_core *core, const struct ibsm_fabric *f,
		       const struct ibsm_scope *sc, struct ibsm_routes *out, uint8_t **hops)
{
	size_t S = f->n_switches;
	*hops = malloc(S ? S * S : 1);
	if (!*hops)
		return engine_fail(out, -ENOMEM, "no memory for the hop matrix");
	int rc = core->switch_hops(core, f, sc, *hops);
	if (rc < 0) {
		free(*hops);
		*hops = NULL;
		return engine_fail(out, rc, "switch hop matrix failed: %s", strerror(-rc));
	}
	return 0;
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
