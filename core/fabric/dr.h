/* SPDX-License-Identifier: BSD-2-Clause */
/* dr.h - the one directed-route helper of every SMP reader and writer after discovery: an
 * SMP request addressed to a node (its first-contact path) or to a port (a CA port through
 * its own switch, since a CA applies PortInfo and P_KeyTable to the port an SMP enters by). */
#ifndef IBSM_FABRIC_DR_H
#define IBSM_FABRIC_DR_H

#include <stdint.h>
#include "fabric/model.h"
#include "mad/smp.h"

/* The M_Key of node's management port: a switch's port 0, a CA's port of first contact. */
uint64_t fabric_node_mkey(const struct fabric *f, uint32_t node);
/* smp_req_init() plus the route to node `node` of f, and its M_Key. */
void fabric_smp_to_node(struct smp_req *r, const struct fabric *f, uint32_t node, uint8_t method,
			uint16_t attr, uint32_t mod, smp_done_fn done, void *ctx, uint64_t cookie);
/* smp_req_init() plus the route to port id `port` of f (see fabric_port_dr_path()) and the
 * M_Key of the management port it reaches (the CA port itself, a switch's port 0). Returns 0,
 * or -ENOENT when the port cannot be reached (a CA port without a link to a switch). */
int fabric_smp_to_port(struct smp_req *r, const struct fabric *f, uint32_t port, uint8_t method,
		       uint16_t attr, uint32_t mod, smp_done_fn done, void *ctx, uint64_t cookie);

#endif
