/* test_sminfo.c - the SM's identity on the wire against a fake fabric: how it answers another
 * SM's SMInfo Get and Set (GUID, priority, state, ActCount; the SM_Key only to whoever presents
 * it), master or standby after asking every other SM (an SM of another SM_Key ignored), the
 * standby's poll of the master, and handover both ways (HANDOVER, ACKNOWLEDGE). Judged from
 * the MADs the SM sent, as the fake fabric received them. */
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric/discovery.h"
#include "fabric_fixture.h"
#include "fake_sma.h"
#include "sm/sminfo.h"

#define TIMEOUT_MS 20

/* One switch, CAs 0..2 (port GUIDs ascending); the SM on CA `ours`, maybe another SM. */
struct smbed {
	struct fabric *shape;
	struct fsma *fk;
	struct sm_options o;
	struct sm sm;
};

static uint32_t ca_port(const struct smbed *b, uint32_t n)
{
	return fx_ca_port(&b->shape->pub, n, 1);
}

static void smbed_init(struct smbed *b, uint32_t ours, const struct fsma_sm *other, uint8_t priority,
		       uint64_t sm_key)
{
	memset(b, 0, sizeof(*b));
	b->shape = fx_line(1, 3, 0);
	b->fk = fsma_new(b->shape, ca_port(b, ours));
	if (other)
		fsma_set_other_sm(b->fk, other);
	struct transport_io io = fsma_io(b->fk);
	struct transport_cfg cfg = { .window = 8, .timeout_ms = TIMEOUT_MS, .retries = 1 };
	options_defaults(&b->o);
	b->o.sm_priority = priority;
	b->o.sm_key = sm_key;
	b->sm.opt = &b->o;
	b->sm.t = transport_new(&io, &cfg);
	b->sm.dispatch = dispatch_new(b->sm.t);
	b->sm.state = IB_SM_DISCOVERING;
	sminfo_agent_register(&b->sm);
	GError *err = NULL;
	b->sm.fabric = discover_fabric(b->sm.t, &b->sm.stop, 1, NULL, 0, NULL, &err);
	g_assert_no_error(err);
	g_assert_cmpuint(b->sm.fabric->pub.sm_port, ==, ca_port(b, ours));
	b->sm.port_guid = b->sm.fabric->ports[b->sm.fabric->pub.sm_port].guid;
	if (other && other->port != FSMA_ANY) /* discovery saw IsSM on the other SM's port */
		g_assert_true(b->sm.fabric->ports[other->port].flags & IBSM_PORT_ISSM);
}

static void smbed_clear(struct smbed *b)
{
	fabric_unref(b->sm.fabric);
	dispatch_free(b->sm.dispatch);
	transport_free(b->sm.t);
	fsma_free(b->fk);
	fabric_unref(b->shape);
	options_free(&b->o);
}

/* ---- our answers ------------------------------------------------------------------------------ */

/* Another SM asks us (class DR or LID-routed, Get or Set, presenting sm_key): the one MAD we
 * send back. */
static const uint8_t *ask(struct smbed *b, uint8_t mgmt_class, uint8_t method, uint32_t mod,
			  uint64_t sm_key, uint64_t tid)
{
	uint8_t data[64] = { 0 };
	mad_set_field64(data, 0, IB_SMINFO_KEY_F, sm_key);
	uint32_t before = fsma_nresponses(b->fk);
	fsma_inject(b->fk, mgmt_class, method, IB_ATTR_SMINFO, mod, data, tid);
	transport_poll(b->sm.t, 200, 1);
	g_assert_cmpuint(fsma_nresponses(b->fk), ==, before + 1);
	const uint8_t *mad = fsma_response(b->fk, before);
	g_assert_cmpuint(mad[1], ==, mgmt_class);
	g_assert_cmphex(mad[3], ==, IB_MAD_METHOD_GET_RESPONSE);
	g_assert_cmphex(mad_get_field64((void *)mad, 0, IB_MAD_TRID_F), ==, tid);
	g_assert_cmphex(mad_get_field((void *)mad, 0, IB_MAD_ATTRID_F), ==, IB_ATTR_SMINFO);
	g_assert_cmphex(((mad[4] << 8) | mad[5]) & 0x7fff, ==, 0); /* status */
	g_assert_cmpuint(!!(mad[4] & 0x80), ==, mgmt_class == IB_SMI_DIRECT_CLASS); /* D bit */
	return mad;
}

