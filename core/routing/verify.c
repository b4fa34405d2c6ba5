/* SPDX-License-Identifier: BSD-2-Clause */
/* verify.c - walking a step's tables: for each destination LID, every switch of the scope in the
 * destination switch's component (links usable in the scope are symmetric, so "can reach" is
 * "is connected to") follows its entries until it delivers or fails; results are memoised per
 * LID, so each switch is walked once per LID. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <glib.h>
#include "base/mad_cpu.h"
#include "routing/tables.h"
#include "routing/verify.h"

enum { UNKNOWN = 0, GOOD, BAD, WALKING };
enum { CLEAN = 0, CHANGED, WHOLE }; /* a LID since the last whole walk */

/* Component id of every switch over the links usable in the scope (IBSM_NONE: not in scope). */
static uint32_t *components(const struct fabric *f, const struct ibsm_scope *s)
{
	uint32_t n = f->pub.n_switches, *comp = g_new(uint32_t, n ? n : 1), *queue = g_new(uint32_t, n ? n : 1);
	for (uint32_t i = 0; i < n; i++)
		comp[i] = IBSM_NONE;
	for (uint32_t root = 0; root < n; root++) {
		if (comp[root] != IBSM_NONE || !ibsm_bit(&s->switches, root))
			continue;
		uint32_t head = 0, tail = 0;
		comp[root] = root;
		queue[tail++] = root;
		while (head < tail) {
			uint32_t u = queue[head++];
			const struct ibsm_switch *sw = &f->switches[u];
			for (uint32_t a = sw->adj0; a < sw->adj0 + sw->nadj; a++) {
				uint32_t v = f->adj[a].peer_sw;
				if (comp[v] != IBSM_NONE || !ibsm_bit(&s->switches, v) ||
				    !ibsm_scope_link(&f->pub, s, u, &f->adj[a]))
					continue;
				comp[v] = root;
				queue[tail++] = v;
			}
		}
	}
	g_free(queue);
	return comp;
}

#define BLOCK 64 /* LIDs verified together: one cache line of every switch's row */

/* What an entry leads to: a switch id, or one of these. */
#define NEXT_DELIVERED 0xFFFFFFF0u
#define NEXT_FIRST_HOLE 0xFFFFFFF1u /* + enum hole_kind - 1 */

struct verify {
	const struct fabric *f;
	const struct ibsm_scope *scope;
	const uint8_t *lft;
	uint32_t stride, n;
	uint32_t *comp;        /* [n] component over the scope's links */
	uint32_t *comp_size;   /* [n] switches of component c (by its root c) */
	int one_comp;          /* every switch in one component: no component test per walk */
	/* what switch u's entry `out` leads to when u is not the destination's switch: port_next[
	 * port_off[u] + out] for out 0 .. nports[u] (a switch id, or a hole) */
	uint32_t *port_next, *port_off;
	uint8_t *nports;
	/* since the last whole walk (NULL: walk every LID whole): per LID, CLEAN, CHANGED (walk
	 * from the switches c_sw[c_off[lid] .. c_off[lid + 1]) whose entry or link changed) or
	 * WHOLE */
	const uint8_t *dirty;
	const uint32_t *c_off, *c_sw;
	/* the block being verified */
	uint32_t lid0, nl;
	uint32_t target[BLOCK], want[BLOCK]; /* destination switch and the port delivering there */
	uint8_t routed[BLOCK];               /* the scope routes lid0 + j */
	uint32_t *next;        /* [BLOCK * ld]: next[j * ld + u], what switch u's entry for lid0 + j
				* leads to */
	uint32_t ld;           /* a column's length: n rounded up to an odd number of cache lines,
				* so a switch's 64 entries land in 64 cache sets, not a few */
	uint8_t *state;        /* [n] for one LID */
	uint8_t *kind;         /* [n] */
	uint32_t *at;          /* [n] */
	uint32_t *path;        /* [n] */
};

static uint32_t hole(enum hole_kind k)
{
	return NEXT_FIRST_HOLE + (uint32_t)k - 1;
}

