/* SPDX-License-Identifier: BSD-2-Clause */
/* fdr10.c - MlnxExtPortInfo reads and writes for OpenSM's `fdr10` key (program/fdr10.h). No
 * simulator answers the attribute, so tests/unit/test_fdr10.c checks the bytes against the fake
 * SMA and doc/opensm-dropin.md says what could not be checked on a fabric. */
#include <inttypes.h>
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric/dr.h"
#include "mad/smp.h"
#include "program/fdr10.h"

#define REFUSED_LOG_MAX 10
#define VENDOR_BULL 0x119f

enum { EPI_GET = 0, EPI_SET = 1 };

struct fdr10_memory {
	GHashTable *refused;      /* "GUID:port" -> 1 */
	uint32_t refused_logged;  /* ports named since the last forget */
};

struct epi_slot {
	uint8_t data[SMP_DATA_SIZE]; /* the Get's answer */
	uint8_t answered;
};

struct epi_ctx {
	struct pass *g;
	struct fdr10_memory *m;
	struct fdr10_stats *st;
	struct epi_slot *slot;       /* [n_ports] */
};

int fdr10_device_asked(uint32_t vendor_id, uint16_t device_id)
{
	static const uint16_t bull[] = { 0x1b02, 0x1b50, 0x1ba0, 0x1b33, 0x1b73, 0x1b40, 0x1b41,
					 0x1b60, 0x1b61, 0x1b83, 0x1b93, 0x1b94, 0x1bb4, 0x1bb5,
					 0x1bc4 };
	uint16_t d = device_id;
	if ((d >= 0xc738 && d <= 0xc73b) || d == 0xcb20 || d == 0xcf08 || (d >= 0x1003 && d <= 0x1017))
		return 1; /* SwitchX, ConnectX-3 and later, whatever the VendorID (as OpenSM) */
	if ((vendor_id & 0xffffff) != VENDOR_BULL)
		return 0;
	if (d >= 0x1bd0 && d <= 0x1bd5)
		return 1;
	for (size_t i = 0; i < G_N_ELEMENTS(bull); i++)
		if (bull[i] == d)
			return 1;
	return 0;
}

void fdr10_encode_set(const uint8_t held[64], int enable, uint8_t out[64])
{
	memcpy(out, held, SMP_DATA_SIZE);
	out[FDR10_OFF_STATE_CHANGE_ENABLE] = 0x01;
	out[FDR10_OFF_ENABLED] = enable ? FDR10_SPEED : 0;
}

struct fdr10_memory *fdr10_memory_new(void)
{
	struct fdr10_memory *m = g_new0(struct fdr10_memory, 1);
	m->refused = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	return m;
}

void fdr10_memory_free(struct fdr10_memory *m)
{
	if (!m)
		return;
	g_hash_table_destroy(m->refused);
	g_free(m);
}

void fdr10_memory_forget(struct fdr10_memory *m)
{
	g_hash_table_remove_all(m->refused);
	m->refused_logged = 0;
}

static char *port_key(const struct fabric *f, uint32_t port)
{
	return g_strdup_printf("%016" PRIx64 ":%u", f->nodes[f->ports[port].node].guid, f->ports[port].num);
}

/* The ports OpenSM reads MlnxExtPortInfo of: a linked CA or router port, a switch external
 * port, INIT or above; an enhanced switch port 0. */
static int asked_port(const struct pass *g, uint32_t port)
{
	const struct fabric *f = g->f;
	const struct ibsm_port *p = &f->ports[port];
	uint32_t node = p->node;
	if (!f->px[port].have_portinfo || !fdr10_device_asked(f->nx[node].vendor_id, f->nx[node].device_id))
		return 0;
	if (f->nodes[node].type == IBSM_SWITCH && p->num == 0)
		return f->nx[node].enhanced_sp0;
	return p->peer != IBSM_NONE && g->state[port] >= IBSM_STATE_INIT;
}

