/* SPDX-License-Identifier: BSD-2-Clause */
/* route.c - torus-2QoS unicast: dimension-order routes (x, then y, then z) on the placed torus,
 * the shorter way round an intact ring (on a tie the way that does not cross the dateline, so
 * the path SL says which way). Around failures, as torus-2QoS(8) describes:
 *  - a ring broken by failed links or a failed switch is one segment: the route goes along it,
 *    the long way round if it must, with the same SL (a broken ring cannot close a credit loop);
 *  - when the later dimensions cannot reach the destination from the coordinate a dimension
 *    would move to (the switch it would turn at is missing, a mesh line is cut), the route
 *    goes to the nearest coordinate from which they can, does the later dimensions there and
 *    comes back at the end: an early turn as close to the failure as it can. When its own
 *    line is cut between it and the target, it steps aside in a later dimension first. The
 *    hop back into the lower dimension is the y-x, z-x or z-y turn that sl.c's SL2VL moves to
 *    VL bit 1;
 *  - on a mesh line cut by a failed link routes leave only in + directions, so no route turns
 *    from a - move back into a lower dimension (a cycle would need one at its lowest point);
 *  - a torus ring split into disjoint segments is refused, naming the ring.
 * Every destination's next hops are checked to reach it from every switch before a row is
 * written; a pair that cannot be routed refuses the whole run. Destination switches are
 * shared out to up to two threads (torus2qos_threads). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine_dests.h"
#include "engine_glue.h"
#include "route.h"

#define NO_SEG 0xFFFF

int torus2qos_linked(const struct torus2qos_topo *t, uint32_t p, unsigned dir)
{
	uint32_t q = torus2qos_step(t, p, dir);
	return q != IBSM_NONE && t->grid[p] != IBSM_NONE && t->grid[q] != IBSM_NONE &&
	       t->nlinks[p * TORUS2QOS_NDIRS + dir] > 0 && t->nlinks[q * TORUS2QOS_NDIRS + (dir ^ 1)] > 0;
}

static void line_name(const struct torus2qos_topo *t, unsigned d, uint32_t p, char *buf, size_t n)
{
	unsigned c[TORUS2QOS_DIMS];
	torus2qos_coords(t, p, c);
	static const char *const at[TORUS2QOS_DIMS][2] = { { "y", "z" }, { "x", "z" }, { "x", "y" } };
	unsigned o1 = d == 0 ? 1 : 0, o2 = d == 2 ? 1 : 2;
	snprintf(buf, n, "%c %s at %s=%u %s=%u", "xyz"[d], t->ring[d] ? "ring" : "line",
		 at[d][0], c[o1], at[d][1], c[o2]);
}

/* Segments of one line (dimension d, through position p0 with coordinate d = 0). Returns the
 * number of segments; marks the line intact when it is whole. */
static unsigned one_line(struct torus2qos_topo *t, unsigned d, uint32_t p0)
{
	unsigned r = t->radix[d], nseg = 0, present = 0, up = 0;
	uint32_t stride = d == 0 ? 1 : d == 1 ? t->radix[0] : t->radix[0] * t->radix[1];
	for (unsigned i = 0; i < r; i++) {
		uint32_t p = p0 + i * stride;
		t->seg[d][p] = NO_SEG;
		if (t->grid[p] == IBSM_NONE)
			continue;
		present++;
		if (i > 0 && torus2qos_linked(t, p - stride, 2 * d)) {
			t->seg[d][p] = t->seg[d][p - stride];
			up++;
		} else {
			t->seg[d][p] = (uint16_t)nseg++;
		}
	}
	uint32_t last = p0 + (r - 1) * stride;
	if (t->ring[d] && torus2qos_linked(t, last, 2 * d)) { /* the wrap link joins the last segment */
		up++;
		uint16_t from = t->seg[d][last], to = t->seg[d][p0];
		if (from != to) {
			for (unsigned i = 0; i < r; i++)
				if (t->seg[d][p0 + i * stride] == from)
					t->seg[d][p0 + i * stride] = to;
			nseg--;
		}
	}
	int whole = present == r && up == (t->ring[d] ? r : r - 1);
	for (unsigned i = 0; i < r; i++)
		t->intact[d][p0 + i * stride] = (uint8_t)whole;
	return nseg;
}

