/* SPDX-License-Identifier: BSD-2-Clause */
/* test_sa_index.c - the SA's per-generation indexes (sa/index.h) answer NodeRecord (by LID,
 * NodeGUID, PortGUID), PortInfoRecord (by EndportLID) and LinkRecord (by FromLID, ToLID)
 * queries exactly as the full scans do, byte for byte and in the same order: on several
 * fabrics with LMC 0 and 2, ports without a LID, a LID held twice, a port not there, ports
 * without PortInfo, switches' port 0 and external ports, and requesters in different
 * partitions; for every LID and GUID of the fabric and some that are not. Also times NodeRecord
 * Gets by LID with and without the index (a note, not asserted). */
#include <string.h>
#include <infiniband/mad.h>
#include "fabric_fixture.h"
#include "routing/result.h"
#include "sa/agent.h"
#include "sa/handlers.h"
#include "sa/index.h"
#include "sa/pkeys.h"
#include "sa/records.h"
#include "sa/wire.h"

static const uint16_t key_a[] = { 0x8001 }, key_b[] = { 0x8002 }, key_a_lim[] = { 0x0001 },
		      key_sw_even[] = { 0xffff, 0x8001 }, key_sw_odd[] = { 0x8002 };

/* P_Key tables: CA ports by port id in A, B or A as limited members; switch port 0 of even
 * switches in the default partition and A, of odd ones in B; external switch ports in A or
 * not known. */
static const uint16_t *table(const void *ctx, const struct fabric *f, uint32_t port, uint32_t *cap)
{
	(void)ctx;
	const struct ibsm_port *p = &f->ports[port];
	const struct ibsm_node *n = &f->nodes[p->node];
	*cap = 1;
	if (n->type == IBSM_SWITCH) {
		if (p->num == 0) {
			if (n->sw % 2) {
				return key_sw_odd;
			}
			*cap = 2;
			return key_sw_even;
		}
		if (port % 2)
			return key_a;
		*cap = 0;
		return NULL;
	}
	switch (port % 3) {
	case 0:
		return key_a;
	case 1:
		return key_b;
	default:
		return key_a_lim;
	}
}

/* Gives the generation what the fixture leaves out and the odd cases: PortInfo on most ports
 * (with an M_Key), a CA port without a LID, two CA ports on one LID, a CA port not there, the
 * last switch without a LID. */
static void decorate(struct fabric *f)
{
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		f->px[p].have_portinfo = p % 7 != 3;
		for (unsigned i = 0; i < 64; i++)
			f->px[p].portinfo[i] = (uint8_t)(p * 13 + i);
		mad_set_field64(f->px[p].portinfo, 0, IB_PORT_MKEY_F, 0x1000 + p);
	}
	uint32_t ca[4], n_ca = 0;
	for (uint32_t p = 0; p < f->pub.n_ports && n_ca < 4; p++)
		if (f->nodes[f->ports[p].node].type != IBSM_SWITCH && f->ports[p].num && f->ports[p].lid)
			ca[n_ca++] = p;
	g_assert_cmpuint(n_ca, ==, 4);
	f->ports[ca[0]].lid = 0;
	f->ports[ca[2]].lid = f->ports[ca[1]].lid;
	f->ports[ca[3]].flags &= (uint16_t)~IBSM_PORT_PRESENT;
	const struct ibsm_node *last = &f->nodes[f->switches[f->pub.n_switches - 1].node];
	f->ports[last->port0].lid = 0;
}

struct bed {
	struct fabric *f;
	struct sa_index *ix;
	struct sa_pkeys *pk;
	unsigned compared, hits;
};

