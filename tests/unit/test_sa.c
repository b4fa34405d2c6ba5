/* test_sa.c - the SA agent against a fake port: component-mask matching over record layouts
 * (byte and sub-byte components, reserved ones, mask bits beyond the layout), and NodeRecord
 * Get / GetTable answered from a published generation: one record per switch and per CA
 * port, filtered by LID, GUID or type, the IBA statuses (NO_RECORDS, TOO_MANY_RECORDS,
 * unsupported attribute, bad class version), the table as one RMPP transfer with the
 * AttributeOffset of the record, and silence while not master. Judged from the MADs sent. */
#include <string.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include "base/log.h"
#include "fabric/lid.h"
#include "fabric_fixture.h"
#include "fake_sma.h"
#include "routing/result.h"
#include "sa/agent.h"
#include "sa/compmask.h"
#include "sa/handlers.h"
#include "sa/inform.h"
#include "sa/multipath_record.h"
#include "sa/path_record.h"
#include "sa/queue.h"
#include "sa/records.h"
#include "sa/service.h"
#include "sa/wire.h"

static void test_match(void)
{
	struct sa_layout l = { .name = "t", .size = 4, .n = 5, .width = { 4, 4, 8, 1, 15 } };
	g_assert_cmpint(sa_layout_init(&l), ==, 0);
	g_assert_cmpuint(l.offset[4], ==, 17);
	uint8_t a[4] = { 0x12, 0x34, 0x80, 0x05 }, b[4] = { 0x13, 0x34, 0x00, 0x05 };
	g_assert_true(sa_match(&l, 0, a, b));          /* no component: everything matches */
	g_assert_true(sa_match(&l, 0x1, a, b));        /* first nibble 1 == 1 */
	g_assert_false(sa_match(&l, 0x2, a, b));       /* second nibble 2 != 3 */
	g_assert_true(sa_match(&l, 0x4, a, b));        /* 0x34 */
	g_assert_false(sa_match(&l, 0x8, a, b));       /* one bit: 1 != 0 */
	g_assert_true(sa_match(&l, 0x10, a, b));       /* 15 bits */
	g_assert_true(sa_match(&l, 0x15, a, b));
	g_assert_false(sa_match(&l, 0x1f, a, b));
	g_assert_true(sa_match(&l, 1ull << 40, a, b)); /* beyond the layout: reserved, ignored */
	g_assert_cmphex(sa_bits(a, 4, 8), ==, 0x23);
	struct sa_layout bad = { .name = "bad", .size = 4, .n = 2, .width = { 16, 8 } };
	g_assert_cmpint(sa_layout_init(&bad), ==, -1);
	g_assert_cmpint(sa_handlers_check(NULL), ==, 0);
	const struct sa_kind *nr = sa_kind_of(0x11);
	g_assert_nonnull(nr);
	g_assert_cmpuint(nr->layout.offset[7], ==, 16 * 8); /* NodeGUID: record byte 4 + NodeInfo byte 12 */
	g_assert_cmpuint(nr->layout.offset[14], ==, 44 * 8);                     /* NodeDescription */
	/* PortInfoRecord, its components from libibmad's field table: OpenSM's numbering */
	const struct sa_kind *pir = sa_kind_of(0x12);
	g_assert_nonnull(pir);
	g_assert_cmpuint(pir->layout.offset[3], ==, 32);          /* M_Key */
	g_assert_cmpuint(pir->layout.width[7], ==, 32);           /* CapabilityMask */
	g_assert_cmphex(pir->layout.subset, ==, 1ull << 7 | 1ull << 53); /* CapabilityMask, CapabilityMask2 */
	g_assert_cmpuint(pir->layout.width[19], ==, 3);           /* reserved, after ProtectBits */
	g_assert_cmpuint(pir->layout.width[20], ==, 3);           /* LMC */
	g_assert_cmpuint(pir->layout.width[44], ==, 2);           /* MulticastPKeyTrapSuppression */
	g_assert_cmpuint(pir->layout.width[45], ==, 5);           /* SubnetTimeOut */
	g_assert_cmpuint(pir->layout.width[47], ==, 5);           /* RespTimeValue */
	g_assert_cmpuint(pir->layout.width[53], ==, 16);          /* CapabilityMask2 */
	g_assert_cmpuint(pir->layout.width[57], ==, 5);           /* LinkSpeedExtEnabled, the last */
	g_assert_cmpuint(pir->layout.n, ==, 58);
	/* a subset component: the record has every bit the query asks for */
	struct sa_layout s1 = { .name = "s", .size = 2, .n = 2, .width = { 8, 8 }, .subset = 1 };
	g_assert_cmpint(sa_layout_init(&s1), ==, 0);
	uint8_t rq[2] = { 0x02, 0 }, r1[2] = { 0x4a, 0 }, r2[2] = { 0x48, 0 };
	g_assert_true(sa_match(&s1, 1, rq, r1));
	g_assert_false(sa_match(&s1, 1, rq, r2));
}

struct sabed {
	struct fsma_bed b;
	struct dispatch *d;
	struct sa *sa;
	struct sa_inputs in;       /* what the SA answers from (handed over with publish()) */
};

/* Hands s's snapshot over to its SA, as the SM does after changing it. */
static void publish(struct sabed *s)
{
	sa_publish(s->sa, &s->in);
}

static void sabed_init_lmc(struct sabed *s, uint8_t lmc)
{
	struct fabric *shape = fx_line(2, 2, 0);
	fsma_bed_init(&s->b, shape, fx_ca_port(&shape->pub, 0, 1), 20);
	s->b.lmc = lmc;
	fsma_bed_discover(&s->b);
	s->d = dispatch_new(s->b.t);
	s->sa = sa_new(s->d);
	g_assert_nonnull(s->sa);
	sa_inputs_init(&s->in);
	sa_inputs_set_routes(&s->in, s->b.r, NULL);
	s->in.master = 1;
	publish(s);
}

static void sabed_init(struct sabed *s)
{
	sabed_init_lmc(s, 0);
}

static void sabed_clear(struct sabed *s)
{
	sa_free(s->sa);
	sa_inputs_clear(&s->in);
	dispatch_free(s->d);
	fsma_bed_clear(&s->b);
}

static uint64_t ask_sm_key; /* the SM_Key the next requests present */
static uint16_t ask_slid;    /* the LID and QPN they come from */
static uint32_t ask_qpn;
static uint32_t ask_attr_mod; /* their AttributeModifier */

/* Sends an SA request, returns the one response (and its length). */
static const uint8_t *ask(struct sabed *s, uint8_t method, uint16_t attr, uint64_t mask,
			  const uint8_t *rec, size_t rec_len, uint32_t *len)
{
	uint8_t mad[256] = { 0 };
	mad[0] = 1;
	mad[1] = IB_SA_CLASS;
	mad[2] = 2;
	mad[3] = method;
	mad_set_field64(mad, 0, IB_MAD_TRID_F, 0x4242);
	mad_set_field(mad, 0, IB_MAD_ATTRID_F, attr);
	mad_set_field64(mad, 0, IB_SA_COMPMASK_F, mask);
	mad_set_field64(mad, 0, IB_SA_MKEY_F, ask_sm_key);
	mad_set_field(mad, 0, IB_MAD_ATTRMOD_F, ask_attr_mod);
	if (rec)
		memcpy(mad + IB_SA_DATA_OFFS, rec, rec_len);
	uint32_t before = fsma_nresponses(s->b.fk);
	fsma_inject_mad_from(s->b.fk, mad, ask_slid, ask_qpn);
	transport_poll(s->b.t, 200, 1);
	if (fsma_nresponses(s->b.fk) == before)
		return NULL;
	g_assert_cmpuint(fsma_nresponses(s->b.fk), ==, before + 1);
	*len = fsma_response_len(s->b.fk, before);
	const uint8_t *r = fsma_response(s->b.fk, before);
	g_assert_cmphex(mad_get_field64((void *)r, 0, IB_MAD_TRID_F), ==, 0x4242);
	g_assert_cmpuint(r[1], ==, IB_SA_CLASS);
	return r;
}

static uint16_t status_of(const uint8_t *r)
{
	return (uint16_t)mad_get_field((void *)r, 0, IB_MAD_STATUS_F);
}

static void test_node_records(void)
{
	struct sabed s;
	sabed_init(&s);
	const struct fabric *f = s.b.f;
	uint32_t want = f->pub.n_switches; /* switches, plus every CA port with a LID */
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		if (f->nodes[f->ports[p].node].type != IBSM_SWITCH && f->ports[p].num && f->ports[p].lid)
			want++;
	g_assert_cmpuint(want, ==, 2 + 4);
	uint32_t len;
	/* GetTable, no component: every record, one RMPP transfer, AttributeOffset 112/8 */
	const uint8_t *r = ask(&s, SA_GETTABLE, 0x11, 0, NULL, 0, &len);
	g_assert_nonnull(r);
	g_assert_cmphex(r[3], ==, SA_GETTABLERESP);
	g_assert_cmphex(status_of(r), ==, 0);
	g_assert_cmpuint(mad_get_field((void *)r, 0, IB_SA_ATTROFFS_F), ==, 14);
	g_assert_cmpuint(mad_get_field((void *)r, 0, IB_SA_RMPP_VERS_F), ==, 1);
	g_assert_cmpuint(mad_get_field((void *)r, 0, IB_SA_RMPP_FLAGS_F) & 1, ==, 1);
	g_assert_cmpuint(len, ==, IB_SA_DATA_OFFS + want * 112);
	/* by LID: exactly that port's record; Get and GetTable agree */
	uint32_t port = fx_ca_port(&f->pub, 1, 1);
	uint8_t q[108] = { 0 };
	q[0] = (uint8_t)(f->ports[port].lid >> 8);
	q[1] = (uint8_t)f->ports[port].lid;
	r = ask(&s, SA_GET, 0x11, 1, q, sizeof(q), &len);
	g_assert_cmphex(r[3], ==, SA_GETRESP);
	g_assert_cmphex(status_of(r), ==, 0);
	const uint8_t *rec = r + IB_SA_DATA_OFFS;
	g_assert_cmphex(mad_get_field64((void *)(rec + 4), 0, IB_NODE_PORT_GUID_F), ==, f->ports[port].guid);
	g_assert_cmphex(mad_get_field64((void *)(rec + 4), 0, IB_NODE_GUID_F), ==, f->nodes[f->ports[port].node].guid);
	g_assert_cmpuint(mad_get_field((void *)(rec + 4), 0, IB_NODE_LOCAL_PORT_F), ==, 1);
	g_assert_cmpstr((const char *)rec + 44, ==, f->nodes[f->ports[port].node].desc);
	/* by NodeType switch: a table of the 2 switches; Get of it: TOO_MANY_RECORDS */
	uint8_t qt[108] = { 0 };
	mad_set_field(qt + 4, 0, IB_NODE_TYPE_F, IBSM_SWITCH);
	r = ask(&s, SA_GETTABLE, 0x11, 1u << 4, qt, sizeof(qt), &len);
	g_assert_cmpuint(len, ==, IB_SA_DATA_OFFS + 2 * 112);
	r = ask(&s, SA_GET, 0x11, 1u << 4, qt, sizeof(qt), &len);
	g_assert_cmphex(status_of(r), ==, SA_ERR_TOO_MANY_RECORDS);
	/* an unknown GUID: Get says NO_RECORDS, GetTable an empty table */
	uint8_t qg[108] = { 0 };
	mad_set_field64(qg + 4, 0, IB_NODE_GUID_F, 0xdeadbeef);
	r = ask(&s, SA_GET, 0x11, 1u << 7, qg, sizeof(qg), &len);
	g_assert_cmphex(status_of(r), ==, SA_ERR_NO_RECORDS);
	r = ask(&s, SA_GETTABLE, 0x11, 1u << 7, qg, sizeof(qg), &len);
	g_assert_cmphex(status_of(r), ==, 0);
	g_assert_cmpuint(len, ==, IB_SA_DATA_OFFS); /* the header alone: the transfer is exactly its length */
	/* an attribute not served; ClassPortInfo */
	r = ask(&s, SA_GETTABLE, 0x99, 0, NULL, 0, &len);
	g_assert_cmphex(status_of(r), ==, SA_UNSUP_METHOD_ATTR);
	r = ask(&s, SA_GET, 0x01, 0, NULL, 0, &len);
	g_assert_cmphex(status_of(r), ==, 0);
	g_assert_cmpuint(mad_get_field((void *)(r + IB_SA_DATA_OFFS), 0, IB_CPI_CLASSVER_F), ==, 2);
	/* not master: silence */
	s.in.master = 0;
	publish(&s);
	g_assert_null(ask(&s, SA_GET, 0x01, 0, NULL, 0, &len));
	g_assert_cmpuint(sa_stats(s.sa)->not_master, ==, 1);
	sabed_clear(&s);
}

