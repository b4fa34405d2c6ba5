/* SPDX-License-Identifier: BSD-2-Clause */
/* agent.c - the SA agent: decode, check, answer from the published generation (sa/agent.h). */
#include <inttypes.h>
#include <string.h>
#include <infiniband/umad.h>
#include <infiniband/umad_sa.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "sa/agent.h"
#include "sa/inform.h"
#include "sa/ipoib_groups.h"
#include "sa/mcmember.h"
#include "sa/mlid.h"
#include "sa/multipath_record.h"
#include "sa/path_record.h"
#include "sa/queue.h"
#include "mad/phase.h"
#include "sa/records.h"
#include "sa/service.h"
#include "sa/wire.h"

#define ATTR_CLASS_PORT_INFO 0x0001
struct sa;
static uint16_t issuer(const struct sa *sa, const struct fabric *f, uint8_t *gid);
#define SA_RESP_TIME_VALUE 16      /* ClassPortInfo.RespTimeValue: 4.096 us * 2^16 = 268 ms */
/* The request queue: a requester (LID) may have SA_QUEUE_PER_REQUESTER requests waiting (32
 * outstanding from each of its processes is common), all of them together SA_QUEUE_MAX; more
 * are answered BUSY. SA_SERVE_BUDGET answers go out per I/O step, so a storm of requests
 * never holds a sweep's SMPs back for longer than that many answers take. */
#define SA_QUEUE_MAX 4096
#define SA_QUEUE_PER_REQUESTER 256
#define SA_SERVE_BUDGET 64
/* The most record bytes one answer carries (an RMPP transfer of this many bytes is some 42000
 * segments): a GetTable that would be larger (PathRecords of every pair of a large fabric) is
 * answered TOO_MANY_RECORDS (IBA 15.2.5: the requester asks again with a narrower mask). Every
 * linear table of a 3000-switch fabric fits. */
#define SA_ANSWER_MAX (8u << 20)

struct sa {
	struct dispatch *d;
	struct routing_result *r;      /* the published routed generation (a reference) */
	struct sa_pkeys *pk;           /* its P_Key tables (owned) */
	int master;
	uint64_t sm_key;               /* a requester presenting it sees keys in records */
	struct pr_env pr;              /* what PathRecords need of the configuration */
	struct sa_self self;           /* this SM, for SMInfoRecord */
	GArray *remote;                /* of struct sa_remote_sm: the other SMs, ditto */
	struct sa_services *svc;       /* ServiceRecords registered (across generations) */
	struct sa_inform *inform;      /* event subscriptions and their Reports */
	guint report_timer;            /* resends unacknowledged Reports */
	struct sa_queue *q;            /* requests waiting for their answer */
	struct mc_groups *mc;          /* multicast groups (across generations) */
	void (*mc_changed)(void *ctx, uint16_t mlid); /* a group's members changed */
	void *mc_ctx;
	uint8_t mc_mtu, mc_rate;       /* the most a group may ask of every link of the generation */
	const struct mft_memory *mft;  /* what the switches' MFTs hold */
	const struct vlt_memory *vlt;  /* what the SL2VL / VLArb tables hold */
	struct qos_match *qos;         /* the QoS policy in force (-Q), NULL: none */
	uint8_t *part_sl;              /* [0x8000] the SL of each partition's paths (+1; 0: none) */
	struct sa_stats st;
};

/* ClassPortInfo: what this SA really does. CapabilityMask: MultiPathRecord (bit 10), PortInfo
 * CapabilityMask matched as a subset (13); CapabilityMask2: SwitchInfoRecord carries
 * MulticastFDBTop (3), PortInfoRecords are the whole PortInfo (6) with the extended speeds (7).
 * UD multicast (9): MCMemberRecord joins program the switches' MFTs. Not claimed: optional records (8: ServiceAssociation
 * and RandomForwardingTable are not served), alias GUIDs (CapabilityMask2 5). The SA answers on
 * QP1 with the well-known Q_Key, and Reports (traps) go out the same way. */
static void class_port_info(struct sa_answer *a)
{
	uint8_t cpi[72] = { 0 };
	mad_set_field(cpi, 0, IB_CPI_BASEVER_F, 1);
	mad_set_field(cpi, 0, IB_CPI_CLASSVER_F, SA_CLASS_VERSION);
	mad_set_field(cpi, 0, IB_CPI_CAPMASK_F, UMAD_SA_CAP_MASK_IS_MULTIPATH_SUP |
		      UMAD_SA_CAP_MASK_IS_PORTINFO_CAP_MASK_MATCH_SUP | UMAD_SA_CAP_MASK_IS_UD_MCAST_SUP);
	mad_set_field(cpi, 0, IB_CPI_CAPMASK2_F, UMAD_SA_CAP_MASK2_IS_MCAST_TOP_SUP |
		      UMAD_SA_CAP_MASK2_IS_FULL_PORTINFO_REC_SUP | UMAD_SA_CAP_MASK2_IS_EXT_SPEEDS_SUP);
	mad_set_field(cpi, 0, IB_CPI_RESP_TIME_VALUE_F, SA_RESP_TIME_VALUE);
	mad_set_field(cpi, 0, IB_CPI_REDIRECT_QP_F, 1);
	mad_set_field(cpi, 0, IB_CPI_REDIRECT_QKEY_F, IB_DEFAULT_QP1_QKEY);
	mad_set_field(cpi, 0, IB_CPI_TRAP_QKEY_F, IB_DEFAULT_QP1_QKEY);
	g_byte_array_append(a->recs, cpi, sizeof(cpi));
	a->rec_size = sizeof(cpi);
}

