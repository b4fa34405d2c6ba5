/* SPDX-License-Identifier: BSD-2-Clause */
/* test_discovery.c - discovery against a fake fabric of SMAs: what a heavy sweep reads again.
 * A switch whose SwitchInfo.PortStateChange is clear keeps its external ports' PortInfo from the
 * last generation (the SM's own PortInfo Sets do not raise the bit); one with the bit set has it
 * cleared before its ports are read; a NodeInfo that fails through a port taken from the last
 * sweep makes that port be read after all; and programming never writes the bit (it would lose a
 * change made since discovery). Judged from the fake's request log and what it holds. */
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric/discovery.h"
#include "fabric_fixture.h"
#include "fake_sma.h"

#define TIMEOUT_MS 20

static uint32_t sm_port_of(const struct fabric *shape)
{
	return fx_ca_port(&shape->pub, 0, 1);
}

/* PortInfo Gets from record `from` on to external ports (port number > 0) of switch `node`
 * (FSMA_ANY: any switch). */
static uint32_t external_reads(const struct fsma *fk, const struct fabric *f, uint32_t from,
			       uint32_t node)
{
	uint32_t n = 0;
	for (uint32_t i = from; i < fsma_nrec(fk); i++) {
		const struct fsma_rec *r = fsma_rec(fk, i);
		if (r->method != IB_MAD_METHOD_GET || r->attr != IB_ATTR_PORT_INFO || r->node == FSMA_ANY)
			continue;
		if (f->nodes[r->node].type != IBSM_SWITCH || !r->mod)
			continue;
		n += node == FSMA_ANY || r->node == node;
	}
	return n;
}

static uint32_t switch_links(const struct fabric *f)
{
	uint32_t n = 0;
	for (uint32_t s = 0; s < f->pub.n_switches; s++)
		n += f->nodes[f->switches[s].node].nports;
	return n;
}

/* A fat tree brought up: discovered (every port read), programmed to ACTIVE. */
static void bed_up(struct fsma_bed *b)
{
	unsigned m[] = { 4, 4 }, w[] = { 1, 4 };
	struct fabric *shape = fx_xgft(2, m, w, 0);
	fsma_bed_init(b, shape, sm_port_of(shape), TIMEOUT_MS);
	uint32_t mark = fsma_nrec(b->fk);
	fsma_bed_discover(b);
	/* the first sweep knows nothing: every external port of every switch is read */
	g_assert_cmpuint(external_reads(b->fk, b->f, mark, FSMA_ANY), ==, switch_links(b->f));
	struct program_report rep;
	g_assert_cmpint(fsma_bed_program(b, NULL, 1, &rep), ==, 0);
	/* the SM's own state changes (ARMED, ACTIVE) did not raise PortStateChange */
	for (uint32_t s = 0; s < b->f->pub.n_switches; s++)
		g_assert_cmpuint(mad_get_field((void *)fsma_switchinfo(b->fk, b->f->switches[s].node), 0,
					       IB_SW_STATE_CHANGE_F), ==, 0);
}

static void test_quiet_sweep(void)
{
	struct fsma_bed b;
	bed_up(&b);
	uint32_t mark = fsma_nrec(b.fk);
	fsma_bed_discover(&b);
	/* nothing changed: no external port read, no Set; still one NodeInfo per link, SwitchInfo
	 * and port 0 of every switch, every CA port */
	g_assert_cmpuint(external_reads(b.fk, b.f, mark, FSMA_ANY), ==, 0);
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_SET, FSMA_ANY, FSMA_ANY), ==, 0);
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_GET, IB_ATTR_SWITCH_INFO, FSMA_ANY), ==,
			 b.f->pub.n_switches);
	uint32_t cas = b.f->pub.n_nodes - b.f->pub.n_switches;
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_GET, IB_ATTR_PORT_INFO, FSMA_ANY), ==,
			 b.f->pub.n_switches + cas);
	/* the states taken over are what the fabric holds: every linked port ACTIVE */
	for (uint32_t p = 0; p < b.f->pub.n_ports; p++)
		if (b.f->ports[p].num && b.f->ports[p].peer != IBSM_NONE)
			g_assert_cmpuint(b.f->ports[p].state, ==, fsma_port_state(b.fk, p));
	/* and programming it again changes nothing */
	struct program_report rep;
	mark = fsma_nrec(b.fk);
	g_assert_cmpint(fsma_bed_program(&b, NULL, 0, &rep), ==, 0);
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_SET, FSMA_ANY, FSMA_ANY), ==, 0);
	fsma_bed_clear(&b);
}

static void test_state_change_rereads(void)
{
	struct fsma_bed b;
	bed_up(&b);
	uint32_t sw = b.f->switches[1].node;
	fsma_set_state_change(b.fk, sw, 1);
	uint32_t mark = fsma_nrec(b.fk);
	fsma_bed_discover(&b);
	/* that switch alone is read again, after its bit was cleared */
	g_assert_cmpuint(external_reads(b.fk, b.f, mark, sw), ==, b.f->nodes[sw].nports);
	g_assert_cmpuint(external_reads(b.fk, b.f, mark, FSMA_ANY), ==, b.f->nodes[sw].nports);
	uint32_t clear = fsma_first(b.fk, mark, IB_MAD_METHOD_SET, IB_ATTR_SWITCH_INFO, sw);
	g_assert_cmpuint(clear, !=, FSMA_ANY);
	g_assert_cmpuint(mad_get_field((void *)fsma_rec(b.fk, clear)->data, 0, IB_SW_STATE_CHANGE_F), ==, 1);
	for (uint32_t i = mark; i < fsma_nrec(b.fk); i++) {
		const struct fsma_rec *r = fsma_rec(b.fk, i);
		if (r->node == sw && r->attr == IB_ATTR_PORT_INFO && r->mod)
			g_assert_cmpuint(i, >, clear);
	}
	g_assert_cmpuint(mad_get_field((void *)fsma_switchinfo(b.fk, sw), 0, IB_SW_STATE_CHANGE_F), ==, 0);
	/* the clear wrote back what was read: LinearFDBTop is untouched */
	g_assert_cmpuint(mad_get_field((void *)fsma_switchinfo(b.fk, sw), 0, IB_SW_LINEAR_FDB_TOP_F), ==,
			 b.f->pub.max_lid);
	fsma_bed_clear(&b);
}

