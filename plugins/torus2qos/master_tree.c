/* SPDX-License-Identifier: BSD-2-Clause */
/* master_tree.c - torus-2QoS multicast (torus-2QoS(8), MULTICAST ROUTING). Multicast shares the
 * VLs of unicast, so its routes must not close credit loops with unicast ones: one master
 * spanning tree, rooted at the switch in the middle of the torus (coordinate radix/2 in each
 * dimension, or the nearest switch there when that one failed), whose branches leave the root
 * along x, then y, then z, so every turn from the root towards a tip is a legal DOR turn, and no
 * branch crosses the dateline of a whole ring (on a broken ring the branch follows the segment,
 * which cannot close a loop). A group's tree is the part of the master tree that joins its
 * members' switches to the root. Switches the rule cannot reach (a mesh line cut by a failure)
 * are attached breadth-first to the tree, with a log line. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "master_tree.h"
#include "route.h"

/* The direction from p along dimension d to coordinate tc on the way to the root: the way
 * that does not cross the dateline on a whole line, the segment's way on a broken one;
 * TORUS2QOS_NO_DIR when the line does not connect them. */
static unsigned toward(const struct torus2qos_topo *t, uint32_t p, unsigned d, unsigned tc)
{
	unsigned c[TORUS2QOS_DIMS];
	torus2qos_coords(t, p, c);
	unsigned cd = c[d];
	c[d] = tc;
	uint32_t q = torus2qos_at(t, c);
	if (!torus2qos_segc(t, d, p, q))
		return TORUS2QOS_NO_DIR;
	if (t->intact[d][p])
		return tc > cd ? 2 * d : 2 * d + 1;
	uint32_t x = p;
	for (unsigned k = 1; k < t->radix[d] && torus2qos_linked(t, x, 2 * d); k++) {
		x = torus2qos_step(t, x, 2 * d);
		if (x == q)
			return 2 * d;
	}
	return 2 * d + 1;
}

/* The root: the occupied position nearest the middle (sum of coordinate distances). */
static uint32_t choose_root(const struct torus2qos_topo *t)
{
	uint32_t best = IBSM_NONE;
	unsigned best_d = ~0u;
	for (uint32_t p = 0; p < t->npos; p++) {
		if (t->grid[p] == IBSM_NONE)
			continue;
		unsigned c[TORUS2QOS_DIMS], dist = 0;
		torus2qos_coords(t, p, c);
		for (unsigned d = 0; d < TORUS2QOS_DIMS; d++) {
			unsigned m = t->radix[d] / 2;
			dist += c[d] > m ? c[d] - m : m - c[d];
		}
		if (dist < best_d) {
			best_d = dist;
			best = p;
		}
	}
	return best;
}

/* Sets switch s's parent over the first link of direction dir. */
static void attach(const struct ibsm_fabric *f, const struct torus2qos_topo *t, struct torus2qos_result *r,
		   uint32_t p, unsigned dir)
{
	uint32_t q = torus2qos_step(t, p, dir), s = t->grid[p];
	size_t at = (size_t)p * TORUS2QOS_NDIRS + dir;
	uint8_t up = t->links[at * t->pgmax];
	/* the parent's end of that same cable (parallel cables may be crossed) */
	uint32_t peer = ibsm_port_at(f, ibsm_switch_node(f, s)->port0 + up)->peer;
	r->mc_parent[s] = t->grid[q];
	r->mc_up[s] = up;
	r->mc_down[s] = ibsm_port_at(f, peer)->num;
}

