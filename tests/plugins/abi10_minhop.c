/* SPDX-License-Identifier: BSD-2-Clause */
/* abi10_minhop.c - a min-hop engine written against the frozen ABI 1.0 SDK (tests/plugins/
 * abi-1.0/): arrays indexed directly, no accessors, no config_keys or summary. It proves that
 * an engine built for 1.0 still loads and routes correctly in a 1.1 core (tests/sim/20-abi10.t). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>

#if IBSM_ABI_MAJOR != 1 || IBSM_ABI_MINOR != 0
#error "abi10_minhop.c must be built against the ABI 1.0 headers (tests/plugins/abi-1.0)"
#endif

struct abi10 {
	const struct ibsm_core *core;
};

struct abi10_result {
	uint32_t generation;
	uint64_t entries;
};

static int abi10_setup(const struct ibsm_core *core, void **inst)
{
	struct abi10 *a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->core = core;
	*inst = a;
	return 0;
}

static void abi10_teardown(void *inst)
{
	free(inst);
}

/* LID offsets [*first, *end) of end port p to route (1.0 has no helper for it). A path bit
 * count of 0 means every LID of the port, as the 1.0 core passed it for a whole-fabric run. */
static int dest_offsets(const struct ibsm_fabric *f, const struct ibsm_scope *s, uint32_t stride,
			uint32_t p, unsigned *first, unsigned *end)
{
	const struct ibsm_port *port = &f->ports[p];
	if (!ibsm_bit(&s->dests, p) || port->lid == 0 || port->lmc > 7)
		return 0;
	unsigned nl = 1u << port->lmc, k = s->path_bit_first;
	unsigned e = s->path_bit_count ? k + s->path_bit_count : nl;
	if (e > nl)
		e = nl;
	while (k < e && port->lid + k <= f->max_lid && port->lid + k < stride &&
	       f->lid_port[port->lid + k] == p)
		k++;
	*first = s->path_bit_first;
	*end = k;
	return *first < *end;
}

/* The switch a destination hangs off and the port of it that delivers it; 0 if none in scope. */
static int dest_switch(const struct ibsm_fabric *f, const struct ibsm_scope *s, uint32_t p,
		       uint32_t *sw, uint8_t *exit)
{
	const struct ibsm_port *port = &f->ports[p];
	if (f->nodes[port->node].type == IBSM_SWITCH) {
		*sw = f->nodes[port->node].sw;
		*exit = 0;
		return 1;
	}
	if (port->peer == IBSM_NONE || !ibsm_bit(&s->ports, p) || !ibsm_bit(&s->ports, port->peer))
		return 0;
	const struct ibsm_port *peer = &f->ports[port->peer];
	*sw = f->nodes[peer->node].sw;
	*exit = peer->num;
	return *sw != IBSM_NONE;
}

/* Row of switch s: each LID out of the least-loaded port one hop closer to its switch. */
static uint64_t route_row(const struct ibsm_fabric *f, const struct ibsm_scope *s, uint32_t sw,
			  const uint8_t *hops, uint8_t *row, uint32_t stride)
{
	uint32_t S = f->n_switches, load[256] = { 0 };
	const struct ibsm_switch *me = &f->switches[sw];
	uint64_t n = 0;
	for (uint32_t p = 0; p < f->n_ports; p++) {
		unsigned first, end;
		uint32_t t;
		uint8_t exit;
		if (!dest_offsets(f, s, stride, p, &first, &end) || !dest_switch(f, s, p, &t, &exit))
			continue;
		uint8_t h = hops[(size_t)sw * S + t];
		for (unsigned k = first; k < end; k++) {
			uint8_t best = IBSM_NO_PORT;
			if (t == sw) {
				best = exit;
			} else if (h != 0xFF) {
				for (uint32_t a = me->adj0; a < me->adj0 + me->nadj; a++) {
					const struct ibsm_adj *adj = &f->adj[a];
					if (adj->peer_sw == sw || !ibsm_scope_link(f, s, sw, adj) ||
					    hops[(size_t)adj->peer_sw * S + t] + 1 != h)
						continue;
					if (best == IBSM_NO_PORT || load[adj->port] < load[best] ||
					    (load[adj->port] == load[best] && adj->port < best))
						best = adj->port;
				}
			}
			if (best == IBSM_NO_PORT)
				continue;
			row[f->ports[p].lid + k] = best;
			load[best]++;
			n++;
		}
	}
	return n;
}

static int abi10_route(void *inst, const struct ibsm_fabric *f, const struct ibsm_scope *s,
		       struct ibsm_routes *out, void **result)
{
	const struct ibsm_core *core = ((struct abi10 *)inst)->core;
	uint32_t S = f->n_switches;
	*result = NULL;
	if (out->stride < f->max_lid + 1) {
		snprintf(out->why, sizeof(out->why), "stride %u < max LID %u + 1", out->stride, f->max_lid);
		return -EINVAL;
	}
	uint8_t *hops = malloc(S ? (size_t)S * S : 1);
	struct abi10_result *res = calloc(1, sizeof(*res));
	int rc = (hops && res) ? core->switch_hops(core, f, s, hops) : -ENOMEM;
	if (rc < 0)
		snprintf(out->why, sizeof(out->why), "no hop matrix: %s", strerror(-rc));
	for (uint32_t sw = 0; rc == 0 && sw < S; sw++) {
		if (core->cancelled(core)) {
			snprintf(out->why, sizeof(out->why), "cancelled");
			rc = -ECANCELED;
		} else if (ibsm_bit(&s->switches, sw)) {
			res->entries += route_row(f, s, sw, hops, out->lft + (size_t)sw * out->stride,
						  out->stride);
		}
	}
	free(hops);
	if (rc < 0) {
		free(res);
		return rc;
	}
	res->generation = f->generation;
	core->log(core, IBSM_LOG_INFO, "ABI 1.0 engine: %llu LFT entries on %u switches",
		  (unsigned long long)res->entries, S);
	*result = res;
	return 0;
}

__attribute__((visibility("default"))) const struct ibsm_engine ibsm_engine = {
	IBSM_ENGINE_INIT("abi10_minhop"),
	.caps = IBSM_CAP_LMC,
	.setup = abi10_setup,
	.teardown = abi10_teardown,
	.route = abi10_route,
	.result_free = free,
};
