/* SPDX-License-Identifier: BSD-2-Clause */
/* switch_links.c - the one rule of which switch-to-switch links an engine may route over, so
 * that every engine builds the same graph of a scope (minhop's hop counts, updn, lash, nue,
 * sssp/dfsssp) and a malformed adjacency is skipped the same way everywhere. */
#include <stdlib.h>
#include "switch_links.h"

int engine_switch_link(const struct ibsm_fabric *f, const struct ibsm_scope *sc, uint32_t s,
		       const struct ibsm_adj *a)
{
	if (a->peer_sw >= f->n_switches || a->peer_sw == s || a->port == 0 ||
	    a->port == IBSM_NO_PORT || a->port > ibsm_switch_node(f, s)->nports)
		return 0;
	if (a->peer_port == 0 || a->peer_port > ibsm_switch_node(f, a->peer_sw)->nports)
		return 0;
	return ibsm_scope_link(f, sc, s, a);
}

static int by_port(const void *x, const void *y)
{
	const struct engine_link *a = x, *b = y;
	return (int)a->port - (int)b->port;
}

uint32_t engine_switch_links(const struct ibsm_fabric *f, const struct ibsm_scope *sc, uint32_t s,
			     struct engine_link *out)
{
	const struct ibsm_switch *sw = ibsm_switch_at(f, s);
	uint32_t n = 0;
	for (uint32_t a = sw->adj0; a < sw->adj0 + sw->nadj && a < f->n_adj; a++) {
		const struct ibsm_adj *adj = ibsm_adj_at(f, a);
		if (!engine_switch_link(f, sc, s, adj))
			continue;
		out[n].peer = adj->peer_sw;
		out[n].port = adj->port;
		n++;
	}
	qsort(out, n, sizeof(*out), by_port);
	return n;
}
