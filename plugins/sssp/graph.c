/* SPDX-License-Identifier: BSD-2-Clause */
/* graph.c - the switch graph the sssp engines route on (the links of the scope, indexed both
 * ways, each switch's CA ports as traffic sources, the VLs every link supports) and the order
 * they route the destinations in (OpenSM's, with the compute and I/O nodes of cn_guid_file and
 * io_guid_file first, as osm_ucast_dfsssp.c orders them). */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "engine_glue.h"
#include "guid_file.h"
#include "sssp.h"
#include "switch_links.h"

void sssp_graph_free(struct sssp_graph *g)
{
	free(g->off);
	free(g->tail);
	free(g->peer);
	free(g->port);
	free(g->in_off);
	free(g->in_link);
	free(g->port_link);
	free(g->src_w);
	memset(g, 0, sizeof(*g));
}

/* The VLCap code both ends of every link support (the OperVLs the core can give them). */
static uint8_t shared_vl_code(const struct ibsm_fabric *f, const struct sssp_graph *g)
{
	uint8_t code = 5;
	for (uint32_t l = 0; l < g->L; l++) {
		uint32_t p = ibsm_switch_node(f, g->tail[l])->port0 + g->port[l];
		const struct ibsm_port *a = ibsm_port_at(f, p);
		uint8_t c = a->vl_cap;
		if (a->peer != IBSM_NONE) {
			uint8_t d = ibsm_port_at(f, a->peer)->vl_cap;
			if (d && (!c || d < c))
				c = d;
		}
		if (c && c < code)
			code = c;
	}
	return code;
}

static int graph_alloc(struct sssp_graph *g, const struct ibsm_fabric *f)
{
	size_t S = f->n_switches, L = (size_t)f->n_adj + 1;
	g->S = f->n_switches;
	g->off = calloc(S + 1, sizeof(*g->off));
	g->in_off = calloc(S + 2, sizeof(*g->in_off));
	g->tail = malloc(L * sizeof(*g->tail));
	g->peer = malloc(L * sizeof(*g->peer));
	g->port = malloc(L);
	g->in_link = malloc(L * sizeof(*g->in_link));
	g->port_link = malloc(((size_t)f->n_ports + 1) * sizeof(*g->port_link));
	g->src_w = calloc(S ? S : 1, sizeof(*g->src_w));
	return g->off && g->in_off && g->tail && g->peer && g->port && g->in_link &&
	       g->port_link && g->src_w ? 0 : -ENOMEM;
}

int sssp_graph_build(const struct ibsm_fabric *f, const struct ibsm_scope *sc,
		     struct sssp_graph *g)
{
	memset(g, 0, sizeof(*g));
	if (graph_alloc(g, f) < 0) {
		sssp_graph_free(g);
		return -ENOMEM;
	}
	for (uint32_t p = 0; p < f->n_ports; p++)
		g->port_link[p] = IBSM_NONE;
	uint32_t L = 0;
	for (uint32_t s = 0; s < g->S; s++) {
		const struct ibsm_switch *sw = ibsm_switch_at(f, s);
		const struct ibsm_node *n = ibsm_node_at(f, sw->node);
		g->off[s] = L;
		g->S_scope += ibsm_bit(&sc->switches, s) != 0;
		/* links in port order: the adjacency list is the core's, sorted or not */
		for (unsigned port = 1; port <= n->nports; port++)
			for (uint32_t a = sw->adj0; a < sw->adj0 + sw->nadj && a < f->n_adj; a++) {
				const struct ibsm_adj *adj = ibsm_adj_at(f, a);
				if (adj->port != port || !engine_switch_link(f, sc, s, adj))
					continue;
				g->tail[L] = s;
				g->peer[L] = adj->peer_sw;
				g->port[L] = adj->port;
				g->port_link[n->port0 + port] = L;
				g->in_off[adj->peer_sw + 2]++;
				L++;
				break;
			}
		for (unsigned p = 1; p <= n->nports; p++)
			g->src_w[s] += engine_ca_behind(f, sc, n->port0 + p) != IBSM_NONE;
	}
	g->off[g->S] = L;
	g->L = L;
	/* links into each switch, by counting sort on the head */
	for (uint32_t s = 0; s < g->S; s++)
		g->in_off[s + 2] += g->in_off[s + 1];
	for (uint32_t l = 0; l < L; l++)
		g->in_link[g->in_off[g->peer[l] + 1]++] = l;
	g->vl_code = shared_vl_code(f, g);
	return 0;
}