/* The port a request came from, in generation f (IBSM_NONE: unknown). */
static uint32_t requester_port(const struct fabric *f, const struct sa_request *rq)
{
	return f && rq->slid && rq->slid <= f->pub.max_lid ? f->pub.lid_port[rq->slid] : IBSM_NONE;
}

/* A ServiceRecord request as the SA judges it (doc/sa-partitions.md). */
struct sr_ctx {
	const struct sa_view *v;
	int trusted;               /* the requester presented our SM_Key */
};

/* The port a ServiceGID names, by its port GUID alone as OpenSM (clients, osmtest among them,
 * write the prefix in host byte order), or IBSM_NONE. */
static uint32_t service_port(const struct fabric *f, const uint8_t *rec)
{
	return f ? fabric_port_by_guid(f, sa_be64(rec + 16)) : IBSM_NONE;
}

static uint16_t service_pkey(const uint8_t *rec)
{
	return (uint16_t)(rec[24] << 8 | rec[25]);
}

/* May the requester see service rec? When it names a partition (a valid ServiceP_Key) the
 * requester must hold that key, as on OpenSM; otherwise it must share a partition with the
 * port of its ServiceGID (OpenSM shows such a service to every port). */
static int sr_visible(void *ctx, const uint8_t *rec, const struct sr_owner *owner)
{
	(void)owner;
	const struct sr_ctx *c = ctx;
	uint16_t pkey = service_pkey(rec);
	if (pkey & 0x7fff)
		return sa_pkeys_has(c->v->pk, c->v->requester, pkey);
	return sa_view_sees(c->v, service_port(c->v->f, rec));
}

/* Is the requester the service's owner: on the node that registered it or on the node of its
 * ServiceGID's port (or presenting our SM_Key)? */
static int sr_owns(const struct sr_ctx *c, const uint8_t *rec, const struct sr_owner *owner)
{
	const struct fabric *f = c->v->f;
	uint32_t r = c->v->requester, p = service_port(f, rec);
	if (c->trusted)
		return 1;
	if (r == IBSM_NONE)
		return 0;
	uint64_t node = f->nodes[f->ports[r].node].guid;
	return (owner && owner->node == node) || (p != IBSM_NONE && f->nodes[f->ports[p].node].guid == node);
}

/* Delete: only a service the requester may see (else there is none for it) and owns. */
static uint16_t sr_may_delete(void *ctx, const uint8_t *rec, const struct sr_owner *owner)
{
	const struct sr_ctx *c = ctx;
	if (!sr_visible(ctx, rec, owner))
		return SA_ERR_NO_RECORDS;
	return sr_owns(c, rec, owner) ? 0 : SA_ERR_REQ_INVALID;
}

/* The ServiceP_Key check of OpenSM's osm_sa_service_record.c (validate_sr): the requester and
 * the ServiceGID's port both hold it. OpenSM checks it when the mask names it; a Set here
 * also when the record carries a valid key the mask does not name (it is kept and decides who
 * sees the service). */
static int sr_pkey_ok(const struct sr_ctx *c, const uint8_t *rec, uint64_t mask, int set)
{
	uint16_t pkey = service_pkey(rec);
	if (!(mask & 1u << SR_PKEY) && !(set && (pkey & 0x7fff)))
		return 1;
	if (!sa_pkeys_has(c->v->pk, c->v->requester, pkey))
		return 0;
	if (!set && !(mask & 1u << SR_GID))
		return 1;
	uint32_t p = service_port(c->v->f, rec);
	return p != IBSM_NONE && sa_pkeys_has(c->v->pk, p, pkey);
}

/* ServiceRecord Set, Delete, Get, GetTable, as OpenSM 3.3.23 answers them and stricter where
 * doc/sa-partitions.md says: a Set names a port of the requester's own node and a P_Key both
 * hold, at most SR_MAX_PER_PORT services per requester port; a Delete takes the one service
 * its record names (never a pattern) and only the owner's; Get shows what the requester's
 * partitions let it see. */
