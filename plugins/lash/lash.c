/* SPDX-License-Identifier: BSD-2-Clause */
/* lash.c - the LASH routing engine (OpenSM's -R lash; Skeie, Lysne, Theiss, "Layered Shortest
 * Path (LASH) Routing in Irregular System Area Networks", IPDPS 2002): shortest paths between
 * all switches, made free of credit loops by putting each pair of switches on a virtual layer
 * (layers.c) whose channel dependencies stay acyclic. A route's SL is its layer plus
 * lash_start_vl and the SL2VL tables map SL n to VL n, so every layer runs on its own VL. An
 * end port's LIDs all follow one path (OpenSM's lash routes LMC's LIDs alike).
 *
 * Where OpenSM's lash takes the first shortest-path tree from each switch, this one builds a
 * shortest-path tree per destination port and balances it: switches decide farthest first and
 * take the least loaded of their shortest-path links, weighted by the CA ports routed through
 * them. With do_mesh_analysis the shortest-path links are further restricted to the first
 * dimension still to travel (mesh.c), so a mesh or torus needs few layers. The engine declines
 * (the chain's next engine routes) when more layers are needed than the switch links have VLs
 * from lash_start_vl on. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine_dests.h"
#include "engine_glue.h"
#include "lash.h"

#define BALANCE 2         /* pairs per layer may differ by this after balancing */
#define BY_ID_MAX_SWITCHES 512 /* above, the pairs are assigned in one order only */
#define CANCEL_EVERY 64

static void result_free(void *result)
{
	struct lash_result *r = result;
	if (!r)
		return;
	free(r->lid_sw);
	free(r->layer);
	free(r);
}

/* Data VLs of an OperVLs code (PortInfo): 1, 2, 4, 8, 15. */
static unsigned vls_of_code(unsigned code)
{
	static const unsigned n[] = { 1, 1, 2, 4, 8, 15 };
	return code < 6 ? n[code] : 15;
}

/* The data VLs every switch link has: their OperVLs, and under -Q at most the configured
 * qos_swe_max_vls (else qos_max_vls), as the core fits SL2VL tables to them. */
static unsigned usable_vls(const struct ibsm_core *core, const struct lash_graph *g)
{
	unsigned vls = vls_of_code(g->vls_code);
	if (ibsm_config_bool(core, "qos", 0)) {
		unsigned long cap = ibsm_config_ulong(core, "qos_swe_max_vls", 0);
		if (!cap)
			cap = ibsm_config_ulong(core, "qos_max_vls", 0);
		if (cap >= 1 && cap < vls)
			vls = (unsigned)cap;
	}
	return vls;
}

struct trees {
	const struct lash_graph *g;
	const uint8_t *cls;       /* mesh dimensions per link, or NULL */
	uint8_t *nh;              /* [nd * S] */
	uint32_t *dsw;            /* [nd] */
	uint32_t *dist, *order;   /* [S] BFS from the destination switch */
	uint32_t *sub;            /* [S] CA sources routed through s */
	uint32_t *load_ca, *load_sw; /* [L] */
	uint32_t nord;
	int coherent;             /* the first shortest-path link in port order, unbalanced */
};

static void bfs(struct trees *t, uint32_t root)
{
	const struct lash_graph *g = t->g;
	for (uint32_t i = 0; i < t->nord; i++)
		t->dist[t->order[i]] = UINT32_MAX;
	uint32_t head = 0, n = 0;
	t->dist[root] = 0;
	t->order[n++] = root;
	while (head < n) {
		uint32_t x = t->order[head++];
		for (uint32_t l = g->off[x]; l < g->off[x + 1]; l++)
			if (t->dist[g->peer[l]] == UINT32_MAX) {
				t->dist[g->peer[l]] = t->dist[x] + 1;
				t->order[n++] = g->peer[l];
			}
	}
	t->nord = n;
}

/* The tree toward destination d on switch order[0]: farthest switches first, each takes the
 * least loaded link one hop closer (with the mesh dimensions: only those of the first
 * dimension still to travel), adding the CA sources behind it (times weight, the CA ports
 * the tree serves) to that link's load. */
