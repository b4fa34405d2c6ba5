/* test_mkey.c - M_Key against a fake fabric whose SMAs enforce it (IBA 14.2.4; ibsim ignores
 * M_Key): keys derived per port from one secret, every management port given its key,
 * ProtectBits and lease period, every SMP of the next sweep presenting the right key (one that
 * did not would be dropped and counted as a violation), an outsider without the key refused,
 * a port whose key someone changed written back (its key read when shown, after its lease
 * period when hidden), a new secret taking over from the old one, and a switch port someone
 * disabled enabled again (only with M_Key on: without it an administrator's disable stands). Judged from what the
 * fake SMAs hold and counted. */
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric/dr.h"
#include "fabric_fixture.h"
#include "fake_sma.h"
#include "mad/mkey_derive.h"

#define TIMEOUT_MS 20
#define SECRET 0x5ec7e75ec7e75ec7ULL

static void test_derive(void)
{
	struct mkey_cfg off = { 0 }, per = { .secret = SECRET, .per_port = 1 },
			same = { .secret = SECRET, .per_port = 0 };
	g_assert_cmphex(mkey_for_guid(&off, 0x1234), ==, 0);
	g_assert_cmphex(mkey_for_guid(&same, 0x1234), ==, SECRET);
	uint64_t a = mkey_for_guid(&per, 0x1234), b = mkey_for_guid(&per, 0x1235);
	g_assert_cmphex(a, ==, mkey_for_guid(&per, 0x1234)); /* a function of (secret, GUID) */
	g_assert_cmphex(a, !=, b);
	g_assert_cmphex(a, !=, SECRET);
	g_assert_cmphex(a, !=, 0);
	struct mkey_cfg other = per;
	other.secret = SECRET + 1;
	g_assert_cmphex(mkey_for_guid(&other, 0x1234), !=, a);
}

/* Management ports: switch port 0, every present CA port. */
static int mgmt_port(const struct fabric *f, uint32_t p)
{
	const struct ibsm_port *port = &f->ports[p];
	return f->nodes[port->node].type == IBSM_SWITCH ? port->num == 0 :
	       port->num != 0 && (port->flags & IBSM_PORT_PRESENT);
}

/* Every management port holds the key derived for it, with c's ProtectBits and lease. */
static void assert_protected(const struct fsma_bed *b, const struct mkey_cfg *c)
{
	uint32_t n = 0;
	for (uint32_t p = 0; p < b->shape->pub.n_ports; p++) {
		if (!mgmt_port(b->shape, p))
			continue;
		uint64_t key;
		uint8_t protect;
		uint16_t lease;
		uint32_t viol;
		fsma_port_mkey(b->fk, p, &key, &protect, &lease, &viol);
		g_assert_cmphex(key, ==, mkey_for_guid(c, b->shape->ports[p].guid));
		g_assert_cmpuint(protect, ==, c->protect);
		g_assert_cmpuint(lease, ==, c->lease_s);
		n++;
	}
	g_assert_cmpuint(n, >, 4);
}

static uint32_t violations(const struct fsma_bed *b)
{
	uint32_t total = 0;
	for (uint32_t p = 0; p < b->shape->pub.n_ports; p++) {
		uint64_t key;
		uint8_t protect;
		uint16_t lease;
		uint32_t viol;
		fsma_port_mkey(b->fk, p, &key, &protect, &lease, &viol);
		total += viol;
	}
	return total;
}

static int sweep(struct fsma_bed *b, int first, struct program_report *rep)
{
	fsma_bed_discover(b);
	return fsma_bed_program(b, NULL, first, rep);
}

static uint32_t portinfo_sets(const struct fsma *fk, uint32_t from)
{
	return fsma_count(fk, from, IB_MAD_METHOD_SET, IB_ATTR_PORT_INFO, FSMA_ANY);
}

static void bed(struct fsma_bed *b, const struct mkey_cfg *c)
{
	struct fabric *shape = fx_line(3, 2, 0); /* 3 switches in a line, 2 hosts each */
	fsma_bed_init(b, shape, fx_ca_port(&shape->pub, 0, 1), TIMEOUT_MS);
	transport_set_mkey(b->t, c);
}

/* A CA port of the fabric that is not the SM's. */
static uint32_t some_ca_port(const struct fsma_bed *b)
{
	for (uint32_t p = 0; p < b->shape->pub.n_ports; p++)
		if (mgmt_port(b->shape, p) && b->shape->nodes[b->shape->ports[p].node].type != IBSM_SWITCH &&
		    p != b->f->pub.sm_port)
			return p;
	g_assert_not_reached();
}

