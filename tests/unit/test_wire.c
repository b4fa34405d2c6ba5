/* test_wire.c - what real switches and HCAs need beyond what ibsim honours (issue 30, item 8),
 * against the fake fabric of SMAs: the PortInfo fields OpenSM 3.3.23 writes (LocalPhyErrors and
 * OverrunErrors thresholds, LinkSpeedEnabled, LinkWidthEnabled on CA ports, MasterSMSL,
 * leaf_vl_stall_count), a takeover of a fabric another SM left ACTIVE with other OperVLs,
 * HOQLife and VLStallCount (switch ports written again, CA links bounced), and
 * SwitchInfo:MulticastFDBTop (use_mfttop). Judged from the requests the fake received and
 * what it holds afterwards. */
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric_fixture.h"
#include "fake_sma.h"
#include "policy/partitions.h"
#include "program/mft.h"

#define TIMEOUT_MS 20
#define CAP_MCAST_FDB_TOP 0x40000000u

static uint32_t sm_port_of(const struct fabric *shape)
{
	return fx_ca_port(&shape->pub, 0, 1);
}

static int shape_is_switch(const struct fsma_bed *b, uint32_t port)
{
	return b->shape->nodes[b->shape->ports[port].node].type == IBSM_SWITCH;
}

static uint32_t pi_field(const struct fsma_rec *r, enum MAD_FIELDS f)
{
	return mad_get_field((void *)r->data, 0, f);
}

/* Every linked port of the fake ACTIVE. */
static void assert_all_active(const struct fsma_bed *b)
{
	for (uint32_t p = 0; p < b->shape->pub.n_ports; p++)
		if (b->shape->ports[p].num && b->shape->ports[p].peer != IBSM_NONE)
			g_assert_cmpuint(fsma_port_state(b->fk, p), ==, IBSM_STATE_ACTIVE);
}

/* A fresh fabric: every PortInfo Set of a linked port carries the thresholds and the forced
 * speed; CA ports the forced width and MasterSMSL; switch ports toward CAs the leaf stall count. */
static void test_fresh_fields(void)
{
	struct fsma_bed b;
	struct program_report rep;
	struct fabric *shape = fx_line(2, 2, 0);
	fsma_bed_init(&b, shape, sm_port_of(shape), TIMEOUT_MS);
	b.o.local_phy_errors_threshold = 9;
	b.o.overrun_errors_threshold = 6;
	b.o.force_link_speed = 5;   /* not 15: written whatever the port enables */
	b.o.force_link_width = 3;
	b.o.sm_sl = 3;
	b.o.leaf_vl_stall_count = 5;
	b.o.vl_stall_count = 6;
	fsma_bed_discover(&b);
	g_assert_cmpint(fsma_bed_program(&b, NULL, 1, &rep), ==, 0);
	assert_all_active(&b);
	unsigned ca_sets = 0, sw_sets = 0, leaf = 0, trunk = 0;
	for (uint32_t i = 0; i < fsma_nrec(b.fk); i++) {
		const struct fsma_rec *r = fsma_rec(b.fk, i);
		if (r->method != IB_MAD_METHOD_SET || r->attr != IB_ATTR_PORT_INFO || r->port == FSMA_ANY)
			continue;
		const struct ibsm_port *p = &b.shape->ports[r->port];
		if (pi_field(r, IB_PORT_STATE_F))
			continue; /* a state step: a copy of what the port holds */
		if (!shape_is_switch(&b, r->port)) {
			ca_sets++;
			g_assert_cmpuint(pi_field(r, IB_PORT_LOCAL_PHYS_ERR_F), ==, 9);
			g_assert_cmpuint(pi_field(r, IB_PORT_OVERRUN_ERR_F), ==, 6);
			g_assert_cmpuint(pi_field(r, IB_PORT_LINK_SPEED_ENABLED_F), ==, 5);
			g_assert_cmpuint(pi_field(r, IB_PORT_LINK_WIDTH_ENABLED_F), ==, 3);
			g_assert_cmpuint(pi_field(r, IB_PORT_SMSL_F), ==, 3);
			g_assert_cmphex(r->mod & 0x80000000u, ==, 0); /* no extended speeds here */
		} else if (p->num) {
			sw_sets++;
			g_assert_cmpuint(pi_field(r, IB_PORT_LOCAL_PHYS_ERR_F), ==, 9);
			g_assert_cmpuint(pi_field(r, IB_PORT_OVERRUN_ERR_F), ==, 6);
			g_assert_cmpuint(pi_field(r, IB_PORT_LINK_SPEED_ENABLED_F), ==, 5);
			g_assert_cmpuint(pi_field(r, IB_PORT_LINK_WIDTH_ENABLED_F), ==, 3); /* not 255: every port */
			int to_ca = !shape_is_switch(&b, p->peer);
			leaf += to_ca;
			trunk += !to_ca;
			g_assert_cmpuint(pi_field(r, IB_PORT_VL_STALL_COUNT_F), ==, to_ca ? 5 : 6);
		} else {
			g_assert_cmpuint(pi_field(r, IB_PORT_SMSL_F), ==, 3); /* switch port 0 */
		}
	}
	g_assert_cmpuint(ca_sets, ==, 4);
	g_assert_cmpuint(leaf, ==, 4);
	g_assert_cmpuint(trunk, ==, 2);
	g_assert_cmpuint(sw_sets, ==, 6);
	/* a second pass on the unchanged fabric writes no PortInfo (the thresholds ride along) */
	uint32_t from = fsma_nrec(b.fk);
	fsma_bed_discover(&b);
	g_assert_cmpint(fsma_bed_program(&b, NULL, 0, &rep), ==, 0);
	g_assert_cmpuint(fsma_count(b.fk, from, IB_MAD_METHOD_SET, IB_ATTR_PORT_INFO, FSMA_ANY), ==, 0);
	fsma_bed_clear(&b);
}

