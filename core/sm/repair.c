/* SPDX-License-Identifier: BSD-2-Clause */
/* repair.c - a repair instead of a whole discovery (repair.h): rounds of SMPs over a copy of
 * the last generation's builder (fabric/patch.h), each round reading the switches the last
 * one found changed, then one SwitchInfo to every switch not read to verify that nothing else
 * changed; directed routes that crossed a link gone are mended before each round. Discovery's
 * rules hold: PortStateChange is cleared before a switch's ports are read, NodeInfo goes
 * through a port only once its PortInfo shows LinkUp, routes never transit a CA.
 * The first round goes on the wire before the copy is made, over the last generation's routes:
 * the trapped switches' SwitchInfo and, beside them, the verification of every switch whose
 * route crosses none of them ("early"; fed into the window as it frees, so the first round's
 * own SMPs are not queued behind it). An early-verified switch counts as not read until the
 * rounds would have come to the verification, so the rounds read what they read without it.
 * Traps that come during the repair have their switches read in its next round. */
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
	GHashTable *early;         /* builder index + 1 of the switches verified early (in `read`
				    * too) that a round may still read */
	GArray *to_verify;         /* uint32_t: the early verification, sent from verify_next on */
	guint verify_next;
	GArray *deferred;          /* struct deferred: answers that came before the copy */
	int declined;
	char *why;
	size_t why_len;
	struct repair_stats *st;
};

static void on_reply(struct transport *t, const struct smp_req *r, int status,
		     const uint8_t *data, void *ctx);

#define KEY(idx) GUINT_TO_POINTER((idx) + 1)

/* An answer handed out before the builder existed: handled once it does, in order. */
struct deferred {
	struct smp_req r;
	int status;
	uint8_t has_data;
	uint8_t data[SMP_DATA_SIZE];
};

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

/* An SMP to node idx over the directed route path[1..hops], or (out > 0) out of its port
 * `out`, presenting `key`. */
static void send_dr(struct repair *rp, uint32_t idx, uint8_t hops, const uint8_t *path, int out,
		    uint8_t method, uint16_t attr, uint32_t mod, uint8_t kind, uint16_t sub, uint64_t key,
		    const uint8_t *data)
{
	struct smp_req r;
	smp_req_init(&r, method, attr, mod, on_reply, rp, smp_cookie(kind, idx, sub));
	r.mkey = key;
	smp_req_route_dr(&r, hops, path);
	if (out > 0 && smp_req_route_append(&r, (uint8_t)out) < 0) {
		decline(rp, "a route longer than %u hops", SMP_DR_HOPS_MAX);
		return;
	}
	if (data)
		memcpy(r.data, data, SMP_DATA_SIZE);
	transport_submit(rp->sm->t, &r);
}

/* An SMP to builder node idx, or (out > 0) out of its port `out`, presenting `key`. */
static void send_to(struct repair *rp, uint32_t idx, int out, uint8_t method, uint16_t attr,
		    uint32_t mod, uint8_t kind, uint16_t sub, uint64_t key, const uint8_t *data)
{
	const struct model_node_in *n = model_node(rp->b, idx);
	send_dr(rp, idx, n->dr_hops, n->dr_path, out, method, attr, mod, kind, sub, key, data);
}

/* A Get of SwitchInfo to switch idx of the last generation over its route there, before the
 * copy exists (the copy's node idx has the same route and key). */
static void send_prev(struct repair *rp, uint32_t idx, uint8_t kind, uint16_t sub)
{
	const struct node_extra *x = &rp->prev->nx[idx];
	send_dr(rp, idx, x->dr_hops, x->dr_path, -1, IB_MAD_METHOD_GET, IB_ATTR_SWITCH_INFO, 0, kind, sub,
		patch_node_mkey(rp->prev, idx), NULL);
}

static int was_read(const struct repair *rp, uint32_t idx)
{
	return g_hash_table_contains(rp->read, GUINT_TO_POINTER(idx + 1));
}

