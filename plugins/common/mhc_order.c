/* SPDX-License-Identifier: BSD-2-Clause */
/* mhc_order.c - the OpenSM 3.3.23 routing inputs of the min-hop fill (minhop, dor), as its
 * unicast manager (osm_ucast_mgr.c, osm_switch.c) takes them: the destination order of
 * guid_routing_order_file (its port GUIDs routed first, in file order), scatter_ports (a seed:
 * among the least loaded candidates one is picked at random, deterministic given the seed) with
 * guid_routing_order_no_scatter, and port_shifting (the search among candidates starts at an
 * offset that moves with the load). A bad line of the file fails the route (FILE:LINE). */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine_glue.h"
#include "guid_file.h"
#include "mhc.h"

struct order_ctx {
	struct guid_list list;
};

/* "GUID [anything]": OpenSM reads the GUID and ignores the rest of the line. */
static int take_order_line(void *ctx, char *s, const char **why)
{
	struct order_ctx *c = ctx;
	uint64_t v;
	if (guid_parse_hex(&s, &v, why) < 0)
		return 1;
	if (v == 0) {
		*why = "GUID 0";
		return 1;
	}
	return guid_list_add(&c->list, v);
}

int mhc_order_options(const struct ibsm_core *core, struct mhc_order_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->order_file = engine_config_path(core, "guid_routing_order_file");
	o->port_shifting = ibsm_config_bool(core, "port_shifting", 0);
	o->scatter_seed = ibsm_config_ulong(core, "scatter_ports", 0);
	o->no_scatter_listed = ibsm_config_bool(core, "guid_routing_order_no_scatter", 0);
	return o->order_file || o->port_shifting || o->scatter_seed;
}

/* Moves the destinations whose port GUID the list names to the front, in list order (a GUID
 * named twice or absent from the fabric is passed over, as OpenSM does); marks every
 * destination's scatter flag. Returns how many were moved, or -ENOMEM. */
static int reorder(const struct ibsm_fabric *f, struct engine_dests *d, const struct guid_list *l,
		   const struct mhc_order_opts *o)
{
	struct engine_dest *nv = malloc(((size_t)d->n + 1) * sizeof(*nv));
	uint8_t *taken = calloc((size_t)d->n + 1, 1);
	if (!nv || !taken) {
		free(nv);
		free(taken);
		return -ENOMEM;
	}
	uint32_t k = 0;
	for (uint32_t i = 0; l && i < l->n; i++)
		for (uint32_t j = 0; j < d->n; j++)
			if (!taken[j] && ibsm_port_at(f, d->v[j].port)->guid == l->v[i]) {
				taken[j] = 1;
				nv[k] = d->v[j];
				nv[k++].scatter = o->scatter_seed && !o->no_scatter_listed;
				break; /* a switch's GUID names its port 0 once */
			}
	int moved = (int)k;
	for (uint32_t j = 0; j < d->n; j++)
		if (!taken[j]) {
			nv[k] = d->v[j];
			nv[k++].scatter = o->scatter_seed != 0;
		}
	free(d->v);
	free(taken);
	d->v = nv;
	return moved;
}

int mhc_order_apply(const struct ibsm_core *core, const struct ibsm_fabric *f,
		    const struct mhc_order_opts *o, struct engine_dests *d, struct ibsm_routes *out)
{
	struct order_ctx c = { { 0 } };
	if (o->order_file) {
		struct guid_file_reader rd = { .bad_level = IBSM_LOG_ERROR, .take = take_order_line,
					       .ctx = &c, .skipped = "; routing refused" };
		int rc = guid_file_read(core, "guid_routing_order_file", o->order_file, &rd);
		if (rc < 0 || rd.bad_lines) {
			guid_list_clear(&c.list);
			if (rc == -ENOMEM)
				return engine_fail(out, rc, "out of memory");
			return engine_fail(out, rc < 0 ? rc : -EINVAL, "guid_routing_order_file %s: %s",
					   o->order_file, rc < 0 ? rd.why : "bad lines (logged with "
					   "their line numbers): not routed");
		}
	}
	int moved = reorder(f, d, o->order_file ? &c.list : NULL, o);
	uint32_t listed = c.list.n;
	guid_list_clear(&c.list);
	if (moved < 0)
		return engine_fail(out, moved, "out of memory");
	if (o->order_file)
		core->log(core, IBSM_LOG_VERBOSE, "guid_routing_order_file %s: %d of %u GUIDs routed "
			  "first", o->order_file, moved, listed);
	return 0;
}

/* splitmix64: a small generator of good quality, one state per switch row */
uint64_t mhc_order_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}
