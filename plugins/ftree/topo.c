/* topo.c - the fat tree as the engine sees it: the scope's switches and usable links grouped
 * per neighbour, ranked from the roots (given with -a, or else the switches farthest from the
 * compute nodes), checked against the seed's fat-tree rules, and the leaf switches put in index
 * order (subtrees contiguous, each ordered by the smallest compute-node port GUID under it). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
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

#define FAIL(...) do { snprintf(why, whylen, __VA_ARGS__); rc = -EINVAL; goto out; } while (0)

/* The pure rules, rank by rank from the leaves up: same number of up groups (roots: none),
 * same size of every up group, same number of down groups (leaves exempt), same size of every
 * down group. A group's size is seen from both ends: a size mismatch between ranks r and
 * r + 1 is always reported by the up-group check of rank r + 1, checked first; the down-group
 * size check is kept as the seed states it but cannot fire first. */
static int check_pure_rules(const struct ibsm_fabric *f, const struct ftree_topo *t, char *why,
			    size_t whylen)
{
	int rc = 0;
	uint32_t j = t->nscope;
	while (j > 0) {
		int32_t r = t->sw[t->by_rank[j - 1]].rank;
		uint32_t i = j;
		while (i > 0 && t->sw[t->by_rank[i - 1]].rank == r)
			i--;
		uint32_t s0 = t->by_rank[i];
		const struct ftree_sw *a = &t->sw[s0];
		int32_t up_size = -1, down_size = -1;
		uint32_t up_sw = 0, down_sw = 0;
		for (uint32_t k = i; k < j; k++) {
			uint32_t s = t->by_rank[k];
			const struct ftree_sw *b = &t->sw[s];
			if (b->nup != a->nup)
				FAIL("fat-tree rule 'switches of one rank have the same number of up "
				     "port groups' broken at rank %d: " SWFMT " has %u, " SWFMT " has %u",
				     r, SWARG(f, s), b->nup, SWARG(f, s0), a->nup);
			for (uint32_t g = b->up0; g < b->up0 + b->nup; g++) {
				if (up_size < 0) {
					up_size = t->groups[g].n;
					up_sw = s;
				} else if (t->groups[g].n != up_size) {
					FAIL("fat-tree rule 'switches of one rank have the same number of "
					     "ports in every up port group' broken at rank %d: " SWFMT
					     " has %u ports to 0x%016" PRIx64 ", " SWFMT " has %d",
					     r, SWARG(f, s), t->groups[g].n, sw_guid(f, t->groups[g].peer),
					     SWARG(f, up_sw), up_size);
				}
			}
		}
		for (uint32_t k = i; k < j; k++) {
			uint32_t s = t->by_rank[k];
			const struct ftree_sw *b = &t->sw[s];
			if ((uint32_t)r < t->leaf_rank && b->ndown != a->ndown)
				FAIL("fat-tree rule 'switches of one rank have the same number of down "
				     "port groups' broken at rank %d: " SWFMT " has %u, " SWFMT " has %u",
				     r, SWARG(f, s), b->ndown, SWARG(f, s0), a->ndown);
			for (uint32_t g = b->down0; g < b->down0 + b->ndown; g++) {
				if (down_size < 0) {
					down_size = t->groups[g].n;
					down_sw = s;
				} else if (t->groups[g].n != down_size) {
					FAIL("fat-tree rule 'switches of one rank have the same number of "
					     "ports in every down port group' broken at rank %d: " SWFMT
					     " has %u ports to 0x%016" PRIx64 ", " SWFMT " has %d",
					     r, SWARG(f, s), t->groups[g].n, sw_guid(f, t->groups[g].peer),
					     SWARG(f, down_sw), down_size);
				}
			}
		}
		j = i;
	}
out:
	return rc;
}