/* Switch idx is read in the next round (once per repair). */
static void queue_switch(struct repair *rp, uint32_t idx)
{
	const struct model_node_in *n = model_node(rp->b, idx);
	if (!n || n->type != IBSM_SWITCH)
		return;
	if (was_read(rp, idx)) {
		if (!g_hash_table_remove(rp->early, KEY(idx)))
			return;
		/* verified early only: read now as if it had not been (its answer is left alone) */
		g_hash_table_remove(rp->read, KEY(idx));
	}
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

static void handle_reply(struct repair *rp, const struct smp_req *r, int status, const uint8_t *data)
{
	uint32_t idx = smp_cookie_id(r->cookie);
	uint16_t sub = smp_cookie_sub(r->cookie);
	uint8_t kind = smp_cookie_kind(r->cookie);
	if (kind == R_VERIFY && sub == 1) {
		/* early: a switch a round took up meanwhile is that round's */
		if (!g_hash_table_contains(rp->early, KEY(idx)))
			return;
		if (status || !data || mad_get_field((void *)data, 0, IB_SW_STATE_CHANGE_F))
			g_hash_table_remove(rp->early, KEY(idx));
	}
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

/* The early verification: SwitchInfo Gets into what the window has free (never queued behind
 * it, the first round's reads go before); from every answer on until all are sent. */
static void feed_verify(struct repair *rp)
{
	struct transport *t = rp->sm->t;
	uint32_t window = rp->sm->opt->window > 0 ? (uint32_t)rp->sm->opt->window : 1;
	while (!rp->declined && rp->verify_next < rp->to_verify->len && transport_outstanding(t) < window) {
		uint32_t i = g_array_index(rp->to_verify, uint32_t, rp->verify_next++);
		if (!g_hash_table_contains(rp->early, KEY(i)))
			continue; /* queued for a round meanwhile */
		send_prev(rp, i, R_VERIFY, 1);
		rp->st->verified++;
	}
}

static void on_reply(struct transport *t, const struct smp_req *r, int status,
		     const uint8_t *data, void *ctx)
{
	(void)t;
	struct repair *rp = ctx;
	feed_verify(rp);
	if (!rp->b) {
		struct deferred d = { .r = *r, .status = status, .has_data = data != NULL };
		if (data)
			memcpy(d.data, data, SMP_DATA_SIZE);
		g_array_append_val(rp->deferred, d);
		return;
	}
	handle_reply(rp, r, status, data);
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

/* The local node of the last generation: the one whose port carries IBSM_PORT_SM (hop 0). */
static uint32_t prev_local_node(const struct fabric *f)
{
	for (uint32_t o = 0; o < f->pub.n_nodes; o++) {
		if (f->nx[o].dr_hops)
			continue;
		for (uint32_t p = 0; p <= f->nodes[o].nports; p++)
			if (f->ports[f->nodes[o].port0 + p].flags & IBSM_PORT_SM)
				return o;
	}
	return IBSM_NONE;
}

/* Does the last generation's directed route to node o lead there without crossing a node
 * marked in `avoid` (it may end at one)? */
static int prev_route_clear(const struct fabric *f, uint32_t local, uint32_t o, const uint8_t *avoid)
{
	const struct node_extra *x = &f->nx[o];
	uint32_t cur = local;
	for (uint32_t h = 1; h <= x->dr_hops; h++) {
		if (h > 1 && avoid[cur])
			return 0;
		const struct ibsm_node *n = &f->nodes[cur];
		if (x->dr_path[h] < 1 || x->dr_path[h] > n->nports)
			return 0;
		uint32_t q = f->ports[n->port0 + x->dr_path[h]].peer;
		if (q == IBSM_NONE)
			return 0;
		cur = f->ports[q].node;
	}
	return cur == o;
}

/* The first round, before the copy: the trapped switches' SwitchInfo, and the early
 * verification of every other switch whose route crosses none of them (a route that does may
 * cross the change: those are verified after the rounds, over mended routes, as before). */
static void first_round(struct repair *rp, const GArray *first)
{
	const struct fabric *f = rp->prev;
	uint8_t *mark = g_new0(uint8_t, f->pub.n_nodes);
	for (guint i = 0; i < first->len; i++) {
		uint32_t s = g_array_index(first, uint32_t, i);
		mark[s] = 1;
		g_hash_table_insert(rp->read, KEY(s), GUINT_TO_POINTER(rp->sm->trap_seq));
		LOG_V("RPR-0002", "repair: reading switch 0x%016" PRIx64 " (%s) over %u hops",
		      f->nodes[s].guid, f->nodes[s].desc, f->nx[s].dr_hops);
		send_prev(rp, s, R_SWITCHINFO, 0);
	}
	uint32_t local = prev_local_node(f);
	for (uint32_t o = 0; local != IBSM_NONE && o < f->pub.n_nodes; o++) {
		if (f->nodes[o].type != IBSM_SWITCH || mark[o] || !prev_route_clear(f, local, o, mark))
			continue;
		g_hash_table_insert(rp->read, KEY(o), GUINT_TO_POINTER(rp->sm->trap_seq));
		g_hash_table_add(rp->early, KEY(o));
		g_array_append_val(rp->to_verify, o);
	}
	g_free(mark);
	feed_verify(rp);
}

/* Traps that came during the repair: their switches are read (again) in the next round, so
 * the repair answers them too (else they are left for a sweep after it, which cancels its
 * routing); not in a storm (trap_full: a heavy sweep is due anyway). */
static void absorb_traps(struct repair *rp)
{
	GArray *tl = rp->sm->trap_lids;
	for (guint i = 0; tl && !rp->sm->trap_full && i < tl->len; i++) {
		const struct trap_lid *e = &g_array_index(tl, struct trap_lid, i);
		uint32_t s = trap_switch(rp->prev, e->lid);
		gpointer v = NULL;
		if (s == IBSM_NONE || s >= model_count(rp->b))
			continue; /* left for the sweep after */
		if (g_hash_table_lookup_extended(rp->read, KEY(s), NULL, &v) && GPOINTER_TO_UINT(v) >= e->seq)
			continue;
		g_hash_table_remove(rp->read, KEY(s));
		g_hash_table_remove(rp->early, KEY(s));
		queue_switch(rp, s);
	}
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

struct copy_job {
	const struct fabric *prev;
	struct model_builder *b;
};

static void copy_main(void *p)
{
	struct copy_job *j = p;
	j->b = patch_builder_from(j->prev);
}

struct fabric *repair_discover(struct sm *sm, struct repair_stats *st, char *why, size_t why_len)
{
	memset(st, 0, sizeof(*st));
	const struct fabric *prev = sm->fabric;
	struct repair rp = { .sm = sm, .prev = prev, .why = why, .why_len = why_len, .st = st,
			     .queue = g_array_new(FALSE, FALSE, sizeof(uint32_t)),
			     .later = g_array_new(FALSE, FALSE, sizeof(uint32_t)),
			     .unanswered = g_hash_table_new(NULL, NULL),
			     .read = g_hash_table_new(NULL, NULL),
			     .early = g_hash_table_new(NULL, NULL),
			     .to_verify = g_array_new(FALSE, FALSE, sizeof(uint32_t)),
			     .deferred = g_array_new(FALSE, FALSE, sizeof(struct deferred)) };
	why[0] = 0;
	/* the traps so far start it; those that arrive meanwhile are kept for the next sweep */
	GArray *start = sm->trap_lids;
	sm->trap_lids = g_array_new(FALSE, FALSE, sizeof(struct trap_lid));
	sm->trap_pending = 0;
	GArray *first = g_array_new(FALSE, FALSE, sizeof(uint32_t)); /* prev's node ids */
	for (guint i = 0; start && i < start->len; i++) {
		uint16_t lid = g_array_index(start, struct trap_lid, i).lid;
		uint32_t s = trap_switch(prev, lid);
		guint k = 0;
		while (k < first->len && g_array_index(first, uint32_t, k) != s)
			k++;
		if (s == IBSM_NONE)
			decline(&rp, "trap 128 from LID %u, which is no switch or switch-linked port of the "
				"last generation", lid);
		else if (k == first->len)
			g_array_append_val(first, s);
	}
	if (start)
		g_array_free(start, TRUE);
	if (!first->len)
		decline(&rp, "no switch to read");
	uint8_t *reached = NULL;
	int verified = 0;
	if (!rp.declined) {
		first_round(&rp, first);
		/* the copy takes tens of ms on a large fabric (60 ms at 40k end ports): made on a
		 * thread of its own while the first round is on the wire, its answers kept for the
		 * copy (rp.deferred) and the SA served meanwhile */
		struct copy_job cj = { prev, NULL };
		slice_offload(sm->t, "ibsm-repair-copy", copy_main, &cj);
		rp.b = cj.b;
		/* as a round begins (the copy's routes are prev's: none changes) */
		reached = g_new0(uint8_t, model_count(rp.b));
		st->routes_fixed += fix_routes(&rp, reached);
		st->rounds++;
		for (guint i = 0; i < rp.deferred->len; i++) {
			struct deferred *d = &g_array_index(rp.deferred, struct deferred, i);
			handle_reply(&rp, &d->r, d->status, d->has_data ? d->data : NULL);
		}
		g_array_set_size(rp.deferred, 0);
		transport_drain(sm->t, &sm->stop);
		while (!rp.declined && !sm->stop && rp.verify_next < rp.to_verify->len) {
			feed_verify(&rp); /* (every answer feeds it: not reached) */
			transport_drain(sm->t, &sm->stop);
		}
	}
	for (int round = 1; !rp.declined && !sm->stop; round++) {
		if (round >= REPAIR_ROUNDS) {
			decline(&rp, "still changing after %d rounds", REPAIR_ROUNDS);
			break;
		}
		g_free(reached);
		reached = g_new0(uint8_t, model_count(rp.b));
		absorb_traps(&rp);
		if (!rp.queue->len && rp.later->len) { /* their neighbours are read: try them again */
			g_array_append_vals(rp.queue, rp.later->data, rp.later->len);
			g_array_set_size(rp.later, 0);
		}
		if (rp.queue->len) {
			run_round(&rp, reached);
		} else if (!verified) {
			g_hash_table_remove_all(rp.early); /* verified now, as the rest is here */
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
			slicer_init(&sl, sm->t, NULL);
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
	g_hash_table_destroy(rp.early);
	g_array_free(rp.to_verify, TRUE);
	g_array_free(rp.deferred, TRUE);
	g_array_free(first, TRUE);
	return f;
}