/* The answer with the index and without: the same bytes. */
static void compare(struct bed *t, const struct sa_kind *k, struct sa_view *v, int trusted,
		    const uint8_t *q, uint64_t mask)
{
	GByteArray *scan = g_byte_array_new(), *ixed = g_byte_array_new();
	v->ix = NULL;
	sa_kind_answer(k, v, trusted, q, k->layout.size, mask, scan);
	v->ix = t->ix;
	sa_kind_answer(k, v, trusted, q, k->layout.size, mask, ixed);
	if (scan->len != ixed->len || (scan->len && memcmp(scan->data, ixed->data, scan->len)))
		g_test_message("%s mask 0x%" G_GINT64_MODIFIER "x requester %u trusted %d: scan %u "
			       "bytes, index %u", k->layout.name, mask, v->requester, trusted, scan->len,
			       ixed->len);
	g_assert_cmpmem(scan->data, scan->len, ixed->data, ixed->len);
	t->compared++;
	t->hits += scan->len / (guint)k->layout.size;
	g_byte_array_free(scan, TRUE);
	g_byte_array_free(ixed, TRUE);
}

/* Query rec with component c set to value (c is at most 64 bits wide, whole bytes). */
static void set_component(const struct sa_kind *k, uint8_t *rec, uint8_t c, uint64_t value)
{
	unsigned off = k->layout.offset[c], w = k->layout.width[c];
	g_assert_cmpuint(off % 8, ==, 0);
	g_assert_cmpuint(w % 8, ==, 0);
	for (unsigned b = 0; b < w / 8; b++)
		rec[off / 8 + b] = (uint8_t)(value >> (w - 8 * (b + 1)));
}

struct kind_case {
	uint16_t attr;
	uint8_t keys[3];           /* the indexed components */
	unsigned n_keys;
	uint64_t masks[6];         /* masks tried with every record as the query */
	unsigned n_masks;
};

static const struct kind_case cases[] = {
	/* NodeRecord: LID, NodeGUID, PortGUID; with NodeType, LocalPortNum */
	{ 0x11, { 0, 7, 8 }, 3, { 1u << 0, 1u << 7, 1u << 8, 1u << 0 | 1u << 7 | 1u << 8,
				  1u << 0 | 1u << 4, 1u << 7 | 1u << 12 }, 6 },
	/* PortInfoRecord: EndportLID; with PortNum, with M_Key */
	{ 0x12, { 0 }, 1, { 1u << 0, 1u << 0 | 1u << 1, 1u << 0 | 1u << 3 }, 3 },
	/* LinkRecord: FromLID, ToLID; with FromPort, ToPort, both */
	{ 0x20, { 0, 3 }, 2, { 1u << 0, 1u << 3, 1u << 0 | 1u << 3, 1u << 0 | 1u << 1,
			       1u << 3 | 1u << 2 }, 5 },
};

/* Every case of kind c seen by the requester of v. */
static void compare_kind(struct bed *t, const struct kind_case *c, struct sa_view *v, int trusted)
{
	const struct sa_kind *k = sa_kind_of(c->attr);
	g_assert_nonnull(k);
	g_assert_nonnull(k->build_indexed);
	size_t size = k->layout.size;
	uint8_t q[SA_MAD_DATA] = { 0 };
	/* every record of the generation (as the SA's own view sees it), as the query */
	struct sa_view all = *v;
	all.pk = NULL;
	all.ix = NULL;
	GByteArray *recs = g_byte_array_new();
	sa_kind_build(k, &all, 1, recs);
	g_assert_cmpuint(recs->len, >, 0);
	for (size_t off = 0; off + size <= recs->len; off += size) {
		memcpy(q, recs->data + off, size);
		for (unsigned m = 0; m < c->n_masks; m++)
			compare(t, k, v, trusted, q, c->masks[m]);
	}
	g_byte_array_free(recs, TRUE);
	/* every LID there is, past the top, and some never given; every GUID, its neighbours */
	const struct fabric *f = t->f;
	for (unsigned i = 0; i < c->n_keys; i++) {
		uint8_t comp = c->keys[i];
		memset(q, 0, sizeof(q));
		if (k->layout.width[comp] == 16) {
			for (uint32_t lid = 0; lid <= f->pub.max_lid + 4u; lid++) {
				set_component(k, q, comp, lid);
				compare(t, k, v, trusted, q, 1ull << comp);
			}
			static const uint16_t odd[] = { 0xbfff, 0xc000, 0xfffe, 0xffff };
			for (unsigned j = 0; j < G_N_ELEMENTS(odd); j++) {
				set_component(k, q, comp, odd[j]);
				compare(t, k, v, trusted, q, 1ull << comp);
			}
			continue;
		}
		for (uint32_t p = 0; p < f->pub.n_ports; p++) {
			uint64_t g[] = { f->ports[p].guid, f->nodes[f->ports[p].node].guid };
			for (unsigned j = 0; j < 2; j++)
				for (int d = -1; d <= 1; d++) {
					set_component(k, q, comp, g[j] + (uint64_t)(int64_t)d);
					compare(t, k, v, trusted, q, 1ull << comp);
				}
		}
		set_component(k, q, comp, 0);
		compare(t, k, v, trusted, q, 1ull << comp);
		set_component(k, q, comp, ~0ull);
		compare(t, k, v, trusted, q, 1ull << comp);
	}
}

