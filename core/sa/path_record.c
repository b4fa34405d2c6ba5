/* SPDX-License-Identifier: BSD-2-Clause */
/* path_record.c - PathRecord answers (sa/path_record.h). */
#include <string.h>
#include <infiniband/mad.h>
#include "sa/prefix_routes.h"
#include "sa/path_record.h"
#include "sa/mcast_groups.h"
#include "sa/wire.h"

#define MAX_HOPS 64

static struct sa_layout layout = {
	.name = "PathRecord", .attr = 0x35, .size = PR_SIZE, .n = PR_N,
	.width = { 32, 32, 128, 128, 16, 16, 1, 3, 20, 8, 8, 1, 7, 16, 12, 4, 2, 6, 2, 6, 2, 6, 8, 48 },
};
static int layout_ready;

const struct sa_layout *pr_layout(void)
{
	if (!layout_ready && sa_layout_init(&layout) == 0)
		layout_ready = 1;
	return &layout;
}

/* IB static rate codes and their bandwidth in 0.5 Gb/s units (IBA 9.11 and later) */
static const struct { uint8_t code; uint16_t units; } rates[] = {
	{ 2, 5 }, { 5, 10 }, { 3, 20 }, { 11, 28 }, { 6, 40 }, { 15, 50 }, { 4, 60 }, { 7, 80 },
	{ 12, 112 }, { 8, 120 }, { 9, 160 }, { 16, 200 }, { 13, 224 }, { 10, 240 }, { 14, 336 },
	{ 17, 400 }, { 18, 600 },
};

unsigned pr_rate_units(uint8_t rate)
{
	for (size_t i = 0; i < G_N_ELEMENTS(rates); i++)
		if (rates[i].code == rate)
			return rates[i].units;
	return 0;
}

/* The fastest rate code not above `units` (rates[] is sorted by bandwidth); 0 if none. */
uint8_t pr_rate_at_most(unsigned units)
{
	uint8_t best = 0;
	for (size_t i = 0; i < G_N_ELEMENTS(rates); i++)
		if (rates[i].units <= units)
			best = rates[i].code;
	return best;
}

/* A port's link bandwidth in 0.5 Gb/s units: lanes of LinkWidthActive x LinkSpeedActive. */
unsigned pr_port_units(const struct ibsm_port *p)
{
	unsigned lanes = p->width == 1 ? 1 : p->width == 2 ? 4 : p->width == 4 ? 8 :
			 p->width == 8 ? 12 : p->width == 16 ? 2 : 1;
	unsigned speed = p->speed == 2 ? 10 : p->speed == 4 ? 20 : 5;
	return lanes * speed;
}

struct path {
	uint8_t hops, mtu;
	unsigned units;
};

static void add_link(const struct fabric *f, uint32_t a, uint32_t b, struct path *p)
{
	const struct ibsm_port *x = &f->ports[a], *y = &f->ports[b];
	uint8_t mtu = x->mtu_cap < y->mtu_cap ? x->mtu_cap : y->mtu_cap;
	unsigned u = pr_port_units(x) < pr_port_units(y) ? pr_port_units(x) : pr_port_units(y);
	if (mtu && mtu < p->mtu)
		p->mtu = mtu;
	if (u < p->units)
		p->units = u;
}

