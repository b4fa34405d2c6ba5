/* SPDX-License-Identifier: BSD-2-Clause */
/* graph.c - the switch graph nue routes on: the scope's switches and usable switch-to-switch
 * links as channels (one per direction), the dependency slots between them, each switch's CA
 * sources, the connected components, and the data VLs every link of the scope will have. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "engine_dests.h"
#include "nue_parts.h"
#include "switch_links.h"

void nue_graph_free(struct nue_graph *g)
{
	free(g->out_off);
	free(g->in_off);
	free(g->in_ch);
	free(g->head);
	free(g->tail);
	free(g->rev);
	free(g->port);
	free(g->dep_off);
	free(g->chan_of_port);
	free(g->src);
	free(g->comp);
	free(g->comp_size);
	free(g->row);
	free(g->guid);
	free(g->height);
	memset(g, 0, sizeof(*g));
}

/* Is adjacency a of switch s a link nue may use: a sane port, another switch, both ends in the
 * scope's switches and ports? */
static int usable(const struct ibsm_fabric *f, const struct ibsm_scope *sc, uint32_t s,
		  const struct ibsm_adj *a)
{
	return engine_switch_link(f, sc, s, a) && ibsm_bit(&sc->switches, s) &&
	       ibsm_bit(&sc->switches, a->peer_sw);
}

/* OperVLs (PortInfo encoding: 1 VL0, 2 VL0-1, 3 VL0-3, 4 VL0-7, 5 VL0-14) as a count. */
static uint8_t vls_of_code(unsigned code)
{
	static const uint8_t n[] = { 1, 1, 2, 4, 8, 15 };
	return code < sizeof(n) ? n[code] : 15;
}

/* The VLs the core will give a link: the smaller VLCap of its ends, capped by max_op_vls. */
static unsigned link_vl_code(const struct ibsm_fabric *f, uint32_t p, uint32_t q, unsigned cap)
{
	unsigned a = ibsm_port_at(f, p)->vl_cap, b = ibsm_port_at(f, q)->vl_cap;
	unsigned v = a && b ? (a < b ? a : b) : (a ? a : b);
	if (cap && (!v || cap < v))
		v = cap;
	return v ? v : 1;
}

static int alloc_arrays(const struct ibsm_fabric *f, struct nue_graph *g, uint32_t C)
{
	size_t S = g->S ? g->S : 1, Cn = C ? C : 1;
	g->out_off = calloc(S + 1, sizeof(*g->out_off));
	g->in_off = calloc(S + 1, sizeof(*g->in_off));
	g->in_ch = malloc(Cn * sizeof(*g->in_ch));
	g->head = malloc(Cn * sizeof(*g->head));
	g->tail = malloc(Cn * sizeof(*g->tail));
	g->rev = malloc(Cn * sizeof(*g->rev));
	g->port = malloc(Cn);
	g->dep_off = malloc((Cn + 1) * sizeof(*g->dep_off));
	g->chan_of_port = malloc(((size_t)f->n_ports + 1) * sizeof(*g->chan_of_port));
	g->src = calloc(S, sizeof(*g->src));
	g->comp = malloc(S * sizeof(*g->comp));
	g->comp_size = malloc(S * sizeof(*g->comp_size));
	g->row = calloc(S, 1);
	g->guid = malloc(S * sizeof(*g->guid));
	g->height = malloc(S * sizeof(*g->height));
	return g->out_off && g->in_off && g->in_ch && g->head && g->tail && g->rev && g->port &&
	       g->dep_off && g->chan_of_port && g->src && g->comp && g->comp_size && g->row &&
	       g->guid && g->height ? 0 : -ENOMEM;
}