static void services(struct sa *sa, const struct sa_request *rq, const struct sa_view *v, double now,
		     struct sa_answer *a)
{
	a->rec_size = SR_SIZE;
	struct sr_ctx c = { .v = v, .trusted = rq->sm_key && rq->sm_key == sa->sm_key };
	const uint8_t *rec = rq->record;
	if (rq->method == SA_SET) {
		uint8_t kept[SR_SIZE];
		uint32_t r = v->requester;
		if (!(rq->comp_mask & 1u << SR_ID) || !(rq->comp_mask & 1u << SR_GID))
			a->status = SA_ERR_REQ_INSUFFICIENT_COMPONENTS;
		else if (service_port(v->f, rec) == IBSM_NONE)
			a->status = SA_ERR_REQ_INVALID_GID;
		else if (!sr_pkey_ok(&c, rec, rq->comp_mask, 1) || !sr_owns(&c, rec, NULL))
			a->status = SA_ERR_REQ_INVALID;
		else {
			const struct fabric *f = v->f;
			struct sr_owner who = { 0 };
			if (r != IBSM_NONE) {
				who.port = f->ports[r].guid;
				who.node = f->nodes[f->ports[r].node].guid;
			}
			a->status = sa_service_set(sa->svc, rec, rq->comp_mask, &who,
						   c.trusted ? 0 : SR_MAX_PER_PORT, now, kept);
			if (a->status == SA_ERR_NO_RESOURCES && sa_services_refused(sa->svc) % 1000 == 1)
				LOG_I("SA-0020", "ServiceRecord Set from LID %u refused NO_RESOURCES: its port "
				      "holds %u services (at most %u a port, %u in all; %" PRIu64 " refused "
				      "so far)", rq->slid, sa_services_held(sa->svc, who.port, now),
				      SR_MAX_PER_PORT, SR_MAX, sa_services_refused(sa->svc));
		}
		if (!a->status)
			g_byte_array_append(a->recs, kept, SR_SIZE);
	} else if (rq->method == SA_DELETE) {
		if (!sr_pkey_ok(&c, rec, rq->comp_mask, 0))
			a->status = SA_ERR_REQ_INVALID;
		else
			a->status = sa_service_delete(sa->svc, rec, now, sr_may_delete, &c, a->recs);
	} else {
		sa_service_query(sa->svc, rec, rq->comp_mask, now, sr_visible, &c, a->recs);
	}
}

struct visibility {
	const struct sa *sa;
	uint32_t requester;
};

/* May the requester see a subscription of port guid: do they share a partition? */
static int shares_partition(void *ctx, uint64_t guid)
{
	const struct visibility *vis = ctx;
	const struct fabric *f = vis->sa->r->f;
	uint32_t p = fabric_port_by_guid(f, guid);
	return p == IBSM_NONE || sa_pkeys_share(vis->sa->pk, vis->requester, p);
}

/* InformInfo Set (subscribe, unsubscribe) and InformInfoRecord Get/GetTable. */
static void informs(struct sa *sa, const struct sa_request *rq, const struct fabric *f,
		    struct sa_answer *a)
{
	uint32_t port = requester_port(f, rq);
	int trusted = rq->sm_key == sa->sm_key;
	if (rq->attr == IB_SA_ATTR_INFORMINFO) {
		a->rec_size = II_SIZE;
		if (rq->method != SA_SET) {
			a->status = SA_UNSUP_METHOD_ATTR;
			return;
		}
		if (port == IBSM_NONE) { /* Reports could not find it */
			a->status = SA_ERR_REQ_INVALID;
			return;
		}
		struct sa_requester who = { .guid = f->ports[port].guid, .prefix = sa->pr.subnet_prefix,
					    .lid = rq->slid, .qpn = rq->qpn, .trusted = trusted };
		uint8_t kept[II_SIZE];
		a->status = sa_inform_set(sa->inform, rq->record, &who, kept);
		if (!a->status)
			g_byte_array_append(a->recs, kept, II_SIZE);
		return;
	}
	a->rec_size = IIR_SIZE;
	if (rq->method == SA_SET || rq->method == SA_DELETE) {
		a->status = SA_UNSUP_METHOD_ATTR;
		return;
	}
	struct visibility vis = { .sa = sa, .requester = port };
	sa_inform_records(sa->inform, rq->record, rq->comp_mask, trusted, f ? shares_partition : NULL,
			  &vis, a->recs);
}

/* May port (GUID) be a member of partition pkey: is the key in its P_Key table? (Either
 * membership: a limited member may join a full-member group, as on OpenSM.) */
static int in_partition(void *ctx, uint64_t guid, uint16_t pkey)
{
	const struct sa *sa = ctx;
	uint32_t p = sa->r ? fabric_port_by_guid(sa->r->f, guid) : IBSM_NONE;
	if (p == IBSM_NONE)
		return 0;
	uint32_t n;
	const uint16_t *keys = sa->pk ? sa_pkeys_of(sa->pk, p, &n) : NULL;
	if (!keys)
		return 1; /* not known: not refused */
	for (uint32_t i = 0; i < n; i++)
		if ((keys[i] & 0x7fff) == (pkey & 0x7fff) && (keys[i] & 0x7fff))
			return 1;
	return 0;
}

