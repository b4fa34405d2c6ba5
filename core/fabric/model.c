/* SPDX-License-Identifier: BSD-2-Clause */
/* model.c - builder for the fabric model and the freeze into one immutable generation of
 * flat arrays indexed by dense ids (nodes sorted by GUID so ids are reproducible). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/mad.h>
#include "fabric/model.h"
#include "mad/guid2mkey.h"

struct model_builder {
	GPtrArray *nodes;        /* struct model_node_in * */
	GHashTable *by_guid;     /* guid -> index + 1 */
};

G_DEFINE_QUARK(ibsm-model-error-quark, model_error)

guint model_guid_hash(gconstpointer k)
{
	uint64_t v = *(const uint64_t *)k;
	return (guint)(v ^ (v >> 29) ^ (v >> 47));
}

gboolean model_guid_equal(gconstpointer a, gconstpointer b)
{
	return *(const uint64_t *)a == *(const uint64_t *)b;
}

static void node_in_free(gpointer p)
{
	struct model_node_in *n = p;
	g_free(n->ports);
	g_free(n);
}

struct model_builder *model_builder_new(void)
{
	struct model_builder *b = g_new0(struct model_builder, 1);
	b->nodes = g_ptr_array_new_with_free_func(node_in_free);
	b->by_guid = g_hash_table_new(model_guid_hash, model_guid_equal); /* keys: the nodes' own */
	return b;
}

void model_builder_free(struct model_builder *b)
{
	if (!b)
		return;
	g_hash_table_destroy(b->by_guid);
	g_ptr_array_free(b->nodes, TRUE);
	g_free(b);
}

int model_add_node(struct model_builder *b, uint64_t guid, uint8_t type, uint8_t nports)
{
	if (g_hash_table_contains(b->by_guid, &guid))
		return -EEXIST;
	struct model_node_in *n = g_new0(struct model_node_in, 1);
	n->guid = guid;
	n->type = type;
	n->nports = nports;
	n->ports = g_new0(struct model_port_in, (size_t)nports + 1);
	g_ptr_array_add(b->nodes, n);
	g_hash_table_insert(b->by_guid, &n->guid, GUINT_TO_POINTER(b->nodes->len));
	return (int)b->nodes->len - 1;
}

struct model_node_in *model_node(struct model_builder *b, uint32_t idx)
{
	return idx < b->nodes->len ? g_ptr_array_index(b->nodes, idx) : NULL;
}

int model_find_node(const struct model_builder *b, uint64_t guid)
{
	gpointer v = g_hash_table_lookup(b->by_guid, &guid);
	return v ? (int)GPOINTER_TO_UINT(v) - 1 : -1;
}

uint32_t model_count(const struct model_builder *b)
{
	return b->nodes->len;
}

void model_link(struct model_builder *b, uint32_t a, uint8_t pa, uint32_t bn, uint8_t pb)
{
	struct model_node_in *na = model_node(b, a), *nb = model_node(b, bn);
	if (!na || !nb || pa > na->nports || pb > nb->nports)
		return;
	na->ports[pa].peer_node_guid = nb->guid;
	na->ports[pa].peer_port = pb;
	nb->ports[pb].peer_node_guid = na->guid;
	nb->ports[pb].peer_port = pa;
}

static int cmp_node_guid(const void *x, const void *y)
{
	const struct model_node_in *a = *(struct model_node_in *const *)x;
	const struct model_node_in *b = *(struct model_node_in *const *)y;
	return a->guid < b->guid ? -1 : a->guid > b->guid;
}

/* guid points into the generation's own arrays (a node's or a port's GUID), which live as long
 * as the table: no key of its own to allocate and free (tens of thousands a discovery). */
static void map_insert(GHashTable *h, const uint64_t *guid, uint32_t id)
{
	g_hash_table_insert(h, (gpointer)guid, GUINT_TO_POINTER(id + 1));
}

static uint32_t map_lookup(GHashTable *h, uint64_t guid)
{
	gpointer v = g_hash_table_lookup(h, &guid);
	return v ? GPOINTER_TO_UINT(v) - 1 : IBSM_NONE;
}

