/* SPDX-License-Identifier: BSD-2-Clause */
/* mcast_groups.c - the group registry (mcast_groups.h): groups by MGID in a hash table, their
 * MLIDs from the pool (mlid.c), members in a small array per group. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "base/activity.h"
#include "sa/mcast_groups.h"
#include "sa/mlid.h"

struct mc_groups {
	GHashTable *by_mgid;    /* 16-byte MGID (the group's own copy) -> struct mc_group * */
	struct mc_group *by_mlid[MLID_LAST - MLID_FIRST + 1];
	struct mlid_pool *pool;
	uint16_t mlid_limit;    /* the highest MLID every switch's MFT can hold */
	GHashTable *memberships; /* of struct port_count, by port GUID */
	uint32_t serial;
	int consolidate_snm;    /* consolidate_ipv6_snm_req */
};

static guint mgid_hash(gconstpointer k)
{
	const uint8_t *m = k;
	guint h = 2166136261u;
	for (int i = 0; i < 16; i++)
		h = (h ^ m[i]) * 16777619u;
	return h;
}

static gboolean mgid_equal(gconstpointer a, gconstpointer b)
{
	return !memcmp(a, b, 16);
}

static void group_free(gpointer p)
{
	struct mc_group *grp = p;
	g_array_free(grp->members, TRUE);
	g_free(grp);
}

struct mc_groups *mc_groups_new(void)
{
	struct mc_groups *g = g_new0(struct mc_groups, 1);
	g->by_mgid = g_hash_table_new_full(mgid_hash, mgid_equal, NULL, group_free);
	g->pool = mlid_pool_new();
	g->mlid_limit = MLID_LAST;
	g->memberships = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	return g;
}

void mc_groups_free(struct mc_groups *g)
{
	if (!g)
		return;
	g_hash_table_destroy(g->by_mgid);
	g_hash_table_destroy(g->memberships);
	mlid_pool_free(g->pool);
	g_free(g);
}

struct mc_group *mc_find(struct mc_groups *g, const uint8_t mgid[16])
{
	return g_hash_table_lookup(g->by_mgid, mgid);
}

struct mc_group *mc_find_mlid(struct mc_groups *g, uint16_t mlid)
{
	if (mlid < MLID_FIRST || mlid > MLID_LAST)
		return NULL;
	return g->by_mlid[mlid - MLID_FIRST];
}

/* The activity report's MGID: eight groups of 4 hex digits, as an IPv6 address is written. */
static const char *mgid_text(const uint8_t mgid[16], char buf[40])
{
	for (int i = 0; i < 8; i++)
		snprintf(buf + 5 * i, 6, "%02x%02x%s", mgid[2 * i], mgid[2 * i + 1], i < 7 ? ":" : "");
	return buf;
}

/* A group with its MLID taken: indexed by MGID and MLID, reported as created. */
static struct mc_group *group_add(struct mc_groups *g, const uint8_t mgid[16], uint16_t mlid,
				  const struct mc_params *p, int persistent)
{
	struct mc_group *grp = g_new0(struct mc_group, 1);
	memcpy(grp->mgid, mgid, 16);
	grp->mlid = mlid;
	grp->p = *p;
	grp->persistent = persistent;
	grp->members = g_array_new(FALSE, TRUE, sizeof(struct mc_member));
	g_hash_table_insert(g->by_mgid, grp->mgid, grp);
	struct mc_group **at = &g->by_mlid[mlid - MLID_FIRST];
	while (*at) /* an MLID shared: the new group last */
		at = &(*at)->mlid_next;
	*at = grp;
	char t[40];
	if (activity_on(ACT_MCG_CHANGE))
		activity_report(ACT_MCG_CHANGE, "mlid=0x%04x mgid=%s change=0", mlid, mgid_text(mgid, t));
	return grp;
}

/* OpenSM's test of an IPv6 solicited-node MGID: ff, flags with T set, 601b, any P_Key, 0000,
 * then 0000 000x (x & 0xf1 = 1), ff and any 24 bits. */
static int ipv6_snm(const uint8_t *m)
{
	return m[0] == 0xff && (m[1] & 0x10) && m[2] == 0x60 && m[3] == 0x1b && !m[6] && !m[7] &&
	       !m[8] && !m[9] && !m[10] && (m[11] & 0xf1) == 0x01 && m[12] == 0xff;
}

