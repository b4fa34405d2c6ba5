/* test_program.c - the programmer (core/program) against a fake fabric of SMAs: the bring-up
 * order of doc/design.md, LFT blocks written only where they differ, P_Key tables by the index rules
 * and the memory across sweeps, reset switches and programmer_forget(). Judged only from what the
 * fake fabric received (its request log) and holds afterwards. */
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric_fixture.h"
#include "fake_sma.h"

#define TIMEOUT_MS 20

static uint8_t req_state(const struct fsma_rec *r)
{
	return (uint8_t)mad_get_field((void *)r->data, 0, IB_PORT_STATE_F);
}

static uint32_t sm_port_of(const struct fabric *shape)
{
	return fx_ca_port(&shape->pub, 0, 1);
}

static void bed_up(struct fsma_bed *b, struct fabric *shape, uint8_t lmc,
		   const struct part_policy *pp)
{
	struct program_report rep;
	fsma_bed_init(b, shape, sm_port_of(shape), TIMEOUT_MS);
	b->lmc = lmc;
	fsma_bed_discover(b);
	g_assert_cmpint(fsma_bed_program(b, pp, 1, &rep), ==, 0);
}

/* Every request from `from` on was delivered and answered with status 0. */
static void assert_all_answered(const struct fsma *fk, uint32_t from)
{
	for (uint32_t i = from; i < fsma_nrec(fk); i++) {
		const struct fsma_rec *r = fsma_rec(fk, i);
		if (r->outcome != FSMA_ANSWERED || r->status)
			g_test_message("request %u: method 0x%x attr 0x%x mod 0x%x node %u: outcome %u "
				       "status 0x%x", i, r->method, r->attr, r->mod, r->node, r->outcome,
				       r->status);
		g_assert_cmpuint(r->outcome, ==, FSMA_ANSWERED);
		g_assert_cmphex(r->status, ==, 0);
	}
}

/* What the fabric holds is the routes: every LFT entry up to the end of the last block, and
 * every end port to every LID delivered along shortest paths by the fake's own tables. */
static void assert_lfts_are_routes(const struct fsma_bed *b)
{
	const struct fabric *f = b->f;
	const struct routing_result *r = b->r;
	uint32_t nblocks = (r->stride + LFT_BLOCK_SIZE - 1) / LFT_BLOCK_SIZE;
	uint8_t *held = g_malloc((size_t)f->pub.n_switches * r->stride);
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		uint32_t node = f->switches[s].node;
		for (uint32_t lid = 0; lid < r->stride; lid++) {
			held[(size_t)s * r->stride + lid] = fsma_lft_entry(b->fk, node, lid);
			g_assert_cmpuint(fsma_lft_entry(b->fk, node, lid), ==, r->lft[(size_t)s * r->stride + lid]);
		}
		for (uint32_t lid = r->stride; lid < nblocks * LFT_BLOCK_SIZE; lid++)
			g_assert_cmpuint(fsma_lft_raw(b->fk, node, lid), ==, IBSM_NO_PORT);
	}
	struct fx_walk_stats st;
	fx_walk_all(&f->pub, held, r->stride, &st);
	g_assert_cmpuint(st.pairs, >, 0);
	g_assert_cmpuint(st.delivered, ==, st.pairs);
	g_assert_cmpuint(st.longer, ==, 0);
	g_free(held);
}

/* Every linked port ACTIVE, with NeighborMTU and OperVLs the link's minimum. */
static void assert_links_active(const struct fsma_bed *b)
{
	const struct fabric *f = b->f;
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		const struct ibsm_port *port = &f->ports[p];
		if (!port->num || port->peer == IBSM_NONE)
			continue;
		const struct ibsm_port *q = &f->ports[port->peer];
		uint8_t pi[64];
		fsma_portinfo(b->fk, p, pi);
		g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_STATE_F), ==, IBSM_STATE_ACTIVE);
		g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_NEIGHBOR_MTU_F), ==, MIN(port->mtu_cap, q->mtu_cap));
		g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_OPER_VLS_F), ==,
				 MIN(MIN(port->vl_cap, q->vl_cap), b->o.max_op_vls));
	}
}

/* ---- (a) the bring-up order --------------------------------------------------------------- */

