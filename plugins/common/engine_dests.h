/* SPDX-License-Identifier: BSD-2-Clause */
/* engine_dests.h - the destinations of a scope as the min-hop and up/down engines route them:
 * one record per end port in scope (its switch, the port that delivers it, the LID offsets
 * routed), in OpenSM's order or grouped by switch; and the test "which CA port hangs off this
 * switch port in scope" the engines share. Compiled into every engine (plugins/common), so
 * every non-static name carries the engine_ prefix. */
#ifndef ENGINE_DESTS_H
#define ENGINE_DESTS_H

#include <stdint.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>

/* One destination end port of the scope. */
struct engine_dest {
	uint32_t port;        /* port id */
	uint32_t sw;          /* switch it hangs off */
	uint16_t base;        /* base LID */
	uint8_t first, end;   /* LID offsets routed here: [first, end) */
	uint8_t exit;         /* port of sw that delivers it: 0 for the switch's own LID */
	uint8_t is_ca;        /* CA/router port: counts in the data-traffic balance */
	uint8_t ignored;      /* listed in the ignore file: counts nowhere */
	uint8_t scatter;      /* scatter_ports applies to its first LID (mhc_order.c) */
};

enum engine_dest_order {
	/* OpenSM's: CA ports grouped by their switch (switches with the most end ports first,
	 * then by id; a switch's ports in order), then every switch's own LID */
	ENGINE_DESTS_OPENSM,
	/* switch by switch (by id): its CA ports in port order, then its own LID */
	ENGINE_DESTS_BY_SWITCH,
};

struct engine_dests {
	struct engine_dest *v;
	uint32_t n;
	uint32_t *doff;       /* BY_SWITCH: [S + 1], switch s's are v[doff[s] .. doff[s + 1]) */
	uint8_t max_end;      /* the largest end */
};

/* The CA or router port linked to switch port `port` (a port id) when both ends are usable
 * in the scope, else IBSM_NONE. */
uint32_t engine_ca_behind(const struct ibsm_fabric *f, const struct ibsm_scope *sc,
			  uint32_t port);

/* Fills d with the destinations the scope routes in LFT rows of `stride` entries, in order;
 * dest_ign ([n_ports] or NULL) marks the ignored ones. Returns 0 or -ENOMEM (d then empty). */
int engine_dests_build(const struct ibsm_fabric *f, const struct ibsm_scope *sc,
		       uint32_t stride, const uint8_t *dest_ign, enum engine_dest_order order,
		       struct engine_dests *d);
void engine_dests_free(struct engine_dests *d);

#endif
