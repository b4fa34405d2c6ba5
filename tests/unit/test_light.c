/* test_light.c - the light sweep against a fake fabric brought up by the programmer: quiet
 * fabric, no heavy sweep; a switch's PortStateChange, our port leaving ACTIVE, a switch that
 * stops answering, or a port changed by another program's PortInfo Set (disabled, another LID:
 * no PortStateChange), a heavy sweep. Also what it sends: reads only, one SwitchInfo per switch,
 * our port, and the port check's PortInfo reads, a bounded slice of them on a large fabric. */
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric_fixture.h"
#include "fake_sma.h"
#include "fabric/discovery.h"
#include "fabric/dr.h"
#include "sm/light.h"

#define TIMEOUT_MS 20

struct lbed {
	struct fsma_bed b;
	struct sm sm;
	struct light_state ls;
};

static void lbed_init(struct lbed *l)
{
	struct program_report rep;
	struct fabric *shape = fx_line(3, 2, 0);
	fsma_bed_init(&l->b, shape, fx_ca_port(&shape->pub, 0, 1), TIMEOUT_MS);
	fsma_bed_discover(&l->b);
	g_assert_cmpint(fsma_bed_program(&l->b, NULL, 1, &rep), ==, 0);
	memset(&l->sm, 0, sizeof(l->sm));
	memset(&l->ls, 0, sizeof(l->ls));
	l->sm.opt = &l->b.o;
	l->sm.t = l->b.t;
	l->sm.fabric = l->b.f;
	l->sm.state = IB_SM_MASTER;
}

static uint32_t switch_node(const struct lbed *l, uint32_t sw)
{
	return l->b.f->switches[sw].node;
}

/* The ports the port check reads: switch port 0 and every linked port but our own. */
static uint32_t watched_ports(const struct fabric *f)
{
	uint32_t n = 0;
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		const struct ibsm_port *port = &f->ports[p];
		if (p == f->pub.sm_port)
			continue;
		n += (f->nodes[port->node].type == IBSM_SWITCH && port->num == 0) || port->peer != IBSM_NONE;
	}
	return n;
}

/* PortInfo Gets from record `from` on, per port id (the fake's ids are the generation's). */
static GHashTable *ports_read(const struct fsma *fk, uint32_t from)
{
	GHashTable *h = g_hash_table_new(NULL, NULL);
	for (uint32_t i = from; i < fsma_nrec(fk); i++) {
		const struct fsma_rec *r = fsma_rec(fk, i);
		if (r->method == IB_MAD_METHOD_GET && r->attr == IB_ATTR_PORT_INFO && r->port != FSMA_ANY)
			g_hash_table_add(h, GUINT_TO_POINTER(r->port + 1));
	}
	return h;
}

static void test_quiet(void)
{
	struct lbed l;
	lbed_init(&l);
	const struct fabric *f = l.b.f;
	uint32_t mark = fsma_nrec(l.b.fk);
	g_assert_cmpint(light_sweep(&l.sm, &l.ls), ==, 0);
	/* one SwitchInfo Get per switch, one PortInfo Get of our port and one of every watched
	 * port (a small fabric: all of them each time); nothing written */
	uint32_t w = watched_ports(f);
	g_assert_cmpuint(w, <=, LIGHT_PORTS_MIN);
	g_assert_cmpuint(fsma_nrec(l.b.fk) - mark, ==, f->pub.n_switches + 1 + w);
	g_assert_cmpuint(fsma_count(l.b.fk, mark, IB_MAD_METHOD_SET, FSMA_ANY, FSMA_ANY), ==, 0);
	for (uint32_t s = 0; s < f->pub.n_switches; s++)
		g_assert_cmpuint(fsma_count(l.b.fk, mark, IB_MAD_METHOD_GET, IB_ATTR_SWITCH_INFO,
					    switch_node(&l, s)), ==, 1);
	GHashTable *read = ports_read(l.b.fk, mark);
	g_assert_cmpuint(g_hash_table_size(read), ==, w + 1);
	g_assert_true(g_hash_table_contains(read, GUINT_TO_POINTER(f->pub.sm_port + 1)));
	g_hash_table_destroy(read);
	/* and again: still quiet (reading changes nothing) */
	g_assert_cmpint(light_sweep(&l.sm, &l.ls), ==, 0);
	fsma_bed_clear(&l.b);
}