static void check_bringup(struct fabric *shape, uint8_t lmc)
{
	struct fsma_bed b;
	struct program_report rep;
	fsma_bed_init(&b, shape, sm_port_of(shape), TIMEOUT_MS);
	b.lmc = lmc;
	fsma_bed_discover(&b);
	struct fsma *fk = b.fk;
	struct fabric *f = b.f;
	uint32_t mark = fsma_nrec(fk);
	g_assert_cmpint(fsma_bed_program(&b, NULL, 1, &rep), ==, 0);
	assert_all_answered(fk, mark);
	uint32_t sm = f->pub.sm_port;
	uint16_t sm_lid = f->ports[sm].lid;
	g_assert_cmpuint(sm_lid, !=, 0);

	/* the SM port's PortInfo Set comes before any other Set */
	uint32_t first_set = fsma_first(fk, mark, IB_MAD_METHOD_SET, FSMA_ANY, FSMA_ANY);
	g_assert_cmpuint(first_set, !=, FSMA_ANY);
	const struct fsma_rec *r0 = fsma_rec(fk, first_set);
	g_assert_cmphex(r0->attr, ==, IB_ATTR_PORT_INFO);
	g_assert_cmpuint(r0->port, ==, sm);
	g_assert_cmpuint(mad_get_field((void *)r0->data, 0, IB_PORT_LID_F), ==, sm_lid);
	g_assert_cmpuint(mad_get_field((void *)r0->data, 0, IB_PORT_SMLID_F), ==, sm_lid);

	/* every end port's LID is set before any LFT block; the fabric holds it afterwards */
	uint32_t first_lft = fsma_first(fk, mark, IB_MAD_METHOD_SET, IB_ATTR_LINEARFORWTBL, FSMA_ANY);
	g_assert_cmpuint(first_lft, !=, FSMA_ANY);
	uint32_t end_ports = 0;
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		if (!fabric_is_end_port(f, p))
			continue;
		end_ports++;
		uint32_t i = mark;
		for (; i < fsma_nrec(fk); i++) {
			const struct fsma_rec *r = fsma_rec(fk, i);
			if (r->method == IB_MAD_METHOD_SET && r->attr == IB_ATTR_PORT_INFO && r->port == p &&
			    mad_get_field((void *)r->data, 0, IB_PORT_LID_F) == f->ports[p].lid)
				break;
		}
		g_assert_cmpuint(i, <, first_lft);
		/* first master sweep: ClientReregister where CapabilityMask offers it (the fake's CAs) */
		int is_ca = f->nodes[f->ports[p].node].type != IBSM_SWITCH;
		g_assert_cmpuint(mad_get_field((void *)fsma_rec(fk, i)->data, 0, IB_PORT_CLIENT_REREG_F), ==, is_ca);
		uint8_t pi[64], prefix[8], want[8];
		fsma_portinfo(fk, p, pi);
		g_assert_cmpuint(f->ports[p].lid, !=, 0);
		g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_LID_F), ==, f->ports[p].lid);
		g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_LMC_F), ==, f->ports[p].lmc);
		g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_SMLID_F), ==, sm_lid);
		mad_get_array(pi, 0, IB_PORT_GID_PREFIX_F, prefix);
		for (int k = 0; k < 8; k++)
			want[k] = (uint8_t)(b.o.subnet_prefix >> (56 - 8 * k));
		g_assert_cmpmem(prefix, 8, want, 8);
	}
	g_assert_cmpuint(end_ports, ==, f->pub.n_nodes); /* one-port CAs and switch port 0s */
	if (lmc)
		g_assert_cmpuint(f->ports[sm].lmc, ==, lmc);

	/* LinearFDBTop is set on a switch before any LFT block of that switch */
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		uint32_t node = f->switches[s].node;
		uint32_t lft = fsma_first(fk, mark, IB_MAD_METHOD_SET, IB_ATTR_LINEARFORWTBL, node);
		g_assert_cmpuint(lft, !=, FSMA_ANY);
		uint32_t i = mark;
		for (; i < lft; i++) {
			const struct fsma_rec *r = fsma_rec(fk, i);
			if (r->method == IB_MAD_METHOD_SET && r->attr == IB_ATTR_SWITCH_INFO && r->node == node &&
			    mad_get_field((void *)r->data, 0, IB_SW_LINEAR_FDB_TOP_F) == f->pub.max_lid)
				break;
		}
		g_assert_cmpuint(i, <, lft);
		const uint8_t *si = fsma_switchinfo(fk, node);
		g_assert_cmpuint(mad_get_field((void *)si, 0, IB_SW_LINEAR_FDB_TOP_F), ==, f->pub.max_lid);
		g_assert_cmpuint(mad_get_field((void *)si, 0, IB_SW_LIFE_TIME_F), ==, b.o.packet_life);
		g_assert_cmpuint(mad_get_field((void *)si, 0, IB_SW_STATE_CHANGE_F), ==, 0);
	}

	/* ARMED from INIT; ACTIVE only from ARMED with the peer ARMED or ACTIVE; once per port */
	uint32_t linked = 0, armed = 0, active = 0;
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		linked += f->ports[p].num && f->ports[p].peer != IBSM_NONE;
	for (uint32_t i = mark; i < fsma_nrec(fk); i++) {
		const struct fsma_rec *r = fsma_rec(fk, i);
		if (r->method != IB_MAD_METHOD_SET || r->attr != IB_ATTR_PORT_INFO || !req_state(r))
			continue;
		if (req_state(r) == IBSM_STATE_ARMED) {
			armed++;
			g_assert_cmpuint(r->state, ==, IBSM_STATE_INIT);
		} else {
			g_assert_cmpuint(req_state(r), ==, IBSM_STATE_ACTIVE);
			active++;
			g_assert_cmpuint(r->state, ==, IBSM_STATE_ARMED);
			g_assert_true(r->peer_state == IBSM_STATE_ARMED || r->peer_state == IBSM_STATE_ACTIVE);
		}
	}
	g_assert_cmpuint(armed, ==, linked);
	g_assert_cmpuint(active, ==, linked);
	assert_links_active(&b);
	assert_lfts_are_routes(&b);
	g_assert_cmpuint(rep.not_active, ==, 0);
	fsma_bed_clear(&b);
}

static void test_bringup_line(void)
{
	check_bringup(fx_line(3, 4, 0), 0);
}

static void test_bringup_fat_tree_lmc(void)
{
	check_bringup(fx_kary_ntree(2, 3, 0), 1);
}