static void tree(struct trees *t, uint32_t d, int is_ca, uint32_t weight)
{
	const struct lash_graph *g = t->g;
	uint32_t S = g->S, *load = is_ca ? t->load_ca : t->load_sw;
	uint8_t *nh = t->nh + (size_t)d * S;
	for (uint32_t i = 0; i < t->nord; i++)
		t->sub[t->order[i]] = g->ca_src[t->order[i]] * weight;
	for (uint32_t i = t->nord; i-- > 1;) {
		uint32_t s = t->order[i], best = UINT32_MAX, want = t->dist[s] - 1;
		unsigned dim = 0xFFFF;
		if (t->cls)
			for (uint32_t l = g->off[s]; l < g->off[s + 1]; l++)
				if (t->dist[g->peer[l]] == want && t->cls[l] < dim)
					dim = t->cls[l];
		for (uint32_t l = g->off[s]; l < g->off[s + 1]; l++) {
			if (t->dist[g->peer[l]] != want || (t->cls && t->cls[l] != dim))
				continue;
			if (best == UINT32_MAX || (!t->coherent && load[l] < load[best]))
				best = l;
		}
		nh[s] = (uint8_t)(best - g->off[s]);
		load[best] += t->sub[s];
		t->sub[g->peer[best]] += t->sub[s];
	}
}

/* The ways to build the trees, tried in the order of the balance they give. */
enum tree_mode {
	TREES_PER_PORT,    /* one balanced tree per destination port: the best spread */
	TREES_PER_SWITCH,  /* one balanced tree per destination switch: one path per pair */
	TREES_FIRST_LINK,  /* per switch, the first shortest-path link by port (OpenSM's lash):
			    * the fewest distinct turns, so the fewest layers */
	TREE_MODES
};

static const char *const mode_name[TREE_MODES] = {
	"a balanced tree per destination port", "a balanced tree per destination switch",
	"the first shortest-path link by port (as OpenSM's lash)",
};

/* Every destination's tree in the given mode; *max_load: CA-port pairs (base LIDs) on the
 * busiest switch link. */
static int make_trees(const struct ibsm_core *core, struct trees *t,
		      const struct engine_dests *dests, enum tree_mode mode, uint64_t *max_load)
{
	const struct lash_graph *g = t->g;
	uint32_t S = g->S;
	memset(t->load_ca, 0, (size_t)g->L * sizeof(*t->load_ca));
	memset(t->load_sw, 0, (size_t)g->L * sizeof(*t->load_sw));
	memset(t->nh, LASH_NO_LINK, (size_t)(dests->n ? dests->n : 1) * S);
	t->coherent = mode == TREES_FIRST_LINK;
	for (uint32_t s = 0; s < S; s++)
		t->dist[s] = UINT32_MAX;
	t->nord = 0;
	for (uint32_t s = 0; s < S; s++) {
		uint32_t d0 = dests->doff[s], d1 = dests->doff[s + 1];
		if (d0 == d1)
			continue;
		if (s % CANCEL_EVERY == 0 && core->cancelled && core->cancelled(core))
			return -ECANCELED;
		bfs(t, s);
		uint32_t cas = 0;
		for (uint32_t d = d0; d < d1; d++)
			cas += dests->v[d].is_ca;
		for (uint32_t d = d0; d < d1; d++) {
			t->dsw[d] = s;
			if (mode == TREES_PER_PORT)
				tree(t, d, dests->v[d].is_ca, 1);
			else if (d == d0)
				tree(t, d, cas > 0, cas ? cas : 1);
			else
				memcpy(t->nh + (size_t)d * S, t->nh + (size_t)d0 * S, S);
		}
	}
	*max_load = 0;
	for (uint32_t l = 0; l < g->L; l++)
		if (t->load_ca[l] > *max_load)
			*max_load = t->load_ca[l];
	return 0;
}

/* The LFT rows of the scope's switches. */
static uint64_t write_rows(const struct ibsm_fabric *f, const struct ibsm_scope *sc,
			   const struct lash_graph *g, const struct trees *t,
			   const struct engine_dests *dests, struct ibsm_routes *out)
{
	uint64_t routed = 0;
	uint32_t S = g->S;
	(void)f;
	for (uint32_t s = 0; s < S; s++) {
		if (!ibsm_bit(&sc->switches, s))
			continue;
		uint8_t *row = out->lft + (size_t)s * out->stride;
		for (uint32_t d = 0; d < dests->n; d++) {
			const struct engine_dest *e = &dests->v[d];
			uint8_t port;
			if (t->dsw[d] == s) {
				port = e->exit;
			} else {
				uint8_t li = t->nh[(size_t)d * S + s];
				if (li == LASH_NO_LINK)
					continue;
				port = g->port[g->off[s] + li];
			}
			for (unsigned k = e->first; k < e->end; k++, routed++)
				row[e->base + k] = port;
		}
	}
	return routed;
}