/* The index is what build_indexed reads: a key bit narrows the records built, no key bit
 * leaves them to build. */
static void check_narrows(struct bed *t)
{
	const struct sa_kind *k = sa_kind_of(0x11);
	struct sa_view v = { .f = t->f, .requester = IBSM_NONE, .ix = t->ix };
	uint8_t q[SA_MAD_DATA] = { 0 };
	GByteArray *out = g_byte_array_new();
	g_assert_cmpint(k->build_indexed(&v, 0, 1u << 4, q, out), ==, 0);
	g_assert_cmpuint(out->len, ==, 0);
	/* the last host: decorate() left its LID alone */
	uint32_t last = fx_ca_port(&t->f->pub, t->f->pub.n_nodes - t->f->pub.n_switches - 1, 1);
	g_assert_cmpuint(t->f->ports[last].lid, !=, 0);
	set_component(k, q, 0, t->f->ports[last].lid);
	g_assert_cmpint(k->build_indexed(&v, 0, 1u << 0, q, out), ==, 1);
	g_assert_cmpuint(out->len, ==, k->layout.size);
	g_byte_array_free(out, TRUE);
	g_assert_cmpuint(sa_index_bytes(t->ix), >, 0);
}

static void run_fabric(struct fabric *f, const char *what)
{
	g_assert_true(sa_handlers_check(NULL) == 0);
	decorate(f);
	struct bed t = { .f = f, .ix = sa_index_new(f), .pk = sa_pkeys_new(f, table, NULL) };
	check_narrows(&t);
	/* requesters: none known, CA ports of A, B and A limited, switch port 0 of an even and an
	 * odd switch, a port outside the generation */
	uint32_t req[7] = { IBSM_NONE, fx_ca_port(&f->pub, 0, 1), fx_ca_port(&f->pub, 1, 1),
			    fx_ca_port(&f->pub, 2, 1), f->nodes[f->switches[0].node].port0,
			    f->nodes[f->switches[1].node].port0, IBSM_NONE };
	for (unsigned r = 0; r < G_N_ELEMENTS(req); r++) {
		struct sa_view v = { .f = f, .pk = r ? t.pk : NULL, .requester = req[r] };
		for (unsigned c = 0; c < G_N_ELEMENTS(cases); c++)
			for (int trusted = 0; trusted <= (cases[c].attr == 0x12); trusted++)
				compare_kind(&t, &cases[c], &v, trusted);
	}
	g_test_message("%s: %u queries compared, %u records answered", what, t.compared, t.hits);
	g_assert_cmpuint(t.hits, >, t.compared / 4); /* the answers are not mostly empty */
	sa_pkeys_unref(t.pk);
	sa_index_free(t.ix);
	fabric_unref(f);
}

static void test_line(void)
{
	for (uint8_t lmc = 0; lmc <= 2; lmc += 2)
		run_fabric(fx_line(3, 3, lmc), lmc ? "line lmc 2" : "line lmc 0");
}

static void test_ring(void)
{
	for (uint8_t lmc = 0; lmc <= 2; lmc += 2)
		run_fabric(fx_ring(4, 2, lmc), lmc ? "ring lmc 2" : "ring lmc 0");
}

static void test_torus(void)
{
	for (uint8_t lmc = 0; lmc <= 2; lmc += 2)
		run_fabric(fx_torus2d(3, 3, 2, lmc), lmc ? "torus lmc 2" : "torus lmc 0");
}

