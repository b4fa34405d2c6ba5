/* SPDX-License-Identifier: BSD-2-Clause */
/* mhc_memo.c - the last fill of a min-hop engine instance (mhc.h, struct mhc_memo), so that a
 * fill after a small change (a link down or up: the repair of core/sm/repair.c) computes only
 * the rows whose inputs changed. A row of mhc_fill.c depends on nothing but the destination
 * list, its switch's ports (what is behind each, which links are usable in the scope) and the
 * hop rows of its switch and of the switches its links lead to; when all of these are equal to
 * the last fill's, the row is the last fill's row, byte for byte, and is copied. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "mhc_memo.h"
#include "switch_links.h"

struct mhc_memo {
	uint32_t S, stride, n_nodes, n_ports, ndests;
	uint64_t *node_guid;          /* [n_nodes] */
	uint32_t *peer;               /* [n_ports] peer port id, IBSM_NONE */
	uint32_t *adj0, *nadj;        /* [S] each switch's slice of adj[] */
	struct mhc_memo_adj *adj;     /* every switch's links, as the fill saw them */
	uint8_t *in_scope;            /* [S] the row was filled */
	uint8_t *hops;                /* [S * S] */
	struct engine_dest *dests;    /* [ndests] */
	uint8_t *lft;                 /* [S * stride] */
	uint64_t *routed, *unreachable; /* [S] the row's counts */
};

struct mhc_memo_adj {
	uint32_t peer_sw;
	uint8_t port, peer_port, usable;
};

void mhc_memo_free(void *memo)
{
	struct mhc_memo *m = memo;
	if (!m)
		return;
	free(m->node_guid);
	free(m->peer);
	free(m->adj0);
	free(m->nadj);
	free(m->adj);
	free(m->in_scope);
	free(m->hops);
	free(m->dests);
	free(m->lft);
	free(m->routed);
	free(m->unreachable);
	free(m);
}

/* Does switch s have the links and ports (what is behind each) it had in m? */
static int same_links(const struct mhc_memo *m, const struct ibsm_fabric *f,
		      const struct ibsm_scope *sc, uint32_t s)
{
	const struct ibsm_switch *sw = ibsm_switch_at(f, s);
	const struct ibsm_node *node = ibsm_switch_node(f, s);
	if (sw->nadj != m->nadj[s])
		return 0;
	for (uint32_t i = 0; i < sw->nadj; i++) {
		const struct ibsm_adj *a = ibsm_adj_at(f, sw->adj0 + i);
		const struct mhc_memo_adj *b = &m->adj[m->adj0[s] + i];
		if (a->peer_sw != b->peer_sw || a->port != b->port || a->peer_port != b->peer_port ||
		    (uint8_t)engine_switch_link(f, sc, s, a) != b->usable)
			return 0;
	}
	for (uint32_t p = 1; p <= node->nports; p++)
		if (ibsm_port_at(f, node->port0 + p)->peer != m->peer[node->port0 + p])
			return 0;
	return 1;
}

static int same_dests(const struct engine_dest *a, const struct engine_dest *b, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (a[i].port != b[i].port || a[i].sw != b[i].sw || a[i].base != b[i].base ||
		    a[i].first != b[i].first || a[i].end != b[i].end || a[i].exit != b[i].exit ||
		    a[i].is_ca != b[i].is_ca || a[i].ignored != b[i].ignored)
			return 0;
	return 1;
}

/* Which destination classes (MHC_REUSE_CA, MHC_REUSE_SW) have an end port on each switch. */
static uint8_t *dest_classes(const struct engine_dest *dests, uint32_t ndests, uint32_t S)
{
	uint8_t *cls = calloc(S ? S : 1, 1);
	if (!cls)
		return NULL;
	for (uint32_t i = 0; i < ndests; i++)
		if (dests[i].sw < S)
			cls[dests[i].sw] |= dests[i].is_ca ? MHC_REUSE_CA : MHC_REUSE_SW;
	return cls;
}

uint8_t *mhc_memo_reuse(const struct mhc_memo *m, const struct ibsm_fabric *f,
			const struct ibsm_scope *sc, const uint8_t *hops,
			const struct engine_dest *dests, uint32_t ndests, uint32_t stride)
{
	uint32_t S = f->n_switches;
	if (!m || m->S != S || m->stride != stride || m->n_nodes != f->n_nodes ||
	    m->n_ports != f->n_ports || m->ndests != ndests || !same_dests(m->dests, dests, ndests))
		return NULL;
	for (uint32_t n = 0; n < f->n_nodes; n++)
		if (ibsm_node_at(f, n)->guid != m->node_guid[n])
			return NULL;
	/* dirty[u]: the classes with an end port on a switch whose hop count from u changed */
	uint8_t *dirty = calloc(S ? S : 1, 1), *reuse = calloc(S ? S : 1, 1);
	uint8_t *cls = dest_classes(dests, ndests, S);
	if (!dirty || !reuse || !cls) {
		free(dirty);
		free(reuse);
		free(cls);
		return NULL;
	}
	for (uint32_t u = 0; u < S; u++) {
		const uint8_t *a = hops + (size_t)u * S, *b = m->hops + (size_t)u * S;
		if (!memcmp(a, b, S))
			continue;
		for (uint32_t t = 0; t < S && dirty[u] != MHC_REUSE_ROW; t++)
			if (a[t] != b[t])
				dirty[u] |= cls[t];
	}
	/* row s's entries for a destination on switch t depend on the hops from s and from
	 * each switch its links lead to, toward t, and on the entries of the same class before
	 * them (the balance counters are per class): a class none of whose switches moved is
	 * the last fill's, byte for byte */
	for (uint32_t s = 0; s < S; s++) {
		if (!m->in_scope[s] || !ibsm_bit(&sc->switches, s) || !same_links(m, f, sc, s))
			continue;
		const struct ibsm_switch *sw = ibsm_switch_at(f, s);
		uint8_t d = dirty[s];
		for (uint32_t a = sw->adj0; a < sw->adj0 + sw->nadj; a++) {
			uint32_t t = ibsm_adj_at(f, a)->peer_sw;
			d |= t < S ? dirty[t] : MHC_REUSE_ROW;
		}
		reuse[s] = (uint8_t)(~d & MHC_REUSE_ROW);
	}
	free(dirty);
	free(cls);
	return reuse;
}

