/* SPDX-License-Identifier: BSD-2-Clause */
/* deadlock.c - the credit-loop check of a generation's tables (routing/deadlock.h): walk the
 * routes per destination LID, each (link, VL, SL) state once, collect the dependencies between
 * (link, VL) channels, then one graph (graph/cdg.h) says which channels lie on cycles.
 *
 * Made for large fabrics: destination LIDs are taken in blocks of 64 by worker threads (each
 * with its own marks and dependency lists, merged into the graph at the end); a block's LFT
 * columns are copied switch-major first, so a walk reads one small column, not one cache line
 * per switch; the marks are indexed by dense channel ids, and the ports' links are looked up in
 * one array of their own. */
#include <string.h>
#include <glib.h>
#include "base/mad_cpu.h"
#include "graph/cdg.h"
#include "routing/deadlock.h"

#define NVL 16           /* VL slots per link: 0..14 data VLs, 15 drops */
#define NONE UINT32_MAX
#define OUT_END  (UINT32_MAX - 1) /* out_of[]: a link to a CA or router: the route leaves */
#define OUT_DEAD UINT32_MAX       /* out_of[]: no such port, or no link */
#define BLOCK 64         /* destination LIDs per block */

struct deps {            /* the channels one channel's routes continue on */
	uint32_t *to, n, cap;
};

struct src {             /* an end port as a source: the switch it enters and by which port */
	uint32_t port, sw, key;   /* key: injection mark slot (a port id of that switch) */
	uint16_t lid, nlids;
	uint8_t in;
};

/* What every worker reads. */
struct dl {
	const struct fabric *f;
	const uint8_t *lft;
	uint32_t stride, S, A;
	unsigned flags;
	uint8_t (*path_sl)(const void *, uint16_t, uint16_t);
	const void *ctx;
	uint32_t *port0;          /* [S] */
	uint8_t *np;              /* [S] */
	uint32_t *out_of;         /* [n_ports]: the directed link leaving a switch port, or OUT_* */
	uint32_t *peer_sw;        /* [n_adj] */
	uint8_t *peer_port;       /* [n_adj] */
	uint8_t **tab;            /* [S]: SL2VL, NULL = identity; else [(np+1)] or [(np+1)^2] x 16 */
	uint8_t *full;            /* [S]: tab is indexed by (in, out), not by out alone */
	GArray *src, *starts;     /* struct src: every source; the starts (all, or one per key) */
	uint8_t *is_src;          /* [n_ports] */
	uint32_t *dlids;          /* the destination LIDs, ascending */
	uint32_t n_dlids;
	gint next_block;
};

/* One worker's own state. */
struct worker {
	struct dl *d;
	GThread *thread;
	uint8_t *col;             /* [BLOCK * S]: the block's LFT columns, LID-major */
	const uint8_t *cur;       /* the column of the LID walked */
	uint32_t *chan_of;        /* [NVL * n_adj]: dense channel id or NONE, by key */
	uint32_t *key_of;         /* dense id -> key (vl * n_adj + adj: VL 0's keys together) */
	struct deps *out;         /* dense id -> its dependencies */
	uint32_t *mark;           /* dense id: == epoch: seen for this LID ... */
	uint16_t *slseen;         /* ... with these SLs */
	uint32_t n_chan, cap_chan, epoch;
	uint32_t *inj_mark;       /* [n_ports], by source key */
	uint16_t *inj_sl;
	uint16_t vl_mask;
	uint64_t routes, unrouted, calls;
};

static uint8_t vl_at(const struct dl *d, uint32_t sw, uint8_t in, uint8_t out, uint8_t sl)
{
	const uint8_t *t = d->tab[sw];
	if (!t)
		return sl;
	size_t row = d->full[sw] ? (size_t)in * (d->np[sw] + 1u) + out : out;
	return t[row * 16 + sl];
}

static uint32_t channel(struct worker *w, uint32_t key)
{
	uint32_t c = w->chan_of[key];
	if (c != NONE)
		return c;
	if (w->n_chan == w->cap_chan) {
		w->cap_chan = w->cap_chan ? w->cap_chan * 2 : 1024;
		w->key_of = g_renew(uint32_t, w->key_of, w->cap_chan);
		w->out = g_renew(struct deps, w->out, w->cap_chan);
		w->mark = g_renew(uint32_t, w->mark, w->cap_chan);
		w->slseen = g_renew(uint16_t, w->slseen, w->cap_chan);
	}
	c = w->n_chan++;
	w->key_of[c] = key;
	w->out[c] = (struct deps){ NULL, 0, 0 };
	w->mark[c] = 0;
	w->chan_of[key] = c;
	return c;
}