static void test_fat_tree(void)
{
	for (uint8_t lmc = 0; lmc <= 2; lmc += 2)
		run_fabric(fx_kary_ntree(4, 2, lmc), lmc ? "4-ary 2-tree lmc 2" : "4-ary 2-tree lmc 0");
}

/* Through the SA itself (sa_publish builds the index, sa_compute answers from it): NodeRecord
 * Gets by LID of every CA port on a 4096-host fat tree give each port's record; then 10000 of
 * them timed through the index against the scan (a note). */
static void test_sa_path_timing(void)
{
	struct fabric *f = fx_kary_ntree(16, 3, 0);
	struct sa *sa = sa_new(NULL);
	g_assert_nonnull(sa);
	struct sa_inputs in;
	sa_inputs_init(&in);
	struct routing_result *r = routing_result_new(f);
	sa_inputs_set_routes(&in, r, NULL);
	routing_result_unref(r);
	in.master = 1;
	sa_publish(sa, &in);
	const struct sa_kind *k = sa_kind_of(0x11);
	uint8_t q[SA_MAD_DATA] = { 0 };
	GByteArray *out = g_byte_array_new();
	uint32_t n_hosts = 4096;
	struct sa_request rq = { .method = SA_GET, .attr = 0x11, .comp_mask = 1, .record = q,
				 .record_len = sizeof(q) };
	for (uint32_t h = 0; h < n_hosts; h++) {
		uint32_t p = fx_ca_port(&f->pub, h, 1);
		set_component(k, q, 0, f->ports[p].lid);
		struct sa_answer a = { .recs = out };
		sa_compute(sa, &rq, 1.0, &a);
		g_assert_cmphex(a.status, ==, 0);
		g_assert_cmpuint(out->len, ==, k->layout.size);
		g_assert_cmphex(mad_get_field64(out->data + 4, 0, IB_NODE_PORT_GUID_F), ==, f->ports[p].guid);
	}
	/* the time of 10000 Gets by LID: through the SA (indexed), and by the scan (timed over
	 * fewer, scaled) */
	const unsigned n_ix = 10000, n_scan = 200;
	gint64 t0 = g_get_monotonic_time();
	for (unsigned i = 0; i < n_ix; i++) {
		set_component(k, q, 0, f->ports[fx_ca_port(&f->pub, i % n_hosts, 1)].lid);
		struct sa_answer a = { .recs = out };
		sa_compute(sa, &rq, 1.0, &a);
	}
	gint64 t1 = g_get_monotonic_time();
	struct sa_view v = { .f = f, .requester = IBSM_NONE };
	for (unsigned i = 0; i < n_scan; i++) {
		set_component(k, q, 0, f->ports[fx_ca_port(&f->pub, i % n_hosts, 1)].lid);
		g_byte_array_set_size(out, 0);
		sa_kind_answer(k, &v, 0, q, sizeof(q), 1, out);
		g_assert_cmpuint(out->len, ==, k->layout.size);
	}
	gint64 t2 = g_get_monotonic_time();
	gint64 t3 = g_get_monotonic_time();
	struct sa_index *ix = sa_index_new(f); /* what sa_publish built, to weigh it */
	gint64 t4 = g_get_monotonic_time();
	g_test_message("note: 10000 NodeRecord Gets by LID on %u nodes / %u ports: indexed %.1f ms, "
		       "full scan %.1f ms (%u timed, scaled); index %zu bytes, built in %.1f ms",
		       f->pub.n_nodes, f->pub.n_ports, (double)(t1 - t0) / 1000.0,
		       (double)(t2 - t1) / 1000.0 * n_ix / n_scan, n_scan,
		       sa_index_bytes(ix), (double)(t4 - t3) / 1000.0);
	sa_index_free(ix);
	g_byte_array_free(out, TRUE);
	sa_free(sa);
	sa_inputs_clear(&in);
	fabric_unref(f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/sa_index/line", test_line);
	g_test_add_func("/sa_index/ring", test_ring);
	g_test_add_func("/sa_index/torus", test_torus);
	g_test_add_func("/sa_index/fat_tree", test_fat_tree);
	g_test_add_func("/sa_index/sa_path_timing", test_sa_path_timing);
	return g_test_run();
}
