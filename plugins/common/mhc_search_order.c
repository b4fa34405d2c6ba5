/* SPDX-License-Identifier: BSD-2-Clause */
/* mhc_search_order.c - OpenSM 3.3.23's port_search_ordering_file as its general (non-DOR)
 * routing takes it: per switch ("SWITCH-GUID PORT PORT ..." a line), the order its ports are
 * searched for the least loaded min-hop port instead of 1 to N; the ports not listed follow
 * in port order. A line that is not a GUID and port numbers fails the route (FILE:LINE). */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine_glue.h"
#include "guid_file.h"
#include "mhc.h"

struct order_ctx {
	const struct ibsm_fabric *f;
	uint8_t *rank;      /* [n_ports] */
	uint8_t *listed;    /* [n_switches]: a line already gave this switch's order */
	uint32_t matched;
};

static int take_order_line(void *ctx, char *s, const char **why)
{
	struct order_ctx *c = ctx;
	uint64_t guid;
	if (guid_parse_hex(&s, &guid, why) < 0)
		return 1;
	uint8_t ports[256];
	unsigned n = 0;
	while (*s) {
		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		char *e;
		unsigned long p = strtoul(s, &e, 0);
		if (e == s || (*e && !isspace((unsigned char)*e)) || p == 0 || p > 254 || n == 255) {
			*why = "expected port numbers (1-254) after the switch GUID";
			return 1;
		}
		ports[n++] = (uint8_t)p;
		s = e;
	}
	for (uint32_t sw = 0; sw < c->f->n_switches; sw++) {
		const struct ibsm_node *node = ibsm_switch_node(c->f, sw);
		if (node->guid != guid || c->listed[sw] || n == 0)
			continue;
		uint8_t seen[256] = { 0 };
		int ok = 1;
		for (unsigned i = 0; i < n; i++) {
			if (ports[i] > node->nports || seen[ports[i]])
				ok = 0; /* OpenSM passes over such a line */
			seen[ports[i]] = 1;
		}
		if (!ok)
			continue;
		unsigned k = 1;
		for (unsigned i = 0; i < n; i++)
			c->rank[node->port0 + ports[i]] = (uint8_t)k++;
		for (unsigned p = 1; p <= node->nports; p++)
			if (!seen[p])
				c->rank[node->port0 + p] = (uint8_t)k++;
		c->listed[sw] = 1;
		c->matched++;
	}
	return 0;
}

int mhc_search_order_load(const struct ibsm_core *core, const struct ibsm_fabric *f,
			  const char *path, uint8_t **rank, struct ibsm_routes *out)
{
	*rank = malloc((size_t)f->n_ports + 1);
	uint8_t *listed = calloc((size_t)f->n_switches + 1, 1);
	if (!*rank || !listed) {
		free(*rank);
		free(listed);
		*rank = NULL;
		return engine_fail(out, -ENOMEM, "out of memory");
	}
	for (uint32_t p = 0; p < f->n_ports; p++)
		(*rank)[p] = ibsm_port_at(f, p)->num;
	struct order_ctx c = { .f = f, .rank = *rank, .listed = listed };
	struct guid_file_reader rd = { .bad_level = IBSM_LOG_ERROR, .take = take_order_line, .ctx = &c,
				       .skipped = "; routing refused" };
	int rc = guid_file_read(core, "port_search_ordering_file", path, &rd);
	free(listed);
	if (rc < 0 || rd.bad_lines) {
		free(*rank);
		*rank = NULL;
		if (rc == -ENOMEM)
			return engine_fail(out, rc, "out of memory");
		return engine_fail(out, rc < 0 ? rc : -EINVAL, "port_search_ordering_file %s: %s", path,
				   rc < 0 ? rd.why : "bad lines (logged with their line numbers): not routed");
	}
	core->log(core, IBSM_LOG_VERBOSE, "port_search_ordering_file %s: %u switches search their "
		  "ports in its order", path, c.matched);
	return 0;
}