static void depend(struct worker *w, uint32_t a, uint32_t b)
{
	struct deps *o = &w->out[a];
	for (uint32_t i = 0; i < o->n; i++)
		if (o->to[i] == b)
			return;
	if (o->n == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 4;
		o->to = g_renew(uint32_t, o->to, o->cap);
	}
	o->to[o->n++] = b;
}

/* The route to the current LID entering switch sw by port in, with SL sl, until it leaves
 * the switches, meets a state this LID saw with this SL, or meets no route. */
static void walk(struct worker *w, uint32_t sw, uint8_t in, uint8_t sl)
{
	const struct dl *d = w->d;
	uint32_t in_ch = NONE;
	uint16_t bit = (uint16_t)(1u << sl);
	for (;;) {
		uint8_t o = w->cur[sw];
		if (o == 0)
			return;                         /* the switch's own LID */
		uint32_t a = o <= d->np[sw] ? d->out_of[d->port0[sw] + o] : OUT_DEAD;
		if (a == OUT_DEAD) {
			w->unrouted++;                  /* no entry, or a port without a link */
			return;
		}
		uint8_t vl = vl_at(d, sw, in, o, sl);
		if (vl >= 15) {
			w->unrouted++;                  /* VL 15: the SL is dropped here */
			return;
		}
		w->vl_mask |= (uint16_t)(1u << vl);
		if (a == OUT_END)
			return;                         /* out to a CA or router: no dependency */
		uint32_t ch = channel(w, vl * d->A + a);
		if (in_ch != NONE)
			depend(w, in_ch, ch);
		if (w->mark[ch] != w->epoch) {
			w->mark[ch] = w->epoch;
			w->slseen[ch] = bit;
		} else if (w->slseen[ch] & bit) {
			return;                         /* the rest of this route was walked */
		} else {
			w->slseen[ch] |= bit;
		}
		in_ch = ch;
		in = d->peer_port[a];
		sw = d->peer_sw[a];
	}
}

static void one_lid(struct worker *w, uint32_t dlid)
{
	const struct dl *d = w->d;
	uint32_t dp = d->f->lid_port[dlid];
	w->epoch++;
	w->routes += d->src->len - (d->is_src[dp] ? 1 : 0);
	for (guint i = 0; i < d->starts->len; i++) {
		const struct src *s = &g_array_index(d->starts, struct src, i);
		if (!d->path_sl) {
			walk(w, s->sw, s->in, 0);
			continue;
		}
		if (s->port == dp)
			continue;
		for (unsigned k = 0; k < s->nlids; k++) {
			uint8_t sl = d->path_sl(d->ctx, (uint16_t)(s->lid + k), (uint16_t)dlid) & 0xF;
			w->calls++;
			uint16_t bit = (uint16_t)(1u << sl);
			if (w->inj_mark[s->key] != w->epoch) {
				w->inj_mark[s->key] = w->epoch;
				w->inj_sl[s->key] = 0;
			}
			if (w->inj_sl[s->key] & bit)
				continue;
			w->inj_sl[s->key] |= bit;
			walk(w, s->sw, s->in, sl);
		}
	}
}

static gpointer worker_main(gpointer data)
{
	struct worker *w = data;
	struct dl *d = w->d;
	for (;;) {
		uint32_t b = (uint32_t)g_atomic_int_add(&d->next_block, 1);
		uint32_t first = b * BLOCK;
		if (first >= d->n_dlids)
			break;
		uint32_t n = MIN((uint32_t)BLOCK, d->n_dlids - first);
		const uint32_t *lids = d->dlids + first;
		for (uint32_t s = 0; s < d->S; s++) {
			const uint8_t *row = d->lft + (size_t)s * d->stride;
			for (uint32_t k = 0; k < n; k++)
				w->col[(size_t)k * d->S + s] = row[lids[k]];
		}
		for (uint32_t k = 0; k < n; k++) {
			w->cur = w->col + (size_t)k * d->S;
			one_lid(w, lids[k]);
		}
	}
	return NULL;
}

/* Each switch's SL2VL tables as the hook gives them, compact (by out port) where no table
 * depends on the in port, NULL where every one is the identity. */
