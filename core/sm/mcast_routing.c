/* SPDX-License-Identifier: BSD-2-Clause */
/* mcast_routing.c - multicast trees and MFTs as the SM runs them (mcast_routing.h). */
#include <inttypes.h>
#include <string.h>
#include "base/mad_cpu.h"
#include "base/activity.h"
#include "base/log.h"
#include "fabric/dump.h"
#include "program/mft.h"
#include "routing/mcast_tree.h"
#include "sa/mcast_groups.h"
#include "sm/mcast_routing.h"

#define N_MLIDS (0xFFFF - MFT_MLID_FIRST)   /* 0xC000 .. 0xFFFE */

struct mcast_mgr {
	struct routing_result *r;      /* the routes the trees are for (a reference) */
	struct mcast_topo *topo;       /* its generation's hop matrix and scratch for trees */
	uint64_t (**tree)[4];          /* [N_MLIDS]: egress per switch of MLID 0xC000 + i, or NULL */
	unsigned n_trees;
	uint64_t dirty[(N_MLIDS + 63) / 64]; /* MLIDs whose members changed */
	int any_dirty;
	guint idle;                    /* the update after joins and leaves, scheduled */
	struct sm *sm;
	/* topo prepared (its hop matrix: tens of ms at 1000 switches) on a thread of its own, so
	 * that neither a join nor the sweep keeps the event loop from the fabric that long */
	GThread *prep;
	gint prep_done;
	guint prep_watch;              /* update() again once prep is done */
};

static gpointer prep_main(gpointer p)
{
	struct mcast_mgr *m = p;
	mcast_topo_prepare(m->topo);
	g_atomic_int_set(&m->prep_done, 1);
	return NULL;
}

static void prep_start(struct mcast_mgr *m)
{
	if (m->prep || !m->topo || mcast_topo_prepared(m->topo))
		return;
	g_atomic_int_set(&m->prep_done, 0);
	m->prep = mad_cpu_thread_new("ibsm-mctopo", prep_main, m);
}

static void prep_join(struct mcast_mgr *m)
{
	if (m->prep)
		g_thread_join(m->prep);
	m->prep = NULL;
	if (m->prep_watch)
		g_source_remove(m->prep_watch);
	m->prep_watch = 0;
}

/* In a sweep: prepared on its thread while this one serves the fabric. */
static void prep_wait(struct mcast_mgr *m)
{
	prep_start(m);
	for (int ms = 1; m->prep && !g_atomic_int_get(&m->prep_done); ms = MIN(ms * 2, 4))
		transport_poll(m->sm->t, ms, 0);
	prep_join(m);
}

static gboolean update(gpointer ctx);

static gboolean prep_check(gpointer ctx)
{
	struct mcast_mgr *m = ctx;
	if (m->prep && !g_atomic_int_get(&m->prep_done))
		return G_SOURCE_CONTINUE;
	m->prep_watch = 0; /* removed by returning REMOVE, not by prep_join */
	prep_join(m);
	if (m->any_dirty && !m->idle)
		m->idle = g_idle_add_full(G_PRIORITY_DEFAULT, update, m, NULL);
	return G_SOURCE_REMOVE;
}

static void drop_tree(struct mcast_mgr *m, uint32_t i)
{
	if (m->tree[i]) {
		g_free(m->tree[i]);
		m->tree[i] = NULL;
		m->n_trees--;
	}
}

static void drop_trees(struct mcast_mgr *m)
{
	for (uint32_t i = 0; i < N_MLIDS && m->n_trees; i++)
		drop_tree(m, i);
}

