/* SPDX-License-Identifier: BSD-2-Clause */
/* ucast_cache.c - keeps the last routes and checks them against a new generation: a CA, router
 * or leaf switch going down or coming back leaves every route that still matters intact, so
 * a large fabric is not re-routed for it (OpenSM's unicast routing cache, -A/--ucast_cache in
 * opensm(8); opensm/osm_ucast_cache.c). */
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include "routing/ucast_cache.h"

struct cached_switch {
	uint8_t nports;
	uint64_t *peer;        /* [nports + 1]: neighbour node GUID behind each port, 0 = none */
	uint8_t *row;          /* [stride] */
};

struct ucast_cache {
	GHashTable *by_guid;   /* switch node GUID -> struct cached_switch * */
	uint32_t stride;
};

static void cached_free(gpointer p)
{
	struct cached_switch *c = p;
	g_free(c->peer);
	g_free(c->row);
	g_free(c);
}

struct ucast_cache *ucast_cache_new(void)
{
	struct ucast_cache *c = g_new0(struct ucast_cache, 1);
	c->by_guid = g_hash_table_new_full(model_guid_hash, model_guid_equal, g_free, cached_free);
	return c;
}

void ucast_cache_free(struct ucast_cache *c)
{
	if (!c)
		return;
	g_hash_table_destroy(c->by_guid);
	g_free(c);
}

static uint64_t peer_guid(const struct fabric *f, uint32_t port)
{
	uint32_t q = f->ports[port].peer;
	return q == IBSM_NONE ? 0 : f->nodes[f->ports[q].node].guid;
}

void ucast_cache_store(struct ucast_cache *c, const struct fabric *f, const uint8_t *lft,
		       uint32_t stride)
{
	g_hash_table_remove_all(c->by_guid);
	c->stride = stride;
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		const struct ibsm_node *n = &f->nodes[f->switches[s].node];
		struct cached_switch *cs = g_new0(struct cached_switch, 1);
		cs->nports = n->nports;
		cs->peer = g_new0(uint64_t, (size_t)n->nports + 1);
		for (uint32_t p = 1; p <= n->nports; p++)
			cs->peer[p] = peer_guid(f, n->port0 + p);
		cs->row = g_memdup2(lft + (size_t)s * stride, stride);
		uint64_t *k = g_new(uint64_t, 1);
		*k = n->guid;
		g_hash_table_insert(c->by_guid, k, cs);
	}
}

int ucast_cache_apply(const struct ucast_cache *c, const struct fabric *f, uint8_t *lft,
		      uint32_t stride, char *why, size_t why_len)
{
	if (!c || !c->stride) {
		snprintf(why, why_len, "no cached routes");
		return 0;
	}
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		const struct ibsm_node *n = &f->nodes[f->switches[s].node];
		const struct cached_switch *cs = g_hash_table_lookup(c->by_guid, &n->guid);
		if (!cs || cs->nports != n->nports) {
			snprintf(why, why_len, "switch 0x%016" G_GINT64_MODIFIER "x (%s) is new", n->guid, n->desc);
			return 0;
		}
		uint8_t *row = lft + (size_t)s * stride;
		memset(row, IBSM_NO_PORT, stride);
		memcpy(row, cs->row, MIN(stride, c->stride));
		for (uint32_t lid = 1; lid < stride && lid <= f->pub.max_lid; lid++) {
			uint32_t dest = f->lid_port[lid];
			if (dest == IBSM_NONE) {
				row[lid] = IBSM_NO_PORT; /* no such LID now (a CA gone): as a fresh routing */
				continue;
			}
			uint8_t out = row[lid];
			if (out == 0 && f->ports[dest].node == f->switches[s].node)
				continue;
			if (out == IBSM_NO_PORT || out == 0 || out > n->nports) {
				snprintf(why, why_len, "LID %u has no cached route on switch 0x%016"
					 G_GINT64_MODIFIER "x", lid, n->guid);
				return 0;
			}
			uint64_t now = peer_guid(f, n->port0 + out);
			if (!now || now != cs->peer[out]) {
				snprintf(why, why_len, "switch 0x%016" G_GINT64_MODIFIER "x port %u used by LID %u "
					 "is %s", n->guid, out, lid, now ? "cabled differently" : "down");
				return 0;
			}
		}
	}
	return 1;
}