/* PortInfoRecords: every switch port under the switch's LID and every CA port; the "is SM"
 * query (CapabilityMask component, a subset match when AttributeModifier bit 31 asks, else
 * exact: OpenSM's rules, CapabilityMask2 likewise) finds the SM's port alone; Options matches
 * nothing and is echoed; the M_Key is shown only to a requester presenting our SM_Key. */
static void test_portinfo_records(void)
{
	struct sabed s;
	sabed_init(&s);
	struct fabric *f = s.b.f;
	uint32_t sm = f->pub.sm_port;
	mad_set_field64(f->px[sm].portinfo, 0, IB_PORT_MKEY_F, 0x1234);
	mad_set_field(f->px[sm].portinfo, 0, IB_PORT_CAPMASK_F,
		      mad_get_field(f->px[sm].portinfo, 0, IB_PORT_CAPMASK_F) | 0x2);
	s.in.sm_key = s.in.sa_key = 0x77; /* a key presented must be the SA_Key */
	publish(&s);
	uint32_t len, want = 0;
	for (uint32_t n = 0; n < f->pub.n_nodes; n++)
		want += f->nodes[n].type == IBSM_SWITCH ? f->nodes[n].nports + 1u : f->nodes[n].nports;
	const uint8_t *r = ask(&s, SA_GETTABLE, 0x12, 0, NULL, 0, &len);
	g_assert_cmphex(status_of(r), ==, 0);
	g_assert_cmpuint(mad_get_field((void *)r, 0, IB_SA_ATTROFFS_F), ==, 9); /* 68 -> 72 bytes */
	g_assert_cmpuint(len, ==, IB_SA_DATA_OFFS + want * 72);
	uint8_t q[68] = { 0 };
	mad_set_field(q + 4, 0, IB_PORT_CAPMASK_F, 0x2); /* IsSM */
	r = ask(&s, SA_GET, 0x12, 1u << 7, q, sizeof(q), &len);
	g_assert_cmphex(status_of(r), ==, SA_ERR_NO_RECORDS); /* exactly 0x2: no port */
	ask_attr_mod = 1u << 31;
	r = ask(&s, SA_GET, 0x12, 1u << 7, q, sizeof(q), &len);
	g_assert_cmphex(status_of(r), ==, 0);
	const uint8_t *rec = r + IB_SA_DATA_OFFS;
	g_assert_cmpuint((unsigned)(rec[0] << 8 | rec[1]), ==, f->ports[sm].lid);
	g_assert_cmphex(mad_get_field64((void *)(rec + 4), 0, IB_PORT_MKEY_F), ==, 0); /* hidden */
	ask_sm_key = 0x77;
	r = ask(&s, SA_GET, 0x12, 1u << 7, q, sizeof(q), &len);
	g_assert_cmphex(mad_get_field64((void *)(r + IB_SA_DATA_OFFS + 4), 0, IB_PORT_MKEY_F), ==, 0x1234);
	/* CapabilityMask2: the SM's port holds 0x20 there; exactly 0x20, or bit by bit asked 0 */
	mad_set_field(f->px[sm].portinfo, 0, IB_PORT_CAPMASK2_F, 0x20);
	publish(&s);
	uint8_t q2[68] = { 0 };
	mad_set_field(q2 + 4, 0, IB_PORT_CAPMASK2_F, 0x20);
	ask_attr_mod = 0;
	r = ask(&s, SA_GETTABLE, 0x12, 1ull << 53, q2, sizeof(q2), &len);
	g_assert_cmpuint(len, ==, IB_SA_DATA_OFFS + 72);
	mad_set_field(q2 + 4, 0, IB_PORT_CAPMASK2_F, 0);
	r = ask(&s, SA_GETTABLE, 0x12, 1ull << 53, q2, sizeof(q2), &len);
	g_assert_cmpuint(len, ==, IB_SA_DATA_OFFS + (want - 1) * 72);
	ask_attr_mod = 1u << 31;
	r = ask(&s, SA_GETTABLE, 0x12, 1ull << 53, q2, sizeof(q2), &len);
	g_assert_cmpuint(len, ==, IB_SA_DATA_OFFS + want * 72);
	ask_attr_mod = 0;
	/* Options (component 2): no match field, echoed in every record */
	q2[3] = 0x01;
	r = ask(&s, SA_GETTABLE, 0x12, 1u << 2, q2, sizeof(q2), &len);
	g_assert_cmpuint(len, ==, IB_SA_DATA_OFFS + want * 72);
	g_assert_cmphex(r[IB_SA_DATA_OFFS + 3], ==, 0x01);
	r = ask(&s, SA_GETTABLE, 0x12, 0, q2, sizeof(q2), &len);
	g_assert_cmphex(r[IB_SA_DATA_OFFS + 3], ==, 0);
	/* an M_Key component cannot find the key when it is hidden */
	ask_sm_key = 0;
	mad_set_field64(q + 4, 0, IB_PORT_MKEY_F, 0x1234);
	r = ask(&s, SA_GET, 0x12, 1u << 3, q, sizeof(q), &len);
	g_assert_cmphex(status_of(r), ==, SA_ERR_NO_RECORDS);
	sabed_clear(&s);
}

/* LinkRecords: both directions of every link; by FromLID and FromPort exactly one, whose ToLID
 * and ToPort are the peer's. LFT records: one per 64-LID block of every switch, the entries of
 * the routes in force. */
static void test_link_lft_records(void)
{
	struct sabed s;
	sabed_init(&s);
	const struct fabric *f = s.b.f;
	uint32_t links = 0;
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		links += f->ports[p].num && f->ports[p].peer != IBSM_NONE;
	uint32_t len;
	const uint8_t *r = ask(&s, SA_GETTABLE, 0x20, 0, NULL, 0, &len);
	g_assert_cmpuint(mad_get_field((void *)r, 0, IB_SA_ATTROFFS_F), ==, 1);
	g_assert_cmpuint(len, ==, IB_SA_DATA_OFFS + links * 8);
	const struct ibsm_node *sw = &f->nodes[f->switches[0].node];
	uint32_t host = fx_ca_port(&f->pub, 0, 1), swp = f->ports[host].peer;
	uint16_t sw_lid = f->ports[sw->port0].lid;
	uint8_t q[8] = { (uint8_t)(sw_lid >> 8), (uint8_t)sw_lid, f->ports[swp].num };
	r = ask(&s, SA_GET, 0x20, 0x3, q, sizeof(q), &len);
	g_assert_cmphex(status_of(r), ==, 0);
	const uint8_t *rec = r + IB_SA_DATA_OFFS;
	g_assert_cmpuint(rec[3], ==, 1);
	g_assert_cmpuint((unsigned)(rec[4] << 8 | rec[5]), ==, f->ports[host].lid);
	/* LFT block 0 of the first switch: the routes */
	uint8_t ql[72] = { (uint8_t)(sw_lid >> 8), (uint8_t)sw_lid, 0, 0 };
	r = ask(&s, SA_GET, 0x15, 0x3, ql, sizeof(ql), &len);
	g_assert_cmphex(status_of(r), ==, 0);
	rec = r + IB_SA_DATA_OFFS;
	const struct routing_result *rr = s.b.r;
	for (uint32_t l = 1; l < 64 && l < rr->stride; l++)
		g_assert_cmpuint(rec[8 + l], ==, rr->lft[l]);
	g_assert_cmpuint(rec[8 + f->ports[host].lid], ==, f->ports[swp].num);
	sabed_clear(&s);
}

/* ---- PathRecord ------------------------------------------------------------------------------ */

static void q_put(uint8_t *rec, int comp, uint64_t v)
{
	const struct sa_layout *l = pr_layout();
	for (unsigned i = 0; i < l->width[comp]; i++) {
		unsigned b = l->offset[comp] + l->width[comp] - 1 - i;
		if ((v >> i) & 1)
			rec[b / 8] |= (uint8_t)(0x80 >> (b % 8));
	}
}

static uint64_t pr_get(const uint8_t *rec, int comp)
{
	const struct sa_layout *l = pr_layout();
	return sa_bits(rec, l->offset[comp], l->width[comp]);
}

static void put_gid(uint8_t *rec, int comp, uint64_t guid)
{
	uint8_t *at = rec + (comp == PR_DGID ? 8 : 24);
	for (int i = 0; i < 8; i++) {
		at[i] = (uint8_t)(0xfe80000000000000ULL >> (56 - 8 * i));
		at[8 + i] = (uint8_t)(guid >> (56 - 8 * i));
	}
}

/* A query from host 0 to host 3 (across both switches) by GUIDs, plus the extra components. */
static uint32_t pr_ask(struct sabed *s, uint8_t method, const uint8_t *q, uint64_t mask,
		       uint16_t *status, GByteArray *recs)
{
	const struct fabric *f = s->b.f;
	uint8_t rec[64];
	memcpy(rec, q, 64);
	put_gid(rec, PR_SGID, f->ports[fx_ca_port(&f->pub, 0, 1)].guid);
	put_gid(rec, PR_DGID, f->ports[fx_ca_port(&f->pub, 3, 1)].guid);
	uint32_t len;
	const uint8_t *r = ask(s, method, 0x35, mask | 1u << PR_SGID | 1u << PR_DGID, rec, 64, &len);
	*status = status_of(r);
	uint32_t n = method == SA_GET ? (*status ? 0 : 1) : (len - IB_SA_DATA_OFFS) / 64;
	if (recs)
		g_byte_array_append(recs, r + IB_SA_DATA_OFFS, n * 64);
	return n;
}