/* The path from end port src to dlid as the switches forward it; 0 when it arrives. */
static int walk(const struct sa_view *v, uint32_t src, uint16_t dlid, struct path *p)
{
	const struct fabric *f = v->f;
	const struct routing_result *r = v->r;
	if (!r || dlid > f->pub.max_lid)
		return -1;
	uint32_t dst = f->pub.lid_port[dlid];
	if (dst == IBSM_NONE)
		return -1;
	p->hops = 0;
	p->mtu = 0xff;
	p->units = ~0u;
	uint32_t node = f->ports[src].node;
	if (f->nodes[node].type != IBSM_SWITCH) {
		if (src == dst)
			goto done;
		uint32_t peer = f->ports[src].peer;
		if (peer == IBSM_NONE)
			return -1;
		add_link(f, src, peer, p);
		if (peer == dst)
			goto done;
		node = f->ports[peer].node;
	}
	for (int i = 0; i < MAX_HOPS; i++) {
		const struct ibsm_node *n = &f->nodes[node];
		if (n->type != IBSM_SWITCH || n->sw == IBSM_NONE || n->sw >= r->n_switches)
			return -1;
		if (dst == n->port0)
			goto done;
		uint8_t out = r->lft[(size_t)n->sw * r->stride + dlid];
		if (out == 0 || out > n->nports)
			return -1;
		uint32_t egress = n->port0 + out, peer = f->ports[egress].peer;
		if (peer == IBSM_NONE)
			return -1;
		add_link(f, egress, peer, p);
		p->hops++;
		if (peer == dst)
			goto done;
		node = f->ports[peer].node;
	}
	return -1;
done:
	/* a switch at either end is reached at its port 0, whose MTU may be smaller */
	if (f->nodes[f->ports[dst].node].type == IBSM_SWITCH && f->ports[dst].mtu_cap &&
	    f->ports[dst].mtu_cap < p->mtu)
		p->mtu = f->ports[dst].mtu_cap;
	if (f->nodes[f->ports[src].node].type == IBSM_SWITCH && f->ports[src].mtu_cap &&
	    f->ports[src].mtu_cap < p->mtu)
		p->mtu = f->ports[src].mtu_cap;
	if (p->mtu == 0xff)
		p->mtu = f->ports[src].mtu_cap;
	if (p->units == ~0u)
		p->units = pr_port_units(&f->ports[src]);
	return 0;
}

/* Selector over ordered values: the value the record carries, or -1 when none qualifies.
 * 0 greater than want, 1 less than want, 2 exactly want, 3 the largest (have). */
static int select_ordered(unsigned sel, int have, int want)
{
	switch (sel) {
	case 0: return have > want ? have : -1;
	case 1: return have < want ? have : want - 1 >= 1 ? want - 1 : -1;
	case 2: return have >= want ? want : -1;
	default: return have;
	}
}

static uint64_t bits(const uint8_t *q, int comp)
{
	const struct sa_layout *l = pr_layout();
	return sa_bits(q, l->offset[comp], l->width[comp]);
}

void pr_put(uint8_t *rec, int comp, uint64_t v)
{
	const struct sa_layout *l = pr_layout();
	unsigned off = l->offset[comp], len = l->width[comp];
	for (unsigned i = 0; i < len; i++) {
		unsigned b = off + len - 1 - i;
		if ((v >> i) & 1)
			rec[b / 8] |= (uint8_t)(0x80 >> (b % 8));
		else
			rec[b / 8] &= (uint8_t)~(0x80 >> (b % 8));
	}
}

/* The router port a path off the subnet goes to: the first router end port with a LID, in
 * the order OpenSM keeps its routers (by wire GUID); IBSM_NONE if there is none. */
static uint32_t first_router(const struct fabric *f)
{
	uint32_t best = IBSM_NONE;
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		if (f->nodes[f->ports[p].node].type == IBSM_ROUTER && f->ports[p].lid &&
		    fabric_is_end_port(f, p) &&
		    (best == IBSM_NONE || GUINT64_TO_BE(f->ports[p].guid) < GUINT64_TO_BE(f->ports[best].guid)))
			best = p;
	return best;
}

struct router_ctx {
	const struct fabric *f;
};

/* prefix_routes_pick's test: the router end port of port GUID guid (0: the first router), as
 * a GUID; 0 when there is none with a LID. */
static uint64_t router_present(void *ctx, uint64_t guid)
{
	const struct fabric *f = ((struct router_ctx *)ctx)->f;
	if (!guid) {
		uint32_t p = first_router(f);
		return p == IBSM_NONE ? 0 : f->ports[p].guid;
	}
	uint32_t p = fabric_port_by_guid(f, guid);
	return p != IBSM_NONE && f->nodes[f->ports[p].node].type == IBSM_ROUTER && f->ports[p].lid &&
	       fabric_is_end_port(f, p) ? guid : 0;
}

/* The router port for an off-subnet prefix: by prefix_routes_file when one was read (the first
 * line matching with its router present; none: no path, as OpenSM), else the first router. */
static uint32_t router_for(const struct fabric *f, const struct pr_env *env, uint64_t prefix)
{
	if (!env->prefix_routes)
		return first_router(f);
	struct router_ctx c = { f };
	uint64_t g = prefix_routes_pick(env->prefix_routes, prefix, router_present, &c);
	return g ? fabric_port_by_guid(f, g) : IBSM_NONE;
}

