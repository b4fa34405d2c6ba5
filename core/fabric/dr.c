/* SPDX-License-Identifier: BSD-2-Clause */
/* dr.c - SMP requests routed to a node or port of a generation. */
#include <errno.h>
#include "fabric/dr.h"

void fabric_smp_to_node(struct smp_req *r, const struct fabric *f, uint32_t node, uint8_t method,
			uint16_t attr, uint32_t mod, smp_done_fn done, void *ctx, uint64_t cookie)
{
	smp_req_init(r, method, attr, mod, done, ctx, cookie);
	smp_req_route_dr(r, f->nx[node].dr_hops, f->nx[node].dr_path);
}

int fabric_smp_to_port(struct smp_req *r, const struct fabric *f, uint32_t port, uint8_t method,
		       uint16_t attr, uint32_t mod, smp_done_fn done, void *ctx, uint64_t cookie)
{
	uint8_t hops, path[MODEL_DR_MAX];
	smp_req_init(r, method, attr, mod, done, ctx, cookie);
	if (fabric_port_dr_path(f, port, &hops, path) < 0)
		return -ENOENT;
	smp_req_route_dr(r, hops, path);
	return 0;
}