/* 244 LIDs: three whole LFT blocks and a partial one per switch (whole blocks are compared
 * where they lie in the routes, the last one through a padded copy) */
static void test_bringup_many_blocks(void)
{
	check_bringup(fx_line(4, 60, 0), 0);
}

/* ---- (b) LFT diffs ---------------------------------------------------------------------------- */

/* Sets of any kind, and reads of tables, from record `from` on. */
static void assert_nothing_written(const struct fsma *fk, uint32_t from)
{
	g_assert_cmpuint(fsma_count(fk, from, IB_MAD_METHOD_SET, FSMA_ANY, FSMA_ANY), ==, 0);
	g_assert_cmpuint(fsma_count(fk, from, IB_MAD_METHOD_GET, IB_ATTR_LINEARFORWTBL, FSMA_ANY), ==, 0);
	g_assert_cmpuint(fsma_count(fk, from, IB_MAD_METHOD_GET, IB_ATTR_PKEY_TBL, FSMA_ANY), ==, 0);
}

/* One Set from `from` on, and it is the LFT block `block` of switch node `node`. */
static void assert_one_block(const struct fsma *fk, uint32_t from, uint32_t node, uint32_t block)
{
	g_assert_cmpuint(fsma_count(fk, from, IB_MAD_METHOD_SET, FSMA_ANY, FSMA_ANY), ==, 1);
	uint32_t i = fsma_first(fk, from, IB_MAD_METHOD_SET, IB_ATTR_LINEARFORWTBL, FSMA_ANY);
	g_assert_cmpuint(i, !=, FSMA_ANY);
	g_assert_cmpuint(fsma_rec(fk, i)->node, ==, node);
	g_assert_cmpuint(fsma_rec(fk, i)->mod, ==, block);
}

static void test_lft_diff(void)
{
	struct fsma_bed b;
	struct program_report rep;
	bed_up(&b, fx_line(3, 40, 0), 0, NULL); /* 123 LIDs: two blocks per switch */
	g_assert_cmpuint(b.f->pub.max_lid, >=, 100);
	assert_lfts_are_routes(&b);

	/* an unchanged fabric: nothing read, nothing written */
	fsma_bed_discover(&b);
	uint32_t mark = fsma_nrec(b.fk);
	g_assert_cmpint(fsma_bed_program(&b, NULL, 0, &rep), ==, 0);
	assert_nothing_written(b.fk, mark);
	g_assert_cmpuint(rep.writes, ==, 0);

	/* one entry changed: exactly that block of that switch, in either half of a block */
	static const struct { uint32_t sw, lid; } change[] = {
		{ 1, 40 }, { 0, 10 }, { 2, 100 }, { 1, 70 }, { 0, 127 - 4 },
	};
	for (size_t c = 0; c < G_N_ELEMENTS(change); c++) {
		fsma_bed_discover(&b);
		uint32_t sw = change[c].sw, lid = change[c].lid, node = b.f->switches[sw].node;
		g_test_message("entry %u of switch %u (block %u)", lid, sw, lid / LFT_BLOCK_SIZE);
		g_assert_cmpuint(lid, <=, b.f->pub.max_lid);
		uint8_t *e = &b.r->lft[(size_t)sw * b.r->stride + lid];
		uint8_t old = *e, nports = b.f->nodes[node].nports;
		*e = (uint8_t)(old % nports + 1); /* another port */
		g_assert_cmpuint(*e, !=, old);
		mark = fsma_nrec(b.fk);
		g_assert_cmpint(fsma_bed_program(&b, NULL, 0, &rep), ==, 0);
		assert_one_block(b.fk, mark, node, lid / LFT_BLOCK_SIZE);
		g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_GET, IB_ATTR_LINEARFORWTBL, FSMA_ANY), ==, 0);
		/* the fabric holds the changed routes */
		for (uint32_t s = 0; s < b.f->pub.n_switches; s++)
			for (uint32_t l = 0; l < b.r->stride; l++)
				g_assert_cmpuint(fsma_lft_entry(b.fk, b.f->switches[s].node, l), ==,
						 b.r->lft[(size_t)s * b.r->stride + l]);
		/* and back: the same block again */
		fsma_bed_discover(&b);
		mark = fsma_nrec(b.fk);
		g_assert_cmpint(fsma_bed_program(&b, NULL, 0, &rep), ==, 0);
		assert_one_block(b.fk, mark, node, lid / LFT_BLOCK_SIZE);
		g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_GET, IB_ATTR_LINEARFORWTBL, FSMA_ANY), ==, 0);
		assert_lfts_are_routes(&b);
	}
	fsma_bed_clear(&b);
}

/* ---- (d) a reset switch ------------------------------------------------------------------------ */