/* The end port a GID names: by its port GUID, when the prefix is ours or link-local
 * (fe80::/10, which names this subnet whatever the rest of its prefix says), as OpenSM; a
 * destination off the subnet (another unicast prefix), the first router port (*via set),
 * except for a MultiPathRecord (env->strict). */
static uint16_t port_of_gid(const struct fabric *f, const struct pr_env *env, const uint8_t *gid,
			    int dest, uint32_t *port, int *via)
{
	uint64_t prefix = sa_be64(gid);
	int ours = prefix == env->subnet_prefix || (prefix >> 54) == 0x3fa;
	*port = ours ? fabric_port_by_guid(f, sa_be64(gid + 8)) : IBSM_NONE;
	if (!ours && dest && !env->strict && gid[0] != 0xff) {
		*port = router_for(f, env, prefix);
		*via = *port != IBSM_NONE;
	}
	return *port == IBSM_NONE ? SA_ERR_REQ_INVALID_GID : 0;
}

/* One end of the query: a port (from its GID and/or LID, which must agree) and the LID asked
 * for; *any when the query names neither. */
static uint16_t end_of(const struct sa_view *v, const struct pr_env *env, const uint8_t *q,
		       uint64_t mask, int gid_comp, int gid_off, int lid_comp, uint32_t *port,
		       uint16_t *lid, int *any, int *via)
{
	const struct fabric *f = v->f;
	*any = 0;
	*port = IBSM_NONE;
	*lid = 0;
	*via = 0;
	if (mask & (1ULL << gid_comp)) {
		uint16_t st = port_of_gid(f, env, q + gid_off, gid_comp == PR_DGID, port, via);
		if (st)
			return st;
	}
	if (mask & (1ULL << lid_comp)) {
		*lid = (uint16_t)bits(q, lid_comp);
		uint32_t p = *lid <= f->pub.max_lid ? f->pub.lid_port[*lid] : IBSM_NONE;
		if (p == IBSM_NONE || (*port != IBSM_NONE && p != *port))
			return SA_ERR_NO_RECORDS;
		*port = p;
	}
	*any = *port == IBSM_NONE;
	return 0;
}

static int end_port(const struct fabric *f, uint32_t p)
{
	return f->ports[p].lid && fabric_is_end_port(f, p);
}

struct query {
	const struct sa_view *v;
	const struct pr_env *env;
	struct qos_query qos;      /* what QoS match rules see of the query */
	const uint8_t *q;
	uint64_t mask;
	unsigned per_pair;         /* records one pair may give (NumbPath; 1 for a Get) */
	int get;                   /* a Get: the first record found is the answer */
	uint16_t slid, dlid;       /* asked for (0: any of the port's LMC range) */
	const uint8_t *rtr_dgid;   /* an off-subnet DGID the path goes to through a router */
	GByteArray *out;
};

/* A P_Key both ends share (one a full member) among the level's P_Keys, as OpenSM picks one:
 * the first of the level's ranges that has one, the lowest key in it; 0 if none. */
static uint16_t shared_in(const struct sa_pkeys *pk, uint32_t src, uint32_t dst, const GArray *ranges)
{
	uint32_t n = 0;
	const uint16_t *t = pk ? sa_pkeys_of(pk, src, &n) : NULL;
	if (!t)
		return qos_ranges_have(ranges, 0x7fff) ? sa_pkeys_shared(pk, src, dst, 0x7fff) : 0;
	uint16_t best = 0;
	guint best_range = G_MAXUINT;
	for (uint32_t i = 0; i < n; i++) {
		uint16_t k = t[i] & 0x7fff, got = k ? sa_pkeys_shared(pk, src, dst, k) : 0;
		for (guint j = 0; got && j < ranges->len && j <= best_range; j++) {
			const struct qos_range *r = &g_array_index(ranges, struct qos_range, j);
			if (k < r->lo || k > r->hi)
				continue;
			if (j < best_range || k < (best & 0x7fff)) {
				best = got;
				best_range = j;
			}
			break;
		}
	}
	return best;
}

/* Does the level restrict the DLIDs of a port with nd LIDs (its path bits name at least one
 * of the port's LID offsets)? When they name none, every offset goes. */
static int restricts_offsets(const struct qos_level *lvl, unsigned nd)
{
	if (!lvl || !lvl->path_bits || !lvl->path_bits->len)
		return 0;
	for (unsigned i = 0; i < nd; i++)
		if (qos_ranges_have(lvl->path_bits, i))
			return 1;
	return 0;
}