static void on_epi(struct transport *t, const struct smp_req *r, int status, const uint8_t *data, void *ctx)
{
	(void)t;
	struct epi_ctx *c = ctx;
	uint32_t port = smp_cookie_id(r->cookie);
	const struct fabric *f = c->g->f;
	if (status == 0 && data) {
		if (smp_cookie_kind(r->cookie) == EPI_GET) {
			c->st->answered++;
			memcpy(c->slot[port].data, data, SMP_DATA_SIZE);
			c->slot[port].answered = 1;
		}
		return;
	}
	c->st->refused++;
	g_hash_table_replace(c->m->refused, port_key(f, port), GINT_TO_POINTER(1));
	if (c->m->refused_logged++ < REFUSED_LOG_MAX) {
		const struct ibsm_port *p = &f->ports[port];
		const struct ibsm_node *n = &f->nodes[p->node];
		char why[32];
		smp_status_text(status, why, sizeof(why));
		LOG_W("FDR-0001", "port %u of node 0x%016" PRIx64 " (%s, device 0x%04x) does not take "
		      "MlnxExtPortInfo %s (%s): its FDR10 is left as it is, and it is not asked again "
		      "until the SM takes over the fabric anew", p->num, n->guid, n->desc,
		      f->nx[p->node].device_id, smp_cookie_kind(r->cookie) == EPI_GET ? "Get" : "Set", why);
	}
}

uint32_t fdr10_program(struct pass *g, struct fdr10_memory *m, struct fdr10_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (g->o->fdr10 == FDR10_OFF)
		return 0;
	const struct fabric *f = g->f;
	uint32_t logged_before = m->refused_logged;
	struct epi_ctx c = { .g = g, .m = m, .st = st,
			     .slot = g_new0(struct epi_slot, f->pub.n_ports ? f->pub.n_ports : 1) };
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		if (!asked_port(g, p))
			continue;
		char *key = port_key(f, p);
		int refused = g_hash_table_contains(m->refused, key);
		g_free(key);
		if (refused) {
			st->left_alone++;
			continue;
		}
		struct smp_req r;
		if (fabric_smp_to_port(&r, f, p, IB_MAD_METHOD_GET, FDR10_ATTR, f->ports[p].num, on_epi, &c,
				       smp_cookie(EPI_GET, p, 0)) < 0)
			continue;
		r.max_attempts = 1; /* a fabric without the attribute may drop it: no retry storm */
		transport_submit(g->t, &r);
		st->asked++;
	}
	if (st->asked)
		transport_drain(g->t, g->stop);
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		const uint8_t *held = c.slot[p].data;
		if (!c.slot[p].answered || !(held[FDR10_OFF_SUPPORTED] & FDR10_SPEED))
			continue;
		st->capable++;
		int enable = g->o->fdr10 == FDR10_ENABLE;
		if (!!(held[FDR10_OFF_ENABLED] & FDR10_SPEED) == enable)
			continue;
		struct smp_req r;
		if (fabric_smp_to_port(&r, f, p, IB_MAD_METHOD_SET, FDR10_ATTR, f->ports[p].num, on_epi, &c,
				       smp_cookie(EPI_SET, p, 0)) < 0)
			continue;
		fdr10_encode_set(held, enable, r.data);
		transport_submit(g->t, &r); /* the port answered the Get: the transport's retries */
		st->written++;
		g->sets++;
	}
	if (st->written)
		transport_drain(g->t, g->stop);
	if (m->refused_logged > REFUSED_LOG_MAX && m->refused_logged > logged_before)
		LOG_W("FDR-0002", "%u more ports did not take MlnxExtPortInfo (only the first %u are named); "
		      "%u left alone in all", m->refused_logged - REFUSED_LOG_MAX, REFUSED_LOG_MAX,
		      (unsigned)g_hash_table_size(m->refused));
	g_free(c.slot);
	return st->written;
}
