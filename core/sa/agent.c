/* SPDX-License-Identifier: BSD-2-Clause */
/* agent.c - the SA agent: decode, check, answer from the published generation (sa/agent.h). */
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "sa/agent.h"
#include "sa/path_record.h"
#include "sa/records.h"
#include "sa/wire.h"

#define ATTR_CLASS_PORT_INFO 0x0001
#define SA_RESP_TIME_VALUE 18      /* ClassPortInfo.RespTimeValue: 4.096 us * 2^18 ~ 1 s */

struct sa {
	struct dispatch *d;
	struct routing_result *r;      /* the published routed generation (a reference) */
	int master;
	uint64_t sm_key;               /* a requester presenting it sees keys in records */
	struct pr_env pr;              /* what PathRecords need of the configuration */
	struct sa_stats st;
};

static void class_port_info(struct sa *sa, const struct sa_request *rq)
{
	uint8_t cpi[72] = { 0 };
	mad_set_field(cpi, 0, IB_CPI_BASEVER_F, 1);
	mad_set_field(cpi, 0, IB_CPI_CLASSVER_F, SA_CLASS_VERSION);
	mad_set_field(cpi, 0, IB_CPI_RESP_TIME_VALUE_F, SA_RESP_TIME_VALUE);
	sa->st.answered++;
	sa_respond_one(sa->d, rq, SA_GETRESP, cpi, sizeof(cpi));
}

static void answer_paths(struct sa *sa, const struct sa_request *rq)
{
	if (!sa->r) {
		sa_respond_status(sa->d, rq, SA_ERR_NO_RECORDS);
		return;
	}
	struct sa_view v = { .f = sa->r->f, .r = sa->r };
	GByteArray *out = g_byte_array_new();
	uint16_t st = pr_query(&v, &sa->pr, rq->record, rq->comp_mask, rq->method == SA_GETTABLE, out);
	uint32_t n = out->len / PR_SIZE;
	if (st) {
		sa->st.no_records++;
		sa_respond_status(sa->d, rq, st);
	} else if (rq->method == SA_GET && n != 1) {
		sa->st.no_records += n == 0;
		sa_respond_status(sa->d, rq, n ? SA_ERR_TOO_MANY_RECORDS : SA_ERR_NO_RECORDS);
	} else if (rq->method == SA_GET) {
		sa->st.answered++;
		sa_respond_one(sa->d, rq, SA_GETRESP, out->data, PR_SIZE);
	} else {
		sa->st.answered++;
		sa_respond_table(sa->d, rq, out->data, n, PR_SIZE);
	}
	g_byte_array_free(out, TRUE);
}

static void answer_records(struct sa *sa, const struct sa_request *rq)
{
	if (rq->attr == IB_SA_ATTR_PATHRECORD) {
		answer_paths(sa, rq);
		return;
	}
	const struct sa_kind *k = sa_kind_of(rq->attr);
	if (!k) {
		sa->st.unsupported++;
		sa_respond_status(sa->d, rq, SA_UNSUP_METHOD_ATTR);
		return;
	}
	GByteArray *all = g_byte_array_new();
	if (sa->r) {
		struct sa_view v = { .f = sa->r->f, .r = sa->r };
		k->build(&v, rq->sm_key == sa->sm_key, all);
	}
	size_t size = k->layout.size;
	uint32_t n = 0;
	for (size_t off = 0; off + size <= all->len; off += size) {
		if (!sa_match(&k->layout, rq->comp_mask, rq->record, all->data + off))
			continue;
		if ((size_t)n * size != off)
			memmove(all->data + (size_t)n * size, all->data + off, size);
		n++;
	}
	if (rq->method == SA_GET) {
		if (n != 1) {
			sa->st.no_records += n == 0;
			sa_respond_status(sa->d, rq, n ? SA_ERR_TOO_MANY_RECORDS : SA_ERR_NO_RECORDS);
		} else {
			sa->st.answered++;
			sa_respond_one(sa->d, rq, SA_GETRESP, all->data, size);
		}
	} else {
		sa->st.answered++;
		sa_respond_table(sa->d, rq, all->data, n, size);
	}
	g_byte_array_free(all, TRUE);
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
	if (rq.attr == ATTR_CLASS_PORT_INFO && rq.method == SA_GET) {
		class_port_info(sa, &rq);
		return;
	}
	answer_records(sa, &rq);
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
	pr_layout();
	dispatch_register(d, IB_SA_CLASS, SA_GET, DISPATCH_ANY_ATTR, on_request, sa);
	dispatch_register(d, IB_SA_CLASS, SA_GETTABLE, DISPATCH_ANY_ATTR, on_request, sa);
	return sa;
}

void sa_free(struct sa *sa)
{
	if (!sa)
		return;
	dispatch_register(sa->d, IB_SA_CLASS, SA_GET, DISPATCH_ANY_ATTR, NULL, NULL);
	dispatch_register(sa->d, IB_SA_CLASS, SA_GETTABLE, DISPATCH_ANY_ATTR, NULL, NULL);
	routing_result_unref(sa->r);
	g_free(sa);
}

void sa_publish(struct sa *sa, struct routing_result *r)
{
	if (!sa)
		return;
	struct routing_result *old = sa->r;
	sa->r = r ? routing_result_ref(r) : NULL;
	routing_result_unref(old);
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

void sa_set_master(struct sa *sa, int master)
{
	if (sa)
		sa->master = master;
}

const struct sa_stats *sa_stats(const struct sa *sa)
{
	return &sa->st;
}
