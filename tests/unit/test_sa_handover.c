/* test_sa_handover.c - the SA answers from the snapshot handed over to it (sa_publish), whole
 * and only from it: a snapshot that is not master silences it and the next one that is master
 * makes it answer again; a new QoS policy shapes the very next PathRecord, none takes it back;
 * a change to the SM's snapshot counts only once handed over (the SA keeps a copy, the P_Key
 * tables by reference, so the SM may drop its own); traps 64/65 go out once per new generation,
 * never for the same snapshot handed over again; before any generation a multicast request is
 * refused, through the agent too. */
#include <string.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include "base/log.h"
#include "fabric_fixture.h"
#include "fake_sma.h"
#include "policy/qos_policy.h"
#include "routing/result.h"
#include "sa/agent.h"
#include "sa/inform.h"
#include "sa/mcmember.h"
#include "sa/path_record.h"
#include "sa/pkeys.h"
#include "sa/wire.h"

/* The answer to (method, attr, mask, rec) from LID lid presenting sm_key; its records in out
 * (NULL: not kept). */
static uint16_t ask(struct sa *sa, uint16_t lid, uint64_t sm_key, uint8_t method, uint16_t attr,
		    uint64_t mask, const uint8_t *rec, size_t rec_len, GByteArray *out)
{
	uint8_t data[SA_MAD_DATA] = { 0 };
	if (rec)
		memcpy(data, rec, rec_len);
	struct sa_request rq = { .method = method, .attr = attr, .sm_key = sm_key, .comp_mask = mask,
				 .record = data, .record_len = sizeof(data), .slid = lid, .qpn = 1 };
	struct sa_answer a = { .recs = out ? out : g_byte_array_new() };
	sa_compute(sa, &rq, 1.0, &a);
	if (!out)
		g_byte_array_free(a.recs, TRUE);
	return a.status;
}

static uint16_t lid_of(const struct fabric *f, uint32_t host)
{
	return f->ports[fx_ca_port(&f->pub, host, 1)].lid;
}

/* The SL of the one path from host a to host b (asked by a); -1 when there is none. */
static int path_sl(struct sa *sa, const struct fabric *f, uint32_t a, uint32_t b)
{
	uint8_t q[PR_SIZE] = { 0 };
	sa_put_gid(q + 24, 0xfe80000000000000ULL, f->ports[fx_ca_port(&f->pub, a, 1)].guid);
	sa_put_gid(q + 8, 0xfe80000000000000ULL, f->ports[fx_ca_port(&f->pub, b, 1)].guid);
	GByteArray *out = g_byte_array_new();
	uint16_t st = ask(sa, lid_of(f, a), 0, SA_GET, IB_SA_ATTR_PATHRECORD, 1u << PR_SGID | 1u << PR_DGID, q,
			  sizeof(q), out);
	int sl = st ? -1 : (int)sa_bits(out->data, pr_layout()->offset[PR_SL], 4);
	g_byte_array_free(out, TRUE);
	return sl;
}

static struct qos_policy *policy(unsigned sl)
{
	char *text = g_strdup_printf("qos-levels\n qos-level\n  name: DEFAULT\n  sl: %u\n end-qos-level\n"
				     "end-qos-levels\n", sl);
	GError *err = NULL;
	struct qos_policy *pol = qos_policy_parse_text(text, strlen(text), "q.conf", &err);
	g_assert_no_error(err);
	g_free(text);
	return pol;
}

/* A QoS policy in the snapshot shapes the next PathRecord; another replaces it at once; a
 * snapshot without one gives the paths their plain SL again. The SM's snapshot changed but not
 * handed over changes nothing. */
static void test_qos_policy(void)
{
	struct fabric *f = fx_line(2, 2, 0);
	struct routing_result *r = fsma_shortest_routes(f);
	struct sa *sa = sa_new(NULL);
	struct sa_inputs in;
	sa_inputs_init(&in);
	sa_inputs_set_routes(&in, r, NULL);
	in.master = 1;
	sa_publish(sa, &in);
	g_assert_cmpint(path_sl(sa, f, 0, 3), ==, 0);
	struct qos_policy *four = policy(4), *six = policy(6);
	in.qos = four;
	g_assert_cmpint(path_sl(sa, f, 0, 3), ==, 0); /* not handed over yet */
	sa_publish(sa, &in);
	g_assert_cmpint(path_sl(sa, f, 0, 3), ==, 4);
	in.qos = six;
	sa_publish(sa, &in);
	qos_policy_free(four); /* handed over without it: the SA no longer reads it */
	g_assert_cmpint(path_sl(sa, f, 0, 3), ==, 6);
	g_assert_cmpint(path_sl(sa, f, 3, 0), ==, 6);
	in.qos = NULL;
	sa_publish(sa, &in);
	qos_policy_free(six);
	g_assert_cmpint(path_sl(sa, f, 0, 3), ==, 0);
	sa_free(sa);
	sa_inputs_clear(&in);
	routing_result_unref(r);
	fabric_unref(f);
}

