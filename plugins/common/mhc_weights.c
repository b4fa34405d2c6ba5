/* SPDX-License-Identifier: BSD-2-Clause */
/* mhc_weights.c - OpenSM 3.3.23's hop_weights_file for the min-hop fill (minhop, dor): a weight
 * per switch output port ("SWITCH-GUID PORT WEIGHT" a line, 1-255, 1 when not listed) added up
 * along a path in place of the hop count, as OpenSM's lid matrices add them; the fill then picks
 * among the ports of least weighted distance. A bad line fails the route (FILE:LINE logged). */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine_glue.h"
#include "guid_file.h"
#include "mhc.h"
#include "switch_links.h"

struct weights_ctx {
	const struct ibsm_fabric *f;
	uint8_t *w;        /* [n_ports] */
	uint32_t matched;
};

static int take_weight_line(void *ctx, char *s, const char **why)
{
	struct weights_ctx *c = ctx;
	uint64_t guid;
	if (guid_parse_hex(&s, &guid, why) < 0)
		return 1;
	char *e;
	unsigned long port = strtoul(s, &e, 0), w;
	if (e == s || !isspace((unsigned char)*e) || port == 0 || port > 254) {
		*why = "expected a port number (1-254) after the GUID";
		return 1;
	}
	s = e;
	w = strtoul(s, &e, 0);
	while (isspace((unsigned char)*e))
		e++;
	if (e == s || *e || w == 0 || w > 255) {
		*why = "expected a weight (1-255) after the port";
		return 1;
	}
	for (uint32_t n = 0; n < c->f->n_switches; n++) {
		const struct ibsm_node *node = ibsm_switch_node(c->f, n);
		if (node->guid == guid && port <= node->nports) {
			c->w[node->port0 + port] = (uint8_t)w;
			c->matched++;
		}
	}
	return 0; /* a switch not in the fabric: passed over, as OpenSM does */
}

int mhc_weights_load(const struct ibsm_core *core, const struct ibsm_fabric *f, const char *path,
		     uint8_t **weights, struct ibsm_routes *out)
{
	*weights = malloc((size_t)f->n_ports + 1);
	if (!*weights)
		return engine_fail(out, -ENOMEM, "out of memory");
	memset(*weights, 1, (size_t)f->n_ports + 1);
	struct weights_ctx c = { .f = f, .w = *weights };
	struct guid_file_reader rd = { .bad_level = IBSM_LOG_ERROR, .take = take_weight_line, .ctx = &c,
				       .skipped = "; routing refused" };
	int rc = guid_file_read(core, "hop_weights_file", path, &rd);
	if (rc < 0 || rd.bad_lines) {
		free(*weights);
		*weights = NULL;
		if (rc == -ENOMEM)
			return engine_fail(out, rc, "out of memory");
		return engine_fail(out, rc < 0 ? rc : -EINVAL, "hop_weights_file %s: %s", path,
				   rc < 0 ? rd.why : "bad lines (logged with their line numbers): not routed");
	}
	core->log(core, IBSM_LOG_VERBOSE, "hop_weights_file %s: %u switch ports weighted", path,
		  c.matched);
	return 0;
}

int mhc_weighted_hops(const struct ibsm_fabric *f, const struct ibsm_scope *sc,
		      const uint8_t *weights, uint8_t **hops_out)
{
	uint32_t S = f->n_switches;
	uint8_t *hops = malloc((size_t)S * S + 1);
	uint16_t *d = malloc(((size_t)S + 1) * sizeof(*d));
	if (!hops || !d) {
		free(hops);
		free(d);
		return -ENOMEM;
	}
	memset(hops, 0xFF, (size_t)S * S);
	for (uint32_t t = 0; t < S; t++) {
		/* Bellman-Ford toward t: d[s] = least sum of output-port weights from s to t */
		for (uint32_t s = 0; s < S; s++)
			d[s] = 0xFFFF;
		d[t] = 0;
		for (int changed = 1; changed;) {
			changed = 0;
			for (uint32_t s = 0; s < S; s++) {
				const struct ibsm_switch *sw = ibsm_switch_at(f, s);
				uint32_t p0 = ibsm_switch_node(f, s)->port0;
				for (uint32_t a = sw->adj0; a < sw->adj0 + sw->nadj && a < f->n_adj; a++) {
					const struct ibsm_adj *adj = ibsm_adj_at(f, a);
					if (adj->peer_sw >= S || d[adj->peer_sw] == 0xFFFF ||
					    !engine_switch_link(f, sc, s, adj))
						continue;
					unsigned v = d[adj->peer_sw] + weights[p0 + adj->port];
					if (v > 0xFE)
						v = 0xFE; /* hop counts are 8 bits, as OpenSM's */
					if (v < d[s]) {
						d[s] = (uint16_t)v;
						changed = 1;
					}
				}
			}
		}
		for (uint32_t s = 0; s < S; s++)
			hops[(size_t)s * S + t] = d[s] == 0xFFFF ? 0xFF : (uint8_t)d[s];
	}
	free(d);
	*hops_out = hops;
	return 0;
}

int mhc_inputs_load(const struct ibsm_core *core, const struct ibsm_fabric *f,
		    struct mhc_order_opts *order, struct mhc_fill *opt, struct ibsm_routes *out)
{
	opt->order = mhc_order_options(core, order) ? order : NULL;
	opt->weights = NULL;
	const char *wpath = engine_config_path(core, "hop_weights_file");
	uint8_t *weights = NULL;
	int rc = wpath ? mhc_weights_load(core, f, wpath, &weights, out) : 0;
	opt->weights = weights;
	return rc < 0 ? rc : 0;
}
