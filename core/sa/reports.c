/* SPDX-License-Identifier: BSD-2-Clause */
/* reports.c - Reports to the SA's subscribers: sent, acknowledged, sent again (sa/reports.h). */
#include <string.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include "base/log.h"
#include "mad/dispatch.h"
#include "mad/phase.h"
#include "routing/result.h"
#include "sa/inform.h"
#include "sa/pkeys.h"
#include "sa/reports.h"
#include "sa/state.h"
#include "sa/wire.h"

#define ATTR_NOTICE 0x0002
#define REPORT_TICK_MS 100

/* Sends a Report(Notice) to a subscriber (IBA 15.2.3: class 0x03 method Report, QP1). */
static void send_report(void *ctx, uint16_t lid, uint32_t qpn, uint64_t tid, const uint8_t *notice)
{
	struct sa *sa = ctx;
	if (!sa->d)
		return;
	int len = (int)umad_size() + MAD_SIZE;
	uint8_t *buf = g_malloc0((gsize)len);
	uint8_t *mad = umad_get_mad(buf);
	mad_set_field(mad, 0, IB_MAD_RESPONSE_F, 0);
	mad_set_field(mad, 0, IB_MAD_BASEVER_F, 1);
	mad_set_field(mad, 0, IB_MAD_MGMTCLASS_F, IB_SA_CLASS);
	mad_set_field(mad, 0, IB_MAD_CLASSVER_F, SA_CLASS_VERSION);
	mad_set_field(mad, 0, IB_MAD_METHOD_F, SA_REPORT);
	mad_set_field64(mad, 0, IB_MAD_TRID_F, tid);
	mad_set_field(mad, 0, IB_MAD_ATTRID_F, ATTR_NOTICE);
	memcpy(mad + IB_SA_DATA_OFFS, notice, NOTICE_SIZE);
	umad_set_addr(buf, lid, (int)qpn, 0, IB_DEFAULT_QP1_QKEY);
	if (transport_send_raw(dispatch_transport(sa->d), IB_SA_CLASS, buf, len) < 0)
		LOG_V("RPT-0001", "Report to LID %u could not be sent", lid);
	g_free(buf);
}

static void on_report_resp(struct dispatch *d, const struct mad_in *m, void *ctx)
{
	(void)d;
	struct sa *sa = ctx;
	if (m->attr == ATTR_NOTICE)
		sa_inform_acked(sa->inform, m->tid);
}

static gboolean report_tick(gpointer ctx)
{
	struct sa *sa = ctx;
	sa_inform_tick(sa->inform, phase_now());
	return G_SOURCE_CONTINUE;
}

void sa_reports_init(struct sa *sa)
{
	sa->inform = sa_inform_new(send_report, sa);
	if (!sa->d)
		return;
	dispatch_register(sa->d, IB_SA_CLASS, SA_REPORTRESP, DISPATCH_ANY_ATTR, on_report_resp, sa);
	sa->report_timer = g_timeout_add(REPORT_TICK_MS, report_tick, sa);
}

void sa_reports_fini(struct sa *sa)
{
	if (sa->d)
		dispatch_register(sa->d, IB_SA_CLASS, SA_REPORTRESP, DISPATCH_ANY_ATTR, NULL, NULL);
	if (sa->report_timer)
		g_source_remove(sa->report_timer);
	sa->report_timer = 0;
	sa_inform_free(sa->inform);
	sa->inform = NULL;
}

/* Our own port's LID and GID: the issuer of the notices the SA raises. */
static uint16_t issuer(const struct sa *sa, const struct fabric *f, uint8_t *gid)
{
	uint32_t p = f->pub.sm_port;
	memset(gid, 0, 16);
	if (p == IBSM_NONE)
		return 0;
	sa_put_gid(gid, sa->in.subnet_prefix, f->ports[p].guid);
	return f->ports[p].lid;
}

/* May a subscriber hear about subject: do they share a partition in the published generation? */
static int may_see(void *ctx, uint64_t subscriber, uint64_t subject)
{
	const struct sa *sa = ctx;
	const struct fabric *f = sa->in.r->f;
	uint32_t a = fabric_port_by_guid(f, subscriber), b = fabric_port_by_guid(f, subject);
	return a == IBSM_NONE || b == IBSM_NONE || sa_pkeys_share(sa->in.pk, a, b);
}

