/* SPDX-License-Identifier: BSD-2-Clause */
/* hops.h - all-pairs switch hop counts over the links a scope may use; the core lends this to
 * routing engines (ibsm_core.switch_hops) so each engine need not write its own BFS. */
#ifndef IBSM_HOPS_H
#define IBSM_HOPS_H

#include <stdint.h>
#include <ibsm/routing.h>

#define HOPS_MAX 254 /* longest distance stored; farther switches read as unreachable (0xFF) */

enum hops_method {
	HOPS_AUTO = 0,   /* pick the cheaper of the two below from the fabric's shape */
	HOPS_BFS,        /* one breadth-first search per source switch */
	HOPS_BITSET,     /* all sources at once, one bit per (source, switch), level by level */
};

/* hops[a * n_switches + b] = switch hops from a to b using only links with both ends in
 * s->ports (ibsm_scope_link); 0 on the diagonal, 0xFF when unreachable or farther than
 * HOPS_MAX. Returns 0, -EINVAL on bad arguments or -ENOMEM. */
int switch_hops(const struct ibsm_fabric *f, const struct ibsm_scope *s, uint8_t *hops);
int switch_hops_method(const struct ibsm_fabric *f, const struct ibsm_scope *s, uint8_t *hops,
		       enum hops_method method);

#endif