static void test_path_records(void)
{
	struct sabed s;
	sabed_init(&s);
	const struct fabric *f = s.b.f;
	uint32_t a = fx_ca_port(&f->pub, 0, 1), b = fx_ca_port(&f->pub, 3, 1);
	uint8_t q[64] = { 0 };
	uint16_t st;
	GByteArray *recs = g_byte_array_new();
	g_assert_cmpuint(pr_ask(&s, SA_GET, q, 0, &st, recs), ==, 1);
	const uint8_t *r = recs->data;
	g_assert_cmpuint(pr_get(r, PR_SLID), ==, f->ports[a].lid);
	g_assert_cmpuint(pr_get(r, PR_DLID), ==, f->ports[b].lid);
	g_assert_cmpuint(pr_get(r, PR_REVERSIBLE), ==, 1);
	g_assert_cmphex(pr_get(r, PR_PKEY), ==, 0xffff);
	g_assert_cmpuint(pr_get(r, PR_MTU_SEL), ==, 2);
	g_assert_cmpuint(pr_get(r, PR_MTU), ==, 5);          /* 4096 on every link of the fixture */
	g_assert_cmpuint(pr_get(r, PR_RATE), ==, 3);         /* 4x 2.5 Gb/s: 10 Gb/s */
	g_assert_cmpuint(pr_get(r, PR_LIFE), ==, 18);
	/* MTU selectors against a 4096 path: > 2048 yes, > 4096 no, < 4096 gives 2048, exactly
	 * 1024 gives 1024, largest gives 4096 */
	struct { unsigned sel, mtu; int n; unsigned got; } mt[] = {
		{ 0, 4, 1, 5 }, { 0, 5, 0, 0 }, { 1, 5, 1, 4 }, { 2, 3, 1, 3 }, { 3, 1, 1, 5 },
	};
	for (size_t i = 0; i < G_N_ELEMENTS(mt); i++) {
		uint8_t qm[64] = { 0 };
		q_put(qm, PR_MTU_SEL, mt[i].sel);
		q_put(qm, PR_MTU, mt[i].mtu);
		g_byte_array_set_size(recs, 0);
		g_assert_cmpuint(pr_ask(&s, SA_GETTABLE, qm, 1u << PR_MTU_SEL | 1u << PR_MTU, &st, recs), ==,
				 (unsigned)mt[i].n);
		if (mt[i].n)
			g_assert_cmpuint(pr_get(recs->data, PR_MTU), ==, mt[i].got);
	}
	/* rate: exactly 5 Gb/s (code 5) on a 10 Gb/s path gives 5; greater than 10 none; less than
	 * 40 gives the path's 10 */
	struct { unsigned sel, rate; int n; unsigned got; } rt[] = {
		{ 2, 5, 1, 5 }, { 0, 3, 0, 0 }, { 1, 7, 1, 3 }, { 2, 7, 0, 0 },
	};
	for (size_t i = 0; i < G_N_ELEMENTS(rt); i++) {
		uint8_t qr[64] = { 0 };
		q_put(qr, PR_RATE_SEL, rt[i].sel);
		q_put(qr, PR_RATE, rt[i].rate);
		g_byte_array_set_size(recs, 0);
		g_assert_cmpuint(pr_ask(&s, SA_GETTABLE, qr, 1u << PR_RATE_SEL | 1u << PR_RATE, &st, recs), ==,
				 (unsigned)rt[i].n);
		if (rt[i].n)
			g_assert_cmpuint(pr_get(recs->data, PR_RATE), ==, rt[i].got);
	}
	/* packet lifetime 18: less than 19 yes, greater than 18 no */
	uint8_t ql[64] = { 0 };
	q_put(ql, PR_LIFE_SEL, 1);
	q_put(ql, PR_LIFE, 19);
	g_assert_cmpuint(pr_ask(&s, SA_GETTABLE, ql, 1u << PR_LIFE_SEL | 1u << PR_LIFE, &st, NULL), ==, 1);
	memset(ql, 0, sizeof(ql));
	q_put(ql, PR_LIFE_SEL, 0);
	q_put(ql, PR_LIFE, 18);
	g_assert_cmpuint(pr_ask(&s, SA_GETTABLE, ql, 1u << PR_LIFE_SEL | 1u << PR_LIFE, &st, NULL), ==, 0);
	/* an SL asked for is the path's (minhop has no say), as OpenSM answers without QoS */
	uint8_t qs[64] = { 0 };
	q_put(qs, PR_SL, 3);
	g_byte_array_set_size(recs, 0);
	g_assert_cmpuint(pr_ask(&s, SA_GETTABLE, qs, 1u << PR_SL, &st, recs), ==, 1);
	g_assert_cmpuint(pr_get(recs->data, PR_SL), ==, 3);
	/* an MTU, rate or lifetime without its selector asks nothing (OpenSM): 4096 still */
	uint8_t qn[64] = { 0 };
	q_put(qn, PR_MTU, 1);
	q_put(qn, PR_RATE, 2);
	q_put(qn, PR_LIFE, 3);
	g_byte_array_set_size(recs, 0);
	g_assert_cmpuint(pr_ask(&s, SA_GETTABLE, qn, 1u << PR_MTU | 1u << PR_RATE | 1u << PR_LIFE, &st,
				recs), ==, 1);
	g_assert_cmpuint(pr_get(recs->data, PR_MTU), ==, 5);
	g_assert_cmpuint(pr_get(recs->data, PR_RATE), ==, 3);
	/* a DGID of no port: no record, as OpenSM 3.3.23 (a Get NO_RECORDS, a GetTable an empty
	 * table); a Get naming one end only: the first path found */
	uint8_t qg[64] = { 0 };
	put_gid(qg, PR_DGID, 0xdead);
	put_gid(qg, PR_SGID, f->ports[a].guid);
	uint32_t len;
	const uint8_t *resp = ask(&s, SA_GET, 0x35, 1u << PR_DGID | 1u << PR_SGID, qg, 64, &len);
	g_assert_cmphex(status_of(resp), ==, SA_ERR_NO_RECORDS);
	resp = ask(&s, SA_GETTABLE, 0x35, 1u << PR_DGID | 1u << PR_SGID, qg, 64, &len);
	g_assert_cmphex(status_of(resp), ==, 0);
	g_assert_cmpuint((len - IB_SA_DATA_OFFS) / 64, ==, 0);
	resp = ask(&s, SA_GET, 0x35, 1u << PR_SGID, qg, 64, &len);
	g_assert_cmphex(status_of(resp), ==, 0);
	g_assert_cmpuint(pr_get(resp + IB_SA_DATA_OFFS, PR_SLID), ==, f->ports[a].lid);
	/* a GetTable from one source: a path to every end port with a LID (itself included) */
	resp = ask(&s, SA_GETTABLE, 0x35, 1u << PR_SGID, qg, 64, &len);
	g_assert_cmphex(status_of(resp), ==, 0);
	g_assert_cmpuint((len - IB_SA_DATA_OFFS) / 64, ==, 4 + 2);
	g_byte_array_free(recs, TRUE);
	sabed_clear(&s);
}

/* Parses policy text (asserting it parses) and puts it in force on s's SA. */
static struct qos_policy *set_policy(struct sabed *s, const char *text)
{
	GError *err = NULL;
	struct qos_policy *pol = qos_policy_parse_text(text, strlen(text), "t.conf", &err);
	g_assert_no_error(err);
	s->in.qos = pol;
	publish(s);
	return pol;
}

/* A QoS policy (-Q -Y) shapes the answers: the level a rule picks limits MTU and rate, sets
 * the packet lifetime and SL, refuses a different SL, and its path bits choose the DLIDs of an
 * LMC 2 port; a query with a Service ID in no rule gets the DEFAULT level. */
static void test_path_qos_policy(void)
{
	struct sabed s;
	sabed_init_lmc(&s, 2);
	const struct fabric *f = s.b.f;
	uint32_t b = fx_ca_port(&f->pub, 3, 1);
	char *text = g_strdup_printf(
		"port-groups\n port-group\n  name: Far\n  port-guid: 0x%" G_GINT64_MODIFIER "x\n"
		" end-port-group\nend-port-groups\n"
		"qos-levels\n qos-level\n  name: DEFAULT\n  sl: 1\n end-qos-level\n"
		" qos-level\n  name: Slow\n  sl: 4\n  mtu-limit: 2\n  rate-limit: 2\n  packet-life: 9\n"
		"  path-bits: 1, 3\n end-qos-level\nend-qos-levels\n"
		"qos-match-rules\n qos-match-rule\n  destination: Far\n  service-id: 0x100-0x1ff\n"
		"  qos-level-name: Slow\n end-qos-match-rule\nend-qos-match-rules\n",
		(guint64)f->ports[b].guid);
	struct qos_policy *pol = set_policy(&s, text);
	uint16_t st;
	GByteArray *recs = g_byte_array_new();
	uint8_t q[64] = { 0 };
	q_put(q, PR_SID_LSB, 0x150);
	q_put(q, PR_NUMBPATH, 4);
	uint64_t m = 1u << PR_SID_MSB | 1u << PR_SID_LSB | 1u << PR_NUMBPATH;
	/* NumbPath 4: DLID offsets 1 and 3 only, from two SLIDs each */
	g_assert_cmpuint(pr_ask(&s, SA_GETTABLE, q, m, &st, recs), ==, 4);
	for (guint i = 0; i < 4; i++) {
		const uint8_t *r = recs->data + i * 64;
		g_assert_cmpuint(pr_get(r, PR_SL), ==, 4);
		g_assert_cmpuint(pr_get(r, PR_MTU), ==, 2);
		g_assert_cmpuint(pr_get(r, PR_RATE), ==, 2);
		g_assert_cmpuint(pr_get(r, PR_LIFE), ==, 9);
		g_assert_cmpuint((pr_get(r, PR_DLID) - f->ports[b].lid) % 2, ==, 1);
	}
	/* the level's SL asked for: paths; another SL: none */
	q_put(q, PR_SL, 4);
	g_assert_cmpuint(pr_ask(&s, SA_GETTABLE, q, m | 1u << PR_SL, &st, NULL), ==, 4);
	q_put(q, PR_SL, 5);
	g_assert_cmpuint(pr_ask(&s, SA_GETTABLE, q, m | 1u << PR_SL, &st, NULL), ==, 0);
	/* a Service ID outside the rule: DEFAULT (SL 1, the path's MTU) */
	uint8_t d[64] = { 0 };
	q_put(d, PR_SID_LSB, 0x250);
	g_byte_array_set_size(recs, 0);
	g_assert_cmpuint(pr_ask(&s, SA_GET, d, 1u << PR_SID_LSB, &st, recs), ==, 1);
	g_assert_cmpuint(pr_get(recs->data, PR_SL), ==, 1);
	g_assert_cmpuint(pr_get(recs->data, PR_MTU), ==, 5);
	/* no policy: the partition's sl= (the path's P_Key is the default one here) */
	s.in.qos = NULL;
	publish(&s);
	const char *parts = "Default=0x7fff, sl=2 : ALL=full ;\n";
	GError *err = NULL;
	struct part_policy *pp = part_policy_parse_text(parts, strlen(parts), "p.conf", &err);
	g_assert_no_error(err);
	s.in.parts = pp;
	publish(&s);
	/* QoS off (no -Q): sl= is taken as 0, as OpenSM's partition_create */
	g_byte_array_set_size(recs, 0);
	g_assert_cmpuint(pr_ask(&s, SA_GET, q, m, &st, recs), ==, 1);
	g_assert_cmpuint(pr_get(recs->data, PR_SL), ==, 0);
	s.in.qos_on = 1;
	publish(&s);
	g_byte_array_set_size(recs, 0);
	g_assert_cmpuint(pr_ask(&s, SA_GET, q, m, &st, recs), ==, 1);
	g_assert_cmpuint(pr_get(recs->data, PR_SL), ==, 2);
	s.in.qos_on = 0;
	s.in.parts = NULL;
	publish(&s);
	part_policy_free(pp);
	/* no policy any more: SL 0 */
	s.in.qos = NULL;
	publish(&s);
	g_byte_array_set_size(recs, 0);
	g_assert_cmpuint(pr_ask(&s, SA_GET, q, m, &st, recs), ==, 1);
	g_assert_cmpuint(pr_get(recs->data, PR_SL), ==, 0);
	qos_policy_free(pol);
	g_free(text);
	g_byte_array_free(recs, TRUE);
	sabed_clear(&s);
}