static void tables_load(struct dl *d, int (*sl2vl)(const void *, uint32_t, uint32_t, uint8_t[16]),
			const void *ctx)
{
	const struct fabric *f = d->f;
	d->tab = g_new0(uint8_t *, d->S ? d->S : 1);
	d->full = g_new0(uint8_t, d->S ? d->S : 1);
	if (!sl2vl)
		return;
	for (uint32_t s = 0; s < d->S; s++) {
		uint32_t p0 = d->port0[s];
		unsigned w = d->np[s] + 1u;
		uint8_t *t = g_malloc((size_t)w * w * 16);
		int identity = 1, compact = 1;
		for (unsigned o = 0; o < w; o++)
			for (unsigned i = 0; i < w; i++) {
				uint8_t *v = t + ((size_t)i * w + o) * 16;
				for (unsigned k = 0; k < 16; k++)
					v[k] = (uint8_t)k;
				int used = o > 0 && f->ports[p0 + o].peer != IBSM_NONE &&
					   (i == 0 || f->ports[p0 + i].peer != IBSM_NONE);
				if (used && sl2vl(ctx, p0 + i, p0 + o, v) < 0)
					for (unsigned k = 0; k < 16; k++)
						v[k] = (uint8_t)k;
				for (unsigned k = 0; k < 16; k++)
					v[k] &= 0xF;
				for (unsigned k = 0; used && k < 16; k++)
					identity &= v[k] == k;
			}
		/* compact when, for every out port, the used in ports agree with in port 0 */
		for (unsigned o = 1; o < w && compact; o++)
			for (unsigned i = 1; i < w && compact; i++)
				if (f->ports[p0 + i].peer != IBSM_NONE &&
				    memcmp(t + ((size_t)i * w + o) * 16, t + (size_t)o * 16, 16))
					compact = 0;
		if (identity) {
			g_free(t);
		} else if (compact) {
			uint8_t *c = g_malloc((size_t)w * 16);
			for (unsigned o = 0; o < w; o++)
				memcpy(c + (size_t)o * 16, t + (size_t)o * 16, 16); /* row in 0 */
			g_free(t);
			d->tab[s] = c;
		} else {
			d->tab[s] = t;
			d->full[s] = 1;
		}
	}
}

/* Every end port as a source: the switch it enters, by which port, and its LIDs. */
static GArray *sources(const struct fabric *f, uint32_t stride, unsigned flags)
{
	GArray *a = g_array_new(FALSE, FALSE, sizeof(struct src));
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		const struct ibsm_port *port = &f->ports[p];
		const struct ibsm_node *n = &f->nodes[port->node];
		struct src s = { .port = p };
		if (!(port->flags & IBSM_PORT_PRESENT) || port->lid == 0)
			continue;
		if (n->type == IBSM_SWITCH) {
			if (port->num != 0 || (flags & DEADLOCK_CA_ROUTES))
				continue;
			s.sw = n->sw;
			s.in = 0;
		} else {
			if (port->peer == IBSM_NONE)
				continue;
			const struct ibsm_port *q = &f->ports[port->peer];
			const struct ibsm_node *qn = &f->nodes[q->node];
			if (qn->type != IBSM_SWITCH)
				continue;
			s.sw = qn->sw;
			s.in = q->num;
		}
		s.lid = port->lid;
		unsigned nl = port->lmc <= 7 ? 1u << port->lmc : 1u;
		while (s.nlids < nl && (uint32_t)s.lid + s.nlids < stride &&
		       (uint32_t)s.lid + s.nlids <= f->pub.max_lid &&
		       f->lid_port[s.lid + s.nlids] == p)
			s.nlids++;
		if (!s.nlids)
			continue;
		g_array_append_val(a, s);
	}
	return a;
}

static uint32_t switch_of_adj(const struct fabric *f, uint32_t a)
{
	for (uint32_t s = 0; s < f->pub.n_switches; s++)
		if (a >= f->switches[s].adj0 && a < f->switches[s].adj0 + f->switches[s].nadj)
			return s;
	return 0;
}

static void name_cycle(const struct fabric *f, const uint32_t *key_of, struct cdg *g,
		       struct deadlock_report *rep)
{
	uint32_t cyc[64];
	uint32_t len = cdg_find_cycle(g, cyc, G_N_ELEMENTS(cyc));
	rep->cycle_len = len;
	GString *t = g_string_new(NULL);
	uint32_t shown = MIN(len, (uint32_t)G_N_ELEMENTS(cyc));
	for (uint32_t i = 0; i < shown; i++) {
		uint32_t key = key_of[cyc[i]], A = f->pub.n_adj;
		const struct ibsm_adj *a = &f->adj[key % A];
		uint32_t from = switch_of_adj(f, key % A);
		char one[64];
		g_snprintf(one, sizeof(one), "%ssw 0x%016" G_GINT64_MODIFIER "x port %u vl %u",
			   i ? " -> " : "", f->nodes[f->switches[from].node].guid, a->port, key / A);
		if (t->len + strlen(one) + 40 >= sizeof(rep->cycle)) {
			g_string_append_printf(t, " -> ... (%u channels)", len);
			shown = 0;
			break;
		}
		g_string_append(t, one);
	}
	if (shown)
		g_string_append(t, len > shown ? " -> ..." : " -> (the first)");
	g_strlcpy(rep->cycle, t->str, sizeof(rep->cycle));
	g_string_free(t, TRUE);
}