static int keep_result(struct lash_result *res, const struct ibsm_fabric *f,
		       const struct lash_graph *g, uint8_t *layer)
{
	res->generation = f->generation;
	res->S = g->S;
	res->max_lid = f->max_lid;
	res->layer = layer;
	res->lid_sw = malloc(((size_t)f->max_lid + 1) * sizeof(*res->lid_sw));
	if (!res->lid_sw)
		return -ENOMEM;
	for (uint32_t lid = 0; lid <= f->max_lid; lid++) {
		uint32_t p = f->lid_port && lid ? f->lid_port[lid] : IBSM_NONE;
		res->lid_sw[lid] = p == IBSM_NONE || p >= f->n_ports ? IBSM_NONE :
				   ibsm_port_switch(f, p);
	}
	return 0;
}

static void trees_free(struct trees *t)
{
	free(t->nh);
	free(t->dsw);
	free(t->dist);
	free(t->order);
	free(t->sub);
	free(t->load_ca);
	free(t->load_sw);
}

static int trees_alloc(struct trees *t, const struct lash_graph *g, uint32_t nd)
{
	size_t S = g->S ? g->S : 1, L = g->L ? g->L : 1;
	t->g = g;
	t->nh = malloc((nd ? nd : 1) * S);
	t->dsw = calloc(nd ? nd : 1, sizeof(*t->dsw));
	t->dist = malloc(S * sizeof(*t->dist));
	t->order = malloc(S * sizeof(*t->order));
	t->sub = malloc(S * sizeof(*t->sub));
	t->load_ca = calloc(L, sizeof(*t->load_ca));
	t->load_sw = calloc(L, sizeof(*t->load_sw));
	if (!t->nh || !t->dsw || !t->dist || !t->order || !t->sub || !t->load_ca ||
	    !t->load_sw)
		return -ENOMEM;
	memset(t->nh, LASH_NO_LINK, (nd ? nd : 1) * S);
	return 0;
}

/* do_mesh_analysis: the dimension of every link, or NULL (logged) when there is no mesh. */
static uint8_t *mesh_analysis(const struct ibsm_core *core, const struct lash_graph *g,
			      struct lash_result *res)
{
	if (!ibsm_config_bool(core, "do_mesh_analysis", 0))
		return NULL;
	uint8_t *cls = malloc(g->L ? g->L : 1);
	const char *why = "out of memory";
	unsigned dims = cls ? lash_mesh_classes(g, cls, &why) : 0;
	if (!dims) {
		core->log(core, IBSM_LOG_INFO, "mesh analysis: no mesh or torus (%s); shortest "
			  "paths as without it", why);
		free(cls);
		return NULL;
	}
	res->mesh_dims = dims;
	core->log(core, IBSM_LOG_INFO, "mesh analysis: %u dimensions (a ring of 4 counts as "
		  "two); routes go dimension by dimension", dims);
	return cls;
}

static void log_layers(const struct ibsm_core *core, const struct lash_result *res,
		       const struct lash_layer_stats *st)
{
	char per[LASH_MAX_LAYERS * 24] = "";
	size_t used = 0;
	for (unsigned v = 0; v < st->layers && used < sizeof(per); v++) {
		int w = snprintf(per + used, sizeof(per) - used, "%s%llu", v ? ", " : "",
				 (unsigned long long)st->units[v]);
		if (w > 0)
			used += (size_t)w;
	}
	core->log(core, IBSM_LOG_INFO,
		  "routes by %s: busiest switch link %llu CA routes; %u layer%s (SL = VL %u..%u of "
		  "%u data VLs) for %llu switch pairs, per layer: %s (%llu moved by the "
		  "balancing); %llu LFT entries", mode_name[res->tree_mode],
		  (unsigned long long)res->load_max, st->layers, st->layers == 1 ? "" : "s",
		  res->start_vl, res->start_vl + (st->layers ? st->layers - 1 : 0), res->vls,
		  (unsigned long long)st->units_total, per, (unsigned long long)st->moved,
		  (unsigned long long)res->routed);
}

static const struct engine_run_spec lash_run = {
	.name = "lash", .result_size = sizeof(struct lash_result), .result_free = result_free,
};