/* force_link_speed 15 (the default) where the port already enables what it supports, and 0:
 * LinkSpeedEnabled is left as it is (0 in the Set: no change). */
static void test_speed_left_alone(void)
{
	for (int force = 0; force <= 15; force += 15) {
		struct fsma_bed b;
		struct program_report rep;
		struct fabric *shape = fx_line(1, 2, 0);
		fsma_bed_init(&b, shape, sm_port_of(shape), TIMEOUT_MS);
		b.o.force_link_speed = (uint8_t)force;
		b.o.force_link_width = 0;
		fsma_bed_discover(&b);
		g_assert_cmpint(fsma_bed_program(&b, NULL, 1, &rep), ==, 0);
		for (uint32_t i = 0; i < fsma_nrec(b.fk); i++) {
			const struct fsma_rec *r = fsma_rec(b.fk, i);
			if (r->method != IB_MAD_METHOD_SET || r->attr != IB_ATTR_PORT_INFO || r->port == FSMA_ANY)
				continue;
			uint8_t held[64];
			fsma_portinfo(b.fk, r->port, held);
			g_assert_cmpuint(pi_field(r, IB_PORT_LINK_SPEED_ENABLED_F), ==,
					 mad_get_field(held, 0, IB_PORT_LINK_SPEED_ENABLED_F));
			g_assert_cmpuint(pi_field(r, IB_PORT_LINK_WIDTH_ENABLED_F), ==,
					 mad_get_field(held, 0, IB_PORT_LINK_WIDTH_ENABLED_F));
		}
		fsma_bed_clear(&b);
	}
}

static struct part_policy *default_partition(void)
{
	const char *text = "Default=0x7fff : ALL=full ;\n";
	GError *err = NULL;
	struct part_policy *p = part_policy_parse_text(text, strlen(text), "test.conf", &err);
	g_assert_no_error(err);
	return p;
}

/* Another SM left the fabric ACTIVE with OperVLs VL0 only, its own HOQLife and VLStallCount and
 * no partition enforcement; a new master with the defaults (and a partition policy) takes
 * over: every switch port is written again and holds the new values, enforcement bits
 * included; every CA port is set DOWN with its OperVLs (IBA: they take effect in INIT), comes
 * back in INIT and is brought up by the next pass with them. */