/* Trap 66 (group created) or 67 (deleted) to the subscribers (data: 6 reserved bytes, MGID). */
static void mcast_notice(struct sa *sa, uint16_t trap, const uint8_t *mgid)
{
	if (!sa->r || !sa_inform_count(sa->inform))
		return;
	uint8_t details[54] = { 0 }, gid[16], notice[NOTICE_SIZE];
	memcpy(details + 6, mgid, 16);
	uint16_t lid = issuer(sa, sa->r->f, gid);
	sa_notice_build(notice, trap, NOTICE_TYPE_SUBNET_MGMT, NOTICE_PRODUCER_CLASS_MANAGER, lid, gid,
			details);
	sa_inform_notice(sa->inform, notice, 0, NULL, NULL, phase_now());
}

static uint16_t rec_mlid(const uint8_t *rec)
{
	return (uint16_t)(rec[36] << 8 | rec[37]);
}

/* MCMemberRecord Set (join), Delete (leave), Get/GetTable. */
static void multicast(struct sa *sa, const struct sa_request *rq, const struct fabric *f,
		      struct sa_answer *a)
{
	a->rec_size = MCMR_SIZE;
	uint32_t port = requester_port(f, rq);
	if (port == IBSM_NONE) {
		a->status = SA_ERR_REQ_INVALID;
		return;
	}
	struct mcm_requester who = { .port_guid = f->ports[port].guid,
				     .trusted = rq->sm_key && rq->sm_key == sa->sm_key };
	struct mcm_env env = { .max_mtu = sa->mc_mtu, .max_rate = sa->mc_rate,
			       .packet_life = sa->pr.packet_life, .pkey_ok = in_partition, .ctx = sa };
	if (rq->method != SA_SET && rq->method != SA_DELETE) {
		if (rq->method == SA_GETMULTI)
			a->status = SA_UNSUP_METHOD_ATTR;
		else
			mcm_query(sa->mc, &env, rq->record, rq->comp_mask, &who, a->recs);
		return;
	}
	uint8_t out[MCMR_SIZE];
	int changed;
	if (rq->method == SA_SET) {
		a->status = mcm_join(sa->mc, &env, rq->record, rq->comp_mask, &who, out, &changed);
		if (!a->status && changed)
			mcast_notice(sa, 66, out);
	} else {
		a->status = mcm_leave(sa->mc, &env, rq->record, rq->comp_mask, &who, out, &changed);
		if (!a->status && changed)
			mcast_notice(sa, 67, out);
	}
	if (a->status)
		return;
	g_byte_array_append(a->recs, out, MCMR_SIZE);
	sa->st.mcast_changes++;
	if (sa->mc_changed)
		sa->mc_changed(sa->mc_ctx, rec_mlid(out));
}

/* The record bytes a request for attr must carry before any of its fields is read: the whole
 * record (a MAD's data area holds every record the SA serves), a MultiPathRecord's fixed part
 * (its GIDs are checked against what arrived); 0 for ClassPortInfo and for attributes not
 * served (answered UNSUP_METHOD_ATTR without a look at the record). */
static size_t record_needed(uint16_t attr)
{
	switch (attr) {
	case MCMR_ATTR:
		return MCMR_SIZE;
	case IB_SA_ATTR_SERVICERECORD:
		return SR_SIZE;
	case IB_SA_ATTR_INFORMINFO:
		return II_SIZE;
	case IB_SA_ATTR_INFORMINFORECORD:
		return IIR_SIZE;
	case IB_SA_ATTR_PATHRECORD:
		return PR_SIZE;
	case IB_SA_ATTR_MULTIPATH:
		return MPR_FIXED;
	default: {
		const struct sa_kind *k = sa_kind_of(attr);
		return k ? k->layout.size : 0;
	}
	}
}

/* Is rq's record shorter than its attribute's (a MAD cut short: never read past its end)? */
static int record_short(const struct sa_request *rq)
{
	return rq->record_len < record_needed(rq->attr);
}

