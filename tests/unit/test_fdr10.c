/* test_fdr10.c - OpenSM's `fdr10` key: MlnxExtPortInfo (attribute 0xFF90) judged by what the
 * fake SMAs received and hold: a Get to each linked port of the devices OpenSM asks, a Set of
 * LinkSpeedEnabled FDR10 (bytes as OpenSM's ib_mlnx_ext_port_info_t) where the port supports
 * FDR10 and holds another value, nothing to other devices, a port that refuses asked once. */
#include <string.h>
#include <infiniband/mad.h>
#include "fabric_fixture.h"
#include "fake_sma.h"
#include "program/fdr10.h"

#define TIMEOUT_MS 20
#define DEV_CX3 0x1003      /* ConnectX-3: asked */
#define DEV_SWITCHX 0xc738  /* SwitchX: asked */

static void test_devices(void)
{
	g_assert_true(fdr10_device_asked(0x0002c9, DEV_CX3));
	g_assert_true(fdr10_device_asked(0x0002c9, DEV_SWITCHX));
	g_assert_true(fdr10_device_asked(0, 0x1017));       /* by DeviceID whatever the vendor */
	g_assert_false(fdr10_device_asked(0x0002c9, 0x1018));
	g_assert_false(fdr10_device_asked(0x0002c9, 0xfa4e)); /* the fake's default */
	g_assert_false(fdr10_device_asked(0x0002c9, 0x1002));
	g_assert_true(fdr10_device_asked(0x00119f, 0x1bd3)); /* Bull's Switch-IB 2 */
	g_assert_false(fdr10_device_asked(0x0002c9, 0x1bd3));
	g_assert_false(fdr10_device_asked(0, 0));            /* ibsim's nodes */
}

static void test_encode(void)
{
	uint8_t held[64], out[64];
	for (int i = 0; i < 64; i++)
		held[i] = (uint8_t)(0x40 + i);
	held[FDR10_OFF_SUPPORTED] = 0x01;
	fdr10_encode_set(held, 1, out);
	g_assert_cmpuint(FDR10_OFF_STATE_CHANGE_ENABLE, ==, 3);
	g_assert_cmpuint(FDR10_OFF_SUPPORTED, ==, 7);
	g_assert_cmpuint(FDR10_OFF_ENABLED, ==, 11);
	g_assert_cmpuint(out[3], ==, 0x01);
	g_assert_cmpuint(out[11], ==, 0x01);
	g_assert_cmpuint(out[7], ==, 0x01);
	g_assert_cmpuint(out[15], ==, held[15]);
	g_assert_cmpuint(out[20], ==, held[20]);
	fdr10_encode_set(held, 0, out);
	g_assert_cmpuint(out[3], ==, 0x01);
	g_assert_cmpuint(out[11], ==, 0x00);
}

/* Two switches, two CAs on each; every node a device OpenSM asks; every linked port answers
 * with FDR10 supported and `enabled`, but the CA port `refusing` (no answer: 0x0C) and the
 * switch port `unable` (FDR10 not supported). */
struct bed {
	struct fsma_bed b;
	uint32_t refusing, unable, asked_ports;
};

static void bed_up(struct bed *t, uint8_t enabled, int devices_asked)
{
	struct fabric *shape = fx_line(2, 2, 0);
	fsma_bed_init(&t->b, shape, fx_ca_port(&shape->pub, 0, 1), TIMEOUT_MS);
	struct fabric *f = t->b.shape;
	t->refusing = fx_ca_port(&f->pub, 3, 1);
	t->unable = IBSM_NONE;
	t->asked_ports = 0;
	for (uint32_t n = 0; n < f->pub.n_nodes; n++)
		if (devices_asked)
			fsma_set_device_id(t->b.fk, n, f->nodes[n].type == IBSM_SWITCH ? DEV_SWITCHX : DEV_CX3);
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		if (f->ports[p].peer == IBSM_NONE)
			continue;
		t->asked_ports++;
		if (p == t->refusing)
			continue;
		int sw = f->nodes[f->ports[p].node].type == IBSM_SWITCH;
		if (sw && t->unable == IBSM_NONE) {
			t->unable = p;
			fsma_port_set_mlnx_epi(t->b.fk, p, 0, 0);
			continue;
		}
		fsma_port_set_mlnx_epi(t->b.fk, p, FDR10_SPEED, enabled);
	}
	g_assert_cmpuint(t->unable, !=, IBSM_NONE);
	fsma_bed_discover(&t->b);
}

static uint32_t epi_count(const struct fsma *fk, uint32_t from, uint32_t method, uint32_t port)
{
	uint32_t n = 0;
	for (uint32_t i = from; i < fsma_nrec(fk); i++) {
		const struct fsma_rec *r = fsma_rec(fk, i);
		if (r->attr == FDR10_ATTR && (method == FSMA_ANY || r->method == method) &&
		    (port == FSMA_ANY || r->port == port))
			n++;
	}
	return n;
}

/* fdr10 1 (OpenSM's default): FDR10 enabled where supported, one Get per port, the refusing
 * port asked once in all; a second pass writes nothing (the ports hold FDR10 now). */