struct parms {
	int mtu, rate, life, sl;
	uint16_t pkey;
};

/* The parameters of the path from port src (at slid) to port dst at dlid under the query, as
 * OpenSM's pr_rcv_get_path_parms works them out: the walk's MTU and rate, the QoS level of
 * (src, dst) (its limits, packet lifetime, P_Keys and SL), the query's selectors, P_Key and
 * SL. -1 when the query leaves no path. Used for both directions of a pair: a path is
 * reversible when the way back qualifies under its own level. */
static int parms(const struct query *qq, uint32_t src, uint32_t dst, uint16_t slid, uint16_t dlid,
		 struct parms *o)
{
	const struct fabric *f = qq->v->f;
	const uint8_t *q = qq->q;
	uint64_t m = qq->mask;
	struct path p;
	if (walk(qq->v, src, dlid, &p) < 0)
		return -1;
	int rule;
	const struct qos_level *lvl = qq->v->qos ? qos_match_level(qq->v->qos, f, src, dst, &qq->qos, &rule)
						 : NULL;
	if (lvl && lvl->mtu_limit > 0 && p.mtu > lvl->mtu_limit)
		p.mtu = (uint8_t)lvl->mtu_limit;
	if (lvl && lvl->rate_limit > 0 && pr_rate_units((uint8_t)lvl->rate_limit) &&
	    p.units > pr_rate_units((uint8_t)lvl->rate_limit))
		p.units = pr_rate_units((uint8_t)lvl->rate_limit);
	/* a port's path to itself crosses no link: PacketLifeTime 0, as OpenSM */
	int mtu = p.mtu, rate = pr_rate_at_most(p.units), life = src == dst ? 0 : qq->env->packet_life;
	if (src != dst && lvl && lvl->packet_life >= 0)
		life = lvl->packet_life;
	/* MTU, rate and packet lifetime constrain the path only with their selector, as
	 * OpenSM reads a query (saquery --mtu 2 without '<', '>' or '=' asks nothing) */
	if ((m >> PR_MTU & 1) && (m >> PR_MTU_SEL & 1))
		mtu = select_ordered((unsigned)bits(q, PR_MTU_SEL), mtu, (int)bits(q, PR_MTU));
	if (rate && (m >> PR_RATE & 1) && (m >> PR_RATE_SEL & 1)) {
		unsigned sel = (unsigned)bits(q, PR_RATE_SEL);
		uint8_t want_code = (uint8_t)bits(q, PR_RATE);
		unsigned want = pr_rate_units(want_code);
		if (!want)
			rate = -1;
		else if (sel == 0)
			rate = p.units > want ? rate : -1;
		else if (sel == 1)
			rate = p.units < want ? rate : pr_rate_at_most(want - 1);
		else if (sel == 2)
			rate = p.units >= want ? want_code : -1;
		if (rate == 0)
			rate = -1;
	}
	if ((m >> PR_LIFE & 1) && (m >> PR_LIFE_SEL & 1)) {
		unsigned sel = (unsigned)bits(q, PR_LIFE_SEL);
		int want = (int)bits(q, PR_LIFE);
		int ok = sel == 0 ? life > want : sel == 1 ? life < want : sel == 2 ? life == want : 1;
		if (!ok)
			life = -1;
	}
	if (mtu < 0 || rate < 0 || life < 0)
		return -1;
	/* a partition both ends are in, one of them as a full member: for raw traffic any (the
	 * answer then carries none), else the asked one (with a level that names P_Keys, one
	 * of those), as OpenSM */
	int raw = (m >> PR_RAW & 1) && bits(q, PR_RAW);
	uint16_t want_pkey = !raw && (m >> PR_PKEY & 1) ? (uint16_t)bits(q, PR_PKEY) : 0, pkey;
	if (raw)
		pkey = sa_pkeys_shared(qq->v->pk, src, dst, 0);
	else if (lvl && lvl->pkeys && lvl->pkeys->len && !want_pkey)
		pkey = shared_in(qq->v->pk, src, dst, lvl->pkeys);
	else if (lvl && lvl->pkeys && lvl->pkeys->len && !qos_ranges_have(lvl->pkeys, want_pkey & 0x7fff))
		pkey = 0;
	else
		pkey = sa_pkeys_shared(qq->v->pk, src, dst, want_pkey);
	if (!pkey)
		return -1;
	/* the SL asked for, else the level's, else the partition's (sl=); the routing engine
	 * has the last word (a torus-2QoS path gets the SL its turns need) and must agree with
	 * the one asked */
	int sl = m >> PR_SL & 1 ? (int)bits(q, PR_SL) : lvl && lvl->sl >= 0 ? lvl->sl :
		 qq->v->part_sl && qq->v->part_sl[pkey & 0x7fff] ? qq->v->part_sl[pkey & 0x7fff] - 1 : 0;
	if ((m >> PR_SL & 1) && lvl && lvl->sl >= 0 && lvl->sl != sl)
		return -1;
	int got = routing_path_sl(qq->v->r, (uint8_t)sl, slid, dlid);
	if ((m >> PR_SL & 1) && got != sl)
		return -1;
	o->mtu = mtu;
	o->rate = rate;
	o->life = life;
	o->sl = got;
	o->pkey = raw ? 0 : want_pkey ? want_pkey : pkey; /* the one asked, as asked (OpenSM) */
	return 0;
}