static void test_takeover(void)
{
	struct fsma_bed b;
	struct program_report rep;
	struct fabric *shape = fx_line(2, 2, 0);
	struct part_policy *pp = default_partition();
	fsma_bed_init(&b, shape, sm_port_of(shape), TIMEOUT_MS);
	/* the other SM */
	b.o.max_op_vls = 1;
	b.o.hoq_life = 5;
	b.o.leaf_hoq_life = 4;
	b.o.vl_stall_count = 1;
	b.o.leaf_vl_stall_count = 2;
	b.o.no_part_enforce = 1;
	fsma_bed_discover(&b);
	g_assert_cmpint(fsma_bed_program(&b, pp, 1, &rep), ==, 0);
	assert_all_active(&b);
	/* the new master: what it knew is forgotten, the defaults are in force */
	programmer_forget(b.prog);
	options_free(&b.o);
	options_defaults(&b.o);
	uint32_t from = fsma_nrec(b.fk);
	fsma_bed_discover(&b);
	fsma_bed_program(&b, pp, 1, &rep); /* the bounced links are not ACTIVE yet */
	unsigned bounced = 0;
	for (uint32_t i = from; i < fsma_nrec(b.fk); i++) {
		const struct fsma_rec *r = fsma_rec(b.fk, i);
		if (r->method != IB_MAD_METHOD_SET || r->attr != IB_ATTR_PORT_INFO || r->port == FSMA_ANY ||
		    shape_is_switch(&b, r->port) || pi_field(r, IB_PORT_STATE_F) != IBSM_STATE_DOWN)
			continue;
		g_assert_cmpuint(r->state, ==, IBSM_STATE_ACTIVE);
		g_assert_cmpuint(pi_field(r, IB_PORT_OPER_VLS_F), >, 1);
		bounced++;
	}
	g_assert_cmpuint(bounced, ==, 4);
	for (uint32_t p = 0; p < shape->pub.n_ports; p++) {
		const struct ibsm_port *port = &shape->ports[p];
		if (!port->num || port->peer == IBSM_NONE || !shape_is_switch(&b, p))
			continue;
		uint8_t pi[64];
		fsma_portinfo(b.fk, p, pi);
		int to_ca = !shape_is_switch(&b, port->peer);
		g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_OPER_VLS_F), >, 1);
		g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_HOQ_LIFE_F), ==, to_ca ? 16 : 18);
		g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_VL_STALL_COUNT_F), ==, 7);
		g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_PART_EN_INB_F), ==, to_ca);
		g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_PART_EN_OUTB_F), ==, to_ca);
	}
	/* the next sweep brings the bounced links up with the new OperVLs; then nothing moves */
	fsma_bed_discover(&b);
	g_assert_cmpint(fsma_bed_program(&b, pp, 0, &rep), ==, 0);
	assert_all_active(&b);
	for (uint32_t p = 0; p < shape->pub.n_ports; p++) {
		if (!shape->ports[p].num || shape->ports[p].peer == IBSM_NONE)
			continue;
		uint8_t pi[64];
		fsma_portinfo(b.fk, p, pi);
		g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_OPER_VLS_F), >, 1);
	}
	from = fsma_nrec(b.fk);
	fsma_bed_discover(&b);
	g_assert_cmpint(fsma_bed_program(&b, pp, 0, &rep), ==, 0);
	g_assert_cmpuint(fsma_count(b.fk, from, IB_MAD_METHOD_SET, IB_ATTR_PORT_INFO, FSMA_ANY), ==, 0);
	part_policy_free(pp);
	fsma_bed_clear(&b);
}

/* use_mfttop: the port masks of one MLID on switch `only` (port 1), none elsewhere */
struct want_one {
	uint32_t sw;
	uint16_t mlid;
	uint64_t mask[4];
};

static const uint64_t *want_one(void *ctx, uint32_t sw, uint16_t mlid)
{
	struct want_one *w = ctx;
	return w->mlid && sw == w->sw && mlid == w->mlid ? w->mask : NULL;
}

/* The MulticastFDBTop Sets to the node with GUID guid since record `from`: how many, and the
 * last one's top in *top. */
static unsigned top_sets(const struct fsma_bed *b, uint32_t from, uint64_t guid, uint16_t *top)
{
	unsigned n = 0;
	for (uint32_t i = from; i < fsma_nrec(b->fk); i++) {
		const struct fsma_rec *r = fsma_rec(b->fk, i);
		if (r->method != IB_MAD_METHOD_SET || r->attr != IB_ATTR_SWITCH_INFO || r->node == FSMA_ANY ||
		    b->shape->nodes[r->node].guid != guid)
			continue;
		n++;
		*top = (uint16_t)mad_get_field((void *)r->data, 0, IB_SW_MCAST_FDB_TOP_F);
		/* the rest of SwitchInfo as the switch holds it: LinearFDBTop kept */
		g_assert_cmpuint(mad_get_field((void *)r->data, 0, IB_SW_LINEAR_FDB_TOP_F), ==,
				 mad_get_field((void *)fsma_switchinfo(b->fk, r->node), 0, IB_SW_LINEAR_FDB_TOP_F));
	}
	return n;
}