static void test_port_state_change(void)
{
	struct lbed l;
	lbed_init(&l);
	for (uint32_t s = 0; s < l.b.f->pub.n_switches; s++) {
		fsma_set_state_change(l.b.fk, switch_node(&l, s), 1);
		g_assert_cmpint(light_sweep(&l.sm, &l.ls), ==, 1);
		fsma_set_state_change(l.b.fk, switch_node(&l, s), 0);
		g_assert_cmpint(light_sweep(&l.sm, &l.ls), ==, 0);
	}
	/* a link that retrains behind our back raises it too: a heavy sweep, which clears it */
	fsma_reset_switch(l.b.fk, switch_node(&l, 2));
	g_assert_cmpint(light_sweep(&l.sm, &l.ls), ==, 1);
	struct program_report rep;
	fsma_bed_discover(&l.b);
	l.sm.fabric = l.b.f;
	g_assert_cmpint(fsma_bed_program(&l.b, NULL, 0, &rep), ==, 0);
	g_assert_cmpint(light_sweep(&l.sm, &l.ls), ==, 0);
	fsma_bed_clear(&l.b);
}

static void test_our_port(void)
{
	struct lbed l;
	lbed_init(&l);
	uint32_t sm_port = l.b.f->pub.sm_port;
	static const uint8_t states[] = { IBSM_STATE_ARMED, IBSM_STATE_INIT, IBSM_STATE_DOWN };
	for (size_t i = 0; i < G_N_ELEMENTS(states); i++) {
		fsma_set_port_state(l.b.fk, sm_port, states[i]);
		g_assert_cmpint(light_sweep(&l.sm, &l.ls), ==, 1);
	}
	fsma_set_port_state(l.b.fk, sm_port, IBSM_STATE_ACTIVE);
	g_assert_cmpint(light_sweep(&l.sm, &l.ls), ==, 0);
	fsma_bed_clear(&l.b);
}

static void test_switch_silent(void)
{
	struct lbed l;
	lbed_init(&l);
	static const enum fsma_action how[] = { FSMA_DROP, FSMA_BOUNCE };
	for (size_t i = 0; i < G_N_ELEMENTS(how); i++) {
		struct fsma_fault silent = { .method = FSMA_ANY, .attr = FSMA_ANY,
					     .node = switch_node(&l, 2), .action = how[i] };
		fsma_add_fault(l.b.fk, &silent);
		uint32_t mark = fsma_nrec(l.b.fk);
		g_assert_cmpint(light_sweep(&l.sm, &l.ls), ==, 1);
		g_assert_cmpuint(fsma_count(l.b.fk, mark, IB_MAD_METHOD_GET, IB_ATTR_SWITCH_INFO,
					    switch_node(&l, 2)), ==, 2); /* tried, and retried once */
		fsma_clear_faults(l.b.fk);
		g_assert_cmpint(light_sweep(&l.sm, &l.ls), ==, 0);
	}
	fsma_bed_clear(&l.b);
}

/* Another program's PortInfo Set, as `ibportstate` sends: read-modify-write of what port holds,
 * through the SM's own transport (the fake cannot tell who sent it). */
static void outsider_set(struct lbed *l, uint32_t port, int field, uint32_t value)
{
	const struct fabric *f = l->b.f;
	struct smp_req r;
	g_assert_cmpint(fabric_smp_to_port(&r, f, port, IB_MAD_METHOD_SET, IB_ATTR_PORT_INFO,
					   f->ports[port].num, NULL, NULL, 0), ==, 0);
	fsma_portinfo(l->b.fk, port, r.data);
	mad_set_field(r.data, 0, IB_PORT_STATE_F, 0);
	mad_set_field(r.data, 0, IB_PORT_PHYS_STATE_F, 0);
	mad_set_field(r.data, 0, field, value);
	transport_submit(l->b.t, &r);
	transport_drain(l->b.t, NULL);
}

