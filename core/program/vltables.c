/* SPDX-License-Identifier: BSD-2-Clause */
/* vltables.c - the memory of SL2VL and VLArb tables and the Gets/Sets that bring them to what
 * QoS wants (program/vltables.h). */
#include <inttypes.h>
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric/dr.h"
#include "program/vltables.h"

struct vlt_key {
	uint64_t guid;             /* node GUID */
	uint32_t mod;
	uint16_t attr;
	uint8_t port;              /* the port number the SMP goes to (a CA port; 0 for a switch) */
};

struct vlt_held {
	uint32_t pass;             /* the pass that last confirmed it */
	uint8_t len;
	uint8_t data[VLT_VLARB_LEN];
	uint8_t refused;           /* a Set of `sent` read back as `data`: not repeated */
	uint8_t sent[VLT_VLARB_LEN];
};

struct vlt_memory {
	GHashTable *held;          /* struct vlt_key -> struct vlt_held */
	uint32_t pass;
};

static guint key_hash(gconstpointer k)
{
	const struct vlt_key *x = k;
	return (guint)(x->guid ^ (x->guid >> 31) ^ ((uint64_t)x->mod * 2654435761u) ^ x->attr ^
		       (guint)x->port << 20);
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
	const struct vlt_key *x = a, *y = b;
	return x->guid == y->guid && x->mod == y->mod && x->attr == y->attr && x->port == y->port;
}

struct vlt_memory *vlt_memory_new(void)
{
	struct vlt_memory *m = g_new0(struct vlt_memory, 1);
	m->held = g_hash_table_new_full(key_hash, key_equal, g_free, g_free);
	return m;
}

void vlt_memory_free(struct vlt_memory *m)
{
	if (!m)
		return;
	g_hash_table_destroy(m->held);
	g_free(m);
}

void vlt_memory_forget(struct vlt_memory *m)
{
	g_hash_table_remove_all(m->held);
}

static struct vlt_key key_of(const struct fabric *f, const struct vlt_want *w)
{
	const struct ibsm_port *p = &f->ports[w->smp_port];
	return (struct vlt_key){ .guid = f->nodes[p->node].guid, .mod = w->mod, .attr = w->attr,
				 .port = p->num };
}

const uint8_t *vlt_memory_held(const struct vlt_memory *m, uint64_t node_guid, uint8_t port,
			       uint16_t attr, uint32_t mod, uint8_t *len)
{
	struct vlt_key k = { .guid = node_guid, .mod = mod, .attr = attr, .port = port };
	const struct vlt_held *h = g_hash_table_lookup(m->held, &k);
	*len = h ? h->len : 0;
	return h ? h->data : NULL;
}

/* ---- one pass ------------------------------------------------------------------------------ */

enum { VLT_GET = 0, VLT_SET = 1 };

struct vlt_run {
	struct pass *g;
	struct vlt_memory *m;
	const struct vlt_want *w;
	uint8_t (*held)[VLT_VLARB_LEN]; /* [n] what each holds (read, remembered or read back) */
	uint8_t *known;            /* [n] held is known */
	uint8_t *failed;           /* [n] an SMP for it failed: forgotten */
	struct vlt_stats *st;
};

static const char *attr_name(uint16_t attr)
{
	return attr == IB_ATTR_SLVL_TABLE ? "SLtoVLMappingTable" : "VLArbitrationTable";
}

static void on_done(struct transport *t, const struct smp_req *q, int status, const uint8_t *data,
		    void *ctx)
{
	(void)t;
	struct vlt_run *r = ctx;
	uint32_t i = smp_cookie_id(q->cookie);
	int kind = smp_cookie_kind(q->cookie);
	const struct vlt_want *w = &r->w[i];
	const struct fabric *f = r->g->f;
	const struct ibsm_node *n = &f->nodes[f->ports[w->smp_port].node];
	if (status != 0 || !data) {
		char why[64];
		smp_status_text(status, why, sizeof(why));
		r->g->failed++;
		r->g->failures++;
		r->failed[i] = 1;
		r->st->failed++;
		/* suppress_sl2vl_mad_status_errors (OpenSM's): an SL2VL SMP answered with a MAD
		 * status (a port without SL2VL support) is no error line; a timeout still is */
		if (status > 0 && w->attr == IB_ATTR_SLVL_TABLE && r->g->o &&
		    r->g->o->suppress_sl2vl_mad_status_errors) {
			LOG_V("VLT-0003", "%s %s (modifier 0x%x) of node 0x%016" PRIx64 " (%s) refused: %s "
			      "(suppress_sl2vl_mad_status_errors)", attr_name(w->attr),
			      kind == VLT_SET ? "Set" : "Get", w->mod, n->guid, n->desc, why);
			return;
		}
		LOG_E("VLT-0001", "%s %s (modifier 0x%x) of node 0x%016" PRIx64 " (%s) failed: %s",
		      attr_name(w->attr), kind == VLT_SET ? "Set" : "Get", w->mod, n->guid, n->desc, why);
		return;
	}
	memcpy(r->held[i], data, w->len);
	r->known[i] = 1;
	if (kind == VLT_SET && memcmp(data, w->data, w->len)) {
		struct vlt_key k = key_of(f, w);
		struct vlt_held *h = g_hash_table_lookup(r->m->held, &k);
		if (!h || !h->refused || memcmp(h->sent, w->data, w->len))
			LOG_E("VLT-0002", "%s (modifier 0x%x) of node 0x%016" PRIx64 " (%s) reads back "
			      "differently from what was written; not written again until the wanted "
			      "table changes", attr_name(w->attr), w->mod, n->guid, n->desc);
		r->failed[i] = 2; /* remembered as refused */
	}
}

