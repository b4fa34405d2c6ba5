/* SPDX-License-Identifier: BSD-2-Clause */
/* patch.h - the next generation made from the last one instead of a whole discovery: a repair
 * (core/sm/repair.c) reads only the ports that changed, writes what it read into a copy of the
 * last generation's builder with these calls, and freezes it. The attribute decoders are shared
 * with discovery, so a port read by a repair is taken exactly as discovery would take it. */
#ifndef IBSM_FABRIC_PATCH_H
#define IBSM_FABRIC_PATCH_H

#include <stdint.h>
#include "fabric/model.h"

/* A builder holding every node, port and link of prev as prev knows them now (the
 * programmer's read-backs and assigned LIDs included); ports marked reused. */
struct model_builder *patch_builder_from(const struct fabric *prev);

/* Node o of prev added to b as prev holds it (attributes, ports as last read or written, the
 * directed route), without its links; the node's builder index, or < 0 (no memory). Shared
 * by the patch above and by carry.c, which adjusts what a carried node keeps. */
int patch_copy_node(struct model_builder *b, const struct fabric *prev, uint32_t o);
/* The M_Key SMPs to node o of prev present, as patch_copy_node() gives its copy (switch port 0's,
 * a CA's: that of the port SMPs reach it by): SMPs sent before the copy is made. */
uint64_t patch_node_mkey(const struct fabric *prev, uint32_t o);

/* PortInfo (SMP data) of port `port` of builder node n, decoded into its fields. */
void patch_take_portinfo(struct model_node_in *n, uint8_t port, const uint8_t *data);
/* SwitchInfo of switch n, decoded; PortStateChange is kept 0 in the copy. Returns the
 * PortStateChange bit as read. */
int patch_take_switchinfo(struct model_node_in *n, const uint8_t *data);
/* NodeInfo of a node not in b: adds it (no link yet). Returns its index, or -1 for a type
 * discovery does not know. *port_out: the port the NodeInfo entered by (LocalPortNum). */
int patch_add_nodeinfo(struct model_builder *b, const uint8_t *data, uint8_t *port_out);

/* NodeDescription (SMP data) of node n: control characters blanked, trailing blanks cut; an
 * empty one leaves the GUID placeholder. */
void patch_take_nodedesc(struct model_node_in *n, const uint8_t *data);

/* Port `port` of node idx loses its link, on both sides. */
void patch_unlink(struct model_builder *b, uint32_t idx, uint8_t port);

/* Directed routes: every node whose route no longer leads to it over b's links (through the
 * local node's SM port and switches only, at most SMP_DR_HOPS_MAX hops) gets a shortest one
 * (routes that still work are kept, so SMPs in flight stay valid); `reached[idx]` (n entries,
 * b's count) says which nodes are reachable at all. `no_transit` (NULL, or n entries): nodes
 * a route may end at but not cross (a switch that stopped answering). Returns how many routes
 * changed. */
uint32_t patch_fix_routes(struct model_builder *b, uint8_t *reached, const uint8_t *no_transit);

/* A new builder with the nodes of b that `reached` marks, links between them kept; *dropped:
 * how many were left out. */
struct model_builder *patch_reachable(const struct model_builder *b, const uint8_t *reached,
				      uint32_t *dropped);

#endif
