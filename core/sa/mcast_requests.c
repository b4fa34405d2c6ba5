/* SPDX-License-Identifier: BSD-2-Clause */
/* mcast_requests.c - multicast groups through the SA: requests, generations, traps 66/67
 * (sa/mcast_requests.h). */
#include <string.h>
#include "base/log.h"
#include "mad/phase.h"
#include "routing/result.h"
#include "sa/ipoib_groups.h"
#include "sa/mcast_groups.h"
#include "sa/mcast_requests.h"
#include "sa/mcmember.h"
#include "sa/mlid.h"
#include "sa/path_record.h"
#include "sa/pkeys.h"
#include "sa/records.h"
#include "sa/reports.h"
#include "sa/state.h"
#include "sa/wire.h"

void sa_mcast_init(struct sa *sa)
{
	sa->mc = mc_groups_new();
	mc_set_consolidate_snm(sa->mc, sa->in.consolidate_snm);
	sa->mc_mtu = 4;
	sa->mc_rate = 3;
}

void sa_mcast_fini(struct sa *sa)
{
	mc_groups_free(sa->mc);
	sa->mc = NULL;
}

void sa_set_mcast_hook(struct sa *sa, void (*changed)(void *ctx, uint16_t mlid), void *ctx)
{
	sa->mc_changed = changed;
	sa->mc_ctx = ctx;
}

struct mc_groups *sa_mcast_groups(struct sa *sa)
{
	return sa->mc;
}

unsigned sa_mcast_partitions(struct sa *sa, const struct part_policy *pp)
{
	return ipoib_groups_create(sa->mc, pp, sa->in.packet_life, sa->in.qos_on);
}

/* May port (GUID) be a member of partition pkey: is the key in its P_Key table? (Either
 * membership: a limited member may join a full-member group, as on OpenSM.) */
static int in_partition(void *ctx, uint64_t guid, uint16_t pkey)
{
	const struct sa *sa = ctx;
	uint32_t p = sa->in.r ? fabric_port_by_guid(sa->in.r->f, guid) : IBSM_NONE;
	if (p == IBSM_NONE)
		return 0;
	uint32_t n;
	const uint16_t *keys = sa->in.pk ? sa_pkeys_of(sa->in.pk, p, &n) : NULL;
	if (!keys)
		return 1; /* not known: not refused */
	for (uint32_t i = 0; i < n; i++)
		if ((keys[i] & 0x7fff) == (pkey & 0x7fff) && (keys[i] & 0x7fff))
			return 1;
	return 0;
}

/* Trap 66 (group created) or 67 (deleted) to the subscribers (data: 6 reserved bytes, MGID). */
static void mcast_notice(struct sa *sa, uint16_t trap, const uint8_t *mgid)
{
	uint8_t details[54] = { 0 };
	memcpy(details + 6, mgid, 16);
	sa_reports_notice(sa, trap, details, phase_now());
}

static uint16_t rec_mlid(const uint8_t *rec)
{
	return (uint16_t)(rec[36] << 8 | rec[37]);
}

/* A requester the published generation does not know (or none published) is refused: it
 * cannot be a member, and no partition of it is known. */
void sa_mcast_request(struct sa *sa, const struct sa_request *rq, const struct sa_view *v, double now,
		      struct sa_answer *a)
{
	(void)now;
	const struct fabric *f = v->f;
	uint32_t port = v->requester;
	if (port == IBSM_NONE) {
		a->status = SA_ERR_REQ_INVALID;
		return;
	}
	struct mcm_requester who = { .port_guid = f->ports[port].guid,
				     .trusted = rq->sm_key != 0 /* == sa_key */ };
	struct mcm_env env = { .max_mtu = sa->mc_mtu, .max_rate = sa->mc_rate,
			       .packet_life = sa->in.packet_life, .pkey_ok = in_partition, .ctx = sa,
			       .no_create_check = !sa->in.mc_create_check,
			       .no_join_check = !sa->in.mc_join_check };
	if (rq->method != SA_SET && rq->method != SA_DELETE) {
		mcm_query(sa->mc, &env, rq->record, rq->comp_mask, &who, a->recs);
		return;
	}
	uint8_t out[MCMR_SIZE];
	int changed;
	if (rq->method == SA_SET) {
		a->status = mcm_join(sa->mc, &env, rq->record, rq->comp_mask, &who, out, &changed);
		if (!a->status && changed)
			mcast_notice(sa, 66, out);
	} else {
		a->status = mcm_leave(sa->mc, &env, rq->record, rq->comp_mask, &who, out, &changed);
		if (!a->status && changed)
			mcast_notice(sa, 67, out);
	}
	if (a->status)
		return;
	g_byte_array_append(a->recs, out, MCMR_SIZE);
	sa->st.mcast_changes++;
	if (sa->mc_changed)
		sa->mc_changed(sa->mc_ctx, rec_mlid(out));
}