/* Node i (from in) with its extra data; a switch gets the next switch id. */
static void freeze_node(struct fabric *f, uint32_t i, const struct model_node_in *in, uint32_t port0,
			uint32_t *si)
{
	struct ibsm_node *n = &f->nodes[i];
	n->guid = in->guid;
	n->sysimg_guid = in->sysimg_guid;
	n->desc = g_string_chunk_insert(f->strings, in->desc); /* no look-up: most are unique */
	n->port0 = port0;
	n->type = in->type;
	n->nports = in->nports;
	n->sw = IBSM_NONE;
	struct node_extra *x = &f->nx[i];
	x->vendor_id = in->vendor_id;
	x->device_id = in->device_id;
	x->partition_cap = in->partition_cap;
	x->revision = in->revision;
	x->lft_cap = in->lft_cap;
	x->lft_top = in->lft_top;
	x->pkey_enf_cap = in->pkey_enf_cap;
	x->mft_cap = in->mft_cap;
	x->have_switchinfo = in->have_switchinfo;
	x->enhanced_sp0 = in->enhanced_sp0;
	x->local_port = in->local_port;
	x->dr_hops = in->dr_hops;
	x->found_empty = in->type == IBSM_SWITCH && (!in->ports[0].lid || !in->lft_top);
	x->missed = in->missed;
	memcpy(x->switchinfo, in->switchinfo, sizeof(x->switchinfo));
	memcpy(x->dr_path, in->dr_path, sizeof(x->dr_path));
	map_insert(f->node_by_guid, &n->guid, i);
	if (in->type == IBSM_SWITCH) {
		n->sw = *si;
		f->switches[*si].node = i;
		f->switches[*si].lft_cap = in->lft_cap;
		(*si)++;
	}
}

/* Port pi (port p of node i, from pin), without its link. */
static void freeze_port(struct fabric *f, uint32_t pi, uint32_t i, uint32_t p, uint8_t node_type,
			const struct model_port_in *pin)
{
	struct ibsm_port *port = &f->ports[pi];
	port->guid = pin->guid;
	port->node = i;
	port->peer = IBSM_NONE;
	port->lid = pin->lid;
	port->num = (uint8_t)p;
	port->lmc = pin->lmc;
	port->state = pin->state;
	port->width = pin->width;
	port->speed = pin->speed;
	port->mtu_cap = pin->mtu_cap;
	port->vl_cap = pin->vl_cap;
	port->oper_vls = pin->oper_vls;
	port->flags = pin->flags;
	f->px[pi].phys_state = pin->phys_state;
	f->px[pi].have_portinfo = pin->have_portinfo;
	memcpy(f->px[pi].portinfo, pin->portinfo, sizeof(pin->portinfo));
	if ((pin->flags & IBSM_PORT_PRESENT) && pin->guid && (node_type != IBSM_SWITCH || p == 0))
		map_insert(f->port_by_guid, &port->guid, pi);
}

/* Resolves links by (node GUID, port number); keeps only symmetric ones. */
static int freeze_links(struct fabric *f, struct model_node_in **sorted, GError **err)
{
	for (uint32_t i = 0; i < f->pub.n_nodes; i++) {
		const struct model_node_in *in = sorted[i];
		for (uint32_t p = 1; p <= in->nports; p++) {
			const struct model_port_in *pin = &in->ports[p];
			if (!pin->peer_node_guid)
				continue;
			uint32_t peer = map_lookup(f->node_by_guid, pin->peer_node_guid);
			if (peer == IBSM_NONE || pin->peer_port == 0 ||
			    pin->peer_port > f->nodes[peer].nports)
				continue;
			const struct model_node_in *pn = sorted[peer];
			if (pn->ports[pin->peer_port].peer_node_guid != in->guid ||
			    pn->ports[pin->peer_port].peer_port != p) {
				g_set_error(err, MODEL_ERROR, EINVAL,
					    "inconsistent link: node 0x%016" G_GINT64_MODIFIER "x port %u "
					    "claims peer 0x%016" G_GINT64_MODIFIER "x port %u, which does not point back",
					    in->guid, p, pn->guid, pin->peer_port);
				return -EINVAL;
			}
			f->ports[f->nodes[i].port0 + p].peer = f->nodes[peer].port0 + pin->peer_port;
		}
	}
	return 0;
}

/* The switch-to-switch port behind port p of switch node n, or IBSM_NONE. */
static uint32_t switch_peer(const struct fabric *f, const struct ibsm_node *n, uint32_t p)
{
	uint32_t q = f->ports[n->port0 + p].peer;
	return q != IBSM_NONE && f->nodes[f->ports[q].node].type == IBSM_SWITCH ? q : IBSM_NONE;
}

/* Switch adjacency, grouped by switch, in port order. */
static void freeze_adjacency(struct fabric *f)
{
	uint32_t na = 0, ns = f->pub.n_switches;
	for (uint32_t s = 0; s < ns; s++) {
		const struct ibsm_node *n = &f->nodes[f->switches[s].node];
		for (uint32_t p = 1; p <= n->nports; p++)
			na += switch_peer(f, n, p) != IBSM_NONE;
	}
	f->adj = g_new0(struct ibsm_adj, na ? na : 1);
	f->pub.n_adj = na;
	uint32_t ai = 0;
	for (uint32_t s = 0; s < ns; s++) {
		const struct ibsm_node *n = &f->nodes[f->switches[s].node];
		f->switches[s].adj0 = ai;
		for (uint32_t p = 1; p <= n->nports; p++) {
			uint32_t q = switch_peer(f, n, p);
			if (q == IBSM_NONE)
				continue;
			f->adj[ai].peer_sw = f->nodes[f->ports[q].node].sw;
			f->adj[ai].port = (uint8_t)p;
			f->adj[ai].peer_port = f->ports[q].num;
			ai++;
		}
		f->switches[s].nadj = ai - f->switches[s].adj0;
	}
}