/* Trees, layers, rows. Returns 0 or < 0 with out->why set; *layer handed to the result. */
static int route_all(const struct ibsm_core *core, const struct ibsm_fabric *f,
		     const struct ibsm_scope *sc, const struct lash_graph *g,
		     struct ibsm_routes *out, struct lash_result *res, uint8_t **layer_out)
{
	struct engine_dests dests = { 0 };
	struct trees t = { 0 };
	uint8_t *cls = NULL, *layer = NULL, *layer2 = NULL;
	size_t pairs = g->S ? (size_t)g->S * g->S : 1;
	int rc = engine_dests_build(f, sc, out->stride, NULL, ENGINE_DESTS_BY_SWITCH, &dests);
	if (rc == 0)
		rc = trees_alloc(&t, g, dests.n);
	if (rc == 0 && (!(layer = malloc(pairs)) || !(layer2 = malloc(pairs))))
		rc = -ENOMEM;
	if (rc < 0) {
		rc = engine_fail(out, rc, "out of memory");
		goto out;
	}
	t.cls = cls = mesh_analysis(core, g, res);
	/* the modes by the balance of their trees; the best whose layers fit the VLs wins */
	uint64_t load[TREE_MODES];
	enum tree_mode order[TREE_MODES];
	for (int m = 0; m < TREE_MODES; m++) {
		if ((rc = make_trees(core, &t, &dests, (enum tree_mode)m, &load[m])) < 0) {
			rc = engine_fail(out, rc, "cancelled");
			goto out;
		}
		int k = m;
		for (; k > 0 && load[order[k - 1]] > load[m]; k--)
			order[k] = order[k - 1];
		order[k] = (enum tree_mode)m;
	}
	struct lash_routes r = { .nd = dests.n, .nh = t.nh, .dsw = t.dsw, .dfirst = dests.doff };
	struct lash_layer_stats st;
	unsigned needed = 0, avail = (unsigned)(res->vls - res->start_vl);
	for (int i = 0; i < TREE_MODES; i++) {
		uint64_t mx;
		if ((rc = make_trees(core, &t, &dests, order[i], &mx)) < 0)
			break;
		rc = lash_layers(core, g, &r, avail, BALANCE, 0, layer, &st, &needed);
		res->tree_mode = order[i];
		res->load_max = mx;
		/* OpenSM's pair order (by switch id) needs fewer layers on some fabrics (meshes):
		 * tried too, up to one layer fewer than the first found (not on large fabrics,
		 * where one assignment takes long enough) */
		unsigned cap = g->S > BY_ID_MAX_SWITCHES ? 0 : rc == 0 ? st.layers - 1 :
			       rc == -E2BIG ? avail : 0;
		struct lash_layer_stats st2;
		if (cap >= 1) {
			int rc2 = lash_layers(core, g, &r, cap, BALANCE, 1, layer2, &st2, &needed);
			if (rc2 == 0) {
				uint8_t *tmp = layer;
				layer = layer2;
				layer2 = tmp;
				st = st2;
				rc = 0;
			} else if (rc2 != -E2BIG) {
				rc = rc2;
			}
		}
		if (rc != -E2BIG)
			break;
		core->log(core, IBSM_LOG_INFO, "routes by %s (busiest switch link %llu CA "
			  "routes) need more than %u layers%s", mode_name[order[i]],
			  (unsigned long long)mx, avail, i + 1 < TREE_MODES ? "; trying the next "
			  "best balanced" : "");
	}
	if (rc == -E2BIG) {
		rc = engine_fail(out, -E2BIG, "more than %u layers needed: the switch links have "
				 "%u data VLs, %u of them from lash_start_vl %u on%s", avail,
				 res->vls, avail, res->start_vl,
				 cls ? "" : " (do_mesh_analysis may need fewer on a mesh or torus)");
		goto out;
	}
	if (rc < 0) {
		rc = engine_fail(out, rc, rc == -ECANCELED ? "cancelled" : "out of memory");
		goto out;
	}
	res->layers = st.layers;
	memcpy(res->units, st.units, sizeof(res->units));
	res->moved = st.moved;
	res->routed = write_rows(f, sc, g, &t, &dests, out);
	*layer_out = layer;
	layer = NULL;
	log_layers(core, res, &st);
out:
	free(cls);
	free(layer);
	free(layer2);
	trees_free(&t);
	engine_dests_free(&dests);
	return rc;
}

