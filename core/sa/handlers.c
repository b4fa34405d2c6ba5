/* SPDX-License-Identifier: BSD-2-Clause */
/* handlers.c - the table of every attribute the SA serves, and the few handlers too small to
 * be a file of their own: ClassPortInfo, PathRecord, MultiPathRecord, the record kinds
 * (sa/handlers.h). */
#include <infiniband/mad.h>
#include <infiniband/umad_sa.h>
#include "sa/handlers.h"
#include "sa/inform.h"
#include "sa/inform_requests.h"
#include "sa/mcast_requests.h"
#include "sa/mcmember.h"
#include "sa/multipath_record.h"
#include "sa/path_record.h"
#include "sa/records.h"
#include "sa/service.h"
#include "sa/service_requests.h"
#include "sa/state.h"
#include "sa/wire.h"

#define CPI_SIZE 72
#define SA_RESP_TIME_VALUE 16      /* ClassPortInfo.RespTimeValue: 4.096 us * 2^16 = 268 ms */

/* ClassPortInfo: what this SA really does. CapabilityMask: MultiPathRecord (bit 10), PortInfo
 * CapabilityMask matched as a subset when AttributeModifier bit 31 asks (13); CapabilityMask2:
 * PortInfoRecords are the whole PortInfo (6) with the extended speeds (7). UD multicast (9):
 * MCMemberRecord joins program the switches' MFTs. Not claimed: optional records (8:
 * ServiceAssociation and RandomForwardingTable are not served), alias GUIDs (CapabilityMask2
 * 5). MulticastFDBTop (CapabilityMask2 3) with use_mfttop, which programs it.
 * The SA answers on QP1 with the well-known Q_Key, and Reports (traps) go out the same way. */
static void class_port_info(struct sa *sa, const struct sa_request *rq, const struct sa_view *v,
			    double now, struct sa_answer *a)
{
	(void)sa, (void)rq, (void)v, (void)now;
	uint8_t cpi[CPI_SIZE] = { 0 };
	mad_set_field(cpi, 0, IB_CPI_BASEVER_F, 1);
	mad_set_field(cpi, 0, IB_CPI_CLASSVER_F, SA_CLASS_VERSION);
	/* disable_multicast: no UD multicast claimed, as OpenSM */
	mad_set_field(cpi, 0, IB_CPI_CAPMASK_F, UMAD_SA_CAP_MASK_IS_MULTIPATH_SUP |
		      UMAD_SA_CAP_MASK_IS_PORTINFO_CAP_MASK_MATCH_SUP |
		      (sa->in.mc_disabled ? 0 : UMAD_SA_CAP_MASK_IS_UD_MCAST_SUP));
	mad_set_field(cpi, 0, IB_CPI_CAPMASK2_F, UMAD_SA_CAP_MASK2_IS_FULL_PORTINFO_REC_SUP |
		      UMAD_SA_CAP_MASK2_IS_EXT_SPEEDS_SUP |
		      (sa->in.mfttop ? UMAD_SA_CAP_MASK2_IS_MCAST_TOP_SUP : 0));
	mad_set_field(cpi, 0, IB_CPI_RESP_TIME_VALUE_F, SA_RESP_TIME_VALUE);
	mad_set_field(cpi, 0, IB_CPI_REDIRECT_QP_F, 1);
	mad_set_field(cpi, 0, IB_CPI_REDIRECT_QKEY_F, IB_DEFAULT_QP1_QKEY);
	mad_set_field(cpi, 0, IB_CPI_TRAP_QKEY_F, IB_DEFAULT_QP1_QKEY);
	g_byte_array_append(a->recs, cpi, sizeof(cpi));
}

static void path_records(struct sa *sa, const struct sa_request *rq, const struct sa_view *v,
			 double now, struct sa_answer *a)
{
	(void)now;
	struct pr_env env = { .subnet_prefix = sa->in.subnet_prefix, .packet_life = sa->in.packet_life,
			      .mc = sa->mc, .rtr_flow_label = sa->in.rtr_flow_label,
			      .rtr_tclass = sa->in.rtr_tclass, .rtr_sl = sa->in.rtr_sl,
			      .prefix_routes = sa->in.prefix_routes,
			      .rtr_mtu = sa->in.rtr_mtu, .rtr_rate = sa->in.rtr_rate };
	if (v->f)
		a->status = pr_query(v, &env, rq->record, rq->comp_mask, a->table, a->recs);
}

static void multipath_records(struct sa *sa, const struct sa_request *rq, const struct sa_view *v,
			      double now, struct sa_answer *a)
{
	(void)now;
	struct pr_env env = { .subnet_prefix = sa->in.subnet_prefix, .packet_life = sa->in.packet_life };
	if (v->f)
		a->status = mpr_query(v, &env, rq->record, rq->record_len, rq->comp_mask, a->recs);
}