static void test_enable(void)
{
	struct bed t;
	struct program_report rep;
	bed_up(&t, 0, 1);
	g_assert_cmpuint(t.b.o.fdr10, ==, 1);
	struct fsma *fk = t.b.fk;
	const struct fabric *f = t.b.f;
	g_assert_cmpint(fsma_bed_program(&t.b, NULL, 1, &rep), ==, 0);
	g_assert_cmpuint(epi_count(fk, 0, IB_MAD_METHOD_GET, FSMA_ANY), ==, t.asked_ports);
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		if (f->ports[p].peer == IBSM_NONE) {
			g_assert_cmpuint(epi_count(fk, 0, FSMA_ANY, p), ==, 0);
			continue;
		}
		g_assert_cmpuint(epi_count(fk, 0, IB_MAD_METHOD_GET, p), ==, 1);
		uint32_t sets = epi_count(fk, 0, IB_MAD_METHOD_SET, p);
		if (p == t.refusing || p == t.unable) {
			g_assert_cmpuint(sets, ==, 0);
			continue;
		}
		g_assert_cmpuint(sets, ==, 1);
		g_assert_cmpuint(fsma_port_mlnx_epi_enabled(fk, p), ==, FDR10_SPEED);
	}
	/* the Sets' bytes: StateChangeEnable 1, LinkSpeedEnabled FDR10, the rest as read */
	for (uint32_t i = 0; i < fsma_nrec(fk); i++) {
		const struct fsma_rec *r = fsma_rec(fk, i);
		if (r->attr != FDR10_ATTR || r->method != IB_MAD_METHOD_SET)
			continue;
		g_assert_cmpuint(r->mgmt_class, ==, IB_SMI_DIRECT_CLASS);
		g_assert_cmpuint(r->data[3], ==, 0x01);
		g_assert_cmpuint(r->data[7], ==, FDR10_SPEED);
		g_assert_cmpuint(r->data[11], ==, FDR10_SPEED);
		g_assert_cmpuint(r->status, ==, 0);
		g_assert_cmpuint(r->mod & 0xff, ==, f->ports[r->port].num);
	}
	uint32_t mark = fsma_nrec(fk);
	fsma_bed_discover(&t.b);
	g_assert_cmpint(fsma_bed_program(&t.b, NULL, 0, &rep), ==, 0);
	g_assert_cmpuint(epi_count(fk, mark, IB_MAD_METHOD_SET, FSMA_ANY), ==, 0);
	g_assert_cmpuint(epi_count(fk, mark, FSMA_ANY, t.refusing), ==, 0); /* left alone */
	g_assert_cmpuint(epi_count(fk, mark, IB_MAD_METHOD_GET, FSMA_ANY), ==, t.asked_ports - 1);
	/* taking the fabric over anew: the refusing port is asked once more */
	programmer_forget(t.b.prog);
	mark = fsma_nrec(fk);
	fsma_bed_discover(&t.b);
	g_assert_cmpint(fsma_bed_program(&t.b, NULL, 1, &rep), ==, 0);
	g_assert_cmpuint(epi_count(fk, mark, IB_MAD_METHOD_GET, t.refusing), ==, 1);
	fsma_bed_clear(&t.b);
}

/* fdr10 2: FDR10 disabled where it is enabled; fdr10 0: not one MlnxExtPortInfo MAD. */
static void test_disable_and_off(void)
{
	struct bed t;
	struct program_report rep;
	bed_up(&t, FDR10_SPEED, 1);
	t.b.o.fdr10 = 2;
	struct fsma *fk = t.b.fk;
	const struct fabric *f = t.b.f;
	g_assert_cmpint(fsma_bed_program(&t.b, NULL, 1, &rep), ==, 0);
	uint32_t written = 0;
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		if (f->ports[p].peer == IBSM_NONE || p == t.refusing || p == t.unable)
			continue;
		g_assert_cmpuint(fsma_port_mlnx_epi_enabled(fk, p), ==, 0);
		written++;
	}
	g_assert_cmpuint(epi_count(fk, 0, IB_MAD_METHOD_SET, FSMA_ANY), ==, written);
	for (uint32_t i = 0; i < fsma_nrec(fk); i++) {
		const struct fsma_rec *r = fsma_rec(fk, i);
		if (r->attr == FDR10_ATTR && r->method == IB_MAD_METHOD_SET)
			g_assert_cmpuint(r->data[11], ==, 0);
	}
	fsma_bed_clear(&t.b);

	bed_up(&t, 0, 1);
	t.b.o.fdr10 = 0;
	g_assert_cmpint(fsma_bed_program(&t.b, NULL, 1, &rep), ==, 0);
	g_assert_cmpuint(epi_count(t.b.fk, 0, FSMA_ANY, FSMA_ANY), ==, 0);
	fsma_bed_clear(&t.b);
}

/* Devices OpenSM does not ask (the fake's default DeviceID, ibsim's 0): not one MAD, though
 * their ports would answer. */
static void test_other_devices(void)
{
	struct bed t;
	struct program_report rep;
	bed_up(&t, 0, 0);
	g_assert_cmpint(fsma_bed_program(&t.b, NULL, 1, &rep), ==, 0);
	g_assert_cmpuint(epi_count(t.b.fk, 0, FSMA_ANY, FSMA_ANY), ==, 0);
	fsma_bed_clear(&t.b);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/fdr10/devices", test_devices);
	g_test_add_func("/fdr10/encode", test_encode);
	g_test_add_func("/fdr10/enable", test_enable);
	g_test_add_func("/fdr10/disable_and_off", test_disable_and_off);
	g_test_add_func("/fdr10/other_devices", test_other_devices);
	return g_test_run();
}