/* The public view over the arrays. */
static void freeze_view(struct fabric *f, uint32_t generation)
{
	f->pub.size = sizeof(f->pub);
	f->pub.node_size = sizeof(struct ibsm_node);
	f->pub.port_size = sizeof(struct ibsm_port);
	f->pub.switch_size = sizeof(struct ibsm_switch);
	f->pub.adj_size = sizeof(struct ibsm_adj);
	f->pub.generation = generation;
	f->pub.nodes = f->nodes;
	f->pub.ports = f->ports;
	f->pub.switches = f->switches;
	f->pub.adj = f->adj;
	f->pub.sm_port = IBSM_NONE;
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		if (f->ports[p].flags & IBSM_PORT_SM)
			f->pub.sm_port = p;
}

struct fabric *model_freeze(const struct model_builder *b, uint32_t generation, GError **err)
{
	uint32_t nn = b->nodes->len, np = 0, ns = 0;
	struct model_node_in **sorted = g_new(struct model_node_in *, nn ? nn : 1);
	for (uint32_t i = 0; i < nn; i++) {
		sorted[i] = g_ptr_array_index(b->nodes, i);
		np += sorted[i]->nports + 1u;
		if (sorted[i]->type == IBSM_SWITCH)
			ns++;
	}
	qsort(sorted, nn, sizeof(*sorted), cmp_node_guid);

	struct fabric *f = g_new0(struct fabric, 1);
	f->refs = 1;
	f->pub.n_nodes = nn;
	f->pub.n_ports = np;
	f->pub.n_switches = ns;
	f->nodes = g_new0(struct ibsm_node, nn ? nn : 1);
	f->ports = g_new0(struct ibsm_port, np ? np : 1);
	f->switches = g_new0(struct ibsm_switch, ns ? ns : 1);
	f->nx = g_new0(struct node_extra, nn ? nn : 1);
	f->px = g_new0(struct port_extra, np ? np : 1);
	f->node_by_guid = g_hash_table_new(model_guid_hash, model_guid_equal);
	f->port_by_guid = g_hash_table_new(model_guid_hash, model_guid_equal);
	f->strings = g_string_chunk_new(4096);

	uint32_t pi = 0, si = 0;
	for (uint32_t i = 0; i < nn; i++) {
		freeze_node(f, i, sorted[i], pi, &si);
		for (uint32_t p = 0; p <= sorted[i]->nports; p++, pi++)
			freeze_port(f, pi, i, p, sorted[i]->type, &sorted[i]->ports[p]);
	}
	int rc = freeze_links(f, sorted, err);
	g_free(sorted);
	if (rc < 0) {
		fabric_unref(f);
		return NULL;
	}
	freeze_adjacency(f);
	freeze_view(f, generation);
	fabric_index_lids(f);
	return f;
}

struct fabric *fabric_ref(struct fabric *f)
{
	if (f)
		g_atomic_int_inc(&f->refs);
	return f;
}

void fabric_unref(struct fabric *f)
{
	if (!f || !g_atomic_int_dec_and_test(&f->refs))
		return;
	g_free(f->nodes);
	g_free(f->ports);
	g_free(f->switches);
	g_free(f->adj);
	g_free(f->lid_port);
	g_free(f->nx);
	g_free(f->px);
	if (f->node_by_guid)
		g_hash_table_destroy(f->node_by_guid);
	if (f->port_by_guid)
		g_hash_table_destroy(f->port_by_guid);
	if (f->strings)
		g_string_chunk_free(f->strings);
	g_free(f);
}

uint32_t fabric_node_by_guid(const struct fabric *f, uint64_t guid)
{
	return map_lookup(f->node_by_guid, guid);
}

uint32_t fabric_port_by_guid(const struct fabric *f, uint64_t port_guid)
{
	return map_lookup(f->port_by_guid, port_guid);
}

int fabric_is_end_port(const struct fabric *f, uint32_t port)
{
	const struct ibsm_port *p = &f->ports[port];
	if (!(p->flags & IBSM_PORT_PRESENT))
		return 0;
	if (f->nodes[p->node].type == IBSM_SWITCH)
		return p->num == 0;
	return p->num != 0 && (p->peer != IBSM_NONE || (p->flags & IBSM_PORT_SM));
}

