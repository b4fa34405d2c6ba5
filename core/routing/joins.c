/* SPDX-License-Identifier: BSD-2-Clause */
/* joins.c - routes into a routing chain's parts dealt out over the links that join them
 * (routing/joins.h): per part, its LIDs in turn to its joining links, then from every outside
 * switch a shortest way over outside switches to the link's outer end (one breadth-first
 * search per outer end switch, its equal next hops dealt out in turn). */
#include <string.h>
#include "routing/joins.h"

struct part_scope {
	struct ibsm_scope scope;
	uint64_t *bits;
	uint32_t step;
};

struct chain_parts {
	GPtrArray *a;   /* struct part_scope * */
};

static void part_free(gpointer p)
{
	struct part_scope *ps = p;
	g_free(ps->bits);
	g_free(ps);
}

struct chain_parts *chain_parts_new(void)
{
	struct chain_parts *p = g_new0(struct chain_parts, 1);
	p->a = g_ptr_array_new_with_free_func(part_free);
	return p;
}

void chain_parts_free(struct chain_parts *p)
{
	if (!p)
		return;
	g_ptr_array_free(p->a, TRUE);
	g_free(p);
}

guint chain_parts_count(const struct chain_parts *p)
{
	return p->a->len;
}

static struct ibsm_bits copy_bits(const struct ibsm_bits *b, uint64_t **w)
{
	struct ibsm_bits out = { NULL, b->nbits };
	if (!b->w)
		return out;
	size_t n = ((size_t)b->nbits + 63) / 64;
	memcpy(*w, b->w, n * sizeof(uint64_t));
	out.w = *w;
	*w += n;
	return out;
}

void chain_parts_add(struct chain_parts *p, const struct ibsm_scope *scope, uint32_t step_id)
{
	struct part_scope *ps = g_new0(struct part_scope, 1);
	const struct ibsm_bits *sets[] = { &scope->switches, &scope->ports, &scope->dests };
	size_t words = 0;
	for (unsigned i = 0; i < 3; i++)
		words += sets[i]->w ? ((size_t)sets[i]->nbits + 63) / 64 : 0;
	ps->bits = g_new0(uint64_t, words ? words : 1);
	uint64_t *w = ps->bits;
	ps->scope = *scope;
	ps->scope.switches = copy_bits(&scope->switches, &w);
	ps->scope.ports = copy_bits(&scope->ports, &w);
	ps->scope.dests = copy_bits(&scope->dests, &w);
	ps->step = step_id;
	g_ptr_array_add(p->a, ps);
}

/* The part that wrote entry (sw, lid) last: the last step whose switches hold sw and whose
 * scope routes lid; -1 if none did. */
static int writer(const struct fabric *f, const struct chain_parts *p, uint32_t sw, uint32_t lid)
{
	for (int k = (int)p->a->len - 1; k >= 0; k--) {
		const struct part_scope *ps = g_ptr_array_index(p->a, k);
		if (ibsm_bit(&ps->scope.switches, sw) && ibsm_scope_routes_lid(&f->pub, &ps->scope, lid))
			return k;
	}
	return -1;
}

/* From every switch outside the part, the next hops of its shortest ways to switch x over
 * outside switches: ports[first[s] .. first[s + 1]). dist[s] < 0: no way. */
struct ways {
	int32_t *dist;
	uint32_t *first, *queue;
	uint8_t *ports;
};

static void ways_from(const struct fabric *f, const uint8_t *in_part, uint32_t x, struct ways *w)
{
	uint32_t S = f->pub.n_switches, head = 0, tail = 0;
	for (uint32_t s = 0; s < S; s++)
		w->dist[s] = -1;
	w->dist[x] = 0;
	w->queue[tail++] = x;
	while (head < tail) {
		uint32_t u = w->queue[head++];
		const struct ibsm_switch *su = &f->switches[u];
		for (uint32_t a = su->adj0; a < su->adj0 + su->nadj; a++) {
			uint32_t v = f->adj[a].peer_sw;
			if (!in_part[v] && w->dist[v] < 0) {
				w->dist[v] = w->dist[u] + 1;
				w->queue[tail++] = v;
			}
		}
	}
	uint32_t n = 0;
	for (uint32_t s = 0; s < S; s++) {
		w->first[s] = n;
		const struct ibsm_switch *ss = &f->switches[s];
		if (in_part[s] || w->dist[s] <= 0)
			continue;
		for (uint32_t a = ss->adj0; a < ss->adj0 + ss->nadj; a++) {
			uint32_t v = f->adj[a].peer_sw;
			if (!in_part[v] && w->dist[v] == w->dist[s] - 1)
				w->ports[n++] = f->adj[a].port;
		}
	}
	w->first[S] = n;
}

