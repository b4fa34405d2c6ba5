/* SPDX-License-Identifier: BSD-2-Clause */
/* ipoib_groups.h - the multicast groups partitions.conf asks for, made at start (and for
 * partitions a reload adds) and kept for good: the IPoIB broadcast group
 * ff1<scope>:401b:<P_Key>::ffff:ffff of every partition flagged `ipoib` (always of the default
 * partition: ff12:401b:ffff::ffff:ffff) with its rate/mtu/sl/scope, and every `mgid=` group
 * with its flags. Q_Key 0x0b1b for IPoIB groups, 0 for others, unless qkey= says otherwise.
 * As OpenSM 3.3.23 (osm_prtn_config.c, osm_prtn.c): an mgid= group is made once per scope= it
 * has or inherits from its header (none: scope 2, link-local, the MGID's scope nibble set to it,
 * an explicit `mgid=ff15::1` included); the broadcast group is always link-local (the header's
 * scope= reaches only the mgid= items, as OpenSM's partition_create), HopLimit
 * 0 in link-local scope and 255 beyond; without QoS (-Q off) a partition's sl= is taken as 0
 * (its broadcast group and the mgid= groups that inherit it; an sl= on the mgid item stays). */
#ifndef IBSM_SA_IPOIB_GROUPS_H
#define IBSM_SA_IPOIB_GROUPS_H

#include "policy/partitions.h"
#include "sa/mcast_groups.h"

#define IPOIB_QKEY 0x0b1b

/* Creates the groups of policy pp (NULL: the default partition only) that do not exist yet;
 * the number created (logged, with what could not be). */
unsigned ipoib_groups_create(struct mc_groups *g, const struct part_policy *pp, uint8_t packet_life,
			     int qos);

#endif
