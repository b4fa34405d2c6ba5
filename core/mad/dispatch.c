/* SPDX-License-Identifier: BSD-2-Clause */
/* dispatch.c - the table of agents by (class, method, attribute), a table rather than a long
 * switch, and the default answer for requests no agent serves. */
#include <string.h>
#include <glib.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include "mad/dispatch.h"

struct handler {
	dispatch_fn fn;
	void *ctx;
};

struct dispatch {
	struct transport *t;
	GHashTable *table; /* key (class << 32 | method << 17 | attr) -> struct handler */
	struct dispatch_stats stats;
};

static uint64_t key_of(uint8_t mgmt_class, uint8_t method, uint32_t attr)
{
	return ((uint64_t)mgmt_class << 32) | ((uint64_t)method << 17) | (attr & 0x1FFFF);
}

static guint key_hash(gconstpointer k)
{
	uint64_t v = *(const uint64_t *)k;
	return (guint)(v ^ (v >> 32));
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
	return *(const uint64_t *)a == *(const uint64_t *)b;
}

static int is_request(uint8_t method)
{
	switch (method) {
	case IB_MAD_METHOD_GET:
	case IB_MAD_METHOD_SET:
	case IB_MAD_METHOD_GET_TABLE:
	case IB_MAD_METHOD_DELETE:
	case IB_MAD_METHOD_GETMULTI:
		return 1;
	default:
		return 0;
	}
}

uint8_t dispatch_response_method(uint8_t method)
{
	return method == IB_MAD_METHOD_SET ? IB_MAD_METHOD_GET_RESPONSE :
	       (uint8_t)(method | MAD_METHOD_RESPONSE_BIT);
}

void dispatch_mad_in(struct mad_in *m, void *umad, int len)
{
	uint8_t *mad = umad_get_mad(umad);
	*m = (struct mad_in){
		.umad = umad, .len = len, .mad = mad, .mgmt_class = mad[1], .class_version = mad[2],
		.method = mad[3], .attr = (uint16_t)mad_get_field(mad, 0, IB_MAD_ATTRID_F),
		.attr_mod = mad_get_field(mad, 0, IB_MAD_ATTRMOD_F),
		.tid = mad_get_field64(mad, 0, IB_MAD_TRID_F),
	};
}

static void on_unsolicited(struct transport *t, void *umad, int len, void *ctx)
{
	(void)t;
	struct dispatch *d = ctx;
	struct mad_in m;
	dispatch_mad_in(&m, umad, len);
	d->stats.received++;
	if (umad_status(umad)) { /* one of our sends the kernel gave up on (no response came) */
		d->stats.dropped++;
		return;
	}
	uint64_t k = key_of(m.mgmt_class, m.method, m.attr);
	struct handler *h = g_hash_table_lookup(d->table, &k);
	if (!h) {
		k = key_of(m.mgmt_class, m.method, DISPATCH_ANY_ATTR);
		h = g_hash_table_lookup(d->table, &k);
	}
	if (h) {
		d->stats.handled++;
		h->fn(d, &m, h->ctx);
		return;
	}
	if (!is_request(m.method)) {
		d->stats.dropped++; /* a stray response, a trap or report nobody listens to */
		return;
	}
	d->stats.unsupported++;
	dispatch_respond(d, &m, dispatch_response_method(m.method), MAD_STATUS_UNSUP_METHOD_ATTR, NULL, 0, 0);
}

struct dispatch *dispatch_new(struct transport *t)
{
	struct dispatch *d = g_new0(struct dispatch, 1);
	d->t = t;
	d->table = g_hash_table_new_full(key_hash, key_equal, g_free, g_free);
	transport_set_unsolicited(t, on_unsolicited, d);
	return d;
}

void dispatch_free(struct dispatch *d)
{
	if (!d)
		return;
	transport_set_unsolicited(d->t, NULL, NULL);
	g_hash_table_destroy(d->table);
	g_free(d);
}

struct transport *dispatch_transport(const struct dispatch *d)
{
	return d->t;
}

void dispatch_register(struct dispatch *d, uint8_t mgmt_class, uint8_t method, uint32_t attr,
		       dispatch_fn fn, void *ctx)
{
	uint64_t k = key_of(mgmt_class, method, attr);
	if (!fn) {
		g_hash_table_remove(d->table, &k);
		return;
	}
	uint64_t *key = g_new(uint64_t, 1);
	*key = k;
	struct handler *h = g_new(struct handler, 1);
	h->fn = fn;
	h->ctx = ctx;
	g_hash_table_replace(d->table, key, h);
}

int dispatch_respond(struct dispatch *d, const struct mad_in *m, uint8_t method, uint16_t status,
		     const void *data, size_t data_offset, size_t data_len)
{
	uint8_t *mad = m->mad;
	mad[3] = method;
	if (m->mgmt_class == IB_SMI_DIRECT_CLASS) {
		mad_set_field(mad, 0, IB_DRSMP_STATUS_F, status);
		mad_set_field(mad, 0, IB_DRSMP_DIRECTION_F, 1);
	} else {
		mad_set_field(mad, 0, IB_MAD_STATUS_F, status);
	}
	if (data && data_offset + data_len <= MAD_SIZE)
		memcpy(mad + data_offset, data, data_len);
	umad_set_grh(m->umad, NULL);
	return transport_send_raw(d->t, m->mgmt_class, m->umad, m->len);
}

const struct dispatch_stats *dispatch_stats(const struct dispatch *d)
{
	return &d->stats;
}