/* Path bits beyond 31 (LMC 6: 64 LIDs per port): a level with path-bits 40-41 gives only
 * those two DLID offsets, whatever NumbPath asks. */
static void test_path_qos_path_bits_high(void)
{
	struct sabed s;
	sabed_init_lmc(&s, 6);
	const struct fabric *f = s.b.f;
	uint32_t b = fx_ca_port(&f->pub, 3, 1);
	const char *text = "qos-levels\n qos-level\n  name: DEFAULT\n  sl: 0\n  path-bits: 40-41\n"
			   " end-qos-level\nend-qos-levels\n";
	struct qos_policy *pol = set_policy(&s, text);
	uint16_t st;
	GByteArray *recs = g_byte_array_new();
	uint8_t q[64] = { 0 };
	q_put(q, PR_NUMBPATH, 64);
	guint n = pr_ask(&s, SA_GETTABLE, q, 1u << PR_NUMBPATH, &st, recs);
	g_assert_cmpuint(n, ==, 64);
	for (guint i = 0; i < n; i++) {
		unsigned off = (unsigned)pr_get(recs->data + i * 64, PR_DLID) - f->ports[b].lid;
		g_assert_true(off == 40 || off == 41);
	}
	s.in.qos = NULL;
	publish(&s);
	qos_policy_free(pol);
	g_byte_array_free(recs, TRUE);
	sabed_clear(&s);
}

/* LMC 2: NumbPath 4 gives the four paths at the same offset in both LMC ranges first (distinct
 * SLIDs and DLIDs, Preference 0), as OpenSM; 16 gives every SLID/DLID combination, and not
 * more. */
static void test_path_numbpath_lmc(void)
{
	struct sabed s;
	sabed_init_lmc(&s, 2);
	uint8_t q[64] = { 0 };
	uint16_t st;
	GByteArray *recs = g_byte_array_new();
	q_put(q, PR_NUMBPATH, 4);
	g_assert_cmpuint(pr_ask(&s, SA_GETTABLE, q, 1u << PR_NUMBPATH, &st, recs), ==, 4);
	GHashTable *dlids = g_hash_table_new(NULL, NULL);
	for (guint i = 0; i < recs->len / 64; i++) {
		g_hash_table_add(dlids, GUINT_TO_POINTER(pr_get(recs->data + i * 64, PR_DLID)));
		g_assert_cmpuint(pr_get(recs->data + i * 64, PR_SLID), ==,
				 s.b.f->ports[fx_ca_port(&s.b.f->pub, 0, 1)].lid + i);
		g_assert_cmpuint(pr_get(recs->data + i * 64, PR_PREFERENCE), ==, 0);
	}
	g_assert_cmpuint(g_hash_table_size(dlids), ==, 4);
	memset(q, 0, sizeof(q));
	q_put(q, PR_NUMBPATH, 64);
	g_assert_cmpuint(pr_ask(&s, SA_GETTABLE, q, 1u << PR_NUMBPATH, &st, NULL), ==, 16);
	g_hash_table_destroy(dlids);
	g_byte_array_free(recs, TRUE);
	sabed_clear(&s);
}

/* GUIDInfoRecord: block 0 of every end port, GUID0 the port GUID. SMInfoRecord: this SM, the
 * SM_Key only to a requester presenting it. */
static void test_guidinfo_sminfo_records(void)
{
	struct sabed s;
	sabed_init(&s);
	const struct fabric *f = s.b.f;
	uint32_t ends = 0;
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		ends += f->ports[p].lid && fabric_is_end_port(f, p);
	uint32_t len;
	const uint8_t *r = ask(&s, SA_GETTABLE, 0x30, 0, NULL, 0, &len);
	g_assert_cmpuint((len - IB_SA_DATA_OFFS) / 72, ==, ends);
	uint32_t port = fx_ca_port(&f->pub, 2, 1);
	uint8_t q[72] = { 0 };
	mad_set_field64(q, 0, IB_SA_GIR_GUID0_F, f->ports[port].guid);
	r = ask(&s, SA_GET, 0x30, 1u << 4, q, sizeof(q), &len);
	g_assert_cmphex(status_of(r), ==, 0);
	g_assert_cmpuint((unsigned)(r[IB_SA_DATA_OFFS] << 8 | r[IB_SA_DATA_OFFS + 1]), ==, f->ports[port].lid);
	s.in.sm_key = s.in.sa_key = 0x99;
	s.in.priority = 7;
	s.in.state = 3;
	s.in.act_count = 42;
	publish(&s);
	ask_sm_key = 0;
	r = ask(&s, SA_GET, 0x18, 0, NULL, 0, &len);
	g_assert_cmphex(status_of(r), ==, 0);
	const uint8_t *smi = r + IB_SA_DATA_OFFS + 4;
	g_assert_cmphex(mad_get_field64((void *)smi, 0, IB_SMINFO_GUID_F), ==, f->ports[f->pub.sm_port].guid);
	g_assert_cmphex(mad_get_field64((void *)smi, 0, IB_SMINFO_KEY_F), ==, 0);
	g_assert_cmpuint(mad_get_field((void *)smi, 0, IB_SMINFO_PRIO_F), ==, 7);
	g_assert_cmpuint(mad_get_field((void *)smi, 0, IB_SMINFO_STATE_F), ==, 3);
	g_assert_cmpuint(mad_get_field((void *)smi, 0, IB_SMINFO_ACT_F), ==, 42);
	g_assert_cmpuint(mad_get_field((void *)r, 0, IB_SA_ATTROFFS_F), ==, 4); /* 25 -> 32 bytes */
	ask_sm_key = 0x99;
	r = ask(&s, SA_GET, 0x18, 0, NULL, 0, &len);
	g_assert_cmphex(mad_get_field64((void *)(r + IB_SA_DATA_OFFS + 4), 0, IB_SMINFO_KEY_F), ==, 0x99);
	/* a standby the SMInfo poll found: a record of its own, as it answered */
	struct sa_remote_sm other = { .guid = 0xabc, .sm_key = 0x99, .act_count = 5, .lid = 9,
				      .priority = 2, .state = 2 };
	sa_inputs_set_remote_sms(&s.in, &other, 1);
	publish(&s);
	ask_sm_key = 0;
	r = ask(&s, SA_GETTABLE, 0x18, 0, NULL, 0, &len);
	g_assert_cmpuint((len - IB_SA_DATA_OFFS) / 32, ==, 2);
	const uint8_t *rec = r + IB_SA_DATA_OFFS + 32;
	g_assert_cmpuint((unsigned)(rec[0] << 8 | rec[1]), ==, 9);
	g_assert_cmphex(mad_get_field64((void *)(rec + 4), 0, IB_SMINFO_GUID_F), ==, 0xabc);
	g_assert_cmphex(mad_get_field64((void *)(rec + 4), 0, IB_SMINFO_KEY_F), ==, 0);
	g_assert_cmpuint(mad_get_field((void *)(rec + 4), 0, IB_SMINFO_STATE_F), ==, 2);
	g_assert_cmpuint(mad_get_field((void *)(rec + 4), 0, IB_SMINFO_ACT_F), ==, 5);
	uint8_t byguid[32] = { 0 };
	mad_set_field64(byguid + 4, 0, IB_SMINFO_GUID_F, 0xabc);
	r = ask(&s, SA_GET, 0x18, 1u << 2, byguid, sizeof(byguid), &len);
	g_assert_cmphex(status_of(r), ==, 0);
	g_assert_cmpuint(mad_get_field((void *)(r + IB_SA_DATA_OFFS + 4), 0, IB_SMINFO_PRIO_F), ==, 2);
	sa_inputs_set_remote_sms(&s.in, NULL, 0);
	publish(&s);
	r = ask(&s, SA_GETTABLE, 0x18, 0, NULL, 0, &len);
	g_assert_cmpuint((len - IB_SA_DATA_OFFS) / 32, ==, 1);
	sabed_clear(&s);
}

/* ---- partitions ------------------------------------------------------------------------------- */

/* Tables by host index: host 0 full member of 0x0001, hosts 1 and 3 limited members, host 2
 * in 0x0002 only; switch ports unknown. */
static const uint16_t *test_table(const void *ctx, const struct fabric *f, uint32_t port, uint32_t *cap)
{
	(void)ctx;
	static const uint16_t t0[] = { 0x8001, 0xffff }, t1[] = { 0x0001 }, t2[] = { 0x8002 },
			      t3[] = { 0x0001, 0x7fff };
	static const uint16_t *tables[] = { t0, t1, t2, t3 };
	static const uint32_t caps[] = { 2, 1, 1, 2 };
	for (uint32_t h = 0; h < 4; h++) {
		if (fx_ca_port(&f->pub, h, 1) == port) {
			*cap = caps[h];
			return tables[h];
		}
	}
	*cap = 0;
	return NULL;
}

/* PathRecords exist only between ports that share a partition with one full member; the
 * P_Key is the one asked for (as asked) or the first the source holds. P_KeyTableRecords show the
 * tables of the ports the requester (host 0) shares a partition with. */
