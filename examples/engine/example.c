/* SPDX-License-Identifier: BSD-2-Clause */
/* example.c - a complete ibsm routing engine written to be copied: every switch sends every
 * destination LID out of a shortest-path port, spreading the LIDs over equal-cost ports.
 *
 * Build it with the Makefile beside it (pkg-config ibsm-plugin is all it needs), drop
 * example.so into the plugin directory and run `ibsm -R example`. What an engine must keep to
 * is in README.md and at the top of <ibsm/routing.h>; the comments below point at each rule
 * where the code keeps it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>

/* ---- configuration ------------------------------------------------------------------------
 * Every key the engine reads is declared here: `ibsm --create-config` lists it with its
 * default and help line, and the core accepts it in the configuration file (a key nobody
 * declares is an error there). Prefix the keys with the engine's name. */
static const struct ibsm_config_key example_keys[] = {
	{ "example_spread", "TRUE",
	  "example engine: spread LIDs over every shortest-path port (FALSE: always the lowest one)" },
	{ NULL, NULL, NULL },
};

/* ---- the instance: one per chain step, from setup() to teardown() ------------------------- */
struct example {
	const struct ibsm_core *core; /* valid until teardown() */
	int spread;                   /* example_spread */
};

/* ---- the result: what the engine keeps of one route() -------------------------------------
 * It is immutable once route() returns and may outlive the fabric it was computed on, so it
 * owns all its data and holds no pointer into the fabric or the scope. This engine answers no
 * queries (path_sl, sl2vl, ... are NULL: the core then uses its defaults), so a few numbers
 * for the log are all it keeps. */
struct example_result {
	uint32_t generation;  /* fabric generation routed */
	uint64_t entries;     /* LFT entries written */
	uint64_t unreachable; /* (switch, LID) pairs with no path in scope */
};

/* One destination of the scope: the LIDs to route and the switch that delivers them. */
struct example_dest {
	uint32_t lid;        /* base LID */
	unsigned first, end; /* LID offsets [first, end) to route (path bits, LMC) */
	uint32_t sw;         /* switch id the port hangs off */
	uint8_t exit;        /* port of that switch that delivers it: 0 for the switch's own LID */
};

/* One usable switch-to-switch link out of the row switch. */
struct example_link {
	uint32_t peer_sw;
	uint8_t port;
};

/* setup(): main thread, once per chain step (again after a configuration reload). */
static int example_setup(const struct ibsm_core *core, void **inst)
{
	struct example *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->core = core;
	e->spread = ibsm_config_bool(core, "example_spread", 1);
	core->log(core, IBSM_LOG_INFO, "example_spread %s: %s", e->spread ? "TRUE" : "FALSE",
		  e->spread ? "LIDs spread over shortest-path ports" : "lowest shortest-path port");
	*inst = e;
	return 0;
}

/* teardown(): main thread, after every result of this instance was freed. */
static void example_teardown(void *inst)
{
	free(inst);
}

static int decline(struct ibsm_routes *out, int rc, const char *why)
{
	/* The core logs "routing engine example declined: <why>" and tries the next engine. */
	snprintf(out->why, sizeof(out->why), "%s", why);
	return rc;
}

/* The destinations the scope asks for, each with its switch and the port that delivers it.
 * Ports whose own link is outside the scope, or that hang off no switch, are left out. */
static struct example_dest *scope_dests(const struct ibsm_fabric *f, const struct ibsm_scope *sc,
					uint32_t stride, uint32_t *n)
{
	struct example_dest *d = calloc(f->n_ports ? f->n_ports : 1, sizeof(*d));
	*n = 0;
	if (!d)
		return NULL;
	for (uint32_t p = 0; p < f->n_ports; p++) {
		unsigned first, end;
		/* the LID offsets the scope routes to this port: none if it is not a destination */
		if (!ibsm_scope_lid_offsets(f, sc, stride, p, &first, &end))
			continue;
		const struct ibsm_port *port = ibsm_port_at(f, p);
		uint32_t sw = ibsm_port_switch(f, p);
		if (sw == IBSM_NONE)
			continue; /* a CA port with no switch behind it */
		uint8_t exit = 0; /* a switch's own LID: port 0 */
		if (ibsm_node_at(f, port->node)->type != IBSM_SWITCH) { /* a CA or router port */
			if (!ibsm_bit(&sc->ports, p) || !ibsm_bit(&sc->ports, port->peer))
				continue; /* its link is not ours to use */
			exit = ibsm_port_at(f, port->peer)->num;
		}
		d[*n] = (struct example_dest){ .lid = port->lid, .first = first, .end = end,
					       .sw = sw, .exit = exit };
		(*n)++;
	}
	return d;
}

/* The links of switch s the scope lets us use, into links[]; returns how many. */
static uint32_t usable_links(const struct ibsm_fabric *f, const struct ibsm_scope *sc, uint32_t s,
			     struct example_link *links)
{
	const struct ibsm_switch *sw = ibsm_switch_at(f, s);
	uint32_t n = 0;
	for (uint32_t a = sw->adj0; a < sw->adj0 + sw->nadj; a++) {
		const struct ibsm_adj *adj = ibsm_adj_at(f, a);
		if (adj->peer_sw == s || !ibsm_scope_link(f, sc, s, adj))
			continue;
		links[n++] = (struct example_link){ .peer_sw = adj->peer_sw, .port = adj->port };
	}
	return n;
}