/* P_Key tables of every end port: the default partition, full. */
static const uint16_t *full_default(const void *ctx, const struct fabric *f, uint32_t port, uint32_t *cap)
{
	(void)ctx;
	static const uint16_t t[] = { 0xffff };
	if (!fabric_is_end_port(f, port)) {
		*cap = 0;
		return NULL;
	}
	*cap = 1;
	return t;
}

/* The SM_Key counts once handed over; the P_Key tables live on in the SA's copy when the SM
 * drops its own snapshot (ASan would see a table read after it was freed). */
static void test_copy(void)
{
	struct fabric *f = fx_line(2, 2, 0);
	struct routing_result *r = fsma_shortest_routes(f);
	struct sa *sa = sa_new(NULL);
	struct sa_inputs in;
	sa_inputs_init(&in);
	in.sm_key = in.sa_key = 0x11; /* P_KeyTableRecords: to the SA_Key only */
	sa_inputs_set_routes(&in, r, sa_pkeys_new(f, full_default, NULL));
	sa_publish(sa, &in);
	uint16_t lid = lid_of(f, 0);
	GByteArray *out = g_byte_array_new();
	g_assert_cmphex(ask(sa, lid, 0x11, SA_GETTABLE, 0x33, 0, NULL, 0, out), ==, 0);
	guint records = out->len;
	g_assert_cmpuint(records, >, 0);
	in.sm_key = in.sa_key = 0x22; /* the SM's snapshot changes... */
	g_assert_cmphex(ask(sa, lid, 0x22, SA_GETTABLE, 0x33, 0, NULL, 0, NULL), ==, SA_ERR_REQ_INVALID);
	g_assert_cmphex(ask(sa, lid, 0x11, SA_GETTABLE, 0x33, 0, NULL, 0, NULL), ==, 0);
	sa_publish(sa, &in); /* ...and counts once handed over */
	g_assert_cmphex(ask(sa, lid, 0x11, SA_GETTABLE, 0x33, 0, NULL, 0, NULL), ==, SA_ERR_REQ_INVALID);
	sa_inputs_clear(&in); /* the SM drops its snapshot: the SA answers from its own */
	routing_result_unref(r);
	g_byte_array_set_size(out, 0);
	g_assert_cmphex(ask(sa, lid, 0x22, SA_GETTABLE, 0x33, 0, NULL, 0, out), ==, 0);
	g_assert_cmpuint(out->len, ==, records);
	g_byte_array_free(out, TRUE);
	sa_free(sa);
	fabric_unref(f);
}

/* End ports with a LID of f, by GUID. */
static GHashTable *end_ports(const struct fabric *f)
{
	GHashTable *h = g_hash_table_new(g_int64_hash, g_int64_equal);
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		if (f->ports[p].lid && fabric_is_end_port(f, p))
			g_hash_table_add(h, (gpointer)&f->ports[p].guid);
	return h;
}

/* Traps 64 for the end ports a new generation brings, to a subscriber of every trap; none when
 * the same snapshot (or one that changes only this SM's state) is handed over again. */
static void test_generation_traps(void)
{
	struct fabric *f1 = fx_line(2, 2, 0), *f2 = fx_line(2, 3, 0);
	struct routing_result *r1 = routing_result_new(f1), *r2 = routing_result_new(f2);
	struct sa *sa = sa_new(NULL);
	struct sa_inputs in;
	sa_inputs_init(&in);
	sa_inputs_set_routes(&in, r1, NULL);
	in.master = 1;
	sa_publish(sa, &in);
	uint8_t ii[II_SIZE] = { [16] = 0xff, [17] = 0xff, [22] = 1, [23] = 1, [24] = 0xff, [25] = 0xff,
				[26] = 0xff, [27] = 0xff, [31] = 16, [33] = 0xff, [34] = 0xff, [35] = 0xff };
	g_assert_cmphex(ask(sa, lid_of(f1, 0), 0, SA_SET, IB_SA_ATTR_INFORMINFO, 0, ii, II_SIZE, NULL), ==, 0);
	g_assert_cmpuint(sa_stats(sa)->subscriptions, ==, 1);
	/* the subscriber is in both generations; the ports f2 adds came into service */
	GHashTable *before = end_ports(f1), *after = end_ports(f2);
	g_assert_true(g_hash_table_contains(after, &f1->ports[fx_ca_port(&f1->pub, 0, 1)].guid));
	unsigned came = 0;
	GHashTableIter it;
	gpointer k;
	g_hash_table_iter_init(&it, after);
	while (g_hash_table_iter_next(&it, &k, NULL))
		came += !g_hash_table_contains(before, k);
	g_hash_table_iter_init(&it, before);
	while (g_hash_table_iter_next(&it, &k, NULL))
		g_assert_true(g_hash_table_contains(after, k)); /* none went */
	g_assert_cmpuint(came, >, 0);
	g_assert_cmpuint(sa_stats(sa)->reports_sent, ==, 0);
	sa_publish(sa, &in); /* the same again */
	g_assert_cmpuint(sa_stats(sa)->reports_sent, ==, 0);
	sa_inputs_set_routes(&in, r2, NULL);
	sa_publish(sa, &in);
	g_assert_cmpuint(sa_stats(sa)->reports_sent, ==, came);
	sa_publish(sa, &in); /* the same snapshot twice: no trap */
	in.act_count++, in.sm_key = 7; /* only this SM's state: no trap either */
	sa_publish(sa, &in);
	g_assert_cmpuint(sa_stats(sa)->reports_sent, ==, came);
	g_hash_table_destroy(before);
	g_hash_table_destroy(after);
	sa_free(sa);
	sa_inputs_clear(&in);
	routing_result_unref(r1);
	routing_result_unref(r2);
	fabric_unref(f1);
	fabric_unref(f2);
}

