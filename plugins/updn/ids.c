/* SPDX-License-Identifier: BSD-2-Clause */
/* ids.c - OpenSM 3.3.23's ids_guid_file for updn: "SWITCH-GUID ID" lines giving switches the
 * IDs that settle the direction of a link between two switches of one rank (the lower ID is
 * up, where the node GUID decides without the file). A bad line fails the route (FILE:LINE
 * logged), so the chain's fallback or the routes in place stay. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "updn.h"

struct ids_ctx {
	const struct updn_graph *g;
	uint64_t *id;
	uint32_t matched;
};

static int take_id_line(void *ctx, char *s, const char **why)
{
	struct ids_ctx *c = ctx;
	uint64_t guid;
	if (guid_parse_hex(&s, &guid, why) < 0)
		return 1;
	while (isspace((unsigned char)*s))
		s++;
	if (!*s) {
		*why = "no ID after the GUID";
		return 1;
	}
	char *e;
	errno = 0;
	unsigned long long v = strtoull(s, &e, 0);
	if (e == s || errno || (*e && !isspace((unsigned char)*e)) || *s == '-') {
		*why = "the ID is not a number";
		return 1;
	}
	for (uint32_t i = 0; i < c->g->S; i++)
		if (c->g->guid[i] == guid) {
			c->id[i] = v;
			c->matched++;
		}
	return 0; /* a GUID that names no switch here is passed over, as OpenSM does */
}

int updn_ids_load(const struct ibsm_core *core, const char *path, const struct updn_graph *g,
		  uint64_t *id, uint32_t *matched, char *why, size_t why_len)
{
	struct ids_ctx c = { .g = g, .id = id };
	struct guid_file_reader rd = { .bad_level = IBSM_LOG_ERROR, .take = take_id_line, .ctx = &c,
				       .skipped = "; routing refused" };
	int rc = guid_file_read(core, "ids_guid_file", path, &rd);
	*matched = c.matched;
	if (rc < 0) {
		snprintf(why, why_len, "%s", rd.why[0] ? rd.why : "out of memory");
		return rc;
	}
	if (rd.bad_lines) {
		snprintf(why, why_len, "ids_guid_file %s: %u bad lines (logged with their line "
			 "numbers): not routed", path, rd.bad_lines);
		return -EINVAL;
	}
	return 0;
}
