/* SPDX-License-Identifier: BSD-2-Clause */
/* dor.c - dimension-order routing for meshes and hypercubes: minhop's shortest paths, but at
 * every switch only the lowest dimension that still shortens the path is used (parallel
 * links of that dimension to the same neighbour share the load, balanced like minhop). So
 * every route crosses the dimensions in increasing order, which keeps a mesh or hypercube
 * free of credit loops.
 *
 * Dimensions come from the cabling, not from raw port numbers: a dimension is a set of port
 * numbers joined by (a) the port pairs of links - every link using port p at one end must use
 * the same port q at the other end, fabric-wide (q = p on a hypercube) - and (b) parallel
 * links between the same two switches. Dimensions are ordered by their lowest port number.
 * A port whose links disagree about its partner is bad cabling: route() declines and names
 * the first link (by switch id, then port) that disagrees with the partner most of that
 * port's links use, so the -R chain falls back. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>
#include "engine_glue.h"
#include "mhc.h"

#define NO_DIM 0xFF

/* What the cabling says: read-only while the rows are filled (the narrow hook's context). */
struct dims {
	uint8_t dim[256];        /* port number -> dimension (0 = lowest), NO_DIM: not a link */
	uint8_t partner[256];    /* port number -> the port at the other end of its links */
	unsigned ndims;
	int hypercube;           /* every link has the same port at both ends */
	unsigned rings;          /* dimensions whose links close a ring (torus) */
};

struct dor_result {
	uint32_t generation;
	struct mhc_fill_stats st;
	unsigned ndims, rings;
	double seconds;
};

/* Is the directed adjacency a of switch s a usable switch-to-switch link (as the fill sees)? */
static int usable(const struct ibsm_fabric *f, const struct ibsm_scope *sc, uint32_t s,
		  const struct ibsm_adj *a)
{
	return a->peer_sw < f->n_switches && a->peer_sw != s && a->port != 0 &&
	       a->port != IBSM_NO_PORT && a->peer_port != 0 && a->peer_port != IBSM_NO_PORT &&
	       ibsm_scope_link(f, sc, s, a);
}

static uint8_t uf_find(uint8_t *up, uint8_t x)
{
	while (up[x] != x) {
		up[x] = up[up[x]];
		x = up[x];
	}
	return x;
}

static void uf_join(uint8_t *up, uint8_t a, uint8_t b)
{
	a = uf_find(up, a);
	b = uf_find(up, b);
	if (a < b)
		up[b] = a;
	else
		up[a] = b;
}

/* Port p of switch s leads (over a usable link) to which switch? IBSM_NONE if none. */
static uint32_t via(const struct ibsm_fabric *f, const struct ibsm_scope *sc, uint32_t s,
		    uint8_t p)
{
	const struct ibsm_switch *sw = ibsm_switch_at(f, s);
	for (uint32_t i = sw->adj0; i < sw->adj0 + sw->nadj && i < f->n_adj; i++)
		if (ibsm_adj_at(f, i)->port == p && usable(f, sc, s, ibsm_adj_at(f, i)))
			return ibsm_adj_at(f, i)->peer_sw;
	return IBSM_NONE;
}

/* Does following port p (and arriving by its partner) from some switch come back to it?
 * Each switch has at most one p link, so the p links form paths and cycles. */
static int closes_ring(const struct ibsm_fabric *f, const struct ibsm_scope *sc, uint8_t p,
		       uint32_t *stamp)
{
	uint32_t S = f->n_switches;
	memset(stamp, 0, (size_t)S * sizeof(*stamp));
	for (uint32_t s = 0; s < S; s++) {
		if (stamp[s])
			continue;
		uint32_t cur = s, mark = s + 1;
		while (cur != IBSM_NONE && !stamp[cur]) {
			stamp[cur] = mark;
			cur = via(f, sc, cur, p);
		}
		if (cur != IBSM_NONE && stamp[cur] == mark)
			return 1;
	}
	return 0;
}

