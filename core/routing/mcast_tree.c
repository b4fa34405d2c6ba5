/* SPDX-License-Identifier: BSD-2-Clause */
/* mcast_tree.c - the default multicast spanning trees (mcast_tree.h). */
#include <string.h>
#include "routing/mcast_tree.h"

#define ECC_SOURCES_MAX 256 /* switches with end ports the centre is measured from, at most */
#define HOPS_SWITCHES_MAX 4096 /* up to here a hop matrix (16 MiB) picks each group's own root */

struct mcast_topo {
	struct fabric *f;
	uint32_t ns;
	uint32_t *roots, n_roots;
	uint32_t **parents;      /* [n_roots] lazily: parent switch on the tree from roots[i] */
	uint32_t *queue, *dist;  /* BFS scratch [ns] */
	uint32_t *stamp, now;    /* [ns] in the tree being built when stamp == now */
	uint32_t *member;        /* [ns] has a member port in it when member == now */
	uint8_t *hops;           /* [ns * ns] switch hops over ACTIVE links (0xFF: none), or NULL */
	int hops_tried;
	uint32_t *parent;        /* [ns] scratch: the BFS tree of a group's own root */
	uint32_t *msw;           /* [ns] scratch: a group's member switches */
};

static int port_up(const struct fabric *f, uint32_t p)
{
	uint8_t st = f->ports[p].state;
	return st == IBSM_STATE_ACTIVE || st == 0; /* 0: never read (offline fabrics) */
}

static int link_up(const struct fabric *f, uint32_t sw, const struct ibsm_adj *a)
{
	uint32_t p = f->nodes[f->switches[sw].node].port0 + a->port;
	uint32_t q = f->nodes[f->switches[a->peer_sw].node].port0 + a->peer_port;
	return port_up(f, p) && port_up(f, q);
}

/* Breadth-first from src: dist[] (UINT32_MAX unreached), parent[] when not NULL. */
static void bfs(struct mcast_topo *t, uint32_t src, uint32_t *parent)
{
	const struct fabric *f = t->f;
	for (uint32_t s = 0; s < t->ns; s++) {
		t->dist[s] = UINT32_MAX;
		if (parent)
			parent[s] = IBSM_NONE;
	}
	uint32_t head = 0, tail = 0;
	t->dist[src] = 0;
	t->queue[tail++] = src;
	while (head < tail) {
		uint32_t u = t->queue[head++];
		const struct ibsm_switch *sw = &f->switches[u];
		for (uint32_t i = 0; i < sw->nadj; i++) {
			const struct ibsm_adj *a = &f->adj[sw->adj0 + i];
			if (t->dist[a->peer_sw] != UINT32_MAX || !link_up(f, u, a))
				continue;
			t->dist[a->peer_sw] = t->dist[u] + 1;
			if (parent)
				parent[a->peer_sw] = u;
			t->queue[tail++] = a->peer_sw;
		}
	}
}

/* Does switch s have an ACTIVE end port (a CA behind a link, or its own port 0)? */
static int has_end_ports(const struct fabric *f, uint32_t s)
{
	const struct ibsm_node *n = &f->nodes[f->switches[s].node];
	for (uint32_t pn = 1; pn <= n->nports; pn++) {
		uint32_t p = n->port0 + pn, q = f->ports[p].peer;
		if (q != IBSM_NONE && f->nodes[f->ports[q].node].type != IBSM_SWITCH && port_up(f, q))
			return 1;
	}
	return 0;
}

/* The centre: switches of least eccentricity (then least total distance) over the switches
 * with end ports (all switches when none has any), measured from at most ECC_SOURCES_MAX of
 * them spread evenly. */
