/* SPDX-License-Identifier: BSD-2-Clause */
/* repair.c - a repair instead of a whole discovery (repair.h): rounds of SMPs over a copy of
 * the last generation's builder (fabric/patch.h), each round reading the switches the last
 * one found changed, then one SwitchInfo to every switch not read to verify that nothing else
 * changed; directed routes that crossed a link gone are mended before each round. Discovery's
 * rules hold: PortStateChange is cleared before a switch's ports are read, NodeInfo goes
 * through a port only once its PortInfo shows LinkUp, routes never transit a CA. */
#include <inttypes.h>
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric/neighbors.h"
#include "fabric/patch.h"
#include "fabric/slice.h"
#include "mad/smp.h"
#include "sm/repair.h"

#define REPAIR_ROUNDS 12

enum { R_SWITCHINFO, R_PSC_CLEAR, R_PORTINFO, R_NODEINFO, R_CA_PORTINFO, R_NODEDESC, R_VERIFY,
       R_PORT0 };

struct repair {
	struct sm *sm;
	const struct fabric *prev;
	struct model_builder *b;
	GArray *queue;             /* uint32_t builder index: switches to read next round */
	GArray *later;             /* switches that did not answer: tried again once their
				    * neighbours were read (a switch that died is cut off by then) */
	GHashTable *unanswered;    /* builder index + 1 of the switches that did not answer once */
	GHashTable *read;          /* builder index + 1 -> trap_seq when its SwitchInfo was sent */
	int declined;
	char *why;
	size_t why_len;
	struct repair_stats *st;
};

static void on_reply(struct transport *t, const struct smp_req *r, int status,
		     const uint8_t *data, void *ctx);

