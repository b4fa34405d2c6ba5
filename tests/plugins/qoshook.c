/* SPDX-License-Identifier: BSD-2-Clause */
/* qoshook.c - a test routing engine that routes every LID along a minimum-hop path and
 * supplies the QoS hooks an engine such as torus-2QoS has: an SL2VL map of its own for switch
 * (input, output) pairs whose output is an external port (VL = 7 - SL mod 8, SL 15 dropped),
 * nothing for CA ports and switch port 0 (the options apply there), and a VLArb table of its
 * own for every switch external port (high: VL 3 weight 99; low: VL v weight 10 + v). It lets
 * tests/sim/34-qos.t prove that the core writes an engine's tables over the options for the
 * ports it claims, and the options elsewhere. Built only against the public SDK. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>
#include "hop_route.h"

struct qoshook {
	const struct ibsm_core *core;
};

/* What the hooks need after route(): which port ids are switch external ports. */
struct qoshook_result {
	uint32_t n_ports;
	uint8_t *external;         /* [n_ports] 1: a switch port other than 0 */
};

static int qoshook_setup(const struct ibsm_core *core, void **inst)
{
	struct qoshook *q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->core = core;
	*inst = q;
	return 0;
}

static void qoshook_teardown(void *inst)
{
	free(inst);
}

static void qoshook_result_free(void *result)
{
	struct qoshook_result *r = result;
	if (r)
		free(r->external);
	free(r);
}

static int qoshook_route(void *inst, const struct ibsm_fabric *f, const struct ibsm_scope *sc,
			 struct ibsm_routes *out, void **result)
{
	struct qoshook *q = inst;
	uint32_t S = f->n_switches;
	struct qoshook_result *res = calloc(1, sizeof(*res));
	uint8_t *hops = malloc((size_t)S * S + 1);
	if (res)
		res->external = calloc(f->n_ports + 1, 1);
	if (!res || !hops || !res->external) {
		free(hops);
		qoshook_result_free(res);
		snprintf(out->why, sizeof(out->why), "out of memory");
		return -ENOMEM;
	}
	res->n_ports = f->n_ports;
	for (uint32_t p = 0; p < f->n_ports; p++) {
		const struct ibsm_port *port = ibsm_port_at(f, p);
		res->external[p] = ibsm_node_at(f, port->node)->type == IBSM_SWITCH && port->num;
	}
	*result = res;
	int rc = S ? q->core->switch_hops(q->core, f, sc, hops) : 0;
	if (rc < 0) {
		free(hops);
		snprintf(out->why, sizeof(out->why), "switch_hops failed (%d)", rc);
		return rc;
	}
	for (uint32_t s = 0; s < S; s++) {
		if (!ibsm_bit(&sc->switches, s))
			continue;
		uint8_t *row = out->lft + (size_t)s * out->stride;
		for (uint32_t lid = 1; lid <= f->max_lid && lid < out->stride; lid++) {
			uint32_t p = f->lid_port[lid];
			if (p != IBSM_NONE && ibsm_bit(&sc->dests, p))
				row[lid] = hop_exit_port(f, sc, hops, s, p);
		}
	}
	free(hops);
	return 0;
}

static int qoshook_sl2vl(const void *result, uint32_t in_port, uint32_t out_port, uint8_t vl[16])
{
	const struct qoshook_result *r = result;
	(void)in_port;
	if (out_port >= r->n_ports || !r->external[out_port])
		return -1; /* CA ports and switch port 0: the options' tables */
	for (int sl = 0; sl < 16; sl++)
		vl[sl] = sl == 15 ? 15 : (uint8_t)(7 - sl % 8);
	return 0;
}

static int qoshook_vlarb(const void *result, uint32_t port, uint8_t high[64][2], uint8_t low[64][2])
{
	const struct qoshook_result *r = result;
	if (port >= r->n_ports || !r->external[port])
		return -1;
	memset(high, 0, 64 * 2);
	memset(low, 0, 64 * 2);
	high[0][0] = 3;
	high[0][1] = 99;
	for (int v = 0; v < 8; v++) {
		low[v][0] = (uint8_t)v;
		low[v][1] = (uint8_t)(10 + v);
	}
	return 0;
}

__attribute__((visibility("default"))) const struct ibsm_engine ibsm_engine = {
	IBSM_ENGINE_INIT("qoshook"),
	.setup = qoshook_setup,
	.teardown = qoshook_teardown,
	.route = qoshook_route,
	.result_free = qoshook_result_free,
	.sl2vl = qoshook_sl2vl,
	.vlarb = qoshook_vlarb,
	.summary = "test engine: minimum-hop routes and SL2VL/VLArb tables of its own for switch "
		   "external ports",
};
