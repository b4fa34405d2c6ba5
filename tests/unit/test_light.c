/* test_light.c - the light sweep against a fake fabric brought up by the programmer: quiet
 * fabric, no heavy sweep; a switch's PortStateChange, our port leaving ACTIVE, or a switch that
 * stops answering, a heavy sweep. Also what it sends: reads only, one per switch and our port. */
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric_fixture.h"
#include "fake_sma.h"
#include "sm/light.h"

#define TIMEOUT_MS 20

struct lbed {
	struct fsma_bed b;
	struct sm sm;
};

static void lbed_init(struct lbed *l)
{
	struct program_report rep;
	struct fabric *shape = fx_line(3, 2, 0);
	fsma_bed_init(&l->b, shape, fx_ca_port(&shape->pub, 0, 1), TIMEOUT_MS);
	fsma_bed_discover(&l->b);
	g_assert_cmpint(fsma_bed_program(&l->b, NULL, 1, &rep), ==, 0);
	memset(&l->sm, 0, sizeof(l->sm));
	l->sm.opt = &l->b.o;
	l->sm.t = l->b.t;
	l->sm.fabric = l->b.f;
	l->sm.state = IB_SM_MASTER;
}

static uint32_t switch_node(const struct lbed *l, uint32_t sw)
{
	return l->b.f->switches[sw].node;
}

static void test_quiet(void)
{
	struct lbed l;
	lbed_init(&l);
	const struct fabric *f = l.b.f;
	uint32_t mark = fsma_nrec(l.b.fk);
	g_assert_cmpint(light_sweep(&l.sm), ==, 0);
	/* one SwitchInfo Get per switch and one PortInfo Get of our port; nothing written */
	g_assert_cmpuint(fsma_nrec(l.b.fk) - mark, ==, f->pub.n_switches + 1);
	g_assert_cmpuint(fsma_count(l.b.fk, mark, IB_MAD_METHOD_SET, FSMA_ANY, FSMA_ANY), ==, 0);
	for (uint32_t s = 0; s < f->pub.n_switches; s++)
		g_assert_cmpuint(fsma_count(l.b.fk, mark, IB_MAD_METHOD_GET, IB_ATTR_SWITCH_INFO,
					    switch_node(&l, s)), ==, 1);
	uint32_t pi = fsma_first(l.b.fk, mark, IB_MAD_METHOD_GET, IB_ATTR_PORT_INFO, FSMA_ANY);
	g_assert_cmpuint(pi, !=, FSMA_ANY);
	g_assert_cmpuint(fsma_rec(l.b.fk, pi)->port, ==, f->pub.sm_port);
	/* and again: still quiet (reading changes nothing) */
	g_assert_cmpint(light_sweep(&l.sm), ==, 0);
	fsma_bed_clear(&l.b);
}

static void test_port_state_change(void)
{
	struct lbed l;
	lbed_init(&l);
	for (uint32_t s = 0; s < l.b.f->pub.n_switches; s++) {
		fsma_set_state_change(l.b.fk, switch_node(&l, s), 1);
		g_assert_cmpint(light_sweep(&l.sm), ==, 1);
		fsma_set_state_change(l.b.fk, switch_node(&l, s), 0);
		g_assert_cmpint(light_sweep(&l.sm), ==, 0);
	}
	/* a link that retrains behind our back raises it too: a heavy sweep, which clears it */
	fsma_reset_switch(l.b.fk, switch_node(&l, 2));
	g_assert_cmpint(light_sweep(&l.sm), ==, 1);
	struct program_report rep;
	fsma_bed_discover(&l.b);
	l.sm.fabric = l.b.f;
	g_assert_cmpint(fsma_bed_program(&l.b, NULL, 0, &rep), ==, 0);
	g_assert_cmpint(light_sweep(&l.sm), ==, 0);
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
		g_assert_cmpint(light_sweep(&l.sm), ==, 1);
	}
	fsma_set_port_state(l.b.fk, sm_port, IBSM_STATE_ACTIVE);
	g_assert_cmpint(light_sweep(&l.sm), ==, 0);
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
		g_assert_cmpint(light_sweep(&l.sm), ==, 1);
		g_assert_cmpuint(fsma_count(l.b.fk, mark, IB_MAD_METHOD_GET, IB_ATTR_SWITCH_INFO,
					    switch_node(&l, 2)), ==, 2); /* tried, and retried once */
		fsma_clear_faults(l.b.fk);
		g_assert_cmpint(light_sweep(&l.sm), ==, 0);
	}
	fsma_bed_clear(&l.b);
}

static void test_no_generation(void)
{
	struct lbed l;
	lbed_init(&l);
	l.sm.fabric = NULL;
	uint32_t mark = fsma_nrec(l.b.fk);
	g_assert_cmpint(light_sweep(&l.sm), ==, 1);
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
	return g_test_run();
}
