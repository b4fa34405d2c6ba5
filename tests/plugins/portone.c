/* SPDX-License-Identifier: BSD-2-Clause */
/* portone.c - test engine that sends every LID out of port 1, except those it delivers itself
 * (its own LID on port 0, an attached CA's on the CA's port), and exercises the core services
 * (log, config, switch_hops) plus instance and result lifetimes: lets the engine tests check
 * the run and the merge without depending on a real routing algorithm. Its tables are whole
 * only where port 1 leads toward every other switch (two switches joined by port 1); elsewhere
 * the core finds the holes and declines it. */
#include <stdlib.h>
#include <ibsm/routing.h>

struct portone {
	const struct ibsm_core *core;
};

static int portone_setup(const struct ibsm_core *core, void **inst)
{
	struct portone *p = calloc(1, sizeof(*p));
	if (!p)
		return -12;
	p->core = core;
	*inst = p;
	return 0;
}

static void portone_teardown(void *inst)
{
	free(inst);
}

static int portone_route(void *inst, const struct ibsm_fabric *f, const struct ibsm_scope *s,
			 struct ibsm_routes *out, void **result)
{
	struct portone *p = inst;
	const char *lmc = p->core->config(p->core, "lmc");
	const char *nothing = p->core->config(p->core, "no_such_option");
	unsigned hops01 = 0xFF;
	if (f->n_switches >= 2) {
		uint8_t *hops = malloc((size_t)f->n_switches * f->n_switches);
		if (!hops)
			return -12;
		if (p->core->switch_hops(p->core, f, s, hops) == 0)
			hops01 = hops[1];
		free(hops);
	}
	p->core->log(p->core, IBSM_LOG_INFO, "lmc=%s unknown=%s hops01=%u", lmc ? lmc : "NULL",
		     nothing ? nothing : "NULL", hops01);
	for (uint32_t i = 0; i < f->n_switches * out->stride; i++)
		out->lft[i] = 1;
	for (uint32_t lid = 1; lid <= f->max_lid && lid < out->stride; lid++) {
		uint32_t port = f->lid_port[lid];
		if (port == IBSM_NONE)
			continue;
		uint32_t sw = ibsm_port_switch(f, port);
		if (sw == IBSM_NONE)
			continue;
		const struct ibsm_port *p = ibsm_port_at(f, port);
		int own = ibsm_node_at(f, p->node)->type == IBSM_SWITCH;
		out->lft[(size_t)sw * out->stride + lid] = own ? 0 : ibsm_port_at(f, p->peer)->num;
	}
	*result = malloc(64);
	return 0;
}

static void portone_result_free(void *result)
{
	free(result);
}

__attribute__((visibility("default"))) const struct ibsm_engine ibsm_engine = {
	IBSM_ENGINE_INIT("portone"),
	.setup = portone_setup,
	.teardown = portone_teardown,
	.route = portone_route,
	.result_free = portone_result_free,
};