static void find_roots(struct mcast_topo *t)
{
	uint32_t ns = t->ns, n_src = 0;
	uint32_t *src = g_new(uint32_t, ns);
	for (uint32_t s = 0; s < ns; s++)
		if (has_end_ports(t->f, s))
			src[n_src++] = s;
	if (!n_src)
		for (uint32_t s = 0; s < ns; s++)
			src[n_src++] = s;
	uint32_t step = n_src > ECC_SOURCES_MAX ? (n_src + ECC_SOURCES_MAX - 1) / ECC_SOURCES_MAX : 1;
	uint32_t *ecc = g_new0(uint32_t, ns);
	uint64_t *sum = g_new0(uint64_t, ns);
	for (uint32_t i = 0; i < n_src; i += step) {
		bfs(t, src[i], NULL);
		for (uint32_t s = 0; s < ns; s++) {
			uint32_t d = t->dist[s];
			if (d > ecc[s])
				ecc[s] = d;
			sum[s] += d == UINT32_MAX ? ns : d;
		}
	}
	uint32_t best_e = UINT32_MAX;
	uint64_t best_s = UINT64_MAX;
	for (uint32_t s = 0; s < ns; s++)
		if (ecc[s] < best_e || (ecc[s] == best_e && sum[s] < best_s)) {
			best_e = ecc[s];
			best_s = sum[s];
		}
	t->roots = g_new(uint32_t, ns ? ns : 1);
	for (uint32_t s = 0; s < ns; s++)
		if (ecc[s] == best_e && sum[s] == best_s)
			t->roots[t->n_roots++] = s;
	t->parents = g_new0(uint32_t *, t->n_roots ? t->n_roots : 1);
	g_free(ecc);
	g_free(sum);
	g_free(src);
}

struct mcast_topo *mcast_topo_new(struct fabric *f)
{
	struct mcast_topo *t = g_new0(struct mcast_topo, 1);
	t->f = fabric_ref(f);
	t->ns = f->pub.n_switches;
	size_t n = t->ns ? t->ns : 1;
	t->queue = g_new(uint32_t, n);
	t->dist = g_new(uint32_t, n);
	t->stamp = g_new0(uint32_t, n);
	t->member = g_new0(uint32_t, n);
	t->parent = g_new(uint32_t, n);
	t->msw = g_new(uint32_t, n);
	return t; /* the hop matrix, or else the centre, when the first group with members needs it */
}

void mcast_topo_free(struct mcast_topo *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; t->parents && i < t->n_roots; i++)
		g_free(t->parents[i]);
	g_free(t->parents);
	g_free(t->parent);
	g_free(t->msw);
	g_free(t->hops);
	g_free(t->roots);
	g_free(t->queue);
	g_free(t->dist);
	g_free(t->stamp);
	g_free(t->member);
	fabric_unref(t->f);
	g_free(t);
}

const struct fabric *mcast_topo_fabric(const struct mcast_topo *t)
{
	return t->f;
}

static void set_bit(uint64_t *mask, unsigned port)
{
	mask[port >> 6] |= 1ULL << (port & 63);
}

/* The switch a member end port hangs off and the port there that leads to it. */
static int attach(const struct fabric *f, uint32_t m, uint32_t *sw, unsigned *port)
{
	if (m >= f->pub.n_ports)
		return -1;
	const struct ibsm_port *p = &f->ports[m];
	const struct ibsm_node *n = &f->nodes[p->node];
	if (n->type == IBSM_SWITCH) {
		if (p->num != 0)
			return -1;
		*sw = n->sw;
		*port = 0;
		return 0;
	}
	if (p->peer == IBSM_NONE || !port_up(f, m) || !port_up(f, p->peer))
		return -1;
	const struct ibsm_node *peer = &f->nodes[f->ports[p->peer].node];
	if (peer->type != IBSM_SWITCH)
		return -1;
	*sw = peer->sw;
	*port = f->ports[p->peer].num;
	return 0;
}

/* The link from u up to its parent pu the group takes: among parallel ACTIVE links, the one the
 * MLID picks, counted in the port order of the switch with the lower id (so the choice is the
 * same whichever end is the parent, and groups spread over the links). */