/* ---- destination order -------------------------------------------------------------------- */

static int take_line(void *ctx, char *p, const char **why)
{
	uint64_t v;
	if (guid_parse_hex(&p, &v, why) < 0)
		return 1;
	while (isspace((unsigned char)*p))
		p++;
	if (*p) {
		*why = "junk after the GUID";
		return 1;
	}
	if (!v) {
		*why = "GUID 0";
		return 1;
	}
	return guid_list_add(ctx, v);
}

/* The port GUIDs of the file named by key (empty when unset or unreadable: logged). */
static int load_guids(const struct ibsm_core *core, const char *key, struct guid_list *g)
{
	const char *path = engine_config_path(core, key);
	if (!path)
		return 0;
	struct guid_file_reader rd = { .bad_level = IBSM_LOG_ERROR, .take = take_line, .ctx = g };
	int rc = guid_file_read(core, key, path, &rd);
	if (rc == -ENOMEM)
		return rc;
	if (rc < 0) {
		core->log(core, IBSM_LOG_ERROR, "%s unreadable: destinations in OpenSM's order", key);
		guid_list_clear(g);
		return 0;
	}
	guid_list_sort_unique(g);
	if (!g->n)
		core->log(core, IBSM_LOG_INFO, "%s %s names no port GUID", key, path);
	return 0;
}

/* Rank of destination d: 0 compute node, 1 I/O node, 2 other CA port, 3 switch LID. */
static unsigned dest_rank(const struct ibsm_fabric *f, const struct engine_dest *d,
			  const struct guid_list *cn, const struct guid_list *io)
{
	if (!d->is_ca)
		return 3;
	uint64_t guid = ibsm_port_at(f, d->port)->guid;
	if (cn->n && guid_list_has(cn, guid))
		return 0;
	if (io->n && guid_list_has(io, guid))
		return 1;
	return 2;
}

int sssp_dests_order(const struct ibsm_core *core, const struct ibsm_fabric *f,
		     const struct ibsm_scope *sc, uint32_t stride, struct engine_dests *d,
		     uint32_t *cn_ports, uint32_t *io_ports)
{
	struct guid_list cn = { 0 }, io = { 0 };
	int rc = engine_dests_build(f, sc, stride, NULL, ENGINE_DESTS_OPENSM, d);
	if (rc == 0)
		rc = load_guids(core, "cn_guid_file", &cn);
	if (rc == 0)
		rc = load_guids(core, "io_guid_file", &io);
	*cn_ports = *io_ports = 0;
	if (rc == 0 && (cn.n || io.n)) {
		/* a stable partition by rank: the order within each rank stays OpenSM's */
		struct engine_dest *v = malloc(((size_t)d->n + 1) * sizeof(*v));
		if (!v) {
			rc = -ENOMEM;
		} else {
			uint32_t k = 0;
			for (unsigned r = 0; r < 4; r++)
				for (uint32_t i = 0; i < d->n; i++)
					if (dest_rank(f, &d->v[i], &cn, &io) == r) {
						v[k++] = d->v[i];
						*cn_ports += r == 0;
						*io_ports += r == 1;
					}
			free(d->v);
			d->v = v;
		}
	}
	guid_list_clear(&cn);
	guid_list_clear(&io);
	if (rc < 0)
		engine_dests_free(d);
	return rc;
}