/* One record from src at slid to dst at dlid, if the query lets it be. ServiceID, FlowLabel,
 * TClass and HopLimit are answered 0 (no router between), RawTraffic and the QoS class 0,
 * NumbPath 0 with Reversible, Preference as given, as OpenSM's pr_rcv_build_pr: they are no
 * filter of a unicast PathRecord query. */
static void one_path(struct query *qq, uint32_t src, uint32_t dst, uint16_t slid, uint16_t dlid,
		     uint8_t preference, unsigned *made)
{
	const struct fabric *f = qq->v->f;
	struct parms fw, back;
	if (parms(qq, src, dst, slid, dlid, &fw) < 0)
		return;
	int reversible = parms(qq, dst, src, dlid, slid, &back) == 0;
	if ((qq->mask >> PR_REVERSIBLE & 1) && bits(qq->q, PR_REVERSIBLE) && !reversible)
		return;
	uint8_t rec[PR_SIZE] = { 0 };
	sa_put_gid(rec + 8, qq->env->subnet_prefix, f->ports[dst].guid);
	sa_put_gid(rec + 24, qq->env->subnet_prefix, f->ports[src].guid);
	pr_put(rec, PR_DLID, dlid);
	pr_put(rec, PR_SLID, slid);
	pr_put(rec, PR_REVERSIBLE, (uint64_t)reversible);
	pr_put(rec, PR_PKEY, fw.pkey);
	pr_put(rec, PR_SL, (uint64_t)fw.sl);
	pr_put(rec, PR_MTU_SEL, 2);
	pr_put(rec, PR_MTU, (uint64_t)fw.mtu);
	pr_put(rec, PR_RATE_SEL, 2);
	pr_put(rec, PR_RATE, (uint64_t)fw.rate);
	pr_put(rec, PR_LIFE_SEL, 2);
	pr_put(rec, PR_LIFE, (uint64_t)fw.life);
	pr_put(rec, PR_PREFERENCE, preference);
	if (qq->rtr_dgid) { /* beyond the router: the DGID asked for, as the site configured */
		const struct pr_env *e = qq->env;
		memcpy(rec + 8, qq->rtr_dgid, 16);
		pr_put(rec, PR_HOPLIMIT, 0xff);
		pr_put(rec, PR_FLOW, e->rtr_flow_label & 0xfffff);
		pr_put(rec, PR_TCLASS, e->rtr_tclass);
		pr_put(rec, PR_SL, e->rtr_sl & 0xf);
		if (e->rtr_mtu && e->rtr_mtu < fw.mtu)
			pr_put(rec, PR_MTU, e->rtr_mtu);
		if (e->rtr_rate && pr_rate_units(e->rtr_rate) &&
		    pr_rate_units(e->rtr_rate) < pr_rate_units((uint8_t)fw.rate))
			pr_put(rec, PR_RATE, e->rtr_rate);
	}
	g_byte_array_append(qq->out, rec, PR_SIZE);
	(*made)++;
}

/* The records of one (src, dst) pair over the LIDs of the ports' LMC ranges (or the LIDs the
 * query fixed), in OpenSM's order: first the pairs at the same offset in both ranges
 * (Preference 0), then every other (Preference 2), up to per_pair records. A QoS level whose
 * path bits name offsets of the destination keeps only those DLIDs. */
