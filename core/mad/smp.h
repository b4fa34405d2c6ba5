/* SPDX-License-Identifier: BSD-2-Clause */
/* smp.h - building an SMP request in one place: method, attribute, modifier, the directed
 * route, and the completion with the caller's cookie (kind, id, sub-id packed one way for
 * every caller). The fabric layer adds the route to a node or port (fabric/dr.h). */
#ifndef IBSM_MAD_SMP_H
#define IBSM_MAD_SMP_H

#include <stddef.h>
#include <stdint.h>
#include "mad/transport.h"

/* A zeroed request: method (IB_MAD_METHOD_GET/_SET), attribute id and modifier, completion
 * done(ctx) with cookie. Directed route with 0 hops (our own port) until a route is set. */
void smp_req_init(struct smp_req *r, uint8_t method, uint16_t attr, uint32_t mod,
		  smp_done_fn done, void *ctx, uint64_t cookie);
/* The directed route: path[1..hops] are the exit ports (path[0] is ignored). */
void smp_req_route_dr(struct smp_req *r, uint8_t hops, const uint8_t *path);
/* Appends one hop to the directed route (exploring out of a port); -E2BIG when too long. */
int smp_req_route_append(struct smp_req *r, uint8_t port);

/* Cookie: kind (8 bits), id (32 bits), sub (16 bits), e.g. (PORTINFO, node, port number). */
static inline uint64_t smp_cookie(uint8_t kind, uint32_t id, uint16_t sub)
{
	return ((uint64_t)id << 24) | ((uint64_t)sub << 8) | kind;
}
static inline uint8_t smp_cookie_kind(uint64_t c) { return (uint8_t)c; }
static inline uint16_t smp_cookie_sub(uint64_t c) { return (uint16_t)(c >> 8); }
static inline uint32_t smp_cookie_id(uint64_t c) { return (uint32_t)(c >> 24); }

/* "Set attr 0x15 mod 3" / "Get ...": a short description for log lines. */
const char *smp_method_name(uint8_t method);
/* "errno 110" or "status 0x1c" for a completion status. */
void smp_status_text(int status, char *buf, size_t len);

#endif
