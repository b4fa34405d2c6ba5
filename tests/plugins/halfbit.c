/* SPDX-License-Identifier: BSD-2-Clause */
/* halfbit.c - a test routing engine that routes deliberately little: only LID offset 1
 * (path bit 1) of each destination in scope, and only in the rows of the first half of the
 * scope's switches (by switch id; with n switches in scope, the (n + 1) / 2 lowest ids),
 * along a minimum-hop path (lowest port among equals). It exists so tests can prove that the
 * core merges a chain step's scope correctly. Built only against the public SDK. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>
#include "hop_route.h"

#define HALFBIT_EXPORT __attribute__((visibility("default")))
#define HALFBIT_OFFSET 1

struct halfbit {
	const struct ibsm_core *core;
};

struct halfbit_result {
	unsigned long routed;
};

static int halfbit_setup(const struct ibsm_core *core, void **inst)
{
	struct halfbit *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->core = core;
	*inst = h;
	return 0;
}

static void halfbit_teardown(void *inst)
{
	free(inst);
}

static int halfbit_route(void *inst, const struct ibsm_fabric *f, const struct ibsm_scope *sc,
			 struct ibsm_routes *out, void **result)
{
	struct halfbit *hb = inst;
	const struct ibsm_core *core = hb->core;
	uint32_t S = f->n_switches;
	struct halfbit_result *res = calloc(1, sizeof(*res));
	if (!res) {
		snprintf(out->why, sizeof(out->why), "out of memory");
		return -ENOMEM;
	}
	*result = res;
	unsigned first = sc->path_bit_first;
	unsigned end = sc->path_bit_count ? first + sc->path_bit_count : 256;
	if (HALFBIT_OFFSET < first || HALFBIT_OFFSET >= end || S == 0)
		return 0;

	uint32_t in_scope = 0;
	for (uint32_t s = 0; s < S; s++)
		in_scope += (uint32_t)ibsm_bit(&sc->switches, s);
	uint32_t half = (in_scope + 1) / 2;

	uint8_t *hops = malloc((size_t)S * S);
	if (!hops) {
		free(res);
		*result = NULL;
		snprintf(out->why, sizeof(out->why), "out of memory");
		return -ENOMEM;
	}
	int rc = core->switch_hops(core, f, sc, hops);
	if (rc < 0) {
		free(hops);
		free(res);
		*result = NULL;
		snprintf(out->why, sizeof(out->why), "switch_hops failed (%d)", rc);
		return rc;
	}
	for (uint32_t s = 0, done = 0; s < S && done < half; s++) {
		if (!ibsm_bit(&sc->switches, s))
			continue;
		done++;
		uint8_t *row = out->lft + (size_t)s * out->stride;
		for (uint32_t p = 0; p < f->n_ports; p++) {
			const struct ibsm_port *port = &f->ports[p];
			int is_switch = f->nodes[port->node].type == IBSM_SWITCH;
			if (is_switch ? port->num != 0 : port->num == 0)
				continue; /* not an end port */
			if (!ibsm_bit(&sc->dests, p) || !port->lid || port->lmc < 1 || port->lmc > 7)
				continue;
			uint32_t lid = port->lid + HALFBIT_OFFSET;
			if (lid > f->max_lid || lid >= out->stride || f->lid_port[lid] != p)
				continue;
			uint8_t e = hop_exit_port(f, sc, hops, s, p);
			if (e == IBSM_NO_PORT)
				continue;
			row[lid] = e;
			res->routed++;
		}
	}
	free(hops);
	core->log(core, IBSM_LOG_VERBOSE, "%lu entries in %u of %u switch rows",
		  res->routed, half, in_scope);
	return 0;
}

static void halfbit_result_free(void *result)
{
	free(result);
}

static uint8_t halfbit_path_sl(const void *result, uint8_t sl_hint, uint16_t slid, uint16_t dlid)
{
	(void)result;
	(void)slid;
	(void)dlid;
	return sl_hint;
}

static int halfbit_dump(const void *result, const char *dir, const char *suffix)
{
	(void)result;
	(void)dir;
	(void)suffix;
	return 0;
}

HALFBIT_EXPORT const struct ibsm_engine ibsm_engine = {
	IBSM_ENGINE_INIT("halfbit"),
	.caps = IBSM_CAP_LMC,
	.setup = halfbit_setup,
	.teardown = halfbit_teardown,
	.route = halfbit_route,
	.result_free = halfbit_result_free,
	.path_sl = halfbit_path_sl,
	.dump = halfbit_dump,
};
