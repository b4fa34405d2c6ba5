/* SPDX-License-Identifier: BSD-2-Clause */
/* mhc_ignore.c - the equalize-ignore file of the min-hop engines (-i, port_prof_ignore_file):
 * which routes do not count in the per-port balance. Parsed with line numbers for its errors,
 * then matched against one fabric generation by binary search (no glib in plugins). The file
 * itself is read by guid_file.c; this file knows what a line means (a GUID and a port). */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine_glue.h"
#include "guid_file.h"
#include "mhc.h"

static int entry_cmp(const void *x, const void *y)
{
	const struct mhc_ignore_entry *a = x, *b = y;
	if (a->guid != b->guid)
		return a->guid < b->guid ? -1 : 1;
	return (int)a->port - (int)b->port;
}

void mhc_ignore_clear(struct mhc_ignore *ig)
{
	free(ig->v);
	ig->v = NULL;
	ig->n = ig->cap = 0;
	ig->bad_lines = 0;
}

/* One line of the file (comment cut, not blank): 0 taken, 1 bad with *why, or -ENOMEM. */
static int take_line(void *ctx, char *s, const char **why)
{
	struct mhc_ignore *ig = ctx;
	uint64_t g;
	if (guid_parse_hex(&s, &g, why) < 0)
		return 1;
	if (g == 0) {
		*why = "GUID 0";
		return 1;
	}
	while (isspace((unsigned char)*s))
		s++;
	unsigned long port = 0;
	if (*s) {
		char *end;
		if (!isdigit((unsigned char)*s)) {
			*why = "expected a port number after the GUID";
			return 1;
		}
		errno = 0;
		port = strtoul(s, &end, 10);
		if (errno || port == 0 || port > 254) {
			*why = "port number out of range 1-254";
			return 1;
		}
		s = end;
		while (isspace((unsigned char)*s))
			s++;
		if (*s) {
			*why = "junk after the port number";
			return 1;
		}
	}
	if (ig->n == ig->cap) {
		uint32_t na = ig->cap ? ig->cap * 2 : 16;
		struct mhc_ignore_entry *nv = realloc(ig->v, na * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		ig->v = nv;
		ig->cap = na;
	}
	ig->v[ig->n++] = (struct mhc_ignore_entry){ .guid = g, .port = (uint8_t)port };
	return 0;
}

int mhc_ignore_load(const struct ibsm_core *core, const char *path, int bad_level,
		       struct mhc_ignore *ig)
{
	mhc_ignore_clear(ig);
	struct guid_file_reader rd = { .bad_level = bad_level, .take = take_line, .ctx = ig };
	int rc = guid_file_read(core, "port_prof_ignore_file", path, &rd);
	ig->bad_lines = rd.bad_lines;
	if (rc < 0) {
		mhc_ignore_clear(ig);
		return rc;
	}
	if (ig->n)
		qsort(ig->v, ig->n, sizeof(*ig->v), entry_cmp);
	return 0;
}

static int ignore_has(const struct mhc_ignore *ig, uint64_t guid, uint8_t port)
{
	struct mhc_ignore_entry key = { .guid = guid, .port = port };
	return ig->n && bsearch(&key, ig->v, ig->n, sizeof(*ig->v), entry_cmp) != NULL;
}

uint32_t mhc_ignore_mark(const struct mhc_ignore *ig, const struct ibsm_fabric *f,
			    uint8_t *dest_ignored, uint8_t *exit_ignored)
{
	uint32_t matched = 0;
	if (!ig->n)
		return 0;
	for (uint32_t p = 0; p < f->n_ports; p++) {
		const struct ibsm_port *port = ibsm_port_at(f, p);
		const struct ibsm_node *node = ibsm_node_at(f, port->node);
		if (node->type == IBSM_SWITCH && port->num != 0) {
			if (ignore_has(ig, node->guid, port->num)) {
				exit_ignored[p] = 1;
				matched++;
			}
		} else if (port->num != 0 || node->type == IBSM_SWITCH) {
			/* an end port: a CA or router port, or switch port 0 */
			if (!port->guid || !ignore_has(ig, port->guid, 0))
				continue;
			dest_ignored[p] = 1;
			matched++;
		}
	}
	return matched;
}

int mhc_ignore_apply(struct engine_run *run, const struct ibsm_fabric *f)
{
	const struct ibsm_core *core = run->core;
	struct guid_file_stamp *stamp = &run->inst->stamp;
	const char *path = engine_config_path(core, "port_prof_ignore_file");
	run->ignore_matched = 0;
	if (!path)
		return 0;
	int seen = guid_file_stamp_same(stamp, path);
	struct mhc_ignore ig = { 0 };
	if (mhc_ignore_load(core, path, seen ? IBSM_LOG_VERBOSE : IBSM_LOG_ERROR, &ig) < 0)
		return 0; /* logged; route without it, as OpenSM does */
	guid_file_stamp_note(stamp, path);
	run->dest_ign = calloc(f->n_ports ? f->n_ports : 1, 1);
	run->exit_ign = calloc(f->n_ports ? f->n_ports : 1, 1);
	if (!run->dest_ign || !run->exit_ign) {
		mhc_ignore_clear(&ig);
		return engine_fail(run->out, -ENOMEM, "out of memory");
	}
	run->ignore_matched = mhc_ignore_mark(&ig, f, run->dest_ign, run->exit_ign);
	core->log(core, IBSM_LOG_VERBOSE,
		  "ignore file %s: %u entries, %u in this fabric, %u bad lines", path, ig.n,
		  run->ignore_matched, ig.bad_lines);
	mhc_ignore_clear(&ig);
	return 0;
}