static int req(struct vlt_run *r, struct smp_req *q, uint32_t i, int kind)
{
	const struct vlt_want *w = &r->w[i];
	return fabric_smp_to_port(q, r->g->f, w->smp_port, kind == VLT_SET ? IB_MAD_METHOD_SET :
				  IB_MAD_METHOD_GET, w->attr, w->mod, on_done, r,
				  smp_cookie((uint8_t)kind, i, 0));
}

/* A remembered table can be trusted when the previous pass confirmed it and neither its port
 * nor its switch came back since (a port coming up: INIT or ARMED; a switch found without
 * tables). A port that stays down keeps what was written. */
static const struct vlt_held *trusted(const struct vlt_run *r, const struct vlt_want *w)
{
	const struct fabric *f = r->g->f;
	struct vlt_key k = key_of(f, w);
	const struct vlt_held *h = g_hash_table_lookup(r->m->held, &k);
	if (!h || h->len != w->len || h->pass + 1 != r->m->pass)
		return NULL;
	const struct ibsm_port *p = &f->ports[w->port];
	if (p->num && p->state != IBSM_STATE_ACTIVE && p->state != IBSM_STATE_DOWN)
		return NULL;
	if (f->nx[p->node].found_empty)
		return NULL;
	return h;
}

static gboolean not_this_pass(gpointer key, gpointer value, gpointer m)
{
	(void)key;
	return ((const struct vlt_held *)value)->pass != ((const struct vlt_memory *)m)->pass;
}

uint32_t vlt_program(struct pass *g, struct vlt_memory *m, const struct vlt_want *w, uint32_t n,
		     struct vlt_stats *st)
{
	*st = (struct vlt_stats){ .tables = n };
	m->pass++;
	struct vlt_run r = { .g = g, .m = m, .w = w, .st = st };
	r.held = g_malloc0_n(n ? n : 1, VLT_VLARB_LEN);
	r.known = g_new0(uint8_t, n ? n : 1);
	r.failed = g_new0(uint8_t, n ? n : 1);
	uint8_t *refused = g_new0(uint8_t, n ? n : 1), *blind = g_new0(uint8_t, n ? n : 1);
	for (uint32_t i = 0; i < n; i++) {
		const struct vlt_held *h = trusted(&r, &w[i]);
		if (h) {
			memcpy(r.held[i], h->data, w[i].len);
			r.known[i] = 1;
			refused[i] = h->refused && !memcmp(h->sent, w[i].data, w[i].len);
			st->trusted++;
			continue;
		}
		/* a switch found new or reset holds its defaults, not ours: written without a read
		 * (the Set's answer is what it holds then), which halves a cold bring-up's SMPs */
		if (g->f->nx[g->f->ports[w[i].smp_port].node].found_empty) {
			blind[i] = 1;
			continue;
		}
		struct smp_req q;
		if (req(&r, &q, i, VLT_GET) == 0) {
			transport_submit(g->t, &q);
			st->read++;
		}
	}
	transport_drain(g->t, g->stop);
	for (uint32_t i = 0; i < n && !(g->stop && *g->stop); i++) {
		if (!blind[i] && (!r.known[i] || r.failed[i] || refused[i] ||
				  !memcmp(r.held[i], w[i].data, w[i].len)))
			continue; /* never write a table we could not read (but a blank switch's) */
		struct smp_req q;
		if (req(&r, &q, i, VLT_SET) < 0)
			continue;
		memset(q.data, 0, VLT_VLARB_LEN);
		memcpy(q.data, w[i].data, w[i].attr == IB_ATTR_SLVL_TABLE ? VLT_SL2VL_LEN : w[i].len);
		transport_submit(g->t, &q);
		st->written++;
	}
	transport_drain(g->t, g->stop);
	for (uint32_t i = 0; i < n; i++) {
		struct vlt_key k = key_of(g->f, &w[i]);
		if (!r.known[i] || r.failed[i] == 1 || (g->stop && *g->stop)) {
			g_hash_table_remove(m->held, &k);
			continue;
		}
		struct vlt_held *h = g_new0(struct vlt_held, 1);
		h->pass = m->pass;
		h->len = w[i].len;
		memcpy(h->data, r.held[i], w[i].len);
		if (r.failed[i] == 2 || refused[i]) {
			h->refused = 1;
			memcpy(h->sent, w[i].data, w[i].len);
		}
		g_hash_table_replace(m->held, g_memdup2(&k, sizeof(k)), h);
	}
	/* tables no longer wanted (a node gone, a port unlinked, a block beyond new caps) are
	 * forgotten, so the SA's records do not show them */
	if (!(g->stop && *g->stop))
		g_hash_table_foreach_remove(m->held, not_this_pass, m);
	g_free(r.held);
	g_free(r.known);
	g_free(r.failed);
	g_free(refused);
	g_free(blind);
	g->sets += st->written;
	return st->written;
}
