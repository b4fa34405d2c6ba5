/* SPDX-License-Identifier: BSD-2-Clause */
/* mkey_write.c - M_Key fields of the PortInfo writes, and recovery of a key a port will not take
 * (program/mkey_write.h). */
#include <inttypes.h>
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric/dr.h"
#include "mad/guid2mkey.h"
#include "mad/mkey_derive.h"
#include "program/mkey_write.h"

struct mkey_fields {
	uint64_t key;
	uint8_t protect;
	uint16_t lease;
};

struct mkey_memory {              /* per port GUID: our last write, and how it read back */
	struct mkey_fields written, answered;
};

static void wanted(const struct pass *g, uint32_t port, struct mkey_fields *w)
{
	const struct mkey_cfg *c = transport_mkey(g->t);
	w->key = mkey_for_guid(c, g->f->ports[port].guid);
	w->protect = mkey_enabled(c) ? c->protect : 0;
	w->lease = mkey_enabled(c) ? c->lease_s : 0;
}

static void read_fields(const uint8_t *pi, struct mkey_fields *m)
{
	m->key = mad_get_field64((void *)pi, 0, IB_PORT_MKEY_F);
	m->protect = (uint8_t)mad_get_field((void *)pi, 0, IB_PORT_MKEY_PROT_BITS_F);
	m->lease = (uint16_t)mad_get_field((void *)pi, 0, IB_PORT_MKEY_LEASE_F);
}

static int same(const struct mkey_fields *a, const struct mkey_fields *b)
{
	return a->key == b->key && a->protect == b->protect && a->lease == b->lease;
}

int mkey_port_fields(struct pass *g, uint32_t port, uint8_t *pi)
{
	struct mkey_fields w, held;
	uint64_t guid = g->f->ports[port].guid;
	const struct mkey_memory *last = g->mkey_written ? g_hash_table_lookup(g->mkey_written, &guid) : NULL;
	read_fields(g->f->px[port].portinfo, &held);
	const struct mkey_cfg *c = transport_mkey(g->t);
	uint64_t given = 0; /* m_key_lookup: guid2mkey says a key was given to it (by us or OpenSM) */
	int keyed = (last && last->written.key) || (c->lookup && guid2mkey_get(c->lookup, guid, &given) && given);
	if (!mkey_enabled(c) && !keyed) {
		/* protection off and never keyed by us: the port's M_Key fields are not ours to
		 * change (pi carries them as read) */
		mad_set_field64(pi, 0, IB_PORT_MKEY_F, held.key);
		mad_set_field(pi, 0, IB_PORT_MKEY_PROT_BITS_F, held.protect);
		mad_set_field(pi, 0, IB_PORT_MKEY_LEASE_F, held.lease);
		return 0;
	}
	wanted(g, port, &w);
	mad_set_field64(pi, 0, IB_PORT_MKEY_F, w.key);
	mad_set_field(pi, 0, IB_PORT_MKEY_PROT_BITS_F, w.protect);
	mad_set_field(pi, 0, IB_PORT_MKEY_LEASE_F, w.lease);
	if (same(&w, &held))
		return 0;
	/* a port that does not keep these fields (ibsim) reads as it did after our last write */
	return !(last && same(&last->written, &w) && same(&last->answered, &held));
}

void mkey_port_written(struct pass *g, uint32_t port, const uint8_t *pi, const uint8_t *answer)
{
	struct mkey_memory *m = g_new(struct mkey_memory, 1);
	read_fields(pi, &m->written);
	read_fields(answer, &m->answered);
	g->f->px[port].mkey = m->written.key;
	g->f->any_mkey |= m->written.key != 0;
	/* m_key_lookup: what the port shows in its answer, as OpenSM records it (a key, or 0 at
	 * ProtectBits 0; a port that keeps no M_Key, ibsim, shows 0) */
	if (m->answered.key || !m->answered.protect)
		guid2mkey_set(transport_mkey(g->t)->lookup, g->f->ports[port].guid, m->answered.key);
	if (!g->mkey_written) {
		g_free(m);
		return;
	}
	uint64_t *guid = g_new(uint64_t, 1);
	*guid = g->f->ports[port].guid;
	g_hash_table_replace(g->mkey_written, guid, m);
}

static void on_probe(struct transport *t, const struct smp_req *r, int status,
		     const uint8_t *data, void *ctx)
{
	(void)t;
	struct pass *g = ctx;
	uint32_t port = smp_cookie_id(r->cookie);
	const struct ibsm_port *p = &g->f->ports[port];
	const struct ibsm_node *n = &g->f->nodes[p->node];
	uint64_t shown = status == 0 && data ? mad_get_field64((void *)data, 0, IB_PORT_MKEY_F) : 0;
	if (shown && shown != g->f->px[port].mkey) {
		LOG_I("MKY-0001", "port %u of node 0x%016" PRIx64 " (%s) holds an M_Key we did not give "
		      "it: written again presenting that key", p->num, n->guid, n->desc);
		g->f->px[port].mkey = shown;
		g->f->any_mkey = 1;
		memcpy(g->f->px[port].portinfo, data, SMP_DATA_SIZE);
		if (g->end_port)
			g->end_port(g, port, g->sm_lid);
		return;
	}
	g->failed++;
	g->failures++;
	LOG_E("MKY-0002", "port %u of node 0x%016" PRIx64 " (%s) does not take our M_Key and hides "
	      "its own (%s): it is written once its lease period has run out", p->num, n->guid,
	      n->desc, status ? "no answer to a Get either" : "ProtectBits 1 or more");
}

int mkey_port_recover(struct pass *g, uint32_t port)
{
	if (!mkey_enabled(transport_mkey(g->t)) && !g->f->px[port].mkey)
		return 0;
	struct smp_req r;
	const struct ibsm_port *p = &g->f->ports[port];
	if (fabric_smp_to_port(&r, g->f, port, IB_MAD_METHOD_GET, IB_ATTR_PORT_INFO, p->num,
			       on_probe, g, smp_cookie(0, port, 0)) < 0)
		return 0;
	r.mkey = 0; /* a Get presenting no key: at ProtectBits 0 the port shows its own */
	transport_submit(g->t, &r);
	return 1;
}
