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
#include "fabric/carry.h"
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

/* Index (among the PortInfo Sets to port num of node) of the first one asking for ACTIVE, in
 * the fake's record from `from`; FSMA_ANY if none. */
static uint32_t nth_active_set(const struct fsma *fk, uint32_t from, uint32_t node, uint8_t num)
{
	uint32_t n = 0;
	for (uint32_t i = from; i < fsma_nrec(fk); i++) {
		const struct fsma_rec *r = fsma_rec(fk, i);
		if (r->method != IB_MAD_METHOD_SET || r->attr != IB_ATTR_PORT_INFO || r->node != node ||
		    r->mod != num)
			continue;
		if (mad_get_field((void *)r->data, 0, IB_PORT_STATE_F) == IBSM_STATE_ACTIVE)
			return n;
		n++;
	}
	return FSMA_ANY;
}

/* The last state change of a switch port (ACTIVE) whose answer is lost, retried, and refused
 * (0x1C: the port is already ACTIVE) with the request's own data in the answer, as ibsim does:
 * the SM must not take that data for the port's PortInfo (PortPhysicalState 0 there would hide
 * the link from the next sweep, which takes a quiet switch's ports from the last generation):
 * it reads the port back. */
static void test_refused_set_read_back(void)
{
	unsigned m[] = { 4, 4 }, w[] = { 1, 4 };
	/* where the ACTIVE Set to leaf 0's port 1 falls, from a run without faults */
	struct fsma_bed a;
	struct fabric *shape = fx_xgft(2, m, w, 0);
	fsma_bed_init(&a, shape, sm_port_of(shape), TIMEOUT_MS);
	fsma_bed_discover(&a);
	uint32_t leaf = a.f->switches[0].node, mark = fsma_nrec(a.fk);
	struct program_report rep;
	g_assert_cmpint(fsma_bed_program(&a, NULL, 1, &rep), ==, 0);
	uint8_t num = 1; /* leaf 0's port to its first host */
	uint32_t nth = nth_active_set(a.fk, mark, leaf, num);
	g_assert_cmpuint(nth, !=, FSMA_ANY);
	fsma_bed_clear(&a);

	struct fsma_bed b;
	shape = fx_xgft(2, m, w, 0);
	fsma_bed_init(&b, shape, sm_port_of(shape), TIMEOUT_MS);
	fsma_bed_discover(&b);
	g_assert_cmpuint(b.f->switches[0].node, ==, leaf);
	struct fsma_fault lose = { .method = IB_MAD_METHOD_SET, .attr = IB_ATTR_PORT_INFO, .node = leaf,
				   .by_mod = 1, .mod = num, .action = FSMA_LOSE_ANSWER, .skip = nth, .count = 1 };
	struct fsma_fault echo = lose;
	echo.action = FSMA_STATUS_ECHO;
	echo.status = 0x1C;
	fsma_add_fault(b.fk, &lose);
	fsma_add_fault(b.fk, &echo);
	mark = fsma_nrec(b.fk);
	g_assert_cmpint(fsma_bed_program(&b, NULL, 1, &rep), ==, 0);
	/* the faults acted: the Set was lost, then refused with the echo */
	uint32_t refused = FSMA_ANY;
	for (uint32_t i = mark; i < fsma_nrec(b.fk); i++)
		if (fsma_rec(b.fk, i)->node == leaf && fsma_rec(b.fk, i)->status == 0x1C)
			refused = i;
	g_assert_cmpuint(refused, !=, FSMA_ANY);
	g_assert_cmpuint(fsma_rec(b.fk, refused)->mod, ==, num);
	/* what the SM keeps of that port is what the port holds */
	uint32_t port = b.f->nodes[leaf].port0 + num;
	uint8_t held[64];
	fsma_portinfo(b.fk, port, held);
	g_assert_cmpuint(mad_get_field(b.f->px[port].portinfo, 0, IB_PORT_PHYS_STATE_F), ==,
			 mad_get_field(held, 0, IB_PORT_PHYS_STATE_F));
	g_assert_cmpuint(fsma_port_state(b.fk, port), ==, IBSM_STATE_ACTIVE);
	/* and the next (quiet) sweep still finds the whole fabric through it */
	fsma_bed_discover(&b);
	g_assert_cmpuint(b.f->pub.n_nodes, ==, b.shape->pub.n_nodes);
	fsma_bed_clear(&b);
}