static void test_lft_reset_switch(void)
{
	struct fsma_bed b;
	struct program_report rep;
	bed_up(&b, fx_line(3, 40, 0), 0, NULL);
	uint32_t sw = 1, node = b.f->switches[sw].node;
	uint16_t lid_before = b.f->ports[b.f->nodes[node].port0].lid;
	uint32_t nblocks = (b.r->stride + LFT_BLOCK_SIZE - 1) / LFT_BLOCK_SIZE;
	fsma_reset_switch(b.fk, node);
	g_assert_cmpuint(fsma_lft_raw(b.fk, node, 1), ==, IBSM_NO_PORT);
	fsma_bed_discover(&b);
	g_assert_cmpuint(b.f->ports[b.f->nodes[node].port0].lid, ==, lid_before);
	uint32_t mark = fsma_nrec(b.fk);
	g_assert_cmpint(fsma_bed_program(&b, NULL, 0, &rep), ==, 0);
	assert_all_answered(b.fk, mark);
	/* every block of the reset switch written once, nothing read, no other switch's block */
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_SET, IB_ATTR_LINEARFORWTBL, FSMA_ANY), ==, nblocks);
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_SET, IB_ATTR_LINEARFORWTBL, node), ==, nblocks);
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_GET, IB_ATTR_LINEARFORWTBL, FSMA_ANY), ==, 0);
	uint32_t seen = 0;
	for (uint32_t i = mark; i < fsma_nrec(b.fk); i++) {
		const struct fsma_rec *r = fsma_rec(b.fk, i);
		if (r->method == IB_MAD_METHOD_SET && r->attr == IB_ATTR_LINEARFORWTBL) {
			g_assert_cmpuint(r->mod, <, nblocks);
			g_assert_false(seen & (1u << r->mod));
			seen |= 1u << r->mod;
		}
	}
	/* LinearFDBTop again before the blocks, its LID before anything is forwarded to it */
	uint32_t top = fsma_first(b.fk, mark, IB_MAD_METHOD_SET, IB_ATTR_SWITCH_INFO, node);
	uint32_t first_block = fsma_first(b.fk, mark, IB_MAD_METHOD_SET, IB_ATTR_LINEARFORWTBL, node);
	g_assert_cmpuint(top, <, first_block);
	g_assert_cmpuint(mad_get_field((void *)fsma_rec(b.fk, top)->data, 0, IB_SW_LINEAR_FDB_TOP_F), ==,
			 b.f->pub.max_lid);
	g_assert_cmpuint(fsma_port_lid(b.fk, b.f->nodes[node].port0), ==, lid_before);
	assert_links_active(&b);
	assert_lfts_are_routes(&b);
	fsma_bed_clear(&b);
}

/* ---- failures and lost answers ---------------------------------------------------------------- */

/* A block Set refused once: the pass fails and the switch keeps the block it had; the next pass
 * writes that block (reading it first at most) and nothing else. */
static void test_lft_refused_block(void)
{
	struct fsma_bed b;
	struct program_report rep;
	struct fabric *shape = fx_line(3, 40, 0);
	fsma_bed_init(&b, shape, sm_port_of(shape), TIMEOUT_MS);
	fsma_bed_discover(&b);
	uint32_t node = b.f->switches[1].node;
	struct fsma_fault refuse = { .method = IB_MAD_METHOD_SET, .attr = IB_ATTR_LINEARFORWTBL,
				     .node = node, .action = FSMA_STATUS,
				     .status = MAD_STATUS_INVALID_FIELD, .skip = 1, .count = 1 };
	fsma_add_fault(b.fk, &refuse); /* its second block Set: block 1 */
	g_assert_cmpint(fsma_bed_program(&b, NULL, 1, &rep), <, 0);
	g_assert_cmpuint(rep.failures, >, 0);
	for (uint32_t lid = LFT_BLOCK_SIZE; lid < 2 * LFT_BLOCK_SIZE; lid++)
		g_assert_cmpuint(fsma_lft_raw(b.fk, node, lid), ==, IBSM_NO_PORT);
	assert_links_active(&b);
	fsma_bed_discover(&b);
	uint32_t mark = fsma_nrec(b.fk);
	g_assert_cmpint(fsma_bed_program(&b, NULL, 0, &rep), ==, 0);
	assert_all_answered(b.fk, mark);
	assert_one_block(b.fk, mark, node, 1);
	for (uint32_t i = mark; i < fsma_nrec(b.fk); i++) { /* a read, if any, of that block only */
		const struct fsma_rec *r = fsma_rec(b.fk, i);
		if (r->attr == IB_ATTR_LINEARFORWTBL)
			g_assert_true(r->node == node && r->mod == 1);
	}
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_GET, IB_ATTR_LINEARFORWTBL, FSMA_ANY), <=, 1);
	assert_lfts_are_routes(&b);
	fsma_bed_clear(&b);
}

/* Sets applied whose answers were lost are sent again. A state step sent again is refused
 * (ARMED->ARMED, ACTIVE->ACTIVE: 0x1C, as ibsim) with the port already in the state asked for:
 * the pass must still succeed. The next pass has nothing to write: what the retries read back
 * was kept. */
