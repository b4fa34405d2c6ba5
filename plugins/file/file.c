/* SPDX-License-Identifier: BSD-2-Clause */
/* file.c - the file routing engine (OpenSM's -R file, osm_ucast_file.c): the switches get the
 * LFTs of lfts_file (-U, an opensm-lfts.dump), and the hop counts of lid_matrix_dump_file (-M,
 * an opensm-lid-matrix.dump) serve where that file has no table. As in OpenSM, topology
 * changes are ignored (NVIDIA's SM manual, "File Routing"): a switch's table is what the file
 * says even when the fabric changed since it was written; tables of switches the fabric no
 * longer has are skipped; a LID is moved to its port's LIDs now only when the entry names the
 * port GUID and that port has other LIDs (OpenSM's remap). Where OpenSM leaves a switch the file
 * has no table for without routes, this engine routes it min-hop on the LID matrix (the file's
 * hop counts, else the fabric's); without lfts_file every switch is routed so (OpenSM: its
 * default routing on the loaded LID matrix). Declines (the chain's next engine routes) when a
 * file cannot be read, has a line it cannot take (named file:line), or lfts_file names no
 * switch of this fabric. Both files go through the core's reader. Multicast is not affected. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine_dests.h"
#include "engine_glue.h"
#include "file.h"

#define LOG_UNKNOWN_MAX 8

struct gsw {
	uint64_t guid;
	uint32_t id;      /* switch id, or port id in the port index */
};

struct hoprow {
	uint32_t s, t;    /* from switch s toward switch t */
	uint32_t at;      /* hops[at .. at + n) by port 0, 1, ... */
	uint16_t n;
};

struct ctx {
	const struct ibsm_core *core;
	const struct ibsm_fabric *f;
	const struct ibsm_scope *sc;
	struct ibsm_routes *out;
	struct file_result *res;
	const char *lfts_path, *hops_path;
	int all_dests;            /* the scope routes every LID (no chain step's part) */
	struct gsw *sw, *port;    /* switches by node GUID; end ports by port GUID */
	uint32_t nsw, nport;
	uint8_t *covered;         /* [S] lfts_file gave this row */
	uint32_t cur;             /* switch of the table being read, or IBSM_NONE */
	/* hop rows of lid_matrix_dump_file */
	struct hoprow *rows;
	uint32_t nrows, caprows, hcur;
	uint8_t *hopbuf;
	size_t hoplen, hopcap;
	uint8_t *hops;            /* [S * S] the fabric's switch hops (for the fill) */
};