/* The MLID of an existing group whose MGID starts with the same 10 bytes (0: none). */
static uint16_t snm_mlid(struct mc_groups *g, const uint8_t mgid[16])
{
	GHashTableIter it;
	gpointer v;
	uint16_t best = 0;
	g_hash_table_iter_init(&it, g->by_mgid);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		const struct mc_group *x = v;
		if (!memcmp(x->mgid, mgid, 10) && (!best || x->mlid < best))
			best = x->mlid;
	}
	return best;
}

void mc_set_consolidate_snm(struct mc_groups *g, int on)
{
	g->consolidate_snm = on;
}

struct mc_group *mc_create(struct mc_groups *g, const uint8_t mgid[16], const struct mc_params *p,
			   int persistent)
{
	if (mc_find(g, mgid))
		return NULL;
	uint16_t shared = g->consolidate_snm && ipv6_snm(mgid) ? snm_mlid(g, mgid) : 0;
	if (shared)
		return group_add(g, mgid, shared, p, persistent);
	uint16_t mlid = mlid_alloc(g->pool);
	if (!mlid)
		return NULL;
	if (mlid > g->mlid_limit) { /* the switches could not forward it */
		mlid_release(g->pool, mlid);
		return NULL;
	}
	return group_add(g, mgid, mlid, p, persistent);
}

/* A port and the number of groups it is a member of (key and value of g->memberships). */
struct port_count {
	uint64_t port_guid;     /* first: the key, hashed as a gint64 */
	unsigned n;
};

/* One more (delta 1) or one fewer (-1) group port_guid is a member of. */
static void count_membership(struct mc_groups *g, uint64_t port_guid, int delta)
{
	struct port_count *c = g_hash_table_lookup(g->memberships, &port_guid);
	if (!c) {
		if (delta < 0)
			return;
		c = g_new0(struct port_count, 1);
		c->port_guid = port_guid;
		g_hash_table_add(g->memberships, c);
	}
	c->n += (unsigned)delta;
	if (!c->n)
		g_hash_table_remove(g->memberships, &port_guid); /* frees c */
}

unsigned mc_memberships(const struct mc_groups *g, uint64_t port_guid)
{
	const struct port_count *c = g_hash_table_lookup(g->memberships, &port_guid);
	return c ? c->n : 0;
}

void mc_set_mlid_limit(struct mc_groups *g, uint16_t last)
{
	g->mlid_limit = last < MLID_FIRST ? MLID_FIRST : last > MLID_LAST ? MLID_LAST : last;
}

uint16_t mc_mlid_limit(const struct mc_groups *g)
{
	return g->mlid_limit;
}

static int member_index(const struct mc_group *grp, uint64_t port_guid)
{
	for (guint i = 0; i < grp->members->len; i++)
		if (g_array_index(grp->members, struct mc_member, i).port_guid == port_guid)
			return (int)i;
	return -1;
}

const struct mc_member *mc_member(const struct mc_group *grp, uint64_t port_guid)
{
	int i = member_index(grp, port_guid);
	return i < 0 ? NULL : &g_array_index(grp->members, struct mc_member, i);
}

uint8_t mc_join(struct mc_groups *g, struct mc_group *grp, uint64_t port_guid, const uint8_t gid[16],
		uint8_t state, int proxy)
{
	int i = member_index(grp, port_guid);
	if (i < 0) {
		count_membership(g, port_guid, 1);
		struct mc_member m = { .port_guid = port_guid, .proxy = (uint8_t)!!proxy };
		memcpy(m.gid, gid, 16);
		g_array_append_val(grp->members, m);
		i = (int)grp->members->len - 1;
		char t[40];
		if (activity_on(ACT_MCM_MEMBER))
			activity_report(ACT_MCM_MEMBER, "mlid=0x%04x mgid=%s port_guid=0x%016" PRIx64
					" join_state=1", grp->mlid, mgid_text(grp->mgid, t), port_guid);
	}
	struct mc_member *m = &g_array_index(grp->members, struct mc_member, i);
	if (!(m->join_state & MC_FULL) && (state & MC_FULL))
		grp->n_full++;
	m->join_state |= state & MC_STATES;
	return m->join_state;
}