/* A record kind: a requester presenting a key sees the keys in records (a key other than the
 * SA_Key was dropped on arrival: OpenSM's osm_sa_mad_ctrl.c); the kinds that say so answer only
 * one presenting the SA_Key exactly (OpenSM's P_KeyTableRecords: 0 too, when sa_key is 0). */
static void kind_records(const struct sa_kind *k, struct sa *sa, const struct sa_request *rq,
			 const struct sa_view *v, struct sa_answer *a)
{
	int trusted = rq->sm_key != 0;
	if (k->trusted_only && rq->sm_key != sa->in.sa_key) {
		a->status = SA_ERR_REQ_INVALID;
		return;
	}
	sa_kind_answer(k, v, trusted, rq->record, rq->record_len, rq->comp_mask, a->recs);
}

extern struct sa_kind sa_node_record, sa_portinfo_record, sa_link_record, sa_lft_record,
	sa_guidinfo_record, sa_sminfo_record, sa_pkey_record, sa_switchinfo_record, sa_sl2vl_record,
	sa_vlarb_record, sa_mft_record;

#define M(m) SA_METHOD_BIT(m)
#define QUERIES (M(SA_GET) | M(SA_GETTABLE))
#define KIND(a, k) { .attr = (a), .methods = QUERIES, .kind = &(k) }

/* Every attribute served, by number. GetMulti is the MultiPathRecord's method (IBA 15.4);
 * ServiceRecord and InformInfoRecord take it as a GetTable (OpenSM answers UNSUP_METHOD_ATTR). */
static const struct sa_attr_handler table[] = {
	{ 0x0001, M(SA_GET), 0, CPI_SIZE, class_port_info, NULL },                  /* ClassPortInfo */
	{ IB_SA_ATTR_INFORMINFO, M(SA_SET), II_SIZE, II_SIZE, sa_inform_request, NULL },
	KIND(0x0011, sa_node_record),
	KIND(0x0012, sa_portinfo_record),
	KIND(0x0013, sa_sl2vl_record),
	KIND(0x0014, sa_switchinfo_record),
	KIND(0x0015, sa_lft_record),
	KIND(0x0017, sa_mft_record),
	KIND(0x0018, sa_sminfo_record),
	KIND(0x0020, sa_link_record),
	KIND(0x0030, sa_guidinfo_record),
	{ IB_SA_ATTR_SERVICERECORD, QUERIES | M(SA_GETMULTI) | M(SA_SET) | M(SA_DELETE), SR_SIZE, SR_SIZE,
	  sa_service_request, NULL },
	KIND(0x0033, sa_pkey_record),
	{ IB_SA_ATTR_PATHRECORD, QUERIES, PR_SIZE, PR_SIZE, path_records, NULL },
	KIND(0x0036, sa_vlarb_record),
	{ MCMR_ATTR, QUERIES | M(SA_SET) | M(SA_DELETE), MCMR_SIZE, MCMR_SIZE, sa_mcast_request, NULL },
	/* its fixed part is read first; the GIDs are checked against what arrived */
	{ IB_SA_ATTR_MULTIPATH, M(SA_GETMULTI), MPR_FIXED, PR_SIZE, multipath_records, NULL },
	{ IB_SA_ATTR_INFORMINFORECORD, QUERIES | M(SA_GETMULTI), IIR_SIZE, IIR_SIZE, sa_inform_record_request,
	  NULL },
};

int sa_handlers_check(const char **bad)
{
	for (size_t i = 0; i < G_N_ELEMENTS(table); i++) {
		struct sa_kind *k = table[i].kind;
		if (!k)
			continue;
		if ((k->init && k->init(&k->layout) < 0) || sa_layout_init(&k->layout) < 0 ||
		    k->layout.attr != table[i].attr) {
			if (bad)
				*bad = k->layout.name;
			return -1;
		}
	}
	return 0;
}

const struct sa_attr_handler *sa_handler_of(uint16_t attr)
{
	for (size_t i = 0; i < G_N_ELEMENTS(table); i++)
		if (table[i].attr == attr)
			return &table[i];
	return NULL;
}

size_t sa_handler_need(uint16_t attr)
{
	const struct sa_attr_handler *h = sa_handler_of(attr);
	return !h ? 0 : h->kind ? h->kind->layout.size : h->need;
}

size_t sa_handler_rec_size(const struct sa_attr_handler *h)
{
	return h->kind ? h->kind->layout.size : h->rec_size;
}

const struct sa_kind *sa_kind_of(uint16_t attr)
{
	const struct sa_attr_handler *h = sa_handler_of(attr);
	return h ? h->kind : NULL;
}

void sa_handler_answer(const struct sa_attr_handler *h, struct sa *sa, const struct sa_request *rq,
		       const struct sa_view *v, double now, struct sa_answer *a)
{
	if (h->kind)
		kind_records(h->kind, sa, rq, v, a);
	else
		h->handle(sa, rq, v, now, a);
}