/* Appends to a bounded text; a text that does not fit ends in "...". */
static void __attribute__((format(printf, 3, 4))) append(char *buf, size_t size,
							 const char *fmt, ...)
{
	size_t len = strlen(buf);
	if (len + 4 >= size)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
	if (n < 0 || len + (size_t)n + 4 >= size)
		memcpy(buf + size - 4, "...", 4);
}

/* How the usable link ends pair up port numbers: cnt[p * 256 + q] ends on port p whose far
 * end is port q, total[p] = all ends on port p. */
struct votes {
	uint32_t *cnt;
	uint32_t total[256];
};

/* Every usable link end votes for its partner port. */
static void count_votes(const struct ibsm_fabric *f, const struct ibsm_scope *sc,
			struct votes *v)
{
	for (uint32_t s = 0; s < f->n_switches; s++) {
		const struct ibsm_switch *sw = ibsm_switch_at(f, s);
		for (uint32_t i = sw->adj0; i < sw->adj0 + sw->nadj && i < f->n_adj; i++) {
			const struct ibsm_adj *a = ibsm_adj_at(f, i);
			if (!usable(f, sc, s, a))
				continue;
			v->cnt[a->port * 256 + a->peer_port]++;
			v->total[a->port]++;
		}
	}
}

/* Each port's partner is the one most of its link ends go to (the lowest on a tie); a
 * hypercube pairs every port with itself. */
static void choose_partners(const struct votes *v, struct dims *d)
{
	int hypercube = 1, any = 0;
	for (unsigned p = 1; p < 255; p++) {
		if (!v->total[p])
			continue;
		uint32_t best = 0;
		for (unsigned q = 1; q < 255; q++)
			if (v->cnt[p * 256 + q] > best) {
				best = v->cnt[p * 256 + q];
				d->partner[p] = (uint8_t)q;
			}
		hypercube &= d->partner[p] == p;
		any = 1;
	}
	d->hypercube = any && hypercube;
}

/* The first link end (switch id, then port) whose partner is not its port's usual one:
 * -EINVAL with out->why naming it, or 0 when the cabling is consistent. */
static int check_partners(const struct ibsm_fabric *f, const struct ibsm_scope *sc,
			  const struct votes *v, const struct dims *d, struct ibsm_routes *out)
{
	for (uint32_t s = 0; s < f->n_switches; s++) {
		const struct ibsm_switch *sw = ibsm_switch_at(f, s);
		const struct ibsm_adj *bad = NULL;
		for (uint32_t i = sw->adj0; i < sw->adj0 + sw->nadj && i < f->n_adj; i++) {
			const struct ibsm_adj *a = ibsm_adj_at(f, i);
			if (usable(f, sc, s, a) && d->partner[a->port] != a->peer_port &&
			    (!bad || a->port < bad->port))
				bad = a;
		}
		if (!bad)
			continue;
		const struct ibsm_node *n = ibsm_switch_node(f, s);
		const struct ibsm_node *m = ibsm_switch_node(f, bad->peer_sw);
		uint8_t p = bad->port, q = d->partner[p];
		return engine_fail(out, -EINVAL,
				   "inconsistent %s cabling: switch 0x%016llx \"%s\" port %u goes "
				   "to port %u of 0x%016llx \"%s\", but %u of the %u link ends on "
				   "port %u go to port %u",
				   d->hypercube || q == p ? "hypercube" : "mesh",
				   (unsigned long long)n->guid, n->desc, p, bad->peer_port,
				   (unsigned long long)m->guid, m->desc, v->cnt[p * 256 + q],
				   v->total[p], p, q);
	}
	return 0;
}

/* Dimensions: port numbers joined by link pairs and by parallel links, numbered by their
 * lowest port (the root of each union-find set is its lowest port). */