static int lash_route(void *inst, const struct ibsm_fabric *f, const struct ibsm_scope *sc,
		      struct ibsm_routes *out, void **result)
{
	struct engine_run run;
	int rc = engine_run_begin(&run, &lash_run, inst, f, sc, out, result);
	if (rc < 0)
		return rc;
	const struct ibsm_core *core = run.core;
	struct lash_result *res = run.res;
	struct lash_graph g;
	uint8_t *layer = NULL;
	unsigned long start_vl = ibsm_config_ulong(core, "lash_start_vl", 0);
	if ((rc = lash_graph_build(core, f, sc, &g)) < 0)
		return engine_run_end(&run, engine_fail(out, rc, "out of memory"));
	res->vls = (uint8_t)usable_vls(core, &g);
	if (start_vl >= res->vls) {
		rc = engine_fail(out, -EINVAL, "lash_start_vl %lu is not below the %u data VLs of "
				 "the switch links", start_vl, res->vls);
	} else {
		res->start_vl = (uint8_t)start_vl;
		core->log(core, IBSM_LOG_VERBOSE, "%u switches, %u links, %u data VLs, layers from "
			  "VL %u", g.S, g.L, res->vls, res->start_vl);
		rc = route_all(core, f, sc, &g, out, res, &layer);
	}
	if (rc == 0 && keep_result(res, f, &g, layer) < 0) {
		res->layer = NULL;
		free(layer);
		rc = engine_fail(out, -ENOMEM, "out of memory");
	}
	res->seconds = engine_run_seconds(&run);
	if (rc < 0)
		core->log(core, IBSM_LOG_ERROR, "%s", out->why);
	lash_graph_free(&g);
	return engine_run_end(&run, rc);
}

/* The SL of a route: its switch pair's layer from lash_start_vl on; lash_start_vl between
 * ports of one switch (OpenSM's lash does the same). LIDs lash did not route keep the hint. */
static uint8_t lash_path_sl(const void *result, uint8_t sl_hint, uint16_t slid, uint16_t dlid)
{
	const struct lash_result *r = result;
	if (slid > r->max_lid || dlid > r->max_lid)
		return sl_hint;
	uint32_t a = r->lid_sw[slid], b = r->lid_sw[dlid];
	if (a == IBSM_NONE || b == IBSM_NONE || a >= r->S || b >= r->S)
		return sl_hint;
	if (a == b)
		return r->start_vl;
	uint8_t v = r->layer[(size_t)a * r->S + b];
	return v == 0xFF ? sl_hint : (uint8_t)(r->start_vl + v);
}

/* SL n on VL n on every port (SL 15 as configured): each layer on its own VL. */
static int lash_sl2vl(const void *result, uint32_t in_port, uint32_t out_port, uint8_t vl[16])
{
	(void)result;
	(void)in_port;
	(void)out_port;
	for (unsigned sl = 0; sl < 15; sl++)
		vl[sl] = (uint8_t)sl;
	return 0;
}

static const struct ibsm_config_key lash_keys[] = {
	{ "lash_start_vl", "0", "First VL (and SL) of lash's layers" },
	{ "do_mesh_analysis", "FALSE", "Find the dimensions of a mesh or torus and route "
	  "dimension by dimension, which needs fewer layers there" },
	{ "max_op_vls", NULL, "Data VLs the links get (PortInfo OperVLs code, 1-5): bounds the "
	  "layers" },
	{ "qos", "FALSE", "QoS (-Q): the qos_*max_vls caps below bound the layers" },
	{ "qos_max_vls", NULL, "Every port's data VLs under -Q: bounds the layers" },
	{ "qos_swe_max_vls", NULL, "Switch external ports' data VLs under -Q: bounds the layers" },
	{ NULL, NULL, NULL },
};

IBSM_ENGINE_EXPORT const struct ibsm_engine ibsm_engine = {
	IBSM_ENGINE_INIT("lash"),
	.setup = engine_inst_setup,
	.teardown = engine_inst_teardown,
	.route = lash_route,
	.result_free = result_free,
	.path_sl = lash_path_sl,
	.sl2vl = lash_sl2vl,
	.dump = engine_dump_nothing,
	.config_keys = lash_keys,
	.summary = "LASH: shortest paths made free of credit loops by virtual layers (one SL and "
		   "VL per layer, from lash_start_vl); declines when the VLs do not suffice",
};
