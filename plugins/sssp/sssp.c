/* SPDX-License-Identifier: BSD-2-Clause */
/* sssp.c - the sssp and dfsssp routing engines (OpenSM's -R sssp and -R dfsssp), built from this
 * one folder as sssp.so and dfsssp.so (ALIASES; the Makefile names each build in
 * IBSM_PLUGIN_NAME). Both route every LID over shortest paths balanced over all destinations
 * (route.c). sssp stops there: one VL, and on a fabric with cycles (anything but a tree) its
 * routes can hold credit loops, as OpenSM's. dfsssp then gives every path a virtual layer
 * (layers.c) and answers:
 *  - path_sl(slid, dlid): the layer of the path from slid's switch to dlid; under -Q, a QoS
 *    level's SL h is kept as the block h of layers (SL = h x layers + layer) while the VLs
 *    hold it, else dropped as OpenSM's dfsssp drops it; with a single layer the SL asked for
 *    is returned unchanged (one acyclic layer stays acyclic on any SL2VL);
 *  - sl2vl: the identity (VL = SL) for the SLs it hands out, on every port.
 * It declines (the next engine routes) when the layers need more VLs than every switch link
 * has: the VLCap both ends share, max_op_vls and, under -Q, qos_swe_max_vls / qos_max_vls. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine_glue.h"
#include "sssp.h"

#ifndef IBSM_PLUGIN_NAME
#define IBSM_PLUGIN_NAME "sssp"
#endif
/* dfsssp.so or sssp.so: the two names differ in length, which a static initializer can test */
#define SSSP_IS_DF (sizeof(IBSM_PLUGIN_NAME) == sizeof("dfsssp"))
_Static_assert(sizeof(IBSM_PLUGIN_NAME) == sizeof("dfsssp") ||
	       sizeof(IBSM_PLUGIN_NAME) == sizeof("sssp"),
	       "plugins/sssp builds sssp.so and dfsssp.so only");

static void result_free(void *result)
{
	struct sssp_result *r = result;
	if (!r)
		return;
	free(r->lid_sw);
	free(r->layer);
	sssp_layers_free(&r->layers);
	free(r);
}

static const struct engine_run_spec sssp_run = {
	.name = IBSM_PLUGIN_NAME, .result_size = sizeof(struct sssp_result),
	.result_free = result_free,
};

/* Data VLs of an OperVLs / VLCap code (IBA 14.2.5.6: 1 VL0, 2 VL0-1, 3 VL0-3, 4 VL0-7,
 * 5 VL0-14). */
static unsigned vls_of_code(unsigned code)
{
	static const unsigned n[] = { 1, 1, 2, 4, 8, 15 };
	return code <= 5 ? n[code] : 15;
}

/* The data VLs every switch link can carry, and how that came about (for the messages). */
static uint32_t vls_available(const struct ibsm_core *core, const struct sssp_graph *g, int qos,
			      char *how, size_t len)
{
	unsigned code = g->vl_code;
	unsigned long op = ibsm_config_ulong(core, "max_op_vls", 5);
	if (op >= 1 && op < code)
		code = (unsigned)op;
	uint32_t n = vls_of_code(code);
	int w = snprintf(how, len, "links' VLCap %u VLs, max_op_vls %lu: %u VLs", vls_of_code(g->vl_code),
			 op, vls_of_code(op >= 1 && op <= 5 ? (unsigned)op : 5));
	if (qos) {
		const char *key = "qos_swe_max_vls";
		unsigned long q = ibsm_config_ulong(core, key, 0);
		if (!q) {
			key = "qos_max_vls";
			q = ibsm_config_ulong(core, key, 0);
		}
		if (q && q < n)
			n = (uint32_t)q;
		if (q && w > 0 && (size_t)w < len)
			snprintf(how + w, len - (size_t)w, ", %s %lu", key, q);
	}
	return n > SSSP_MAX_LAYERS ? SSSP_MAX_LAYERS : n;
}