/* The destinations of the block: their switch and the port that delivers there. */
static void block_targets(struct verify *v)
{
	const struct fabric *f = v->f;
	for (uint32_t j = 0; j < v->nl; j++) {
		uint32_t lid = v->lid0 + j;
		v->routed[j] = 0;
		if ((v->dirty && !v->dirty[lid]) || !ibsm_scope_routes_lid(&f->pub, v->scope, lid))
			continue;
		uint32_t dest = f->pub.lid_port[lid], t = ibsm_port_switch(&f->pub, dest);
		if (t == IBSM_NONE || v->comp[t] == IBSM_NONE)
			continue; /* a CA port without a switch, or its switch is not in scope */
		v->routed[j] = 1;
		v->target[j] = t;
		/* port 0 for the switch's own LID, the port facing a CA port */
		v->want[j] = f->ports[dest].node == f->switches[t].node ? 0 : f->ports[f->ports[dest].peer].num;
	}
}

/* What entry `out` of a switch that is not the destination's leads to: pn and np are the
 * switch's port_next slice and port count. */
static inline uint32_t lead(const uint32_t *pn, uint8_t np, uint8_t out)
{
	return out == IBSM_NO_PORT ? hole(HOLE_NO_ENTRY) : out <= np ? pn[out] : hole(HOLE_DEAD_PORT);
}

/* What switch u's entry for LID lid0 + j leads to. */
static uint32_t next_entry(const struct verify *v, uint32_t u, uint32_t j)
{
	uint8_t out = v->lft[(size_t)u * v->stride + v->lid0 + j];
	if (u == v->target[j] && out != IBSM_NO_PORT)
		return out == v->want[j] ? NEXT_DELIVERED :
		       out > v->nports[u] ? hole(HOLE_DEAD_PORT) : hole(HOLE_WRONG_PORT);
	return lead(v->port_next + v->port_off[u], v->nports[u], out);
}

/* next[] of the block's LIDs walked whole, from each switch's row segment: a table look-up
 * per entry, then the destination switches' own entries. */
static void block_next(struct verify *v)
{
	uint32_t js[BLOCK], m = 0;
	for (uint32_t j = 0; j < v->nl; j++)
		if (v->routed[j] && (!v->dirty || v->dirty[v->lid0 + j] == WHOLE))
			js[m++] = j;
	/* every switch: a walk from the scope may cross rows an earlier step wrote */
	uint32_t *next = v->next, n = v->n;
	size_t col[BLOCK];
	for (uint32_t i = 0; i < m; i++)
		col[i] = (size_t)js[i] * v->ld;
	for (uint32_t u = 0; u < n; u++) {
		const uint8_t *row = v->lft + (size_t)u * v->stride + v->lid0;
		const uint32_t *pn = v->port_next + v->port_off[u];
		uint8_t np = v->nports[u];
		for (uint32_t i = 0; i < m; i++)
			next[col[i] + u] = lead(pn, np, row[js[i]]);
	}
	for (uint32_t i = 0; i < m; i++)
		next[col[i] + v->target[js[i]]] = next_entry(v, v->target[js[i]], js[i]);
}

/* Walks from switch s over next (one LID's column; NULL: the entries of column j read as the
 * walk goes), marking every switch of the walk GOOD or BAD with the kind and the switch where
 * it went wrong. */
static void walk_from(struct verify *v, const uint32_t *next, uint32_t j, uint32_t s)
{
	uint32_t len = 0, u = s, end_at = s;
	uint8_t result, kind = 0;
	for (;;) {
		if (v->state[u] == GOOD || v->state[u] == BAD) {
			result = v->state[u];
			if (result == BAD) {
				kind = v->kind[u];
				end_at = v->at[u];
			}
			break;
		}
		if (v->state[u] == WALKING) {
			result = BAD;
			kind = HOLE_LOOP;
			end_at = u;
			break;
		}
		v->state[u] = WALKING;
		v->path[len++] = u;
		uint32_t nx = next ? next[u] : next_entry(v, u, j);
		if (nx >= NEXT_DELIVERED) {
			result = nx == NEXT_DELIVERED ? GOOD : BAD;
			kind = nx == NEXT_DELIVERED ? 0 : (uint8_t)(nx - NEXT_FIRST_HOLE + 1);
			end_at = u;
			break;
		}
		u = nx;
	}
	/* kind and place are read only where the walk went wrong */
	for (uint32_t i = 0; i < len; i++)
		v->state[v->path[i]] = result;
	if (result == BAD)
		for (uint32_t i = 0; i < len; i++) {
			v->kind[v->path[i]] = kind;
			v->at[v->path[i]] = end_at;
		}
}