void sa_compute(struct sa *sa, const struct sa_request *rq, double now, struct sa_answer *a)
{
	a->status = 0;
	a->table = rq->method == SA_GETTABLE || rq->method == SA_GETMULTI;
	a->method = dispatch_response_method(rq->method);
	a->rec_size = 0;
	g_byte_array_set_size(a->recs, 0);
	if (rq->attr == ATTR_CLASS_PORT_INFO && rq->method == SA_GET) {
		class_port_info(a);
		return;
	}
	if (record_short(rq)) {
		a->status = SA_ERR_REQ_INVALID;
		return;
	}
	struct sa_view v = { .f = sa->r ? sa->r->f : NULL, .r = sa->r, .pk = sa->pk, .self = sa->self,
			     .remote = (const struct sa_remote_sm *)(void *)sa->remote->data,
			     .n_remote = sa->remote->len };
	v.self.sm_key = sa->sm_key;
	v.mft = sa->mft;
	v.vlt = sa->vlt;
	v.qos = sa->qos;
	v.part_sl = sa->part_sl;
	v.requester = requester_port(v.f, rq); /* what it may see: doc/sa-partitions.md */
	v.answer_max = SA_ANSWER_MAX;
	if (rq->attr == MCMR_ATTR) {
		if (v.f)
			multicast(sa, rq, v.f, a);
		else
			a->status = rq->method == SA_SET ? SA_ERR_REQ_INVALID : 0;
	} else if (rq->attr == IB_SA_ATTR_SERVICERECORD) {
		services(sa, rq, &v, now, a);
	} else if (rq->attr == IB_SA_ATTR_INFORMINFO || rq->attr == IB_SA_ATTR_INFORMINFORECORD) {
		informs(sa, rq, v.f, a);
	} else if (rq->method == SA_SET || rq->method == SA_DELETE ||
		   (rq->method == SA_GETMULTI) != (rq->attr == IB_SA_ATTR_MULTIPATH)) {
		a->status = SA_UNSUP_METHOD_ATTR;
		return;
	} else if (rq->attr == IB_SA_ATTR_MULTIPATH) {
		a->rec_size = PR_SIZE;
		if (v.f)
			a->status = mpr_query(&v, &sa->pr, rq->record, rq->record_len, rq->comp_mask,
					      a->recs);
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
		if (k->trusted_only && rq->sm_key != sa->sm_key) {
			a->status = SA_ERR_REQ_INVALID;
			return;
		}
		GByteArray *all = a->recs;
		if (v.f)
			sa_kind_build(k, &v, rq->sm_key == sa->sm_key, all);
		size_t size = k->layout.size, n = 0;
		uint64_t mask = rq->comp_mask;
		const uint8_t *query = rq->record;
		uint8_t copy[SA_MAD_DATA];
		if (k->query && v.f && size <= sizeof(copy) && rq->record_len >= size) {
			memcpy(copy, rq->record, size);
			k->query(&v, &mask, copy);
			query = copy;
		}
		for (size_t off = 0; off + size <= all->len; off += size) {
			if (!sa_match(&k->layout, mask, query, all->data + off))
				continue;
			if (n * size != off)
				memmove(all->data + n * size, all->data + off, size);
			n++;
		}
		g_byte_array_set_size(all, (guint)(n * size));
	}
	if (!a->status && a->table && a->recs->len > SA_ANSWER_MAX)
		a->status = SA_ERR_TOO_MANY_RECORDS; /* one requester does not get the SM's memory */
	if (a->status)
		g_byte_array_set_size(a->recs, 0);
	else if (!a->table && a->recs->len != a->rec_size)
		a->status = a->recs->len ? SA_ERR_TOO_MANY_RECORDS : SA_ERR_NO_RECORDS;
}

/* What a refusal for want of resources says in the log: the first and every 1000th of a kind. */
static void log_refusal(struct sa *sa, const struct sa_request *rq, uint16_t status)
{
	if (status == SA_ERR_TOO_MANY_RECORDS && rq->method == SA_GETTABLE) {
		if (sa->st.too_big++ % 1000 == 0)
			LOG_I("SA-0010", "SA GetTable (attribute 0x%04x) from LID %u would carry more than %u "
			      "bytes: answered TOO_MANY_RECORDS (%" PRIu64 " so far)", rq->attr, rq->slid,
			      SA_ANSWER_MAX, sa->st.too_big);
	} else if (status == SA_ERR_NO_RESOURCES && rq->attr == IB_SA_ATTR_INFORMINFO) {
		if (sa->st.subscriptions_refused++ % 1000 == 0)
			LOG_I("SA-0011", "InformInfo subscription from LID %u refused NO_RESOURCES: %u "
			      "subscriptions of a port at most (%u in all; %" PRIu64 " refused so far)",
			      rq->slid, SA_INFORM_MAX_PER_PORT, SA_INFORM_MAX, sa->st.subscriptions_refused);
	} else if (status == SA_ERR_NO_RESOURCES && rq->attr == MCMR_ATTR) {
		if (sa->st.joins_refused++ % 1000 == 0)
			LOG_I("SA-0012", "multicast join from LID %u refused NO_RESOURCES: the switches hold "
			      "MLIDs up to 0x%04x, %u groups in use, %u groups a port at most (%" PRIu64
			      " refused so far)", rq->slid, mc_mlid_limit(sa->mc), mc_count(sa->mc),
			      SA_MC_MAX_PER_PORT, sa->st.joins_refused);
	}
}

