/* SPDX-License-Identifier: BSD-2-Clause */
/* mcmember.c - MCMemberRecord joins, leaves and queries (mcmember.h). The record, 52 bytes:
 * MGID 0, PortGID 16, Q_Key 32, MLID 36, MTUSelector:2 MTU:6 38, TClass 39, P_Key 40,
 * RateSelector:2 Rate:6 42, PacketLifeTimeSelector:2 PacketLifeTime:6 43, SL:4 FlowLabel:20
 * HopLimit:8 44, Scope:4 JoinState:4 48, ProxyJoin:1 49, reserved to 52. Selectors: 0 greater
 * than, 1 less than, 2 exactly, 3 the largest available. */
#include <string.h>
#include "sa/mcmember.h"
#include "sa/path_record.h"
#include "sa/wire.h"

#define CREATE_MASK (MCMR_QKEY | MCMR_PKEY | MCMR_SL | MCMR_FLOW | MCMR_TCLASS)
enum { SEL_GT = 0, SEL_LT = 1, SEL_EQ = 2, SEL_MAX = 3 };

static uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)(v >> 16)); put16(p + 2, (uint16_t)v); }

void mcm_record(const struct mc_group *grp, const struct mc_member *m, uint8_t *out)
{
	memset(out, 0, MCMR_SIZE);
	memcpy(out, grp->mgid, 16);
	if (m)
		memcpy(out + 16, m->gid, 16);
	put32(out + 32, grp->p.qkey);
	put16(out + 36, grp->mlid);
	out[38] = (uint8_t)(SEL_EQ << 6 | (grp->p.mtu & 0x3f));
	out[39] = grp->p.tclass;
	put16(out + 40, grp->p.pkey);
	out[42] = (uint8_t)(SEL_EQ << 6 | (grp->p.rate & 0x3f));
	out[43] = (uint8_t)(SEL_EQ << 6 | (grp->p.packet_life & 0x3f));
	put32(out + 44, (uint32_t)(grp->p.sl & 0xf) << 28 | (grp->p.flow_label & 0xfffff) << 8 |
			grp->p.hop_limit);
	out[48] = (uint8_t)((grp->p.scope & 0xf) << 4 | (m ? m->join_state & 0xf : 0));
	out[49] = (uint8_t)(m && m->proxy ? 0x80 : 0);
}

/* Values are compared in their order: MTU codes 1-5 and PacketLifeTime codes 0-63 as numbers,
 * rate codes by the bandwidth they stand for (2.5 Gb/s is code 2, 5 Gb/s code 5, 10 Gb/s code
 * 3...). rank() is 0 for a code that is no value; at_most() the best code of rank <= r, or -1. */
struct order {
	unsigned (*rank)(uint8_t code);
	int (*at_most)(unsigned r);
};

static unsigned mtu_rank(uint8_t c) { return c >= 1 && c <= 5 ? c : 0; }
static int mtu_at_most(unsigned r) { return r >= 1 ? (int)(r > 5 ? 5 : r) : -1; }
static unsigned life_rank(uint8_t c) { return (unsigned)c + 1; }
static int life_at_most(unsigned r) { return r >= 1 ? (int)(r > 64 ? 63 : r - 1) : -1; }
static unsigned rate_rank(uint8_t c) { return pr_rate_units(c); }
static int rate_at_most(unsigned r) { uint8_t c = pr_rate_at_most(r); return c ? c : -1; }
static const struct order MTU = { mtu_rank, mtu_at_most }, LIFE = { life_rank, life_at_most },
			  RATE = { rate_rank, rate_at_most };

/* The value a create asks for with selector SEL (given: the mask has both selector and
 * value; value alone: exactly), MAX when the mask has no value: -1 when none can be had up to
 * MAX. */
static int pick(uint64_t mask, uint64_t sel_bit, uint64_t val_bit, uint8_t byte, uint8_t max,
		const struct order *o)
{
	if (!(mask & val_bit))
		return max;
	uint8_t sel = mask & sel_bit ? byte >> 6 : SEL_EQ, v = byte & 0x3f;
	unsigned rv = o->rank(v), rmax = o->rank(max);
	switch (sel) {
	case SEL_GT:
		return rv && rmax > rv ? max : -1;
	case SEL_LT:
		return rv > 1 ? o->at_most(rv - 1 < rmax ? rv - 1 : rmax) : -1;
	case SEL_EQ:
		return rv && rv <= rmax ? v : -1;
	default:
		return max;
	}
}