static uint64_t key_of(const uint8_t *mad)
{
	return mad_get_field64((void *)(mad + IB_SMP_DATA_OFFS), 0, IB_SMINFO_KEY_F);
}

static void test_answer_get(void)
{
	struct smbed b;
	smbed_init(&b, 1, NULL, 9, 0x1234);
	b.sm.state = IB_SM_MASTER;
	b.sm.act_count = 5;
	/* ActCount: the sweeps plus the SMP requests sent (discovery's, here), as OpenSM counts */
	uint32_t act = 5;
	for (int i = 0; i < 64; i++)
		act += (uint32_t)(transport_stats(b.sm.t)->by_attr[0][i] + transport_stats(b.sm.t)->by_attr[1][i]);
	g_assert_cmpuint(act, >, 5);
	const uint8_t *mad = ask(&b, IB_SMI_DIRECT_CLASS, IB_MAD_METHOD_GET, 0, 0, 0x1111);
	const uint8_t *d = mad + IB_SMP_DATA_OFFS;
	g_assert_cmphex(mad_get_field64((void *)d, 0, IB_SMINFO_GUID_F), ==, b.sm.port_guid);
	g_assert_cmphex(b.sm.port_guid, ==, b.shape->ports[ca_port(&b, 1)].guid);
	g_assert_cmpuint(mad_get_field((void *)d, 0, IB_SMINFO_PRIO_F), ==, 9);
	g_assert_cmpuint(mad_get_field((void *)d, 0, IB_SMINFO_STATE_F), ==, IB_SM_MASTER);
	g_assert_cmpuint(mad_get_field((void *)d, 0, IB_SMINFO_ACT_F), ==, act);
	g_assert_cmphex(key_of(mad), ==, 0); /* a configured key is hidden unless presented */
	g_assert_cmphex(key_of(ask(&b, IB_SMI_DIRECT_CLASS, IB_MAD_METHOD_GET, 0, 0x1234, 0x1112)), ==, 0x1234);
	g_assert_cmphex(key_of(ask(&b, IB_SMI_DIRECT_CLASS, IB_MAD_METHOD_GET, 0, 0x9999, 0x1113)), ==, 0);
	/* LID-routed SMInfo too */
	mad = ask(&b, IB_SMI_CLASS, IB_MAD_METHOD_GET, 0, 0x1234, 0x2222);
	g_assert_cmphex(key_of(mad), ==, 0x1234);
	g_assert_cmphex(mad_get_field64((void *)(mad + IB_SMP_DATA_OFFS), 0, IB_SMINFO_GUID_F), ==, b.sm.port_guid);
	/* the state as it is now */
	b.sm.state = IB_SM_STANDBY;
	mad = ask(&b, IB_SMI_DIRECT_CLASS, IB_MAD_METHOD_GET, 0, 0, 0x3333);
	g_assert_cmpuint(mad_get_field((void *)(mad + IB_SMP_DATA_OFFS), 0, IB_SMINFO_STATE_F), ==, IB_SM_STANDBY);
	/* OpenSM's default key is no secret: shown to anyone */
	b.o.sm_key = 0;
	g_assert_cmphex(key_of(ask(&b, IB_SMI_DIRECT_CLASS, IB_MAD_METHOD_GET, 0, 0, 0x4444)), ==, SM_KEY_DEFAULT);
	g_assert_cmpuint(fsma_nrec(b.fk), >, 0);
	smbed_clear(&b);
}

/* An SMInfo Set the master is not to act on (HANDOVER to a master, ACKNOWLEDGE with no
 * handover pending, DISABLE, STANDBY): answered with our state, changing nothing. */