/* Protection level 2: after the first sweep every port holds its key; the next sweep (Gets
 * refused without the key at this level) reads everything, writes nothing and is refused
 * nowhere; a Set presenting a wrong key changes nothing. */
static void test_protect(void)
{
	struct mkey_cfg c = { .secret = SECRET, .protect = 2, .lease_s = 0, .per_port = 1 };
	struct fsma_bed b;
	bed(&b, &c);
	struct program_report rep;
	g_assert_cmpint(sweep(&b, 1, &rep), ==, 0);
	g_assert_cmpuint(rep.failures, ==, 0);
	assert_protected(&b, &c);
	uint32_t mark = fsma_nrec(b.fk);
	g_assert_cmpint(sweep(&b, 0, &rep), ==, 0);
	g_assert_cmpuint(rep.failures, ==, 0);
	g_assert_cmpuint(violations(&b), ==, 0);
	g_assert_cmpuint(portinfo_sets(b.fk, mark), ==, 0);
	g_assert_cmpuint(rep.writes, ==, 0);
	/* an outsider: a PortInfo Set (disable the port) presenting a wrong key */
	uint32_t port = some_ca_port(&b);
	struct smp_req r;
	g_assert_cmpint(fabric_smp_to_port(&r, b.f, port, IB_MAD_METHOD_SET, IB_ATTR_PORT_INFO,
					   b.f->ports[port].num, NULL, NULL, 0), ==, 0);
	memcpy(r.data, b.f->px[port].portinfo, SMP_DATA_SIZE);
	mad_set_field(r.data, 0, IB_PORT_PHYS_STATE_F, 3);
	mad_set_field(r.data, 0, IB_PORT_LID_F, 0x99);
	r.mkey = 0x0bad;
	mark = fsma_nrec(b.fk);
	transport_submit(b.t, &r);
	transport_drain(b.t, NULL);
	g_assert_cmpuint(fsma_rec(b.fk, mark)->outcome, ==, FSMA_DROPPED);
	g_assert_cmpuint(violations(&b), >, 0);
	assert_protected(&b, &c);
	fsma_bed_clear(&b);
}

/* Someone changed a port's key at ProtectBits 0: discovery reads it, the next Set presents
 * it and gives the port its own key back. Then changed between discovery and programming:
 * the Set is refused, the port asked for its key, and written again with it. */
static void test_key_changed_shown(void)
{
	struct mkey_cfg c = { .secret = SECRET, .protect = 0, .per_port = 1 };
	struct fsma_bed b;
	bed(&b, &c);
	struct program_report rep;
	g_assert_cmpint(sweep(&b, 1, &rep), ==, 0);
	uint32_t port = some_ca_port(&b);
	fsma_port_set_mkey(b.fk, port, 0x1234, 0, 0);
	g_assert_cmpint(sweep(&b, 0, &rep), ==, 0);
	g_assert_cmpuint(rep.failures, ==, 0);
	assert_protected(&b, &c);
	fsma_bed_discover(&b);
	fsma_port_set_mkey(b.fk, port, 0x5678, 0, 0);
	mad_set_field(b.f->px[port].portinfo, 0, IB_PORT_SMLID_F, 0); /* as read: a Set is due */
	uint32_t before = violations(&b);
	g_assert_cmpint(fsma_bed_program(&b, NULL, 0, &rep), ==, 0);
	g_assert_cmpuint(violations(&b), >, before); /* the Set (and its retry) with the old key */
	assert_protected(&b, &c);
	fsma_bed_clear(&b);
}

/* A key someone changed and hides (ProtectBits 1, lease 1 s): the sweep cannot write the port
 * (and says so); once the lease has run out the port shows its key and is written back. */
static void test_key_hidden_lease(void)
{
	struct mkey_cfg c = { .secret = SECRET, .protect = 1, .lease_s = 1, .per_port = 1 };
	struct fsma_bed b;
	bed(&b, &c);
	struct program_report rep;
	g_assert_cmpint(sweep(&b, 1, &rep), ==, 0);
	uint32_t port = some_ca_port(&b);
	fsma_port_set_mkey(b.fk, port, 0x1234, 1, 1);
	sweep(&b, 0, &rep);
	g_assert_cmpuint(rep.failures, >, 0);
	uint64_t key;
	uint8_t protect;
	uint16_t lease;
	uint32_t viol;
	fsma_port_mkey(b.fk, port, &key, &protect, &lease, &viol);
	g_assert_cmphex(key, ==, 0x1234);
	g_usleep(1100 * 1000);
	g_assert_cmpint(sweep(&b, 0, &rep), ==, 0);
	g_assert_cmpuint(rep.failures, ==, 0);
	assert_protected(&b, &c);
	fsma_bed_clear(&b);
}