/* Is port a a better way out than port b? The one with fewer LIDs so far when spreading,
 * then the lower port number. */
static int prefer(const struct example *e, const uint32_t *load, uint8_t a, uint8_t b)
{
	if (e->spread && load[a] != load[b])
		return load[a] < load[b];
	return a < b;
}

/* Fills the LFT row of switch s. hops is the all-pairs switch hop matrix. A neighbour one hop
 * closer to the destination's switch is on a shortest path; among those, the port with the
 * fewest LIDs so far wins (or the lowest port without spreading). */
static void route_row(const struct example *e, const struct ibsm_fabric *f, uint32_t s,
		      const uint8_t *hops, const struct example_dest *dests, uint32_t ndests,
		      const struct example_link *links, uint32_t nlinks, uint8_t *row,
		      struct example_result *res)
{
	uint32_t S = f->n_switches;
	uint32_t load[256] = { 0 }; /* LIDs sent out of each port of s so far */
	for (uint32_t i = 0; i < ndests; i++) {
		const struct example_dest *d = &dests[i];
		uint8_t h = hops[(size_t)s * S + d->sw];
		for (unsigned k = d->first; k < d->end; k++) {
			uint8_t best = IBSM_NO_PORT;
			if (d->sw == s) {
				best = d->exit;
			} else if (h != 0xFF) {
				for (uint32_t j = 0; j < nlinks; j++) {
					const struct example_link *l = &links[j];
					if (hops[(size_t)l->peer_sw * S + d->sw] + 1 != h)
						continue; /* not one hop closer */
					if (best == IBSM_NO_PORT || prefer(e, load, l->port, best))
						best = l->port;
				}
			}
			if (best == IBSM_NO_PORT) {
				res->unreachable++; /* leave it "no route"; the core merges nothing */
				continue;
			}
			row[d->lid + k] = best;
			load[best]++;
			res->entries++;
		}
	}
}

/* route(): the core's routing thread. f and sc are valid only during this call. */
static int example_route(void *inst, const struct ibsm_fabric *f, const struct ibsm_scope *sc,
			 struct ibsm_routes *out, void **result)
{
	struct example *e = inst;
	const struct ibsm_core *core = e->core;
	uint32_t S = f->n_switches, ndests = 0, max_nadj = 0;
	int rc = 0;

	*result = NULL;
	if (f->max_lid && out->stride < f->max_lid + 1)
		return decline(out, -EINVAL, "LFT rows are shorter than the highest LID");
	for (uint32_t s = 0; s < S; s++)
		if (ibsm_switch_at(f, s)->nadj > max_nadj)
			max_nadj = ibsm_switch_at(f, s)->nadj;

	struct example_result *res = calloc(1, sizeof(*res));
	uint8_t *hops = malloc(S ? (size_t)S * S : 1);
	struct example_link *links = malloc((max_nadj ? max_nadj : 1) * sizeof(*links));
	struct example_dest *dests = scope_dests(f, sc, out->stride, &ndests);
	if (!res || !hops || !links || !dests) {
		rc = decline(out, -ENOMEM, "out of memory");
		goto done;
	}
	res->generation = f->generation;
	/* Shortest distances between switches over the links the scope allows. */
	rc = core->switch_hops(core, f, sc, hops);
	if (rc < 0) {
		char why[128];
		snprintf(why, sizeof(why), "switch hop matrix failed: %s", strerror(-rc));
		decline(out, rc, why);
		goto done;
	}
	for (uint32_t s = 0; s < S; s++) {
		/* A newer sweep or SIGTERM: stop soon, leave out->lft alone, say so. */
		if (core->cancelled(core)) {
			rc = decline(out, -ECANCELED, "cancelled");
			goto done;
		}
		if (!ibsm_bit(&sc->switches, s))
			continue; /* not ours to write: the core would not merge it anyway */
		uint32_t nlinks = usable_links(f, sc, s, links);
		route_row(e, f, s, hops, dests, ndests, links, nlinks, out->lft + (size_t)s * out->stride,
			  res);
	}
	if (res->unreachable)
		core->log(core, IBSM_LOG_INFO, "%llu (switch, LID) pairs have no path in scope",
			  (unsigned long long)res->unreachable);
	core->log(core, IBSM_LOG_VERBOSE, "generation %u: %llu LFT entries to %u end ports",
		  res->generation, (unsigned long long)res->entries, ndests);
	*result = res;
	res = NULL; /* the core owns it now and gives it back through result_free() */
done:
	free(res);
	free(hops);
	free(links);
	free(dests);
	return rc;
}

/* result_free(): any thread, once, after the last query on the result. */
static void example_result_free(void *result)
{
	free(result);
}

/* The one exported symbol. IBSM_ENGINE_INIT fills the ABI version and size this engine was
 * built with; IBSM_ENGINE_EXPORT keeps it visible under -fvisibility=hidden. */
IBSM_ENGINE_EXPORT const struct ibsm_engine ibsm_engine = {
	IBSM_ENGINE_INIT("example"),
	.caps = IBSM_CAP_LMC, /* routes every LID offset, so 2^LMC paths can differ */
	.setup = example_setup,
	.teardown = example_teardown,
	.route = example_route,
	.result_free = example_result_free,
	.config_keys = example_keys,
	.summary = "shortest paths, LIDs spread over equal-cost ports (the SDK's example engine)",
};
