/* SPDX-License-Identifier: BSD-2-Clause */
/* prefix_routes.h - OpenSM 3.3.23's prefix_routes_file: which router port a PathRecord to an
 * off-subnet DGID goes to, per 64-bit GID prefix ("PREFIX GUID" a line, either may be '*'). */
#ifndef IBSM_SA_PREFIX_ROUTES_H
#define IBSM_SA_PREFIX_ROUTES_H

#include <glib.h>
#include <stdint.h>

struct prefix_route {
	uint64_t prefix, guid;  /* in host order; 0: '*' (any prefix; the first router) */
};

/* Parses the file's text (path for messages) into a new array of struct prefix_route, in file
 * order. Blank lines and what follows '#' are skipped; a bad line is logged as PATH:LINE
 * (PFX-0001) and skipped. *bad: how many were. */
GArray *prefix_routes_parse(const char *path, const char *text, unsigned *bad);

/* Reads and parses the file the prefix_routes_file key names (explicit_path: set by the
 * configuration, else OpenSM's default path): NULL when no file is there (OpenSM 3.3.23 then
 * refuses every off-subnet path; ibsm routes it to the first router, doc/opensm-dropin.md;
 * PFX-0004 when the file was named); a file that cannot be read is an ERROR (PFX-0002) and
 * gives no route at all (an empty array). */
GArray *prefix_routes_load(const char *path, int explicit_path);

/* The port GUID of the router for prefix, by the first line that matches it and names a router
 * present(ctx, guid) accepts (guid 0: the first router, present(ctx, 0) answers it); 0 none. */
uint64_t prefix_routes_pick(const GArray *routes, uint64_t prefix,
			    uint64_t (*present)(void *ctx, uint64_t guid), void *ctx);

#endif