static void join_dimensions(const struct ibsm_fabric *f, const struct ibsm_scope *sc,
			    const struct votes *v, struct dims *d)
{
	uint8_t up[256];
	for (unsigned p = 0; p < 256; p++)
		up[p] = (uint8_t)p;
	for (unsigned p = 1; p < 255; p++)
		if (v->total[p])
			uf_join(up, (uint8_t)p, d->partner[p]);
	for (uint32_t s = 0; s < f->n_switches; s++) {
		const struct ibsm_switch *sw = ibsm_switch_at(f, s);
		for (uint32_t i = sw->adj0; i < sw->adj0 + sw->nadj && i < f->n_adj; i++) {
			const struct ibsm_adj *a = ibsm_adj_at(f, i);
			if (!usable(f, sc, s, a))
				continue;
			for (uint32_t j = sw->adj0; j < i; j++) {
				const struct ibsm_adj *b = ibsm_adj_at(f, j);
				if (b->peer_sw == a->peer_sw && usable(f, sc, s, b))
					uf_join(up, a->port, b->port);
			}
		}
	}
	uint8_t num[256];
	memset(num, NO_DIM, sizeof(num));
	for (unsigned p = 1; p < 255; p++) {
		if (!v->total[p])
			continue;
		uint8_t r = uf_find(up, (uint8_t)p);
		if (num[r] == NO_DIM)
			num[r] = (uint8_t)d->ndims++;
		d->dim[p] = num[r];
	}
}

/* Logs the dimensions and counts the rings: a ring (torus wrap-around) is legal cabling but
 * not free of credit loops under dimension order. stamp: [S] scratch. */
static void report_dimensions(const struct ibsm_core *core, const struct ibsm_fabric *f,
			      const struct ibsm_scope *sc, struct dims *d, uint32_t *stamp)
{
	char text[160] = "";
	uint8_t ring_seen[256] = { 0 };
	for (unsigned k = 0; k < d->ndims; k++) {
		int ring = 0;
		append(text, sizeof(text), "%s%u:", k ? " " : "", k);
		const char *sep = "";
		for (unsigned p = 1; p < 255; p++) {
			if (d->dim[p] != k)
				continue;
			append(text, sizeof(text), "%s%u", sep, p);
			sep = ",";
			if (!ring && d->partner[p] != p && !ring_seen[p]) {
				ring_seen[p] = ring_seen[d->partner[p]] = 1;
				ring = closes_ring(f, sc, (uint8_t)p, stamp);
			}
		}
		if (!ring)
			continue;
		d->rings++;
		core->log(core, IBSM_LOG_INFO,
			  "dimension %u closes a ring (torus cabling): dimension-order routes "
			  "on it are not free of credit loops", k);
	}
	core->log(core, IBSM_LOG_VERBOSE, "%u dimensions from %s cabling (dimension: ports) %s",
		  d->ndims, d->hypercube ? "hypercube" : "mesh", text);
}

/* Learns the dimensions from the usable links; < 0 with out->why naming the first bad link. */
static int dims_build(const struct ibsm_core *core, const struct ibsm_fabric *f,
		      const struct ibsm_scope *sc, struct dims *d, struct ibsm_routes *out)
{
	uint32_t S = f->n_switches;
	struct votes v = { .cnt = calloc(256 * 256, sizeof(*v.cnt)) };
	uint32_t *stamp = malloc((S ? S : 1) * sizeof(*stamp));
	int rc = 0;
	memset(d, 0, sizeof(*d));
	memset(d->dim, NO_DIM, sizeof(d->dim));
	if (!v.cnt || !stamp) {
		rc = engine_fail(out, -ENOMEM, "out of memory");
	} else {
		count_votes(f, sc, &v);
		choose_partners(&v, d);
		rc = check_partners(f, sc, &v, d, out);
	}
	if (rc == 0) {
		join_dimensions(f, sc, &v, d);
		report_dimensions(core, f, sc, d, stamp);
	}
	free(v.cnt);
	free(stamp);
	return rc;
}

/* The fill's hook: of the min-hop ports c[0 .. n) keep the lowest dimension, and of it the
 * ports to the same neighbour as its lowest port (parallel links share the load). */