/* One discovery over b's fake with b->f as the last generation (not asserted whole). */
static struct fabric *discover_raw(struct fsma_bed *b, struct discovery_stats *st)
{
	GError *err = NULL;
	struct fabric *f = discover_fabric(b->t, &b->stop, ++b->generation, b->f, 0, st, &err);
	g_assert_no_error(err);
	g_assert_nonnull(f);
	return f;
}

/* Every switch of the fake forwards lid toward its port (walked in the fake's own tables). */
static void assert_routed(const struct fsma_bed *b, uint32_t ca_port)
{
	const struct fabric *f = b->shape;
	uint16_t lid = fsma_port_lid(b->fk, ca_port);
	g_assert_cmpuint(lid, !=, 0);
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		uint32_t node = f->switches[s].node;
		for (int hops = 0; hops < 8; hops++) {
			uint8_t out = fsma_lft_entry(b->fk, node, lid);
			g_assert_cmpuint(out, !=, IBSM_NO_PORT);
			uint32_t next = f->ports[f->nodes[node].port0 + out].peer;
			g_assert_cmpuint(next, !=, IBSM_NONE);
			if (next == ca_port)
				break;
			node = f->ports[next].node;
			g_assert_cmpuint(f->nodes[node].type, ==, IBSM_SWITCH);
		}
	}
}

/* A CA whose every SMP is lost (its link up all along) keeps its place, LID and routes for
 * CARRY_MAX_MISSES - 1 sweeps, is let go at the next, and comes back when it answers. */
static void test_lost_node_carried(void)
{
	struct fsma_bed b;
	bed_up(&b);
	uint32_t ca = fx_ca_port(&b.f->pub, 3, 1), ca_node = b.f->ports[ca].node;
	uint64_t guid = b.f->nodes[ca_node].guid;
	uint16_t lid = b.f->ports[ca].lid;
	uint32_t n_nodes = b.f->pub.n_nodes;
	assert_routed(&b, ca);
	struct fsma_fault lost = { .method = FSMA_ANY, .attr = FSMA_ANY, .node = ca_node,
				   .action = FSMA_BOUNCE };
	fsma_add_fault(b.fk, &lost);
	for (int miss = 1; miss < CARRY_MAX_MISSES; miss++) {
		uint32_t mark = fsma_nrec(b.fk);
		struct discovery_stats st;
		fsma_bed_discover_lossy(&b, &st); /* asserts the fabric whole: the CA carried over */
		g_assert_cmpuint(st.failures, >, 0);
		g_assert_cmpuint(st.carried, ==, 1);
		g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_GET, IB_ATTR_NODE_INFO, ca_node), >, 0);
		uint32_t id = fabric_node_by_guid(b.f, guid);
		g_assert_cmpuint(id, !=, IBSM_NONE);
		g_assert_cmpuint(b.f->nx[id].missed, ==, miss);
		uint32_t port = b.f->nodes[id].port0 + 1;
		g_assert_cmpuint(b.f->ports[port].lid, ==, lid);
		g_assert_cmpuint(b.f->ports[port].peer, !=, IBSM_NONE);
		struct program_report rep;
		fsma_bed_program(&b, NULL, 0, &rep);
		assert_routed(&b, ca); /* nothing torn down */
	}
	struct discovery_stats st;
	struct fabric *f = discover_raw(&b, &st);
	g_assert_cmpuint(st.dropped, ==, 1);
	g_assert_cmpuint(st.carried, ==, 0);
	g_assert_cmpuint(f->pub.n_nodes, ==, n_nodes - 1);
	g_assert_cmpuint(fabric_node_by_guid(f, guid), ==, IBSM_NONE);
	fabric_unref(f);
	/* it answers again: found, nothing missed */
	fsma_clear_faults(b.fk);
	fsma_bed_discover(&b);
	g_assert_cmpuint(b.f->nx[fabric_node_by_guid(b.f, guid)].missed, ==, 0);
	fsma_bed_clear(&b);
}