int torus2qos_mcast_build(const struct ibsm_core *core, const struct ibsm_fabric *f,
		    const struct torus2qos_topo *t, struct torus2qos_result *r)
{
	uint32_t S = f->n_switches;
	r->n_switches = S;
	r->mc_parent = malloc(((size_t)S + 1) * sizeof(*r->mc_parent));
	r->mc_up = calloc((size_t)S + 1, 1);
	r->mc_down = calloc((size_t)S + 1, 1);
	uint8_t *in = calloc((size_t)t->npos + 1, 1);
	uint32_t *queue = malloc(((size_t)t->npos + 1) * sizeof(*queue));
	if (!r->mc_parent || !r->mc_up || !r->mc_down || !in || !queue) {
		free(in);
		free(queue);
		return -ENOMEM;
	}
	for (uint32_t s = 0; s < S; s++)
		r->mc_parent[s] = IBSM_NONE;
	r->root_pos = choose_root(t);
	if (r->root_pos == IBSM_NONE) {
		free(in);
		free(queue);
		return 0;
	}
	r->root_sw = t->grid[r->root_pos];
	unsigned root[TORUS2QOS_DIMS];
	torus2qos_coords(t, r->root_pos, root);
	/* the rule: towards the root z first, then y, then x (the branch, read from the root,
	 * goes x, y, z) */
	uint8_t *up = malloc((size_t)t->npos + 1);
	if (!up) {
		free(in);
		free(queue);
		return -ENOMEM;
	}
	for (uint32_t p = 0; p < t->npos; p++) {
		up[p] = TORUS2QOS_NO_DIR;
		if (t->grid[p] == IBSM_NONE || p == r->root_pos)
			continue;
		unsigned c[TORUS2QOS_DIMS];
		torus2qos_coords(t, p, c);
		for (unsigned d = TORUS2QOS_DIMS; d-- > 0;)
			if (c[d] != root[d]) {
				up[p] = (uint8_t)toward(t, p, d, root[d]);
				break;
			}
	}
	/* keep the rule's parents of the switches whose chain reaches the root */
	in[r->root_pos] = 2;
	uint32_t lost = 0;
	for (uint32_t p = 0; p < t->npos; p++) {
		if (t->grid[p] == IBSM_NONE || in[p])
			continue;
		uint32_t q = p, n = 0;
		while (!in[q] && up[q] < TORUS2QOS_NDIRS && n++ < t->npos) {
			in[q] = 1;
			q = torus2qos_step(t, q, up[q]);
		}
		uint8_t v = in[q] == 2 ? 2 : 3; /* 3: no way by the rule */
		for (uint32_t x = p; in[x] == 1; x = torus2qos_step(t, x, up[x]))
			in[x] = v;
		if (!in[q])
			in[q] = 3; /* the rule leads nowhere from q */
	}
	for (uint32_t p = 0; p < t->npos; p++)
		if (in[p] == 2 && p != r->root_pos)
			attach(f, t, r, p, up[p]);
	/* the rest breadth-first from the tree */
	uint32_t head = 0, tail = 0;
	for (uint32_t p = 0; p < t->npos; p++)
		if (in[p] == 2)
			queue[tail++] = p;
	while (head < tail) {
		uint32_t p = queue[head++];
		for (unsigned dir = 0; dir < TORUS2QOS_NDIRS; dir++) {
			uint32_t q = torus2qos_step(t, p, dir);
			if (q == IBSM_NONE || t->grid[q] == IBSM_NONE || in[q] != 3 ||
			    !torus2qos_linked(t, p, dir))
				continue;
			in[q] = 2;
			attach(f, t, r, q, dir ^ 1);
			queue[tail++] = q;
			lost++;
		}
	}
	if (lost)
		core->log(core, IBSM_LOG_INFO, "warning: %u switches joined the multicast master "
			  "tree outside dimension order (a mesh line cut by a failure)", lost);
	unsigned rc[TORUS2QOS_DIMS];
	torus2qos_coords(t, r->root_pos, rc);
	core->log(core, IBSM_LOG_VERBOSE, "multicast master tree rooted at switch 0x%016llx "
		  "(%u,%u,%u)", (unsigned long long)ibsm_switch_node(f, r->root_sw)->guid, rc[0],
		  rc[1], rc[2]);
	free(up);
	free(in);
	free(queue);
	return 0;
}

static void set_bit(uint64_t mask[4], uint8_t port)
{
	mask[port >> 6] |= 1ull << (port & 63);
}

int torus2qos_mcast(const void *result, const struct ibsm_fabric *f, uint16_t mlid, uint32_t n_members,
	      const uint32_t *members, uint64_t (*egress)[4])
{
	const struct torus2qos_result *r = result;
	(void)mlid;
	if (!r->mc_parent || r->root_sw == IBSM_NONE || f->n_switches != r->n_switches)
		return -1;
	for (uint32_t i = 0; i < n_members; i++) {
		uint32_t m = members[i];
		if (m >= f->n_ports || ibsm_port_at(f, m)->state != IBSM_STATE_ACTIVE)
			continue;
		uint32_t s = ibsm_port_switch(f, m);
		if (s == IBSM_NONE || s >= r->n_switches)
			continue;
		if (s != r->root_sw && r->mc_parent[s] == IBSM_NONE)
			continue; /* not in the master tree */
		const struct ibsm_port *mp = ibsm_port_at(f, m);
		if (ibsm_node_at(f, mp->node)->type == IBSM_SWITCH)
			set_bit(egress[s], 0);
		else
			set_bit(egress[s], ibsm_port_at(f, mp->peer)->num);
		/* up to the root, or to where the tree already reaches */
		while (s != r->root_sw) {
			uint32_t up = r->mc_parent[s];
			int had = (egress[s][r->mc_up[s] >> 6] >> (r->mc_up[s] & 63)) & 1;
			if (had)
				break;
			set_bit(egress[s], r->mc_up[s]);
			set_bit(egress[up], r->mc_down[s]);
			s = up;
		}
	}
	return 0;
}