void fabric_index_lids(struct fabric *f)
{
	uint32_t max = 0;
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		const struct ibsm_port *port = &f->ports[p];
		if (!port->lid || !fabric_is_end_port(f, p))
			continue;
		uint32_t top = port->lid + (1u << port->lmc) - 1;
		if (top > max && top < 0xC000)
			max = top;
	}
	g_free(f->lid_port);
	f->lid_port = g_new(uint32_t, max + 1);
	for (uint32_t l = 0; l <= max; l++)
		f->lid_port[l] = IBSM_NONE;
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		const struct ibsm_port *port = &f->ports[p];
		if (!port->lid || !fabric_is_end_port(f, p))
			continue;
		for (uint32_t l = port->lid; l < port->lid + (1u << port->lmc) && l <= max; l++)
			if (f->lid_port[l] == IBSM_NONE)
				f->lid_port[l] = p;
	}
	f->pub.lid_port = f->lid_port;
	f->pub.max_lid = max;
}

/* A 64-bit value mixed so that every input bit moves every output bit (splitmix64's finaliser). */
static inline uint64_t mix64(uint64_t v)
{
	v ^= v >> 30;
	v *= 0xbf58476d1ce4e5b9ULL;
	v ^= v >> 27;
	v *= 0x94d049bb133111ebULL;
	return v ^ v >> 31;
}

uint64_t fabric_topology_signature(const struct fabric *f)
{
	/* every linked port (its GUID and number, and its peer's) mixed into a chain; ids are
	 * GUID-sorted, so the same cabling gives the same value in every generation. A word at a
	 * time: 60 000 ports at a discovery's end, on the event loop's thread. */
	uint64_t h = 0xcbf29ce484222325ULL;
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		const struct ibsm_port *port = &f->ports[p];
		if (port->peer == IBSM_NONE)
			continue;
		const struct ibsm_port *q = &f->ports[port->peer];
		uint64_t nums = (uint64_t)port->num << 8 | q->num;
		h = mix64(h ^ f->nodes[port->node].guid);
		h = mix64(h ^ f->nodes[q->node].guid ^ nums << 48 ^ nums);
	}
	return h ^ f->pub.n_nodes;
}

int fabric_port_dr_path(const struct fabric *f, uint32_t port, uint8_t *hops,
			uint8_t path[MODEL_DR_MAX])
{
	const struct ibsm_port *p = &f->ports[port];
	const struct ibsm_node *n = &f->nodes[p->node];
	const struct node_extra *x = &f->nx[p->node];
	*hops = x->dr_hops;
	memcpy(path, x->dr_path, MODEL_DR_MAX);
	if (n->type == IBSM_SWITCH || port == f->pub.sm_port || p->num == 0)
		return 0;
	if (p->peer == IBSM_NONE)
		return -ENOENT;
	uint32_t pn = f->ports[p->peer].node;
	const struct node_extra *px = &f->nx[pn];
	if (f->nodes[pn].type != IBSM_SWITCH || px->dr_hops >= MODEL_DR_MAX - 1 || pn == p->node)
		return -ENOENT;
	memcpy(path, px->dr_path, MODEL_DR_MAX);
	*hops = px->dr_hops + 1;
	path[*hops] = f->ports[p->peer].num;
	return 0;
}

void fabric_set_mkeys(struct fabric *f, const struct mkey_cfg *c, const struct fabric *prev)
{
	/* no protection and no key before: only a key a port shows can matter (no lookups) */
	int look = mkey_any(c) || (prev && prev->any_mkey);
	f->any_mkey = 0;
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		const struct ibsm_port *port = &f->ports[p];
		int mgmt = f->nodes[port->node].type == IBSM_SWITCH ? port->num == 0 : port->num != 0;
		uint64_t k = 0;
		if (mgmt && port->guid) {
			uint64_t shown = f->px[p].have_portinfo ?
					 mad_get_field64(f->px[p].portinfo, 0, IB_PORT_MKEY_F) : 0;
			uint32_t old = look && !shown && prev ? fabric_port_by_guid(prev, port->guid) : IBSM_NONE;
			k = shown ? shown : old != IBSM_NONE && prev->px[old].mkey ? prev->px[old].mkey :
			    look ? mkey_held_guess(c, port->guid) : 0;
			/* m_key_lookup: a key a port shows is recorded in guid2mkey, as OpenSM records
			 * it (osm_port.c): when it is not 0, or ProtectBits 0 says 0 is the key */
			uint8_t protect = f->px[p].have_portinfo ?
					  (uint8_t)mad_get_field(f->px[p].portinfo, 0, IB_PORT_MKEY_PROT_BITS_F) : 1;
			if (c && c->lookup && f->px[p].have_portinfo && (shown || !protect))
				guid2mkey_set(c->lookup, port->guid, shown);
		}
		f->px[p].mkey = k;
		f->any_mkey |= k != 0;
	}
}