/* A new secret (SIGHUP): the next sweep presents the keys the ports hold and writes the new
 * ones; the sweep after that presents the new ones and is refused nowhere. */
static void test_new_secret(void)
{
	struct mkey_cfg c = { .secret = SECRET, .protect = 2, .per_port = 1 };
	struct fsma_bed b;
	bed(&b, &c);
	struct program_report rep;
	g_assert_cmpint(sweep(&b, 1, &rep), ==, 0);
	struct mkey_cfg c2 = c;
	c2.secret = SECRET ^ 0xffff;
	transport_set_mkey(b.t, &c2);
	g_assert_cmpint(sweep(&b, 0, &rep), ==, 0);
	g_assert_cmpuint(rep.failures, ==, 0);
	assert_protected(&b, &c2);
	uint32_t before = violations(&b);
	g_assert_cmpint(sweep(&b, 0, &rep), ==, 0);
	g_assert_cmpuint(violations(&b), ==, before);
	g_assert_cmpuint(rep.writes, ==, 0);
	/* protection off: the keys are cleared, presenting the ones held */
	struct mkey_cfg off = { 0 };
	transport_set_mkey(b.t, &off);
	g_assert_cmpint(sweep(&b, 0, &rep), ==, 0);
	assert_protected(&b, &off);
	fsma_bed_clear(&b);
}

/* Someone disabled a switch port (ibportstate ... disable; ibsim and this fake let anyone):
 * with M_Key protection on only the SM may, so the next pass sets it to Polling, the link
 * trains and the sweep after finds the fabric whole. Without M_Key the administrator's
 * disable stands. */
static void restore_case(int protect_on)
{
	struct mkey_cfg on = { .secret = SECRET, .protect = 1, .per_port = 1 }, off = { 0 };
	struct fsma_bed b;
	bed(&b, protect_on ? &on : &off);
	struct program_report rep;
	g_assert_cmpint(sweep(&b, 1, &rep), ==, 0);
	/* the port of a host-facing switch port, as the next discovery would read it */
	uint32_t ca = some_ca_port(&b), port = b.f->ports[ca].peer;
	fsma_port_disable(b.fk, port);
	b.f->px[port].phys_state = 3;
	mad_set_field(b.f->px[port].portinfo, 0, IB_PORT_PHYS_STATE_F, 3);
	uint32_t mark = fsma_nrec(b.fk);
	fsma_bed_program(&b, NULL, 0, &rep);
	uint32_t enables = 0;
	for (uint32_t i = mark; i < fsma_nrec(b.fk); i++) {
		const struct fsma_rec *r = fsma_rec(b.fk, i);
		if (r->method == IB_MAD_METHOD_SET && r->attr == IB_ATTR_PORT_INFO && r->port == port &&
		    mad_get_field((void *)r->data, 0, IB_PORT_PHYS_STATE_F) == 2)
			enables++;
	}
	g_assert_cmpuint(enables, ==, protect_on ? 1 : 0);
	if (protect_on) {
		g_assert_cmpuint(rep.not_active, >, 0); /* incomplete: swept again */
		g_assert_cmpint(sweep(&b, 0, &rep), ==, 0); /* whole again (asserted) */
		g_assert_cmpuint(rep.not_active, ==, 0);
	}
	fsma_bed_clear(&b);
}

static void test_restore_disabled(void)
{
	restore_case(1);
}

static void test_admin_disable_stands(void)
{
	restore_case(0);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	log_set_quiet(!g_getenv("IBSM_TEST_LOG"));
	g_test_add_func("/mkey/derive", test_derive);
	g_test_add_func("/mkey/protect", test_protect);
	g_test_add_func("/mkey/key_changed_shown", test_key_changed_shown);
	g_test_add_func("/mkey/key_hidden_lease", test_key_hidden_lease);
	g_test_add_func("/mkey/new_secret", test_new_secret);
	g_test_add_func("/mkey/restore_disabled", test_restore_disabled);
	g_test_add_func("/mkey/admin_disable_stands", test_admin_disable_stands);
	return g_test_run();
}