int torus2qos_lines(const struct ibsm_core *core, const struct torus2qos_topo *tc, struct ibsm_routes *out)
{
	struct torus2qos_topo *t = (struct torus2qos_topo *)tc;
	unsigned split = 0, broken = 0;
	char first[64] = "";
	unsigned first_nseg = 0;
	for (unsigned d = 0; d < TORUS2QOS_DIMS; d++) {
		t->intact[d] = calloc(t->npos, 1);
		t->seg[d] = malloc((size_t)t->npos * sizeof(*t->seg[d]));
		if (!t->intact[d] || !t->seg[d])
			return engine_fail(out, -ENOMEM, "out of memory");
		if (t->radix[d] < 2) {
			memset(t->intact[d], 1, t->npos);
			for (uint32_t p = 0; p < t->npos; p++)
				t->seg[d][p] = t->grid[p] == IBSM_NONE ? NO_SEG : 0;
			continue;
		}
		for (uint32_t p = 0; p < t->npos; p++) {
			unsigned c[TORUS2QOS_DIMS];
			torus2qos_coords(t, p, c);
			if (c[d] != 0)
				continue;
			unsigned nseg = one_line(t, d, p);
			char name[64];
			line_name(t, d, p, name, sizeof(name));
			if (!t->intact[d][p] && nseg >= 1)
				broken++;
			if (t->ring[d] && nseg > 1) {
				core->log(core, IBSM_LOG_ERROR, "%s is split into %u "
					  "disjoint segments: no credit-loop-free routes", name, nseg);
				if (!split++) {
					snprintf(first, sizeof(first), "%s", name);
					first_nseg = nseg;
				}
			} else if (!t->intact[d][p] && nseg >= 1) {
				core->log(core, IBSM_LOG_VERBOSE, "%s is broken (%u "
					  "segment%s): routes along it go round the failure", name,
					  nseg, nseg == 1 ? "" : "s");
			}
		}
	}
	t->whole = !broken;
	if (broken)
		core->log(core, IBSM_LOG_INFO, "%u rings or lines broken by failed "
			  "links or switches", broken);
	if (split)
		return engine_fail(out, -EINVAL, "%s is split into %u disjoint segments (%u such "
				   "rings): torus-2QoS refuses to route", first, first_nseg, split);
	return 0;
}

/* The way along line d from cur to coordinate td, which is in cur's segment of the line: the
 * shorter way round an intact ring (a tie: the way that does not cross the dateline), else
 * the only way along the segment. */
static unsigned line_move(const struct torus2qos_topo *t, uint32_t cur, unsigned d, unsigned td)
{
	unsigned c[TORUS2QOS_DIMS];
	torus2qos_coords(t, cur, c);
	unsigned cd = c[d], r = t->radix[d], plus = 2 * d, minus = 2 * d + 1;
	if (t->intact[d][cur]) {
		if (t->ring[d] && torus2qos_crosses(cd, td, r))
			return td > cd ? minus : plus;
		return td > cd ? plus : minus;
	}
	c[d] = td;
	uint32_t tp = torus2qos_at(t, c), p = cur;
	for (unsigned k = 1; k < r && torus2qos_linked(t, p, plus); k++) {
		p = torus2qos_step(t, p, plus);
		if (p == tp)
			return plus;
	}
	return minus;
}

int torus2qos_segc(const struct torus2qos_topo *t, unsigned d, uint32_t p, uint32_t q)
{
	return t->seg[d][p] != NO_SEG && t->seg[d][p] == t->seg[d][q];
}

static uint32_t with_coord(const struct torus2qos_topo *t, uint32_t p, unsigned d, unsigned x)
{
	unsigned c[TORUS2QOS_DIMS];
	torus2qos_coords(t, p, c);
	c[d] = x;
	return torus2qos_at(t, c);
}

/* The coordinate dimension d moves to from p on the way to dst (dimensions below d done):
 * dst's own when the later dimensions reach dst from there, else the nearest other one (on a
 * tie the side p is on) that p reaches along d, from which the later dimensions reach dst's
 * d-line, and from where that line leads back to dst. UINT32_MAX when there is none. */
static unsigned via_coord(const struct torus2qos_topo *t, uint32_t p, uint32_t dst, unsigned d);

/* Can the rule route from p to dst using dimensions d.. only? */
static int reaches(const struct torus2qos_topo *t, uint32_t p, uint32_t dst, unsigned d)
{
	while (d < TORUS2QOS_DIMS && t->radix[d] < 2)
		d++;
	if (d == TORUS2QOS_DIMS)
		return p == dst;
	return via_coord(t, p, dst, d) != UINT32_MAX;
}

/* Does the way from p to q in dimensions d.. start in the + direction? On a mesh line, the
 * routes that leave a cut line and come back to it later all leave it in + directions, so no
 * route turns from a - move back into a lower dimension: a cycle of dependencies would need
 * such a turn at its lowest point (the routes stay free of credit loops on one VL). */
