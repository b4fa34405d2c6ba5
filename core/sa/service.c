/* SPDX-License-Identifier: BSD-2-Clause */
/* service.c - the ServiceRecord registry (sa/service.h). */
#include <string.h>
#include "sa/service.h"
#include "sa/wire.h"

struct service {
	uint8_t rec[SR_SIZE];
	double expires;            /* 0: never */
	struct sr_owner owner;     /* who registered it */
};

struct sa_services {
	GArray *v;                 /* struct service */
	uint64_t refused;          /* Sets answered NO_RESOURCES */
};

static struct sa_layout layout = {
	.name = "ServiceRecord", .attr = 0x31, .size = SR_SIZE, .n = 37,
	/* ServiceID, ServiceGID, ServiceP_Key, reserved, ServiceLease, ServiceKey, ServiceName,
	 * ServiceData8[16], ServiceData16[8], ServiceData32[4], ServiceData64[2] */
	.width = { 64, 128, 16, 16, 32, 128, 512,
		   8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8,
		   16, 16, 16, 16, 16, 16, 16, 16, 32, 32, 32, 32, 64, 64 },
};
static int layout_ready;

const struct sa_layout *sr_layout(void)
{
	if (!layout_ready && sa_layout_init(&layout) == 0)
		layout_ready = 1;
	return &layout;
}

struct sa_services *sa_services_new(void)
{
	struct sa_services *s = g_new0(struct sa_services, 1);
	s->v = g_array_new(FALSE, FALSE, sizeof(struct service));
	sr_layout();
	return s;
}

void sa_services_free(struct sa_services *s)
{
	if (!s)
		return;
	g_array_free(s->v, TRUE);
	g_free(s);
}

static uint32_t lease_of(const uint8_t *rec)
{
	return (uint32_t)sa_bits(rec, sr_layout()->offset[SR_LEASE], 32);
}

static void set_lease(uint8_t *rec, uint32_t lease)
{
	size_t at = sr_layout()->offset[SR_LEASE] / 8;
	rec[at] = (uint8_t)(lease >> 24);
	rec[at + 1] = (uint8_t)(lease >> 16);
	rec[at + 2] = (uint8_t)(lease >> 8);
	rec[at + 3] = (uint8_t)lease;
}

static void expire(struct sa_services *s, double now)
{
	for (guint i = s->v->len; i-- > 0;) {
		const struct service *x = &g_array_index(s->v, struct service, i);
		if (x->expires && x->expires <= now)
			g_array_remove_index(s->v, i);
	}
}

/* The record as a client sees it: the lease left, rounded up; the ServiceKey zeroed (key
 * association is not offered, and OpenSM's clients expect 0 there, as OpenSM answers). */
static void shown(const struct service *x, double now, uint8_t *out)
{
	memcpy(out, x->rec, SR_SIZE);
	memset(out + sr_layout()->offset[SR_KEY] / 8, 0, 16);
	if (x->expires) {
		double left = x->expires - now;
		set_lease(out, left <= 0 ? 0 : (uint32_t)(left + 0.999));
	}
}

/* Same service: ServiceID, ServiceGID and ServiceP_Key (the record's bytes, as OpenSM compares
 * them). */
static int same_service(const uint8_t *a, const uint8_t *b)
{
	const struct sa_layout *l = sr_layout();
	return sa_match(l, 1u << SR_ID | 1u << SR_GID | 1u << SR_PKEY, a, b);
}

static uint32_t held(const struct sa_services *s, uint64_t port)
{
	uint32_t n = 0;
	for (guint i = 0; i < s->v->len; i++)
		n += g_array_index(s->v, struct service, i).owner.port == port;
	return n;
}