static void answer(struct sa *sa, const struct sa_request *rq)
{
	struct sa_answer a = { .recs = g_byte_array_new() };
	sa_compute(sa, rq, phase_now(), &a);
	log_refusal(sa, rq, a.status);
	if (a.status == SA_UNSUP_METHOD_ATTR)
		sa->st.unsupported++;
	else if (a.status)
		sa->st.no_records++;
	else
		sa->st.answered++;
	if (a.status)
		sa_respond_status(sa->d, rq, a.status);
	else if (a.table)
		sa_respond_table(sa->d, rq, a.method, a.recs->data, a.recs->len / (guint)a.rec_size, a.rec_size);
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
	if (rq.sm_key && rq.sm_key != sa->sm_key) { /* a wrong SM_Key is not answered (as OpenSM; osmtest expects the silence) */
		sa->st.bad_key++;
		LOG_V("SA-0003", "SA request from LID %u with a wrong SM_Key dropped", rq.slid);
		return;
	}
	if (rc > 0) {
		sa->st.bad++;
		sa_respond_status(sa->d, &rq, (uint16_t)rc);
		return;
	}
	if (record_short(&rq)) {
		sa->st.bad++;
		LOG_V("SA-0009", "SA request from LID %u (method 0x%02x, attribute 0x%04x) carries %zu "
		      "record bytes of %zu: answered REQ_INVALID", rq.slid, rq.method, rq.attr,
		      rq.record_len, record_needed(rq.attr));
		sa_respond_status(sa->d, &rq, SA_ERR_REQ_INVALID);
		return;
	}
	if (sa_queue_push(sa->q, rq.slid, m->umad, m->len) < 0) {
		/* the queue, or this requester's share of it, is full: BUSY, retry later */
		if (sa->st.busy++ % 1000 == 0)
			LOG_I("SA-0007", "SA queue full (%u requests waiting): BUSY to LID %u (%" PRIu64
			      " BUSY answers so far)", sa_queue_len(sa->q), rq.slid, sa->st.busy);
		sa_respond_status(sa->d, &rq, SA_BUSY);
	}
}

/* The transport's work hook: answers up to SA_SERVE_BUDGET queued requests, round-robin by
 * requester; nonzero while some wait. Called after every I/O step, so the SMPs of a sweep
 * go on between shares and the SA goes on during a sweep's long drains. */
static int serve(void *ctx)
{
	struct sa *sa = ctx;
	for (int n = 0; n < SA_SERVE_BUDGET; n++) {
		int len;
		void *umad = sa_queue_pop(sa->q, &len);
		if (!umad)
			return 0;
		struct mad_in m;
		struct sa_request rq;
		dispatch_mad_in(&m, umad, len);
		if (sa_decode(&m, &rq) == 0 && sa->master)
			answer(sa, &rq);
		g_free(umad);
	}
	return sa_queue_len(sa->q) > 0;
}

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
		LOG_V("SA-0005", "Report to LID %u could not be sent", lid);
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
	sa->inform = sa_inform_new(send_report, sa);
	sa->q = sa_queue_new(SA_QUEUE_MAX, SA_QUEUE_PER_REQUESTER);
	sa->remote = g_array_new(FALSE, TRUE, sizeof(struct sa_remote_sm));
	sa->mc = mc_groups_new();
	sa->mc_mtu = 4;
	sa->mc_rate = 3;
	pr_layout();
	if (!d) /* computing answers only (tests, fuzzing) */
		return sa;
	dispatch_register(d, IB_SA_CLASS, SA_GET, DISPATCH_ANY_ATTR, on_request, sa);
	dispatch_register(d, IB_SA_CLASS, SA_GETTABLE, DISPATCH_ANY_ATTR, on_request, sa);
	dispatch_register(d, IB_SA_CLASS, SA_SET, DISPATCH_ANY_ATTR, on_request, sa);
	dispatch_register(d, IB_SA_CLASS, SA_DELETE, DISPATCH_ANY_ATTR, on_request, sa);
	dispatch_register(d, IB_SA_CLASS, SA_GETMULTI, DISPATCH_ANY_ATTR, on_request, sa);
	dispatch_register(d, IB_SA_CLASS, SA_REPORTRESP, DISPATCH_ANY_ATTR, on_report_resp, sa);
	sa->report_timer = g_timeout_add(REPORT_TICK_MS, report_tick, sa);
	transport_set_work(dispatch_transport(d), serve, sa);
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
		dispatch_register(sa->d, IB_SA_CLASS, SA_GETMULTI, DISPATCH_ANY_ATTR, NULL, NULL);
		dispatch_register(sa->d, IB_SA_CLASS, SA_REPORTRESP, DISPATCH_ANY_ATTR, NULL, NULL);
		transport_set_work(dispatch_transport(sa->d), NULL, NULL);
	}
	sa_queue_free(sa->q);
	qos_match_free(sa->qos);
	g_free(sa->part_sl);
	mc_groups_free(sa->mc);
	g_array_free(sa->remote, TRUE);
	if (sa->report_timer)
		g_source_remove(sa->report_timer);
	sa_inform_free(sa->inform);
	sa_services_free(sa->svc);
	routing_result_unref(sa->r);
	sa_pkeys_free(sa->pk);
	g_free(sa);
}