/* The VLs of each layer: one, or with dfsssp_spread_vls the VLs left over shared out to the
 * layers with the most traffic per VL (OpenSM's dfsssp balancing, without its random pick). */
static void vl_blocks(struct sssp_result *r, int spread)
{
	uint32_t n = r->n_layers;
	for (uint32_t k = 0; k < n; k++)
		r->vl_count[k] = 1;
	for (uint32_t extra = spread ? r->vls - n : 0; extra; extra--) {
		uint32_t best = 0;
		for (uint32_t k = 1; k < n; k++)
			if ((double)r->layers.traffic[k] / r->vl_count[k] >
			    (double)r->layers.traffic[best] / r->vl_count[best])
				best = k;
		r->vl_count[best]++;
	}
	uint32_t base = 0;
	for (uint32_t k = 0; k < n; k++) {
		r->vl_base[k] = (uint8_t)base;
		base += r->vl_count[k];
	}
	/* the SLs mapped to their own VL: none when one VL carries everything */
	r->sls = base > 1 ? (r->qos ? r->vls : base) : 0;
}

static int keep_lid_switches(struct sssp_result *r, const struct ibsm_fabric *f)
{
	r->cols = f->max_lid + 1;
	r->lid_sw = malloc((size_t)r->cols * sizeof(*r->lid_sw));
	if (!r->lid_sw)
		return -ENOMEM;
	for (uint32_t lid = 0; lid < r->cols; lid++) {
		uint32_t p = f->lid_port ? f->lid_port[lid] : IBSM_NONE;
		r->lid_sw[lid] = p == IBSM_NONE || p >= f->n_ports ? IBSM_NONE : ibsm_port_switch(f, p);
	}
	return 0;
}

/* dfsssp's layers, the VLs they get; -E2BIG (why set) when they do not fit. */
static int assign_layers(const struct ibsm_core *core, const struct ibsm_fabric *f,
			 const struct sssp_graph *g, const uint8_t *hops,
			 const struct engine_dests *d, struct ibsm_routes *out,
			 struct sssp_result *r)
{
	char how[160];
	r->qos = ibsm_config_bool(core, "qos", 0);
	r->vls = vls_available(core, g, r->qos, how, sizeof(how));
	uint32_t needed = 0;
	int rc = sssp_layers_assign(core, f, g, hops, d, out->lft, out->stride, r->vls, &needed,
				    &r->layers);
	if (rc == -E2BIG) {
		engine_fail(out, rc, "%s%u VLs needed for routes free of credit loops, %u available "
			    "(%s); not routing with dfsssp", r->layers.passes ? "" : "more than ",
			    r->layers.passes ? needed : needed - 1, r->vls, how);
		core->log(core, IBSM_LOG_ERROR, "%s", out->why);
		return rc;
	}
	if (rc < 0)
		return engine_fail(out, rc, rc == -ECANCELED ? "cancelled" : rc == -EDEADLK ?
				   "internal error: a virtual layer holds a cycle" : "out of memory");
	r->n_layers = r->layers.n_layers;
	r->layer = r->layers.layer;
	r->layers.layer = NULL;
	int spread = !r->qos && ibsm_config_bool(core, "dfsssp_spread_vls", 0);
	if (r->qos && ibsm_config_bool(core, "dfsssp_spread_vls", 0))
		core->log(core, IBSM_LOG_INFO, "dfsssp_spread_vls is ignored under QoS: the VLs above "
			  "the layers carry the QoS levels' SLs");
	vl_blocks(r, spread);
	core->log(core, IBSM_LOG_INFO, "%u virtual layers (VLs) needed, %u available (%s); %u "
		  "assignment passes (the first needed %u layers)", r->n_layers, r->vls, how,
		  r->layers.passes, r->layers.first_pass);
	for (uint32_t k = 0; k < r->n_layers && r->n_layers > 1; k++)
		core->log(core, IBSM_LOG_VERBOSE, "layer %u: %llu paths (source switch, LID), %llu "
			  "CA-port routes, VLs %u-%u", k, (unsigned long long)r->layers.paths[k],
			  (unsigned long long)r->layers.traffic[k], r->vl_base[k],
			  r->vl_base[k] + r->vl_count[k] - 1);
	if (r->qos && r->n_layers > 1)
		core->log(core, IBSM_LOG_INFO, "QoS: a path of SL %s%u keeps it as SLs/VLs "
			  "SL x %u + layer; higher SLs are replaced by the layer", r->vls / r->n_layers > 1 ?
			  "0-" : "", r->vls / r->n_layers - 1, r->n_layers);
	return 0;
}