static void decline(struct repair *rp, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void decline(struct repair *rp, const char *fmt, ...)
{
	if (rp->declined++)
		return;
	va_list ap;
	va_start(ap, fmt);
	g_vsnprintf(rp->why, rp->why_len, fmt, ap);
	va_end(ap);
}

/* The M_Key a management port of GUID `guid` holds: the last generation's, else derived. */
static uint64_t port_key(const struct repair *rp, uint64_t guid)
{
	const struct mkey_cfg *c = transport_mkey(rp->sm->t);
	if (!mkey_any(c) && !rp->prev->any_mkey)
		return 0;
	uint32_t old = fabric_port_by_guid(rp->prev, guid);
	if (old != IBSM_NONE && rp->prev->px[old].mkey)
		return rp->prev->px[old].mkey;
	return mkey_held_guess(c, guid);
}

/* An SMP to builder node idx, or (out > 0) out of its port `out`, presenting `key`. */
static void send_to(struct repair *rp, uint32_t idx, int out, uint8_t method, uint16_t attr,
		    uint32_t mod, uint8_t kind, uint16_t sub, uint64_t key, const uint8_t *data)
{
	const struct model_node_in *n = model_node(rp->b, idx);
	struct smp_req r;
	smp_req_init(&r, method, attr, mod, on_reply, rp, smp_cookie(kind, idx, sub));
	r.mkey = key;
	smp_req_route_dr(&r, n->dr_hops, n->dr_path);
	if (out > 0 && smp_req_route_append(&r, (uint8_t)out) < 0) {
		decline(rp, "a route longer than %u hops", SMP_DR_HOPS_MAX);
		return;
	}
	if (data)
		memcpy(r.data, data, SMP_DATA_SIZE);
	transport_submit(rp->sm->t, &r);
}

static int was_read(const struct repair *rp, uint32_t idx)
{
	return g_hash_table_contains(rp->read, GUINT_TO_POINTER(idx + 1));
}

/* Switch idx is read in the next round (once per repair). */
static void queue_switch(struct repair *rp, uint32_t idx)
{
	const struct model_node_in *n = model_node(rp->b, idx);
	if (!n || n->type != IBSM_SWITCH || was_read(rp, idx))
		return;
	for (guint i = 0; i < rp->queue->len; i++)
		if (g_array_index(rp->queue, uint32_t, i) == idx)
			return;
	g_array_append_val(rp->queue, idx);
}

static void read_ports(struct repair *rp, uint32_t idx)
{
	const struct model_node_in *n = model_node(rp->b, idx);
	for (uint32_t p = 1; p <= n->nports; p++)
		send_to(rp, idx, -1, IB_MAD_METHOD_GET, IB_ATTR_PORT_INFO, p, R_PORTINFO, (uint16_t)p,
			n->mkey, NULL);
	rp->st->ports_read += n->nports;
}

/* Port pn of a CA (or router) is not reached any more: nothing of it, as a discovery that
 * never reached it would have it. */
static void forget_end_port(struct model_node_in *ca, uint8_t pn)
{
	if (ca->type != IBSM_SWITCH && pn >= 1 && pn <= ca->nports)
		memset(&ca->ports[pn], 0, sizeof(ca->ports[pn]));
}

/* The link out of port p of switch idx is gone: its peer switch is read too. */
static void link_gone(struct repair *rp, uint32_t idx, uint8_t p)
{
	struct model_node_in *n = model_node(rp->b, idx);
	int peer = model_find_node(rp->b, n->ports[p].peer_node_guid);
	uint8_t pp = n->ports[p].peer_port;
	LOG_V("RPR-0001", "repair: link 0x%016" PRIx64 "[%u] - 0x%016" PRIx64 "[%u] is down", n->guid, p,
	      n->ports[p].peer_node_guid, pp);
	patch_unlink(rp->b, idx, p);
	rp->st->links_down++;
	if (peer < 0)
		return;
	struct model_node_in *pn = model_node(rp->b, (uint32_t)peer);
	if (pn->type == IBSM_SWITCH)
		queue_switch(rp, (uint32_t)peer);
	else
		forget_end_port(pn, pp);
}

static void got_portinfo(struct repair *rp, uint32_t idx, uint8_t p, const uint8_t *data)
{
	struct model_node_in *n = model_node(rp->b, idx);
	uint8_t old_state = n->ports[p].state, old_phys = n->ports[p].phys_state;
	int old_have = n->ports[p].have_portinfo;
	patch_take_portinfo(n, p, data);
	n->ports[p].reused = 0;
	if (n->ports[p].phys_state != IB_PHYS_LINKUP) {
		if (n->ports[p].peer_node_guid)
			link_gone(rp, idx, p);
		return;
	}
	/* LinkUp with nothing behind it, as before: a dead end discovery accepts too */
	if (!n->ports[p].peer_node_guid && old_have && old_phys == IB_PHYS_LINKUP)
		return;
	/* LinkUp: who is behind it now (a cable moved between two reads shows here) */
	rp->st->nodeinfo_sent++;
	send_to(rp, idx, p, IB_MAD_METHOD_GET, IB_ATTR_NODE_INFO, 0, R_NODEINFO,
		(uint16_t)(p | (old_state != n->ports[p].state ? 0x100 : 0)), 0, NULL);
}

/* PortInfo of port pn of end node ca, read through the link from switch sw's port sp. */
static void read_end_port(struct repair *rp, uint32_t sw, uint8_t sp, uint32_t ca, uint8_t pn)
{
	(void)ca;
	const struct model_node_in *c = model_node(rp->b, ca);
	send_to(rp, sw, sp, IB_MAD_METHOD_GET, IB_ATTR_PORT_INFO, pn, R_CA_PORTINFO, sp,
		port_key(rp, c->ports[pn].guid), NULL);
}

static void got_nodeinfo(struct repair *rp, uint32_t idx, uint16_t sub, const uint8_t *data)
{
	uint8_t p = (uint8_t)sub;
	int state_changed = sub & 0x100;
	struct model_node_in *n = model_node(rp->b, idx);
	void *ni = (void *)data;
	uint64_t guid = mad_get_field64(ni, 0, IB_NODE_GUID_F);
	uint8_t type = (uint8_t)mad_get_field(ni, 0, IB_NODE_TYPE_F);
	uint8_t local_port = (uint8_t)mad_get_field(ni, 0, IB_NODE_LOCAL_PORT_F);
	uint64_t port_guid = mad_get_field64(ni, 0, IB_NODE_PORT_GUID_F);
	if (n->ports[p].peer_node_guid == guid && n->ports[p].peer_port == local_port) {
		/* the same peer: a switch whose port state moved is read; an end port, its PortInfo */
		int q = model_find_node(rp->b, guid);
		if (q >= 0 && state_changed) {
			if (type == IBSM_SWITCH)
				queue_switch(rp, (uint32_t)q);
			else
				read_end_port(rp, idx, p, (uint32_t)q, local_port);
		}
		return;
	}
	if (n->ports[p].peer_node_guid)
		link_gone(rp, idx, p);
	int q = model_find_node(rp->b, guid);
	if (q < 0) {
		q = patch_add_nodeinfo(rp->b, data, &local_port);
		if (q < 0) {
			decline(rp, "node 0x%016" PRIx64 " of unknown type %u", guid, type);
			return;
		}
		struct model_node_in *c = model_node(rp->b, (uint32_t)q);
		n = model_node(rp->b, idx);
		memcpy(c->dr_path, n->dr_path, sizeof(c->dr_path));
		c->dr_hops = (uint8_t)(n->dr_hops + 1);
		c->dr_path[c->dr_hops] = p;
		c->mkey = port_key(rp, port_guid);
		rp->st->nodes_new++;
		model_link(rp->b, idx, p, (uint32_t)q, local_port);
		rp->st->links_up++;
		send_to(rp, (uint32_t)q, -1, IB_MAD_METHOD_GET, IB_ATTR_NODE_DESC, 0, R_NODEDESC, 0,
			c->mkey, NULL);
		if (type == IBSM_SWITCH) {
			/* a switch this generation did not have (back, or new): port 0 now, the rest
			 * when it is read in the next round, as discovery reads a switch */
			send_to(rp, (uint32_t)q, -1, IB_MAD_METHOD_GET, IB_ATTR_PORT_INFO, 0, R_PORT0, 0,
				c->mkey, NULL);
			queue_switch(rp, (uint32_t)q);
			return;
		}
		read_end_port(rp, idx, p, (uint32_t)q, local_port);
		return;
	}
	struct model_node_in *c = model_node(rp->b, (uint32_t)q);
	if (c->type != type || local_port > c->nports) {
		decline(rp, "node 0x%016" PRIx64 " answers unlike the last generation", guid);
		return;
	}
	if (c->ports[local_port].peer_node_guid) /* its far end moved here from elsewhere */
		patch_unlink(rp->b, (uint32_t)q, local_port);
	model_link(rp->b, idx, p, (uint32_t)q, local_port);
	rp->st->links_up++;
	if (type == IBSM_SWITCH) {
		queue_switch(rp, (uint32_t)q);
		return;
	}
	c->ports[local_port].guid = port_guid;
	c->ports[local_port].flags |= IBSM_PORT_PRESENT;
	read_end_port(rp, idx, p, (uint32_t)q, local_port);
}

static void got_switchinfo(struct repair *rp, uint32_t idx, const uint8_t *data)
{
	struct model_node_in *n = model_node(rp->b, idx);
	rp->st->switches_read++;
	uint16_t top = n->lft_top;
	int psc = patch_take_switchinfo(n, data);
	if (top && !n->lft_top) {
		decline(rp, "switch 0x%016" PRIx64 " was reset (LinearFDBTop 0)", n->guid);
		return;
	}
	if (psc) {
		/* clear it first: a change after the clear sets it again for the next check */
		uint8_t si[SMP_DATA_SIZE];
		memcpy(si, data, sizeof(si));
		mad_set_field(si, 0, IB_SW_STATE_CHANGE_F, 1);
		send_to(rp, idx, -1, IB_MAD_METHOD_SET, IB_ATTR_SWITCH_INFO, 0, R_PSC_CLEAR, 0, n->mkey, si);
		return;
	}
	read_ports(rp, idx);
}

static void on_reply(struct transport *t, const struct smp_req *r, int status,
		     const uint8_t *data, void *ctx)
{
	(void)t;
	struct repair *rp = ctx;
	uint32_t idx = smp_cookie_id(r->cookie);
	uint16_t sub = smp_cookie_sub(r->cookie);
	uint8_t kind = smp_cookie_kind(r->cookie);
	if (status && (kind == R_SWITCHINFO || kind == R_VERIFY) &&
	    !g_hash_table_contains(rp->unanswered, GUINT_TO_POINTER(idx + 1))) {
		/* gone, or its route crosses a link that went down: its neighbours say which */
		g_hash_table_add(rp->unanswered, GUINT_TO_POINTER(idx + 1));
		g_hash_table_remove(rp->read, GUINT_TO_POINTER(idx + 1));
		const struct model_node_in *n = model_node(rp->b, idx);
		for (uint32_t p = 1; p <= n->nports; p++) {
			int q = n->ports[p].peer_node_guid ? model_find_node(rp->b, n->ports[p].peer_node_guid) : -1;
			if (q >= 0)
				queue_switch(rp, (uint32_t)q);
		}
		g_array_append_val(rp->later, idx);
		return;
	}
	if (status) {
		char text[64];
		smp_status_text(status, text, sizeof(text));
		const struct model_node_in *n = model_node(rp->b, idx);
		decline(rp, "%s attr 0x%02x mod %u to 0x%016" PRIx64 " over %u hops failed: %s",
			smp_method_name(r->method), r->attr, r->mod, n ? n->guid : 0, r->hops, text);
		return;
	}
	if (rp->declined)
		return;
	/* it answers after all (its route was mended): routes may go through it again, or what
	 * hangs on it would be left out as cut off */
	if (kind == R_SWITCHINFO || kind == R_VERIFY)
		g_hash_table_remove(rp->unanswered, GUINT_TO_POINTER(idx + 1));
	switch (kind) {
	case R_SWITCHINFO: got_switchinfo(rp, idx, data); break;
	case R_PSC_CLEAR: read_ports(rp, idx); break;
	case R_PORTINFO: got_portinfo(rp, idx, (uint8_t)sub, data); break;
	case R_NODEINFO: got_nodeinfo(rp, idx, sub, data); break;
	case R_CA_PORTINFO: {
		struct model_node_in *n = model_node(rp->b, idx);
		int q = model_find_node(rp->b, n->ports[sub].peer_node_guid);
		if (q >= 0) {
			struct model_node_in *c = model_node(rp->b, (uint32_t)q);
			patch_take_portinfo(c, n->ports[sub].peer_port, data);
			c->ports[n->ports[sub].peer_port].reused = 0;
		}
		break;
	}
	case R_NODEDESC: patch_take_nodedesc(model_node(rp->b, idx), data); break;
	case R_PORT0: patch_take_portinfo(model_node(rp->b, idx), 0, data); break;
	case R_VERIFY:
		if (mad_get_field((void *)data, 0, IB_SW_LINEAR_FDB_TOP_F) != model_node(rp->b, idx)->lft_top) {
			decline(rp, "switch 0x%016" PRIx64 " holds another LinearFDBTop (reset?)",
				model_node(rp->b, idx)->guid);
		} else if (mad_get_field((void *)data, 0, IB_SW_STATE_CHANGE_F)) {
			g_hash_table_remove(rp->read, GUINT_TO_POINTER(idx + 1));
			queue_switch(rp, idx);
		}
		break;
	}
}

/* The switch a trap's issuer LID stands for: the switch itself, or the one a CA port is
 * linked to; IBSM_NONE if the last generation does not know it. */
static uint32_t trap_switch(const struct fabric *f, uint16_t lid)
{
	if (!lid || lid > f->pub.max_lid)
		return IBSM_NONE;
	uint32_t p = f->lid_port[lid];
	if (p == IBSM_NONE)
		return IBSM_NONE;
	const struct ibsm_node *n = &f->nodes[f->ports[p].node];
	if (n->type == IBSM_SWITCH)
		return f->ports[p].node;
	uint32_t q = f->ports[p].peer;
	return q != IBSM_NONE && f->nodes[f->ports[q].node].type == IBSM_SWITCH ? f->ports[q].node : IBSM_NONE;
}

/* Directed routes mended over what the builder holds now, never through a switch that did not
 * answer (it may be dead with its links still in the builder). */
static uint32_t fix_routes(struct repair *rp, uint8_t *reached)
{
	uint32_t n = model_count(rp->b);
	uint8_t *avoid = NULL;
	if (g_hash_table_size(rp->unanswered)) {
		avoid = g_new0(uint8_t, n);
		GHashTableIter it;
		gpointer k;
		g_hash_table_iter_init(&it, rp->unanswered);
		while (g_hash_table_iter_next(&it, &k, NULL))
			if (GPOINTER_TO_UINT(k) - 1 < n)
				avoid[GPOINTER_TO_UINT(k) - 1] = 1;
	}
	uint32_t changed = patch_fix_routes(rp->b, reached, avoid);
	g_free(avoid);
	return changed;
}

/* One round: the queued switches' routes mended, their SwitchInfo sent, all drained. */
static void run_round(struct repair *rp, uint8_t *reached)
{
	rp->st->routes_fixed += fix_routes(rp, reached);
	GArray *q = rp->queue;
	rp->queue = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	for (guint i = 0; i < q->len; i++) {
		uint32_t idx = g_array_index(q, uint32_t, i);
		if (!reached[idx])
			continue; /* cut off: left out of the generation with what hangs on it */
		g_hash_table_insert(rp->read, GUINT_TO_POINTER(idx + 1), GUINT_TO_POINTER(rp->sm->trap_seq));
		LOG_V("RPR-0002", "repair: reading switch 0x%016" PRIx64 " (%s) over %u hops",
		      model_node(rp->b, idx)->guid, model_node(rp->b, idx)->desc, model_node(rp->b, idx)->dr_hops);
		send_to(rp, idx, -1, IB_MAD_METHOD_GET, IB_ATTR_SWITCH_INFO, 0, R_SWITCHINFO, 0,
			model_node(rp->b, idx)->mkey, NULL);
	}
	g_array_free(q, TRUE);
	transport_drain(rp->sm->t, &rp->sm->stop);
}

/* Every switch not read yet: one SwitchInfo, PortStateChange checked. */
static void verify(struct repair *rp, uint8_t *reached)
{
	rp->st->routes_fixed += fix_routes(rp, reached);
	for (uint32_t i = 0; i < model_count(rp->b); i++) {
		const struct model_node_in *n = model_node(rp->b, i);
		if (n->type != IBSM_SWITCH || !reached[i] || was_read(rp, i))
			continue;
		g_hash_table_insert(rp->read, GUINT_TO_POINTER(i + 1), GUINT_TO_POINTER(rp->sm->trap_seq));
		send_to(rp, i, -1, IB_MAD_METHOD_GET, IB_ATTR_SWITCH_INFO, 0, R_VERIFY, 0, n->mkey, NULL);
		rp->st->verified++;
	}
	transport_drain(rp->sm->t, &rp->sm->stop);
}

/* Traps whose switch this repair read after they arrived are answered by it. */
static void drop_covered_traps(struct repair *rp)
{
	GArray *tl = rp->sm->trap_lids;
	for (guint i = 0; tl && i < tl->len;) {
		const struct trap_lid *e = &g_array_index(tl, struct trap_lid, i);
		uint32_t s = trap_switch(rp->prev, e->lid);
		gpointer v = NULL;
		int covered = s != IBSM_NONE &&
			      g_hash_table_lookup_extended(rp->read, GUINT_TO_POINTER(s + 1), NULL, &v) &&
			      GPOINTER_TO_UINT(v) >= e->seq;
		if (covered)
			g_array_remove_index(tl, i);
		else
			i++;
	}
	if (tl && !tl->len && !rp->sm->trap_full)
		rp->sm->trap_pending = 0;
}

struct fabric *repair_discover(struct sm *sm, struct repair_stats *st, char *why, size_t why_len)
{
	memset(st, 0, sizeof(*st));
	const struct fabric *prev = sm->fabric;
	struct repair rp = { .sm = sm, .prev = prev, .why = why, .why_len = why_len, .st = st,
			     .queue = g_array_new(FALSE, FALSE, sizeof(uint32_t)),
			     .later = g_array_new(FALSE, FALSE, sizeof(uint32_t)),
			     .unanswered = g_hash_table_new(NULL, NULL),
			     .read = g_hash_table_new(NULL, NULL) };
	why[0] = 0;
	/* the traps so far start it; those that arrive meanwhile are kept for the next sweep */
	GArray *start = sm->trap_lids;
	sm->trap_lids = g_array_new(FALSE, FALSE, sizeof(struct trap_lid));
	sm->trap_pending = 0;
	rp.b = patch_builder_from(prev);
	transport_step_now(sm->t); /* tens of ms on a large fabric: the SA is served between */
	for (guint i = 0; start && i < start->len; i++) {
		uint16_t lid = g_array_index(start, struct trap_lid, i).lid;
		uint32_t s = trap_switch(prev, lid);
		if (s == IBSM_NONE)
			decline(&rp, "trap 128 from LID %u, which is no switch or switch-linked port of the "
				"last generation", lid);
		else
			queue_switch(&rp, s); /* builder indexes are prev's node ids */
	}
	if (start)
		g_array_free(start, TRUE);
	if (!rp.queue->len)
		decline(&rp, "no switch to read");
	uint8_t *reached = NULL;
	int verified = 0;
	for (int round = 0; !rp.declined && !sm->stop; round++) {
		if (round >= REPAIR_ROUNDS) {
			decline(&rp, "still changing after %d rounds", REPAIR_ROUNDS);
			break;
		}
		g_free(reached);
		reached = g_new0(uint8_t, model_count(rp.b));
		if (!rp.queue->len && rp.later->len) { /* their neighbours are read: try them again */
			g_array_append_vals(rp.queue, rp.later->data, rp.later->len);
			g_array_set_size(rp.later, 0);
		}
		if (rp.queue->len) {
			run_round(&rp, reached);
		} else if (!verified) {
			verify(&rp, reached);
			verified = 1;
		} else {
			break;
		}
		st->rounds++;
	}
	if (sm->stop)
		decline(&rp, "stopping");
	struct fabric *f = NULL;
	if (!rp.declined) {
		g_free(reached);
		reached = g_new0(uint8_t, model_count(rp.b));
		st->routes_fixed += fix_routes(&rp, reached);
		uint32_t cut = 0;
		for (uint32_t i = 0; i < model_count(rp.b); i++)
			cut += !reached[i];
		/* a copy without what can no longer be reached, when something cannot */
		struct model_builder *out = cut ? patch_reachable(rp.b, reached, &st->nodes_dropped) : rp.b;
		GError *err = NULL;
		/* tens of ms on a large fabric: frozen (and both builders freed) on a thread of its own */
		f = slice_freeze(sm->t, out, rp.b, ++sm->generation, &err);
		rp.b = NULL;
		if (!f) {
			decline(&rp, "%s", err->message);
			g_clear_error(&err);
		} else {
			fabric_set_mkeys(f, transport_mkey(sm->t), prev);
			struct slicer sl;
			slicer_init(&sl, sm->t);
			fabric_record_neighbors(f, transport_mkey(sm->t), prev, &sl);
			drop_covered_traps(&rp);
		}
	}
	g_free(reached);
	model_builder_free(rp.b);
	g_array_free(rp.queue, TRUE);
	g_array_free(rp.later, TRUE);
	g_hash_table_destroy(rp.unanswered);
	g_hash_table_destroy(rp.read);
	return f;
}