guint joins_balance(const struct fabric *f, const struct chain_parts *p, const uint8_t *lid_part,
		    uint8_t *lft, uint32_t stride, struct join_part_report *rep, guint max)
{
	uint32_t S = f->pub.n_switches, A = f->pub.n_adj;
	uint32_t top = MIN(f->pub.max_lid, stride ? stride - 1 : 0);
	uint32_t *adj_sw = g_new(uint32_t, A ? A : 1);
	for (uint32_t s = 0; s < S; s++) {
		const struct ibsm_switch *sw = &f->switches[s];
		for (uint32_t a = sw->adj0; a < sw->adj0 + sw->nadj; a++)
			adj_sw[a] = s;
	}
	uint8_t *in_part = g_new(uint8_t, S ? S : 1);
	struct ways w = { g_new(int32_t, S ? S : 1), g_new(uint32_t, S + 1), g_new(uint32_t, S ? S : 1),
			  g_new(uint8_t, A ? A : 1) };
	GArray *links = g_array_new(FALSE, FALSE, sizeof(uint32_t)); /* adj ids into the part */
	GArray *lids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	guint filled = 0;
	for (guint k = 0; k < p->a->len; k++) {
		const struct part_scope *ps = g_ptr_array_index(p->a, k);
		if (!ps->scope.switches.w)
			continue;                       /* the whole fabric: nothing outside */
		/* CA and router LIDs first, then the switches': each kind dealt out evenly */
		g_array_set_size(lids, 0);
		for (int sw_lids = 0; sw_lids < 2; sw_lids++)
			for (uint32_t lid = 1; lid <= top; lid++) {
				uint32_t port = f->lid_port[lid];
				if (lid_part[lid] == k && port != IBSM_NONE &&
				    (f->nodes[f->ports[port].node].type == IBSM_SWITCH) == sw_lids)
					g_array_append_val(lids, lid);
			}
		for (uint32_t s = 0; s < S; s++)
			in_part[s] = (uint8_t)ibsm_bit(&ps->scope.switches, s);
		g_array_set_size(links, 0);
		for (uint32_t a = 0; a < A; a++)
			if (!in_part[adj_sw[a]] && in_part[f->adj[a].peer_sw])
				g_array_append_val(links, a);
		if (!lids->len || !links->len)
			continue;
		struct join_part_report r = { .step = ps->step, .links = links->len, .lids = lids->len,
					      .min_lids = UINT32_MAX };
		/* LID i goes over joining link i mod L; the links by outer end switch, so that one
		 * search serves every link of that switch */
		uint32_t L = links->len;
		uint32_t *per_link = g_new0(uint32_t, L);
		for (uint32_t li = 0; li < L; li++) {
			uint32_t x = adj_sw[g_array_index(links, uint32_t, li)];
			if (li > 0 && adj_sw[g_array_index(links, uint32_t, li - 1)] == x)
				continue;                   /* x's search was done with its first link */
			ways_from(f, in_part, x, &w);
			uint32_t dealt = 0;             /* LIDs of x so far: equal next hops in turn */
			for (guint i = 0; i < lids->len; i++) {
				uint32_t lj = i % L, a = g_array_index(links, uint32_t, lj);
				if (adj_sw[a] != x)
					continue;
				uint32_t lid = g_array_index(lids, uint32_t, i);
				per_link[lj]++;
				for (uint32_t s = 0; s < S; s++) {
					if (in_part[s] || w.dist[s] < 0)
						continue;
					/* a part's own route, or nobody's: kept */
					int k2 = writer(f, p, s, lid);
					const struct part_scope *wr =
						k2 >= 0 ? g_ptr_array_index(p->a, (guint)k2) : NULL;
					if (!wr || wr->scope.switches.w)
						continue;
					uint8_t port;
					if (s == x) {
						port = f->adj[a].port;
					} else {
						uint32_t n = w.first[s + 1] - w.first[s];
						if (!n)
							continue;
						port = w.ports[w.first[s] + (dealt + s) % n];
					}
					uint8_t *e = &lft[(size_t)s * stride + lid];
					if (*e != port) {
						*e = port;
						r.entries++;
					}
				}
				dealt++;
			}
		}
		for (uint32_t li = 0; li < L; li++) {
			r.min_lids = MIN(r.min_lids, per_link[li]);
			r.max_lids = MAX(r.max_lids, per_link[li]);
		}
		g_free(per_link);
		if (filled < max)
			rep[filled] = r;
		filled++;
	}
	g_array_free(links, TRUE);
	g_array_free(lids, TRUE);
	g_free(w.dist);
	g_free(w.first);
	g_free(w.queue);
	g_free(w.ports);
	g_free(in_part);
	g_free(adj_sw);
	return filled;
}
