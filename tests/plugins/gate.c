/* SPDX-License-Identifier: BSD-2-Clause */
/* gate.c - test routing engine that holds its route() until a file exists: it waits (polling
 * core->cancelled()) until the file named by $IBSM_GATE_FILE is there, then routes every LID of
 * every end port in scope along a minimum-hop path (lowest port among equals). A test can so
 * look at the fabric while routing is known not to have finished (tests/sim/83-route-overlap.t:
 * what needs no routes is programmed beside the routing). Without $IBSM_GATE_FILE it does not
 * wait; after `gate_seconds` (default 300) of waiting it declines. Built against the SDK only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>
#include "hop_route.h"

static const struct ibsm_config_key gate_keys[] = {
	{ "gate_seconds", "300", "How long the gate test engine waits for $IBSM_GATE_FILE" },
	{ NULL, NULL, NULL },
};

static int gate_setup(const struct ibsm_core *core, void **inst)
{
	*inst = (void *)core;
	return 0;
}

/* 0 once the file is there (or none is named), else why not */
static int gate_wait(const struct ibsm_core *core, struct ibsm_routes *out)
{
	const char *file = getenv("IBSM_GATE_FILE");
	if (!file || !*file)
		return 0;
	unsigned long limit_ms = ibsm_config_ulong(core, "gate_seconds", 300) * 1000;
	core->log(core, IBSM_LOG_INFO, "gate: waiting for %s", file);
	for (unsigned long ms = 0; ms < limit_ms; ms += 5) {
		if (access(file, F_OK) == 0) {
			core->log(core, IBSM_LOG_INFO, "gate: %s is there after %lu ms: routing", file, ms);
			return 0;
		}
		if (core->cancelled(core)) {
			snprintf(out->why, sizeof(out->why), "cancelled while waiting for %s", file);
			return -ECANCELED;
		}
		struct timespec ts = { 0, 5000000 };
		nanosleep(&ts, NULL);
	}
	snprintf(out->why, sizeof(out->why), "%s never appeared", file);
	return -ETIMEDOUT;
}

static int gate_route(void *inst, const struct ibsm_fabric *f, const struct ibsm_scope *sc,
		      struct ibsm_routes *out, void **result)
{
	const struct ibsm_core *core = inst;
	*result = NULL;
	int rc = gate_wait(core, out);
	if (rc < 0)
		return rc;
	uint32_t S = f->n_switches;
	uint8_t *hops = malloc((size_t)S * S + 1);
	if (!hops) {
		snprintf(out->why, sizeof(out->why), "out of memory");
		return -ENOMEM;
	}
	rc = core->switch_hops(core, f, sc, hops);
	if (rc < 0) {
		free(hops);
		snprintf(out->why, sizeof(out->why), "switch_hops failed (%d)", rc);
		return rc;
	}
	for (uint32_t s = 0; s < S; s++) {
		if (!ibsm_bit(&sc->switches, s))
			continue;
		uint8_t *row = out->lft + (size_t)s * out->stride;
		for (uint32_t p = 0; p < f->n_ports; p++) {
			const struct ibsm_port *port = &f->ports[p];
			int is_switch = f->nodes[port->node].type == IBSM_SWITCH;
			if (is_switch ? port->num != 0 : port->num == 0)
				continue; /* not an end port */
			if (!ibsm_bit(&sc->dests, p) || !port->lid)
				continue;
			uint8_t e = hop_exit_port(f, sc, hops, s, p);
			for (uint32_t k = 0; e != IBSM_NO_PORT && k < (1u << port->lmc); k++)
				if (port->lid + k < out->stride)
					row[port->lid + k] = e;
		}
	}
	free(hops);
	return 0;
}

IBSM_ENGINE_EXPORT const struct ibsm_engine ibsm_engine = {
	IBSM_ENGINE_INIT("gate"),
	.caps = IBSM_CAP_LMC,
	.setup = gate_setup,
	.route = gate_route,
	.config_keys = gate_keys,
	.summary = "test engine: routes by minimum hops once $IBSM_GATE_FILE exists",
};
