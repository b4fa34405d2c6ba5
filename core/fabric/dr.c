/* SPDX-License-Identifier: BSD-2-Clause */
/* dr.c - SMP requests routed to a node or port of a generation, each carrying the M_Key of
 * the management port it reaches (a switch's port 0, the CA port it enters). */
#include <errno.h>
#include "fabric/dr.h"

uint64_t fabric_node_mkey(const struct fabric *f, uint32_t node)
{
	const struct ibsm_node *n = &f->nodes[node];
	uint8_t num = n->type == IBSM_SWITCH ? 0 : f->nx[node].local_port;
	return num <= n->nports ? f->px[n->port0 + num].mkey : 0;
}

void fabric_smp_to_node(struct smp_req *r, const struct fabric *f, uint32_t node, uint8_t method,
			uint16_t attr, uint32_t mod, smp_done_fn done, void *ctx, uint64_t cookie)
{
	smp_req_init(r, method, attr, mod, done, ctx, cookie);
	smp_req_route_dr(r, f->nx[node].dr_hops, f->nx[node].dr_path);
	r->mkey = fabric_node_mkey(f, node);
}

int fabric_smp_to_port(struct smp_req *r, const struct fabric *f, uint32_t port, uint8_t method,
		       uint16_t attr, uint32_t mod, smp_done_fn done, void *ctx, uint64_t cookie)
{
	uint8_t hops, path[MODEL_DR_MAX];
	smp_req_init(r, method, attr, mod, done, ctx, cookie);
	if (fabric_port_dr_path(f, port, &hops, path) < 0)
		return -ENOENT;
	smp_req_route_dr(r, hops, path);
	const struct ibsm_port *p = &f->ports[port];
	r->mkey = f->nodes[p->node].type == IBSM_SWITCH ? f->px[f->nodes[p->node].port0].mkey :
			f->px[port].mkey;
	return 0;
}