static void test_answer_set(void)
{
	struct smbed b;
	smbed_init(&b, 1, NULL, 3, 0x1234);
	b.sm.state = IB_SM_MASTER;
	uint32_t mark = fsma_nrec(b.fk);
	for (uint32_t mod = 1; mod <= 4; mod++) {
		const uint8_t *mad = ask(&b, IB_SMI_DIRECT_CLASS, IB_MAD_METHOD_SET, mod, 0x1234, 0x500 + mod);
		const uint8_t *d = mad + IB_SMP_DATA_OFFS;
		g_assert_cmpuint(mad_get_field((void *)d, 0, IB_SMINFO_STATE_F), ==, IB_SM_MASTER);
		g_assert_cmphex(mad_get_field64((void *)d, 0, IB_SMINFO_GUID_F), ==, b.sm.port_guid);
		g_assert_cmpuint(mad_get_field((void *)d, 0, IB_SMINFO_PRIO_F), ==, 3);
		g_assert_cmphex(key_of(mad), ==, 0);
		g_assert_cmpuint(b.sm.state, ==, IB_SM_MASTER);
		g_assert_false(b.sm.takeover_pending);
		g_assert_false(b.sm.handover_acked);
	}
	g_assert_cmpuint(fsma_nrec(b.fk), ==, mark); /* nothing sent: no ACKNOWLEDGE */
	smbed_clear(&b);
}

/* ---- master or standby ------------------------------------------------------------------------ */

struct poll_case {
	const char *what;
	uint32_t other_ca;          /* ours is CA 1: CA 0 has a lower port GUID, CA 2 a higher */
	uint8_t our_prio, other_prio, other_state;
	int answering;
	int standby;                /* sminfo_poll_others() */
	int hand_over;              /* it names the other SM to hand over to */
	uint8_t our_state;          /* 0: DISCOVERING */
	uint64_t other_key;         /* 0: ours (0x77) */
	int recheck;                /* sm.sminfo_recheck after the poll */
};

#define OTHER_KEY 0x99 /* not ours, and shown to anyone */

static const struct poll_case poll_cases[] = {
	{ "better master", 2, 5, 10, IB_SM_MASTER, 1, 1, 0, 0, 0, 0 },
	{ "worse master (we wait for its handover)", 2, 10, 5, IB_SM_MASTER, 1, 1, 0, 0, 0, 0 },
	{ "master, equal priority, higher GUID", 2, 5, 5, IB_SM_MASTER, 1, 1, 0, 0, 0, 0 },
	{ "discovering, higher priority", 2, 5, 10, IB_SM_DISCOVERING, 1, 1, 0, 0, 0, 0 },
	{ "discovering, equal priority, lower GUID", 0, 5, 5, IB_SM_DISCOVERING, 1, 1, 0, 0, 0, 0 },
	{ "discovering, equal priority, higher GUID", 2, 5, 5, IB_SM_DISCOVERING, 1, 0, 0, 0, 0, 0 },
	{ "discovering, lower priority, lower GUID", 0, 10, 5, IB_SM_DISCOVERING, 1, 0, 0, 0, 0, 0 },
	{ "standby, higher priority: hand over to it", 2, 5, 10, IB_SM_STANDBY, 1, 0, 1, 0, 0, 0 },
	{ "standby, equal priority, lower GUID: hand over", 0, 5, 5, IB_SM_STANDBY, 1, 0, 1, 0, 0, 0 },
	{ "standby, lower priority", 0, 10, 5, IB_SM_STANDBY, 1, 0, 0, 0, 0, 0 },
	{ "not active, higher priority", 0, 5, 10, IB_SM_NOTACTIVE, 1, 0, 0, 0, 0, 0 },
	{ "master not answering", 2, 5, 10, IB_SM_MASTER, 0, 0, 0, 0, 0, 0 },
	{ "we are master, a better SM discovering: ask again", 2, 5, 10, IB_SM_DISCOVERING, 1, 0, 0,
	  IB_SM_MASTER, 0, 1 },
	{ "a better master of another SM_Key: ignored", 2, 5, 10, IB_SM_MASTER, 1, 0, 0, 0, OTHER_KEY, 0 },
	{ "a better standby of another SM_Key: not handed to", 2, 5, 10, IB_SM_STANDBY, 1, 0, 0, 0,
	  OTHER_KEY, 0 },
};