static void test_lost_answers(void)
{
	struct fsma_bed b;
	struct program_report rep;
	struct fabric *shape = fx_line(2, 2, 0);
	fsma_bed_init(&b, shape, sm_port_of(shape), TIMEOUT_MS);
	fsma_bed_discover(&b);
	const struct ibsm_fabric *pf = &b.f->pub;
	/* CA 1's PortInfo Sets: LID, ARMED (answer lost), ARMED again, ACTIVE; CA 3's: LID,
	 * ARMED, ACTIVE (answer lost), ACTIVE again */
	uint32_t x = b.f->ports[fx_ca_port(pf, 1, 1)].node, y = b.f->ports[fx_ca_port(pf, 3, 1)].node;
	uint32_t sw = b.f->switches[1].node;
	const struct fsma_fault lose[] = {
		{ .method = IB_MAD_METHOD_SET, .attr = IB_ATTR_PORT_INFO, .node = x,
		  .action = FSMA_LOSE_ANSWER, .skip = 1, .count = 1 },
		{ .method = IB_MAD_METHOD_SET, .attr = IB_ATTR_PORT_INFO, .node = y,
		  .action = FSMA_LOSE_ANSWER, .skip = 2, .count = 1 },
		{ .method = IB_MAD_METHOD_SET, .attr = IB_ATTR_SWITCH_INFO, .node = sw,
		  .action = FSMA_LOSE_ANSWER, .skip = 0, .count = 1 },
		{ .method = IB_MAD_METHOD_SET, .attr = IB_ATTR_LINEARFORWTBL, .node = sw,
		  .action = FSMA_LOSE_ANSWER, .skip = 0, .count = 1 },
	};
	for (size_t i = 0; i < G_N_ELEMENTS(lose); i++)
		fsma_add_fault(b.fk, &lose[i]);
	uint32_t mark = fsma_nrec(b.fk);
	g_assert_cmpint(fsma_bed_program(&b, NULL, 1, &rep), ==, 0);
	static const uint8_t steps[] = { IBSM_STATE_ARMED, IBSM_STATE_ACTIVE };
	const uint32_t nodes[] = { x, y };
	for (int k = 0; k < 2; k++) {
		g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_SET, IB_ATTR_PORT_INFO, nodes[k]), ==, 4);
		uint32_t lost = 0, refused = 0;
		for (uint32_t i = mark; i < fsma_nrec(b.fk); i++) {
			const struct fsma_rec *r = fsma_rec(b.fk, i);
			if (r->node != nodes[k] || r->attr != IB_ATTR_PORT_INFO || req_state(r) != steps[k])
				continue;
			if (r->outcome == FSMA_DROPPED) {
				lost++;
				g_assert_cmpuint(refused, ==, 0);
			} else if (r->status == MAD_STATUS_INVALID_FIELD) {
				refused++;
				g_assert_cmpuint(r->state, ==, steps[k]); /* already there */
			}
		}
		g_assert_cmpuint(lost, ==, 1);
		g_assert_cmpuint(refused, ==, 1);
	}
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_SET, IB_ATTR_SWITCH_INFO, sw), ==, 2);
	assert_links_active(&b);
	assert_lfts_are_routes(&b);
	fsma_bed_discover(&b);
	mark = fsma_nrec(b.fk);
	g_assert_cmpint(fsma_bed_program(&b, NULL, 0, &rep), ==, 0);
	assert_nothing_written(b.fk, mark);
	fsma_bed_clear(&b);
}

/* ---- (c) P_Key tables ------------------------------------------------------------------------ */

/* Hosts (fx_line(2, 3): CAs 0..2 on switch 0, 3..5 on switch 1; CA 0 is the SM). */
static uint64_t host_guid(uint32_t n)
{
	return FX_CA_GUID_BASE + 0x100ull * n + 1;
}

static struct part_policy *policy(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
static struct part_policy *policy(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	GError *err = NULL;
	struct part_policy *p = part_policy_parse_text(text, strlen(text), "test.conf", &err);
	g_assert_no_error(err);
	g_assert_nonnull(p);
	g_assert_cmpuint(p->skipped->len, ==, 0);
	g_free(text);
	return p;
}

/* Policy A: h1 full in blue and limited in red, h2 limited in blue, h3 full in red.
 * Policy B: h1 out of blue and full in red (a membership change), the rest as A. */
static struct part_policy *policy_a(void)
{
	return policy("Default=0x7fff, ipoib : ALL=full ;\n"
		      "blue=0x0011 : 0x%016" G_GINT64_MODIFIER "x=full, 0x%016" G_GINT64_MODIFIER "x ;\n"
		      "red=0x0012 : 0x%016" G_GINT64_MODIFIER "x, 0x%016" G_GINT64_MODIFIER "x=full ;\n",
		      host_guid(1), host_guid(2), host_guid(1), host_guid(3));
}

static struct part_policy *policy_b(void)
{
	return policy("Default=0x7fff, ipoib : ALL=full ;\n"
		      "blue=0x0011 : 0x%016" G_GINT64_MODIFIER "x ;\n"
		      "red=0x0012 : 0x%016" G_GINT64_MODIFIER "x=full, 0x%016" G_GINT64_MODIFIER "x=full ;\n",
		      host_guid(2), host_guid(1), host_guid(3));
}

/* The keys port must hold under policy A or B, written out by hand: a CA port's, the switch
 * port facing it the same, a switch port 0 the default key only; 0 keys: no table. */
static uint32_t wanted_keys(const struct fabric *f, uint32_t port, int b, uint16_t *keys)
{
	const struct ibsm_port *p = &f->ports[port];
	if (f->nodes[p->node].type == IBSM_SWITCH && p->num) {
		if (p->peer == IBSM_NONE || f->nodes[f->ports[p->peer].node].type == IBSM_SWITCH)
			return 0;
		port = p->peer;
		p = &f->ports[port];
	}
	uint32_t n = 0;
	keys[n++] = 0xffff;
	if (f->nodes[p->node].type == IBSM_SWITCH)
		return n;
	uint64_t g = p->guid;
	if (g == host_guid(1)) {
		if (!b)
			keys[n++] = 0x8011;
		keys[n++] = b ? 0x8012 : 0x0012;
	} else if (g == host_guid(2)) {
		keys[n++] = 0x0011;
	} else if (g == host_guid(3)) {
		keys[n++] = 0x8012;
	}
	return n;
}

/* A switch port facing another switch: its table is read (the SA shows it), never written. */
static int read_only(const struct fabric *f, uint32_t port)
{
	const struct ibsm_port *p = &f->ports[port];
	return f->nodes[p->node].type == IBSM_SWITCH && p->num && p->peer != IBSM_NONE &&
	       f->nodes[f->ports[p->peer].node].type == IBSM_SWITCH;
}

/* Every table the fabric holds is exactly the wanted keys (each once), the default at 0. */
static void assert_tables(const struct fsma_bed *b, int policy_b)
{
	const struct fabric *f = b->f;
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		uint16_t want[8];
		uint32_t n = wanted_keys(f, p, policy_b, want);
		if (!n || (!f->ports[p].num && f->nodes[f->ports[p].node].type != IBSM_SWITCH))
			continue;
		uint32_t cap = fsma_pkey_cap(b->fk, p), held = 0;
		g_assert_cmphex(fsma_pkey(b->fk, p, 0), ==, 0xffff);
		for (uint32_t i = 0; i < cap; i++) {
			uint16_t k = fsma_pkey(b->fk, p, i);
			if (!(k & 0x7fff))
				continue;
			held++;
			uint32_t j = 0;
			while (j < n && want[j] != k)
				j++;
			if (j == n)
				g_test_message("port %u index %u holds 0x%04x, not wanted", p, i, k);
			g_assert_cmpuint(j, <, n);
		}
		g_assert_cmpuint(held, ==, n);
	}
}

