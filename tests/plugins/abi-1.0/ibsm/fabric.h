/* SPDX-License-Identifier: BSD-2-Clause */
/* ibsm/fabric.h - read-only view of one fabric generation, handed to routing engines.
 * Part of the public plugin SDK: engines see the fabric only through this header. */
#ifndef IBSM_FABRIC_H
#define IBSM_FABRIC_H

#include <stdint.h>

#define IBSM_NONE    UINT32_MAX /* absent id */
#define IBSM_NO_PORT 0xFF       /* LFT entry: no route */

enum ibsm_node_type { IBSM_CA = 1, IBSM_SWITCH = 2, IBSM_ROUTER = 3 };

/* ibsm_port.flags */
#define IBSM_PORT_PRESENT 0x0001 /* the port exists (CA port 0 does not) */
#define IBSM_PORT_SM      0x0002 /* the port the SM runs on */
#define IBSM_PORT_ISSM    0x0004 /* CapabilityMask.IsSM */
#define IBSM_PORT_LINKUP  0x0008 /* PortPhysicalState LinkUp */
#define IBSM_PORT_ESP0    0x0010 /* switch port 0 that is an enhanced port 0 */

/* IB port states (PortInfo.PortState) */
#define IBSM_STATE_DOWN   1
#define IBSM_STATE_INIT   2
#define IBSM_STATE_ARMED  3
#define IBSM_STATE_ACTIVE 4

struct ibsm_node {
	uint64_t guid, sysimg_guid;
	const char *desc;  /* NodeDescription, never NULL */
	uint32_t port0;    /* ports[port0 + n] is port n, n = 0 .. nports */
	uint32_t sw;       /* switch id, or IBSM_NONE */
	uint8_t type;      /* enum ibsm_node_type */
	uint8_t nports;    /* NodeInfo.NumPorts (external ports) */
};

struct ibsm_port {
	uint64_t guid;     /* port GUID (switch external ports: the node GUID) */
	uint32_t node;     /* node id */
	uint32_t peer;     /* port id at the other end of the link, or IBSM_NONE */
	uint16_t lid;      /* base LID (switch external ports: 0) */
	uint8_t num;       /* port number on its node */
	uint8_t lmc;
	uint8_t state;     /* IBSM_STATE_* as last read */
	uint8_t width, speed, mtu_cap, vl_cap, oper_vls;
	uint16_t flags;    /* IBSM_PORT_* */
};

struct ibsm_switch {
	uint32_t node;     /* node id */
	uint32_t lft_cap;  /* LinearFDBCap */
	uint32_t adj0;     /* adj[adj0 .. adj0 + nadj) are this switch's links */
	uint32_t nadj;
};

/* One directed switch-to-switch link. Parallel links appear once each. */
struct ibsm_adj {
	uint32_t peer_sw;  /* switch id at the other end */
	uint8_t port, peer_port;
};

struct ibsm_fabric {
	uint32_t size;         /* sizeof(struct ibsm_fabric) of the core */
	uint32_t generation;
	uint32_t n_nodes, n_ports, n_switches, n_adj;
	const struct ibsm_node *nodes;
	const struct ibsm_port *ports;
	const struct ibsm_switch *switches;
	const struct ibsm_adj *adj;
	const uint32_t *lid_port; /* [max_lid + 1]: LID -> port id or IBSM_NONE (all 2^LMC LIDs) */
	uint32_t max_lid;
	uint32_t sm_port;      /* port id of the SM, or IBSM_NONE offline */
	uint8_t lmc;
};

/* The switch a destination port hangs off: itself for a switch port 0, the neighbour for a
 * CA port; IBSM_NONE when the CA port has no link to a switch. */
static inline uint32_t ibsm_port_switch(const struct ibsm_fabric *f, uint32_t port)
{
	const struct ibsm_port *p = &f->ports[port];
	const struct ibsm_node *n = &f->nodes[p->node];
	if (n->type == IBSM_SWITCH)
		return n->sw;
	if (p->peer == IBSM_NONE)
		return IBSM_NONE;
	return f->nodes[f->ports[p->peer].node].sw;
}

#endif