static void worker_free(struct worker *w)
{
	for (uint32_t c = 0; c < w->n_chan; c++)
		g_free(w->out[c].to);
	g_free(w->out);
	g_free(w->key_of);
	g_free(w->mark);
	g_free(w->slseen);
	g_free(w->chan_of);
	g_free(w->col);
	g_free(w->inj_mark);
	g_free(w->inj_sl);
}

uint32_t deadlock_check(const struct fabric *f, const uint8_t *lft, uint32_t stride,
			uint8_t (*path_sl)(const void *ctx, uint16_t slid, uint16_t dlid),
			int (*sl2vl)(const void *ctx, uint32_t in_port, uint32_t out_port, uint8_t vl[16]),
			const void *ctx, struct deadlock_report *rep)
{
	return deadlock_check_flags(f, lft, stride, path_sl, sl2vl, ctx, 0, rep);
}

uint32_t deadlock_check_flags(const struct fabric *f, const uint8_t *lft, uint32_t stride,
			      uint8_t (*path_sl)(const void *ctx, uint16_t slid, uint16_t dlid),
			      int (*sl2vl)(const void *ctx, uint32_t in_port, uint32_t out_port,
					   uint8_t vl[16]),
			      const void *ctx, unsigned flags, struct deadlock_report *rep)
{
	struct deadlock_report local;
	if (!rep)
		rep = &local;
	memset(rep, 0, sizeof(*rep));
	gint64 t0 = g_get_monotonic_time();
	uint32_t S = f->pub.n_switches, P = f->pub.n_ports, A = f->pub.n_adj;
	struct dl d = { .f = f, .lft = lft, .stride = stride, .S = S, .A = A, .flags = flags,
			.path_sl = path_sl, .ctx = ctx };
	d.port0 = g_new(uint32_t, S ? S : 1);
	d.np = g_new(uint8_t, S ? S : 1);
	d.out_of = g_new(uint32_t, P ? P : 1);
	d.peer_sw = g_new(uint32_t, A ? A : 1);
	d.peer_port = g_new(uint8_t, A ? A : 1);
	for (uint32_t p = 0; p < P; p++) {
		const struct ibsm_port *q = &f->ports[p];
		d.out_of[p] = !(q->flags & IBSM_PORT_PRESENT) || q->peer == IBSM_NONE ? OUT_DEAD :
			      OUT_END;
	}
	for (uint32_t s = 0; s < S; s++) {
		const struct ibsm_switch *w = &f->switches[s];
		d.port0[s] = f->nodes[w->node].port0;
		d.np[s] = f->nodes[w->node].nports;
		for (uint32_t a = w->adj0; a < w->adj0 + w->nadj; a++)
			d.out_of[d.port0[s] + f->adj[a].port] = a;
	}
	for (uint32_t a = 0; a < A; a++) {
		d.peer_sw[a] = f->adj[a].peer_sw;
		d.peer_port[a] = f->adj[a].peer_port;
	}
	tables_load(&d, sl2vl, ctx);
	d.src = sources(f, stride, flags);
	d.is_src = g_new0(uint8_t, P ? P : 1);
	for (guint i = 0; i < d.src->len; i++) {
		struct src *s = &g_array_index(d.src, struct src, i);
		d.is_src[s->port] = 1;
		/* sources entering a switch whose tables ignore the in port start alike */
		s->key = d.port0[s->sw] + (d.full[s->sw] ? s->in : 0);
	}
	/* without path_sl every route has SL 0: one start per key does for all sources */
	d.starts = d.src;
	if (!path_sl) {
		uint8_t *seen = g_new0(uint8_t, P ? P : 1);
		d.starts = g_array_new(FALSE, FALSE, sizeof(struct src));
		for (guint i = 0; i < d.src->len; i++) {
			const struct src *s = &g_array_index(d.src, struct src, i);
			if (!seen[s->key]++)
				g_array_append_val(d.starts, *s);
		}
		g_free(seen);
	}
	uint32_t top = MIN(f->pub.max_lid, stride ? stride - 1 : 0);
	d.dlids = g_new(uint32_t, top + 1);
	for (uint32_t dlid = 1; dlid <= top && f->lid_port; dlid++) {
		uint32_t dp = f->lid_port[dlid];
		if (dp == IBSM_NONE || !fabric_is_end_port(f, dp) ||
		    ((flags & DEADLOCK_CA_ROUTES) && f->nodes[f->ports[dp].node].type == IBSM_SWITCH))
			continue;
		d.dlids[d.n_dlids++] = dlid;
	}
	/* workers: one per processor (at most 8) once the walk is worth it */
	uint64_t work = (uint64_t)d.n_dlids * d.starts->len;
	unsigned nw = work < (1u << 20) ? 1 : MIN(8u, (unsigned)g_get_num_processors());
	nw = MAX(1u, MIN(nw, (d.n_dlids + BLOCK - 1) / BLOCK));
	struct worker *ws = g_new0(struct worker, nw);
	for (unsigned i = 0; i < nw; i++) {
		struct worker *w = &ws[i];
		w->d = &d;
		w->col = g_malloc((size_t)BLOCK * (S ? S : 1));
		w->chan_of = g_new(uint32_t, (size_t)A * NVL + 1);
		memset(w->chan_of, 0xFF, ((size_t)A * NVL + 1) * sizeof(uint32_t));
		w->inj_mark = g_new0(uint32_t, P ? P : 1);
		w->inj_sl = g_new0(uint16_t, P ? P : 1);
	}
	for (unsigned i = 1; i < nw; i++)
		ws[i].thread = mad_cpu_thread_new("ibsm-deadlock", worker_main, &ws[i]);
	worker_main(&ws[0]);
	for (unsigned i = 1; i < nw; i++)
		g_thread_join(ws[i].thread);
	/* one graph over every worker's channels (dense ids of worker 0 first) */
	uint32_t *gchan = g_new(uint32_t, (size_t)A * NVL + 1);
	memset(gchan, 0xFF, ((size_t)A * NVL + 1) * sizeof(uint32_t));
	GArray *gkey = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	for (unsigned i = 0; i < nw; i++)
		for (uint32_t c = 0; c < ws[i].n_chan; c++) {
			uint32_t key = ws[i].key_of[c];
			if (gchan[key] == NONE) {
				gchan[key] = gkey->len;
				g_array_append_val(gkey, key);
			}
		}
	uint32_t result = 0;
	struct cdg *g = cdg_new(gkey->len);
	for (unsigned i = 0; g && i < nw; i++)
		for (uint32_t c = 0; g && c < ws[i].n_chan; c++)
			for (uint32_t k = 0; g && k < ws[i].out[c].n; k++)
				if (cdg_add(g, gchan[ws[i].key_of[c]],
					    gchan[ws[i].key_of[ws[i].out[c].to[k]]]) < 0) {
					cdg_free(g);
					g = NULL;
				}
	if (!g) {
		result = UINT32_MAX;
		g_strlcpy(rep->cycle, "out of memory: not checked", sizeof(rep->cycle));
	} else {
		result = cdg_cyclic_channels(g);
		rep->dependencies = cdg_edges(g);
		if (result)
			name_cycle(f, (const uint32_t *)(const void *)gkey->data, g, rep);
		cdg_free(g);
	}
	rep->channels_in_cycles = result;
	rep->channels = gkey->len;
	for (unsigned i = 0; i < nw; i++) {
		rep->vl_mask |= ws[i].vl_mask;
		rep->routes += ws[i].routes;
		rep->unrouted += ws[i].unrouted;
		rep->path_sl_calls += ws[i].calls;
		worker_free(&ws[i]);
	}
	rep->vls = (uint32_t)__builtin_popcount(rep->vl_mask);
	g_free(ws);
	g_free(gchan);
	g_array_free(gkey, TRUE);
	for (uint32_t s = 0; s < S; s++)
		g_free(d.tab[s]);
	g_free(d.tab);
	g_free(d.full);
	g_free(d.port0);
	g_free(d.np);
	g_free(d.out_of);
	g_free(d.peer_sw);
	g_free(d.peer_port);
	g_free(d.is_src);
	g_free(d.dlids);
	if (d.starts != d.src)
		g_array_free(d.starts, TRUE);
	g_array_free(d.src, TRUE);
	rep->seconds = (double)(g_get_monotonic_time() - t0) / 1e6;
	return result;
}