static void note_hole(struct routing_holes *h, const struct verify *v, uint32_t s, uint32_t lid)
{
	h->holes++;
	h->by_kind[v->kind[s]]++;
	if (h->holes == 1) {
		h->first_switch = s;
		h->first_lid = lid;
		h->first_at = v->at[s];
		h->first_kind = (enum hole_kind)v->kind[s];
	}
}

/* A LID changed on some switches since the last whole walk: the others follow their entries
 * as then until they deliver or reach a switch that changed, so the LID is delivered from
 * every switch when it is from each that changed. 1 if so (walks counted); 0: walk it whole
 * (holes are then counted as a whole walk counts them). */
static int walk_changed(struct verify *v, uint32_t j, uint32_t c, struct routing_holes *h)
{
	uint32_t lid = v->lid0 + j;
	memset(v->state, UNKNOWN, v->n);
	uint64_t walks = 0;
	for (uint32_t i = v->c_off[lid]; i < v->c_off[lid + 1]; i++) {
		uint32_t s = v->c_sw[i];
		if (v->comp[s] != c)
			continue;
		walks++;
		if (v->state[s] == UNKNOWN)
			walk_from(v, NULL, j, s);
		if (v->state[s] == BAD)
			return 0;
	}
	h->walks += walks;
	return 1;
}

static void block_walk(struct verify *v, struct routing_holes *h)
{
	for (uint32_t j = 0; j < v->nl; j++) {
		if (!v->routed[j])
			continue;
		uint32_t c = v->comp[v->target[j]];
		if (v->dirty && v->dirty[v->lid0 + j] == CHANGED) {
			if (walk_changed(v, j, c, h))
				continue;
			for (uint32_t u = 0; u < v->n; u++) /* a hole: the column whole */
				v->next[(size_t)j * v->ld + u] = next_entry(v, u, j);
		}
		const uint32_t *next = v->next + (size_t)j * v->ld;
		memset(v->state, UNKNOWN, v->n);
		h->walks += v->comp_size[c];
		for (uint32_t s = 0; s < v->n; s++) {
			if (!v->one_comp && v->comp[s] != c)
				continue;
			if (v->state[s] == UNKNOWN) {
				/* most entries lead to a switch already known to deliver */
				uint32_t nx = next[s];
				if (nx == NEXT_DELIVERED || (nx < NEXT_DELIVERED && v->state[nx] == GOOD)) {
					v->state[s] = GOOD;
					continue;
				}
				walk_from(v, next, j, s);
			}
			if (v->state[s] == BAD)
				note_hole(h, v, s, v->lid0 + j);
		}
	}
}

/* What an entry of each switch leads to when that switch is not the destination's (see
 * struct verify): port 0 and a CA port the wrong port, a port without a link a dead one. */
static void port_next_table(struct verify *v)
{
	const struct fabric *f = v->f;
	uint32_t total = 0;
	v->port_off = g_new(uint32_t, v->n ? v->n : 1);
	v->nports = g_new(uint8_t, v->n ? v->n : 1);
	for (uint32_t u = 0; u < v->n; u++) {
		const struct ibsm_node *node = &f->nodes[f->switches[u].node];
		v->port_off[u] = total;
		v->nports[u] = node->nports;
		total += node->nports + 1u;
	}
	v->port_next = g_new(uint32_t, total ? total : 1);
	for (uint32_t u = 0; u < v->n; u++) {
		const struct ibsm_node *node = &f->nodes[f->switches[u].node];
		uint32_t *pn = v->port_next + v->port_off[u];
		pn[0] = hole(HOLE_WRONG_PORT); /* this switch's port 0, not the destination */
		for (uint32_t out = 1; out <= node->nports; out++) {
			uint32_t q = f->ports[node->port0 + out].peer;
			uint32_t sw = q == IBSM_NONE ? IBSM_NONE : f->nodes[f->ports[q].node].sw;
			/* no link, or a CA that is not the destination behind it */
			pn[out] = q == IBSM_NONE ? hole(HOLE_DEAD_PORT) : sw != IBSM_NONE ? sw : hole(HOLE_WRONG_PORT);
		}
	}
}