static const struct ibsm_adj *uplink(const struct fabric *f, uint32_t u, uint32_t pu, uint16_t mlid)
{
	const struct ibsm_switch *sw = &f->switches[u];
	uint32_t count = 0;
	for (uint32_t i = 0; i < sw->nadj; i++) {
		const struct ibsm_adj *a = &f->adj[sw->adj0 + i];
		count += a->peer_sw == pu && link_up(f, u, a);
	}
	if (!count)
		return NULL;
	uint32_t rank = mlid % count;
	for (uint32_t i = 0; i < sw->nadj; i++) {
		const struct ibsm_adj *a = &f->adj[sw->adj0 + i];
		if (a->peer_sw != pu || !link_up(f, u, a))
			continue;
		unsigned key = u < pu ? a->port : a->peer_port, below = 0;
		for (uint32_t k = 0; k < sw->nadj; k++) {
			const struct ibsm_adj *b = &f->adj[sw->adj0 + k];
			if (b->peer_sw == pu && link_up(f, u, b) && (u < pu ? b->port : b->peer_port) < key)
				below++;
		}
		if (below == rank)
			return a;
	}
	return NULL;
}

static unsigned bits(const uint64_t *mask)
{
	return (unsigned)(__builtin_popcountll(mask[0]) + __builtin_popcountll(mask[1]) +
			  __builtin_popcountll(mask[2]) + __builtin_popcountll(mask[3]));
}

/* A root with no member and one tree link is a dead end every copy goes into: the tree
 * starts below it. Repeated down the chain; returns the switches taken out. */
static int prune_root(struct mcast_topo *t, uint32_t root, uint64_t (*egress)[4])
{
	const struct fabric *f = t->f;
	int removed = 0;
	uint32_t u = root;
	while (t->stamp[u] == t->now && t->member[u] != t->now && bits(egress[u]) == 1) {
		const struct ibsm_switch *sw = &f->switches[u];
		const struct ibsm_adj *down = NULL;
		for (uint32_t i = 0; i < sw->nadj && !down; i++) {
			const struct ibsm_adj *a = &f->adj[sw->adj0 + i];
			if ((egress[u][a->port >> 6] >> (a->port & 63)) & 1)
				down = a;
		}
		if (!down)
			break;
		memset(egress[u], 0, sizeof(egress[u]));
		egress[down->peer_sw][down->peer_port >> 6] &= ~(1ULL << (down->peer_port & 63));
		t->stamp[u] = 0;
		removed++;
		u = down->peer_sw;
	}
	return removed;
}

/* All-pairs hops over ACTIVE links, one BFS per switch; only up to HOPS_SWITCHES_MAX. */
static void hop_matrix(struct mcast_topo *t)
{
	t->hops_tried = 1;
	if (t->ns > HOPS_SWITCHES_MAX || !t->ns)
		return;
	t->hops = g_malloc((size_t)t->ns * t->ns);
	for (uint32_t a = 0; a < t->ns; a++) {
		bfs(t, a, NULL);
		for (uint32_t b = 0; b < t->ns; b++)
			t->hops[(size_t)a * t->ns + b] = t->dist[b] > 254 ? 0xFF : (uint8_t)t->dist[b];
	}
}

/* The group's own root: least eccentricity over its member switches, then least total
 * distance; among equals the one the MLID picks (groups spread over the centre). */
static uint32_t group_root(struct mcast_topo *t, uint16_t mlid, const uint32_t *ms, uint32_t nm)
{
	uint32_t best_e = UINT32_MAX, ties = 0, pick = 0;
	uint64_t best_s = UINT64_MAX;
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t r = 0; r < t->ns; r++) {
			const uint8_t *row = t->hops + (size_t)r * t->ns;
			uint32_t e = 0;
			uint64_t sum = 0;
			for (uint32_t i = 0; i < nm; i++) {
				uint32_t d = row[ms[i]] == 0xFF ? 1000 : row[ms[i]];
				if (d > e)
					e = d;
				sum += d;
			}
			if (pass == 1) {
				if (e == best_e && sum == best_s && pick-- == 0)
					return r;
			} else if (e < best_e || (e == best_e && sum < best_s)) {
				best_e = e;
				best_s = sum;
				ties = 1;
			} else if (e == best_e && sum == best_s) {
				ties++;
			}
			if (pass == 0 && r + 1 == t->ns)
				pick = mlid % ties;
		}
	return IBSM_NONE; /* no switch at all */
}