/* A CA whose link is seen down is gone at once, whatever else was lost in the same sweep; a
 * switch's port whose read fails is taken from the last sweep and explored, not seen down. */
static void test_down_link_not_carried(void)
{
	struct fsma_bed b;
	bed_up(&b);
	uint32_t gone = fx_ca_port(&b.f->pub, 2, 1), lost = fx_ca_port(&b.f->pub, 5, 1);
	uint64_t gone_guid = b.f->nodes[b.f->ports[gone].node].guid;
	uint64_t lost_guid = b.f->nodes[b.f->ports[lost].node].guid;
	fsma_link_down(b.fk, gone);
	struct fsma_fault f1 = { .method = FSMA_ANY, .attr = FSMA_ANY, .node = b.f->ports[lost].node,
				 .action = FSMA_BOUNCE };
	/* and the PortInfo of the switch port facing `lost`: read fails, so it comes from the
	 * last generation */
	uint32_t sw_port = b.f->ports[lost].peer, sw = b.f->ports[sw_port].node;
	struct fsma_fault f2 = { .method = IB_MAD_METHOD_GET, .attr = IB_ATTR_PORT_INFO, .node = sw,
				 .by_mod = 1, .mod = b.f->ports[sw_port].num, .action = FSMA_BOUNCE };
	fsma_set_state_change(b.fk, sw, 1); /* so the switch's ports are read, not reused */
	fsma_add_fault(b.fk, &f1);
	fsma_add_fault(b.fk, &f2);
	struct discovery_stats st;
	struct fabric *f = discover_raw(&b, &st);
	g_assert_cmpuint(st.carried, ==, 1);
	g_assert_cmpuint(st.ports_from_prev, ==, 1);
	g_assert_cmpuint(fabric_node_by_guid(f, gone_guid), ==, IBSM_NONE);
	g_assert_cmpuint(fabric_node_by_guid(f, lost_guid), !=, IBSM_NONE);
	g_assert_cmpuint(f->pub.n_nodes, ==, b.f->pub.n_nodes - 1);
	fabric_unref(f);
	fsma_bed_clear(&b);
}

/* A switch whose SwitchInfo is lost in a sweep keeps the last sweep's (its LFT is known, not
 * taken for reset and rewritten) and its ports are read; nothing needs writing. */
static void test_lost_switchinfo_kept(void)
{
	struct fsma_bed b;
	bed_up(&b);
	uint32_t sw = b.f->switches[1].node;
	uint64_t guid = b.f->nodes[sw].guid;
	/* what the programmer wrote (the generation was discovered before, on an empty switch) */
	uint16_t top = (uint16_t)mad_get_field(b.f->nx[sw].switchinfo, 0, IB_SW_LINEAR_FDB_TOP_F);
	g_assert_cmpuint(top, ==, b.f->pub.max_lid);
	g_assert_cmpuint(b.f->nx[sw].lft_top, ==, 0);
	struct fsma_fault lost = { .method = IB_MAD_METHOD_GET, .attr = IB_ATTR_SWITCH_INFO, .node = sw,
				   .action = FSMA_BOUNCE };
	fsma_add_fault(b.fk, &lost);
	uint32_t mark = fsma_nrec(b.fk);
	struct discovery_stats st;
	fsma_bed_discover_lossy(&b, &st);
	g_assert_cmpuint(st.failures, ==, 1);
	g_assert_cmpuint(st.switchinfo_from_prev, ==, 1);
	uint32_t id = fabric_node_by_guid(b.f, guid);
	g_assert_cmpuint(b.f->nx[id].have_switchinfo, ==, 1);
	g_assert_cmpuint(b.f->nx[id].lft_top, ==, top);
	g_assert_cmpuint(b.f->nx[id].found_empty, ==, 0);
	/* PortStateChange unknown: its ports were read */
	g_assert_cmpuint(external_reads(b.fk, b.f, mark, sw), ==, b.f->nodes[id].nports);
	fsma_clear_faults(b.fk);
	struct program_report rep;
	mark = fsma_nrec(b.fk);
	g_assert_cmpint(fsma_bed_program(&b, NULL, 0, &rep), ==, 0);
	g_assert_cmpuint(rep.writes, ==, 0);
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_SET, FSMA_ANY, FSMA_ANY), ==, 0);
	fsma_bed_clear(&b);
}