/* Does the group's value G satisfy the request's selector (given as above)? */
static int accepts(uint64_t mask, uint64_t sel_bit, uint64_t val_bit, uint8_t byte, uint8_t g,
		   const struct order *o)
{
	if (!(mask & val_bit))
		return 1;
	uint8_t sel = mask & sel_bit ? byte >> 6 : SEL_EQ, v = byte & 0x3f;
	switch (sel) {
	case SEL_GT:
		return o->rank(g) > o->rank(v);
	case SEL_LT:
		return o->rank(g) < o->rank(v);
	case SEL_EQ:
		return g == v;
	default:
		return 1;
	}
}

/* The fields OpenSM's mcgroup_join_validation (and ipoib_mcgroup_creation_validation against
 * the broadcast group) compares: Q_Key, P_Key, TClass, SL, FlowLabel, HopLimit. */
static int same_other_fields(const struct mc_group *grp, const uint8_t *rec, uint64_t mask)
{
	uint32_t w = be32(rec + 44);
	return (!(mask & MCMR_QKEY) || be32(rec + 32) == grp->p.qkey) &&
	       (!(mask & MCMR_PKEY) || be16(rec + 40) == grp->p.pkey) &&
	       (!(mask & MCMR_TCLASS) || rec[39] == grp->p.tclass) &&
	       (!(mask & MCMR_SL) || (w >> 28) == grp->p.sl) &&
	       (!(mask & MCMR_FLOW) || ((w >> 8) & 0xfffff) == grp->p.flow_label) &&
	       (!(mask & MCMR_HOP) || (w & 0xff) == grp->p.hop_limit);
}

/* join_check 0 (mcgroup_join_validation FALSE): only MLID, MTU, rate and lifetime compared */
static int compatible(const struct mc_group *grp, const uint8_t *rec, uint64_t mask, int join_check)
{
	return (!join_check || same_other_fields(grp, rec, mask)) &&
	       (!(mask & MCMR_MLID) || be16(rec + 36) == grp->mlid) &&
	       accepts(mask, MCMR_MTU_SEL, MCMR_MTU, rec[38], grp->p.mtu, &MTU) &&
	       accepts(mask, MCMR_RATE_SEL, MCMR_RATE, rec[42], grp->p.rate, &RATE) &&
	       accepts(mask, MCMR_LIFE_SEL, MCMR_LIFE, rec[43], grp->p.packet_life, &LIFE);
}

/* An MGID for a group created without one: ff1<scope>:a01b:<pkey>::<n>, the first n free. */
static void new_mgid(struct mc_groups *g, uint8_t scope, uint16_t pkey, uint8_t *mgid)
{
	do {
		memset(mgid, 0, 16);
		mgid[0] = 0xff;
		mgid[1] = (uint8_t)(0x10 | (scope & 0xf));
		mgid[2] = 0xa0;
		mgid[3] = 0x1b;
		put16(mgid + 4, pkey);
		put32(mgid + 12, mc_next_serial(g));
	} while (mc_find(g, mgid));
}

/* A multicast GID a requester may name for a new group (IBA 4.1.1): prefix 0xFF, flags 0
 * (permanent) or 1 (transient); not the 0xA01B signature the SA gives MGIDs it makes up. Any
 * scope, the reserved ones (0, 15) too: OpenSM 3.3.23 makes them, and its compliance suite
 * (osmtest -f m, o15-0.1.6) expects a group of scope 15 to be created. */
static int mgid_valid(const uint8_t *mgid)
{
	uint8_t flags = mgid[1] >> 4;
	return mgid[0] == 0xff && flags <= 1 && !(mgid[2] == 0xa0 && mgid[3] == 0x1b);
}

/* OpenSM's ipoib_mcgroup_creation_validation for an IPoIB MGID (signature 0x401B or 0x601B)
 * other than the broadcast group ff1S:401b:PPPP::ffff:ffff itself: that broadcast group (same
 * scope S and P_Key) must exist, and the request's Q_Key, P_Key, TClass, SL, FlowLabel and
 * HopLimit (where given) must be its. */
