/* SPDX-License-Identifier: BSD-2-Clause */
/* mcast_routing.h - multicast routing as the SM runs it: a spanning tree per group with members
 * (routing/mcast_tree.h: the engine's `mcast` hook, else the core's default), the switches'
 * MFTs written from them (program/mft.h), again for every group on each heavy sweep and for
 * the groups whose members changed right after the joins and leaves that changed them (not
 * waiting for a sweep), and opensm.mcfdbs with -D. */
#ifndef IBSM_SM_MCAST_ROUTING_H
#define IBSM_SM_MCAST_ROUTING_H

#include "sm/sm.h"

void mcast_init(struct sm *sm);
void mcast_free(struct sm *sm);
/* Heavy sweep as master, routes r just published: the partitions' groups made, members gone
 * with their ports dropped (by the SA), every tree built again, MFTs programmed (and waited
 * for). */
void mcast_sweep(struct sm *sm, struct routing_result *r);
/* Groups with members now, switches' MFT Sets so far (for STATS and tests). */
unsigned mcast_trees(const struct sm *sm);

#endif