/* The most a multicast group may ask of the generation: the least MTU and rate of every
 * ACTIVE link (groups span the subnet); and the MLIDs every switch can forward (the least
 * MulticastFDBCap): groups beyond are refused NO_RESOURCES, as OpenSM refuses them. */
void sa_mcast_limits(struct sa *sa, const struct fabric *f)
{
	uint8_t mtu = 0xff;
	unsigned units = ~0u;
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		const struct ibsm_port *x = &f->ports[p];
		if (x->peer == IBSM_NONE || x->state != IBSM_STATE_ACTIVE || !x->mtu_cap)
			continue;
		if (x->mtu_cap < mtu)
			mtu = x->mtu_cap;
		unsigned u = pr_port_units(x);
		if (u < units)
			units = u;
	}
	sa->mc_mtu = mtu == 0xff ? 4 : mtu;
	sa->mc_rate = units == ~0u ? 3 : pr_rate_at_most(units);
	uint32_t cap = 0x4000; /* the whole multicast LID space */
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		const struct node_extra *x = &f->nx[f->switches[s].node];
		if (x->have_switchinfo && x->mft_cap && x->mft_cap < cap)
			cap = x->mft_cap;
	}
	mc_set_mlid_limit(sa->mc, (uint16_t)(MLID_FIRST + cap - 1));
}

struct gone {
	const struct fabric *f;
	GArray *guids;
};

static void collect_gone(struct mc_group *grp, void *ctx)
{
	struct gone *g = ctx;
	for (guint i = 0; i < grp->members->len; i++) {
		uint64_t guid = g_array_index(grp->members, struct mc_member, i).port_guid;
		uint32_t p = fabric_port_by_guid(g->f, guid);
		if (p == IBSM_NONE || !g->f->ports[p].lid)
			g_array_append_val(g->guids, guid);
	}
}

struct mgids {
	GArray *all; /* of uint8_t[16] */
};

static void collect_mgid(struct mc_group *grp, void *ctx)
{
	g_array_append_vals(((struct mgids *)ctx)->all, grp->mgid, 1);
}

void sa_mcast_ports_gone(struct sa *sa, const struct fabric *f)
{
	struct gone g = { f, g_array_new(FALSE, FALSE, sizeof(uint64_t)) };
	mc_foreach(sa->mc, collect_gone, &g);
	if (!g.guids->len) {
		g_array_free(g.guids, TRUE);
		return;
	}
	struct mgids before = { g_array_new(FALSE, FALSE, 16) };
	mc_foreach(sa->mc, collect_mgid, &before);
	unsigned deleted = 0;
	for (guint i = 0; i < g.guids->len; i++)
		deleted += mc_port_gone(sa->mc, g_array_index(g.guids, uint64_t, i));
	LOG_I("MCR-0001", "%u multicast memberships of ports that left the fabric removed, %u groups "
	      "deleted with them", g.guids->len, deleted);
	for (guint i = 0; deleted && i < before.all->len; i++) {
		const uint8_t *mgid = (const uint8_t *)before.all->data + 16 * i;
		if (!mc_find(sa->mc, mgid))
			mcast_notice(sa, 67, mgid);
	}
	g_array_free(before.all, TRUE);
	g_array_free(g.guids, TRUE);
}