/* The channels, by switch and port; the reverse of each; the channels into each switch. */
static void fill_channels(const struct ibsm_fabric *f, const struct ibsm_scope *sc,
			  struct nue_graph *g, unsigned vl_cap_key, uint32_t *scratch)
{
	uint32_t C = 0;
	unsigned code = 5;
	for (uint32_t p = 0; p < f->n_ports; p++)
		g->chan_of_port[p] = NUE_NONE;
	for (uint32_t s = 0; s < g->S; s++) {
		const struct ibsm_switch *sw = ibsm_switch_at(f, s);
		const struct ibsm_node *n = ibsm_switch_node(f, s);
		g->out_off[s] = C;
		g->guid[s] = n->guid;
		g->row[s] = (uint8_t)ibsm_bit(&sc->switches, s);
		/* by port, so the channel order (and every tie) does not depend on adjacency order */
		for (unsigned port = 1; port <= n->nports; port++) {
			for (uint32_t k = 0; k < sw->nadj; k++) {
				const struct ibsm_adj *a = ibsm_adj_at(f, sw->adj0 + k);
				if (a->port != port || !usable(f, sc, s, a))
					continue;
				g->head[C] = a->peer_sw;
				g->tail[C] = s;
				g->port[C] = a->port;
				g->chan_of_port[n->port0 + port] = C;
				unsigned c = link_vl_code(f, n->port0 + port,
							  ibsm_switch_node(f, a->peer_sw)->port0 +
							  a->peer_port, vl_cap_key);
				code = c < code ? c : code;
				C++;
				break;
			}
			g->src[s] += engine_ca_behind(f, sc, n->port0 + port) != IBSM_NONE;
		}
	}
	g->out_off[g->S] = C;
	g->C = C;
	g->vls = vls_of_code(code);
	for (uint32_t c = 0; c < C; c++) {
		const struct ibsm_node *hn = ibsm_switch_node(f, g->head[c]);
		uint32_t back = NUE_NONE;
		/* the peer's port on this link: the adjacency of the tail that made c */
		const struct ibsm_switch *sw = ibsm_switch_at(f, g->tail[c]);
		for (uint32_t k = 0; k < sw->nadj; k++) {
			const struct ibsm_adj *a = ibsm_adj_at(f, sw->adj0 + k);
			if (a->port == g->port[c]) {
				back = g->chan_of_port[hn->port0 + a->peer_port];
				break;
			}
		}
		g->rev[c] = back;
		g->in_off[g->head[c] + 1]++;
	}
	for (uint32_t s = 0; s < g->S; s++) {
		g->in_off[s + 1] += g->in_off[s];
		scratch[s] = g->in_off[s];
	}
	for (uint32_t c = 0; c < C; c++)
		g->in_ch[scratch[g->head[c]]++] = c;
}

/* Every switch's hop distance from the nearest switch with CA sources (0 there; all 0 when no
 * switch has any); scratch is [S]. */
static void heights(struct nue_graph *g, uint32_t *queue)
{
	uint32_t n = 0, head = 0;
	for (uint32_t s = 0; s < g->S; s++) {
		g->height[s] = g->src[s] ? 0 : UINT32_MAX;
		if (g->src[s])
			queue[n++] = s;
	}
	while (head < n) {
		uint32_t x = queue[head++];
		for (uint32_t c = g->out_off[x]; c < g->out_off[x + 1]; c++)
			if (g->height[g->head[c]] == UINT32_MAX) {
				g->height[g->head[c]] = g->height[x] + 1;
				queue[n++] = g->head[c];
			}
	}
	for (uint32_t s = 0; s < g->S; s++)
		if (g->height[s] == UINT32_MAX)
			g->height[s] = 0;
}

/* Components over the channels; scratch is [S]. */
static void components(struct nue_graph *g, uint32_t *queue)
{
	for (uint32_t s = 0; s < g->S; s++)
		g->comp[s] = NUE_NONE;
	g->ncomp = 0;
	for (uint32_t s0 = 0; s0 < g->S; s0++) {
		if (g->comp[s0] != NUE_NONE)
			continue;
		uint32_t head = 0, n = 0, k = g->ncomp++;
		g->comp[s0] = k;
		queue[n++] = s0;
		while (head < n) {
			uint32_t x = queue[head++];
			for (uint32_t c = g->out_off[x]; c < g->out_off[x + 1]; c++)
				if (g->comp[g->head[c]] == NUE_NONE) {
					g->comp[g->head[c]] = k;
					queue[n++] = g->head[c];
				}
		}
		g->comp_size[k] = n;
	}
}

int nue_graph_build(const struct ibsm_core *core, const struct ibsm_fabric *f,
		    const struct ibsm_scope *sc, struct nue_graph *g)
{
	memset(g, 0, sizeof(*g));
	g->S = f->n_switches;
	uint32_t C = 0;
	for (uint32_t s = 0; s < g->S; s++) {
		const struct ibsm_switch *sw = ibsm_switch_at(f, s);
		for (uint32_t k = 0; k < sw->nadj && sw->adj0 + k < f->n_adj; k++)
			C += usable(f, sc, s, ibsm_adj_at(f, sw->adj0 + k));
	}
	if (alloc_arrays(f, g, C) < 0) {
		nue_graph_free(g);
		return -ENOMEM;
	}
	uint32_t *queue = malloc((g->S ? g->S : 1) * sizeof(*queue));
	if (!queue) {
		nue_graph_free(g);
		return -ENOMEM;
	}
	fill_channels(f, sc, g, (unsigned)ibsm_config_ulong(core, "max_op_vls", 0), queue);
	uint64_t D = 0;
	for (uint32_t c = 0; c < g->C; c++) {
		g->dep_off[c] = (uint32_t)D;
		uint32_t u = g->head[c];
		D += g->out_off[u + 1] - g->out_off[u];
	}
	if (D > UINT32_MAX) {
		free(queue);
		nue_graph_free(g);
		return -E2BIG;
	}
	g->dep_off[g->C] = (uint32_t)D;
	g->D = D;
	components(g, queue);
	heights(g, queue);
	free(queue);
	return 0;
}