static void test_mfttop(void)
{
	struct fsma_bed b;
	struct program_report rep;
	struct fabric *shape = fx_line(2, 1, 0);
	fsma_bed_init(&b, shape, sm_port_of(shape), TIMEOUT_MS);
	fsma_bed_discover(&b);
	g_assert_cmpint(fsma_bed_program(&b, NULL, 1, &rep), ==, 0);
	/* switch 0 says it honours MulticastFDBTop (the fake's switches do not: set in our view) */
	uint32_t n0 = b.f->switches[0].node, n1 = b.f->switches[1].node;
	uint8_t *cap0 = b.f->px[b.f->nodes[n0].port0].portinfo;
	mad_set_field(cap0, 0, IB_PORT_CAPMASK_F, mad_get_field(cap0, 0, IB_PORT_CAPMASK_F) | CAP_MCAST_FDB_TOP);
	mad_set_field(b.f->nx[n0].switchinfo, 0, IB_SW_MCAST_FDB_CAP_F, 1024); /* the fake has none */
	mad_set_field(b.f->nx[n1].switchinfo, 0, IB_SW_MCAST_FDB_CAP_F, 1024);
	uint64_t g0 = b.f->nodes[n0].guid, g1 = b.f->nodes[n1].guid;
	struct mft_memory *m = programmer_mft(b.prog);
	struct mft_stats st;
	struct want_one w = { .sw = 0, .mlid = 0xC021, .mask = { 0x2 } }; /* block 1 */
	uint32_t from = fsma_nrec(b.fk);
	uint16_t top = 0;
	mft_program(m, b.f, 0xC021, want_one, &w, &st);
	transport_drain(b.t, &b.stop);
	g_assert_cmpuint(top_sets(&b, from, g0, &top), ==, 1);
	g_assert_cmphex(top, ==, 0xC03F);
	g_assert_cmpuint(top_sets(&b, from, g1, &top), ==, 0); /* no capability: never written */
	g_assert_cmpuint(st.tops_written, ==, 1);
	/* unchanged: nothing again */
	from = fsma_nrec(b.fk);
	mft_program(m, b.f, 0xC021, want_one, &w, &st);
	transport_drain(b.t, &b.stop);
	g_assert_cmpuint(top_sets(&b, from, g0, &top), ==, 0);
	/* the group moves to block 0: the top comes down, block 1 is cleared */
	w.mlid = 0xC001;
	from = fsma_nrec(b.fk);
	mft_program(m, b.f, 0xC001, want_one, &w, &st);
	transport_drain(b.t, &b.stop);
	g_assert_cmpuint(top_sets(&b, from, g0, &top), ==, 1);
	g_assert_cmphex(top, ==, 0xC01F);
	/* no group left: 0xBFFF, and the block it held cleared */
	w.mlid = 0;
	from = fsma_nrec(b.fk);
	mft_program(m, b.f, 0, want_one, &w, &st);
	transport_drain(b.t, &b.stop);
	g_assert_cmpuint(top_sets(&b, from, g0, &top), ==, 1);
	g_assert_cmphex(top, ==, 0xBFFF);
	uint32_t cleared = 0;
	for (uint32_t i = from; i < fsma_nrec(b.fk); i++) {
		const struct fsma_rec *r = fsma_rec(b.fk, i);
		if (r->method == IB_MAD_METHOD_SET && r->attr == IB_ATTR_MULTICASTFORWTBL &&
		    b.shape->nodes[r->node].guid == g0 && (r->mod & 0x1ff) == 0) {
			static const uint8_t zero[64];
			g_assert_cmpmem(r->data, 64, zero, 64);
			cleared++;
		}
	}
	g_assert_cmpuint(cleared, >=, 1);
	/* use_mfttop false: the top is not written, whatever the blocks */
	b.o.use_mfttop = 0;
	g_assert_cmpint(fsma_bed_program(&b, NULL, 0, &rep), ==, 0);
	w.mlid = 0xC001;
	from = fsma_nrec(b.fk);
	mft_program(m, b.f, 0xC001, want_one, &w, &st);
	transport_drain(b.t, &b.stop);
	g_assert_cmpuint(top_sets(&b, from, g0, &top), ==, 0);
	g_assert_cmpuint(fsma_count(b.fk, from, IB_MAD_METHOD_SET, IB_ATTR_MULTICASTFORWTBL, FSMA_ANY), >, 0);
	fsma_bed_clear(&b);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	log_set_quiet(!g_getenv("IBSM_TEST_LOG")); /* judged from the fake, not from the log */
	g_test_add_func("/wire/fresh-fields", test_fresh_fields);
	g_test_add_func("/wire/speed-left-alone", test_speed_left_alone);
	g_test_add_func("/wire/takeover", test_takeover);
	g_test_add_func("/wire/mfttop", test_mfttop);
	return g_test_run();
}