/* A switch port facing a host disabled by another program: the switch raises no
 * PortStateChange for a Set (IBA; ibsim neither), the host has none. The light sweep reads the
 * port, sees it Disabled and asks for a heavy sweep, which then knows the link is down without
 * trying a NodeInfo through it: the host is gone from the next generation (it is cut off). */
static void test_outsider_disable(void)
{
	struct lbed l;
	lbed_init(&l);
	uint32_t ca = fx_ca_port(&l.b.f->pub, 3, 1), ca_node = l.b.f->ports[ca].node;
	uint64_t ca_guid = l.b.f->nodes[ca_node].guid;
	uint32_t sw_port = l.b.f->ports[ca].peer, sw = l.b.f->ports[sw_port].node;
	outsider_set(&l, sw_port, IB_PORT_PHYS_STATE_F, 3 /* Disabled */);
	fsma_set_state_change(l.b.fk, sw, 0); /* a Set raises none (the fake's link_down did) */
	uint8_t held[64];
	fsma_portinfo(l.b.fk, sw_port, held);
	g_assert_cmpuint(mad_get_field(held, 0, IB_PORT_PHYS_STATE_F), ==, 3);
	uint32_t mark = fsma_nrec(l.b.fk);
	g_assert_cmpint(light_sweep(&l.sm, &l.ls), ==, 1);
	g_assert_cmpuint(fsma_count(l.b.fk, mark, IB_MAD_METHOD_SET, FSMA_ANY, FSMA_ANY), ==, 0);
	/* the generation took the reading */
	g_assert_cmpuint(l.b.f->px[sw_port].phys_state, ==, 3);
	g_assert_cmpuint(mad_get_field(l.b.f->px[sw_port].portinfo, 0, IB_PORT_PHYS_STATE_F), ==, 3);
	/* the heavy sweep: the switch is quiet, its ports come from the generation: no NodeInfo
	 * is tried through the disabled port, and the host is not carried over */
	mark = fsma_nrec(l.b.fk);
	struct discovery_stats st;
	GError *err = NULL;
	struct fabric *f = discover_fabric(l.b.t, &l.b.stop, ++l.b.generation, l.b.f, 0, &st, &err);
	g_assert_no_error(err);
	g_assert_cmpuint(fsma_count(l.b.fk, mark, IB_MAD_METHOD_GET, IB_ATTR_NODE_INFO, ca_node), ==, 0);
	g_assert_cmpuint(st.failures, ==, 0);
	g_assert_cmpuint(fabric_node_by_guid(f, ca_guid), ==, IBSM_NONE);
	g_assert_cmpuint(f->pub.n_nodes, ==, l.b.f->pub.n_nodes - 1);
	fabric_unref(f);
	fsma_bed_clear(&l.b);
}

/* Another program gives a host's port and a switch's port 0 other LIDs: no PortStateChange
 * anywhere; the light sweep sees the LIDs are not the ones this SM gave and asks for a heavy
 * sweep (which sets them again: tests/sim/43-faults.t, where guid2lid remembers them). */
static void test_outsider_lid(void)
{
	struct lbed l;
	lbed_init(&l);
	uint32_t ports[] = { fx_ca_port(&l.b.f->pub, 4, 1), l.b.f->nodes[switch_node(&l, 1)].port0 };
	for (size_t i = 0; i < G_N_ELEMENTS(ports); i++) {
		uint32_t port = ports[i];
		uint16_t lid = fsma_port_lid(l.b.fk, port);
		g_assert_cmpuint(lid, ==, l.b.f->ports[port].lid);
		outsider_set(&l, port, IB_PORT_LID_F, 0x99);
		g_assert_cmpuint(fsma_port_lid(l.b.fk, port), ==, 0x99);
		uint32_t mark = fsma_nrec(l.b.fk);
		g_assert_cmpint(light_sweep(&l.sm, &l.ls), ==, 1);
		g_assert_cmpuint(fsma_count(l.b.fk, mark, IB_MAD_METHOD_SET, FSMA_ANY, FSMA_ANY), ==, 0);
		/* put back as this SM had it (what the heavy sweep does): quiet again */
		outsider_set(&l, port, IB_PORT_LID_F, lid);
		g_assert_cmpint(light_sweep(&l.sm, &l.ls), ==, 0);
	}
	fsma_bed_clear(&l.b);
}

