/* SPDX-License-Identifier: BSD-2-Clause */
/* vendor_qos.c - QoSConfigSL Sets (program/vendor_qos.h). The layout is NVIDIA OpenSM's
 * (include/iba/ib_types.h: qos_config_sl_t, 16 ib_bw_layout_t words, RateLimit bits 0-19,
 * BandwidthAllocation bits 20-31); no simulator answers it, so tests/unit/test_enhanced_qos.c
 * checks the bytes against the fake SMA and doc/enhanced-qos.md says what is unverified. */
#include <inttypes.h>
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric/dr.h"
#include "mad/smp.h"
#include "program/vendor_qos.h"

#define REFUSED_LOG_MAX 10

struct vqos_memory {
	GHashTable *written;   /* "GUID:MOD" -> uint8_t[64] last taken */
	GHashTable *refused;   /* "GUID:MOD" -> 1 */
	uint32_t refused_logged; /* ports logged one by one since the last retry */
};

struct vqos_pending {
	struct vqos_memory *m;
	struct vqos_stats *st;
	const struct fabric *f;
	struct vqos_want *want;
	uint32_t port, mod;
	uint8_t data[64];
};

void vqos_encode(const uint32_t rate[VQOS_N_SL], uint8_t data[64])
{
	memset(data, 0, 64);
	for (int sl = 0; sl < VQOS_N_SL; sl++) {
		uint32_t w = rate[sl] & VQOS_RATE_MASK;
		data[4 * sl] = (uint8_t)(w >> 24);
		data[4 * sl + 1] = (uint8_t)(w >> 16);
		data[4 * sl + 2] = (uint8_t)(w >> 8);
		data[4 * sl + 3] = (uint8_t)w;
	}
}

void vqos_decode(const uint8_t data[64], uint32_t rate[VQOS_N_SL], uint16_t alloc[VQOS_N_SL])
{
	for (int sl = 0; sl < VQOS_N_SL; sl++) {
		uint32_t w = (uint32_t)data[4 * sl] << 24 | (uint32_t)data[4 * sl + 1] << 16 |
			     (uint32_t)data[4 * sl + 2] << 8 | data[4 * sl + 3];
		rate[sl] = w & VQOS_RATE_MASK;
		if (alloc)
			alloc[sl] = (uint16_t)(w >> VQOS_ALLOC_SHIFT);
	}
}

struct vqos_memory *vqos_memory_new(void)
{
	struct vqos_memory *m = g_new0(struct vqos_memory, 1);
	m->written = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	m->refused = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	return m;
}

void vqos_memory_free(struct vqos_memory *m)
{
	if (!m)
		return;
	g_hash_table_destroy(m->written);
	g_hash_table_destroy(m->refused);
	g_free(m);
}

void vqos_memory_forget(struct vqos_memory *m)
{
	g_hash_table_remove_all(m->written);
	vqos_memory_retry(m);
}

void vqos_memory_retry(struct vqos_memory *m)
{
	g_hash_table_remove_all(m->refused);
	m->refused_logged = 0;
}

static char *target_key(uint64_t guid, uint32_t mod)
{
	return g_strdup_printf("%016" PRIx64 ":%08" PRIx32, guid, mod);
}

static void on_answer(struct transport *t, const struct smp_req *r, int status,
		      const uint8_t *data, void *ctx)
{
	(void)t;
	(void)data;
	struct vqos_pending *p = (struct vqos_pending *)ctx + smp_cookie_id(r->cookie);
	const struct ibsm_port *port = &p->f->ports[p->port];
	const struct ibsm_node *n = &p->f->nodes[port->node];
	char *key = target_key(port->guid, p->mod);
	if (status == 0) {
		p->st->taken++;
		p->want->outcome = VQOS_TAKEN;
		g_hash_table_replace(p->m->written, key, g_memdup2(p->data, 64));
		return;
	}
	p->st->refused++;
	p->want->outcome = VQOS_REFUSED;
	g_hash_table_remove(p->m->written, key);
	g_hash_table_replace(p->m->refused, key, GINT_TO_POINTER(1));
	if (p->m->refused_logged++ < REFUSED_LOG_MAX) {
		char why[32];
		smp_status_text(status, why, sizeof(why));
		LOG_W("VQS-0001", "port %u of node 0x%016" PRIx64 " (%s) does not take QoSConfigSL "
		      "(%s%s, %s): its per-SL rate limits are not set, and it is not asked again until "
		      "the enhanced QoS policy is loaded anew", port->num, n->guid, n->desc,
		      p->mod & VQOS_MOD_VPORT ? "virtual port " : "port ",
		      p->mod & VQOS_MOD_VPORT ? "0" : "itself", why);
	}
}

uint32_t vqos_program(struct vqos_memory *m, struct transport *t, volatile int *stop,
		      const struct fabric *f, struct vqos_want *want, uint32_t n,
		      struct vqos_stats *st)
{
	memset(st, 0, sizeof(*st));
	struct vqos_pending *pend = g_new0(struct vqos_pending, n ? n : 1);
	for (uint32_t i = 0; i < n; i++) {
		struct vqos_want *w = &want[i];
		uint64_t guid = f->ports[w->port].guid;
		char *key = target_key(guid, w->mod);
		struct vqos_pending *p = &pend[i];
		*p = (struct vqos_pending){ .m = m, .st = st, .f = f, .want = w, .port = w->port, .mod = w->mod };
		vqos_encode(w->rate, p->data);
		const uint8_t *held = g_hash_table_lookup(m->written, key);
		int refused = g_hash_table_contains(m->refused, key);
		g_free(key);
		w->outcome = VQOS_NOT_SENT;
		if (refused) {
			w->outcome = VQOS_LEFT_ALONE;
			st->left_alone++;
			continue;
		}
		if (held && !memcmp(held, p->data, 64)) {
			w->outcome = VQOS_UNCHANGED;
			st->unchanged++;
			continue;
		}
		struct smp_req r;
		uint32_t mod = w->mod & VQOS_MOD_VPORT ? w->mod : f->ports[w->port].num;
		if (fabric_smp_to_port(&r, f, w->port, IB_MAD_METHOD_SET, VQOS_ATTR_QOS_CONFIG_SL, mod,
				       on_answer, pend, smp_cookie(0, i, 0)) < 0)
			continue;
		memcpy(r.data, p->data, 64);
		r.max_attempts = 1; /* one attempt: a fabric without the attribute may drop it */
		transport_submit(t, &r);
		st->sent++;
	}
	if (st->sent)
		transport_drain(t, stop);
	if (m->refused_logged > REFUSED_LOG_MAX && st->refused)
		LOG_W("VQS-0002", "%u more ports did not take QoSConfigSL (only the first %u are named); "
		      "%u refused in all", m->refused_logged - REFUSED_LOG_MAX, REFUSED_LOG_MAX,
		      (unsigned)g_hash_table_size(m->refused));
	g_free(pend);
	return st->sent;
}
