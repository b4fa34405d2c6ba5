/* SPDX-License-Identifier: BSD-2-Clause */
/* topo.h - the model the torus-2QoS engine builds once per route(): every switch's place in the
 * torus (positions p = x + X * (y + Y * z)), the parallel links of each position in each of the
 * six coordinate directions, and the state of every 1D ring or mesh line. topo.c fills it from
 * the seeds of torus-2QoS.conf; route.c routes on it (route.h), sl.c keeps what the SA and the
 * core's QoS programming ask later (sl.h), master_tree.c spans multicast over it
 * (master_tree.h). */
#ifndef TORUS2QOS_TOPO_H
#define TORUS2QOS_TOPO_H

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

/* Does the shorter way between coordinates s and d of a ring of `radix` cross its dateline
 * (between radix - 1 and 0)? 1 when it does (a tie does not): SL bit d of that path. */
static inline unsigned torus2qos_crosses(unsigned s, unsigned d, unsigned radix)
{
	unsigned lo = s < d ? s : d, hi = s < d ? d : s;
	return (hi - lo) > (lo + radix - hi);
}

#endif