/* A fabric with more ports than LIGHT_PORTS_MIN: each light sweep reads at most that many (or
 * 1/LIGHT_CYCLE of them), the next slice each time, and every port is read within LIGHT_CYCLE
 * light sweeps; a change anywhere is seen within that many. */
static void test_rotation(void)
{
	struct lbed l;
	struct program_report rep;
	struct fabric *shape = fx_kary_ntree(8, 3, 0);
	fsma_bed_init(&l.b, shape, fx_ca_port(&shape->pub, 0, 1), TIMEOUT_MS);
	fsma_bed_discover(&l.b);
	g_assert_cmpint(fsma_bed_program(&l.b, NULL, 1, &rep), ==, 0);
	memset(&l.sm, 0, sizeof(l.sm));
	memset(&l.ls, 0, sizeof(l.ls));
	l.sm.opt = &l.b.o;
	l.sm.t = l.b.t;
	l.sm.fabric = l.b.f;
	l.sm.state = IB_SM_MASTER;
	const struct fabric *f = l.b.f;
	uint32_t w = watched_ports(f);
	g_assert_cmpuint(w, >, LIGHT_PORTS_MIN);
	uint32_t budget = MAX(LIGHT_PORTS_MIN, (w + LIGHT_CYCLE - 1) / LIGHT_CYCLE);
	uint32_t mark = fsma_nrec(l.b.fk);
	for (int i = 0; i < LIGHT_CYCLE; i++) {
		uint32_t m = fsma_nrec(l.b.fk);
		g_assert_cmpint(light_sweep(&l.sm, &l.ls), ==, 0);
		/* our port and at most `budget` others */
		g_assert_cmpuint(fsma_count(l.b.fk, m, IB_MAD_METHOD_GET, IB_ATTR_PORT_INFO, FSMA_ANY), <=,
				 budget + 1);
	}
	GHashTable *read = ports_read(l.b.fk, mark);
	g_assert_cmpuint(g_hash_table_size(read), ==, w + 1);
	g_hash_table_destroy(read);
	/* a host LID changed: seen within LIGHT_CYCLE light sweeps, wherever the check stands */
	uint32_t port = fx_ca_port(&f->pub, 300, 1);
	outsider_set(&l, port, IB_PORT_LID_F, 0x7777);
	int seen = 0;
	for (int i = 0; i < LIGHT_CYCLE && !seen; i++)
		seen = light_sweep(&l.sm, &l.ls);
	g_assert_true(seen);
	fsma_bed_clear(&l.b);
}

static void test_no_generation(void)
{
	struct lbed l;
	lbed_init(&l);
	l.sm.fabric = NULL;
	uint32_t mark = fsma_nrec(l.b.fk);
	g_assert_cmpint(light_sweep(&l.sm, &l.ls), ==, 1);
	g_assert_cmpuint(fsma_nrec(l.b.fk), ==, mark);
	fsma_bed_clear(&l.b);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	log_set_quiet(!g_getenv("IBSM_TEST_LOG")); /* judged from the fake, not from the log */
	g_test_add_func("/light/quiet", test_quiet);
	g_test_add_func("/light/port_state_change", test_port_state_change);
	g_test_add_func("/light/our_port", test_our_port);
	g_test_add_func("/light/switch_silent", test_switch_silent);
	g_test_add_func("/light/no_generation", test_no_generation);
	g_test_add_func("/light/outsider_disable", test_outsider_disable);
	g_test_add_func("/light/outsider_lid", test_outsider_lid);
	g_test_add_func("/light/rotation", test_rotation);
	return g_test_run();
}