static void pair(struct query *qq, uint32_t src, uint32_t dst)
{
	const struct fabric *f = qq->v->f;
	const struct ibsm_port *s = &f->ports[src], *d = &f->ports[dst];
	unsigned ns = qq->slid ? 1 : 1u << s->lmc, nd = qq->dlid ? 1 : 1u << d->lmc;
	uint16_t s0 = qq->slid ? qq->slid : s->lid, d0 = qq->dlid ? qq->dlid : d->lid;
	if (!s0 || !d0)
		return;
	int rule;
	const struct qos_level *lvl = qq->v->qos ? qos_match_level(qq->v->qos, f, src, dst, &qq->qos, &rule)
						 : NULL;
	int by_bits = !qq->dlid && restricts_offsets(lvl, nd);
	unsigned made = 0;
	for (unsigned i = 0; i < ns && i < nd && made < qq->per_pair; i++)
		if (!by_bits || qos_ranges_have(lvl->path_bits, i))
			one_path(qq, src, dst, (uint16_t)(s0 + i), (uint16_t)(d0 + i), 0, &made);
	for (unsigned a = 0; a < ns && made < qq->per_pair; a++)
		for (unsigned b = 0; b < nd && made < qq->per_pair; b++)
			if (a != b && (!by_bits || qos_ranges_have(lvl->path_bits, b)))
				one_path(qq, src, dst, (uint16_t)(s0 + a), (uint16_t)(d0 + b), 2, &made);
}

/* A multicast DGID: the path to the group (its MGID, MLID, P_Key, TClass, SL, FlowLabel,
 * HopLimit, and exactly its MTU, rate and packet lifetime), the rest as the query gave it,
 * when the query agrees with the group (its MLID, a member as the source, its P_Key, SL,
 * FlowLabel, HopLimit, TClass), as OpenSM's pr_process_multicast. */
static void multicast(struct query *qq)
{
	const struct fabric *f = qq->v->f;
	const uint8_t *q = qq->q;
	uint64_t m = qq->mask;
	struct mc_group *g = qq->env->mc ? mc_find(qq->env->mc, q + 8) : NULL;
	if (!g)
		return;
	if ((m >> PR_DLID & 1) && bits(q, PR_DLID) != g->mlid)
		return;
	if (m >> PR_SGID & 1) {
		uint32_t p = fabric_port_by_guid(f, sa_be64(q + 32));
		if (p == IBSM_NONE || !mc_member(g, f->ports[p].guid))
			return;
	}
	if (m >> PR_SLID & 1) {
		uint64_t lid = bits(q, PR_SLID);
		uint32_t p = lid <= f->pub.max_lid ? f->pub.lid_port[lid] : IBSM_NONE;
		if (p == IBSM_NONE || !mc_member(g, f->ports[p].guid))
			return;
	}
	if ((m >> PR_PKEY & 1) && bits(q, PR_PKEY) != g->p.pkey)
		return;
	if ((m >> PR_SL & 1) && bits(q, PR_SL) != g->p.sl)
		return;
	if ((m >> PR_NUMBPATH & 1) && !qq->get && !bits(q, PR_NUMBPATH))
		return;
	if ((m >> PR_FLOW & 1) && bits(q, PR_FLOW) != g->p.flow_label)
		return;
	if ((m >> PR_HOPLIMIT & 1) && bits(q, PR_HOPLIMIT) != g->p.hop_limit)
		return;
	if ((m >> PR_TCLASS & 1) && bits(q, PR_TCLASS) != g->p.tclass)
		return;
	uint8_t rec[PR_SIZE];
	memcpy(rec, q, PR_SIZE);
	memcpy(rec + 8, g->mgid, 16);
	pr_put(rec, PR_DLID, g->mlid);
	pr_put(rec, PR_TCLASS, g->p.tclass);
	pr_put(rec, PR_REVERSIBLE, 0);
	pr_put(rec, PR_NUMBPATH, 1);
	pr_put(rec, PR_PKEY, g->p.pkey);
	pr_put(rec, PR_MTU_SEL, 2);
	pr_put(rec, PR_MTU, g->p.mtu & 0x3f);
	pr_put(rec, PR_RATE_SEL, 2);
	pr_put(rec, PR_RATE, g->p.rate & 0x3f);
	pr_put(rec, PR_LIFE_SEL, 2);
	pr_put(rec, PR_LIFE, g->p.packet_life & 0x3f);
	pr_put(rec, PR_SL, g->p.sl & 0xf);
	pr_put(rec, PR_QOS, 0);
	/* a group beyond the link has no hop limit set yet: the largest, as OpenSM */
	pr_put(rec, PR_HOPLIMIT, (g->mgid[1] & 0xf) == 2 ? g->p.hop_limit : 0xff);
	pr_put(rec, PR_FLOW, g->p.flow_label & 0xfffff);
	pr_put(rec, PR_RAW, 0);
	g_byte_array_append(qq->out, rec, PR_SIZE);
}