/* Our own port's LID and GID: the issuer of the notices the SA raises. */
static uint16_t issuer(const struct sa *sa, const struct fabric *f, uint8_t *gid)
{
	uint32_t p = f->pub.sm_port;
	memset(gid, 0, 16);
	if (p == IBSM_NONE)
		return 0;
	sa_put_gid(gid, sa->pr.subnet_prefix, f->ports[p].guid);
	return f->ports[p].lid;
}

/* May a subscriber hear about subject: do they share a partition in the new generation? */
static int may_see(void *ctx, uint64_t subscriber, uint64_t subject)
{
	const struct sa *sa = ctx;
	const struct fabric *f = sa->r->f;
	uint32_t a = fabric_port_by_guid(f, subscriber), b = fabric_port_by_guid(f, subject);
	return a == IBSM_NONE || b == IBSM_NONE || sa_pkeys_share(sa->pk, a, b);
}

/* Trap 64 (GID in service) or 65 (out of service) for the end port guid (IBA 14.2.5.1: a
 * subnet-management notice from a class manager; data: 6 reserved bytes and the GID). */
static void gid_notice(struct sa *sa, const struct fabric *f, uint16_t trap, uint64_t guid, double now)
{
	uint8_t details[54] = { 0 }, gid[16], notice[NOTICE_SIZE];
	sa_put_gid(details + 6, sa->pr.subnet_prefix, guid);
	uint16_t lid = issuer(sa, f, gid);
	sa_notice_build(notice, trap, NOTICE_TYPE_SUBNET_MGMT, NOTICE_PRODUCER_CLASS_MANAGER, lid, gid,
			details);
	unsigned n = sa_inform_notice(sa->inform, notice, guid, may_see, sa, now);
	LOG_I("SA-0006", "port 0x%016" G_GINT64_MODIFIER "x %s service: trap %u reported to %u subscriber%s",
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

/* Traps 64 and 65 for the end ports that came or went between two generations. */
static void gid_notices(struct sa *sa, const struct fabric *old, const struct fabric *now_f)
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
			gid_notice(sa, now_f, 64, *(uint64_t *)k, now);
	g_hash_table_iter_init(&it, before);
	while (g_hash_table_iter_next(&it, &k, NULL))
		if (!g_hash_table_contains(after, k)) {
			gid_notice(sa, now_f, 65, *(uint64_t *)k, now);
			sa_inform_forget(sa->inform, *(uint64_t *)k);
		}
	g_hash_table_destroy(before);
	g_hash_table_destroy(after);
}

void sa_report_trap(struct sa *sa, const uint8_t *smp_notice)
{
	if (!sa || !sa->master || !sa->r || !sa_inform_count(sa->inform))
		return;
	const struct fabric *f = sa->r->f;
	uint8_t notice[NOTICE_SIZE];
	memcpy(notice, smp_notice, 64);
	uint16_t lid = (uint16_t)(notice[6] << 8 | notice[7]);
	uint32_t p = lid && lid <= f->pub.max_lid ? f->pub.lid_port[lid] : IBSM_NONE;
	uint64_t guid = p == IBSM_NONE ? 0 : f->ports[p].guid;
	if (guid)
		sa_put_gid(notice + 64, sa->pr.subnet_prefix, guid);
	sa_inform_notice(sa->inform, notice, guid, may_see, sa, phase_now());
}

/* The most a multicast group may ask of the generation: the least MTU and rate of every
 * ACTIVE link (groups span the subnet); and the MLIDs every switch can forward (the least
 * MulticastFDBCap): groups beyond are refused NO_RESOURCES, as OpenSM refuses them. */
static void mcast_limits(struct sa *sa, const struct fabric *f)
{
	uint8_t mtu = 0xff;
	unsigned units = ~0u;
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		const struct ibsm_port *x = &f->ports[p];
		if (x->peer == IBSM_NONE || x->state != IBSM_STATE_ACTIVE || !x->mtu_cap)
			continue;
		if (x->mtu_cap < mtu)
			mtu = x->mtu_cap;
		unsigned u = pr_port_units(x);
		if (u < units)
			units = u;
	}
	sa->mc_mtu = mtu == 0xff ? 4 : mtu;
	sa->mc_rate = units == ~0u ? 3 : pr_rate_at_most(units);
	uint32_t cap = 0x4000; /* the whole multicast LID space */
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		const struct node_extra *x = &f->nx[f->switches[s].node];
		if (x->have_switchinfo && x->mft_cap && x->mft_cap < cap)
			cap = x->mft_cap;
	}
	mc_set_mlid_limit(sa->mc, (uint16_t)(MLID_FIRST + cap - 1));
}