/* The tree of group grp over generation m->r->f, replacing the one it had. */
static void build_tree(struct mcast_mgr *m, const struct mc_group *grp)
{
	uint32_t i = (uint32_t)grp->mlid - MFT_MLID_FIRST;
	if (i >= N_MLIDS)
		return;
	drop_tree(m, i);
	const struct fabric *f = m->r->f;
	/* the groups sharing the MLID (consolidate_ipv6_snm_req) have one tree: all their members */
	const struct mc_group *head = mc_find_mlid(sa_mcast_groups(m->sm->sa), grp->mlid);
	if (head)
		grp = head;
	guint n = 0;
	for (const struct mc_group *x = grp; x; x = x->mlid_next)
		n += x->members->len;
	if (!n)
		return;
	uint32_t *ports = g_new(uint32_t, n), k = 0;
	for (const struct mc_group *x = grp; x; x = x->mlid_next)
		for (guint j = 0; j < x->members->len; j++) {
			uint32_t p = fabric_port_by_guid(f, g_array_index(x->members, struct mc_member, j).port_guid);
			int seen = 0;
			for (uint32_t q = 0; q < k && !seen && x != grp; q++)
				seen = ports[q] == p;
			if (p != IBSM_NONE && !seen)
				ports[k++] = p;
		}
	uint64_t (*egress)[4] = g_malloc0(sizeof(uint64_t[4]) * (f->pub.n_switches ? f->pub.n_switches : 1));
	if (mcast_tree_route(m->topo, m->r, grp->mlid, ports, k, egress) < 0)
		LOG_E("MCG-0002", "MLID 0x%04x: its members are not all connected: those cut off from "
		      "the tree's root get no copies", grp->mlid);
	m->tree[i] = egress;
	m->n_trees++;
	activity_report(ACT_MCG_TREE_CALC, "mlid=0x%04x", grp->mlid);
	g_free(ports);
}

static const uint64_t *want(void *ctx, uint32_t sw, uint16_t mlid)
{
	struct mcast_mgr *m = ctx;
	uint32_t i = (uint32_t)mlid - MFT_MLID_FIRST;
	return i < N_MLIDS && m->tree[i] ? m->tree[i][sw] : NULL;
}

static uint16_t top_mlid(struct mcast_mgr *m)
{
	for (uint32_t i = N_MLIDS; i > 0; i--)
		if (m->tree[i - 1])
			return (uint16_t)(MFT_MLID_FIRST + i - 1);
	return 0;
}

static uint32_t program(struct mcast_mgr *m)
{
	struct mft_stats st;
	return mft_program(programmer_mft(m->sm->prog), m->r->f, top_mlid(m), want, m, &st);
}

/* opensm.mcfdbs (with -D): every tree, as the switches are told to forward. */
static void dump(struct mcast_mgr *m)
{
	const struct fabric *f = m->r->f;
	uint32_t ng = 0;
	uint16_t *mlids = g_new(uint16_t, m->n_trees + 1);
	const uint64_t (**trees)[4] = g_malloc(sizeof(*trees) * (m->n_trees + 1));
	for (uint32_t i = 0; i < N_MLIDS && ng < m->n_trees; i++)
		if (m->tree[i]) {
			mlids[ng] = (uint16_t)(MFT_MLID_FIRST + i);
			trees[ng++] = (const uint64_t (*)[4])m->tree[i];
		}
	GError *err = NULL;
	if (m->sm->opt->tmp_dir && dump_mcfdbs_groups(f, ng, mlids, trees, m->sm->opt->tmp_dir, &err) < 0) {
		LOG_E("MCG-0003", "%s", err->message);
		g_clear_error(&err);
	}
	g_free(mlids);
	g_free(trees);
}

/* After joins and leaves: the trees of the groups that changed, and the MFT blocks that
 * differ now. The Sets go out without waiting; their replies update the programmer's memory. */
static gboolean update(gpointer ctx)
{
	struct mcast_mgr *m = ctx;
	m->idle = 0;
	if (!m->any_dirty)
		return G_SOURCE_REMOVE;
	if (m->r && m->topo && (m->prep || !mcast_topo_prepared(m->topo)) && m->sm->state == IB_SM_MASTER &&
	    !m->sm->opt->disable_multicast) {
		/* the first join over this generation: its topology prepared off the event loop,
		 * then this update (the SA has answered the join already) */
		prep_start(m);
		if (!m->prep_watch)
			m->prep_watch = g_timeout_add(2, prep_check, m);
		return G_SOURCE_REMOVE;
	}
	m->any_dirty = 0;
	if (!m->r || m->sm->state != IB_SM_MASTER || m->sm->opt->disable_multicast) {
		memset(m->dirty, 0, sizeof(m->dirty));
		return G_SOURCE_REMOVE;
	}
	struct mc_groups *groups = sa_mcast_groups(m->sm->sa);
	unsigned changed = 0;
	for (uint32_t w = 0; w < G_N_ELEMENTS(m->dirty); w++)
		while (m->dirty[w]) {
			uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(m->dirty[w]);
			m->dirty[w] &= m->dirty[w] - 1;
			const struct mc_group *grp = mc_find_mlid(groups, (uint16_t)(MFT_MLID_FIRST + i));
			if (grp)
				build_tree(m, grp);
			else
				drop_tree(m, i);
			changed++;
		}
	uint32_t sets = program(m);
	LOG_V("MCG-0004", "multicast: %u groups changed, %u MFT blocks sent", changed, sets);
	if (m->sm->opt->dump_routes)
		dump(m);
	return G_SOURCE_REMOVE;
}

