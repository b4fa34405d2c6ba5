/* SPDX-License-Identifier: BSD-2-Clause */
/* graph.c - the switch graph lash routes on: the scope's usable switch-to-switch links sorted
 * by port, the components, the CA ports behind each switch, and the fewest data VLs any of the
 * links will carry (OpenSM's lash reads the least OperVLs of the switch ports). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "engine_dests.h"
#include "lash.h"
#include "switch_links.h"

void lash_graph_free(struct lash_graph *g)
{
	free(g->off);
	free(g->peer);
	free(g->port);
	free(g->guid);
	free(g->comp);
	free(g->ca_src);
	memset(g, 0, sizeof(*g));
}

/* The OperVLs code a port will get: the least VLCap of its link's two ends (the core programs
 * it so), at most max_op_vls; a port that does not say its VLCap counts its OperVLs. */
static uint8_t port_vls(const struct ibsm_fabric *f, uint32_t p, unsigned max_code)
{
	const struct ibsm_port *a = ibsm_port_at(f, p);
	uint8_t code = a->vl_cap ? a->vl_cap : a->oper_vls;
	if (a->peer != IBSM_NONE) {
		const struct ibsm_port *b = ibsm_port_at(f, a->peer);
		uint8_t pc = b->vl_cap ? b->vl_cap : b->oper_vls;
		if (pc && (!code || pc < code))
			code = pc;
	}
	if (!code)
		code = 1;
	return code < max_code ? code : (uint8_t)max_code;
}

static void components(struct lash_graph *g, uint32_t *queue)
{
	for (uint32_t s = 0; s < g->S; s++)
		g->comp[s] = UINT32_MAX;
	for (uint32_t s0 = 0; s0 < g->S; s0++) {
		if (g->comp[s0] != UINT32_MAX)
			continue;
		uint32_t c = g->ncomp++, head = 0, n = 0;
		g->comp[s0] = c;
		queue[n++] = s0;
		while (head < n) {
			uint32_t x = queue[head++];
			for (uint32_t l = g->off[x]; l < g->off[x + 1]; l++)
				if (g->comp[g->peer[l]] == UINT32_MAX) {
					g->comp[g->peer[l]] = c;
					queue[n++] = g->peer[l];
				}
		}
	}
}

int lash_graph_build(const struct ibsm_core *core, const struct ibsm_fabric *f,
		     const struct ibsm_scope *sc, struct lash_graph *g)
{
	uint32_t S = f->n_switches, maxadj = 0;
	memset(g, 0, sizeof(*g));
	g->S = S;
	unsigned max_code = (unsigned)ibsm_config_ulong(core, "max_op_vls", 5);
	if (max_code < 1 || max_code > 5)
		max_code = 5;
	for (uint32_t s = 0; s < S; s++)
		if (ibsm_switch_at(f, s)->nadj > maxadj)
			maxadj = ibsm_switch_at(f, s)->nadj;
	size_t sz = S ? S : 1;
	g->off = malloc((sz + 1) * sizeof(*g->off));
	g->guid = malloc(sz * sizeof(*g->guid));
	g->comp = malloc(sz * sizeof(*g->comp));
	g->ca_src = calloc(sz, sizeof(*g->ca_src));
	g->peer = malloc(((size_t)f->n_adj + 1) * sizeof(*g->peer));
	g->port = malloc((size_t)f->n_adj + 1);
	struct engine_link *tmp = malloc(((size_t)maxadj + 1) * sizeof(*tmp));
	uint32_t *queue = malloc(sz * sizeof(*queue));
	if (!g->off || !g->guid || !g->comp || !g->ca_src || !g->peer || !g->port || !tmp ||
	    !queue) {
		free(tmp);
		free(queue);
		lash_graph_free(g);
		return -ENOMEM;
	}
	uint32_t L = 0;
	g->vls_code = (uint8_t)max_code;
	for (uint32_t s = 0; s < S; s++) {
		const struct ibsm_switch *sw = ibsm_switch_at(f, s);
		const struct ibsm_node *node = ibsm_node_at(f, sw->node);
		g->off[s] = L;
		g->guid[s] = node->guid;
		uint32_t n = engine_switch_links(f, sc, s, tmp);
		for (uint32_t i = 0; i < n; i++) {
			uint8_t code = port_vls(f, node->port0 + tmp[i].port, max_code);
			if (code < g->vls_code)
				g->vls_code = code;
			g->peer[L] = tmp[i].peer;
			g->port[L] = tmp[i].port;
			L++;
		}
		for (unsigned p = 1; p <= node->nports; p++)
			g->ca_src[s] += engine_ca_behind(f, sc, node->port0 + p) != IBSM_NONE;
	}
	g->off[S] = L;
	g->L = L;
	components(g, queue);
	free(tmp);
	free(queue);
	return 0;
}
