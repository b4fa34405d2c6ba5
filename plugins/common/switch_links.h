/* SPDX-License-Identifier: BSD-2-Clause */
/* switch_links.h - which switch-to-switch links an engine routes over, one rule for all. */
#ifndef IBSM_PLUGIN_SWITCH_LINKS_H
#define IBSM_PLUGIN_SWITCH_LINKS_H

#include <stdint.h>
#include <ibsm/routing.h>

/* Is adjacency a of switch s a link to another switch of the fabric, by ports both switches
 * have (not port 0), whose two ports the scope sc holds? */
int engine_switch_link(const struct ibsm_fabric *f, const struct ibsm_scope *sc, uint32_t s,
		       const struct ibsm_adj *a);

/* A switch-to-switch link: the switch at its far end and the port it leaves by. */
struct engine_link {
	uint32_t peer;
	uint8_t port;
};

/* The links of switch s that engine_switch_link admits (and whose peer is a switch below
 * n_switches), in port order, into out (room for the switch's nadj); returns how many. */
uint32_t engine_switch_links(const struct ibsm_fabric *f, const struct ibsm_scope *sc, uint32_t s,
			     struct engine_link *out);

#endif