/* Switches per component, by the component's root. */
static uint32_t *component_sizes(const uint32_t *comp, uint32_t n, int *one)
{
	uint32_t *size = g_new0(uint32_t, n ? n : 1);
	for (uint32_t u = 0; u < n; u++)
		if (comp[u] != IBSM_NONE)
			size[comp[u]]++;
	*one = n && comp[0] != IBSM_NONE && size[comp[0]] == n;
	return size;
}

#define THREADS_WORK 4000000 /* (switch, LID) pairs worth a second thread */

struct range {
	struct verify v;           /* its own buffers */
	uint32_t first, last;      /* LIDs [first, last] */
	struct routing_holes h;
};

static gpointer verify_range(gpointer data)
{
	struct range *r = data;
	struct verify *v = &r->v;
	uint32_t n = v->n ? v->n : 1;
	v->ld = (n + 15) / 16 * 16;
	if (!(v->ld / 16 % 2))
		v->ld += 16;
	v->next = g_new(uint32_t, (size_t)BLOCK * v->ld);
	v->state = g_new(uint8_t, n);
	v->kind = g_new(uint8_t, n);
	v->at = g_new(uint32_t, n);
	v->path = g_new(uint32_t, n);
	for (v->lid0 = r->first; v->lid0 <= r->last; v->lid0 += BLOCK) {
		v->nl = MIN(BLOCK, r->last - v->lid0 + 1);
		int whole = !v->dirty, some = whole;
		for (uint32_t j = 0; v->dirty && j < v->nl; j++) {
			some |= v->dirty[v->lid0 + j] != CLEAN;
			whole |= v->dirty[v->lid0 + j] == WHOLE;
		}
		if (!some)
			continue; /* the whole block as last verified */
		block_targets(v);
		if (whole)
			block_next(v);
		block_walk(v, &r->h);
	}
	g_free(v->next);
	g_free(v->state);
	g_free(v->kind);
	g_free(v->at);
	g_free(v->path);
	return NULL;
}

/* A port named so that it means the same in another generation (port ids are dense and move
 * when a node comes or goes): its node's GUID and its number; 0 for none. */
struct port_key {
	uint64_t guid;
	uint32_t num;
};

static struct port_key key_of(const struct fabric *f, uint32_t p)
{
	if (p == IBSM_NONE || p >= f->pub.n_ports)
		return (struct port_key){ 0, 0 };
	return (struct port_key){ f->nodes[f->ports[p].node].guid, f->ports[p].num };
}

/* The key of what is behind port p (0 for none, or for no port). */
static struct port_key peer_key_of(const struct fabric *f, uint32_t p)
{
	return key_of(f, p == IBSM_NONE || p >= f->pub.n_ports ? IBSM_NONE : f->ports[p].peer);
}

static int key_eq(struct port_key a, struct port_key b)
{
	return a.guid == b.guid && a.num == b.num;
}

struct verify_memo {
	uint32_t n_switches, stride, last;
	uint64_t *sw_guid;          /* [n_switches] the switch of each row */
	uint32_t *sw_port0;         /* [n_switches + 1] each switch's slice of sw_peer */
	struct port_key *sw_peer;   /* what was behind each switch port (port 0 included) */
	struct port_key *lid_port;  /* [last + 1] the port of each LID */
	struct port_key *lid_peer;  /* [last + 1] what was behind it */
	uint32_t *comp;             /* [n_switches] */
	const uint8_t *lft;         /* [n_switches * stride] the tables walked: own, adopted, or borrowed */
	uint8_t *own;               /* VERIFY_KEEP_COPY: a copy of them, reused by the next */
	int adopted;                /* lft is a reference (routing/tables.h) to a result's tables */
	int borrowed;               /* VERIFY_KEEP_BORROW and not adopted yet: never used */
};

/* The memo's tables let go of (its copy kept for reuse). */
static void memo_release_tables(struct verify_memo *m)
{
	if (m->adopted)
		routing_tables_unref((void *)m->lft);
	m->adopted = 0;
	m->lft = NULL;
	m->borrowed = 0;
}

