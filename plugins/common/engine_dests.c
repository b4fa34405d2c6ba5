/* SPDX-License-Identifier: BSD-2-Clause */
/* engine_dests.c - builds the destination list of a scope (see engine_dests.h) once for the
 * min-hop engines and updn, which route the same end ports in different orders. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "engine_dests.h"

uint32_t engine_ca_behind(const struct ibsm_fabric *f, const struct ibsm_scope *sc,
			  uint32_t port)
{
	uint32_t q = ibsm_port_at(f, port)->peer;
	if (q == IBSM_NONE)
		return IBSM_NONE;
	const struct ibsm_port *qp = ibsm_port_at(f, q);
	if (qp->num == 0 || ibsm_node_at(f, qp->node)->type == IBSM_SWITCH)
		return IBSM_NONE;
	if (!ibsm_bit(&sc->ports, port) || !ibsm_bit(&sc->ports, q))
		return IBSM_NONE;
	return q;
}

/* Appends end port p, hanging off switch sw by port exit, if the scope routes to it. */
static void dest_add(const struct ibsm_fabric *f, const struct ibsm_scope *sc, uint32_t stride,
		     uint32_t p, uint32_t sw, uint8_t exit, const uint8_t *dest_ign,
		     struct engine_dests *d)
{
	unsigned first, end;
	if (!ibsm_scope_lid_offsets(f, sc, stride, p, &first, &end))
		return;
	d->v[d->n++] = (struct engine_dest){
		.port = p, .sw = sw, .base = ibsm_port_at(f, p)->lid, .first = (uint8_t)first,
		.end = (uint8_t)end, .exit = exit, .is_ca = exit != 0,
		.ignored = dest_ign ? dest_ign[p] : 0,
	};
	if (end > d->max_end)
		d->max_end = (uint8_t)end;
}

/* The CA ports of switch s in port order. */
static void dests_of_switch(const struct ibsm_fabric *f, const struct ibsm_scope *sc,
			    uint32_t stride, uint32_t s, const uint8_t *dest_ign,
			    struct engine_dests *d)
{
	const struct ibsm_node *n = ibsm_switch_node(f, s);
	for (unsigned p = 1; p <= n->nports; p++) {
		uint32_t q = engine_ca_behind(f, sc, n->port0 + p);
		if (q != IBSM_NONE)
			dest_add(f, sc, stride, q, s, (uint8_t)p, dest_ign, d);
	}
}

struct sw_order {
	uint32_t sw, endports;
};

static int sw_order_cmp(const void *x, const void *y)
{
	const struct sw_order *a = x, *b = y;
	if (a->endports != b->endports)
		return a->endports > b->endports ? -1 : 1;
	return a->sw < b->sw ? -1 : a->sw > b->sw;
}

/* OpenSM's order of the switches: most linked non-switch ports first (whatever the scope),
 * then by id. NULL without memory. */
static struct sw_order *opensm_switch_order(const struct ibsm_fabric *f)
{
	uint32_t S = f->n_switches;
	struct sw_order *order = malloc((S ? S : 1) * sizeof(*order));
	if (!order)
		return NULL;
	for (uint32_t s = 0; s < S; s++) {
		const struct ibsm_node *n = ibsm_switch_node(f, s);
		order[s].sw = s;
		order[s].endports = 0;
		for (unsigned p = 1; p <= n->nports; p++) {
			uint32_t q = ibsm_port_at(f, n->port0 + p)->peer;
			if (q != IBSM_NONE &&
			    ibsm_node_at(f, ibsm_port_at(f, q)->node)->type != IBSM_SWITCH)
				order[s].endports++;
		}
	}
	qsort(order, S, sizeof(*order), sw_order_cmp);
	return order;
}

int engine_dests_build(const struct ibsm_fabric *f, const struct ibsm_scope *sc,
		       uint32_t stride, const uint8_t *dest_ign, enum engine_dest_order order,
		       struct engine_dests *d)
{
	uint32_t S = f->n_switches;
	memset(d, 0, sizeof(*d));
	d->v = malloc(((size_t)f->n_ports + 1) * sizeof(*d->v));
	if (!d->v)
		return -ENOMEM;
	if (order == ENGINE_DESTS_BY_SWITCH) {
		d->doff = malloc(((size_t)S + 1) * sizeof(*d->doff));
		if (!d->doff) {
			engine_dests_free(d);
			return -ENOMEM;
		}
		for (uint32_t s = 0; s < S; s++) {
			d->doff[s] = d->n;
			dests_of_switch(f, sc, stride, s, dest_ign, d);
			dest_add(f, sc, stride, ibsm_switch_node(f, s)->port0, s, 0, dest_ign, d);
		}
		d->doff[S] = d->n;
		return 0;
	}
	struct sw_order *sw = opensm_switch_order(f);
	if (!sw) {
		engine_dests_free(d);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < S; i++)
		dests_of_switch(f, sc, stride, sw[i].sw, dest_ign, d);
	for (uint32_t s = 0; s < S; s++)
		dest_add(f, sc, stride, ibsm_switch_node(f, s)->port0, s, 0, dest_ign, d);
	free(sw);
	return 0;
}

void engine_dests_free(struct engine_dests *d)
{
	free(d->v);
	free(d->doff);
	memset(d, 0, sizeof(*d));
}