static void test_path_partitions(void)
{
	struct sabed s;
	sabed_init(&s);
	const struct fabric *f = s.b.f;
	sa_inputs_set_routes(&s.in, s.b.r, sa_pkeys_new(f, test_table, NULL));
	publish(&s);
	uint32_t h[4];
	for (uint32_t i = 0; i < 4; i++)
		h[i] = fx_ca_port(&f->pub, i, 1);
	ask_slid = f->ports[h[0]].lid;
	struct { uint32_t a, b; uint16_t want, got; } cases[] = {
		{ 0, 3, 0, 0x8001 },       /* full and limited share 0x0001 */
		{ 3, 0, 0, 0x0001 },       /* as the source holds it */
		{ 1, 3, 0, 0 },            /* two limited members: no path */
		{ 0, 2, 0, 0 },            /* nothing shared */
		{ 0, 3, 0x7fff, 0x7fff },  /* the default partition: answered as asked (OpenSM) */
		{ 0, 3, 0x0002, 0 },       /* asked for a partition they do not share */
	};
	for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
		uint8_t q[64] = { 0 };
		put_gid(q, PR_SGID, f->ports[h[cases[c].a]].guid);
		put_gid(q, PR_DGID, f->ports[h[cases[c].b]].guid);
		uint64_t mask = 1u << PR_SGID | 1u << PR_DGID;
		if (cases[c].want) {
			q_put(q, PR_PKEY, cases[c].want);
			mask |= 1u << PR_PKEY;
		}
		uint32_t len;
		const uint8_t *r = ask(&s, SA_GET, 0x35, mask, q, 64, &len);
		if (!cases[c].got) {
			g_assert_cmphex(status_of(r), ==, SA_ERR_NO_RECORDS);
		} else {
			g_assert_cmphex(status_of(r), ==, 0);
			g_assert_cmphex(pr_get(r + IB_SA_DATA_OFFS, PR_PKEY), ==, cases[c].got);
		}
	}
	/* the tables as P_KeyTableRecords: host 3's one block */
	uint8_t qk[72] = { (uint8_t)(f->ports[h[3]].lid >> 8), (uint8_t)f->ports[h[3]].lid };
	uint32_t len;
	ask_sm_key = 1; /* P_KeyTableRecords only to the SA_Key (default 1) */
	const uint8_t *r = ask(&s, SA_GETTABLE, 0x33, 1, qk, sizeof(qk), &len);
	g_assert_cmpuint(len, ==, IB_SA_DATA_OFFS + 72);
	const uint8_t *rec = r + IB_SA_DATA_OFFS;
	g_assert_cmpuint(rec[4], ==, 1);
	g_assert_cmphex((unsigned)(rec[8] << 8 | rec[9]), ==, 0x0001);
	g_assert_cmphex((unsigned)(rec[10] << 8 | rec[11]), ==, 0x7fff);
	r = ask(&s, SA_GETTABLE, 0x33, 0, NULL, 0, &len);
	g_assert_cmpuint((len - IB_SA_DATA_OFFS) / 72, ==, 3); /* not host 2's: no key shared */
	ask_sm_key = 0; /* without the SA_Key: REQ_INVALID (OpenSM's osm_sa_pkey_record.c) */
	r = ask(&s, SA_GETTABLE, 0x33, 0, NULL, 0, &len);
	g_assert_cmphex(status_of(r), ==, SA_ERR_REQ_INVALID);
	ask_slid = 0;
	sabed_clear(&s);
}

/* SwitchInfoRecords: one per switch, its LID and the SwitchInfo fields where libibmad has them. */
static void test_switchinfo_records(void)
{
	struct sabed s;
	sabed_init(&s);
	const struct fabric *f = s.b.f;
	const struct sa_kind *k = sa_kind_of(0x14);
	g_assert_nonnull(k);
	g_assert_cmpuint(k->layout.size, >=, 4 + 17);
	g_assert_cmpuint(k->layout.width[2], ==, 16);  /* LinearFDBCap */
	g_assert_cmpuint(k->layout.width[5], ==, 16);  /* LinearFDBTop */
	uint32_t len;
	const uint8_t *r = ask(&s, SA_GETTABLE, 0x14, 0, NULL, 0, &len);
	size_t stride = sa_rec_stride(k->layout.size);
	g_assert_cmpuint(mad_get_field((void *)r, 0, IB_SA_ATTROFFS_F), ==, stride / 8);
	g_assert_cmpuint((len - IB_SA_DATA_OFFS) / stride, ==, f->pub.n_switches);
	uint32_t node = f->switches[1].node;
	uint16_t lid = f->ports[f->nodes[node].port0].lid;
	uint8_t q[64] = { (uint8_t)(lid >> 8), (uint8_t)lid };
	r = ask(&s, SA_GET, 0x14, 1, q, sizeof(q), &len);
	g_assert_cmphex(status_of(r), ==, 0);
	g_assert_cmpuint(mad_get_field((void *)(r + IB_SA_DATA_OFFS + 4), 0, IB_SW_LINEAR_FDB_CAP_F), ==,
			 mad_get_field((void *)f->nx[node].switchinfo, 0, IB_SW_LINEAR_FDB_CAP_F));
	sabed_clear(&s);
}

/* ---- ServiceRecord ----------------------------------------------------------------------------- */

static void sr_fill(uint8_t *rec, uint64_t id, uint64_t guid, uint32_t lease, const char *name)
{
	memset(rec, 0, SR_SIZE);
	for (int i = 0; i < 8; i++) {
		rec[i] = (uint8_t)(id >> (56 - 8 * i));
		rec[8 + i] = (uint8_t)(0xfe80000000000000ULL >> (56 - 8 * i));
		rec[16 + i] = (uint8_t)(guid >> (56 - 8 * i));
	}
	rec[24] = 0xff; /* ServiceP_Key */
	rec[25] = 0xff;
	rec[28] = (uint8_t)(lease >> 24);
	rec[29] = (uint8_t)(lease >> 16);
	rec[30] = (uint8_t)(lease >> 8);
	rec[31] = (uint8_t)lease;
	strncpy((char *)rec + 48, name, 63);
}

static uint32_t sr_lease(const uint8_t *rec)
{
	return (uint32_t)rec[28] << 24 | (uint32_t)rec[29] << 16 | (uint32_t)rec[30] << 8 | rec[31];
}

/* The registry itself: Set needs ServiceID and ServiceGID; a second Set of the same service
 * (ID, GID, P_Key) replaces it, keeping its owner; leases run out; a port holds at most its
 * quota of services (a replacement is not a new one); Get shows what the visibility callback
 * lets through; Delete takes the one service the record names, whatever the mask, and only
 * when the judge allows. */
static int sr_only_name(void *ctx, const uint8_t *rec, const struct sr_owner *owner)
{
	(void)owner;
	return !strcmp((const char *)rec + 48, (const char *)ctx);
}

static uint16_t sr_refuse(void *ctx, const uint8_t *rec, const struct sr_owner *owner)
{
	(void)rec;
	return owner->port == *(const uint64_t *)ctx ? 0 : SA_ERR_REQ_INVALID;
}

static void test_services(void)
{
	struct sa_services *s = sa_services_new();
	uint8_t rec[SR_SIZE], out[SR_SIZE];
	uint64_t full = 1u << SR_ID | 1u << SR_GID | 1u << SR_PKEY | 1u << SR_LEASE | 1u << SR_NAME;
	struct sr_owner a = { .port = 0xa1, .node = 0xa0 }, b = { .port = 0xb1, .node = 0xb0 };
	sr_fill(rec, 0x10, 0x1111, 30, "alpha");
	g_assert_cmphex(sa_service_set(s, rec, 1u << SR_GID, &a, 0, 0, out), ==, SA_ERR_REQ_INSUFFICIENT_COMPONENTS);
	g_assert_cmphex(sa_service_set(s, rec, full, &a, 0, 100.0, out), ==, 0);
	g_assert_cmpuint(sr_lease(out), ==, 30);
	sr_fill(rec, 0x20, 0x1111, SR_LEASE_INFINITE, "beta");
	g_assert_cmphex(sa_service_set(s, rec, full & ~(1u << SR_PKEY), &a, 0, 100.0, out), ==, 0);
	g_assert_cmphex(out[24] << 8 | out[25], ==, 0xffff); /* not named: answered as the default */
	sr_fill(rec, 0x10, 0x1111, 60, "alpha2"); /* the same service again, by b: replaced */
	g_assert_cmphex(sa_service_set(s, rec, full, &b, 0, 110.0, out), ==, 0);
	g_assert_cmpuint(sa_services_count(s, 110.0), ==, 2);
	g_assert_cmpuint(sa_services_held(s, a.port, 110.0), ==, 2); /* its owner stays a */
	g_assert_cmpuint(sa_services_held(s, b.port, 110.0), ==, 0);
	GByteArray *got = g_byte_array_new();
	uint8_t q[SR_SIZE] = { 0 };
	strncpy((char *)q + 48, "alpha2", 63);
	sa_service_query(s, q, 1u << SR_NAME, 140.5, NULL, NULL, got);
	g_assert_cmpuint(got->len, ==, SR_SIZE);
	g_assert_cmpuint(sr_lease(got->data), ==, 30); /* 60 from 110, at 140.5: 29.5 left, rounded up */
	g_byte_array_set_size(got, 0);
	sa_service_query(s, q, 0, 140.5, sr_only_name, "beta", got); /* the callback decides */
	g_assert_cmpuint(got->len, ==, SR_SIZE);
	g_assert_cmpstr((const char *)got->data + 48, ==, "beta");
	g_byte_array_set_size(got, 0);
	sa_service_query(s, q, 1u << SR_NAME, 170.0, NULL, NULL, got); /* expired */
	g_assert_cmpuint(got->len, ==, 0);
	g_assert_cmpuint(sa_services_count(s, 1e9), ==, 1); /* the infinite one stays */
	/* a Delete names one service: ID alone, or a record of zeros, is none (whatever the mask) */
	sr_fill(q, 0x20, 0, 0, "");
	g_assert_cmphex(sa_service_delete(s, q, 1e9, NULL, NULL, got), ==, SA_ERR_NO_RECORDS);
	memset(q, 0, SR_SIZE);
	g_assert_cmphex(sa_service_delete(s, q, 1e9, NULL, NULL, got), ==, SA_ERR_NO_RECORDS);
	g_assert_cmpuint(sa_services_count(s, 1e9), ==, 1);
	sr_fill(q, 0x20, 0x1111, 0, "");
	g_assert_cmphex(sa_service_delete(s, q, 1e9, sr_refuse, &b.port, got), ==, SA_ERR_REQ_INVALID);
	g_assert_cmpuint(sa_services_count(s, 1e9), ==, 1);
	g_assert_cmpuint(got->len, ==, 0);
	g_assert_cmphex(sa_service_delete(s, q, 1e9, sr_refuse, &a.port, got), ==, 0);
	g_assert_cmpuint(got->len, ==, SR_SIZE);
	g_assert_cmpstr((const char *)got->data + 48, ==, "beta");
	g_assert_cmpuint(sa_services_count(s, 1e9), ==, 0);
	/* the quota: 3 new services for a, the 4th refused; a replacement still goes; b is not held */
	for (uint64_t id = 1; id <= 3; id++) {
		sr_fill(rec, id, 0x1111, SR_LEASE_INFINITE, "q");
		g_assert_cmphex(sa_service_set(s, rec, full, &a, 3, 2e9, out), ==, 0);
	}
	sr_fill(rec, 4, 0x1111, SR_LEASE_INFINITE, "q");
	g_assert_cmphex(sa_service_set(s, rec, full, &a, 3, 2e9, out), ==, SA_ERR_NO_RESOURCES);
	g_assert_cmpuint(sa_services_refused(s), ==, 1);
	sr_fill(rec, 2, 0x1111, SR_LEASE_INFINITE, "q again");
	g_assert_cmphex(sa_service_set(s, rec, full, &a, 3, 2e9, out), ==, 0);
	sr_fill(rec, 4, 0x2222, SR_LEASE_INFINITE, "q");
	g_assert_cmphex(sa_service_set(s, rec, full, &b, 3, 2e9, out), ==, 0);
	g_assert_cmpuint(sa_services_count(s, 2e9), ==, 4);
	g_byte_array_free(got, TRUE);
	sa_services_free(s);
}

