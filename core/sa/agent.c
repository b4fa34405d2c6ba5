/* SPDX-License-Identifier: BSD-2-Clause */
/* agent.c - the SA agent: decode, check, answer from the published generation (sa/agent.h). */
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "sa/agent.h"
#include "sa/path_record.h"
#include "mad/phase.h"
#include "sa/records.h"
#include "sa/service.h"
#include "sa/wire.h"

#define ATTR_CLASS_PORT_INFO 0x0001
#define SA_RESP_TIME_VALUE 18      /* ClassPortInfo.RespTimeValue: 4.096 us * 2^18 ~ 1 s */

struct sa {
	struct dispatch *d;
	struct routing_result *r;      /* the published routed generation (a reference) */
	struct sa_pkeys *pk;           /* its P_Key tables (owned) */
	int master;
	uint64_t sm_key;               /* a requester presenting it sees keys in records */
	struct pr_env pr;              /* what PathRecords need of the configuration */
	struct sa_self self;           /* this SM, for SMInfoRecord */
	struct sa_services *svc;       /* ServiceRecords registered (across generations) */
	struct sa_stats st;
};

static void class_port_info(struct sa_answer *a)
{
	uint8_t cpi[72] = { 0 };
	mad_set_field(cpi, 0, IB_CPI_BASEVER_F, 1);
	mad_set_field(cpi, 0, IB_CPI_CLASSVER_F, SA_CLASS_VERSION);
	mad_set_field(cpi, 0, IB_CPI_RESP_TIME_VALUE_F, SA_RESP_TIME_VALUE);
	g_byte_array_append(a->recs, cpi, sizeof(cpi));
	a->rec_size = sizeof(cpi);
}

/* Does a ServiceGID name a port of the generation? By its port GUID alone, as OpenSM: clients
 * (osmtest among them) write the prefix in host byte order. */
static int gid_known(const struct sa *sa, const struct fabric *f, const uint8_t *gid)
{
	(void)sa;
	uint64_t guid = 0;
	for (int i = 0; i < 8; i++)
		guid = guid << 8 | gid[8 + i];
	return f && fabric_port_by_guid(f, guid) != IBSM_NONE;
}

/* ServiceRecord Set, Delete, Get, GetTable. */
static void services(struct sa *sa, const struct sa_request *rq, const struct fabric *f, double now,
		     struct sa_answer *a)
{
	a->rec_size = SR_SIZE;
	if (rq->method == SA_SET) {
		uint8_t kept[SR_SIZE];
		a->status = sa_service_set(sa->svc, rq->record, rq->comp_mask,
					   gid_known(sa, f, rq->record + 8), now, kept);
		if (!a->status)
			g_byte_array_append(a->recs, kept, SR_SIZE);
	} else if (rq->method == SA_DELETE) {
		sa_service_delete(sa->svc, rq->record, rq->comp_mask, now, a->recs);
		if (!a->recs->len)
			a->status = SA_ERR_NO_RECORDS;
		else
			g_byte_array_set_size(a->recs, SR_SIZE); /* the answer carries the first */
	} else {
		sa_service_query(sa->svc, rq->record, rq->comp_mask, now, a->recs);
	}
}

void sa_compute(struct sa *sa, const struct sa_request *rq, double now, struct sa_answer *a)
{
	a->status = 0;
	a->table = rq->method == SA_GETTABLE;
	a->method = dispatch_response_method(rq->method);
	a->rec_size = 0;
	g_byte_array_set_size(a->recs, 0);
	if (rq->attr == ATTR_CLASS_PORT_INFO && rq->method == SA_GET) {
		class_port_info(a);
		return;
	}
	struct sa_view v = { .f = sa->r ? sa->r->f : NULL, .r = sa->r, .pk = sa->pk, .self = sa->self };
	v.self.sm_key = sa->sm_key;
	if (rq->attr == IB_SA_ATTR_SERVICERECORD) {
		services(sa, rq, v.f, now, a);
	} else if (rq->method == SA_SET || rq->method == SA_DELETE) {
		a->status = SA_UNSUP_METHOD_ATTR;
		return;
	} else if (rq->attr == IB_SA_ATTR_PATHRECORD) {
		a->rec_size = PR_SIZE;
		if (v.f)
			a->status = pr_query(&v, &sa->pr, rq->record, rq->comp_mask, a->table, a->recs);
	} else {
		const struct sa_kind *k = sa_kind_of(rq->attr);
		if (!k) {
			a->status = SA_UNSUP_METHOD_ATTR;
			return;
		}
		a->rec_size = k->layout.size;
		GByteArray *all = a->recs;
		if (v.f)
			k->build(&v, rq->sm_key == sa->sm_key, all);
		size_t size = k->layout.size, n = 0;
		for (size_t off = 0; off + size <= all->len; off += size) {
			if (!sa_match(&k->layout, rq->comp_mask, rq->record, all->data + off))
				continue;
			if (n * size != off)
				memmove(all->data + n * size, all->data + off, size);
			n++;
		}
		g_byte_array_set_size(all, (guint)(n * size));
	}
	if (a->status)
		g_byte_array_set_size(a->recs, 0);
	else if (!a->table && a->recs->len != a->rec_size)
		a->status = a->recs->len ? SA_ERR_TOO_MANY_RECORDS : SA_ERR_NO_RECORDS;
}

