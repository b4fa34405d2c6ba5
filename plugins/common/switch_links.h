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

#endif