/* Rows of switches outside the scope go back to no route (route.c filled them for the
 * layers' walks). */
static void blank_rows(const struct ibsm_fabric *f, const struct ibsm_scope *sc,
		       struct ibsm_routes *out)
{
	for (uint32_t s = 0; s < f->n_switches; s++)
		if (!ibsm_bit(&sc->switches, s))
			memset(out->lft + (size_t)s * out->stride, IBSM_NO_PORT, out->stride);
}

static int route_scope(struct engine_run *run, const struct ibsm_fabric *f,
		       const struct ibsm_scope *sc, struct ibsm_routes *out, struct sssp_result *r)
{
	const struct ibsm_core *core = run->core;
	struct sssp_graph g;
	struct engine_dests d = { 0 };
	uint8_t *hops = NULL;
	uint32_t cn = 0, io = 0;
	int rc = sssp_graph_build(f, sc, &g);
	if (rc < 0)
		return engine_fail(out, rc, "out of memory");
	rc = engine_switch_hops(core, f, sc, out, &hops);
	if (rc == 0 && sssp_dests_order(core, f, sc, out->stride, &d, &cn, &io) < 0)
		rc = engine_fail(out, -ENOMEM, "out of memory");
	if (rc == 0 && (cn || io))
		core->log(core, IBSM_LOG_VERBOSE, "routing %u compute node and %u I/O node ports "
			  "first", cn, io);
	if (rc == 0) {
		double t0 = engine_now_seconds();
		rc = sssp_route(core, &g, hops, &d, out->lft, out->stride, &r->route);
		if (rc < 0)
			engine_fail(out, rc, rc == -ECANCELED ? "cancelled" : "out of memory");
		else
			core->log(core, IBSM_LOG_VERBOSE, "shortest paths of %u LIDs from %u switches "
				  "in %.3f s", r->route.lids, g.S, engine_now_seconds() - t0);
	}
	if (rc == 0 && r->df)
		rc = assign_layers(core, f, &g, hops, &d, out, r);
	if (rc == 0)
		blank_rows(f, sc, out);
	engine_dests_free(&d);
	free(hops);
	sssp_graph_free(&g);
	return rc;
}

static int sssp_route_engine(void *inst, const struct ibsm_fabric *f, const struct ibsm_scope *sc,
			     struct ibsm_routes *out, void **result)
{
	struct engine_run run;
	int rc = engine_run_begin(&run, &sssp_run, inst, f, sc, out, result);
	if (rc < 0)
		return rc;
	const struct ibsm_core *core = run.core;
	struct sssp_result *r = run.res;
	r->generation = f->generation;
	r->df = SSSP_IS_DF;
	rc = keep_lid_switches(r, f);
	if (rc < 0)
		return engine_run_end(&run, engine_fail(out, rc, "out of memory"));
	rc = route_scope(&run, f, sc, out, r);
	r->seconds = engine_run_seconds(&run);
	if (rc < 0)
		return engine_run_end(&run, rc);
	if (r->route.unreachable)
		core->log(core, IBSM_LOG_INFO, "%llu (switch, LID) pairs have no path in scope",
			  (unsigned long long)r->route.unreachable);
	core->log(core, IBSM_LOG_INFO, "%u LIDs on shortest paths balanced over all destinations "
		  "in %.3f s; switch-link load max %llu, max/mean %.2f%s", r->route.lids, r->seconds,
		  (unsigned long long)r->route.load_max,
		  r->route.load_mean > 0 ? (double)r->route.load_max / r->route.load_mean : 0.0,
		  r->df ? "" : "; one VL, no deadlock removal (sssp)");
	return engine_run_end(&run, 0);
}