static void test_poll_others(void)
{
	for (size_t c = 0; c < G_N_ELEMENTS(poll_cases); c++) {
		const struct poll_case *pc = &poll_cases[c];
		g_test_message("case: %s", pc->what);
		struct smbed b;
		struct fabric *shape = fx_line(1, 3, 0);
		struct fsma_sm other = { .port = fx_ca_port(&shape->pub, pc->other_ca, 1),
					 .priority = pc->other_prio, .state = pc->other_state,
					 .sm_key = pc->other_key ? pc->other_key : 0x77, .act_count = 9,
					 .answering = pc->answering, .reveals_key = 1 };
		fabric_unref(shape);
		smbed_init(&b, 1, &other, pc->our_prio, 0x77);
		if (pc->our_state)
			b.sm.state = pc->our_state;
		uint64_t other_guid = b.shape->ports[other.port].guid;
		g_assert_cmpuint(other_guid < b.sm.port_guid, ==, pc->other_ca == 0);
		uint32_t mark = fsma_nrec(b.fk);
		uint64_t hand_to = 0xdead;
		g_assert_cmpint(sminfo_poll_others(&b.sm, &hand_to), ==, pc->standby);
		g_assert_cmphex(b.sm.master_guid, ==, pc->standby ? other_guid : 0);
		g_assert_cmphex(hand_to, ==, pc->hand_over ? other_guid : 0);
		g_assert_cmpint(b.sm.sminfo_recheck, ==, pc->recheck);
		/* asked the other SM, and only it, presenting our SM_Key */
		uint32_t asked = fsma_count(b.fk, mark, IB_MAD_METHOD_GET, IB_ATTR_SMINFO, FSMA_ANY);
		g_assert_cmpuint(asked, ==, pc->answering ? 1 : 2); /* not answering: one retry */
		g_assert_cmpuint(fsma_nrec(b.fk) - mark, ==, asked);
		for (uint32_t i = mark; i < fsma_nrec(b.fk); i++) {
			const struct fsma_rec *r = fsma_rec(b.fk, i);
			g_assert_cmpuint(r->port, ==, other.port);
			g_assert_cmphex(mad_get_field64((void *)r->data, 0, IB_SMINFO_KEY_F), ==, 0x77);
			g_assert_cmpuint(r->outcome, ==, pc->answering ? FSMA_ANSWERED : FSMA_BOUNCED);
		}
		smbed_clear(&b);
	}
}

/* The other SM sits on port 2 of a dual-port CA (both ports cabled): it must be asked on that
 * port, not through port 1 (whose SMInfo bounces), or we would become master beside it. */
static void test_poll_dual_port_ca(void)
{
	struct fx_builder x;
	fx_builder_init(&x);
	uint32_t sw = fx_add_switch(&x, 4, "sw");
	uint32_t ours = fx_add_ca(&x, 1, "ours");
	uint32_t dual = fx_add_ca(&x, 2, "dual");
	fx_link(&x, sw, 1, ours, 1);
	fx_link(&x, sw, 2, dual, 1);
	fx_link(&x, sw, 3, dual, 2);
	struct fabric *shape = fx_finish(&x, 0);
	uint32_t our_port = UINT32_MAX, other_port = UINT32_MAX;
	for (uint32_t n = 0; n < shape->pub.n_nodes; n++) {
		if (!strcmp(shape->nodes[n].desc, "ours"))
			our_port = shape->nodes[n].port0 + 1;
		if (!strcmp(shape->nodes[n].desc, "dual"))
			other_port = shape->nodes[n].port0 + 2;
	}
	g_assert_cmpuint(our_port, !=, UINT32_MAX);
	g_assert_cmpuint(other_port, !=, UINT32_MAX);
	struct fsma *fk = fsma_new(shape, our_port);
	struct fsma_sm other = { .port = other_port, .priority = 10, .state = IB_SM_MASTER,
				 .sm_key = SM_KEY_DEFAULT, .act_count = 3, .answering = 1 };
	fsma_set_other_sm(fk, &other);
	struct transport_io io = fsma_io(fk);
	struct transport_cfg cfg = { .window = 8, .timeout_ms = TIMEOUT_MS, .retries = 1 };
	struct sm_options o;
	options_defaults(&o);
	struct sm sm = { .opt = &o, .state = IB_SM_DISCOVERING };
	sm.t = transport_new(&io, &cfg);
	GError *err = NULL;
	sm.fabric = discover_fabric(sm.t, &sm.stop, 1, NULL, 0, NULL, &err);
	g_assert_no_error(err);
	sm.port_guid = sm.fabric->ports[sm.fabric->pub.sm_port].guid;
	uint32_t mark = fsma_nrec(fk);
	g_assert_cmpint(sminfo_poll_others(&sm, NULL), ==, 1);
	g_assert_cmphex(sm.master_guid, ==, shape->ports[other_port].guid);
	for (uint32_t i = mark; i < fsma_nrec(fk); i++)
		g_assert_cmpuint(fsma_rec(fk, i)->port, ==, other_port);
	/* the standby's poll of the master goes to the same port */
	mark = fsma_nrec(fk);
	g_assert_cmpint(sminfo_poll_master(&sm), ==, 1);
	g_assert_cmpuint(fsma_count(fk, mark, IB_MAD_METHOD_GET, IB_ATTR_SMINFO, FSMA_ANY), ==, 1);
	g_assert_cmpuint(fsma_rec(fk, mark)->port, ==, other_port);
	fabric_unref(sm.fabric);
	transport_free(sm.t);
	fsma_free(fk);
	fabric_unref(shape);
	options_free(&o);
}

