/* SPDX-License-Identifier: BSD-2-Clause */
/* route.h - unicast over the torus model (route.c): the state of every ring and mesh line, the
 * direction a packet takes at each position, and the LFT rows that follow. */
#ifndef TORUS2QOS_ROUTE_H
#define TORUS2QOS_ROUTE_H

#include "topo.h"

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

#endif