/* Through the agent, from the port that registers: Set answered with GetResp and the record,
 * GetTable by ServiceID, Delete (of the service its record names) answered with DeleteResp,
 * then NO_RECORDS; a Set naming another node's port is refused; Set of another attribute:
 * unsupported. */
static void test_service_requests(void)
{
	struct sabed s;
	sabed_init(&s);
	const struct fabric *f = s.b.f;
	uint32_t own = fx_ca_port(&f->pub, 2, 1), other = fx_ca_port(&f->pub, 3, 1);
	ask_slid = f->ports[own].lid;
	uint8_t rec[SR_SIZE];
	sr_fill(rec, 0x77, f->ports[own].guid, SR_LEASE_INFINITE, "svc");
	memset(rec + 32, 0xab, 16); /* a ServiceKey: never shown back (no key association) */
	uint64_t mask = 1u << SR_ID | 1u << SR_GID | 1u << SR_PKEY | 1u << SR_NAME | 1u << SR_KEY;
	uint32_t len;
	const uint8_t *r = ask(&s, SA_SET, 0x31, mask, rec, SR_SIZE, &len);
	g_assert_cmphex(status_of(r), ==, 0);
	g_assert_cmphex(r[3], ==, SA_GETRESP);
	g_assert_cmpstr((const char *)r + IB_SA_DATA_OFFS + 48, ==, "svc");
	static const uint8_t zero[16];
	g_assert_cmpint(memcmp(r + IB_SA_DATA_OFFS + 32, zero, 16), ==, 0);
	uint8_t q[SR_SIZE] = { 0 };
	q[7] = 0x77;
	r = ask(&s, SA_GETTABLE, 0x31, 1u << SR_ID, q, SR_SIZE, &len);
	g_assert_cmpuint(len, ==, IB_SA_DATA_OFFS + SR_SIZE);
	r = ask(&s, SA_DELETE, 0x31, 1u << SR_ID, q, SR_SIZE, &len); /* ID alone names no service */
	g_assert_cmphex(status_of(r), ==, SA_ERR_NO_RECORDS);
	r = ask(&s, SA_DELETE, 0x31, 1u << SR_ID, rec, SR_SIZE, &len);
	g_assert_cmphex(status_of(r), ==, 0);
	g_assert_cmphex(r[3], ==, SA_DELETERESP);
	r = ask(&s, SA_DELETE, 0x31, 1u << SR_ID, rec, SR_SIZE, &len);
	g_assert_cmphex(status_of(r), ==, SA_ERR_NO_RECORDS);
	sr_fill(rec, 0x78, f->ports[other].guid, SR_LEASE_INFINITE, "not mine");
	r = ask(&s, SA_SET, 0x31, mask, rec, SR_SIZE, &len);
	g_assert_cmphex(status_of(r), ==, SA_ERR_REQ_INVALID);
	r = ask(&s, SA_SET, 0x11, 0, NULL, 0, &len);
	g_assert_cmphex(status_of(r), ==, SA_UNSUP_METHOD_ATTR);
	ask_slid = 0;
	sabed_clear(&s);
}


/* ---- MultiPathRecord ------------------------------------------------------------------------- */

static void mpr_gid(uint8_t *rec, unsigned i, uint64_t guid)
{
	uint8_t *at = rec + MPR_FIXED + 16 * i;
	for (int k = 0; k < 8; k++) {
		at[k] = (uint8_t)(0xfe80000000000000ULL >> (56 - 8 * k));
		at[8 + k] = (uint8_t)(guid >> (56 - 8 * k));
	}
}

/* GetMulti: one SGID and one DGID give their path; no GID counts, or only SGIDs, are
 * insufficient; 2 x 2 GIDs with NumbPath 2 give 2 paths (round by round over the pairs);
 * an unknown GID is INVALID_GID; a Get of MultiPathRecord or a GetMulti of another
 * attribute is unsupported. LMC 2: NumbPath 4 over one pair gives 4 distinct DLIDs. */
static void test_multipath(void)
{
	for (int lmc = 0; lmc <= 2; lmc += 2) {
		struct sabed s;
		sabed_init_lmc(&s, (uint8_t)lmc);
		const struct fabric *f = s.b.f;
		uint64_t a = f->ports[fx_ca_port(&f->pub, 0, 1)].guid, b = f->ports[fx_ca_port(&f->pub, 3, 1)].guid;
		uint64_t counts = 1u << MPR_SGID_COUNT | 1u << MPR_DGID_COUNT;
		uint8_t rec[200] = { 0 };
		rec[15] = 1; /* SGIDCount */
		rec[16] = 1; /* DGIDCount */
		mpr_gid(rec, 0, a);
		mpr_gid(rec, 1, b);
		uint32_t len;
		const uint8_t *r = ask(&s, SA_GETMULTI, 0x3a, counts, rec, sizeof(rec), &len);
		g_assert_cmphex(status_of(r), ==, 0);
		g_assert_cmphex(r[3], ==, SA_GETMULTIRESP);
		g_assert_cmpuint((len - IB_SA_DATA_OFFS) / 64, ==, 1);
		g_assert_cmpuint(pr_get(r + IB_SA_DATA_OFFS, PR_SLID), ==, f->ports[fx_ca_port(&f->pub, 0, 1)].lid);
		r = ask(&s, SA_GETMULTI, 0x3a, 0, rec, sizeof(rec), &len);
		g_assert_cmphex(status_of(r), ==, SA_ERR_REQ_INSUFFICIENT_COMPONENTS);
		r = ask(&s, SA_GETMULTI, 0x3a, 1u << MPR_SGID_COUNT, rec, sizeof(rec), &len);
		g_assert_cmphex(status_of(r), ==, SA_ERR_REQ_INSUFFICIENT_COMPONENTS);
		r = ask(&s, SA_GET, 0x3a, counts, rec, sizeof(rec), &len);
		g_assert_cmphex(status_of(r), ==, SA_UNSUP_METHOD_ATTR);
		r = ask(&s, SA_GETMULTI, 0x35, 0, rec, sizeof(rec), &len);
		g_assert_cmphex(status_of(r), ==, SA_UNSUP_METHOD_ATTR);
		/* 2 x 2, NumbPath 2 */
		rec[15] = 2;
		rec[16] = 2;
		rec[5] = 2; /* Reversible 0, NumbPath 2 */
		mpr_gid(rec, 0, a);
		mpr_gid(rec, 1, b);
		mpr_gid(rec, 2, b);
		mpr_gid(rec, 3, a);
		r = ask(&s, SA_GETMULTI, 0x3a, counts | 1u << MPR_NUMBPATH, rec, sizeof(rec), &len);
		g_assert_cmphex(status_of(r), ==, 0);
		g_assert_cmpuint((len - IB_SA_DATA_OFFS) / 64, ==, 2);
		/* the first paths of the first two pairs: a->b, a->a */
		g_assert_cmpuint(pr_get(r + IB_SA_DATA_OFFS, PR_DLID), ==, f->ports[fx_ca_port(&f->pub, 3, 1)].lid);
		g_assert_cmpuint(pr_get(r + IB_SA_DATA_OFFS + 64, PR_DLID), ==, f->ports[fx_ca_port(&f->pub, 0, 1)].lid);
		mpr_gid(rec, 3, 0xdead);
		r = ask(&s, SA_GETMULTI, 0x3a, counts, rec, sizeof(rec), &len);
		g_assert_cmphex(status_of(r), ==, SA_ERR_REQ_INVALID_GID);
		rec[15] = 6; /* 6 + 6 GIDs do not fit */
		rec[16] = 6;
		r = ask(&s, SA_GETMULTI, 0x3a, counts, rec, sizeof(rec), &len);
		g_assert_cmphex(status_of(r), ==, SA_ERR_REQ_INVALID);
		if (lmc) {
			rec[15] = 1;
			rec[16] = 1;
			rec[5] = 4;
			mpr_gid(rec, 1, b);
			r = ask(&s, SA_GETMULTI, 0x3a, counts | 1u << MPR_NUMBPATH, rec, sizeof(rec), &len);
			g_assert_cmpuint((len - IB_SA_DATA_OFFS) / 64, ==, 4);
			GHashTable *dlids = g_hash_table_new(NULL, NULL);
			for (unsigned i = 0; i < 4; i++)
				g_hash_table_add(dlids, GUINT_TO_POINTER(pr_get(r + IB_SA_DATA_OFFS + 64 * i, PR_DLID)));
			g_assert_cmpuint(g_hash_table_size(dlids), ==, 4);
			g_hash_table_destroy(dlids);
		}
		sabed_clear(&s);
	}
}

/* ---- InformInfo and Reports ------------------------------------------------------------------ */

/* An InformInfo: generic trap `trap` (0xFFFF: all) from every LID, type and producer any. */
static void ii_fill(uint8_t *ii, uint16_t trap, int subscribe, uint32_t qpn)
{
	memset(ii, 0, II_SIZE);
	ii[16] = ii[17] = 0xff;           /* LIDRangeBegin 0xFFFF: all */
	ii[22] = 1;                       /* IsGeneric */
	ii[23] = (uint8_t)subscribe;
	ii[24] = ii[25] = 0xff;           /* Type: any */
	ii[26] = (uint8_t)(trap >> 8);
	ii[27] = (uint8_t)trap;
	ii[28] = (uint8_t)(qpn >> 16);
	ii[29] = (uint8_t)(qpn >> 8);
	ii[30] = (uint8_t)qpn;
	ii[31] = 16;                      /* RespTimeValue: 4.096 us * 2^16 = 0.27 s */
	ii[33] = ii[34] = ii[35] = 0xff;  /* ProducerType: any */
}

struct sent {
	unsigned n;
	uint16_t lid;
	uint64_t tid;
	uint16_t trap;
};

static void note_send(void *ctx, uint16_t lid, uint32_t qpn, uint64_t tid, const uint8_t *notice)
{
	(void)qpn;
	struct sent *s = ctx;
	s->n++;
	s->lid = lid;
	s->tid = tid;
	s->trap = (uint16_t)(notice[4] << 8 | notice[5]);
}

/* Routes for fx_line(2, ...): a LID on this switch out of its own port, the rest over the link
 * (switch 0's port 2, switch 1's port 1). */
static struct routing_result *line2_routes(struct fabric *f)
{
	struct routing_result *r = routing_result_new(f);
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		uint32_t node = f->switches[s].node;
		for (uint32_t lid = 1; lid < r->stride && lid <= f->pub.max_lid; lid++) {
			uint32_t p = f->pub.lid_port[lid];
			uint8_t out = s == 0 ? 2 : 1;
			if (p == IBSM_NONE)
				out = IBSM_NO_PORT;
			else if (f->ports[p].node == node)
				out = 0;
			else if (f->ports[p].peer != IBSM_NONE && f->ports[f->ports[p].peer].node == node)
				out = f->ports[f->ports[p].peer].num;
			r->lft[(size_t)s * r->stride + lid] = out;
		}
	}
	return r;
}

