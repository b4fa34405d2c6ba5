/* SPDX-License-Identifier: BSD-2-Clause */
/* hop_route.h - the minimum-hop exit port the test engines share (lowest port among equals),
 * over the hop matrix the core lends them (core->switch_hops). Header-only: each test engine
 * is one .so built from one file. */
#ifndef IBSM_TESTS_HOP_ROUTE_H
#define IBSM_TESTS_HOP_ROUTE_H

#include <ibsm/fabric.h>
#include <ibsm/routing.h>

/* The exit port of switch s toward end port p, or IBSM_NO_PORT. */
static inline uint8_t hop_exit_port(const struct ibsm_fabric *f, const struct ibsm_scope *sc,
			 const uint8_t *hops, uint32_t s, uint32_t p)
{
	uint32_t S = f->n_switches, t = ibsm_port_switch(f, p);
	const struct ibsm_port *port = &f->ports[p];
	if (t == IBSM_NONE)
		return IBSM_NO_PORT;
	if (f->nodes[port->node].type != IBSM_SWITCH &&
	    (!ibsm_bit(&sc->ports, p) || !ibsm_bit(&sc->ports, port->peer)))
		return IBSM_NO_PORT; /* the CA's own link is not usable */
	if (t == s)
		return f->nodes[port->node].type == IBSM_SWITCH ? 0 : f->ports[port->peer].num;
	uint8_t h = hops[(size_t)s * S + t];
	if (h == 0xFF || h == 0)
		return IBSM_NO_PORT;
	const struct ibsm_switch *sw = &f->switches[s];
	uint8_t best = IBSM_NO_PORT;
	for (uint32_t a = sw->adj0; a < sw->adj0 + sw->nadj; a++) {
		const struct ibsm_adj *adj = &f->adj[a];
		if (adj->port < best && hops[(size_t)adj->peer_sw * S + t] == h - 1 &&
		    ibsm_scope_link(f, sc, s, adj))
			best = adj->port;
	}
	return best;
}

#endif
