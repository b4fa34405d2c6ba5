/* SPDX-License-Identifier: BSD-2-Clause */
/* topo.c - the fat tree as the engine sees it: the scope's switches and usable links grouped per
 * neighbour, ranked from the roots (given with -a, or else the switches farthest from the compute
 * nodes), checked against OpenSM's fat-tree rules (doc/current-routing.txt, "Fat-tree Routing
 * Algorithm"), and the leaf switches put in index order (subtrees contiguous, each ordered by the
 * smallest compute-node port GUID under it). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine_dests.h"
#include "ftree.h"

struct rawlink {
	uint32_t peer;
	uint8_t port, peer_port;
};

static int rawlink_cmp(const void *x, const void *y)
{
	const struct rawlink *a = x, *b = y;
	if (a->peer != b->peer)
		return a->peer < b->peer ? -1 : 1;
	return (int)a->port - (int)b->port;
}

static uint64_t sw_guid(const struct ibsm_fabric *f, uint32_t s)
{
	return ibsm_switch_node(f, s)->guid;
}

static const char *sw_desc(const struct ibsm_fabric *f, uint32_t s)
{
	return ibsm_switch_node(f, s)->desc;
}

#define SWFMT "switch 0x%016" PRIx64 " (%s)"
#define SWARG(f, s) sw_guid(f, s), sw_desc(f, s)

/* Multi-source BFS over every usable link of the scope's switches: dist[s] or -1. */
static void bfs(const struct ftree_topo *t, const uint32_t *links0, const uint32_t *nlinks,
		const struct rawlink *links, const uint8_t *seed, int32_t *dist, uint32_t *queue)
{
	uint32_t head = 0, tail = 0;
	for (uint32_t s = 0; s < t->S; s++) {
		dist[s] = -1;
		if (seed[s]) {
			dist[s] = 0;
			queue[tail++] = s;
		}
	}
	while (head < tail) {
		uint32_t u = queue[head++];
		for (uint32_t i = links0[u]; i < links0[u] + nlinks[u]; i++) {
			uint32_t v = links[i].peer;
			if (dist[v] < 0) {
				dist[v] = dist[u] + 1;
				queue[tail++] = v;
			}
		}
	}
}

static uint32_t uf_find(uint32_t *p, uint32_t x)
{
	while (p[x] != x) {
		p[x] = p[p[x]];
		x = p[x];
	}
	return x;
}

/* Leaf sort key: per level from the top, the subtree's (smallest CN port GUID, smallest
 * switch GUID), then the leaf's own. */
struct leafkey {
	uint32_t sw;
	uint64_t k[2 * FTREE_MAX_LEVELS];
};
static int leafkey_cmp(const void *x, const void *y, void *arg)
{
	const struct leafkey *a = x, *b = y;
	uint32_t len = *(const uint32_t *)arg;
	for (uint32_t i = 0; i < len; i++)
		if (a->k[i] != b->k[i])
			return a->k[i] < b->k[i] ? -1 : 1;
	return a->sw < b->sw ? -1 : a->sw > b->sw;
}

static int group_port_cmp(const void *x, const void *y, void *arg)
{
	const uint8_t *ports = arg;
	const struct ftree_group *a = x, *b = y;
	return (int)ports[2 * a->first] - (int)ports[2 * b->first];
}