static void test_poll_others_alone(void)
{
	struct smbed b;
	smbed_init(&b, 1, NULL, 0, 0);
	uint32_t mark = fsma_nrec(b.fk);
	g_assert_cmpint(sminfo_poll_others(&b.sm, NULL), ==, 0);
	g_assert_cmphex(b.sm.master_guid, ==, 0);
	g_assert_cmpuint(fsma_nrec(b.fk), ==, mark); /* our own IsSM port is not asked */
	smbed_clear(&b);
}

static void test_poll_master(void)
{
	struct smbed b;
	struct fabric *shape = fx_line(1, 3, 0);
	struct fsma_sm other = { .port = fx_ca_port(&shape->pub, 2, 1), .priority = 10,
				 .state = IB_SM_MASTER, .sm_key = 1, .answering = 1 };
	fabric_unref(shape);
	smbed_init(&b, 1, &other, 5, 0);
	g_assert_cmpint(sminfo_poll_master(&b.sm), ==, 0); /* no master known yet */
	g_assert_cmpint(sminfo_poll_others(&b.sm, NULL), ==, 1);
	b.sm.state = IB_SM_STANDBY;
	uint32_t mark = fsma_nrec(b.fk);
	g_assert_cmpint(sminfo_poll_master(&b.sm), ==, 1);
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_GET, IB_ATTR_SMINFO, FSMA_ANY), ==, 1);
	g_assert_cmpuint(fsma_rec(b.fk, mark)->port, ==, other.port);
	/* the master steps down, comes back, then stops answering */
	other.state = IB_SM_STANDBY;
	fsma_set_other_sm(b.fk, &other);
	g_assert_cmpint(sminfo_poll_master(&b.sm), ==, 0);
	other.state = IB_SM_MASTER;
	fsma_set_other_sm(b.fk, &other);
	g_assert_cmpint(sminfo_poll_master(&b.sm), ==, 1);
	other.answering = 0;
	fsma_set_other_sm(b.fk, &other);
	g_assert_cmpint(sminfo_poll_master(&b.sm), ==, 0);
	/* a master GUID that is no port of the fabric: nothing to ask */
	b.sm.master_guid = 0x1234;
	mark = fsma_nrec(b.fk);
	g_assert_cmpint(sminfo_poll_master(&b.sm), ==, 0);
	g_assert_cmpuint(fsma_nrec(b.fk), ==, mark);
	smbed_clear(&b);
}

/* ---- handover --------------------------------------------------------------------------------- */

/* Master, a better SM in STANDBY that acknowledges: one SMInfo Set (HANDOVER) to its port with
 * our GUID, our key and state MASTER; its ACKNOWLEDGE makes it the master we now follow. */
