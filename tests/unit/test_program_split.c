/* test_program_split.c - the programming pass in two halves (program_before_routes(), then
 * program_with_routes(): what sm/sweep.c writes while the routing thread computes, then the
 * rest) sends the fabric the same requests, in the same order, as program_fabric() in one go,
 * and leaves it the same; a pass whose routes never come (program_pass_free()) leaves the
 * ports in INIT with their LIDs and P_Keys and no LFT entry. Judged from what two fake fabrics
 * of the same shape received and hold. */
#include <string.h>
#include <infiniband/mad.h>
#include "fabric_fixture.h"
#include "fake_sma.h"

#define TIMEOUT_MS 20

static const char POLICY[] = "Default=0x7fff : ALL, SELF=full ;\nBlue=0x0123 : ALL_CAS=full ;\n";

static struct part_policy *policy(void)
{
	GError *err = NULL;
	struct part_policy *p = part_policy_parse_text(POLICY, strlen(POLICY), "split.conf", &err);
	g_assert_no_error(err);
	g_assert_nonnull(p);
	return p;
}

static void bed(struct fsma_bed *b, struct fabric *shape)
{
	fsma_bed_init(b, shape, fx_ca_port(&shape->pub, 0, 1), TIMEOUT_MS);
	b->lmc = 1;
	fsma_bed_discover(b);
}

static int split_program(struct fsma_bed *b, const struct part_policy *pp, int first,
			 struct program_report *rep)
{
	phase_log_reset(&b->pl);
	struct program_pass *pass = program_pass_new(b->prog, b->f, &b->o, pp, &b->pl, first);
	program_before_routes(pass);
	return program_with_routes(pass, b->r, rep);
}

/* The requests of a and b from their records from_a / from_b on are the same, one by one. */
static void assert_same_requests(const struct fsma *a, uint32_t from_a, const struct fsma *b,
				 uint32_t from_b)
{
	g_assert_cmpuint(fsma_nrec(a) - from_a, ==, fsma_nrec(b) - from_b);
	for (uint32_t i = 0; from_a + i < fsma_nrec(a); i++) {
		const struct fsma_rec *x = fsma_rec(a, from_a + i), *y = fsma_rec(b, from_b + i);
		g_assert_cmphex(x->method, ==, y->method);
		g_assert_cmphex(x->attr, ==, y->attr);
		g_assert_cmphex(x->mod, ==, y->mod);
		g_assert_cmpuint(x->node, ==, y->node);
		g_assert_cmpuint(x->port, ==, y->port);
		if (x->method == IB_MAD_METHOD_SET)
			g_assert_cmpmem(x->data, sizeof(x->data), y->data, sizeof(y->data));
	}
}

static void test_same_requests(void)
{
	struct part_policy *pp = policy();
	struct fsma_bed one, two;
	bed(&one, fx_kary_ntree(2, 3, 0));
	bed(&two, fx_kary_ntree(2, 3, 0));
	uint32_t from1 = fsma_nrec(one.fk), from2 = fsma_nrec(two.fk);
	struct program_report r1, r2;
	g_assert_cmpint(fsma_bed_program(&one, pp, 1, &r1), ==, 0);
	g_assert_cmpint(split_program(&two, pp, 1, &r2), ==, 0);
	g_assert_cmpuint(fsma_count(two.fk, from2, IB_MAD_METHOD_SET, IB_ATTR_LINEARFORWTBL, FSMA_ANY), >, 0);
	g_assert_cmpuint(fsma_count(two.fk, from2, IB_MAD_METHOD_SET, IB_ATTR_PKEY_TBL, FSMA_ANY), >, 0);
	assert_same_requests(one.fk, from1, two.fk, from2);
	g_assert_cmpuint(r1.writes, ==, r2.writes);
	/* every linked port ACTIVE, the same PortInfo and LFTs on both */
	const struct fabric *f = two.f;
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		uint8_t a[64], b[64];
		fsma_portinfo(one.fk, p, a);
		fsma_portinfo(two.fk, p, b);
		g_assert_cmpmem(a, sizeof(a), b, sizeof(b));
		if (f->ports[p].peer != IBSM_NONE)
			g_assert_cmpuint(fsma_port_state(two.fk, p), ==, IBSM_STATE_ACTIVE);
	}
	for (uint32_t s = 0; s < f->pub.n_switches; s++)
		for (uint32_t lid = 0; lid < two.r->stride; lid++)
			g_assert_cmpuint(fsma_lft_entry(two.fk, f->switches[s].node, lid), ==,
					 two.r->lft[(size_t)s * two.r->stride + lid]);
	/* a second sweep over the unchanged fabric: no Set from either */
	fsma_bed_discover(&one);
	fsma_bed_discover(&two);
	from1 = fsma_nrec(one.fk);
	from2 = fsma_nrec(two.fk);
	g_assert_cmpint(fsma_bed_program(&one, pp, 0, &r1), ==, 0);
	g_assert_cmpint(split_program(&two, pp, 0, &r2), ==, 0);
	g_assert_cmpuint(fsma_count(two.fk, from2, IB_MAD_METHOD_SET, FSMA_ANY, FSMA_ANY), ==, 0);
	assert_same_requests(one.fk, from1, two.fk, from2);
	fsma_bed_clear(&one);
	fsma_bed_clear(&two);
	part_policy_free(pp);
}

/* Routes that never come: the first half's writes stay, nothing that needs routes is sent. */
static void test_no_routes(void)
{
	struct part_policy *pp = policy();
	struct fsma_bed b;
	bed(&b, fx_kary_ntree(2, 3, 0));
	uint32_t from = fsma_nrec(b.fk);
	phase_log_reset(&b.pl);
	struct program_pass *pass = program_pass_new(b.prog, b.f, &b.o, pp, &b.pl, 1);
	program_before_routes(pass);
	program_pass_free(pass);
	g_assert_cmpuint(fsma_count(b.fk, from, IB_MAD_METHOD_SET, IB_ATTR_PKEY_TBL, FSMA_ANY), >, 0);
	g_assert_cmpuint(fsma_count(b.fk, from, IB_MAD_METHOD_SET, IB_ATTR_LINEARFORWTBL, FSMA_ANY), ==, 0);
	const struct fabric *f = b.f;
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		if (f->ports[p].peer == IBSM_NONE)
			continue;
		g_assert_cmpuint(fsma_port_state(b.fk, p), ==, IBSM_STATE_INIT);
		if (fabric_is_end_port(f, p) && f->nodes[f->ports[p].node].type != IBSM_SWITCH) {
			uint8_t pi[64];
			fsma_portinfo(b.fk, p, pi);
			g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_LID_F), ==, f->ports[p].lid);
			g_assert_cmpuint(f->ports[p].lid, !=, 0);
		}
	}
	for (uint32_t s = 0; s < f->pub.n_switches; s++)
		for (uint32_t lid = 1; lid <= f->pub.max_lid; lid++)
			g_assert_cmpuint(fsma_lft_entry(b.fk, f->switches[s].node, lid), ==, IBSM_NO_PORT);
	fsma_bed_clear(&b);
	part_policy_free(pp);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/program_split/same_requests", test_same_requests);
	g_test_add_func("/program_split/no_routes", test_no_routes);
	return g_test_run();
}