const uint8_t *mhc_memo_rows(const struct mhc_memo *m)
{
	return m ? m->lft : NULL;
}

const uint8_t *mhc_memo_row(const struct mhc_memo *m, const uint8_t *rows, uint32_t s,
			    uint64_t *routed, uint64_t *unreachable)
{
	*routed = m->routed[s];
	*unreachable = m->unreachable[s];
	return rows + (size_t)s * m->stride;
}

/* p resized to n bytes (at least 1); on failure p is freed and NULL returned. A block of the
 * same size stays where it is, so a memo refilled every sweep does not fault its pages in
 * again. */
static void *resize(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		free(p);
	return q;
}

int mhc_memo_save(void **memo, const struct ibsm_fabric *f, const struct ibsm_scope *sc,
		  const uint8_t *hops, const struct engine_dest *dests, uint32_t ndests,
		  const uint8_t *lft, uint32_t stride, const uint32_t *rows, uint32_t nrows,
		  const uint64_t *routed, const uint64_t *unreachable)
{
	uint32_t S = f->n_switches;
	struct mhc_memo *m = *memo;
	/* its largest parts: the hop matrix, and the rows when it copies them */
	uint64_t bytes = (uint64_t)S * S + (lft ? (uint64_t)S * stride : 0);
	if (bytes > MHC_MEMO_MAX_BYTES || !S) {
		mhc_memo_free(m);
		*memo = NULL;
		return 0;
	}
	if (!m && !(m = calloc(1, sizeof(*m))))
		return -1;
	*memo = NULL; /* until it is whole */
	m->S = S;
	m->stride = stride;
	m->n_nodes = f->n_nodes;
	m->n_ports = f->n_ports;
	m->ndests = ndests;
	m->node_guid = resize(m->node_guid, (size_t)f->n_nodes * sizeof(*m->node_guid));
	m->peer = resize(m->peer, (size_t)f->n_ports * sizeof(*m->peer));
	m->adj0 = resize(m->adj0, (size_t)S * sizeof(*m->adj0));
	m->nadj = resize(m->nadj, (size_t)S * sizeof(*m->nadj));
	m->adj = resize(m->adj, (size_t)f->n_adj * sizeof(*m->adj));
	m->in_scope = resize(m->in_scope, S);
	m->hops = resize(m->hops, (size_t)S * S);
	m->dests = resize(m->dests, (size_t)ndests * sizeof(*m->dests));
	if (lft) {
		m->lft = resize(m->lft, (size_t)S * stride);
	} else { /* the core keeps them (last_rows) */
		free(m->lft);
		m->lft = NULL;
	}
	m->routed = resize(m->routed, (size_t)S * sizeof(*m->routed));
	m->unreachable = resize(m->unreachable, (size_t)S * sizeof(*m->unreachable));
	if (!m->node_guid || !m->peer || !m->adj0 || !m->nadj || !m->adj || !m->in_scope || !m->hops ||
	    !m->dests || (lft && !m->lft) || !m->routed || !m->unreachable) {
		mhc_memo_free(m);
		return -1;
	}
	memset(m->in_scope, 0, S);
	memset(m->routed, 0, (size_t)S * sizeof(*m->routed));
	memset(m->unreachable, 0, (size_t)S * sizeof(*m->unreachable));
	for (uint32_t n = 0; n < f->n_nodes; n++)
		m->node_guid[n] = ibsm_node_at(f, n)->guid;
	for (uint32_t p = 0; p < f->n_ports; p++)
		m->peer[p] = ibsm_port_at(f, p)->peer;
	uint32_t k = 0;
	for (uint32_t s = 0; s < S; s++) {
		const struct ibsm_switch *sw = ibsm_switch_at(f, s);
		m->adj0[s] = k;
		m->nadj[s] = sw->nadj;
		for (uint32_t i = 0; i < sw->nadj && k < f->n_adj; i++, k++) {
			const struct ibsm_adj *a = ibsm_adj_at(f, sw->adj0 + i);
			m->adj[k] = (struct mhc_memo_adj){ .peer_sw = a->peer_sw, .port = a->port,
							   .peer_port = a->peer_port,
							   .usable = (uint8_t)engine_switch_link(f, sc, s, a) };
		}
	}
	memcpy(m->hops, hops, (size_t)S * S);
	memcpy(m->dests, dests, (size_t)ndests * sizeof(*dests));
	if (lft)
		memcpy(m->lft, lft, (size_t)S * stride);
	for (uint32_t i = 0; i < nrows; i++) {
		m->in_scope[rows[i]] = 1;
		m->routed[rows[i]] = routed[rows[i]];
		m->unreachable[rows[i]] = unreachable[rows[i]];
	}
	*memo = m;
	return 0;
}