static int index_of(const struct fsma *fk, uint32_t port, uint16_t key)
{
	for (uint32_t i = 0; i < fsma_pkey_cap(fk, port); i++)
		if (fsma_pkey(fk, port, i) == key)
			return (int)i;
	return -1;
}

#define MAXB 2 /* P_Key blocks of the largest table here */

struct pk_table {
	uint16_t k[MAXB * PKEY_BLOCK_SIZE];
};

struct pk_blocks {             /* requests per block of one port's table */
	uint32_t b[MAXB];
};

struct pk_snapshot {
	uint32_t n_ports;
	struct pk_table *keys;     /* [n_ports] */
};

static void snapshot(const struct fsma_bed *b, struct pk_snapshot *s)
{
	s->n_ports = b->f->pub.n_ports;
	s->keys = g_new0(struct pk_table, s->n_ports);
	for (uint32_t p = 0; p < s->n_ports; p++) {
		if (!b->f->ports[p].num && b->f->nodes[b->f->ports[p].node].type != IBSM_SWITCH)
			continue;
		g_assert_cmpuint(fsma_pkey_cap(b->fk, p), <=, MAXB * PKEY_BLOCK_SIZE);
		for (uint32_t i = 0; i < fsma_pkey_cap(b->fk, p); i++)
			s->keys[p].k[i] = fsma_pkey(b->fk, p, i);
	}
}

/* P_KeyTable requests of method from record `from` on, per port and block. */
static void count_blocks(const struct fsma *fk, uint32_t from, uint8_t method, uint32_t n_ports,
			 struct pk_blocks *count)
{
	memset(count, 0, sizeof(*count) * n_ports);
	for (uint32_t i = from; i < fsma_nrec(fk); i++) {
		const struct fsma_rec *r = fsma_rec(fk, i);
		if (r->attr != IB_ATTR_PKEY_TBL || r->method != method)
			continue;
		g_assert_cmpuint(r->port, <, n_ports);
		g_assert_cmpuint(r->mod & 0xffff, <, MAXB);
		count[r->port].b[r->mod & 0xffff]++;
	}
}

/* Exactly one Set per block that changed between before and now, none for the others. */
static void assert_sets_where_changed(const struct fsma_bed *b, uint32_t from,
				      const struct pk_snapshot *before)
{
	uint32_t n = b->f->pub.n_ports, changed = 0;
	struct pk_blocks *sets = g_new0(struct pk_blocks, n);
	struct pk_snapshot now;
	snapshot(b, &now);
	count_blocks(b->fk, from, IB_MAD_METHOD_SET, n, sets);
	for (uint32_t p = 0; p < n; p++)
		for (uint32_t blk = 0; blk < MAXB; blk++) {
			int differs = memcmp(before->keys[p].k + blk * PKEY_BLOCK_SIZE,
					     now.keys[p].k + blk * PKEY_BLOCK_SIZE, PKEY_BLOCK_SIZE * 2) != 0;
			changed += differs;
			g_assert_cmpuint(sets[p].b[blk], ==, differs);
		}
	g_assert_cmpuint(changed, >, 0);
	g_free(sets);
	g_free(now.keys);
}