/* One answer carries at most 8 MiB of records: PathRecords of every pair of 402 end ports
 * (161604 records, 10 MiB) are refused TOO_MANY_RECORDS; from one source they are answered. */
static void test_answer_cap(void)
{
	struct fabric *f = fx_line(2, 200, 0);
	struct routing_result *r = line2_routes(f);
	struct sa *sa = sa_new(NULL);
	struct sa_inputs in;
	sa_inputs_init(&in);
	sa_inputs_set_routes(&in, r, NULL);
	in.master = 1;
	sa_publish(sa, &in);
	uint8_t buf[4096] = { 0 };
	uint8_t *mad = umad_get_mad(buf);
	mad[0] = 1;
	mad[1] = IB_SA_CLASS;
	mad[2] = 2;
	mad[3] = SA_GETTABLE;
	mad_set_field(mad, 0, IB_MAD_ATTRID_F, IB_SA_ATTR_PATHRECORD);
	umad_set_addr(buf, 1, 1, 0, IB_DEFAULT_QP1_QKEY);
	struct mad_in m;
	dispatch_mad_in(&m, buf, (int)umad_size() + 256);
	struct sa_request rq;
	g_assert_cmpint(sa_decode(&m, &rq), ==, 0);
	struct sa_answer a = { .recs = g_byte_array_new() };
	sa_compute(sa, &rq, 1.0, &a);
	g_assert_cmphex(a.status, ==, SA_ERR_TOO_MANY_RECORDS);
	g_assert_cmpuint(a.recs->len, ==, 0);
	/* SLID 1 (the first host): 402 paths */
	mad_set_field64(mad, 0, IB_SA_COMPMASK_F, 1ull << PR_SLID);
	mad[56 + 42] = 0; /* SLID: record bytes 42-43 */
	mad[56 + 43] = 1;
	sa_decode(&m, &rq);
	sa_compute(sa, &rq, 1.0, &a);
	g_assert_cmphex(a.status, ==, 0);
	g_assert_cmpuint(a.recs->len / PR_SIZE, ==, 402);
	g_byte_array_free(a.recs, TRUE);
	/* the builder stops once past the limit, not after every pair */
	struct pr_env env = { .subnet_prefix = 0xfe80000000000000ULL, .packet_life = 18 };
	struct sa_view v = { .f = f, .r = r, .requester = IBSM_NONE, .answer_max = 100 * PR_SIZE };
	uint8_t q[PR_SIZE] = { 0 };
	GByteArray *out = g_byte_array_new();
	g_assert_cmphex(pr_query(&v, &env, q, 0, 1, out), ==, 0);
	g_assert_cmpuint(out->len, ==, 101 * PR_SIZE);
	g_byte_array_free(out, TRUE);
	sa_free(sa);
	sa_inputs_clear(&in);
	routing_result_unref(r);
	fabric_unref(f);
}

/* One port's share of the subscriptions: SA_INFORM_MAX_PER_PORT (by trap number here), then
 * NO_RESOURCES for that port only; a renewal still works, an unsubscription makes room, and a
 * requester presenting the SM_Key is not held to the share. */
static void test_inform_quota(void)
{
	struct sent sent = { 0 };
	struct sa_inform *in = sa_inform_new(note_send, &sent);
	struct sa_requester a = { .guid = 0xa, .prefix = 0xfe80000000000000ULL, .lid = 7, .qpn = 1 };
	struct sa_requester b = { .guid = 0xb, .prefix = 0xfe80000000000000ULL, .lid = 8, .qpn = 1 };
	struct sa_requester sm = { .guid = 0xa, .prefix = 0xfe80000000000000ULL, .lid = 7, .qpn = 1,
				   .trusted = 1 };
	uint8_t ii[II_SIZE], out[II_SIZE];
	for (unsigned t = 0; t < SA_INFORM_MAX_PER_PORT + 5; t++) {
		ii_fill(ii, (uint16_t)(1000 + t), 1, 0);
		g_assert_cmphex(sa_inform_set(in, ii, &a, out), ==,
				t < SA_INFORM_MAX_PER_PORT ? 0 : SA_ERR_NO_RESOURCES);
	}
	g_assert_cmpuint(sa_inform_count_of(in, 0xa), ==, SA_INFORM_MAX_PER_PORT);
	g_assert_cmpuint(sa_inform_stats(in)->refused, ==, 5);
	ii_fill(ii, 1000, 1, 0);
	g_assert_cmphex(sa_inform_set(in, ii, &a, out), ==, 0);          /* renewed, not a new one */
	ii_fill(ii, 64, 1, 0);
	g_assert_cmphex(sa_inform_set(in, ii, &b, out), ==, 0);          /* another port: its own share */
	g_assert_cmphex(sa_inform_set(in, ii, &sm, out), ==, 0);         /* the SM_Key: no share */
	g_assert_cmpuint(sa_inform_count_of(in, 0xa), ==, SA_INFORM_MAX_PER_PORT + 1);
	ii_fill(ii, 1000, 0, 1);
	g_assert_cmphex(sa_inform_set(in, ii, &a, out), ==, 0);          /* unsubscribed ... */
	ii_fill(ii, 1001, 0, 1);
	g_assert_cmphex(sa_inform_set(in, ii, &a, out), ==, 0);
	ii_fill(ii, 2000, 1, 0);
	g_assert_cmphex(sa_inform_set(in, ii, &a, out), ==, 0);          /* ... room again */
	g_assert_cmpuint(sa_inform_count_of(in, 0xa), ==, SA_INFORM_MAX_PER_PORT);
	sa_inform_free(in);
}

/* The registry: subscribe and renew (one subscription), unsubscribe needs the QPN it was
 * made from; security traps need the SM_Key; records hide the QPN from the untrusted; a
 * notice reaches the subscriptions it matches (trap number, LID range, GID) and not the
 * others; an unacknowledged Report is resent SA_INFORM_RETRIES times, acknowledged ones are
 * not; a subscriber that never answers is dropped after SA_INFORM_MAX_FAILS notices. */
static void test_inform_registry(void)
{
	struct sent sent = { 0 };
	struct sa_inform *in = sa_inform_new(note_send, &sent);
	struct sa_requester who = { .guid = 0x1111, .prefix = 0xfe80000000000000ULL, .lid = 7, .qpn = 1 };
	uint8_t ii[II_SIZE], out[II_SIZE];
	ii_fill(ii, 64, 1, 0);
	g_assert_cmphex(sa_inform_set(in, ii, &who, out), ==, 0);
	g_assert_cmphex(sa_inform_set(in, ii, &who, out), ==, 0);        /* again: renewed */
	g_assert_cmpuint(sa_inform_count(in), ==, 1);
	ii_fill(ii, 65, 1, 0);
	g_assert_cmphex(sa_inform_set(in, ii, &who, out), ==, 0);
	g_assert_cmpuint(sa_inform_count(in), ==, 2);
	ii_fill(ii, 256, 1, 0);                                          /* a security trap */
	g_assert_cmphex(sa_inform_set(in, ii, &who, out), ==, SA_ERR_REQ_INVALID);
	ii_fill(ii, 65, 0, 5);                                           /* not its QPN */
	g_assert_cmphex(sa_inform_set(in, ii, &who, out), ==, SA_ERR_REQ_INVALID);
	ii_fill(ii, 65, 0, 1);
	g_assert_cmphex(sa_inform_set(in, ii, &who, out), ==, 0);
	g_assert_cmpuint(sa_inform_count(in), ==, 1);
	g_assert_cmphex(sa_inform_set(in, ii, &who, out), ==, SA_ERR_REQ_INVALID); /* gone already */
	ii_fill(ii, 64, 2, 0);
	g_assert_cmphex(sa_inform_set(in, ii, &who, out), ==, SA_ERR_REQ_INVALID);
	/* records: by SubscriberGID; the QPN only to the trusted */
	GByteArray *recs = g_byte_array_new();
	uint8_t q[IIR_SIZE] = { 0 };
	q[0] = 0xfe;
	q[1] = 0x80;
	q[14] = 0x11;
	q[15] = 0x11;
	sa_inform_records(in, q, 1, 0, NULL, NULL, recs);
	g_assert_cmpuint(recs->len, ==, IIR_SIZE);
	g_assert_cmpuint(recs->data[24 + 30], ==, 0);
	g_assert_cmpuint(recs->data[24 + 27], ==, 64);
	g_byte_array_set_size(recs, 0);
	sa_inform_records(in, q, 1, 1, NULL, NULL, recs);
	g_assert_cmpuint(recs->data[24 + 30], ==, 1);
	q[15] = 0x12;
	g_byte_array_set_size(recs, 0);
	sa_inform_records(in, q, 1, 1, NULL, NULL, recs);
	g_assert_cmpuint(recs->len, ==, 0);
	/* a second subscriber: trap 128 from LIDs 10-20 only */
	struct sa_requester other = { .guid = 0x2222, .lid = 9, .qpn = 1 };
	ii_fill(ii, 128, 1, 0);
	ii[16] = 0;
	ii[17] = 10;
	ii[19] = 20;
	g_assert_cmphex(sa_inform_set(in, ii, &other, out), ==, 0);
	uint8_t notice[NOTICE_SIZE];
	sa_notice_build(notice, 64, 3, 4, 1, NULL, NULL);
	sa_inform_notice(in, notice, 0, NULL, NULL, 0.0);
	g_assert_cmpuint(sent.n, ==, 1);
	g_assert_cmpuint(sent.lid, ==, 7);
	g_assert_cmpuint(sent.trap, ==, 64);
	sa_inform_acked(in, sent.tid);
	g_assert_cmpuint(sa_inform_tick(in, 100.0), ==, 0); /* acknowledged: not sent again */
	g_assert_cmpuint(sent.n, ==, 1);
	sa_notice_build(notice, 128, 1, 2, 30, NULL, NULL);   /* from LID 30: out of range */
	sa_inform_notice(in, notice, 0, NULL, NULL, 0.0);
	g_assert_cmpuint(sent.n, ==, 1);
	sa_notice_build(notice, 128, 1, 2, 15, NULL, NULL);
	sa_inform_notice(in, notice, 0, NULL, NULL, 0.0);
	g_assert_cmpuint(sent.n, ==, 2);
	g_assert_cmpuint(sent.lid, ==, 9);
	sa_notice_build(notice, 65, 3, 4, 1, NULL, NULL);     /* nobody subscribed to 65 any more */
	sa_inform_notice(in, notice, 0, NULL, NULL, 0.0);
	g_assert_cmpuint(sent.n, ==, 2);
	/* the trap-128 subscriber never answers: resent, then given up; after
	 * SA_INFORM_MAX_FAILS notices it is dropped */
	double t = 1.0;
	sa_notice_build(notice, 128, 1, 2, 15, NULL, NULL);
	for (unsigned k = 0; k < SA_INFORM_MAX_FAILS; k++) {
		if (k) {
			sa_inform_notice(in, notice, 0, NULL, NULL, t);
		}
		for (int i = 0; i <= SA_INFORM_RETRIES + 1; i++) {
			t += 5.0;
			sa_inform_tick(in, t);
		}
	}
	g_assert_cmpuint(sent.n, ==, 2 + SA_INFORM_MAX_FAILS * (1 + SA_INFORM_RETRIES) - 1);
	g_assert_cmpuint(sa_inform_count(in), ==, 1);
	g_assert_cmpuint(sa_inform_stats(in)->dropped_subscribers, ==, 1);
	sa_inform_forget(in, 0x1111);
	g_assert_cmpuint(sa_inform_count(in), ==, 0);
	g_byte_array_free(recs, TRUE);
	sa_inform_free(in);
}