static int rank_cmp(const void *x, const void *y, void *arg)
{
	const struct ftree_sw *sw = arg;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	if (sw[a].rank != sw[b].rank)
		return sw[a].rank < sw[b].rank ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* Says which fat-tree rule is broken, and where: -EINVAL. */
static int __attribute__((format(printf, 3, 4))) rule_broken(char *why, size_t whylen,
							    const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

#define RANK_RULE "fat-tree rule 'switches of one rank have the same number of "

/* The up-group rules for the switches by_rank[i .. j) of rank r: the same number of up
 * groups (roots: none), every up group of the same size. */
static int check_rank_up(const struct ibsm_fabric *f, const struct ftree_topo *t, uint32_t i,
			 uint32_t j, char *why, size_t whylen)
{
	uint32_t s0 = t->by_rank[i], size_sw = 0;
	int32_t r = t->sw[s0].rank, size = -1;
	const struct ftree_sw *a = &t->sw[s0];
	for (uint32_t k = i; k < j; k++) {
		uint32_t s = t->by_rank[k];
		const struct ftree_sw *b = &t->sw[s];
		if (b->nup != a->nup)
			return rule_broken(why, whylen, RANK_RULE "up port groups' broken at "
					   "rank %d: " SWFMT " has %u, " SWFMT " has %u", r,
					   SWARG(f, s), b->nup, SWARG(f, s0), a->nup);
		for (uint32_t g = b->up0; g < b->up0 + b->nup; g++) {
			const struct ftree_group *gr = &t->groups[g];
			if (size >= 0 && gr->n != size)
				return rule_broken(why, whylen, RANK_RULE "ports in every up "
						   "port group' broken at rank %d: " SWFMT " has %u "
						   "ports to 0x%016" PRIx64 ", " SWFMT " has %d", r,
						   SWARG(f, s), gr->n, sw_guid(f, gr->peer),
						   SWARG(f, size_sw), size);
			if (size < 0) {
				size = gr->n;
				size_sw = s;
			}
		}
	}
	return 0;
}

/* The down-group rules for the switches by_rank[i .. j) of rank r: the same number of down
 * groups (leaves exempt), every down group of the same size. */
static int check_rank_down(const struct ibsm_fabric *f, const struct ftree_topo *t, uint32_t i,
			   uint32_t j, char *why, size_t whylen)
{
	uint32_t s0 = t->by_rank[i], size_sw = 0;
	int32_t r = t->sw[s0].rank, size = -1;
	const struct ftree_sw *a = &t->sw[s0];
	for (uint32_t k = i; k < j; k++) {
		uint32_t s = t->by_rank[k];
		const struct ftree_sw *b = &t->sw[s];
		if ((uint32_t)r < t->leaf_rank && b->ndown != a->ndown)
			return rule_broken(why, whylen, RANK_RULE "down port groups' broken at "
					   "rank %d: " SWFMT " has %u, " SWFMT " has %u", r,
					   SWARG(f, s), b->ndown, SWARG(f, s0), a->ndown);
		for (uint32_t g = b->down0; g < b->down0 + b->ndown; g++) {
			const struct ftree_group *gr = &t->groups[g];
			if (size >= 0 && gr->n != size)
				return rule_broken(why, whylen, RANK_RULE "ports in every down "
						   "port group' broken at rank %d: " SWFMT " has %u "
						   "ports to 0x%016" PRIx64 ", " SWFMT " has %d", r,
						   SWARG(f, s), gr->n, sw_guid(f, gr->peer),
						   SWARG(f, size_sw), size);
			if (size < 0) {
				size = gr->n;
				size_sw = s;
			}
		}
	}
	return 0;
}

/* The pure rules, rank by rank from the leaves up (up groups, then down groups, of each
 * rank). A group's size is seen from both ends: a size mismatch between ranks r and r + 1 is
 * always reported by the up-group check of rank r + 1, checked first; the down-group size
 * check is kept as OpenSM's rules state it but cannot fire first. */
static int check_pure_rules(const struct ibsm_fabric *f, const struct ftree_topo *t, char *why,
			    size_t whylen)
{
	uint32_t j = t->nscope;
	while (j > 0) {
		int32_t r = t->sw[t->by_rank[j - 1]].rank;
		uint32_t i = j;
		while (i > 0 && t->sw[t->by_rank[i - 1]].rank == r)
			i--;
		int rc = check_rank_up(f, t, i, j, why, whylen);
		if (rc == 0)
			rc = check_rank_down(f, t, i, j, why, whylen);
		if (rc < 0)
			return rc;
		j = i;
	}
	return 0;
}

/* What ftree_topo_build works with besides the tree it fills. */
struct build {
	const struct ibsm_fabric *f;
	const struct ibsm_scope *sc;
	const struct ftree_opts *o;
	struct ftree_topo *t;
	char *why;
	size_t whylen;
	uint32_t *links0, *nlinks;  /* [S]: links of s are links[links0[s] .. + nlinks[s]) */
	struct rawlink *links;      /* usable switch-to-switch links, by (peer, port) */
	uint32_t nl;
	uint8_t *in, *seed;         /* [S]: switch in scope; BFS source */
	int32_t *dist;              /* [S] BFS distance */
	uint32_t *queue;            /* [S] BFS queue */
};

static int no_memory(struct build *b)
{
	snprintf(b->why, b->whylen, "out of memory");
	return -ENOMEM;
}

static void build_free(struct build *b)
{
	free(b->links0);
	free(b->nlinks);
	free(b->links);
	free(b->in);
	free(b->seed);
	free(b->dist);
	free(b->queue);
}

/* The scratch arrays, the switches in scope, every rank unset. */
static int build_init(struct build *b)
{
	struct ftree_topo *t = b->t;
	uint32_t S = b->f->n_switches;
	t->S = S;
	t->sw = calloc(S ? S : 1, sizeof(*t->sw));
	b->links0 = calloc(S + 1, sizeof(*b->links0));
	b->nlinks = calloc(S + 1, sizeof(*b->nlinks));
	b->links = malloc(((size_t)b->f->n_adj + 1) * sizeof(*b->links));
	b->in = calloc(S + 1, 1);
	b->seed = calloc(S + 1, 1);
	b->dist = malloc((S + 1) * sizeof(*b->dist));
	b->queue = malloc((S + 1) * sizeof(*b->queue));
	if (!t->sw || !b->links0 || !b->nlinks || !b->links || !b->in || !b->seed || !b->dist ||
	    !b->queue)
		return no_memory(b);
	for (uint32_t s = 0; s < S; s++) {
		t->sw[s].rank = -1;
		b->in[s] = (uint8_t)ibsm_bit(&b->sc->switches, s);
		t->nscope += b->in[s];
	}
	if (!t->nscope)
		return rule_broken(b->why, b->whylen, "no switch in scope");
	return 0;
}

/* The usable links between switches in scope, per switch sorted by (peer, port). */
static void collect_links(struct build *b)
{
	const struct ibsm_fabric *f = b->f;
	uint32_t S = b->t->S;
	for (uint32_t s = 0; s < S; s++) {
		b->links0[s] = b->nl;
		if (!b->in[s])
			continue;
		const struct ibsm_switch *sw = ibsm_switch_at(f, s);
		for (uint32_t a = sw->adj0; a < sw->adj0 + sw->nadj && a < f->n_adj; a++) {
			const struct ibsm_adj *adj = ibsm_adj_at(f, a);
			if (adj->peer_sw >= S || adj->peer_sw == s || !b->in[adj->peer_sw] ||
			    adj->port == 0 || adj->port == IBSM_NO_PORT ||
			    !ibsm_scope_link(f, b->sc, s, adj))
				continue;
			struct rawlink *l = &b->links[b->nl++];
			*l = (struct rawlink){ .peer = adj->peer_sw, .port = adj->port,
					       .peer_port = adj->peer_port };
		}
		b->nlinks[s] = b->nl - b->links0[s];
		qsort(b->links + b->links0[s], b->nlinks[s], sizeof(*b->links), rawlink_cmp);
	}
}

/* The CA ports hanging off in-scope switches, by switch then port number, each marked a
 * compute node (-u, else every CA not an I/O node) or I/O node (-G), by port or node GUID. */
static int collect_cas(struct build *b)
{
	const struct ibsm_fabric *f = b->f;
	const struct ftree_opts *o = b->o;
	struct ftree_topo *t = b->t;
	t->cas = malloc(((size_t)f->n_ports + 1) * sizeof(*t->cas));
	if (!t->cas)
		return no_memory(b);
	for (uint32_t s = 0; s < t->S; s++) {
		t->sw[s].ca0 = t->ncas;
		if (!b->in[s])
			continue;
		const struct ibsm_node *n = ibsm_switch_node(f, s);
		for (unsigned p = 1; p <= n->nports; p++) {
			uint32_t q = engine_ca_behind(f, b->sc, n->port0 + p);
			if (q == IBSM_NONE)
				continue;
			struct ftree_ca *ca = &t->cas[t->ncas++];
			uint64_t pg = ibsm_port_at(f, q)->guid;
			uint64_t ng = ibsm_node_at(f, ibsm_port_at(f, q)->node)->guid;
			ca->port = q;
			ca->sw = s;
			ca->exit = (uint8_t)p;
			ca->io = o->ios && (guid_list_has(o->ios, pg) || guid_list_has(o->ios, ng));
			if (o->cns)
				ca->cn = guid_list_has(o->cns, pg) || guid_list_has(o->cns, ng);
			else
				ca->cn = !ca->io;
			t->sw[s].ncn += ca->cn;
			t->ncn += ca->cn;
		}
		t->sw[s].nca = t->ncas - t->sw[s].ca0;
	}
	if (!t->ncas)
		return rule_broken(b->why, b->whylen,
				   "no CA port in scope: nothing to build a fat tree from");
	if (!t->ncn)
		return rule_broken(b->why, b->whylen, "none of the %u CA ports in scope is a "
				   "compute node (cn_guid_file)", t->ncas);
	return 0;
}

/* Ranks by BFS from the roots: the file's switches, else those farthest from the compute
 * nodes. Every switch in scope must be reached. */
static int rank_switches(struct build *b)
{
	const struct ibsm_fabric *f = b->f;
	struct ftree_topo *t = b->t;
	uint32_t S = t->S;
	if (b->o->roots) {
		t->roots_given = 1;
		for (uint32_t s = 0; s < S; s++)
			if (b->in[s] && guid_list_has(b->o->roots, sw_guid(f, s))) {
				b->seed[s] = 1;
				t->nroots++;
			}
		if (!t->nroots)
			return rule_broken(b->why, b->whylen, "none of the %u GUIDs of "
					   "root_guid_file is a switch in scope", b->o->roots->n);
	} else {
		for (uint32_t s = 0; s < S; s++)
			b->seed[s] = b->in[s] && t->sw[s].ncn > 0;
		bfs(t, b->links0, b->nlinks, b->links, b->seed, b->dist, b->queue);
		int32_t H = 0;
		for (uint32_t s = 0; s < S; s++)
			if (b->in[s] && b->dist[s] > H)
				H = b->dist[s];
		for (uint32_t s = 0; s < S; s++) {
			b->seed[s] = b->in[s] && b->dist[s] == H;
			t->nroots += b->seed[s];
		}
	}
	bfs(t, b->links0, b->nlinks, b->links, b->seed, b->dist, b->queue);
	for (uint32_t s = 0; s < S; s++) {
		if (!b->in[s])
			continue;
		if (b->dist[s] < 0)
			return rule_broken(b->why, b->whylen, "fat-tree rule 'one connected tree' "
					   "broken: " SWFMT " is not connected to the %s",
					   SWARG(f, s), b->o->roots ? "roots" : "compute nodes");
		t->sw[s].rank = b->dist[s];
		if ((uint32_t)b->dist[s] > t->max_rank)
			t->max_rank = (uint32_t)b->dist[s];
	}
	return 0;
}

/* The leaf rank: every compute node's switch (pure: every CA's switch) at one rank, and the
 * tree between FTREE_MIN_LEVELS and FTREE_MAX_LEVELS deep. */
static int find_leaf_rank(struct build *b)
{
	const struct ibsm_fabric *f = b->f;
	struct ftree_topo *t = b->t;
	const char *what = b->o->roots ? "compute nodes" : "CAs";
	int32_t leaf = -1;
	uint32_t leaf_sw = 0;
	for (uint32_t s = 0; s < t->S; s++) {
		if (!b->in[s] || !(b->o->roots ? t->sw[s].ncn : t->sw[s].nca))
			continue;
		if (leaf < 0) {
			leaf = t->sw[s].rank;
			leaf_sw = s;
		} else if (t->sw[s].rank != leaf) {
			return rule_broken(b->why, b->whylen, "fat-tree rule 'all %s at the same "
					   "rank' broken: " SWFMT " has %s at rank %d, " SWFMT
					   " at rank %d", what, SWARG(f, s), what, t->sw[s].rank,
					   SWARG(f, leaf_sw), leaf);
		}
	}
	t->leaf_rank = (uint32_t)leaf;
	if (t->leaf_rank + 1 < FTREE_MIN_LEVELS || t->leaf_rank + 1 > FTREE_MAX_LEVELS)
		return rule_broken(b->why, b->whylen, "fat-tree rule 'tree rank between %d and %d' "
				   "broken: %u level%s (leaf " SWFMT " at rank %u)",
				   FTREE_MIN_LEVELS, FTREE_MAX_LEVELS, t->leaf_rank + 1,
				   t->leaf_rank ? "s" : "", SWARG(f, leaf_sw), t->leaf_rank);
	return 0;
}

/* Switch s's groups of class cls (0 up, 1 down, 2 same rank), each a neighbour's links,
 * appended in order of their first port; returns where they start. */
static uint32_t add_groups(struct build *b, uint32_t s, int cls, uint32_t *count)
{
	struct ftree_topo *t = b->t;
	uint32_t start = t->ngroups, end = b->links0[s] + b->nlinks[s];
	for (uint32_t i = b->links0[s]; i < end;) {
		uint32_t j = i, peer = b->links[i].peer;
		while (j < end && b->links[j].peer == peer)
			j++;
		int32_t d = t->sw[peer].rank - t->sw[s].rank;
		if ((d < 0 ? 0 : d > 0 ? 1 : 2) == cls) {
			struct ftree_group *g = &t->groups[t->ngroups++];
			*g = (struct ftree_group){ .peer = peer, .first = i,
						   .n = (uint8_t)(j - i > 255 ? 255 : j - i) };
		}
		i = j;
	}
	*count = t->ngroups - start;
	qsort_r(t->groups + start, *count, sizeof(*t->groups), group_port_cmp, t->ports);
	return start;
}

/* Port groups per switch: up, down, same rank; the link ports as (local, peer) pairs. */
static int make_groups(struct build *b)
{
	struct ftree_topo *t = b->t;
	t->groups = malloc(((size_t)b->nl + 1) * sizeof(*t->groups));
	t->ports = malloc(2 * (size_t)b->nl + 2);
	if (!t->groups || !t->ports)
		return no_memory(b);
	t->nlinks = b->nl;
	for (uint32_t i = 0; i < b->nl; i++) {
		t->ports[2 * i] = b->links[i].port;
		t->ports[2 * i + 1] = b->links[i].peer_port;
	}
	for (uint32_t s = 0; s < t->S; s++) {
		struct ftree_sw *w = &t->sw[s];
		if (!b->in[s])
			continue;
		w->up0 = add_groups(b, s, 0, &w->nup);
		w->down0 = add_groups(b, s, 1, &w->ndown);
		w->sib0 = add_groups(b, s, 2, &w->nsib);
	}
	return 0;
}

/* The switches in scope by rank, then id. */
static int sort_by_rank(struct build *b)
{
	struct ftree_topo *t = b->t;
	t->by_rank = malloc((t->nscope + 1) * sizeof(*t->by_rank));
	if (!t->by_rank)
		return no_memory(b);
	uint32_t k = 0;
	for (uint32_t s = 0; s < t->S; s++)
		if (b->in[s])
			t->by_rank[k++] = s;
	qsort_r(t->by_rank, t->nscope, sizeof(*t->by_rank), rank_cmp, t->sw);
	return 0;
}

/* own[s]: the smallest compute-node port GUID on switch s (UINT64_MAX: none). */
static void leaf_own_keys(const struct build *b, uint64_t *own)
{
	const struct ftree_topo *t = b->t;
	for (uint32_t s = 0; s < t->S; s++) {
		own[s] = UINT64_MAX;
		if (!b->in[s])
			continue;
		for (uint32_t c = t->sw[s].ca0; c < t->sw[s].ca0 + t->sw[s].nca; c++) {
			uint64_t g = ibsm_port_at(b->f, t->cas[c].port)->guid;
			if (t->cas[c].cn && g < own[s])
				own[s] = g;
		}
	}
}

/* Level r of the leaf keys: the subtrees joined by the down links of ranks >= r, each keyed
 * by its (smallest CN port GUID, smallest leaf switch GUID). uf, ckey: [S], [2 * S]. */
static void leaf_level_keys(const struct build *b, uint32_t r, const uint64_t *own,
			    uint32_t *uf, uint64_t *ckey, struct leafkey *lk)
{
	const struct ftree_topo *t = b->t;
	for (uint32_t s = 0; s < t->S; s++) {
		uf[s] = s;
		ckey[2 * s] = UINT64_MAX;
		ckey[2 * s + 1] = UINT64_MAX;
	}
	for (uint32_t s = 0; s < t->S; s++) {
		if (!b->in[s] || t->sw[s].rank < (int32_t)r)
			continue;
		for (uint32_t g = t->sw[s].down0; g < t->sw[s].down0 + t->sw[s].ndown; g++) {
			uint32_t x = uf_find(uf, s), y = uf_find(uf, t->groups[g].peer);
			if (x != y)
				uf[x] = y;
		}
	}
	for (uint32_t i = 0; i < t->nleaves; i++) {
		uint32_t s = t->leaves[i], c = uf_find(uf, s);
		if (own[s] < ckey[2 * c])
			ckey[2 * c] = own[s];
		if (sw_guid(b->f, s) < ckey[2 * c + 1])
			ckey[2 * c + 1] = sw_guid(b->f, s);
	}
	for (uint32_t i = 0; i < t->nleaves; i++) {
		uint32_t c = uf_find(uf, lk[i].sw);
		lk[i].k[2 * (r - 1)] = ckey[2 * c];
		lk[i].k[2 * (r - 1) + 1] = ckey[2 * c + 1];
	}
}

/* The leaves in index order: subtrees contiguous, each ordered by its smallest compute-node
 * port GUID (then switch GUID), level by level from the top. */
static int index_leaves(struct build *b)
{
	struct ftree_topo *t = b->t;
	uint32_t S = t->S;
	t->leaves = malloc((t->nscope + 1) * sizeof(*t->leaves));
	struct leafkey *lk = calloc(t->nscope + 1, sizeof(*lk));
	uint32_t *uf = malloc((S + 1) * sizeof(*uf));
	uint64_t *own = malloc((S + 1) * sizeof(*own)), *ckey = malloc((S + 1) * 2 * sizeof(*ckey));
	int rc = 0;
	if (!t->leaves || !lk || !uf || !own || !ckey) {
		rc = no_memory(b);
		goto out;
	}
	leaf_own_keys(b, own);
	for (uint32_t s = 0; s < S; s++)
		if (b->in[s] && t->sw[s].rank == (int32_t)t->leaf_rank) {
			lk[t->nleaves].sw = s;
			t->leaves[t->nleaves++] = s;
			if (t->sw[s].ncn > t->max_cn_per_leaf)
				t->max_cn_per_leaf = t->sw[s].ncn;
		}
	uint32_t len = 2 * t->leaf_rank;
	for (uint32_t r = 1; r < t->leaf_rank; r++)
		leaf_level_keys(b, r, own, uf, ckey, lk);
	for (uint32_t i = 0; i < t->nleaves; i++) {
		lk[i].k[len - 2] = own[lk[i].sw];
		lk[i].k[len - 1] = sw_guid(b->f, lk[i].sw);
	}
	qsort_r(lk, t->nleaves, sizeof(*lk), leafkey_cmp, &len);
	for (uint32_t i = 0; i < t->nleaves; i++)
		t->leaves[i] = lk[i].sw;
out:
	free(lk);
	free(uf);
	free(own);
	free(ckey);
	return rc;
}

int ftree_topo_build(const struct ibsm_fabric *f, const struct ibsm_scope *sc,
		     const struct ftree_opts *o, struct ftree_topo *t, char *why, size_t whylen)
{
	struct build b = { .f = f, .sc = sc, .o = o, .t = t, .why = why, .whylen = whylen };
	memset(t, 0, sizeof(*t));
	int rc = build_init(&b);
	if (rc == 0) {
		collect_links(&b);
		rc = collect_cas(&b);
	}
	if (rc == 0)
		rc = rank_switches(&b);
	if (rc == 0)
		rc = find_leaf_rank(&b);
	if (rc == 0)
		rc = make_groups(&b);
	if (rc == 0)
		rc = sort_by_rank(&b);
	if (rc == 0 && !o->roots)
		rc = check_pure_rules(f, t, why, whylen);
	if (rc == 0)
		rc = index_leaves(&b);
	build_free(&b);
	if (rc < 0)
		ftree_topo_free(t);
	return rc;
}

void ftree_topo_free(struct ftree_topo *t)
{
	free(t->sw);
	free(t->groups);
	free(t->ports);
	free(t->cas);
	free(t->by_rank);
	free(t->leaves);
	memset(t, 0, sizeof(*t));
}