static int ipoib_creation_ok(struct mc_groups *g, const uint8_t *rec, uint64_t mask)
{
	const uint8_t *mgid = rec;
	int v4 = mgid[2] == 0x40 && mgid[3] == 0x1b, v6 = mgid[2] == 0x60 && mgid[3] == 0x1b;
	if (!v4 && !v6)
		return 1;
	uint8_t bcast[16] = { 0xff, (uint8_t)(0x10 | (mgid[1] & 0xf)), 0x40, 0x1b, mgid[4], mgid[5],
			      0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
	if (v4 && !memcmp(bcast, mgid, 16))
		return 1;
	const struct mc_group *b = mc_find(g, bcast);
	return b && same_other_fields(b, rec, mask);
}

/* May port become a member of one more group? A requester presenting the SM_Key always. */
static int within_quota(const struct mc_groups *g, const struct mcm_requester *who, uint64_t port)
{
	return who->trusted || mc_memberships(g, port) < SA_MC_MAX_PER_PORT;
}

/* May `who` join port to a group of partition pkey: the port must be in the partition, and a
 * proxy (a requester joining another port) must present the SM_Key or be in it too. */
static int may_join(const struct mcm_env *env, const struct mcm_requester *who, uint64_t port,
		    uint16_t pkey)
{
	if (!env->pkey_ok)
		return port == who->port_guid || who->trusted;
	if (!env->pkey_ok(env->ctx, port, pkey))
		return 0;
	return port == who->port_guid || who->trusted || env->pkey_ok(env->ctx, who->port_guid, pkey);
}

uint16_t mcm_join(struct mc_groups *g, const struct mcm_env *env, const uint8_t *rec, uint64_t mask,
		  const struct mcm_requester *who, uint8_t *out, int *created)
{
	*created = 0;
	if (!(mask & MCMR_PORT_GID) || !(mask & MCMR_JOIN_STATE))
		return SA_ERR_REQ_INSUFFICIENT_COMPONENTS;
	uint8_t state = rec[48] & 0xf;
	if (!state)
		return SA_ERR_REQ_INVALID;
	uint64_t port = sa_be64(rec + 24);
	int proxy = port != who->port_guid;
	static const uint8_t zero[16];
	int named = (mask & MCMR_MGID) && memcmp(rec, zero, 16);
	struct mc_group *grp = named ? mc_find(g, rec) : NULL;
	if (!grp) {
		if (!(state & MC_FULL))
			return SA_ERR_REQ_INVALID; /* only a full member creates a group */
		if ((mask & CREATE_MASK) != CREATE_MASK)
			return SA_ERR_REQ_INSUFFICIENT_COMPONENTS;
		uint32_t w = be32(rec + 44);
		int mtu = pick(mask, MCMR_MTU_SEL, MCMR_MTU, rec[38], env->max_mtu, &MTU);
		int rate = pick(mask, MCMR_RATE_SEL, MCMR_RATE, rec[42], env->max_rate, &RATE);
		int life = mask & MCMR_LIFE ? pick(mask, MCMR_LIFE_SEL, MCMR_LIFE, rec[43], 0x3f, &LIFE) :
			   env->packet_life;
		if (mtu < 0 || rate < 0 || life < 0)
			return SA_ERR_REQ_INVALID;
		if (named && !env->no_create_check && (!mgid_valid(rec) || !ipoib_creation_ok(g, rec, mask)))
			return SA_ERR_REQ_INVALID;
		struct mc_params p = {
			.qkey = be32(rec + 32), .pkey = be16(rec + 40), .tclass = rec[39],
			.sl = (uint8_t)(w >> 28), .flow_label = (w >> 8) & 0xfffff,
			.hop_limit = mask & MCMR_HOP ? (uint8_t)w : 0,
			.mtu = (uint8_t)mtu, .rate = (uint8_t)rate, .packet_life = (uint8_t)life,
			.scope = mask & MCMR_SCOPE ? rec[48] >> 4 : named ? rec[1] & 0xf : 2,
		};
		if (!may_join(env, who, port, p.pkey))
			return SA_ERR_REQ_INVALID;
		if (!within_quota(g, who, port))
			return SA_ERR_NO_RESOURCES;
		uint8_t mgid[16];
		if (named)
			memcpy(mgid, rec, 16);
		else
			new_mgid(g, p.scope, p.pkey, mgid);
		grp = mc_create(g, mgid, &p, 0);
		if (!grp)
			return SA_ERR_NO_RESOURCES;
		*created = 1;
	} else {
		if (!compatible(grp, rec, mask, !env->no_join_check))
			return SA_ERR_REQ_INVALID;
		if (!may_join(env, who, port, grp->p.pkey))
			return SA_ERR_REQ_INVALID;
		const struct mc_member *m = mc_member(grp, port);
		if (m && proxy && !m->proxy && !who->trusted)
			return SA_ERR_REQ_INVALID; /* a port's own membership is its own business */
		if (!m && !within_quota(g, who, port))
			return SA_ERR_NO_RESOURCES;
	}
	mc_join(g, grp, port, rec + 16, state, proxy);
	mcm_record(grp, mc_member(grp, port), out);
	return 0;
}

uint16_t mcm_leave(struct mc_groups *g, const struct mcm_env *env, const uint8_t *rec, uint64_t mask,
		   const struct mcm_requester *who, uint8_t *out, int *deleted)
{
	*deleted = 0;
	if (!(mask & MCMR_MGID) || !(mask & MCMR_PORT_GID) || !(mask & MCMR_JOIN_STATE))
		return SA_ERR_REQ_INSUFFICIENT_COMPONENTS;
	uint64_t port = sa_be64(rec + 24);
	struct mc_group *grp = mc_find(g, rec);
	const struct mc_member *m = grp ? mc_member(grp, port) : NULL;
	/* another port's membership: only one a proxy made, and only from inside its partition */
	if (m && port != who->port_guid && !who->trusted &&
	    (!m->proxy || !env || !env->pkey_ok || !env->pkey_ok(env->ctx, who->port_guid, grp->p.pkey)))
		return SA_ERR_REQ_INVALID;
	uint8_t state = rec[48] & MC_STATES;
	if (!m || !state || (m->join_state & state) != state) /* every bit taken back must be held */
		return SA_ERR_REQ_INVALID;
	/* the answer: the states left (none: the port is no member any more) */
	struct mc_member left = *m;
	left.join_state &= (uint8_t)~state;
	mcm_record(grp, &left, out);
	*deleted = mc_leave(g, grp, port, state) == 1;
	return 0;
}

struct query {
	const uint8_t *rec;
	uint64_t mask;
	const struct mcm_requester *who;
	const struct mcm_env *env;
	GByteArray *out;
};

static void add(struct query *q, const struct mc_group *grp, const struct mc_member *m)
{
	uint8_t r[MCMR_SIZE];
	mcm_record(grp, m, r);
	if (!q->who->trusted) { /* IBA 15.2.5.17: PortGID, JoinState, ProxyJoin zero */
		memset(r + 16, 0, 16);
		r[48] &= 0xf0;
		r[49] = 0;
	}
	g_byte_array_append(q->out, r, MCMR_SIZE);
}

/* The join-state bits (and scope) a query asks for, compared under its mask. */
static int state_matches(const struct query *q, uint8_t scope_state)
{
	uint8_t m = (uint8_t)((q->mask & MCMR_SCOPE ? 0xf0 : 0) | (q->mask & MCMR_JOIN_STATE ? 0x0f : 0));
	return (q->rec[48] & m) == (scope_state & m);
}

static void query_group(struct mc_group *grp, void *ctx)
{
	struct query *q = ctx;
	const uint8_t *rec = q->rec;
	if ((q->mask & MCMR_MGID) && memcmp(rec, grp->mgid, 16))
		return;
	if (q->env->pkey_ok && !q->env->pkey_ok(q->env->ctx, q->who->port_guid, grp->p.pkey))
		return; /* the requester is not in the group's partition */
	if (!compatible(grp, rec, q->mask, 1) || ((q->mask & MCMR_PROXY) && (rec[49] & 0x80)))
		return;
	uint8_t scope = (uint8_t)(grp->p.scope << 4);
	if (q->mask & MCMR_PORT_GID) { /* that member's record */
		const struct mc_member *m = mc_member(grp, sa_be64(rec + 24));
		if (m && state_matches(q, (uint8_t)(scope | m->join_state)))
			add(q, grp, m);
		return;
	}
	if (q->who->trusted) { /* a record per member */
		for (guint i = 0; i < grp->members->len; i++) {
			const struct mc_member *m = &g_array_index(grp->members, struct mc_member, i);
			if (state_matches(q, (uint8_t)(scope | m->join_state)))
				add(q, grp, m);
		}
		return;
	}
	if (state_matches(q, scope)) /* the group's record */
		add(q, grp, NULL);
}

void mcm_query(struct mc_groups *g, const struct mcm_env *env, const uint8_t *rec, uint64_t mask,
	       const struct mcm_requester *who, GByteArray *out)
{
	struct query q = { rec, mask, who, env, out };
	mc_foreach(g, query_group, &q);
}