void verify_memo_free(struct verify_memo *m)
{
	if (!m)
		return;
	g_free(m->sw_guid);
	g_free(m->sw_port0);
	g_free(m->sw_peer);
	g_free(m->lid_port);
	g_free(m->lid_peer);
	g_free(m->comp);
	memo_release_tables(m);
	g_free(m->own);
	g_free(m);
}

void verify_memo_adopt(struct verify_memo *m, uint8_t *lft)
{
	if (!m || !m->borrowed || m->lft != lft)
		return; /* not the buffer walked: stays borrowed, never used */
	routing_tables_ref(lft);
	m->adopted = 1;
	m->borrowed = 0;
}

static int scope_is_all(const struct ibsm_scope *s)
{
	return !s->switches.w && !s->ports.w && !s->dests.w && !s->path_bit_count;
}

/* Since m: dirty[last + 1] (CLEAN, CHANGED, WHOLE) and, for the CHANGED LIDs, the switches
 * whose entry or the link it leaves by changed (*c_off [last + 2], *c_sw); NULL when m does
 * not apply (walk every LID whole). Ports are compared by their keys, so a host that came or
 * went (every port id after it moved) leaves the rest as it was. */
struct changed_entry {
	uint32_t lid, sw;
};

#define CHANGED_MAX_SHARE 16 /* more changed entries than 1/16 of the tables: walk them whole */

static uint8_t *dirty_since(const struct verify_memo *m, const struct fabric *f, const uint32_t *comp,
			    const uint8_t *lft, uint32_t stride, uint32_t last, uint32_t **c_off,
			    uint32_t **c_sw)
{
	uint32_t S = f->pub.n_switches;
	*c_off = *c_sw = NULL;
	if (!m || m->borrowed || !m->lft || m->n_switches != S || m->stride != stride || m->last != last ||
	    memcmp(m->comp, comp, (size_t)S * sizeof(*comp)))
		return NULL;
	for (uint32_t u = 0; u < S; u++) {
		const struct ibsm_node *node = &f->nodes[f->switches[u].node];
		if (node->guid != m->sw_guid[u] || node->nports + 1u != m->sw_port0[u + 1] - m->sw_port0[u])
			return NULL;
	}
	uint8_t *dirty = g_new0(uint8_t, (size_t)last + 1);
	for (uint32_t lid = 1; lid <= last; lid++) {
		uint32_t p = f->pub.lid_port[lid];
		if (!key_eq(key_of(f, p), m->lid_port[lid]) || !key_eq(peer_key_of(f, p), m->lid_peer[lid]))
			dirty[lid] = WHOLE; /* another port, or its link: another target */
	}
	GArray *chg = g_array_new(FALSE, FALSE, sizeof(struct changed_entry));
	uint64_t cap = (uint64_t)S * last / CHANGED_MAX_SHARE;
	for (uint32_t u = 0; u < S; u++) {
		const struct ibsm_node *node = &f->nodes[f->switches[u].node];
		uint8_t moved[256] = { 0 }; /* ports whose link is not the one walked then */
		int any = 0;
		for (uint32_t q = 0; q <= node->nports && q < 256; q++)
			if (!key_eq(peer_key_of(f, node->port0 + q), m->sw_peer[m->sw_port0[u] + q]))
				moved[q] = 1, any = 1;
		const uint8_t *a = lft + (size_t)u * stride, *b = m->lft + (size_t)u * stride;
		for (uint32_t j = 1; j <= last; j += BLOCK) {
			uint32_t nl = MIN(BLOCK, last - j + 1);
			if (!any && !memcmp(a + j, b + j, nl))
				continue;
			for (uint32_t k = j; k < j + nl; k++) {
				if ((a[k] == b[k] && !moved[a[k]]) || dirty[k] == WHOLE)
					continue;
				dirty[k] = CHANGED;
				if (chg->len < cap)
					g_array_append_val(chg, ((struct changed_entry){ k, u }));
				else
					dirty[k] = WHOLE; /* beyond the cap: walked whole */
			}
		}
	}
	/* by LID (counting sort); entries of LIDs walked whole are dropped */
	uint32_t *off = g_new0(uint32_t, (size_t)last + 2), *sw = g_new(uint32_t, chg->len ? chg->len : 1);
	const struct changed_entry *e = (const struct changed_entry *)chg->data;
	for (guint i = 0; i < chg->len; i++)
		if (dirty[e[i].lid] == CHANGED)
			off[e[i].lid + 1]++;
	for (uint32_t lid = 1; lid <= last; lid++)
		off[lid + 1] += off[lid];
	uint32_t *fill = g_memdup2(off, ((size_t)last + 2) * sizeof(*off));
	for (guint i = 0; i < chg->len; i++)
		if (dirty[e[i].lid] == CHANGED)
			sw[fill[e[i].lid]++] = e[i].sw;
	g_free(fill);
	g_array_free(chg, TRUE);
	*c_off = off;
	*c_sw = sw;
	return dirty;
}

