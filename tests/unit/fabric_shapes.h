/* fabric_shapes.h - two more shapes for the routing engines' unit tests, built with the
 * fixture's builder (fabric_fixture.h): a 3D torus and a random irregular graph like
 * OpenSM's test fabrics (a spanning tree plus extra links), deterministic from a seed.
 * Linked into every unit test program (every tests/unit source not named test_...). */
#ifndef FABRIC_SHAPES_H
#define FABRIC_SHAPES_H

#include "fabric_fixture.h"

/* x * y * z switches, switch id = (k * y + j) * x + i; ports 1/2 toward x+1 / x-1, 3/4 y, 5/6
 * z (a dimension of 2 has two parallel links, of 1 none), hosts on ports 7 ... */
struct fabric *shape_torus3d(unsigned x, unsigned y, unsigned z, unsigned hosts, uint8_t lmc);

/* n switches of radix hosts + 8: hosts on ports 1 .. hosts, then a random spanning tree (each
 * switch after the first linked to a random earlier one) and `extra` random links more between
 * switches with free ports (parallel links allowed, no self links). Same seed, same fabric. */
struct fabric *shape_irregular(unsigned n, unsigned hosts, unsigned extra, uint32_t seed,
			       uint8_t lmc);

#endif