/* Through the agent: a snapshot that is not master makes the SA silent (counted), the next
 * one that is master makes it answer again. Before any generation an MCMemberRecord request is
 * refused REQ_INVALID (no requester is known), a GetTable too, and a GetMulti is
 * UNSUP_METHOD_ATTR, as for any attribute but MultiPathRecord. */
static void test_master_and_no_generation(void)
{
	struct fsma_bed b;
	struct fabric *shape = fx_line(2, 2, 0);
	fsma_bed_init(&b, shape, fx_ca_port(&shape->pub, 0, 1), 20);
	fsma_bed_discover(&b);
	struct dispatch *d = dispatch_new(b.t);
	struct sa *sa = sa_new(d);
	struct sa_inputs in;
	sa_inputs_init(&in);
	in.master = 1;
	sa_publish(sa, &in);
	uint16_t lid = lid_of(b.f, 1);
	uint8_t mad[256] = { 1, IB_SA_CLASS, 2, SA_GETTABLE };
	mad_set_field(mad, 0, IB_MAD_ATTRID_F, MCMR_ATTR);
	uint32_t before = fsma_nresponses(b.fk);
	fsma_inject_mad_from(b.fk, mad, lid, 1);
	transport_poll(b.t, 200, 1);
	g_assert_cmpuint(fsma_nresponses(b.fk), ==, before + 1);
	g_assert_cmphex(mad_get_field((void *)fsma_response(b.fk, before), 0, IB_MAD_STATUS_F), ==, SA_ERR_REQ_INVALID);
	g_assert_cmphex(ask(sa, lid, 0, SA_GET, MCMR_ATTR, 0, NULL, 0, NULL), ==, SA_ERR_REQ_INVALID);
	g_assert_cmphex(ask(sa, lid, 0, SA_DELETE, MCMR_ATTR, 0, NULL, 0, NULL), ==, SA_ERR_REQ_INVALID);
	g_assert_cmphex(ask(sa, lid, 0, SA_GETMULTI, MCMR_ATTR, 0, NULL, 0, NULL), ==, SA_UNSUP_METHOD_ATTR);
	/* a generation, not master: silence */
	sa_inputs_set_routes(&in, b.r, NULL);
	in.master = 0;
	sa_publish(sa, &in);
	mad[3] = SA_GET;
	mad_set_field(mad, 0, IB_MAD_ATTRID_F, 0x0001); /* ClassPortInfo */
	before = fsma_nresponses(b.fk);
	fsma_inject_mad_from(b.fk, mad, lid, 1);
	transport_poll(b.t, 200, 1);
	g_assert_cmpuint(fsma_nresponses(b.fk), ==, before);
	g_assert_cmpuint(sa_stats(sa)->not_master, ==, 1);
	/* master again: answered */
	in.master = 1;
	sa_publish(sa, &in);
	fsma_inject_mad_from(b.fk, mad, lid, 1);
	transport_poll(b.t, 200, 1);
	g_assert_cmpuint(fsma_nresponses(b.fk), ==, before + 1);
	g_assert_cmphex(mad_get_field((void *)fsma_response(b.fk, before), 0, IB_MAD_STATUS_F), ==, 0);
	g_assert_cmpuint(sa_stats(sa)->not_master, ==, 1);
	sa_free(sa);
	sa_inputs_clear(&in);
	dispatch_free(d);
	fsma_bed_clear(&b);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	log_set_quiet(!g_getenv("IBSM_TEST_LOG"));
	g_test_add_func("/sa_handover/qos_policy", test_qos_policy);
	g_test_add_func("/sa_handover/copy", test_copy);
	g_test_add_func("/sa_handover/generation_traps", test_generation_traps);
	g_test_add_func("/sa_handover/master_and_no_generation", test_master_and_no_generation);
	return g_test_run();
}
