/* SPDX-License-Identifier: BSD-2-Clause */
/* topo.c - finds the torus in the cabling, as torus-2QoS(8), TORUS TOPOLOGY DISCOVERY, describes:
 * the switches of one seed of torus-2QoS.conf get their coordinates (the seed's common switch at
 * -dateline in every dimension), and placement grows from them over 4-cycles of inter-switch
 * links. Three rules place a switch, each only when exactly one switch qualifies and its
 * placed neighbours all sit next to the position:
 *  - a face: positions a, a+u and a+v placed, a+u+v empty: the one common neighbour of the
 *    switches at a+u and a+v that is not placed yet;
 *  - a line: a and a+u placed, a+2u empty: a neighbour of a+u that shares no neighbour with a
 *    but a+u (radix >= 5 and meshes), the common neighbour of a and a+u (rings of 3), or the
 *    common neighbour of a+u and a-u (rings of 4: why they need both seed directions).
 * Missing switches leave empty positions; switches and links that cannot be placed are
 * warned about. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine_glue.h"
#include "topo.h"

#define MAX_NB 64 /* neighbour switches looked at per switch */

int torus2qos_usable(const struct ibsm_fabric *f, const struct ibsm_scope *sc, uint32_t s,
	       const struct ibsm_adj *a)
{
	return a->peer_sw < f->n_switches && a->peer_sw != s && a->port != 0 &&
	       a->port != IBSM_NO_PORT && a->peer_port != 0 && a->peer_port != IBSM_NO_PORT &&
	       ibsm_bit(&sc->switches, s) && ibsm_bit(&sc->switches, a->peer_sw) &&
	       ibsm_scope_link(f, sc, s, a);
}