/* NodeInfo across a leaf-to-top link lost both ways in every attempt: it is sent again in
 * each further round (DISCOVERY_ROUNDS), and the link, both ends being found by other paths,
 * is kept as the last sweep had it: the fabric is whole and no LFT block is written. */
static void test_lost_link_kept(void)
{
	struct fsma_bed b;
	bed_up(&b);
	/* every switch's ports read, not taken from the last sweep */
	for (uint32_t s = 0; s < b.f->pub.n_switches; s++)
		fsma_set_state_change(b.fk, b.f->switches[s].node, 1);
	/* after its first contact, every NodeInfo to the last leaf and to the last top is lost */
	uint32_t leaf = FSMA_ANY, top = b.f->switches[b.f->pub.n_switches - 1].node;
	for (uint32_t s = 0; s < b.f->pub.n_switches; s++) {
		uint32_t node = b.f->switches[s].node;
		for (uint32_t p = 1; p <= b.f->nodes[node].nports; p++) {
			uint32_t q = b.f->ports[b.f->nodes[node].port0 + p].peer;
			if (q != IBSM_NONE && b.f->nodes[b.f->ports[q].node].type == IBSM_CA)
				leaf = node;
		}
	}
	g_assert_cmpuint(leaf, !=, FSMA_ANY);
	g_assert_cmpuint(leaf, !=, top);
	struct fsma_fault f1 = { .method = IB_MAD_METHOD_GET, .attr = IB_ATTR_NODE_INFO, .node = leaf,
				 .action = FSMA_BOUNCE, .skip = 1 };
	struct fsma_fault f2 = f1;
	f2.node = top;
	fsma_add_fault(b.fk, &f1);
	fsma_add_fault(b.fk, &f2);
	struct discovery_stats st;
	fsma_bed_discover_lossy(&b, &st); /* asserts the topology whole */
	g_assert_cmpuint(st.failures, >=, 1);
	g_assert_cmpuint(st.carried, ==, 0);
	g_assert_cmpuint(st.rounds, ==, DISCOVERY_ROUNDS - 1);
	g_assert_cmpuint(st.reprobed, >=, DISCOVERY_ROUNDS - 1);
	g_assert_cmpuint(st.links_carried, ==, 1);
	fsma_clear_faults(b.fk);
	uint32_t mark = fsma_nrec(b.fk);
	struct program_report rep;
	g_assert_cmpint(fsma_bed_program(&b, NULL, 0, &rep), ==, 0);
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_SET, IB_ATTR_LINEARFORWTBL, FSMA_ANY), ==, 0);
	fsma_bed_clear(&b);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	log_set_quiet(!g_getenv("TEST_LOG"));
	g_test_add_func("/discovery/quiet_sweep", test_quiet_sweep);
	g_test_add_func("/discovery/state_change_rereads", test_state_change_rereads);
	g_test_add_func("/discovery/link_change_seen", test_link_change_seen);
	g_test_add_func("/discovery/failed_probe_rereads", test_failed_probe_rereads);
	g_test_add_func("/discovery/program_never_clears", test_program_never_clears);
	g_test_add_func("/discovery/refused_set_read_back", test_refused_set_read_back);
	g_test_add_func("/discovery/lost_node_carried", test_lost_node_carried);
	g_test_add_func("/discovery/down_link_not_carried", test_down_link_not_carried);
	g_test_add_func("/discovery/lost_switchinfo_kept", test_lost_switchinfo_kept);
	g_test_add_func("/discovery/lost_link_kept", test_lost_link_kept);
	return g_test_run();
}