static int northward(const struct torus2qos_topo *t, uint32_t p, uint32_t q, unsigned d)
{
	unsigned c[TORUS2QOS_DIMS], g[TORUS2QOS_DIMS];
	torus2qos_coords(t, p, c);
	torus2qos_coords(t, q, g);
	for (; d < TORUS2QOS_DIMS; d++)
		if (c[d] != g[d])
			return g[d] > c[d];
	return 1;
}

static unsigned via_coord(const struct torus2qos_topo *t, uint32_t p, uint32_t dst, unsigned d)
{
	unsigned c[TORUS2QOS_DIMS], g[TORUS2QOS_DIMS], r = t->radix[d];
	torus2qos_coords(t, p, c);
	torus2qos_coords(t, dst, g);
	uint32_t q = with_coord(t, p, d, g[d]);
	if (torus2qos_segc(t, d, p, q) && reaches(t, q, dst, d + 1))
		return g[d];
	/* the line itself cut by a failed link between p and the target switch */
	int own_cut = t->grid[q] != IBSM_NONE && !torus2qos_segc(t, d, p, q);
	for (unsigned k = 1; k < r; k++)
		for (unsigned side = 0; side < 2; side++) {
			int near_up; /* first the side p is on (on a ring: the nearer way round) */
			if (t->ring[d]) {
				unsigned xu = (g[d] + k) % r, xd = (g[d] + r - k) % r;
				unsigned du = (xu + r - c[d]) % r, dd = (xd + r - c[d]) % r;
				du = du < r - du ? du : r - du;
				dd = dd < r - dd ? dd : r - dd;
				near_up = du <= dd;
			} else {
				near_up = c[d] > g[d];
			}
			int up = near_up ^ side;
			unsigned x;
			if (up) {
				if (!t->ring[d] && g[d] + k >= r)
					continue;
				x = (g[d] + k) % r;
			} else {
				if (!t->ring[d] && g[d] < k)
					continue;
				x = (g[d] + r - k) % r;
			}
			uint32_t qx = with_coord(t, p, d, x), rx = with_coord(t, dst, d, x);
			if (own_cut && !t->ring[d] && !northward(t, qx, rx, d + 1))
				continue;
			if (torus2qos_segc(t, d, p, qx) && torus2qos_segc(t, d, rx, dst) && reaches(t, qx, rx, d + 1))
				return x;
		}
	return UINT32_MAX;
}

/* No way along dimension d from cur (its d-line is cut between cur and dst's coordinate): the
 * nearest position along a later dimension from which dimension d gets through, the side
 * towards dst first. The hop back into d there is a turn sl.c gives VL bit 1. */
static unsigned step_aside(const struct torus2qos_topo *t, uint32_t cur, uint32_t dst, unsigned d)
{
	unsigned c[TORUS2QOS_DIMS], g[TORUS2QOS_DIMS];
	torus2qos_coords(t, cur, c);
	torus2qos_coords(t, dst, g);
	for (unsigned e = d + 1; e < TORUS2QOS_DIMS; e++) {
		unsigned r = t->radix[e];
		for (unsigned k = 1; k < r; k++)
			for (unsigned side = 0; side < 2; side++) {
				int up = (t->ring[d] ? g[e] >= c[e] : 1) ^ side;
				unsigned y;
				if (up) {
					if (!t->ring[e] && c[e] + k >= r)
						continue;
					y = (c[e] + k) % r;
				} else {
					if (!t->ring[e] && c[e] < k)
						continue;
					y = (c[e] + r - k) % r;
				}
				uint32_t q = with_coord(t, cur, e, y);
				if (torus2qos_segc(t, e, cur, q) && via_coord(t, q, dst, d) != UINT32_MAX)
					return line_move(t, cur, e, y);
			}
	}
	return TORUS2QOS_NO_DIR;
}

/* The next direction from cur towards dst using dimensions d0.. only. */
static unsigned next_dims(const struct torus2qos_topo *t, uint32_t cur, uint32_t dst, unsigned d0)
{
	unsigned c[TORUS2QOS_DIMS], g[TORUS2QOS_DIMS];
	torus2qos_coords(t, cur, c);
	torus2qos_coords(t, dst, g);
	for (unsigned d = d0; d < TORUS2QOS_DIMS; d++) {
		if (t->radix[d] < 2)
			continue;
		unsigned x = via_coord(t, cur, dst, d);
		if (x == UINT32_MAX)
			return step_aside(t, cur, dst, d);
		if (x != c[d])
			return line_move(t, cur, d, x);
		if (x != g[d]) /* the later dimensions first, back along d at the end: the
				* turn sl.c gives VL bit 1 */
			return next_dims(t, cur, with_coord(t, dst, d, x), d + 1);
	}
	return cur == dst ? TORUS2QOS_ARRIVED : TORUS2QOS_NO_DIR;
}