/* Through the agent: a Set(InformInfo) from a port of the fabric is answered with GetResp;
 * from an unknown LID it is refused; InformInfoRecord GetTable lists it; a trap the SM
 * receives becomes a Report(Notice) to the subscriber's LID, resent until its ReportResp. */
static void test_inform_requests(void)
{
	struct sabed s;
	sabed_init(&s);
	const struct fabric *f = s.b.f;
	uint16_t lid = f->ports[fx_ca_port(&f->pub, 2, 1)].lid;
	uint8_t ii[II_SIZE];
	ii_fill(ii, 0xFFFF, 1, 0);
	uint32_t len;
	ask_slid = 0xbeef;
	const uint8_t *r = ask(&s, SA_SET, 0x03, 0, ii, II_SIZE, &len);
	g_assert_cmphex(status_of(r), ==, SA_ERR_REQ_INVALID);
	ask_slid = lid;
	ask_qpn = 1;
	r = ask(&s, SA_SET, 0x03, 0, ii, II_SIZE, &len);
	g_assert_cmphex(status_of(r), ==, 0);
	g_assert_cmphex(r[3], ==, SA_GETRESP);
	r = ask(&s, SA_GET, 0x03, 0, ii, II_SIZE, &len);
	g_assert_cmphex(status_of(r), ==, SA_UNSUP_METHOD_ATTR);
	uint8_t q[IIR_SIZE] = { 0 };
	r = ask(&s, SA_GETTABLE, 0xF3, 0, q, IIR_SIZE, &len);
	g_assert_cmpuint(len, ==, IB_SA_DATA_OFFS + IIR_SIZE);
	r = ask(&s, SA_SET, 0xF3, 0, q, IIR_SIZE, &len);
	g_assert_cmphex(status_of(r), ==, SA_UNSUP_METHOD_ATTR);
	/* a trap 128 from the first switch */
	uint8_t smp_notice[64] = { 0x81, 0, 0, 2, 0, 128, 0, 0 };
	uint16_t sw_lid = f->ports[f->nodes[f->switches[0].node].port0].lid;
	smp_notice[6] = (uint8_t)(sw_lid >> 8);
	smp_notice[7] = (uint8_t)sw_lid;
	uint32_t before = fsma_nresponses(s.b.fk);
	sa_report_trap(s.sa, smp_notice);
	g_assert_cmpuint(fsma_nresponses(s.b.fk), ==, before + 1);
	const uint8_t *rep = fsma_response(s.b.fk, before);
	g_assert_cmphex(rep[3], ==, SA_REPORT);
	g_assert_cmphex(mad_get_field((void *)rep, 0, IB_MAD_ATTRID_F), ==, 0x0002);
	g_assert_cmpuint(rep[IB_SA_DATA_OFFS + 5], ==, 128);
	g_assert_cmpuint(fsma_response_dlid(s.b.fk, before), ==, lid);
	/* the IssuerGID is the switch's */
	g_assert_cmphex(rep[IB_SA_DATA_OFFS + 64 + 15], ==,
			(uint8_t)f->ports[f->nodes[f->switches[0].node].port0].guid);
	/* its ReportResp: the MAD layer put its own number in the TID's high half on the way out
	 * (the kernel its agent's, umad2sim and ibsim theirs): the low half identifies it */
	uint8_t resp[256] = { 1, IB_SA_CLASS, 2, SA_REPORTRESP };
	mad_set_field64(resp, 0, IB_MAD_TRID_F, 0x0001000400000000ULL |
			(uint32_t)mad_get_field64((void *)rep, 0, IB_MAD_TRID_F));
	mad_set_field(resp, 0, IB_MAD_ATTRID_F, 0x0002);
	g_assert_cmpuint(sa_stats(s.sa)->reports_acked, ==, 0);
	fsma_inject_mad_from(s.b.fk, resp, lid, 1);
	transport_poll(s.b.t, 100, 1);
	g_assert_cmpuint(sa_stats(s.sa)->reports_acked, ==, 1);
	g_assert_cmpuint(sa_stats(s.sa)->subscriptions, ==, 1);
	ask_slid = 0;
	ask_qpn = 0;
	sabed_clear(&s);
}

/* The request queue alone: round-robin by requester, each one's in order, both bounds. */
static void test_queue(void)
{
	struct sa_queue *q = sa_queue_new(6, 3);
	uint8_t b[4];
	for (uint8_t i = 0; i < 4; i++) {
		b[0] = i;
		g_assert_cmpint(sa_queue_push(q, 10, b, 1), ==, i < 3 ? 0 : -1); /* its share: 3 */
	}
	b[0] = 20;
	g_assert_cmpint(sa_queue_push(q, 20, b, 1), ==, 0);
	b[0] = 21;
	g_assert_cmpint(sa_queue_push(q, 20, b, 1), ==, 0);
	b[0] = 30;
	g_assert_cmpint(sa_queue_push(q, 30, b, 1), ==, 0);
	g_assert_cmpint(sa_queue_push(q, 40, b, 1), ==, -1); /* 6 in all */
	g_assert_cmpuint(sa_queue_len(q), ==, 6);
	const uint8_t want[] = { 0, 20, 30, 1, 21, 2 };
	for (size_t i = 0; i < sizeof(want); i++) {
		int len = 0;
		uint8_t *x = sa_queue_pop(q, &len);
		g_assert_nonnull(x);
		g_assert_cmpint(len, ==, 1);
		g_assert_cmpuint(x[0], ==, want[i]);
		g_free(x);
	}
	int len;
	g_assert_null(sa_queue_pop(q, &len));
	g_assert_cmpuint(sa_queue_high_water(q), ==, 6);
	g_assert_cmpint(sa_queue_push(q, 10, b, 1), ==, 0); /* room again */
	sa_queue_free(q);
}

/* A storm from one requester through the agent: beyond its share of the queue it is answered
 * BUSY at once, and a second requester's requests are answered among the first's, not after
 * the storm. The transport takes in at most a few hundred MADs per step and the SA serves a
 * share between steps, so the storm is large enough to fill the requester's share whatever
 * those two numbers are; the counts checked are the ones that do not depend on them. */
static void test_fairness(void)
{
	struct sabed s;
	sabed_init(&s);
	const struct fabric *f = s.b.f;
	uint16_t a = f->ports[fx_ca_port(&f->pub, 2, 1)].lid, b = f->ports[fx_ca_port(&f->pub, 3, 1)].lid;
	const int storm = 1500, per = 256; /* SA_QUEUE_PER_REQUESTER */
	uint32_t before = fsma_nresponses(s.b.fk);
	uint8_t mad[256] = { 1, IB_SA_CLASS, 2, SA_GET };
	mad_set_field(mad, 0, IB_MAD_ATTRID_F, 0x0001); /* ClassPortInfo */
	for (int i = 0; i < storm; i++) {
		mad_set_field64(mad, 0, IB_MAD_TRID_F, 0x1000 + (uint64_t)i);
		fsma_inject_mad_from(s.b.fk, mad, a, 1);
	}
	for (int i = 0; i < 2; i++) {
		mad_set_field64(mad, 0, IB_MAD_TRID_F, 0x2000 + (uint64_t)i);
		fsma_inject_mad_from(s.b.fk, mad, b, 1);
	}
	for (int i = 0; i < 200 && fsma_nresponses(s.b.fk) < before + storm + 2; i++)
		transport_poll(s.b.t, 20, 1);
	g_assert_cmpuint(fsma_nresponses(s.b.fk), ==, before + storm + 2);
	int busy = 0, answered = 0, first_b = -1, a_after_b = 0, b_answered = 0;
	for (uint32_t i = before; i < before + storm + 2; i++) {
		const uint8_t *r = fsma_response(s.b.fk, i);
		uint16_t dlid = (uint16_t)fsma_response_dlid(s.b.fk, i);
		if (status_of(r) == SA_BUSY) {
			busy++;
			g_assert_cmpuint(dlid, ==, a); /* only the storm goes beyond its share */
			continue;
		}
		g_assert_cmphex(status_of(r), ==, 0);
		if (dlid == b) {
			b_answered++;
			if (first_b < 0)
				first_b = answered;
		} else if (first_b >= 0) {
			a_after_b++;
		}
		answered++;
	}
	g_assert_cmpint(b_answered, ==, 2);
	g_assert_cmpint(busy, >, 0);
	g_assert_cmpint(busy + answered, ==, storm + 2);
	g_assert_cmpint(answered, >=, per + 2);  /* the storm's share was served */
	g_assert_cmpint(first_b, >=, 0);
	g_assert_cmpint(a_after_b, >, 0);        /* b was not kept waiting behind the whole storm */
	const struct sa_stats *st = sa_stats(s.sa);
	g_assert_cmpuint(st->busy, ==, (uint64_t)busy);
	g_assert_cmpuint(st->queued_max, >=, (uint64_t)per);
	g_assert_cmpuint(st->queued_max, <=, (uint64_t)(per + 2));
	sabed_clear(&s);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	log_set_quiet(!g_getenv("IBSM_TEST_LOG"));
	g_test_add_func("/sa/match", test_match);
	g_test_add_func("/sa/node_records", test_node_records);
	g_test_add_func("/sa/portinfo_records", test_portinfo_records);
	g_test_add_func("/sa/link_lft_records", test_link_lft_records);
	g_test_add_func("/sa/guidinfo_sminfo_records", test_guidinfo_sminfo_records);
	g_test_add_func("/sa/switchinfo_records", test_switchinfo_records);
	g_test_add_func("/sa/path_records", test_path_records);
	g_test_add_func("/sa/path_numbpath_lmc", test_path_numbpath_lmc);
	g_test_add_func("/sa/path_qos_policy", test_path_qos_policy);
	g_test_add_func("/sa/path_qos_path_bits_high", test_path_qos_path_bits_high);
	g_test_add_func("/sa/path_partitions", test_path_partitions);
	g_test_add_func("/sa/services", test_services);
	g_test_add_func("/sa/service_requests", test_service_requests);
	g_test_add_func("/sa/multipath", test_multipath);
	g_test_add_func("/sa/inform_registry", test_inform_registry);
	g_test_add_func("/sa/inform_quota", test_inform_quota);
	g_test_add_func("/sa/answer_cap", test_answer_cap);
	g_test_add_func("/sa/inform_requests", test_inform_requests);
	g_test_add_func("/sa/queue", test_queue);
	g_test_add_func("/sa/fairness", test_fairness);
	return g_test_run();
}