uint32_t torus2qos_step(const struct torus2qos_topo *t, uint32_t p, unsigned dir)
{
	unsigned d = dir / 2, c[TORUS2QOS_DIMS];
	if (d >= TORUS2QOS_DIMS || t->radix[d] < 2)
		return IBSM_NONE;
	torus2qos_coords(t, p, c);
	if (dir & 1) {
		if (c[d] == 0 && !t->ring[d])
			return IBSM_NONE;
		c[d] = (c[d] + t->radix[d] - 1) % t->radix[d];
	} else {
		if (c[d] + 1 == t->radix[d] && !t->ring[d])
			return IBSM_NONE;
		c[d] = (c[d] + 1) % t->radix[d];
	}
	return torus2qos_at(t, c);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* The neighbour lists: unique switches over usable links, sorted. */
static int build_neighbours(const struct ibsm_fabric *f, const struct ibsm_scope *sc,
			    struct torus2qos_topo *t)
{
	uint32_t S = f->n_switches;
	t->nb_off = calloc((size_t)S + 1, sizeof(*t->nb_off));
	t->nb = malloc(((size_t)f->n_adj + 1) * sizeof(*t->nb));
	if (!t->nb_off || !t->nb)
		return -ENOMEM;
	uint32_t n = 0;
	for (uint32_t s = 0; s < S; s++) {
		const struct ibsm_switch *sw = ibsm_switch_at(f, s);
		uint32_t first = n;
		for (uint32_t i = sw->adj0; i < sw->adj0 + sw->nadj && i < f->n_adj; i++) {
			const struct ibsm_adj *a = ibsm_adj_at(f, i);
			if (torus2qos_usable(f, sc, s, a))
				t->nb[n++] = a->peer_sw;
		}
		qsort(t->nb + first, n - first, sizeof(*t->nb), cmp_u32);
		uint32_t k = first;
		for (uint32_t i = first; i < n; i++)
			if (k == first || t->nb[k - 1] != t->nb[i])
				t->nb[k++] = t->nb[i];
		n = k;
		t->nb_off[s + 1] = n;
	}
	return 0;
}

static int adjacent(const struct torus2qos_topo *t, uint32_t a, uint32_t b)
{
	const uint32_t *v = t->nb + t->nb_off[a];
	size_t n = t->nb_off[a + 1] - t->nb_off[a];
	return bsearch(&b, v, n, sizeof(*v), cmp_u32) != NULL;
}

/* Common neighbours of a and b into out (at most MAX_NB); returns how many. */
static unsigned common(const struct torus2qos_topo *t, uint32_t a, uint32_t b, uint32_t *out)
{
	uint32_t i = t->nb_off[a], ie = t->nb_off[a + 1], j = t->nb_off[b], je = t->nb_off[b + 1];
	unsigned n = 0;
	while (i < ie && j < je && n < MAX_NB) {
		if (t->nb[i] < t->nb[j])
			i++;
		else if (t->nb[i] > t->nb[j])
			j++;
		else {
			out[n++] = t->nb[i];
			i++;
			j++;
		}
	}
	return n;
}

/* Is position q one step from p in some direction? */
static int next_to(const struct torus2qos_topo *t, uint32_t p, uint32_t q)
{
	for (unsigned dir = 0; dir < TORUS2QOS_NDIRS; dir++)
		if (torus2qos_step(t, p, dir) == q)
			return 1;
	return 0;
}

/* Places switch s at p when both are free and every placed neighbour of s is next to p. */
static int place(struct torus2qos_topo *t, uint32_t s, uint32_t p)
{
	if (p == IBSM_NONE || t->grid[p] != IBSM_NONE || t->pos[s] != IBSM_NONE)
		return 0;
	for (uint32_t i = t->nb_off[s]; i < t->nb_off[s + 1]; i++) {
		uint32_t q = t->pos[t->nb[i]];
		if (q != IBSM_NONE && !next_to(t, p, q))
			return 0;
	}
	t->grid[p] = s;
	t->pos[s] = p;
	t->placed++;
	return 1;
}

/* Keeps the unplaced switches of v[0 .. n); returns how many. */
static unsigned unplaced(const struct torus2qos_topo *t, uint32_t *v, unsigned n)
{
	unsigned k = 0;
	for (unsigned i = 0; i < n; i++)
		if (t->pos[v[i]] == IBSM_NONE)
			v[k++] = v[i];
	return k;
}

/* The line rule at a (switch A), a+u (switch B), towards c = a+2u. */
static int line_rule(struct torus2qos_topo *t, uint32_t a, unsigned dir, uint32_t c)
{
	unsigned d = dir / 2;
	uint32_t A = t->grid[a], B = t->grid[torus2qos_step(t, a, dir)];
	uint32_t cand[MAX_NB];
	unsigned n = 0;
	if (t->ring[d] && t->radix[d] == 3) {
		n = unplaced(t, cand, common(t, A, B, cand));
	} else if (t->ring[d] && t->radix[d] == 4) {
		uint32_t back = torus2qos_step(t, a, dir ^ 1);
		if (back == IBSM_NONE || t->grid[back] == IBSM_NONE)
			return 0;
		n = unplaced(t, cand, common(t, B, t->grid[back], cand));
	} else {
		uint32_t tmp[MAX_NB];
		for (uint32_t i = t->nb_off[B]; i < t->nb_off[B + 1]; i++) {
			uint32_t N = t->nb[i];
			if (N == A || t->pos[N] != IBSM_NONE || adjacent(t, N, A))
				continue;
			if (common(t, N, A, tmp) == 1 && n < MAX_NB)
				cand[n++] = N;
		}
	}
	return n == 1 && place(t, cand[0], c);
}

/* One pass of the face and line rules over every placed position; returns placements. */
static unsigned grow(struct torus2qos_topo *t)
{
	unsigned placed = 0;
	uint32_t cand[MAX_NB];
	for (uint32_t a = 0; a < t->npos; a++) {
		if (t->grid[a] == IBSM_NONE)
			continue;
		for (unsigned u = 0; u < TORUS2QOS_NDIRS; u++) {
			uint32_t b = torus2qos_step(t, a, u);
			if (b == IBSM_NONE || t->grid[b] == IBSM_NONE)
				continue;
			uint32_t c = torus2qos_step(t, b, u);
			if (c != IBSM_NONE && c != a && t->grid[c] == IBSM_NONE)
				placed += (unsigned)line_rule(t, a, u, c);
			for (unsigned v = 0; v < TORUS2QOS_NDIRS; v++) {
				if (v / 2 == u / 2)
					continue;
				uint32_t q = torus2qos_step(t, a, v);
				if (q == IBSM_NONE || t->grid[q] == IBSM_NONE)
					continue;
				uint32_t r = torus2qos_step(t, b, v);
				if (r == IBSM_NONE || t->grid[r] != IBSM_NONE)
					continue;
				unsigned n = unplaced(t, cand, common(t, t->grid[b], t->grid[q], cand));
				if (n == 1)
					placed += (unsigned)place(t, cand[0], r);
			}
		}
	}
	return placed;
}

/* Switch id by node GUID: a sorted (guid, id) table. */
struct guid_sw {
	uint64_t guid;
	uint32_t sw;
};

static int cmp_guid(const void *a, const void *b)
{
	uint64_t x = ((const struct guid_sw *)a)->guid, y = ((const struct guid_sw *)b)->guid;
	return (x > y) - (x < y);
}

static uint32_t find_switch(const struct guid_sw *tab, uint32_t n, uint64_t guid)
{
	struct guid_sw key = { .guid = guid };
	const struct guid_sw *g = bsearch(&key, tab, n, sizeof(*tab), cmp_guid);
	return g ? g->sw : IBSM_NONE;
}

/* Places the switches of seed k; 0, or -1 with why saying what is missing. */
static int plant_seed(struct torus2qos_topo *t, const struct torus_conf *conf, unsigned k,
		      const struct guid_sw *tab, uint32_t n, char *why, size_t whysz)
{
	const struct torus_conf_seed *sd = &g_array_index(conf->seeds, struct torus_conf_seed, k);
	unsigned o[TORUS2QOS_DIMS];
	for (unsigned d = 0; d < TORUS2QOS_DIMS; d++) {
		int r = (int)t->radix[d];
		o[d] = (unsigned)(((-sd->dateline[d]) % r + r) % r);
		t->dateline[d] = sd->dateline[d];
	}
	uint32_t origin = torus2qos_at(t, o);
	for (unsigned d = 0; d < TORUS2QOS_DIMS; d++)
		for (unsigned s = 0; s < TORUS_NDIRS; s++) {
			const struct torus_conf_link *l = &sd->link[d][s];
			if (!l->given || t->radix[d] < 2)
				continue; /* a dimension of radix 1 is not used (the parser notes it) */
			uint32_t a = find_switch(tab, n, l->from), b = find_switch(tab, n, l->to);
			if (a == IBSM_NONE || b == IBSM_NONE) {
				snprintf(why, whysz, "%s:%u: switch 0x%016llx of seed %u is not in the "
					 "fabric", conf->source, l->line,
					 (unsigned long long)(a == IBSM_NONE ? l->from : l->to), k + 1);
				return -1;
			}
			if (!adjacent(t, a, b)) {
				snprintf(why, whysz, "%s:%u: seed %u: no usable link from 0x%016llx to "
					 "0x%016llx", conf->source, l->line, k + 1,
					 (unsigned long long)l->from, (unsigned long long)l->to);
				return -1;
			}
			uint32_t pb = torus2qos_step(t, origin, 2 * d + (s == TORUS_MINUS));
			if (pb == IBSM_NONE) {
				snprintf(why, whysz, "%s:%u: seed %u: the link leads off the %s's edge "
					 "from the seed switch's coordinate", conf->source, l->line,
					 k + 1, "mesh");
				return -1;
			}
			if (!(t->pos[a] == origin || place(t, a, origin)) ||
			    !(t->pos[b] == pb || place(t, b, pb))) {
				snprintf(why, whysz, "%s:%u: seed %u: the switches do not form the "
					 "seed's corner", conf->source, l->line, k + 1);
				return -1;
			}
		}
	return 0;
}

static void reset_places(struct torus2qos_topo *t, uint32_t S)
{
	for (uint32_t p = 0; p < t->npos; p++)
		t->grid[p] = IBSM_NONE;
	for (uint32_t s = 0; s < S; s++)
		t->pos[s] = IBSM_NONE;
	t->placed = 0;
}

/* The parallel links of every placed switch, by direction; counts the links that do not fit. */
static int sort_links(const struct ibsm_core *core, const struct ibsm_fabric *f,
		      const struct ibsm_scope *sc, struct torus2qos_topo *t, struct ibsm_routes *out)
{
	unsigned misplaced = 0;
	for (uint32_t s = 0; s < f->n_switches; s++) {
		uint32_t p = t->pos[s];
		if (p == IBSM_NONE)
			continue;
		const struct ibsm_switch *sw = ibsm_switch_at(f, s);
		for (uint32_t i = sw->adj0; i < sw->adj0 + sw->nadj && i < f->n_adj; i++) {
			const struct ibsm_adj *a = ibsm_adj_at(f, i);
			if (!torus2qos_usable(f, sc, s, a))
				continue;
			uint32_t q = t->pos[a->peer_sw];
			unsigned dir = 0;
			while (dir < TORUS2QOS_NDIRS && (q == IBSM_NONE || torus2qos_step(t, p, dir) != q))
				dir++;
			if (dir == TORUS2QOS_NDIRS) {
				if (misplaced++ < 8)
					core->log(core, IBSM_LOG_INFO,
						  "link 0x%016llx port %u -> 0x%016llx port "
						  "%u not placed in the torus",
						  (unsigned long long)ibsm_switch_node(f, s)->guid,
						  a->port,
						  (unsigned long long)ibsm_switch_node(f, a->peer_sw)->guid,
						  a->peer_port);
				continue;
			}
			uint8_t *n = &t->nlinks[p * TORUS2QOS_NDIRS + dir];
			if (*n >= t->pgmax)
				return engine_fail(out, -EINVAL, "switch 0x%016llx has more than %u "
						   "parallel links in direction %c%c: raise "
						   "portgroup_max_ports in torus-2QoS.conf",
						   (unsigned long long)ibsm_switch_node(f, s)->guid,
						   t->pgmax, dir & 1 ? '-' : '+', "xyz"[dir / 2]);
			uint8_t *l = &t->links[((size_t)p * TORUS2QOS_NDIRS + dir) * t->pgmax];
			unsigned k = *n;
			while (k > 0 && l[k - 1] > a->port) { /* keep them increasing */
				l[k] = l[k - 1];
				k--;
			}
			l[k] = a->port;
			(*n)++;
		}
	}
	if (misplaced)
		core->log(core, IBSM_LOG_INFO, "warning: %u inter-switch link ends "
			  "could not be placed in the torus", misplaced);
	return 0;
}

static void log_found(const struct ibsm_core *core, const struct ibsm_fabric *f,
		      const struct torus_conf *conf, const struct torus2qos_topo *t)
{
	const char *kind = t->ring[0] || t->ring[1] || t->ring[2] ? "torus" : "mesh";
	uint32_t links = 0, cas = 0;
	for (uint32_t i = 0; i < t->npos * TORUS2QOS_NDIRS; i++)
		links += t->nlinks[i];
	for (uint32_t s = 0; s < f->n_switches; s++) {
		uint32_t p = t->pos[s];
		if (p == IBSM_NONE)
			continue;
		const struct ibsm_node *n = ibsm_switch_node(f, s);
		for (unsigned k = 1; k <= n->nports; k++) {
			uint32_t peer = ibsm_port_at(f, n->port0 + k)->peer;
			if (peer != IBSM_NONE &&
			    ibsm_node_at(f, ibsm_port_at(f, peer)->node)->type != IBSM_SWITCH)
				cas++;
		}
	}
	const struct torus_conf_seed *sd =
		&g_array_index(conf->seeds, struct torus_conf_seed, t->seed_index);
	unsigned c[TORUS2QOS_DIMS];
	uint32_t origin = IBSM_NONE;
	for (uint32_t s = 0; s < f->n_switches && origin == IBSM_NONE; s++)
		for (unsigned d = 0; d < TORUS2QOS_DIMS; d++)
			for (unsigned k = 0; k < TORUS_NDIRS; k++)
				if (sd->link[d][k].given && t->pos[s] != IBSM_NONE &&
				    ibsm_switch_node(f, s)->guid == sd->link[d][k].from)
					origin = t->pos[s];
	torus2qos_coords(t, origin == IBSM_NONE ? 0 : origin, c);
	core->log(core, IBSM_LOG_INFO, "using seed %u (%s:%u): seed switch (%u,%u,%u), datelines "
		  "x %d y %d z %d", t->seed_index + 1, conf->source, sd->line, c[0], c[1], c[2],
		  t->dateline[0], t->dateline[1], t->dateline[2]);
	core->log(core, IBSM_LOG_INFO, "built %ux%ux%u %s (%s, %s, %s): %u switches placed of %u "
		  "positions, %u inter-switch link ends, %u CA ports", t->radix[0], t->radix[1],
		  t->radix[2], kind, t->ring[0] ? "x ring" : "x line", t->ring[1] ? "y ring" : "y line",
		  t->ring[2] ? "z ring" : "z line", t->placed, t->npos, links, cas);
	unsigned shown = 0, missing_sw = 0, missing_links = 0;
	for (uint32_t p = 0; p < t->npos; p++) {
		torus2qos_coords(t, p, c);
		if (t->grid[p] == IBSM_NONE) {
			missing_sw++;
			if (shown++ < 32)
				core->log(core, IBSM_LOG_INFO, "missing torus switch at (%u,%u,%u)", c[0],
					  c[1], c[2]);
			continue;
		}
		for (unsigned dir = 0; dir < TORUS2QOS_NDIRS; dir++) {
			uint32_t q = torus2qos_step(t, p, dir);
			if (q == IBSM_NONE || t->nlinks[p * TORUS2QOS_NDIRS + dir])
				continue;
			missing_links++;
			if (shown++ < 32)
				core->log(core, IBSM_LOG_INFO, "missing torus %c%c link on switch "
					  "(%u,%u,%u) GUID 0x%016llx", dir & 1 ? '-' : '+', "xyz"[dir / 2],
					  c[0], c[1], c[2],
					  (unsigned long long)ibsm_switch_node(f, t->grid[p])->guid);
		}
	}
	if (missing_sw || missing_links)
		core->log(core, IBSM_LOG_INFO, "warning: %u torus positions have no switch and %u "
			  "link ends are missing (failed or absent switches and links)%s", missing_sw,
			  missing_links, shown > 32 ? "; the first 32 are listed" : "");
	if (core->config && ibsm_config_ulong(core, "log_flags", 0) & 0x8) {
		/* the map, one line per (y, z) row: switch GUID's low 24 bits or "-" */
		for (unsigned z = 0; z < t->radix[2]; z++)
			for (unsigned y = 0; y < t->radix[1]; y++) {
				char row[1024] = "";
				size_t len = 0;
				for (unsigned x = 0; x < t->radix[0] && len + 12 < sizeof(row); x++) {
					unsigned cc[TORUS2QOS_DIMS] = { x, y, z };
					uint32_t sw = t->grid[torus2qos_at(t, cc)];
					if (sw == IBSM_NONE)
						len += (size_t)snprintf(row + len, sizeof(row) - len,
									" ------");
					else
						len += (size_t)snprintf(
							row + len, sizeof(row) - len, " %06llx",
							(unsigned long long)(ibsm_switch_node(f, sw)->guid &
									     0xffffff));
				}
				core->log(core, IBSM_LOG_DEBUG, "torus y=%u z=%u:%s", y, z, row);
			}
	}
}

int torus2qos_topo_build(const struct ibsm_core *core, const struct ibsm_fabric *f,
		   const struct ibsm_scope *sc, const struct torus_conf *conf, struct torus2qos_topo *t,
		   struct ibsm_routes *out)
{
	uint32_t S = f->n_switches;
	memset(t, 0, sizeof(*t));
	t->npos = 1;
	for (unsigned d = 0; d < TORUS2QOS_DIMS; d++) {
		t->radix[d] = conf->radix[d] ? conf->radix[d] : 1;
		t->ring[d] = t->radix[d] >= 3 && !conf->mesh[d];
		t->npos *= t->radix[d];
	}
	t->pgmax = conf->portgroup_max_ports ? conf->portgroup_max_ports : 16;
	t->grid = malloc((size_t)t->npos * sizeof(*t->grid));
	t->pos = malloc(((size_t)S + 1) * sizeof(*t->pos));
	t->nlinks = calloc((size_t)t->npos * TORUS2QOS_NDIRS, 1);
	t->links = malloc((size_t)t->npos * TORUS2QOS_NDIRS * t->pgmax);
	struct guid_sw *tab = malloc(((size_t)S + 1) * sizeof(*tab));
	if (!t->grid || !t->pos || !t->nlinks || !t->links || !tab ||
	    build_neighbours(f, sc, t) < 0) {
		free(tab);
		return engine_fail(out, -ENOMEM, "out of memory");
	}
	uint32_t n = 0;
	for (uint32_t s = 0; s < S; s++)
		if (ibsm_bit(&sc->switches, s))
			tab[n++] = (struct guid_sw){ ibsm_switch_node(f, s)->guid, s };
	qsort(tab, n, sizeof(*tab), cmp_guid);

	char why[200] = "no seed in the configuration";
	int rc = -1;
	for (unsigned k = 0; k < conf->seeds->len && rc < 0; k++) {
		reset_places(t, S);
		rc = plant_seed(t, conf, k, tab, n, why, sizeof(why));
		if (rc < 0) {
			core->log(core, IBSM_LOG_INFO, "seed %u not usable: %s", k + 1,
				  why);
			continue;
		}
		t->seed_index = k;
	}
	free(tab);
	if (rc < 0)
		return engine_fail(out, -ENOENT, "no usable torus seed (the last: %s)", why);
	while (grow(t))
		if (core->cancelled && core->cancelled(core))
			return engine_fail(out, -ECANCELED, "cancelled");
	core->log(core, IBSM_LOG_INFO, "looking for %ux%ux%u %s", t->radix[0], t->radix[1],
		  t->radix[2], t->ring[0] || t->ring[1] || t->ring[2] ? "torus" : "mesh");

	uint32_t lost = 0, first = IBSM_NONE;
	for (uint32_t s = 0; s < S; s++)
		if (ibsm_bit(&sc->switches, s) && t->pos[s] == IBSM_NONE &&
		    t->nb_off[s + 1] > t->nb_off[s]) {
			if (lost++ < 8)
				core->log(core, IBSM_LOG_INFO, "warning: switch "
					  "0x%016llx \"%s\" could not be placed in the torus",
					  (unsigned long long)ibsm_switch_node(f, s)->guid,
					  ibsm_switch_node(f, s)->desc);
			if (first == IBSM_NONE)
				first = s;
		}
	if (lost)
		return engine_fail(out, -EINVAL, "%u switches could not be placed in the %ux%ux%u "
				   "torus (the first: 0x%016llx \"%s\"): check the radix and seeds "
				   "in %s", lost, t->radix[0], t->radix[1], t->radix[2],
				   (unsigned long long)ibsm_switch_node(f, first)->guid,
				   ibsm_switch_node(f, first)->desc, conf->source);
	rc = sort_links(core, f, sc, t, out);
	if (rc == 0)
		log_found(core, f, conf, t);
	return rc;
}

void torus2qos_topo_free(struct torus2qos_topo *t)
{
	free(t->grid);
	free(t->pos);
	free(t->nlinks);
	free(t->links);
	free(t->nb_off);
	free(t->nb);
	for (unsigned d = 0; d < TORUS2QOS_DIMS; d++) {
		free(t->intact[d]);
		free(t->seg[d]);
	}
	memset(t, 0, sizeof(*t));
}