static void test_pkeys(void)
{
	struct fsma_bed b;
	struct program_report rep;
	struct pk_snapshot before;
	struct part_policy *pa = policy_a(), *pb = policy_b();
	struct fabric *shape = fx_line(2, 3, 0);
	fsma_bed_init(&b, shape, sm_port_of(shape), TIMEOUT_MS);
	fsma_bed_discover(&b);
	struct fabric *f = b.f;
	uint32_t n = f->pub.n_ports;
	struct pk_blocks *gets = g_new0(struct pk_blocks, n);

	/* first pass: every table read once, block by block; one Set per block that differs */
	snapshot(&b, &before);
	uint32_t mark = fsma_nrec(b.fk);
	g_assert_cmpint(fsma_bed_program(&b, pa, 1, &rep), ==, 0);
	assert_all_answered(b.fk, mark);
	count_blocks(b.fk, mark, IB_MAD_METHOD_GET, n, gets);
	for (uint32_t p = 0; p < n; p++) {
		uint16_t want[8];
		int table = (wanted_keys(f, p, 0, want) &&
			     (f->ports[p].num || f->nodes[f->ports[p].node].type == IBSM_SWITCH)) ||
			    read_only(f, p);
		uint32_t blocks = table ? (fsma_pkey_cap(b.fk, p) + PKEY_BLOCK_SIZE - 1) / PKEY_BLOCK_SIZE : 0;
		for (uint32_t blk = 0; blk < MAXB; blk++)
			g_assert_cmpuint(gets[p].b[blk], ==, blk < blocks);
	}
	assert_sets_where_changed(&b, mark, &before);
	g_free(before.keys);
	assert_tables(&b, 0);
	uint32_t h1 = fx_ca_port(&f->pub, 1, 1), h1_sw = f->ports[h1].peer;
	int blue = index_of(b.fk, h1, 0x8011), red = index_of(b.fk, h1, 0x0012);
	g_assert_cmpint(blue, >, 0);
	g_assert_cmpint(red, >, blue); /* so a key that moved to the lowest free index shows */
	g_assert_cmpint(index_of(b.fk, h1_sw, 0x8011), ==, blue);
	g_assert_cmpint(index_of(b.fk, h1_sw, 0x0012), ==, red);

	/* unchanged: the memory answers, nothing read or written */
	fsma_bed_discover(&b);
	mark = fsma_nrec(b.fk);
	g_assert_cmpint(fsma_bed_program(&b, pa, 0, &rep), ==, 0);
	assert_nothing_written(b.fk, mark);

	/* h1 leaves blue and becomes a full member of red: red keeps its index on h1 and on the
	 * switch port facing it, one block Set each, nothing read */
	fsma_bed_discover(&b);
	f = b.f;
	snapshot(&b, &before);
	mark = fsma_nrec(b.fk);
	g_assert_cmpint(fsma_bed_program(&b, pb, 0, &rep), ==, 0);
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_GET, IB_ATTR_PKEY_TBL, FSMA_ANY), ==, 0);
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_SET, IB_ATTR_PKEY_TBL, FSMA_ANY), ==, 2);
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_SET, FSMA_ANY, FSMA_ANY), ==, 2);
	assert_sets_where_changed(&b, mark, &before);
	g_free(before.keys);
	g_assert_cmpint(index_of(b.fk, h1, 0x8012), ==, red);
	g_assert_cmpint(index_of(b.fk, h1_sw, 0x8012), ==, red);
	g_assert_cmphex(fsma_pkey(b.fk, h1, (uint32_t)blue), ==, 0);
	assert_tables(&b, 1);

	/* switch 0 reboots: its tables are read and rewritten; the CAs behind its links are read
	 * (their ports came back) but hold the right keys, so they are not written; switch 1's
	 * side of the fabric is neither read nor written */
	uint32_t sw0 = f->switches[0].node, sw1 = f->switches[1].node;
	fsma_reset_switch(b.fk, sw0);
	fsma_bed_discover(&b);
	f = b.f;
	snapshot(&b, &before);
	mark = fsma_nrec(b.fk);
	g_assert_cmpint(fsma_bed_program(&b, pb, 0, &rep), ==, 0);
	assert_all_answered(b.fk, mark);
	count_blocks(b.fk, mark, IB_MAD_METHOD_GET, n, gets);
	for (uint32_t p = 0; p < n; p++) {
		const struct ibsm_port *port = &f->ports[p];
		uint32_t node = port->node;
		uint32_t peer_node = port->peer != IBSM_NONE ? f->ports[port->peer].node : IBSM_NONE;
		int on_sw0 = node == sw0 || peer_node == sw0;
		uint16_t want[8];
		int table = (wanted_keys(f, p, 1, want) &&
			     (port->num || f->nodes[node].type == IBSM_SWITCH)) || read_only(f, p);
		uint32_t blocks = table ? (fsma_pkey_cap(b.fk, p) + PKEY_BLOCK_SIZE - 1) / PKEY_BLOCK_SIZE : 0;
		for (uint32_t blk = 0; blk < MAXB; blk++)
			g_assert_cmpuint(gets[p].b[blk], ==, on_sw0 && blk < blocks);
		if (f->nodes[node].type != IBSM_SWITCH || node == sw1)
			g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_SET, IB_ATTR_PKEY_TBL, node), ==, 0);
	}
	assert_sets_where_changed(&b, mark, &before);
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_SET, IB_ATTR_PKEY_TBL, sw0), >, 0);
	g_free(before.keys);
	assert_tables(&b, 1);
	assert_links_active(&b);

	g_free(gets);
	part_policy_free(pa);
	part_policy_free(pb);
	fsma_bed_clear(&b);
}

/* ---- (e) programmer_forget ------------------------------------------------------------------- */

