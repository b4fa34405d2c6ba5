/* SPDX-License-Identifier: BSD-2-Clause */
/* torus2qos.h - the model the torus-2QoS engine builds once per route(): every switch's place in the
 * torus (positions p = x + X * (y + Y * z)), the parallel links of each position in each of the
 * six coordinate directions, and the state of every 1D ring or mesh line. topo.c fills it from
 * the seeds of torus-2QoS.conf, route.c routes on it, sl.c keeps what the SA and the core's
 * QoS programming ask later (the result). */
#ifndef TORUS2QOS_H
#define TORUS2QOS_H

#include <stdint.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>
#include "policy/torus_conf.h"

#define TORUS2QOS_DIMS 3
#define TORUS2QOS_NDIRS 6             /* direction 2d: +d, 2d + 1: -d */
#define TORUS2QOS_NO_DIR 0xFF

struct torus2qos_topo {
	unsigned radix[TORUS2QOS_DIMS];  /* 1: the dimension is not used */
	uint8_t ring[TORUS2QOS_DIMS];    /* a torus dimension (radix >= 3, not a mesh) */
	int dateline[TORUS2QOS_DIMS];    /* the seed's (logged) */
	uint32_t npos;
	uint32_t *grid;            /* [npos]: switch id, IBSM_NONE for an empty position */
	uint32_t *pos;             /* [n_switches]: position, IBSM_NONE when not placed */
	unsigned pgmax;            /* portgroup_max_ports */
	uint8_t *nlinks;           /* [npos * 6]: usable parallel links in each direction */
	uint8_t *links;            /* [(npos * 6) * pgmax]: their port numbers, increasing */
	uint32_t placed, seed_index;
	/* neighbour switches over usable links, sorted: nb[nb_off[s] .. nb_off[s + 1]) */
	uint32_t *nb_off, *nb;
	/* line state, [dim][npos] (indexed by any position of the line): */
	uint8_t *intact[TORUS2QOS_DIMS]; /* ring or line with every switch and link there */
	uint16_t *seg[TORUS2QOS_DIMS];   /* segment number of the position along its line, 0xFFFF
				    * when empty */
	int whole;                 /* every line intact: plain dimension order everywhere */
};

static inline void torus2qos_coords(const struct torus2qos_topo *t, uint32_t p, unsigned c[TORUS2QOS_DIMS])
{
	c[0] = p % t->radix[0];
	c[1] = (p / t->radix[0]) % t->radix[1];
	c[2] = p / (t->radix[0] * t->radix[1]);
}

static inline uint32_t torus2qos_at(const struct torus2qos_topo *t, const unsigned c[TORUS2QOS_DIMS])
{
	return c[0] + t->radix[0] * (c[1] + t->radix[1] * c[2]);
}

/* The position one step from p in direction dir, IBSM_NONE past a mesh edge or in an unused
 * dimension. */
uint32_t torus2qos_step(const struct torus2qos_topo *t, uint32_t p, unsigned dir);

/* Builds t from the fabric and the configuration. < 0 with out->why set when the torus cannot
 * be found (no usable seed, a switch in scope that could not be placed, too many parallel
 * links). Logs what it found and what it could not place. */
int torus2qos_topo_build(const struct ibsm_core *core, const struct ibsm_fabric *f,
		   const struct ibsm_scope *sc, const struct torus_conf *conf, struct torus2qos_topo *t,
		   struct ibsm_routes *out);
void torus2qos_topo_free(struct torus2qos_topo *t);

/* Is the link of directed adjacency a of switch s usable (a switch-to-switch link both ends
 * of which the scope allows)? */
int torus2qos_usable(const struct ibsm_fabric *f, const struct ibsm_scope *sc, uint32_t s,
	       const struct ibsm_adj *a);

/* ---- route.c ---- */

/* Line states (t->intact, t->seg); < 0 with out->why naming the first torus ring that
 * failures split into disjoint segments. */
int torus2qos_lines(const struct ibsm_core *core, const struct torus2qos_topo *t, struct ibsm_routes *out);

/* Is there a usable link from occupied position p in direction dir (both ends there)? */
int torus2qos_linked(const struct torus2qos_topo *t, uint32_t p, unsigned dir);
/* Are positions p and q of one d-line connected along it (both there, one segment)? */
int torus2qos_segc(const struct torus2qos_topo *t, unsigned d, uint32_t p, uint32_t q);

/* The direction a packet at position cur takes towards position dst (both occupied):
 * 0..5, TORUS2QOS_NO_DIR when there is none, 0xFE when cur == dst. */
#define TORUS2QOS_ARRIVED 0xFE
unsigned torus2qos_next(const struct torus2qos_topo *t, uint32_t cur, uint32_t dst);

/* Fills the LFT rows of every placed switch in scope; < 0 with why on a pair it cannot route. */
int torus2qos_fill(const struct ibsm_core *core, const struct ibsm_fabric *f,
	     const struct ibsm_scope *sc, const struct torus_conf *conf,
	     const struct torus2qos_topo *t, struct ibsm_routes *out);

/* ---- sl.c: the result and its queries ---- */

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

/* SL bit d of the path between coordinates s and d of a ring of `radix` (dateline between
 * radix - 1 and 0): 1 when the shorter way crosses the dateline (a tie does not). */
static inline unsigned torus2qos_crosses(unsigned s, unsigned d, unsigned radix)
{
	unsigned lo = s < d ? s : d, hi = s < d ? d : s;
	return (hi - lo) > (lo + radix - hi);
}

/* Fills a zeroed result from the fabric and the placed torus; 0 or -1 without memory (what
 * was allocated is freed by torus2qos_result_free). */
int torus2qos_result_fill(struct torus2qos_result *r, const struct ibsm_fabric *f, const struct torus2qos_topo *t);
void torus2qos_result_free(void *result);

/* ---- master_tree.c ---- */

/* The master spanning tree into r (root near the middle of the torus; from it every branch
 * goes x first, then y, then z, never across a dateline of a whole ring). 0, or < 0 without
 * memory. Switches it cannot attach that way are attached breadth-first (logged). */
int torus2qos_mcast_build(const struct ibsm_core *core, const struct ibsm_fabric *f,
		    const struct torus2qos_topo *t, struct torus2qos_result *r);
int torus2qos_mcast(const void *result, const struct ibsm_fabric *f, uint16_t mlid, uint32_t n_members,
	      const uint32_t *members, uint64_t (*egress)[4]);
uint8_t torus2qos_path_sl(const void *result, uint8_t sl_hint, uint16_t slid, uint16_t dlid);
int torus2qos_sl2vl(const void *result, uint32_t in_port, uint32_t out_port, uint8_t vl[16]);
/* The warnings of the seed's QoS section: qos_*sl2vl set, VL arbitration not fair within VLs
 * 0-3 and 4-7, fewer than 8 VLs configured. */
void torus2qos_qos_warnings(const struct ibsm_core *core);

#endif