unsigned torus2qos_next(const struct torus2qos_topo *t, uint32_t cur, uint32_t dst)
{
	if (t->whole) { /* no failure anywhere: the first dimension that differs */
		unsigned c[TORUS2QOS_DIMS], g[TORUS2QOS_DIMS];
		torus2qos_coords(t, cur, c);
		torus2qos_coords(t, dst, g);
		for (unsigned d = 0; d < TORUS2QOS_DIMS; d++)
			if (c[d] != g[d])
				return line_move(t, cur, d, g[d]);
		return TORUS2QOS_ARRIVED;
	}
	return next_dims(t, cur, dst, 0);
}

/* Next hops of every placed position towards dst, checked to arrive from everywhere.
 * nd: [npos] out; mark: [npos] scratch (0 = unknown, 1 = on the walk, 2 = arrives). */
static int hops_to(const struct torus2qos_topo *t, uint32_t dst, uint8_t *nd, uint8_t *mark,
		   uint32_t *bad_from)
{
	for (uint32_t p = 0; p < t->npos; p++) {
		nd[p] = t->grid[p] == IBSM_NONE ? TORUS2QOS_NO_DIR : (uint8_t)torus2qos_next(t, p, dst);
		mark[p] = 0;
	}
	mark[dst] = 2;
	for (uint32_t p = 0; p < t->npos; p++) {
		if (t->grid[p] == IBSM_NONE || mark[p] == 2)
			continue;
		uint32_t q = p;
		while (mark[q] == 0) {
			mark[q] = 1;
			if (nd[q] >= TORUS2QOS_NDIRS || !torus2qos_linked(t, q, nd[q]))
				break;
			q = torus2qos_step(t, q, nd[q]);
		}
		int ok = mark[q] == 2;
		if (!ok) {
			*bad_from = p;
			return -1;
		}
		for (q = p; mark[q] == 1; q = torus2qos_step(t, q, nd[q]))
			mark[q] = 2;
	}
	return 0;
}

/* rank[port]: where port_order puts a CA port (listed ones first, in the listed order). */
static void port_ranks(const struct torus_conf *conf, unsigned *rank)
{
	for (unsigned p = 0; p < 256; p++)
		rank[p] = 256 + p;
	if (!conf->port_order)
		return;
	for (guint i = 0; i < conf->port_order->len; i++)
		rank[g_array_index(conf->port_order, guint8, i)] = i;
}

static int cmp_rank(const void *a, const void *b, void *ctx)
{
	const unsigned *rank = ctx;
	const struct engine_dest *x = a, *y = b;
	unsigned rx = x->exit ? rank[x->exit] : 1024, ry = y->exit ? rank[y->exit] : 1024;
	return (rx > ry) - (rx < ry);
}

/* What the fill's workers share: the destinations by switch, a dispenser of destination
 * switches, the first failure. */
struct fill {
	const struct ibsm_core *core;
	const struct ibsm_fabric *f;
	const struct ibsm_scope *sc;
	const struct torus2qos_topo *t;
	struct ibsm_routes *out;
	struct engine_dests d;
	unsigned rank[256];
	atomic_uint next_sw;
	atomic_int stop;
	pthread_mutex_t lock;  /* guards rc and out->why */
	int rc;
};

struct fill_worker {
	struct fill *fl;
	uint8_t *nd, *mark;
} ENGINE_WORKER_ALIGNED;

static void fill_fail(struct fill *fl, int rc, const char *why)
{
	pthread_mutex_lock(&fl->lock);
	if (fl->rc == 0) {
		fl->rc = rc;
		snprintf(fl->out->why, sizeof(fl->out->why), "%s", why);
	}
	pthread_mutex_unlock(&fl->lock);
	atomic_store(&fl->stop, 1);
}