int ftree_topo_build(const struct ibsm_fabric *f, const struct ibsm_scope *sc,
		     const struct ftree_opts *o, struct ftree_topo *t, char *why, size_t whylen)
{
	memset(t, 0, sizeof(*t));
	uint32_t S = f->n_switches;
	int rc = 0;
	t->S = S;
	t->sw = calloc(S ? S : 1, sizeof(*t->sw));
	uint32_t *links0 = calloc(S + 1, sizeof(*links0)), *nlinks = calloc(S + 1, sizeof(*nlinks));
	struct rawlink *links = malloc(((size_t)f->n_adj + 1) * sizeof(*links));
	uint8_t *in = calloc(S + 1, 1), *seed = calloc(S + 1, 1);
	int32_t *dist = malloc((S + 1) * sizeof(*dist));
	uint32_t *queue = malloc((S + 1) * sizeof(*queue));
	struct leafkey *lk = NULL;
	uint32_t *uf = NULL;
	if (!t->sw || !links0 || !nlinks || !links || !in || !seed || !dist || !queue) {
		snprintf(why, whylen, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t s = 0; s < S; s++) {
		t->sw[s].rank = -1;
		in[s] = (uint8_t)ibsm_bit(&sc->switches, s);
		t->nscope += in[s];
	}
	if (!t->nscope)
		FAIL("no switch in scope");

	/* usable switch-to-switch links, sorted by (peer, port) */
	uint32_t nl = 0;
	for (uint32_t s = 0; s < S; s++) {
		links0[s] = nl;
		if (!in[s])
			continue;
		const struct ibsm_switch *sw = ibsm_switch_at(f, s);
		for (uint32_t a = sw->adj0; a < sw->adj0 + sw->nadj && a < f->n_adj; a++) {
			const struct ibsm_adj *adj = ibsm_adj_at(f, a);
			if (adj->peer_sw >= S || adj->peer_sw == s || !in[adj->peer_sw] ||
			    adj->port == 0 || adj->port == IBSM_NO_PORT ||
			    !ibsm_scope_link(f, sc, s, adj))
				continue;
			links[nl].peer = adj->peer_sw;
			links[nl].port = adj->port;
			links[nl].peer_port = adj->peer_port;
			nl++;
		}
		nlinks[s] = nl - links0[s];
		qsort(links + links0[s], nlinks[s], sizeof(*links), rawlink_cmp);
	}

	/* CA ports hanging off in-scope switches, by switch then port number */
	t->cas = malloc(((size_t)f->n_ports + 1) * sizeof(*t->cas));
	if (!t->cas) {
		snprintf(why, whylen, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t s = 0; s < S; s++) {
		t->sw[s].ca0 = t->ncas;
		if (!in[s])
			continue;
		const struct ibsm_node *n = ibsm_switch_node(f, s);
		for (unsigned p = 1; p <= n->nports; p++) {
			uint32_t q = engine_ca_behind(f, sc, n->port0 + p);
			if (q == IBSM_NONE)
				continue;
			struct ftree_ca *ca = &t->cas[t->ncas++];
			uint64_t pg = ibsm_port_at(f, q)->guid, ng = ibsm_node_at(f, ibsm_port_at(f, q)->node)->guid;
			ca->port = q;
			ca->sw = s;
			ca->exit = (uint8_t)p;
			ca->io = o->ios && (guid_list_has(o->ios, pg) || guid_list_has(o->ios, ng));
			if (o->cns)
				ca->cn = guid_list_has(o->cns, pg) || guid_list_has(o->cns, ng);
			else
				ca->cn = !ca->io;
			if (ca->cn) {
				t->sw[s].ncn++;
				t->ncn++;
			}
		}
		t->sw[s].nca = t->ncas - t->sw[s].ca0;
	}
	if (!t->ncas)
		FAIL("no CA port in scope: nothing to build a fat tree from");
	if (!t->ncn)
		FAIL("none of the %u CA ports in scope is a compute node (cn_guid_file)", t->ncas);

	/* ranks */
	if (o->roots) {
		t->roots_given = 1;
		for (uint32_t s = 0; s < S; s++)
			if (in[s] && guid_list_has(o->roots, sw_guid(f, s))) {
				seed[s] = 1;
				t->nroots++;
			}
		if (!t->nroots)
			FAIL("none of the %u GUIDs of root_guid_file is a switch in scope",
			     o->roots->n);
	} else {
		for (uint32_t s = 0; s < S; s++)
			seed[s] = in[s] && t->sw[s].ncn > 0;
		bfs(t, links0, nlinks, links, seed, dist, queue);
		int32_t H = 0;
		for (uint32_t s = 0; s < S; s++)
			if (in[s] && dist[s] > H)
				H = dist[s];
		for (uint32_t s = 0; s < S; s++) {
			seed[s] = in[s] && dist[s] == H;
			t->nroots += seed[s];
		}
	}
	bfs(t, links0, nlinks, links, seed, dist, queue);
	for (uint32_t s = 0; s < S; s++) {
		if (!in[s])
			continue;
		if (dist[s] < 0)
			FAIL("fat-tree rule 'one connected tree' broken: " SWFMT " is not connected "
			     "to the %s", SWARG(f, s), o->roots ? "roots" : "compute nodes");
		t->sw[s].rank = dist[s];
		if ((uint32_t)dist[s] > t->max_rank)
			t->max_rank = (uint32_t)dist[s];
	}

	/* leaf rank: every compute node's switch (pure: every CA's switch) at one rank */
	int32_t leaf = -1;
	uint32_t leaf_sw = 0;
	for (uint32_t s = 0; s < S; s++) {
		if (!in[s] || !(o->roots ? t->sw[s].ncn : t->sw[s].nca))
			continue;
		if (leaf < 0) {
			leaf = t->sw[s].rank;
			leaf_sw = s;
		} else if (t->sw[s].rank != leaf) {
			FAIL("fat-tree rule 'all %s at the same rank' broken: " SWFMT " has %s at "
			     "rank %d, " SWFMT " at rank %d", o->roots ? "compute nodes" : "CAs",
			     SWARG(f, s), o->roots ? "compute nodes" : "CAs", t->sw[s].rank,
			     SWARG(f, leaf_sw), leaf);
		}
	}
	t->leaf_rank = (uint32_t)leaf;
	if (t->leaf_rank + 1 < FTREE_MIN_LEVELS || t->leaf_rank + 1 > FTREE_MAX_LEVELS)
		FAIL("fat-tree rule 'tree rank between %d and %d' broken: %u level%s (leaf " SWFMT
		     " at rank %u)", FTREE_MIN_LEVELS, FTREE_MAX_LEVELS, t->leaf_rank + 1,
		     t->leaf_rank ? "s" : "", SWARG(f, leaf_sw), t->leaf_rank);

	/* port groups: up, down, same rank; each class by first port number */
	t->groups = malloc(((size_t)nl + 1) * sizeof(*t->groups));
	t->ports = malloc(2 * (size_t)nl + 2);
	if (!t->groups || !t->ports) {
		snprintf(why, whylen, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	t->nlinks = nl;
	for (uint32_t i = 0; i < nl; i++) {
		t->ports[2 * i] = links[i].port;
		t->ports[2 * i + 1] = links[i].peer_port;
	}
	for (uint32_t s = 0; s < S; s++) {
		struct ftree_sw *w = &t->sw[s];
		if (!in[s])
			continue;
		for (int cls = 0; cls < 3; cls++) {
			uint32_t start = t->ngroups;
			for (uint32_t i = links0[s]; i < links0[s] + nlinks[s];) {
				uint32_t j = i, peer = links[i].peer;
				while (j < links0[s] + nlinks[s] && links[j].peer == peer)
					j++;
				int32_t d = t->sw[peer].rank - w->rank;
				int c = d < 0 ? 0 : d > 0 ? 1 : 2;
				if (c == cls) {
					struct ftree_group *g = &t->groups[t->ngroups++];
					g->peer = peer;
					g->first = i;
					g->n = (uint8_t)(j - i > 255 ? 255 : j - i);
				}
				i = j;
			}
			uint32_t cnt = t->ngroups - start;
			qsort_r(t->groups + start, cnt, sizeof(*t->groups), group_port_cmp, t->ports);
			if (cls == 0) {
				w->up0 = start;
				w->nup = cnt;
			} else if (cls == 1) {
				w->down0 = start;
				w->ndown = cnt;
			} else {
				w->sib0 = start;
				w->nsib = cnt;
			}
		}
	}

	t->by_rank = malloc((t->nscope + 1) * sizeof(*t->by_rank));
	if (!t->by_rank) {
		snprintf(why, whylen, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	uint32_t k = 0;
	for (uint32_t s = 0; s < S; s++)
		if (in[s])
			t->by_rank[k++] = s;
	qsort_r(t->by_rank, t->nscope, sizeof(*t->by_rank), rank_cmp, t->sw);

	if (!o->roots) {
		rc = check_pure_rules(f, t, why, whylen);
		if (rc < 0)
			goto out;
	}

	/* leaves in index order */
	t->leaves = malloc((t->nscope + 1) * sizeof(*t->leaves));
	lk = calloc(t->nscope + 1, sizeof(*lk));
	uf = malloc((S + 1) * sizeof(*uf));
	uint64_t *own = malloc((S + 1) * sizeof(*own)), *ckey = malloc((S + 1) * 2 * sizeof(*ckey));
	if (!t->leaves || !lk || !uf || !own || !ckey) {
		free(own);
		free(ckey);
		snprintf(why, whylen, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t s = 0; s < S; s++) {
		own[s] = UINT64_MAX;
		if (!in[s])
			continue;
		for (uint32_t c = t->sw[s].ca0; c < t->sw[s].ca0 + t->sw[s].nca; c++)
			if (t->cas[c].cn && ibsm_port_at(f, t->cas[c].port)->guid < own[s])
				own[s] = ibsm_port_at(f, t->cas[c].port)->guid;
	}
	for (uint32_t s = 0; s < S; s++)
		if (in[s] && t->sw[s].rank == (int32_t)t->leaf_rank) {
			lk[t->nleaves].sw = s;
			t->leaves[t->nleaves++] = s;
			if (t->sw[s].ncn > t->max_cn_per_leaf)
				t->max_cn_per_leaf = t->sw[s].ncn;
		}
	uint32_t leafkey_len = 2 * t->leaf_rank;
	for (uint32_t r = 1; r < t->leaf_rank; r++) {
		for (uint32_t s = 0; s < S; s++) {
			uf[s] = s;
			ckey[2 * s] = UINT64_MAX;
			ckey[2 * s + 1] = UINT64_MAX;
		}
		for (uint32_t s = 0; s < S; s++) {
			if (!in[s] || t->sw[s].rank < (int32_t)r)
				continue;
			for (uint32_t g = t->sw[s].down0; g < t->sw[s].down0 + t->sw[s].ndown; g++) {
				uint32_t a = uf_find(uf, s), b = uf_find(uf, t->groups[g].peer);
				if (a != b)
					uf[a] = b;
			}
		}
		for (uint32_t i = 0; i < t->nleaves; i++) {
			uint32_t s = t->leaves[i], c = uf_find(uf, s);
			if (own[s] < ckey[2 * c])
				ckey[2 * c] = own[s];
			if (sw_guid(f, s) < ckey[2 * c + 1])
				ckey[2 * c + 1] = sw_guid(f, s);
		}
		for (uint32_t i = 0; i < t->nleaves; i++) {
			uint32_t c = uf_find(uf, lk[i].sw);
			lk[i].k[2 * (r - 1)] = ckey[2 * c];
			lk[i].k[2 * (r - 1) + 1] = ckey[2 * c + 1];
		}
	}
	for (uint32_t i = 0; i < t->nleaves; i++) {
		lk[i].k[leafkey_len - 2] = own[lk[i].sw];
		lk[i].k[leafkey_len - 1] = sw_guid(f, lk[i].sw);
	}
	qsort_r(lk, t->nleaves, sizeof(*lk), leafkey_cmp, &leafkey_len);
	for (uint32_t i = 0; i < t->nleaves; i++)
		t->leaves[i] = lk[i].sw;
	free(own);
	free(ckey);

out:
	free(links0);
	free(nlinks);
	free(links);
	free(in);
	free(seed);
	free(dist);
	free(queue);
	free(lk);
	free(uf);
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
