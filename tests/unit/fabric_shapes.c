/* fabric_shapes.c - a 3D torus and random irregular fabrics for the routing engines' unit
 * tests (lash, updn, dnup, file), so each test builds them the same way. */
#include <stdio.h>
#include "fabric_shapes.h"

static void add_hosts(struct fx_builder *x, uint32_t sw, uint8_t first, unsigned hosts)
{
	for (unsigned h = 0; h < hosts; h++) {
		char desc[64];
		snprintf(desc, sizeof(desc), "host-%u", x->n_cas);
		fx_link(x, sw, (uint8_t)(first + h), fx_add_ca(x, 1, desc), 1);
	}
}

struct fabric *shape_torus3d(unsigned xs, unsigned ys, unsigned zs, unsigned hosts, uint8_t lmc)
{
	struct fx_builder x;
	fx_builder_init(&x);
	unsigned n = xs * ys * zs, size[3] = { xs, ys, zs };
	uint32_t *sw = g_new(uint32_t, n ? n : 1);
	for (unsigned s = 0; s < n; s++) {
		char desc[64];
		snprintf(desc, sizeof(desc), "torus-%u-%u-%u", s % xs, s / xs % ys, s / xs / ys);
		sw[s] = fx_add_switch(&x, (uint8_t)(6 + hosts), desc);
	}
	for (unsigned s = 0; s < n; s++) {
		unsigned c[3] = { s % xs, s / xs % ys, s / xs / ys };
		for (unsigned d = 0; d < 3; d++) {
			if (size[d] < 2)
				continue;
			unsigned nc[3] = { c[0], c[1], c[2] };
			nc[d] = (c[d] + 1) % size[d];
			unsigned t = (nc[2] * ys + nc[1]) * xs + nc[0];
			fx_link(&x, sw[s], (uint8_t)(2 * d + 1), sw[t], (uint8_t)(2 * d + 2));
		}
	}
	for (unsigned s = 0; s < n; s++)
		add_hosts(&x, sw[s], 7, hosts);
	g_free(sw);
	return fx_finish(&x, lmc);
}

static uint32_t lcg(uint32_t *state)
{
	*state = *state * 1664525u + 1013904223u;
	return *state >> 8;
}

struct fabric *shape_irregular(unsigned n, unsigned hosts, unsigned extra, uint32_t seed,
			       uint8_t lmc)
{
	struct fx_builder x;
	fx_builder_init(&x);
	unsigned radix = hosts + 8;
	uint32_t *sw = g_new(uint32_t, n ? n : 1);
	uint8_t *next = g_new(uint8_t, n ? n : 1); /* next free port */
	uint32_t st = seed * 2654435761u + 1;
	for (unsigned s = 0; s < n; s++) {
		char desc[64];
		snprintf(desc, sizeof(desc), "sw-%u", s);
		sw[s] = fx_add_switch(&x, (uint8_t)radix, desc);
		next[s] = (uint8_t)(hosts + 1);
	}
	for (unsigned s = 1; s < n; s++) {
		unsigned p;
		do
			p = lcg(&st) % s;
		while (next[p] > radix);
		fx_link(&x, sw[s], next[s]++, sw[p], next[p]++);
	}
	for (unsigned e = 0, tries = 0; e < extra && tries < 100 * extra + 100; tries++) {
		unsigned a = lcg(&st) % n, b = lcg(&st) % n;
		if (a == b || next[a] > radix || next[b] > radix)
			continue;
		fx_link(&x, sw[a], next[a]++, sw[b], next[b]++);
		e++;
	}
	for (unsigned s = 0; s < n; s++)
		add_hosts(&x, sw[s], 1, hosts);
	g_free(sw);
	g_free(next);
	return fx_finish(&x, lmc);
}