static void test_link_change_seen(void)
{
	struct fsma_bed b;
	bed_up(&b);
	/* a port of switch 0 falls back to INIT (a retrain) and the switch says so: the next sweep
	 * reads it and the programmer brings it up again */
	uint32_t sw = b.f->switches[0].node;
	uint32_t port = b.f->nodes[sw].port0 + 1;
	fsma_set_port_state(b.fk, port, IBSM_STATE_INIT);
	fsma_set_state_change(b.fk, sw, 1);
	fsma_bed_discover(&b);
	g_assert_cmpuint(b.f->ports[port].state, ==, IBSM_STATE_INIT);
	struct program_report rep;
	g_assert_cmpint(fsma_bed_program(&b, NULL, 0, &rep), ==, 0);
	g_assert_cmpuint(fsma_port_state(b.fk, port), ==, IBSM_STATE_ACTIVE);
	fsma_bed_clear(&b);
}

static void test_failed_probe_rereads(void)
{
	struct fsma_bed b;
	bed_up(&b);
	/* without PortStateChange, the NodeInfo through one port fails (both attempts: the bed's
	 * transport retries once), as through a port disabled behind the SM's back: that port is
	 * read, then explored again */
	uint32_t ca = fx_ca_port(&b.f->pub, 3, 1), ca_node = b.f->ports[ca].node;
	uint32_t sw_port = b.f->ports[ca].peer, sw = b.f->ports[sw_port].node;
	struct fsma_fault fault = { .method = IB_MAD_METHOD_GET, .attr = IB_ATTR_NODE_INFO,
				    .node = ca_node, .action = FSMA_BOUNCE, .count = 2 };
	fsma_add_fault(b.fk, &fault);
	uint32_t mark = fsma_nrec(b.fk);
	struct discovery_stats st;
	GError *err = NULL;
	struct fabric *f = discover_fabric(b.t, &b.stop, ++b.generation, b.f, 0, &st, &err);
	g_assert_no_error(err);
	g_assert_cmpuint(st.failures, ==, 0);
	g_assert_cmpuint(st.reused_reread, ==, 1);
	g_assert_cmpuint(f->pub.n_nodes, ==, b.f->pub.n_nodes);
	g_assert_cmpuint(external_reads(b.fk, f, mark, sw), ==, 1);
	uint32_t read = fsma_first(b.fk, mark, IB_MAD_METHOD_GET, IB_ATTR_PORT_INFO, sw);
	while (read != FSMA_ANY && !fsma_rec(b.fk, read)->mod)
		read = fsma_first(b.fk, read + 1, IB_MAD_METHOD_GET, IB_ATTR_PORT_INFO, sw);
	g_assert_cmpuint(fsma_rec(b.fk, read)->mod, ==, b.f->ports[sw_port].num);
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_GET, IB_ATTR_NODE_INFO, ca_node), ==, 3);
	fabric_unref(f);
	fsma_bed_clear(&b);
}

static void test_program_never_clears(void)
{
	struct fsma_bed b;
	bed_up(&b);
	/* a change after discovery, before programming writes SwitchInfo (here: a new LID space
	 * makes LinearFDBTop change): the Set must not clear the bit */
	fsma_bed_discover(&b);
	uint32_t sw = b.f->switches[2].node;
	fsma_set_state_change(b.fk, sw, 1);
	b.o.packet_life = (uint8_t)(b.o.packet_life + 1); /* every switch needs a SwitchInfo Set */
	uint32_t mark = fsma_nrec(b.fk);
	struct program_report rep;
	g_assert_cmpint(fsma_bed_program(&b, NULL, 0, &rep), ==, 0);
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_SET, IB_ATTR_SWITCH_INFO, FSMA_ANY), ==,
			 b.f->pub.n_switches);
	for (uint32_t i = mark; i < fsma_nrec(b.fk); i++) {
		const struct fsma_rec *r = fsma_rec(b.fk, i);
		if (r->method == IB_MAD_METHOD_SET && r->attr == IB_ATTR_SWITCH_INFO)
			g_assert_cmpuint(mad_get_field((void *)r->data, 0, IB_SW_STATE_CHANGE_F), ==, 0);
	}
	g_assert_cmpuint(mad_get_field((void *)fsma_switchinfo(b.fk, sw), 0, IB_SW_STATE_CHANGE_F), ==, 1);
	fsma_bed_clear(&b);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	log_set_quiet(1);
	g_test_add_func("/discovery/quiet_sweep", test_quiet_sweep);
	g_test_add_func("/discovery/state_change_rereads", test_state_change_rereads);
	g_test_add_func("/discovery/link_change_seen", test_link_change_seen);
	g_test_add_func("/discovery/failed_probe_rereads", test_failed_probe_rereads);
	g_test_add_func("/discovery/program_never_clears", test_program_never_clears);
	return g_test_run();
}
