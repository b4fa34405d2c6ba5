/* SPDX-License-Identifier: BSD-2-Clause */
/* mcast_tree.h - the core's default multicast spanning tree (for engines without an `mcast`
 * hook), over a generation's ACTIVE links. A group's tree is rooted at the centre of its member
 * switches (least eccentricity, then least total distance; among equals the one the MLID
 * picks, so groups spread over the centre of a fat tree), found from a hop matrix built when
 * the first group needs it (up to 4096 switches; above that the fabric's own centre, measured
 * from its switches with end ports, serves every group). The tree is the union of the
 * breadth-first paths from the members' switches to the root, less a dead-end chain below
 * the root: loop-free, every member reached once. Between two switches joined by parallel
 * links one link carries the group, chosen by MLID, so groups spread over parallel links too.
 * Pure: no MADs. */
#ifndef IBSM_ROUTING_MCAST_TREE_H
#define IBSM_ROUTING_MCAST_TREE_H

#include <stdint.h>
#include "fabric/model.h"
#include "routing/result.h"

struct mcast_topo;

/* The topology of generation f for multicast trees (f is referenced until freed). */
struct mcast_topo *mcast_topo_new(struct fabric *f);
void mcast_topo_free(struct mcast_topo *t);
const struct fabric *mcast_topo_fabric(const struct mcast_topo *t);
/* What the first group with members needs (the hop matrix, else the centre: tens of ms on a
 * large fabric), done now; mcast_topo_prepared() says whether it is. A topology may be
 * prepared on another thread while nothing else uses it. */
void mcast_topo_prepare(struct mcast_topo *t);
int mcast_topo_prepared(const struct mcast_topo *t);
/* The tree of mlid over member end ports (port ids: CA ports, switch port 0): egress[s] (one
 * 256-bit port mask per switch of f, zeroed by the caller) gets the ports switch s forwards
 * the group to. Members not ACTIVE or not attached to a switch are left out. Returns the
 * number of switches in the tree, or -1 when the members are not all connected (those in
 * the root's component are still served). */
int mcast_tree_build(struct mcast_topo *t, uint16_t mlid, const uint32_t *members, uint32_t n,
		     uint64_t (*egress)[4]);
/* The tree from the engine's `mcast` hook when one builds it, else the default above. */
int mcast_tree_route(struct mcast_topo *t, const struct routing_result *r, uint16_t mlid,
		     const uint32_t *members, uint32_t n, uint64_t (*egress)[4]);

#endif