/* A subnet-management notice from the SA as a class manager (IBA 14.2.5.1) about port subject
 * (0: none) to the subscribers it matches that judge (NULL: every one) lets hear it. */
static unsigned class_notice(struct sa *sa, uint16_t trap, const uint8_t *details, uint64_t subject,
			     int (*judge)(void *ctx, uint64_t subscriber, uint64_t subject), double now)
{
	uint8_t gid[16], notice[NOTICE_SIZE];
	uint16_t lid = issuer(sa, sa->in.r->f, gid);
	sa_notice_build(notice, trap, NOTICE_TYPE_SUBNET_MGMT, NOTICE_PRODUCER_CLASS_MANAGER, lid, gid,
			details);
	return sa_inform_notice(sa->inform, notice, subject, judge, sa, now);
}

unsigned sa_reports_notice(struct sa *sa, uint16_t trap, const uint8_t *details, double now)
{
	if (!sa->in.r || !sa_inform_count(sa->inform))
		return 0;
	return class_notice(sa, trap, details, 0, NULL, now);
}

/* Trap 64 (GID in service) or 65 (out of service) for the end port guid (data: 6 reserved
 * bytes and the GID). */
static void gid_notice(struct sa *sa, uint16_t trap, uint64_t guid, double now)
{
	uint8_t details[54] = { 0 };
	sa_put_gid(details + 6, sa->in.subnet_prefix, guid);
	unsigned n = class_notice(sa, trap, details, guid, may_see, now);
	LOG_I("RPT-0002", "port 0x%016" G_GINT64_MODIFIER "x %s service: trap %u reported to %u subscriber%s",
	      guid, trap == 64 ? "in" : "out of", trap, n, n == 1 ? "" : "s");
}

/* End ports with a LID of a generation, by port GUID. */
static GHashTable *end_ports(const struct fabric *f)
{
	GHashTable *h = g_hash_table_new(g_int64_hash, g_int64_equal);
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		if (f->ports[p].lid && fabric_is_end_port(f, p))
			g_hash_table_add(h, (gpointer)&f->ports[p].guid);
	return h;
}

void sa_reports_generation(struct sa *sa, const struct fabric *old, const struct fabric *now_f)
{
	if (!sa_inform_count(sa->inform))
		return;
	double now = phase_now();
	GHashTable *before = end_ports(old), *after = end_ports(now_f);
	GHashTableIter it;
	gpointer k;
	g_hash_table_iter_init(&it, after);
	while (g_hash_table_iter_next(&it, &k, NULL))
		if (!g_hash_table_contains(before, k))
			gid_notice(sa, 64, *(uint64_t *)k, now);
	g_hash_table_iter_init(&it, before);
	while (g_hash_table_iter_next(&it, &k, NULL))
		if (!g_hash_table_contains(after, k)) {
			gid_notice(sa, 65, *(uint64_t *)k, now);
			/* OpenSM's drop manager drops them only with drop_event_subscriptions */
			if (sa->in.drop_event_subs)
				sa_inform_forget(sa->inform, *(uint64_t *)k);
		}
	g_hash_table_destroy(before);
	g_hash_table_destroy(after);
}

void sa_report_trap(struct sa *sa, const uint8_t *smp_notice)
{
	if (!sa || !sa->in.master || !sa->in.r || !sa_inform_count(sa->inform))
		return;
	const struct fabric *f = sa->in.r->f;
	uint8_t notice[NOTICE_SIZE];
	memcpy(notice, smp_notice, 64);
	uint16_t lid = (uint16_t)(notice[6] << 8 | notice[7]);
	uint32_t p = lid && lid <= f->pub.max_lid ? f->pub.lid_port[lid] : IBSM_NONE;
	uint64_t guid = p == IBSM_NONE ? 0 : f->ports[p].guid;
	if (guid)
		sa_put_gid(notice + 64, sa->in.subnet_prefix, guid);
	sa_inform_notice(sa->inform, notice, guid, may_see, sa, phase_now());
}