void mc_delete(struct mc_groups *g, struct mc_group *grp)
{
	for (guint i = 0; i < grp->members->len; i++)
		count_membership(g, g_array_index(grp->members, struct mc_member, i).port_guid, -1);
	struct mc_group **at = &g->by_mlid[grp->mlid - MLID_FIRST];
	while (*at && *at != grp)
		at = &(*at)->mlid_next;
	if (*at)
		*at = grp->mlid_next;
	char t[40];
	if (activity_on(ACT_MCG_CHANGE))
		activity_report(ACT_MCG_CHANGE, "mlid=0x%04x mgid=%s change=1", grp->mlid,
				mgid_text(grp->mgid, t));
	if (!g->by_mlid[grp->mlid - MLID_FIRST]) /* the last group of its MLID */
		mlid_release(g->pool, grp->mlid);
	g_hash_table_remove(g->by_mgid, grp->mgid); /* frees grp */
}

/* Member i of grp is no member any more. */
static void remove_member(struct mc_groups *g, struct mc_group *grp, guint i)
{
	uint64_t port_guid = g_array_index(grp->members, struct mc_member, i).port_guid;
	g_array_remove_index_fast(grp->members, i);
	count_membership(g, port_guid, -1);
	char t[40];
	if (activity_on(ACT_MCM_MEMBER))
		activity_report(ACT_MCM_MEMBER, "mlid=0x%04x mgid=%s port_guid=0x%016" PRIx64
				" join_state=-1", grp->mlid, mgid_text(grp->mgid, t), port_guid);
}

int mc_leave(struct mc_groups *g, struct mc_group *grp, uint64_t port_guid, uint8_t state)
{
	int i = member_index(grp, port_guid);
	if (i < 0)
		return -1;
	struct mc_member *m = &g_array_index(grp->members, struct mc_member, i);
	uint8_t was = m->join_state, now = (uint8_t)(was & ~(state & MC_STATES));
	int lost_full = (was & MC_FULL) && !(now & MC_FULL);
	unsigned others = grp->n_full - (was & MC_FULL ? 1u : 0u); /* other full members */
	if ((now & MC_FULL) || (now && others))
		m->join_state = now;
	else
		remove_member(g, grp, (guint)i);
	if (lost_full)
		grp->n_full--;
	if (!grp->n_full && !grp->persistent) {
		mc_delete(g, grp);
		return 1;
	}
	if (lost_full && !grp->n_full) /* a persistent group: kept, emptied */
		while (grp->members->len)
			remove_member(g, grp, grp->members->len - 1);
	return 0;
}

unsigned mc_port_gone(struct mc_groups *g, uint64_t port_guid)
{
	unsigned deleted = 0;
	for (unsigned k = 0; k < G_N_ELEMENTS(g->by_mlid); k++) {
		for (struct mc_group *grp = g->by_mlid[k], *next; grp; grp = next) {
			next = grp->mlid_next;
			if (member_index(grp, port_guid) >= 0)
				deleted += mc_leave(g, grp, port_guid, MC_STATES) == 1;
		}
	}
	return deleted;
}

unsigned mc_count(const struct mc_groups *g)
{
	return g_hash_table_size(g->by_mgid);
}

void mc_foreach(struct mc_groups *g, void (*fn)(struct mc_group *grp, void *ctx), void *ctx)
{
	for (unsigned k = 0; k < G_N_ELEMENTS(g->by_mlid); k++)
		for (struct mc_group *grp = g->by_mlid[k], *next; grp; grp = next) {
			next = grp->mlid_next;
			fn(grp, ctx);
		}
}

unsigned mc_mlids_in_use(const struct mc_groups *g)
{
	return mlid_in_use(g->pool);
}

uint32_t mc_next_serial(struct mc_groups *g)
{
	return ++g->serial;
}

/* ---- kept across a restart (sa/sa_db.c) ---- */

struct mc_group *mc_restore(struct mc_groups *g, const uint8_t mgid[16], uint16_t mlid,
			    const struct mc_params *p, int *existed)
{
	*existed = 0;
	struct mc_group *grp = mc_find(g, mgid);
	if (grp) {
		*existed = grp->mlid == mlid;
		return grp->mlid == mlid ? grp : NULL;
	}
	if (mlid_take(g->pool, mlid) < 0)
		return NULL; /* out of range, or another group's */
	return group_add(g, mgid, mlid, p, 0);
}
