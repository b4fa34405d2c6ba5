/* SPDX-License-Identifier: BSD-2-Clause */
/* master_tree.h - multicast over the torus (master_tree.c): one master spanning tree per
 * route(), and each group's tree cut from it. */
#ifndef TORUS2QOS_MASTER_TREE_H
#define TORUS2QOS_MASTER_TREE_H

#include "sl.h"
#include "topo.h"

/* The master spanning tree into r (root near the middle of the torus; from it every branch
 * goes x first, then y, then z, never across a dateline of a whole ring). 0, or < 0 without
 * memory. Switches it cannot attach that way are attached breadth-first (logged). */
int torus2qos_mcast_build(const struct ibsm_core *core, const struct ibsm_fabric *f,
		    const struct torus2qos_topo *t, struct torus2qos_result *r);
int torus2qos_mcast(const void *result, const struct ibsm_fabric *f, uint16_t mlid, uint32_t n_members,
	      const uint32_t *members, uint64_t (*egress)[4]);

#endif