struct gone {
	const struct fabric *f;
	GArray *guids;
};

static void collect_gone(struct mc_group *grp, void *ctx)
{
	struct gone *g = ctx;
	for (guint i = 0; i < grp->members->len; i++) {
		uint64_t guid = g_array_index(grp->members, struct mc_member, i).port_guid;
		uint32_t p = fabric_port_by_guid(g->f, guid);
		if (p == IBSM_NONE || !g->f->ports[p].lid)
			g_array_append_val(g->guids, guid);
	}
}

struct mgids {
	GArray *all; /* of uint8_t[16] */
};

static void collect_mgid(struct mc_group *grp, void *ctx)
{
	g_array_append_vals(((struct mgids *)ctx)->all, grp->mgid, 1);
}

/* Members whose port is not in generation f leave every group; trap 67 for groups that go. */
static void mcast_ports_gone(struct sa *sa, const struct fabric *f)
{
	struct gone g = { f, g_array_new(FALSE, FALSE, sizeof(uint64_t)) };
	mc_foreach(sa->mc, collect_gone, &g);
	if (!g.guids->len) {
		g_array_free(g.guids, TRUE);
		return;
	}
	struct mgids before = { g_array_new(FALSE, FALSE, 16) };
	mc_foreach(sa->mc, collect_mgid, &before);
	unsigned deleted = 0;
	for (guint i = 0; i < g.guids->len; i++)
		deleted += mc_port_gone(sa->mc, g_array_index(g.guids, uint64_t, i));
	LOG_I("SA-0008", "%u multicast memberships of ports that left the fabric removed, %u groups "
	      "deleted with them", g.guids->len, deleted);
	for (guint i = 0; deleted && i < before.all->len; i++) {
		const uint8_t *mgid = (const uint8_t *)before.all->data + 16 * i;
		if (!mc_find(sa->mc, mgid))
			mcast_notice(sa, 67, mgid);
	}
	g_array_free(before.all, TRUE);
	g_array_free(g.guids, TRUE);
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
	if (old && sa->r && sa->master)
		gid_notices(sa, old->f, sa->r->f);
	if (sa->r) {
		mcast_limits(sa, sa->r->f);
		mcast_ports_gone(sa, sa->r->f);
	}
	if (sa->qos)
		qos_match_compile(sa->qos, sa->r ? sa->r->f : NULL, sa->pk);
	routing_result_unref(old);
	sa_pkeys_free(old_pk);
}

void sa_set_mcast_hook(struct sa *sa, void (*changed)(void *ctx, uint16_t mlid), void *ctx)
{
	sa->mc_changed = changed;
	sa->mc_ctx = ctx;
}

struct mc_groups *sa_mcast_groups(struct sa *sa)
{
	return sa->mc;
}

unsigned sa_mcast_partitions(struct sa *sa, const struct part_policy *pp)
{
	return ipoib_groups_create(sa->mc, pp, sa->pr.packet_life);
}

void sa_set_mft(struct sa *sa, const struct mft_memory *mft)
{
	sa->mft = mft;
}

void sa_set_qos_policy(struct sa *sa, const struct qos_policy *pol, const struct part_policy *pp)
{
	qos_match_free(sa->qos);
	sa->qos = pol ? qos_match_new(pol, pp) : NULL;
	if (sa->qos)
		qos_match_compile(sa->qos, sa->r ? sa->r->f : NULL, sa->pk);
}

void sa_set_partitions(struct sa *sa, const struct part_policy *pp)
{
	g_free(sa->part_sl);
	sa->part_sl = NULL;
	for (guint i = 0; pp && pp->parts && i < pp->parts->len; i++) {
		const struct partition *p = g_ptr_array_index(pp->parts, i);
		if (!p->sl)
			continue;
		if (!sa->part_sl)
			sa->part_sl = g_malloc0(0x8000);
		sa->part_sl[p->pkey & 0x7fff] = (uint8_t)(p->sl + 1);
	}
}

void sa_set_vl_tables(struct sa *sa, const struct vlt_memory *vlt)
{
	sa->vlt = vlt;
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

void sa_set_remote_sms(struct sa *sa, const struct sa_remote_sm *sms, unsigned n)
{
	if (!sa)
		return;
	g_array_set_size(sa->remote, 0);
	g_array_append_vals(sa->remote, sms, n);
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

const struct sa_stats *sa_stats(struct sa *sa)
{
	const struct sa_inform_stats *is = sa_inform_stats(sa->inform);
	sa->st.reports_sent = is->reports_sent + is->reports_resent;
	sa->st.reports_acked = is->reports_acked;
	sa->st.subscriptions = sa_inform_count(sa->inform);
	sa->st.mcast_groups = mc_count(sa->mc);
	sa->st.queued_max = sa_queue_high_water(sa->q);
	return &sa->st;
}