static void on_change(void *ctx, uint16_t mlid)
{
	struct mcast_mgr *m = ctx;
	uint32_t i = (uint32_t)mlid - MFT_MLID_FIRST;
	if (i >= N_MLIDS)
		return;
	m->dirty[i / 64] |= 1ULL << (i % 64);
	m->any_dirty = 1;
	if (!m->idle)
		m->idle = g_idle_add_full(G_PRIORITY_DEFAULT, update, m, NULL); /* the umad source is always ready: an idle-priority one would starve */
}

void mcast_init(struct sm *sm)
{
	if (!sm->sa || !sm->prog)
		return;
	struct mcast_mgr *m = g_new0(struct mcast_mgr, 1);
	m->sm = sm;
	m->tree = g_malloc0(sizeof(*m->tree) * N_MLIDS);
	sm->mcast = m;
	sa_set_mcast_hook(sm->sa, on_change, m);
}

void mcast_free(struct sm *sm)
{
	struct mcast_mgr *m = sm->mcast;
	if (!m)
		return;
	if (m->idle)
		g_source_remove(m->idle);
	prep_join(m);
	sa_set_mcast_hook(sm->sa, NULL, NULL);
	drop_trees(m);
	g_free(m->tree);
	mcast_topo_free(m->topo);
	routing_result_unref(m->r);
	g_free(m);
	sm->mcast = NULL;
}

struct rebuild {
	struct mcast_mgr *m;
	unsigned groups, with_members;
};

static void rebuild_one(struct mc_group *grp, void *ctx)
{
	struct rebuild *rb = ctx;
	rb->groups++;
	build_tree(rb->m, grp);
	rb->with_members += grp->members->len > 0;
}

static void count_with_members(struct mc_group *grp, void *ctx)
{
	*(unsigned *)ctx += grp->members->len > 0;
}

void mcast_sweep(struct sm *sm, struct routing_result *r)
{
	struct mcast_mgr *m = sm->mcast;
	if (!m || !r)
		return;
	unsigned made = sa_mcast_partitions(sm->sa, sm->part_policy);
	if (sm->opt->disable_multicast) {
		/* OpenSM's disable_multicast (-d 3): the groups are kept, no MFT is written */
		drop_trees(m);
		memset(m->dirty, 0, sizeof(m->dirty));
		m->any_dirty = 0;
		LOG_I("MCG-0005", "multicast: disable_multicast is set: %u new groups kept, no MFT "
		      "written", made);
		return;
	}
	if (m->r != r) {
		prep_join(m);
		mcast_topo_free(m->topo);
		routing_result_unref(m->r);
		m->r = routing_result_ref(r);
		m->topo = mcast_topo_new(r->f);
	}
	drop_trees(m);
	memset(m->dirty, 0, sizeof(m->dirty));
	m->any_dirty = 0;
	unsigned with_members = 0;
	mc_foreach(sa_mcast_groups(sm->sa), count_with_members, &with_members);
	if (with_members)
		prep_wait(m);
	struct rebuild rb = { .m = m };
	mc_foreach(sa_mcast_groups(sm->sa), rebuild_one, &rb);
	struct mft_memory *mem = programmer_mft(sm->prog);
	uint64_t failed = mft_failures(mem);
	uint32_t sets = program(m);
	transport_drain(sm->t, &sm->stop);
	LOG_I("MCG-0001", "multicast: %u groups (%u new), %u with members, %u MFT blocks written, %"
	      PRIu64 " failed", rb.groups, made, rb.with_members, sets, mft_failures(mem) - failed);
	if (sm->opt->dump_routes)
		dump(m);
}

unsigned mcast_trees(const struct sm *sm)
{
	return sm->mcast ? sm->mcast->n_trees : 0;
}
