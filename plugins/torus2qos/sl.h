/* SPDX-License-Identifier: BSD-2-Clause */
/* sl.h - what the torus-2QoS engine keeps of a route() for later questions (sl.c): the result
 * (the torus's shape, each LID's position, each port's direction, the multicast master tree), the
 * path SL, SL2VL tables and the QoS warnings. */
#ifndef TORUS2QOS_SL_H
#define TORUS2QOS_SL_H

#include "topo.h"

struct torus2qos_result {
	uint32_t generation;
	unsigned radix[TORUS2QOS_DIMS];
	uint8_t ring[TORUS2QOS_DIMS];
	uint32_t max_lid;
	uint32_t *lid_pos;   /* [max_lid + 1]: the position of the LID's switch, or IBSM_NONE */
	uint32_t n_ports;
	uint8_t *port_dir;   /* [n_ports]: a switch port's direction (0..5), TORUS2QOS_PORT_SW for a
			      * switch port that is not a torus link, TORUS2QOS_PORT_END for a CA or
			      * router port */
	double seconds;
	/* multicast: the master spanning tree (master_tree.c), by switch id */
	uint32_t root_pos, root_sw, n_switches;
	uint32_t *mc_parent;  /* the parent switch, IBSM_NONE for the root and switches outside */
	uint8_t *mc_up;       /* the port towards the parent */
	uint8_t *mc_down;     /* the parent's port towards this switch */
};
#define TORUS2QOS_PORT_SW  0xFD
#define TORUS2QOS_PORT_END 0xFF

/* Fills a zeroed result from the fabric and the placed torus; 0 or -1 without memory (what
 * was allocated is freed by torus2qos_result_free). */
int torus2qos_result_fill(struct torus2qos_result *r, const struct ibsm_fabric *f, const struct torus2qos_topo *t);
void torus2qos_result_free(void *result);

uint8_t torus2qos_path_sl(const void *result, uint8_t sl_hint, uint16_t slid, uint16_t dlid);
int torus2qos_sl2vl(const void *result, uint32_t in_port, uint32_t out_port, uint8_t vl[16]);
/* The warnings about the QoS options torus-2QoS needs: qos_*sl2vl set, VL arbitration not fair
 * within VLs 0-3 and 4-7, fewer than 8 VLs configured. */
void torus2qos_qos_warnings(const struct ibsm_core *core);

#endif