/* The rows' entries for the destinations of switch s. */
static void fill_switch(struct fill_worker *w, uint32_t s)
{
	struct fill *fl = w->fl;
	const struct ibsm_fabric *f = fl->f;
	const struct torus2qos_topo *t = fl->t;
	struct ibsm_routes *out = fl->out;
	char why[256];
	uint32_t lo = fl->d.doff[s], hi = fl->d.doff[s + 1];
	if (lo == hi)
		return;
	uint32_t dst = t->pos[s];
	if (dst == IBSM_NONE && t->nb_off[s + 1] == t->nb_off[s]) {
		/* a switch without links: only its own end ports reach it, and each other */
		if (!ibsm_bit(&fl->sc->switches, s))
			return;
		uint8_t *row = out->lft + (size_t)s * out->stride;
		for (uint32_t i = lo; i < hi; i++)
			for (unsigned o = fl->d.v[i].first; o < fl->d.v[i].end; o++)
				row[fl->d.v[i].base + o] = fl->d.v[i].exit;
		return;
	}
	if (dst == IBSM_NONE) {
		snprintf(why, sizeof(why), "switch 0x%016llx \"%s\" has destinations but no place "
			 "in the torus", (unsigned long long)ibsm_switch_node(f, s)->guid,
			 ibsm_switch_node(f, s)->desc);
		fill_fail(fl, -EINVAL, why);
		return;
	}
	uint32_t from;
	if (hops_to(t, dst, w->nd, w->mark, &from) < 0) {
		unsigned a[TORUS2QOS_DIMS], b[TORUS2QOS_DIMS];
		torus2qos_coords(t, from, a);
		torus2qos_coords(t, dst, b);
		snprintf(why, sizeof(why), "no route from switch 0x%016llx (%u,%u,%u) to 0x%016llx "
			 "(%u,%u,%u) around the failures: torus-2QoS refuses to route",
			 (unsigned long long)ibsm_switch_node(f, t->grid[from])->guid, a[0], a[1], a[2],
			 (unsigned long long)ibsm_switch_node(f, s)->guid, b[0], b[1], b[2]);
		fill_fail(fl, -EINVAL, why);
		return;
	}
	qsort_r(fl->d.v + lo, hi - lo, sizeof(*fl->d.v), cmp_rank, fl->rank);
	for (uint32_t i = lo; i < hi; i++) {
		const struct engine_dest *e = &fl->d.v[i];
		unsigned k = i - lo;
		for (uint32_t p = 0; p < t->npos; p++) {
			uint32_t sw = t->grid[p];
			if (sw == IBSM_NONE || !ibsm_bit(&fl->sc->switches, sw))
				continue;
			uint8_t port;
			if (p == dst) {
				port = e->exit;
			} else {
				size_t at = (size_t)p * TORUS2QOS_NDIRS + w->nd[p];
				port = t->links[at * t->pgmax + k % t->nlinks[at]];
			}
			uint8_t *row = out->lft + (size_t)sw * out->stride;
			for (unsigned o = e->first; o < e->end; o++)
				row[e->base + o] = port;
		}
	}
}

static void *fill_main(void *arg)
{
	struct fill_worker *w = arg;
	struct fill *fl = w->fl;
	for (;;) {
		if (atomic_load_explicit(&fl->stop, memory_order_relaxed))
			break;
		if (fl->core->cancelled && fl->core->cancelled(fl->core)) {
			fill_fail(fl, -ECANCELED, "cancelled");
			break;
		}
		unsigned s = atomic_fetch_add(&fl->next_sw, 1);
		if (s >= fl->f->n_switches)
			break;
		fill_switch(w, s);
	}
	return NULL;
}

int torus2qos_fill(const struct ibsm_core *core, const struct ibsm_fabric *f,
	     const struct ibsm_scope *sc, const struct torus_conf *conf,
	     const struct torus2qos_topo *t, struct ibsm_routes *out)
{
	struct fill fl = { .core = core, .f = f, .sc = sc, .t = t, .out = out };
	if (engine_dests_build(f, sc, out->stride, NULL, ENGINE_DESTS_BY_SWITCH, &fl.d) < 0)
		return engine_fail(out, -ENOMEM, "out of memory");
	port_ranks(conf, fl.rank);
	atomic_init(&fl.next_sw, 0);
	atomic_init(&fl.stop, 0);
	pthread_mutex_init(&fl.lock, NULL);
	unsigned n = engine_thread_count(core, "torus2qos_threads",
					 (uint64_t)t->npos * t->npos, 1u << 20, 2);
	struct fill_worker *w = engine_workers_alloc(n, sizeof(*w));
	int ok = w != NULL;
	for (unsigned i = 0; ok && i < n; i++) {
		w[i].fl = &fl;
		w[i].nd = malloc(t->npos);
		w[i].mark = malloc(t->npos);
		ok = w[i].nd && w[i].mark;
	}
	if (ok)
		engine_run_workers(fill_main, w, sizeof(*w), n);
	else
		fl.rc = engine_fail(out, -ENOMEM, "out of memory");
	for (unsigned i = 0; w && i < n; i++) {
		free(w[i].nd);
		free(w[i].mark);
	}
	free(w);
	pthread_mutex_destroy(&fl.lock);
	engine_dests_free(&fl.d);
	return fl.rc;
}