void mcast_topo_prepare(struct mcast_topo *t)
{
	if (!t->hops_tried)
		hop_matrix(t);
	if (!t->hops && !t->roots && t->ns)
		find_roots(t);
}

int mcast_topo_prepared(const struct mcast_topo *t)
{
	return t->hops_tried && (t->hops || t->roots || !t->ns);
}

int mcast_tree_build(struct mcast_topo *t, uint16_t mlid, const uint32_t *members, uint32_t n,
		     uint64_t (*egress)[4])
{
	const struct fabric *f = t->f;
	if (!n || !t->ns)
		return 0;
	if (++t->now == 0) { /* wrapped: start the stamps again */
		memset(t->stamp, 0, (size_t)t->ns * sizeof(uint32_t));
		memset(t->member, 0, (size_t)t->ns * sizeof(uint32_t));
		t->now = 1;
	}
	if (!t->hops_tried)
		hop_matrix(t);
	uint32_t root;
	const uint32_t *parent;
	if (t->hops) {
		uint32_t nm = 0;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t s;
			unsigned port;
			if (attach(f, members[i], &s, &port) == 0 && t->member[s] != t->now) {
				t->member[s] = t->now;
				t->msw[nm++] = s;
			}
		}
		if (!nm)
			return 0;
		root = group_root(t, mlid, t->msw, nm);
		if (root == IBSM_NONE)
			return 0;
		bfs(t, root, t->parent);
		parent = t->parent;
		if (++t->now == 0) {
			memset(t->stamp, 0, (size_t)t->ns * sizeof(uint32_t));
			memset(t->member, 0, (size_t)t->ns * sizeof(uint32_t));
			t->now = 1;
		}
	} else {
		if (!t->roots)
			find_roots(t);
		if (!t->n_roots)
			return 0;
		uint32_t k = mlid % t->n_roots;
		root = t->roots[k];
		if (!t->parents[k]) {
			t->parents[k] = g_new(uint32_t, t->ns);
			bfs(t, root, t->parents[k]);
		}
		parent = t->parents[k];
	}
	int in_tree = 0, cut = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t s;
		unsigned port;
		if (attach(f, members[i], &s, &port) < 0)
			continue;
		if (s != root && parent[s] == IBSM_NONE) {
			cut = 1; /* not connected to the root */
			continue;
		}
		set_bit(egress[s], port);
		t->member[s] = t->now;
		/* up to the root or to a switch already in the tree */
		uint32_t u = s;
		while (t->stamp[u] != t->now) {
			t->stamp[u] = t->now;
			in_tree++;
			if (u == root)
				break;
			uint32_t pu = parent[u];
			const struct ibsm_adj *a = uplink(f, u, pu, mlid);
			if (!a) { /* cannot happen: the BFS came down one of these links */
				cut = 1;
				break;
			}
			set_bit(egress[u], a->port);
			set_bit(egress[pu], a->peer_port);
			u = pu;
		}
	}
	in_tree -= prune_root(t, root, egress);
	return cut ? -1 : in_tree;
}

int mcast_tree_route(struct mcast_topo *t, const struct routing_result *r, uint16_t mlid,
		     const uint32_t *members, uint32_t n, uint64_t (*egress)[4])
{
	if (r && r->f == t->f && routing_mcast(r, mlid, n, members, egress) == 0)
		return 1;
	return mcast_tree_build(t, mlid, members, n, egress);
}
