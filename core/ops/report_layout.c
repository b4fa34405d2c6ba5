/* SPDX-License-Identifier: BSD-2-Clause */
/* report_layout.c - where the fabric report draws each switch: a grid when the switch links
 * form a torus or mesh (found from the port numbers: a link leaving by port p always arrives
 * by the same port q, and p/q name one dimension's two directions, as torus cablings and the
 * simulator's torus files are numbered), else tiers by hops from the switches with CAs
 * (leaves at the bottom, spines on top), each tier ordered by its neighbours below. */
#include <stdlib.h>
#include <string.h>
#include "ops/report.h"

#define BOX_W 64.0
#define GAP_X 16.0
#define TIER_H 110.0
#define MARGIN 40.0

static const struct ibsm_adj *adj_of(const struct ibsm_fabric *f, uint32_t s, uint32_t i)
{
	return ibsm_adj_at(f, ibsm_switch_at(f, s)->adj0 + i);
}

/* ---- grid ---------------------------------------------------------------------------- */

/* Coordinates from port numbers; 0 when they are not those of a torus or mesh. */
static int find_grid(const struct ibsm_fabric *f, struct report_layout *l)
{
	uint32_t S = f->n_switches;
	if (S < 3 || !f->n_adj)
		return 0;
	uint8_t opp[256];
	memset(opp, 0, sizeof(opp));
	for (uint32_t s = 0; s < S; s++)
		for (uint32_t i = 0; i < ibsm_switch_at(f, s)->nadj; i++) {
			const struct ibsm_adj *a = adj_of(f, s, i);
			if (a->port == a->peer_port)
				return 0;
			if ((opp[a->port] && opp[a->port] != a->peer_port) ||
			    (opp[a->peer_port] && opp[a->peer_port] != a->port))
				return 0;
			opp[a->port] = a->peer_port;
			opp[a->peer_port] = a->port;
		}
	/* dimensions: port pairs, lower port number = minus direction */
	int dim_of[256], sign_of[256];
	unsigned nd = 0;
	for (unsigned p = 1; p < 256; p++) {
		dim_of[p] = -1;
		sign_of[p] = 0;
	}
	for (unsigned p = 1; p < 256; p++) {
		if (!opp[p] || dim_of[p] >= 0)
			continue;
		if (nd == 3)
			return 0;
		dim_of[p] = dim_of[opp[p]] = (int)nd++;
		/* plus: the direction in which switch 0's neighbour has the lower id (GUID order),
		 * so switches numbered along a dimension are drawn left to right, top to bottom */
		uint32_t via_p = IBSM_NONE, via_q = IBSM_NONE;
		for (uint32_t i = 0; i < ibsm_switch_at(f, 0)->nadj; i++) {
			const struct ibsm_adj *a = adj_of(f, 0, i);
			if (a->port == p)
				via_p = MIN(via_p, a->peer_sw);
			else if (a->port == opp[p])
				via_q = MIN(via_q, a->peer_sw);
		}
		sign_of[p] = via_p < via_q ? 1 : -1;
		sign_of[opp[p]] = -sign_of[p];
	}
	/* ring sizes: follow the plus port from switch 0 */
	long size[3] = { 0, 0, 0 };
	for (unsigned d = 0; d < nd; d++) {
		unsigned plus = 0;
		for (unsigned p = 1; p < 256 && !plus; p++)
			if (dim_of[p] == (int)d && sign_of[p] > 0)
				plus = p;
		uint32_t s = 0;
		for (uint32_t steps = 1; steps <= S; steps++) {
			uint32_t next = IBSM_NONE;
			for (uint32_t i = 0; i < ibsm_switch_at(f, s)->nadj; i++)
				if (adj_of(f, s, i)->port == plus)
					next = adj_of(f, s, i)->peer_sw;
			if (next == IBSM_NONE)
				break;
			if (next == 0) {
				size[d] = steps;
				break;
			}
			s = next;
		}
		l->wrap[d] = size[d] > 0;
	}
	/* breadth first from switch 0; a ring's coordinate is taken modulo its size */
	long *c = g_new0(long, (size_t)S * 3);
	uint8_t *seen = g_new0(uint8_t, S);
	uint32_t *queue = g_new(uint32_t, S);
	uint32_t head = 0, tail = 0;
	int ok = 1;
	seen[0] = 1;
	queue[tail++] = 0;
	while (ok && head < tail) {
		uint32_t s = queue[head++];
		for (uint32_t i = 0; ok && i < ibsm_switch_at(f, s)->nadj; i++) {
			const struct ibsm_adj *a = adj_of(f, s, i);
			long want[3];
			for (unsigned d = 0; d < 3; d++)
				want[d] = c[(size_t)s * 3 + d];
			int d = dim_of[a->port];
			want[d] += sign_of[a->port];
			if (size[d])
				want[d] = ((want[d] % size[d]) + size[d]) % size[d];
			uint32_t t = a->peer_sw;
			if (!seen[t]) {
				seen[t] = 1;
				memcpy(&c[(size_t)t * 3], want, sizeof(want));
				queue[tail++] = t;
			} else if (memcmp(&c[(size_t)t * 3], want, sizeof(want)))
				ok = 0;
		}
	}
	ok = ok && tail == S;
	long lo[3] = { 0, 0, 0 }, hi[3] = { 0, 0, 0 };
	for (uint32_t s = 0; ok && s < S; s++)
		for (unsigned d = 0; d < 3; d++) {
			lo[d] = MIN(lo[d], c[(size_t)s * 3 + d]);
			hi[d] = MAX(hi[d], c[(size_t)s * 3 + d]);
		}
	uint64_t cells = 1;
	for (unsigned d = 0; d < 3; d++) {
		l->dims[d] = (uint32_t)(hi[d] - lo[d] + 1);
		cells *= l->dims[d];
	}
	/* every switch on its own cell */
	if (ok && cells == S) {
		uint8_t *taken = g_new0(uint8_t, S);
		for (uint32_t s = 0; ok && s < S; s++) {
			uint64_t cell = 0;
			for (int d = 2; d >= 0; d--)
				cell = cell * l->dims[d] + (uint64_t)(c[(size_t)s * 3 + d] - lo[d]);
			ok = !taken[cell];
			taken[cell] = 1;
		}
		g_free(taken);
	} else
		ok = 0;
	if (ok) {
		/* z slices side by side */
		for (uint32_t s = 0; s < S; s++) {
			long x = c[(size_t)s * 3] - lo[0], y = c[(size_t)s * 3 + 1] - lo[1];
			long z = c[(size_t)s * 3 + 2] - lo[2];
			double col = (double)(z * (long)(l->dims[0] + 1) + x);
			l->x[s] = MARGIN + BOX_W / 2 + col * (BOX_W + GAP_X * 2);
			l->y[s] = MARGIN + 20 + (double)y * (TIER_H * 0.8);
			l->tier[s] = (uint32_t)y;
		}
		double cols = (double)(l->dims[2] * (l->dims[0] + 1) - 1);
		l->width = 2 * MARGIN + cols * (BOX_W + GAP_X * 2);
		l->cell_w = BOX_W + GAP_X * 2;
		l->cell_h = TIER_H * 0.8;
		l->height = 2 * MARGIN + 40 + (double)l->dims[1] * TIER_H * 0.8;
		l->n_tiers = l->dims[1];
	}
	g_free(c);
	g_free(seen);
	g_free(queue);
	return ok;
}