static void test_forget_reads_again(void)
{
	struct fsma_bed b;
	struct program_report rep;
	struct part_policy *pa = policy_a();
	bed_up(&b, fx_line(2, 3, 0), 0, pa);
	/* (one LFT block per switch here) */
	uint32_t nblocks = (b.r->stride + LFT_BLOCK_SIZE - 1) / LFT_BLOCK_SIZE;
	programmer_forget(b.prog);
	fsma_bed_discover(&b);
	uint32_t mark = fsma_nrec(b.fk);
	g_assert_cmpint(fsma_bed_program(&b, pa, 0, &rep), ==, 0);
	assert_all_answered(b.fk, mark);
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_SET, FSMA_ANY, FSMA_ANY), ==, 0);
	for (uint32_t s = 0; s < b.f->pub.n_switches; s++)
		g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_GET, IB_ATTR_LINEARFORWTBL,
					    b.f->switches[s].node), ==, nblocks);
	uint32_t want_gets = 0;
	for (uint32_t p = 0; p < b.f->pub.n_ports; p++) {
		uint16_t want[8];
		if ((wanted_keys(b.f, p, 0, want) &&
		     (b.f->ports[p].num || b.f->nodes[b.f->ports[p].node].type == IBSM_SWITCH)) ||
		    read_only(b.f, p))
			want_gets += (fsma_pkey_cap(b.fk, p) + PKEY_BLOCK_SIZE - 1) / PKEY_BLOCK_SIZE;
	}
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_GET, IB_ATTR_PKEY_TBL, FSMA_ANY), ==, want_gets);
	/* and what was read is remembered again */
	fsma_bed_discover(&b);
	mark = fsma_nrec(b.fk);
	g_assert_cmpint(fsma_bed_program(&b, pa, 0, &rep), ==, 0);
	assert_nothing_written(b.fk, mark);
	part_policy_free(pa);
	fsma_bed_clear(&b);
}

/* {inbound, outbound} enforcement bits every switch port facing a CA holds must equal want */
static uint32_t assert_enforcement(const struct fsma_bed *b, int in, int out)
{
	const struct fabric *f = b->f;
	uint32_t n = 0;
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		const struct ibsm_port *port = &f->ports[p];
		if (!port->num || f->nodes[port->node].type != IBSM_SWITCH || port->peer == IBSM_NONE ||
		    f->nodes[f->ports[port->peer].node].type == IBSM_SWITCH)
			continue;
		uint8_t pi[64];
		fsma_portinfo(b->fk, p, pi);
		g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_PART_EN_INB_F), ==, in);
		g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_PART_EN_OUTB_F), ==, out);
		n++;
	}
	g_assert_cmpuint(n, >, 0);
	return n;
}

/* part_enforce: both at bring-up; a change (SIGHUP) rewrites the ports already ACTIVE, once;
 * a new master finding bits it does not want (after OpenSM) clears them */
static void test_part_enforce(void)
{
	struct fsma_bed b;
	struct program_report rep;
	struct part_policy *pa = policy_a();
	struct fabric *shape = fx_line(2, 3, 0);
	bed_up(&b, shape, 0, pa);
	uint32_t n = assert_enforcement(&b, 1, 1);

	g_free(b.o.part_enforce);
	b.o.part_enforce = g_strdup("in");
	fsma_bed_discover(&b);
	uint32_t mark = fsma_nrec(b.fk);
	g_assert_cmpint(fsma_bed_program(&b, pa, 0, &rep), ==, 0);
	assert_enforcement(&b, 1, 0);
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_SET, IB_ATTR_PORT_INFO, FSMA_ANY), ==, n);
	fsma_bed_discover(&b);
	mark = fsma_nrec(b.fk);
	g_assert_cmpint(fsma_bed_program(&b, pa, 0, &rep), ==, 0);
	assert_nothing_written(b.fk, mark);

	/* a new master (its memory empty): bits it does not want are changed (in -> both) */
	programmer_forget(b.prog);
	g_free(b.o.part_enforce);
	b.o.part_enforce = g_strdup("both");
	fsma_bed_discover(&b);
	mark = fsma_nrec(b.fk);
	g_assert_cmpint(fsma_bed_program(&b, pa, 1, &rep), ==, 0);
	assert_enforcement(&b, 1, 1);
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_SET, IB_ATTR_PORT_INFO, FSMA_ANY), >=, n);

	/* a new master (its memory empty) that wants no enforcement: the bits are cleared */
	programmer_forget(b.prog);
	b.o.no_part_enforce = 1;
	fsma_bed_discover(&b);
	g_assert_cmpint(fsma_bed_program(&b, pa, 1, &rep), ==, 0);
	assert_enforcement(&b, 0, 0);
	part_policy_free(pa);
	fsma_bed_clear(&b);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	log_set_quiet(!g_getenv("IBSM_TEST_LOG")); /* judged from the fake, not from the log */
	g_test_add_func("/program/bringup/line", test_bringup_line);
	g_test_add_func("/program/bringup/fat_tree_lmc1", test_bringup_fat_tree_lmc);
	g_test_add_func("/program/bringup/many_blocks", test_bringup_many_blocks);
	g_test_add_func("/program/lft/diff", test_lft_diff);
	g_test_add_func("/program/lft/reset_switch", test_lft_reset_switch);
	g_test_add_func("/program/lft/refused_block", test_lft_refused_block);
	g_test_add_func("/program/lost_answers", test_lost_answers);
	g_test_add_func("/program/pkeys", test_pkeys);
	g_test_add_func("/program/part_enforce", test_part_enforce);
	g_test_add_func("/program/forget", test_forget_reads_again);
	return g_test_run();
}