/* *memo becomes what this walk saw (reusing its buffers), or NULL. */
static void memo_keep(struct verify_memo **memo, const struct fabric *f, const uint32_t *comp,
		      const uint8_t *lft, uint32_t stride, uint32_t last, enum verify_keep keep)
{
	uint32_t S = f->pub.n_switches;
	struct verify_memo *m = *memo;
	if (keep == VERIFY_KEEP_COPY && (uint64_t)S * stride > VERIFY_MEMO_MAX_BYTES) {
		verify_memo_free(m);
		*memo = NULL;
		return;
	}
	if (!m)
		m = g_new0(struct verify_memo, 1);
	uint32_t np = 0;
	for (uint32_t u = 0; u < S; u++)
		np += f->nodes[f->switches[u].node].nports + 1u;
	m->sw_guid = g_renew(uint64_t, m->sw_guid, S ? S : 1);
	m->sw_port0 = g_renew(uint32_t, m->sw_port0, (size_t)S + 1);
	m->sw_peer = g_renew(struct port_key, m->sw_peer, np ? np : 1);
	m->lid_port = g_renew(struct port_key, m->lid_port, (size_t)last + 1);
	m->lid_peer = g_renew(struct port_key, m->lid_peer, (size_t)last + 1);
	m->comp = g_renew(uint32_t, m->comp, S ? S : 1);
	size_t bytes = (size_t)S * stride;
	memo_release_tables(m); /* the last walk's tables: compared already (dirty_since) */
	if (keep == VERIFY_KEEP_COPY) {
		m->own = g_renew(uint8_t, m->own, bytes ? bytes : 1);
		memcpy(m->own, lft, bytes);
		m->lft = m->own;
	} else {
		g_free(m->own);
		m->own = NULL;
		m->lft = lft;
		m->borrowed = 1;
	}
	m->n_switches = S;
	m->stride = stride;
	m->last = last;
	np = 0;
	for (uint32_t u = 0; u < S; u++) {
		const struct ibsm_node *node = &f->nodes[f->switches[u].node];
		m->sw_guid[u] = node->guid;
		m->sw_port0[u] = np;
		for (uint32_t q = 0; q <= node->nports; q++)
			m->sw_peer[np++] = peer_key_of(f, node->port0 + q);
	}
	m->sw_port0[S] = np;
	for (uint32_t lid = 0; lid <= last; lid++) {
		uint32_t p = f->pub.lid_port[lid];
		m->lid_port[lid] = key_of(f, p);
		m->lid_peer[lid] = peer_key_of(f, p);
	}
	memcpy(m->comp, comp, (size_t)S * sizeof(*comp));
	*memo = m;
}