static int gsw_cmp(const void *a, const void *b)
{
	const struct gsw *x = a, *y = b;
	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static uint32_t find(const struct gsw *v, uint32_t n, uint64_t guid)
{
	struct gsw key = { .guid = guid, .id = 0 };
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (gsw_cmp(&v[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].guid == guid ? v[lo].id : IBSM_NONE;
}

/* Switches by node GUID, end ports (CA ports, switch port 0) by port GUID. */
static int index_fabric(struct ctx *c)
{
	const struct ibsm_fabric *f = c->f;
	c->sw = malloc((f->n_switches ? f->n_switches : 1) * sizeof(*c->sw));
	c->port = malloc((f->n_ports ? f->n_ports : 1) * sizeof(*c->port));
	c->covered = calloc(f->n_switches ? f->n_switches : 1, 1);
	if (!c->sw || !c->port || !c->covered)
		return -ENOMEM;
	for (uint32_t s = 0; s < f->n_switches; s++)
		c->sw[c->nsw++] = (struct gsw){ .guid = ibsm_switch_node(f, s)->guid, .id = s };
	for (uint32_t p = 0; p < f->n_ports; p++) {
		const struct ibsm_port *port = ibsm_port_at(f, p);
		if (port->lid && (port->flags & IBSM_PORT_PRESENT))
			c->port[c->nport++] = (struct gsw){ .guid = port->guid, .id = p };
	}
	qsort(c->sw, c->nsw, sizeof(*c->sw), gsw_cmp);
	qsort(c->port, c->nport, sizeof(*c->port), gsw_cmp);
	return 0;
}

/* ---- lfts_file ---- */

static int on_switch(void *ctx, uint64_t guid, unsigned line)
{
	struct ctx *c = ctx;
	uint32_t s = find(c->sw, c->nsw, guid);
	c->cur = IBSM_NONE;
	if (s == IBSM_NONE) {
		if (c->res->unknown_switches++ < LOG_UNKNOWN_MAX)
			c->core->log(c->core, IBSM_LOG_VERBOSE, "%s:%u: switch 0x%016llx is not in "
				     "this fabric: its table is skipped", c->lfts_path, line,
				     (unsigned long long)guid);
		return 0;
	}
	if (!ibsm_bit(&c->sc->switches, s))
		return 0;
	if (!c->covered[s]) {
		c->covered[s] = 1;
		c->res->file_switches++;
	}
	/* a new table replaces whatever an earlier one of the same switch said (as OpenSM) */
	uint8_t *row = c->out->lft + (size_t)s * c->out->stride;
	if (c->all_dests)
		memset(row, IBSM_NO_PORT, c->out->stride);
	c->cur = s;
	return 0;
}

static int on_entry(void *ctx, uint32_t lid, unsigned port, uint64_t port_guid, unsigned line)
{
	struct ctx *c = ctx;
	(void)line;
	if (c->cur == IBSM_NONE)
		return 0;
	const struct ibsm_fabric *f = c->f;
	uint32_t p = port_guid ? find(c->port, c->nport, port_guid) : IBSM_NONE;
	if (p != IBSM_NONE) { /* the LIDs the port has now (OpenSM's remap_lid) */
		const struct ibsm_port *ep = ibsm_port_at(f, p);
		uint32_t n = ep->lmc < 8 ? 1u << ep->lmc : 1;
		if (lid < ep->lid || lid >= ep->lid + n) {
			lid = ep->lid + (lid & (n - 1));
			c->res->remapped++;
		}
	}
	if (lid == 0 || lid >= c->out->stride) {
		c->res->beyond++;
		return 0;
	}
	if (port > ibsm_switch_node(f, c->cur)->nports) {
		c->res->bad_port++;
		return 0;
	}
	if (!c->all_dests && !ibsm_scope_routes_lid(f, c->sc, lid))
		return 0;
	c->out->lft[(size_t)c->cur * c->out->stride + lid] = (uint8_t)port;
	c->res->entries++;
	return 0;
}

/* ---- lid_matrix_dump_file ---- */

static int on_hop_switch(void *ctx, uint64_t guid, unsigned line)
{
	struct ctx *c = ctx;
	(void)line;
	c->hcur = find(c->sw, c->nsw, guid);
	return 0;
}

static int on_hops(void *ctx, uint32_t lid, const uint8_t *hops, unsigned n, uint64_t port_guid,
		   unsigned line)
{
	struct ctx *c = ctx;
	(void)line;
	if (c->hcur == IBSM_NONE)
		return 0;
	/* the destination switch: by the entry's port GUID (a switch's is its node GUID), else
	 * by whose the LID is now */
	uint32_t t = port_guid ? find(c->sw, c->nsw, port_guid) : IBSM_NONE;
	if (t == IBSM_NONE && !port_guid && lid <= c->f->max_lid && c->f->lid_port &&
	    c->f->lid_port[lid] != IBSM_NONE) {
		const struct ibsm_port *p = ibsm_port_at(c->f, c->f->lid_port[lid]);
		if (p->num == 0 && ibsm_node_at(c->f, p->node)->type == IBSM_SWITCH)
			t = ibsm_node_at(c->f, p->node)->sw;
	}
	if (t == IBSM_NONE)
		return 0;
	if (c->nrows == c->caprows) {
		uint32_t cap = c->caprows ? c->caprows * 2 : 256;
		struct hoprow *v = realloc(c->rows, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		c->rows = v;
		c->caprows = cap;
	}
	if (c->hoplen + n > c->hopcap) {
		size_t cap = c->hopcap ? c->hopcap * 2 : 4096;
		while (cap < c->hoplen + n)
			cap *= 2;
		uint8_t *v = realloc(c->hopbuf, cap);
		if (!v)
			return -ENOMEM;
		c->hopbuf = v;
		c->hopcap = cap;
	}
	memcpy(c->hopbuf + c->hoplen, hops, n);
	c->rows[c->nrows++] = (struct hoprow){ .s = c->hcur, .t = t, .at = (uint32_t)c->hoplen,
					       .n = (uint16_t)n };
	c->hoplen += n;
	c->res->hop_rows++;
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct hoprow *x = a, *y = b;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->at < y->at ? 1 : x->at > y->at ? -1 : 0; /* the later line first */
}

static const struct hoprow *hop_row(const struct ctx *c, uint32_t s, uint32_t t)
{
	uint32_t lo = 0, hi = c->nrows;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		const struct hoprow *r = &c->rows[mid];
		if (r->s < s || (r->s == s && r->t < t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->nrows && c->rows[lo].s == s && c->rows[lo].t == t ? &c->rows[lo] : NULL;
}

/* Reads one of the two files through the core's reader and parses it. 0 or < 0 with
 * out->why set. */
static int read_parse(struct ctx *c, const char *key, const char *path, int lfts)
{
	char *text = NULL;
	size_t len = 0;
	int rc = ibsm_read_file(c->core, key, path, &text, &len, c->out->why,
				sizeof(c->out->why));
	if (rc < 0)
		return rc;
	if (lfts) {
		struct lft_reader rd = { .sw = on_switch, .entry = on_entry, .ctx = c };
		rc = file_parse_lfts(text, len, path, &rd, c->out->why, sizeof(c->out->why));
	} else {
		struct hops_reader rd = { .sw = on_hop_switch, .hops = on_hops, .ctx = c };
		c->hcur = IBSM_NONE;
		rc = file_parse_hops(text, len, path, &rd, c->out->why, sizeof(c->out->why));
	}
	free(text);
	if (rc == -ENOMEM)
		return engine_fail(c->out, rc, "out of memory reading %s %s", key, path);
	if (rc < 0) {
		/* why names path:line; say which key */
		char tmp[sizeof(c->out->why)];
		snprintf(tmp, sizeof(tmp), "%s", c->out->why);
		return engine_fail(c->out, rc, "%s %s", key, tmp);
	}
	return 0;
}

/* ---- the min-hop fill ---- */

/* Hops from switch s through its port p toward switch t: the LID matrix file's row when it
 * has one, else 1 + the fabric's distance from the switch behind p. 0xFF: no way. */
static unsigned port_hops(const struct ctx *c, uint32_t s, unsigned p, uint32_t t,
			  const struct hoprow *row, const uint32_t *peer_sw)
{
	if (row)
		return p < row->n ? c->hopbuf[row->at + p] : 0xFF;
	uint32_t x = peer_sw[p];
	if (x == IBSM_NONE)
		return 0xFF;
	unsigned h = c->hops[(size_t)x * c->f->n_switches + t];
	(void)s;
	return h == 0xFF ? 0xFF : h + 1;
}

/* Routes row s min-hop: each LID of the scope out of a port of least hops, the port with the
 * fewest LIDs so far among equals (then the lowest). */
static void fill_row(struct ctx *c, uint32_t s, const struct engine_dests *d, uint32_t *used)
{
	const struct ibsm_fabric *f = c->f;
	const struct ibsm_node *n = ibsm_switch_node(f, s);
	uint32_t peer_sw[256];
	uint8_t *row = c->out->lft + (size_t)s * c->out->stride;
	for (unsigned p = 0; p < 256; p++)
		peer_sw[p] = IBSM_NONE;
	const struct ibsm_switch *sw = ibsm_switch_at(f, s);
	for (uint32_t a = sw->adj0; a < sw->adj0 + sw->nadj && a < f->n_adj; a++) {
		const struct ibsm_adj *adj = ibsm_adj_at(f, a);
		if (adj->port && adj->port <= n->nports && ibsm_scope_link(f, c->sc, s, adj))
			peer_sw[adj->port] = adj->peer_sw;
	}
	memset(used, 0, 256 * sizeof(*used));
	for (uint32_t i = 0; i < d->n; i++) {
		const struct engine_dest *e = &d->v[i];
		uint8_t port = IBSM_NO_PORT;
		if (e->sw == s) {
			port = e->exit;
		} else {
			const struct hoprow *r = hop_row(c, s, e->sw);
			unsigned best = 0xFF;
			for (unsigned p = 1; p <= n->nports; p++) {
				if (peer_sw[p] == IBSM_NONE)
					continue; /* a way must lead to a switch in scope now */
				unsigned h = port_hops(c, s, p, e->sw, r, peer_sw);
				if (h == 0xFF || h > best || (h == best && used[p] >= used[port]))
					continue;
				best = h;
				port = (uint8_t)p;
			}
		}
		if (port == IBSM_NO_PORT)
			continue;
		for (unsigned k = e->first; k < e->end; k++) {
			row[e->base + k] = port;
			c->res->filled++;
		}
		used[port]++;
	}
}

static int fill(struct ctx *c, int all)
{
	const struct ibsm_fabric *f = c->f;
	struct engine_dests d = { 0 };
	uint32_t used[256];
	int rc = engine_switch_hops(c->core, f, c->sc, c->out, &c->hops);
	if (rc < 0)
		return rc;
	if (engine_dests_build(f, c->sc, c->out->stride, NULL, ENGINE_DESTS_OPENSM, &d) < 0)
		return engine_fail(c->out, -ENOMEM, "out of memory");
	if (c->nrows)
		qsort(c->rows, c->nrows, sizeof(*c->rows), row_cmp);
	for (uint32_t s = 0; s < f->n_switches; s++) {
		if (!ibsm_bit(&c->sc->switches, s) || (!all && c->covered[s]))
			continue;
		fill_row(c, s, &d, used);
		c->res->filled_switches++;
	}
	engine_dests_free(&d);
	return 0;
}

/* ---- the engine ---- */

static void ctx_free(struct ctx *c)
{
	free(c->sw);
	free(c->port);
	free(c->covered);
	free(c->rows);
	free(c->hopbuf);
	free(c->hops);
}

static void log_result(const struct ctx *c)
{
	const struct file_result *r = c->res;
	const struct ibsm_core *core = c->core;
	if (c->lfts_path)
		core->log(core, IBSM_LOG_INFO,
			  "lfts_file %s: %u switch tables taken, %u of switches not in this fabric "
			  "skipped; %llu entries (%llu LIDs moved to their port's LIDs now, %llu for "
			  "ports the switch lacks and %llu above the LFT skipped); topology changes "
			  "since the file was written are not followed", c->lfts_path,
			  r->file_switches, r->unknown_switches, (unsigned long long)r->entries,
			  (unsigned long long)r->remapped, (unsigned long long)r->bad_port,
			  (unsigned long long)r->beyond);
	if (r->filled_switches)
		core->log(core, IBSM_LOG_INFO,
			  "%u switch%s %s routed min-hop on %s%s (%llu entries)", r->filled_switches,
			  r->filled_switches == 1 ? "" : "es",
			  c->lfts_path ? "without a table in lfts_file" : "(no lfts_file)",
			  c->hops_path ? "the LID matrix of " : "the fabric's hop counts",
			  c->hops_path ? c->hops_path : "", (unsigned long long)r->filled);
}

static const struct engine_run_spec file_run = {
	.name = "file", .result_size = sizeof(struct file_result), .result_free = free,
};

static int file_route(void *inst, const struct ibsm_fabric *f, const struct ibsm_scope *sc,
		      struct ibsm_routes *out, void **result)
{
	struct engine_run run;
	int rc = engine_run_begin(&run, &file_run, inst, f, sc, out, result);
	if (rc < 0)
		return rc;
	struct ctx c = { .core = run.core, .f = f, .sc = sc, .out = out, .res = run.res,
			 .cur = IBSM_NONE, .hcur = IBSM_NONE };
	c.res->generation = f->generation;
	c.lfts_path = engine_config_path(c.core, "lfts_file");
	c.hops_path = engine_config_path(c.core, "lid_matrix_dump_file");
	c.all_dests = sc->dests.w == NULL && sc->path_bit_count == 0;
	rc = index_fabric(&c);
	if (rc < 0)
		rc = engine_fail(out, rc, "out of memory");
	if (rc == 0 && c.hops_path)
		rc = read_parse(&c, "lid_matrix_dump_file", c.hops_path, 0);
	if (rc == 0 && c.lfts_path) {
		rc = read_parse(&c, "lfts_file", c.lfts_path, 1);
		if (rc == 0 && !c.res->file_switches)
			rc = engine_fail(out, -ENOENT, "lfts_file %s has no table of a switch of "
					 "this fabric%s (%u tables of other switches)", c.lfts_path,
					 ibsm_bit(&sc->switches, 0) ? "" : " part",
					 c.res->unknown_switches);
	}
	if (rc == 0)
		rc = fill(&c, c.lfts_path == NULL);
	c.res->seconds = engine_run_seconds(&run);
	if (rc == 0)
		log_result(&c);
	else
		c.core->log(c.core, IBSM_LOG_ERROR, "%s", out->why);
	ctx_free(&c);
	return engine_run_end(&run, rc);
}

static const struct ibsm_config_key file_keys[] = {
	{ "lfts_file", NULL, "The LFTs to program (-U; an opensm-lfts.dump): taken as they are, "
	  "topology changes are not followed" },
	{ "lid_matrix_dump_file", NULL, "Hop counts (-M; an opensm-lid-matrix.dump) for the "
	  "min-hop routes of switches lfts_file has no table for" },
	{ NULL, NULL, NULL },
};

IBSM_ENGINE_EXPORT const struct ibsm_engine ibsm_engine = {
	IBSM_ENGINE_INIT("file"),
	.caps = IBSM_CAP_AS_LOADED,
	.setup = engine_inst_setup,
	.teardown = engine_inst_teardown,
	.route = file_route,
	.result_free = free,
	.path_sl = engine_path_sl_hint,
	.dump = engine_dump_nothing,
	.config_keys = file_keys,
	.summary = "File: the LFTs of an opensm-lfts.dump (lfts_file, -U), the rest min-hop on an "
		   "opensm-lid-matrix.dump (lid_matrix_dump_file, -M); ignores topology changes",
};