static gint by_guid(gconstpointer a, gconstpointer b, gpointer data)
{
	const struct fabric *f = data;
	/* OpenSM's port table is keyed by the GUID as it is on the wire, read as a host integer */
	uint64_t x = GUINT64_TO_BE(f->ports[*(const uint32_t *)a].guid);
	uint64_t y = GUINT64_TO_BE(f->ports[*(const uint32_t *)b].guid);
	return x < y ? -1 : x > y;
}

uint16_t pr_query(const struct sa_view *v, const struct pr_env *env, const uint8_t *query,
		  uint64_t mask, int table, GByteArray *out)
{
	const struct fabric *f = v->f;
	struct query qq = { .v = v, .env = env, .q = query, .mask = mask, .out = out, .get = !table };
	qq.qos.has_service_id = (mask >> PR_SID_MSB & 1) || (mask >> PR_SID_LSB & 1);
	qq.qos.service_id = bits(query, PR_SID_MSB) << 32 | bits(query, PR_SID_LSB);
	qq.qos.has_qos_class = mask >> PR_QOS & 1;
	qq.qos.qos_class = (uint16_t)bits(query, PR_QOS);
	qq.qos.has_pkey = mask >> PR_PKEY & 1;
	qq.qos.pkey = (uint16_t)bits(query, PR_PKEY);
	/* a multicast DGID: the group's path (a MultiPathRecord names unicast GIDs only) */
	if (!env->strict && (mask >> PR_DGID & 1) && query[8] == 0xff) {
		multicast(&qq);
		return 0;
	}
	uint32_t src, dst;
	int any_src, any_dst, via = 0;
	uint16_t st = end_of(v, env, query, mask, PR_SGID, 24, PR_SLID, &src, &qq.slid, &any_src, &via);
	if (!st)
		st = end_of(v, env, query, mask, PR_DGID, 8, PR_DLID, &dst, &qq.dlid, &any_dst, &via);
	qq.rtr_dgid = via ? query + 8 : NULL;
	/* OpenSM 3.3.23 answers an unknown LID or GID with no record: an empty table for a
	 * GetTable, NO_RECORDS for a Get (the caller's rule for an empty Get) */
	if (st)
		return env->strict ? st : 0;
	/* NumbPath for a GetTable (0: none), every path without it; a Get: the first path */
	qq.per_pair = !table ? 1 : mask >> PR_NUMBPATH & 1 ? (unsigned)bits(query, PR_NUMBPATH) : ~0u;
	/* a path only between ports the requester shares a partition with, each of them (as
	 * OpenSM's osm_sa_path_record.c): a third party sees no path it could not see both ends
	 * of; that the two ends share one is judged with the path's P_Key (pair). Ports in
	 * OpenSM's order (by wire GUID, destinations outer); a Get stops at the first record. */
	GArray *ends = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	if (any_src || any_dst) {
		for (uint32_t p = 0; p < f->pub.n_ports; p++)
			if (end_port(f, p))
				g_array_append_val(ends, p);
		g_array_sort_with_data(ends, by_guid, (gpointer)f);
	}
	guint nd = any_dst ? ends->len : 1, ns = any_src ? ends->len : 1;
	for (guint j = 0; j < nd; j++) {
		uint32_t d = any_dst ? g_array_index(ends, uint32_t, j) : dst;
		if (!sa_view_sees(v, d))
			continue;
		for (guint i = 0; i < ns; i++) {
			uint32_t s = any_src ? g_array_index(ends, uint32_t, i) : src;
			if (sa_view_sees(v, s))
				pair(&qq, s, d);
			if ((qq.get && out->len) || (v->answer_max && out->len > v->answer_max)) {
				g_array_free(ends, TRUE);
				return 0; /* past what an answer carries: the caller refuses it */
			}
		}
	}
	g_array_free(ends, TRUE);
	return 0;
}