static unsigned dor_narrow(const void *ctx, const struct ibsm_fabric *f, uint32_t s, uint32_t t,
			   uint8_t *c, unsigned n)
{
	const struct dims *d = ctx;
	(void)t;
	unsigned lo = 0;
	for (unsigned i = 1; i < n; i++)
		if (d->dim[c[i]] < d->dim[c[lo]])
			lo = i;
	uint8_t want = d->dim[c[lo]];
	uint32_t p0 = ibsm_switch_node(f, s)->port0;
	uint32_t nb = ibsm_port_at(f, ibsm_port_at(f, p0 + c[lo])->peer)->node;
	unsigned k = 0;
	for (unsigned i = 0; i < n; i++) {
		uint32_t peer = ibsm_port_at(f, p0 + c[i])->peer;
		if (d->dim[c[i]] == want && peer != IBSM_NONE && ibsm_port_at(f, peer)->node == nb)
			c[k++] = c[i];
	}
	return k;
}

static const struct engine_run_spec dor_run = {
	.name = "dor", .result_size = sizeof(struct dor_result), .result_free = free,
};

static int dor_route(void *inst, const struct ibsm_fabric *f, const struct ibsm_scope *sc,
		     struct ibsm_routes *out, void **result)
{
	struct engine_run run;
	int rc = engine_run_begin(&run, &dor_run, inst, f, sc, out, result);
	if (rc < 0)
		return rc;
	const struct ibsm_core *core = run.core;
	struct dor_result *res = run.res;
	struct dims d;
	res->generation = f->generation;
	rc = dims_build(core, f, sc, &d, out);
	if (rc < 0)
		return engine_run_end(&run, rc);
	/* the ignore file only once the cabling is known good: a declined dor leaves it to
	 * the fallback engine */
	rc = mhc_ignore_apply(&run, f);
	if (rc < 0)
		return engine_run_end(&run, rc);
	struct mhc_order_opts order;
	struct mhc_fill opt = {
		.dest_ignored = run.dest_ign, .exit_ignored = run.exit_ign,
		.threads_key = "dor_threads", .narrow = dor_narrow, .narrow_ctx = &d,
	};
	if ((rc = mhc_inputs_load(core, f, &order, &opt, out)) < 0)
		return engine_run_end(&run, rc);
	rc = mhc_fill_routes(core, f, sc, out, &opt, &res->st);
	free((uint8_t *)opt.weights);
	if (rc < 0)
		return engine_run_end(&run, rc);
	res->ndims = d.ndims;
	res->rings = d.rings;
	res->seconds = engine_run_seconds(&run);
	char detail[48];
	snprintf(detail, sizeof(detail), " over %u dimensions", d.ndims);
	mhc_fill_log(core, &res->st, detail, res->seconds);
	return engine_run_end(&run, 0);
}

/* No IBSM_CAP_LMC: with LMC > 0 every LID of a port follows the same dimension order (only
 * parallel links differ), as in OpenSM; spreading over other paths would break the order. */
static const struct ibsm_config_key dor_keys[] = {
	MHC_IGNORE_FILE_KEY,
	MHC_ORDER_KEYS,
	{ "dor_threads", "0", "Threads filling the switch rows (0: automatic, 1 or 2)" },
	{ NULL, NULL, NULL },
};

IBSM_ENGINE_EXPORT const struct ibsm_engine ibsm_engine = {
	IBSM_ENGINE_INIT("dor"),
	.setup = engine_inst_setup,
	.teardown = engine_inst_teardown,
	.route = dor_route,
	.result_free = free,
	.path_sl = engine_path_sl_hint,
	.dump = engine_dump_nothing, /* nothing of its own; the core writes the LFT dumps */
	.config_keys = dor_keys,
	.summary = "Dimension-order routing for meshes and hypercubes: shortest paths that cross "
		   "the dimensions in increasing order",
};