static void test_hand_over_acknowledged(void)
{
	struct smbed b;
	struct fabric *shape = fx_line(1, 3, 0);
	struct fsma_sm other = { .port = fx_ca_port(&shape->pub, 2, 1), .priority = 15,
				 .state = IB_SM_STANDBY, .sm_key = 0x77, .answering = 1,
				 .acknowledges = 1 };
	fabric_unref(shape);
	smbed_init(&b, 1, &other, 0, 0x77);
	b.sm.state = IB_SM_MASTER;
	uint64_t other_guid = b.shape->ports[other.port].guid, hand_to = 0;
	g_assert_cmpint(sminfo_poll_others(&b.sm, &hand_to), ==, 0);
	g_assert_cmphex(hand_to, ==, other_guid);
	uint32_t mark = fsma_nrec(b.fk), resp = fsma_nresponses(b.fk);
	g_assert_cmpint(sminfo_hand_over(&b.sm, hand_to), ==, 1);
	g_assert_cmphex(b.sm.master_guid, ==, other_guid);
	g_assert_cmpuint(fsma_count(b.fk, mark, IB_MAD_METHOD_SET, IB_ATTR_SMINFO, FSMA_ANY), ==, 1);
	const struct fsma_rec *r = fsma_rec(b.fk, mark);
	g_assert_cmpuint(r->mod, ==, IB_SMINFO_HANDOVER);
	g_assert_cmpuint(r->port, ==, other.port);
	g_assert_cmphex(mad_get_field64((void *)r->data, 0, IB_SMINFO_GUID_F), ==, b.sm.port_guid);
	g_assert_cmphex(mad_get_field64((void *)r->data, 0, IB_SMINFO_KEY_F), ==, 0x77);
	g_assert_cmpuint(mad_get_field((void *)r->data, 0, IB_SMINFO_STATE_F), ==, IB_SM_MASTER);
	/* the ACKNOWLEDGE (a Set to us) was answered */
	g_assert_cmpuint(fsma_nresponses(b.fk), ==, resp + 1);
	g_assert_cmpuint(b.sm.handover_to, ==, 0);
	/* the next poll finds it master: we stand by */
	g_assert_cmpint(sminfo_poll_others(&b.sm, &hand_to), ==, 1);
	smbed_clear(&b);
}

/* An SM that answers the HANDOVER but never acknowledges: we stay master. */
static void test_hand_over_unacknowledged(void)
{
	struct smbed b;
	struct fabric *shape = fx_line(1, 3, 0);
	struct fsma_sm other = { .port = fx_ca_port(&shape->pub, 2, 1), .priority = 15,
				 .state = IB_SM_STANDBY, .sm_key = 0x77, .answering = 1 };
	fabric_unref(shape);
	smbed_init(&b, 1, &other, 0, 0x77);
	b.sm.state = IB_SM_MASTER;
	b.sm.master_guid = 0;
	uint64_t other_guid = b.shape->ports[other.port].guid, hand_to = 0;
	g_assert_cmpint(sminfo_hand_over(&b.sm, other_guid), ==, 0);
	g_assert_cmphex(b.sm.master_guid, ==, 0);
	/* not handed to again at the next poll (a minute later it is) */
	g_assert_cmpint(sminfo_poll_others(&b.sm, &hand_to), ==, 0);
	g_assert_cmphex(hand_to, ==, 0);
	b.sm.handover_retry_at = 0;
	g_assert_cmpint(sminfo_poll_others(&b.sm, &hand_to), ==, 0);
	g_assert_cmphex(hand_to, ==, other_guid);
	/* a late ACKNOWLEDGE, with nothing pending, changes nothing */
	uint8_t ack[64] = { 0 };
	mad_set_field64(ack, 0, IB_SMINFO_GUID_F, b.shape->ports[other.port].guid);
	fsma_inject(b.fk, IB_SMI_DIRECT_CLASS, IB_MAD_METHOD_SET, IB_ATTR_SMINFO, IB_SMINFO_ACKNOWLEDGE,
		    ack, 0x77);
	transport_poll(b.sm.t, 200, 1);
	g_assert_false(b.sm.handover_acked);
	smbed_clear(&b);
}

/* Standby, the master hands over: the answer says MASTER, an ACKNOWLEDGE goes to the old
 * master's port with our GUID, and the takeover sweep is asked for. From another SM_Key, or
 * while we are master ourselves: refused, nothing sent. */