static void answer(struct sa *sa, const struct sa_request *rq)
{
	struct sa_answer a = { .recs = g_byte_array_new() };
	sa_compute(sa, rq, phase_now(), &a);
	if (a.status == SA_UNSUP_METHOD_ATTR)
		sa->st.unsupported++;
	else if (a.status)
		sa->st.no_records++;
	else
		sa->st.answered++;
	if (a.status)
		sa_respond_status(sa->d, rq, a.status);
	else if (a.table)
		sa_respond_table(sa->d, rq, a.recs->data, a.recs->len / (guint)a.rec_size, a.rec_size);
	else
		sa_respond_one(sa->d, rq, a.method, a.recs->data, a.rec_size);
	g_byte_array_free(a.recs, TRUE);
}

static void on_request(struct dispatch *d, const struct mad_in *m, void *ctx)
{
	(void)d;
	struct sa *sa = ctx;
	struct sa_request rq;
	sa->st.requests++;
	int rc = sa_decode(m, &rq);
	if (rc < 0) {
		sa->st.bad++;
		LOG_V("SA-0001", "SA MAD of %d bytes dropped: too short", m->len);
		return;
	}
	if (!sa->master) {
		sa->st.not_master++;
		return;
	}
	if (rc > 0) {
		sa->st.bad++;
		sa_respond_status(sa->d, &rq, (uint16_t)rc);
		return;
	}
	answer(sa, &rq);
}

struct sa *sa_new(struct dispatch *d)
{
	const char *bad = NULL;
	if (sa_kinds_check(&bad) < 0) {
		LOG_E("SA-0002", "SA record layout %s does not add up to its size: SA disabled", bad);
		return NULL;
	}
	struct sa *sa = g_new0(struct sa, 1);
	sa->d = d;
	sa->pr.subnet_prefix = 0xfe80000000000000ULL;
	sa->pr.packet_life = 18;
	sa->svc = sa_services_new();
	pr_layout();
	if (!d) /* computing answers only (tests, fuzzing) */
		return sa;
	dispatch_register(d, IB_SA_CLASS, SA_GET, DISPATCH_ANY_ATTR, on_request, sa);
	dispatch_register(d, IB_SA_CLASS, SA_GETTABLE, DISPATCH_ANY_ATTR, on_request, sa);
	dispatch_register(d, IB_SA_CLASS, SA_SET, DISPATCH_ANY_ATTR, on_request, sa);
	dispatch_register(d, IB_SA_CLASS, SA_DELETE, DISPATCH_ANY_ATTR, on_request, sa);
	return sa;
}

void sa_free(struct sa *sa)
{
	if (!sa)
		return;
	if (sa->d) {
		dispatch_register(sa->d, IB_SA_CLASS, SA_GET, DISPATCH_ANY_ATTR, NULL, NULL);
		dispatch_register(sa->d, IB_SA_CLASS, SA_GETTABLE, DISPATCH_ANY_ATTR, NULL, NULL);
		dispatch_register(sa->d, IB_SA_CLASS, SA_SET, DISPATCH_ANY_ATTR, NULL, NULL);
		dispatch_register(sa->d, IB_SA_CLASS, SA_DELETE, DISPATCH_ANY_ATTR, NULL, NULL);
	}
	sa_services_free(sa->svc);
	routing_result_unref(sa->r);
	sa_pkeys_free(sa->pk);
	g_free(sa);
}

void sa_publish(struct sa *sa, struct routing_result *r, struct sa_pkeys *pk)
{
	if (!sa) {
		sa_pkeys_free(pk);
		return;
	}
	struct routing_result *old = sa->r;
	struct sa_pkeys *old_pk = sa->pk;
	sa->r = r ? routing_result_ref(r) : NULL;
	sa->pk = pk;
	routing_result_unref(old);
	sa_pkeys_free(old_pk);
}

void sa_set_sm_key(struct sa *sa, uint64_t sm_key)
{
	if (sa)
		sa->sm_key = sm_key;
}

void sa_set_path_env(struct sa *sa, uint64_t subnet_prefix, uint8_t packet_life)
{
	if (sa) {
		sa->pr.subnet_prefix = subnet_prefix;
		sa->pr.packet_life = packet_life;
	}
}

void sa_set_self(struct sa *sa, uint8_t priority, uint8_t state, uint32_t act_count)
{
	if (sa) {
		sa->self.priority = priority;
		sa->self.state = state;
		sa->self.act_count = act_count;
	}
}

void sa_set_master(struct sa *sa, int master)
{
	if (sa)
		sa->master = master;
}

const struct sa_stats *sa_stats(const struct sa *sa)
{
	return &sa->st;
}