static uint8_t sssp_path_sl(const void *result, uint8_t sl_hint, uint16_t slid, uint16_t dlid)
{
	const struct sssp_result *r = result;
	if (!r->df || !r->sls)
		return sl_hint;
	uint32_t row = slid < r->cols ? r->lid_sw[slid] : IBSM_NONE;
	uint32_t layer = 0;
	if (r->layer && row != IBSM_NONE && dlid < r->cols) {
		layer = r->layer[(size_t)row * r->cols + dlid];
		if (layer >= r->n_layers)
			layer = 0;
	}
	if (r->qos)
		return (uint8_t)((sl_hint + 1u) * r->n_layers <= r->vls ? sl_hint * r->n_layers + layer
								       : layer);
	uint32_t spread = r->vl_count[layer] > 1 && row != IBSM_NONE ?
			  (row + dlid) % r->vl_count[layer] : 0;
	return (uint8_t)(r->vl_base[layer] + spread);
}

static int sssp_sl2vl(const void *result, uint32_t in_port, uint32_t out_port, uint8_t vl[16])
{
	const struct sssp_result *r = result;
	(void)in_port;
	(void)out_port;
	if (!r->df || !r->sls)
		return -1;
	for (uint32_t sl = 0; sl < r->sls && sl < 15; sl++)
		vl[sl] = (uint8_t)sl;
	return 0;
}

#define DEST_ORDER_KEYS \
	{ "cn_guid_file", NULL, "Compute node port GUIDs: their LIDs are routed first" }, \
	{ "io_guid_file", NULL, "I/O node port GUIDs: their LIDs are routed after the compute " \
	  "nodes'" }

static const struct ibsm_config_key sssp_keys[] = {
	DEST_ORDER_KEYS,
	{ NULL, NULL, NULL },
};

static const struct ibsm_config_key dfsssp_keys[] = {
	DEST_ORDER_KEYS,
	{ "max_op_vls", NULL, "Max operational VLs (1: VL0, 2: VL0-1, 3: VL0-3, 4: VL0-7, "
	  "5: VL0-14): dfsssp declines when its layers need more" },
	{ "qos", "FALSE", "QoS (-Q): dfsssp keeps a QoS level's SL in blocks of VLs above its "
	  "layers" },
	{ "qos_max_vls", NULL, "Data VLs of every port under -Q: dfsssp's layers must fit" },
	{ "qos_swe_max_vls", NULL, "Data VLs of switch external ports under -Q: dfsssp's layers "
	  "must fit" },
	{ "dfsssp_spread_vls", "FALSE", "Spread each layer's paths over the VLs the layers leave "
	  "unused (OpenSM's dfsssp balancing; off: the fewest VLs, the rest free for QoS)" },
	{ NULL, NULL, NULL },
};

IBSM_ENGINE_EXPORT const struct ibsm_engine ibsm_engine = {
	IBSM_ENGINE_INIT(IBSM_PLUGIN_NAME),
	.caps = IBSM_CAP_LMC,
	.setup = engine_inst_setup,
	.teardown = engine_inst_teardown,
	.route = sssp_route_engine,
	.result_free = result_free,
	.path_sl = SSSP_IS_DF ? sssp_path_sl : engine_path_sl_hint,
	.sl2vl = SSSP_IS_DF ? sssp_sl2vl : NULL,
	.dump = engine_dump_nothing,
	.config_keys = SSSP_IS_DF ? dfsssp_keys : sssp_keys,
	.summary = SSSP_IS_DF ?
		   "Deadlock-free SSSP (OpenSM's dfsssp): balanced shortest paths on virtual layers "
		   "(path SLs, SL2VL) free of credit loops on any topology" :
		   "SSSP (OpenSM's sssp): shortest paths balanced over all destinations, one VL (not "
		   "free of credit loops off trees)",
};