/* ---- tiers ----------------------------------------------------------------------------- */

struct order_key {
	double key;
	uint32_t sw;
};

static int by_key(const void *a, const void *b)
{
	const struct order_key *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->sw < y->sw ? -1 : x->sw > y->sw;
}

static void tiers(const struct ibsm_fabric *f, struct report_layout *l)
{
	uint32_t S = f->n_switches;
	uint32_t *queue = g_new(uint32_t, S + 1);
	uint32_t head = 0, tail = 0;
	for (uint32_t s = 0; s < S; s++)
		l->tier[s] = UINT32_MAX;
	/* tier 0: switches with a CA or router */
	for (uint32_t p = 0; p < f->n_ports; p++) {
		const struct ibsm_port *pt = ibsm_port_at(f, p);
		if (ibsm_node_at(f, pt->node)->type == IBSM_SWITCH || pt->peer == IBSM_NONE)
			continue;
		uint32_t s = ibsm_port_switch(f, p);
		if (s != IBSM_NONE && l->tier[s]) {
			l->tier[s] = 0;
			queue[tail++] = s;
		}
	}
	for (;;) {
		while (head < tail) {
			uint32_t s = queue[head++];
			for (uint32_t i = 0; i < ibsm_switch_at(f, s)->nadj; i++) {
				uint32_t t = adj_of(f, s, i)->peer_sw;
				if (l->tier[t] == UINT32_MAX) {
					l->tier[t] = l->tier[s] + 1;
					queue[tail++] = t;
				}
			}
		}
		/* a part without CAs: from its first switch, on tier 0 */
		uint32_t s = 0;
		while (s < S && l->tier[s] != UINT32_MAX)
			s++;
		if (s == S)
			break;
		l->tier[s] = 0;
		queue[tail++] = s;
	}
	l->n_tiers = 0;
	for (uint32_t s = 0; s < S; s++)
		l->n_tiers = MAX(l->n_tiers, l->tier[s] + 1);
	/* order: tier 0 by switch id (GUID order), each tier above by the mean position of its
	 * neighbours below */
	struct order_key *k = g_new(struct order_key, S + 1);
	double *pos = g_new0(double, S + 1);
	uint32_t widest = 1;
	for (uint32_t t = 0; t < l->n_tiers; t++) {
		uint32_t n = 0;
		for (uint32_t s = 0; s < S; s++) {
			if (l->tier[s] != t)
				continue;
			double sum = 0;
			unsigned cnt = 0;
			for (uint32_t i = 0; t && i < ibsm_switch_at(f, s)->nadj; i++) {
				uint32_t u = adj_of(f, s, i)->peer_sw;
				if (l->tier[u] + 1 == t) {
					sum += pos[u];
					cnt++;
				}
			}
			k[n].key = cnt ? sum / cnt : (double)s;
			k[n++].sw = s;
		}
		qsort(k, n, sizeof(*k), by_key);
		for (uint32_t i = 0; i < n; i++)
			pos[k[i].sw] = i;
		widest = MAX(widest, n);
	}
	/* centre each tier over the widest */
	uint32_t *count = g_new0(uint32_t, l->n_tiers + 1);
	for (uint32_t s = 0; s < S; s++)
		count[l->tier[s]]++;
	for (uint32_t s = 0; s < S; s++) {
		double off = (widest - count[l->tier[s]]) * (BOX_W + GAP_X) / 2;
		l->x[s] = MARGIN + BOX_W / 2 + off + pos[s] * (BOX_W + GAP_X);
		l->y[s] = MARGIN + 20 + (double)(l->n_tiers - 1 - l->tier[s]) * TIER_H;
	}
	l->width = 2 * MARGIN + widest * (BOX_W + GAP_X);
	l->cell_w = BOX_W + GAP_X;
	l->cell_h = TIER_H;
	l->height = 2 * MARGIN + 40 + (double)(l->n_tiers - 1) * TIER_H;
	g_free(count);
	g_free(pos);
	g_free(k);
	g_free(queue);
}

void report_layout(const struct fabric *fab, struct report_layout *l)
{
	const struct ibsm_fabric *f = &fab->pub;
	memset(l, 0, sizeof(*l));
	l->n = f->n_switches;
	l->x = g_new0(double, l->n + 1);
	l->y = g_new0(double, l->n + 1);
	l->tier = g_new0(uint32_t, l->n + 1);
	l->dims[0] = l->dims[1] = l->dims[2] = 1;
	l->grid = find_grid(f, l);
	if (!l->grid) {
		l->dims[0] = l->dims[1] = l->dims[2] = 1;
		l->wrap[0] = l->wrap[1] = l->wrap[2] = 0;
		tiers(f, l);
	}
}

void report_layout_clear(struct report_layout *l)
{
	g_free(l->x);
	g_free(l->y);
	g_free(l->tier);
	memset(l, 0, sizeof(*l));
}