uint16_t sa_service_set(struct sa_services *s, const uint8_t *rec, uint64_t mask,
			const struct sr_owner *owner, unsigned quota, double now, uint8_t *out)
{
	if (!(mask & (1u << SR_ID)) || !(mask & (1u << SR_GID)))
		return SA_ERR_REQ_INSUFFICIENT_COMPONENTS;
	expire(s, now);
	struct service x = { .owner = *owner };
	memcpy(x.rec, rec, SR_SIZE);
	if (!(mask & (1u << SR_LEASE)))
		set_lease(x.rec, SR_LEASE_INFINITE);
	uint32_t lease = lease_of(x.rec);
	x.expires = lease == SR_LEASE_INFINITE ? 0 : now + lease;
	guint i;
	for (i = 0; i < s->v->len; i++)
		if (same_service(g_array_index(s->v, struct service, i).rec, x.rec))
			break;
	if (i < s->v->len) {
		x.owner = g_array_index(s->v, struct service, i).owner;
		g_array_index(s->v, struct service, i) = x;
	} else if (s->v->len >= SR_MAX || (quota && held(s, owner->port) >= quota)) {
		s->refused++;
		return SA_ERR_NO_RESOURCES; /* a client registering without end */
	} else {
		g_array_append_val(s->v, x);
	}
	shown(&x, now, out);
	if (!(mask & (1u << SR_PKEY))) { /* the default P_Key, as OpenSM answers */
		size_t at = sr_layout()->offset[SR_PKEY] / 8;
		out[at] = out[at + 1] = 0xff;
	}
	return 0;
}

void sa_service_query(struct sa_services *s, const uint8_t *rec, uint64_t mask, double now,
		      sr_visible_fn visible, void *ctx, GByteArray *out)
{
	expire(s, now);
	uint64_t m = mask & ~(1ULL << SR_LEASE); /* a lease is not something to look up by */
	for (guint i = 0; i < s->v->len; i++) {
		const struct service *x = &g_array_index(s->v, struct service, i);
		if (!sa_match(sr_layout(), m, rec, x->rec) || (visible && !visible(ctx, x->rec, &x->owner)))
			continue;
		uint8_t r[SR_SIZE];
		shown(x, now, r);
		g_byte_array_append(out, r, SR_SIZE);
	}
}

uint16_t sa_service_delete(struct sa_services *s, const uint8_t *rec, double now, sr_judge_fn judge,
			   void *ctx, GByteArray *out)
{
	expire(s, now);
	for (guint i = 0; i < s->v->len; i++) {
		const struct service *x = &g_array_index(s->v, struct service, i);
		if (!same_service(rec, x->rec))
			continue;
		uint16_t st = judge ? judge(ctx, x->rec, &x->owner) : 0;
		if (st)
			return st;
		uint8_t r[SR_SIZE];
		shown(x, now, r);
		g_byte_array_append(out, r, SR_SIZE);
		g_array_remove_index(s->v, i);
		return 0;
	}
	return SA_ERR_NO_RECORDS;
}

uint32_t sa_services_count(struct sa_services *s, double now)
{
	expire(s, now);
	return s->v->len;
}

uint32_t sa_services_held(struct sa_services *s, uint64_t port, double now)
{
	expire(s, now);
	return held(s, port);
}

uint64_t sa_services_refused(const struct sa_services *s)
{
	return s->refused;
}

/* ---- kept across a restart (sa/sa_db.c) ---- */

void sa_services_foreach(struct sa_services *s, double now,
			 void (*fn)(void *ctx, const uint8_t *rec, double expires,
				    const struct sr_owner *owner), void *ctx)
{
	expire(s, now);
	for (guint i = 0; i < s->v->len; i++) {
		const struct service *x = &g_array_index(s->v, struct service, i);
		fn(ctx, x->rec, x->expires, &x->owner);
	}
}

int sa_service_restore(struct sa_services *s, const uint8_t *rec, double expires,
		       const struct sr_owner *owner)
{
	for (guint i = 0; i < s->v->len; i++)
		if (same_service(g_array_index(s->v, struct service, i).rec, rec))
			return 1;
	if (s->v->len >= SR_MAX)
		return -1;
	struct service x = { .expires = expires, .owner = *owner };
	memcpy(x.rec, rec, SR_SIZE);
	g_array_append_val(s->v, x);
	return 0;
}