uint64_t routing_verify_keep(const struct fabric *f, const struct ibsm_scope *scope,
			     const uint8_t *lft, uint32_t stride, struct routing_holes *h,
			     struct verify_memo **memo, enum verify_keep keep)
{
	*h = (struct routing_holes){ 0 };
	/* a memo borrowed by an earlier walk and not adopted (its routing cancelled, or another
	 * engine's tables won): its buffer may be gone, never to be compared nor adopted */
	if (memo && *memo && (*memo)->borrowed)
		memo_release_tables(*memo);
	uint32_t last = MIN(f->pub.max_lid, stride ? stride - 1 : 0);
	if (!last)
		return 0;
	struct verify v = { .f = f, .scope = scope, .lft = lft, .stride = stride, .n = f->pub.n_switches };
	v.comp = components(f, scope);
	v.comp_size = component_sizes(v.comp, v.n, &v.one_comp);
	port_next_table(&v);
	int use_memo = memo && scope_is_all(scope) && f->pub.lid_port;
	uint32_t *c_off = NULL, *c_sw = NULL;
	uint8_t *dirty = use_memo ? dirty_since(*memo, f, v.comp, lft, stride, last, &c_off, &c_sw) : NULL;
	v.dirty = dirty;
	v.c_off = c_off;
	v.c_sw = c_sw;
	uint64_t walk = last;
	if (dirty) {
		walk = 0;
		for (uint32_t lid = 1; lid <= last; lid++)
			walk += dirty[lid] == WHOLE;
		for (uint32_t lid = 1; lid <= last; lid++)
			h->lids_kept += !dirty[lid] && f->pub.lid_port[lid] != IBSM_NONE;
	}
	/* two ranges of whole blocks, the second on its own thread when the work is worth it;
	 * the result does not depend on the split */
	int two = (uint64_t)v.n * walk >= THREADS_WORK && last > BLOCK;
	uint32_t split = two ? 1 + ((last / 2) / BLOCK) * BLOCK : last + 1;
	struct range r[2] = { { .v = v, .first = 1, .last = split - 1 },
			      { .v = v, .first = split, .last = last } };
	GThread *th = two ? mad_cpu_thread_new("ibsm-verify", verify_range, &r[1]) : NULL;
	verify_range(&r[0]);
	if (th)
		g_thread_join(th);
	for (int i = 0; i < 1 + two; i++) {
		if (r[i].h.holes && !h->holes) {
			h->first_switch = r[i].h.first_switch;
			h->first_lid = r[i].h.first_lid;
			h->first_at = r[i].h.first_at;
			h->first_kind = r[i].h.first_kind;
		}
		h->walks += r[i].h.walks;
		h->holes += r[i].h.holes;
		for (int k = 0; k < 5; k++)
			h->by_kind[k] += r[i].h.by_kind[k];
	}
	if (use_memo) {
		if (h->holes) {
			verify_memo_free(*memo);
			*memo = NULL;
		} else {
			memo_keep(memo, f, v.comp, lft, stride, last, keep);
		}
	} else if (memo && *memo) {
		verify_memo_free(*memo); /* a walk of another scope: the memo no longer says */
		*memo = NULL;
	}
	g_free(dirty);
	g_free(c_off);
	g_free(c_sw);
	g_free(v.comp);
	g_free(v.comp_size);
	g_free(v.port_next);
	g_free(v.port_off);
	g_free(v.nports);
	return h->holes;
}

uint64_t routing_verify_since(const struct fabric *f, const struct ibsm_scope *scope,
			      const uint8_t *lft, uint32_t stride, struct routing_holes *h,
			      struct verify_memo **memo)
{
	return routing_verify_keep(f, scope, lft, stride, h, memo, VERIFY_KEEP_COPY);
}

uint64_t routing_verify(const struct fabric *f, const struct ibsm_scope *scope, const uint8_t *lft,
			uint32_t stride, struct routing_holes *h)
{
	return routing_verify_since(f, scope, lft, stride, h, NULL);
}

void routing_hole_text(const struct fabric *f, const struct routing_holes *h, char *buf, size_t len)
{
	static const char *const what[] = { "", "no entry", "a loop", "a port without a link",
					    "the wrong port" };
	if (!h->holes) {
		snprintf(buf, len, "no holes");
		return;
	}
	const struct ibsm_node *from = &f->nodes[f->switches[h->first_switch].node];
	const struct ibsm_node *at = &f->nodes[f->switches[h->first_at].node];
	snprintf(buf, len, "%" PRIu64 " of %" PRIu64 " (switch, LID) pairs not delivered, e.g. switch "
		 "0x%016" PRIx64 "%s%s%s to LID %u: %s at switch 0x%016" PRIx64 "%s%s%s", h->holes,
		 h->walks, from->guid, *from->desc ? " (" : "", from->desc, *from->desc ? ")" : "",
		 h->first_lid, what[h->first_kind], at->guid, *at->desc ? " (" : "", at->desc,
		 *at->desc ? ")" : "");
}