static void test_take_handover(void)
{
	struct smbed b;
	struct fabric *shape = fx_line(1, 3, 0);
	struct fsma_sm master = { .port = fx_ca_port(&shape->pub, 0, 1), .priority = 0,
				  .state = IB_SM_MASTER, .sm_key = 0x77, .answering = 1 };
	fabric_unref(shape);
	smbed_init(&b, 1, &master, 15, 0x77);
	uint64_t master_guid = b.shape->ports[master.port].guid;
	uint8_t data[64] = { 0 };
	mad_set_field64(data, 0, IB_SMINFO_GUID_F, master_guid);

	struct { uint8_t state; uint64_t key; int takes; } cases[] = {
		{ IB_SM_MASTER, 0x77, 0 },      /* we are master: not ours to take */
		{ IB_SM_STANDBY, 0x55, 0 },     /* another management domain */
		{ IB_SM_STANDBY, 0, 1 },        /* a hidden key (OpenSM hides it from a standby) */
		{ IB_SM_STANDBY, 0x77, 1 },
	};
	for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
		b.sm.state = cases[c].state;
		b.sm.takeover_pending = 0;
		b.sm.handed_over_by = 0;
		mad_set_field64(data, 0, IB_SMINFO_KEY_F, cases[c].key);
		uint32_t mark = fsma_nrec(b.fk), before = fsma_nresponses(b.fk);
		fsma_inject(b.fk, IB_SMI_DIRECT_CLASS, IB_MAD_METHOD_SET, IB_ATTR_SMINFO,
			    IB_SMINFO_HANDOVER, data, 0x900 + c);
		transport_poll(b.sm.t, 200, 1);
		transport_drain(b.sm.t, &b.sm.stop);
		g_assert_cmpuint(fsma_nresponses(b.fk), ==, before + 1);
		const uint8_t *mad = fsma_response(b.fk, before);
		g_assert_cmpuint(mad_get_field((void *)(mad + IB_SMP_DATA_OFFS), 0, IB_SMINFO_STATE_F), ==,
				 cases[c].takes ? IB_SM_MASTER : cases[c].state);
		/* refused for its key: an error status, the sender need not wait for an ACK */
		g_assert_cmphex(((mad[4] << 8) | mad[5]) & 0x7fff, ==,
				cases[c].key == 0x55 ? 0x1c : 0);
		g_assert_cmpint(b.sm.takeover_pending, ==, cases[c].takes);
		g_assert_cmphex(b.sm.handed_over_by, ==, cases[c].takes ? master_guid : 0);
		uint32_t acks = fsma_count(b.fk, mark, IB_MAD_METHOD_SET, IB_ATTR_SMINFO, FSMA_ANY);
		g_assert_cmpuint(acks, ==, cases[c].takes ? 1 : 0);
		if (acks) {
			const struct fsma_rec *r = fsma_rec(b.fk, mark);
			g_assert_cmpuint(r->mod, ==, IB_SMINFO_ACKNOWLEDGE);
			g_assert_cmpuint(r->port, ==, master.port);
			g_assert_cmphex(mad_get_field64((void *)r->data, 0, IB_SMINFO_GUID_F), ==,
					b.sm.port_guid);
			g_assert_cmpuint(mad_get_field((void *)r->data, 0, IB_SMINFO_STATE_F), ==,
					 IB_SM_MASTER);
		}
	}
	/* the takeover sweep's poll: the old master still says MASTER (our ACK not yet seen by
	 * it): not obeyed, once */
	g_assert_cmpint(sminfo_poll_others(&b.sm, NULL), ==, 0);
	g_assert_cmphex(b.sm.handed_over_by, ==, 0);
	g_assert_cmpint(sminfo_poll_others(&b.sm, NULL), ==, 1);
	smbed_clear(&b);
}

static void test_better_than_us(void)
{
	struct sm_options o;
	struct sm sm = { .opt = &o, .port_guid = 0x100 };
	options_defaults(&o);
	o.sm_priority = 5;
	g_assert_true(sminfo_better_than_us(&sm, 6, 0x200));
	g_assert_false(sminfo_better_than_us(&sm, 4, 0x001));
	g_assert_true(sminfo_better_than_us(&sm, 5, 0x0ff));
	g_assert_false(sminfo_better_than_us(&sm, 5, 0x101));
	g_assert_false(sminfo_better_than_us(&sm, 5, 0x100));
	options_free(&o);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	log_set_quiet(!g_getenv("IBSM_TEST_LOG")); /* judged from the fake, not from the log */
	g_test_add_func("/sminfo/answer/get", test_answer_get);
	g_test_add_func("/sminfo/answer/set", test_answer_set);
	g_test_add_func("/sminfo/poll_dual_port_ca", test_poll_dual_port_ca);
	g_test_add_func("/sminfo/poll_others", test_poll_others);
	g_test_add_func("/sminfo/poll_others/alone", test_poll_others_alone);
	g_test_add_func("/sminfo/poll_master", test_poll_master);
	g_test_add_func("/sminfo/better_than_us", test_better_than_us);
	g_test_add_func("/sminfo/hand_over/acknowledged", test_hand_over_acknowledged);
	g_test_add_func("/sminfo/hand_over/unacknowledged", test_hand_over_unacknowledged);
	g_test_add_func("/sminfo/take_handover", test_take_handover);
	return g_test_run();
}
