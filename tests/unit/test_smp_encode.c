/* test_smp_encode.c - SMP requests encoded into a reused umad buffer by the fields that differ
 * (core/mad/smp_encode.c) give the bytes mad_build_pkt gives over a cleared buffer: random
 * requests, directed route and LID routed mixed, every hop count a path may have, Gets and
 * Sets; a path too long is refused both ways. */
#include <string.h>
#include <glib.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include "mad/smp_encode.h"

static void random_req(GRand *g, struct smp_req *r)
{
	memset(r, 0, sizeof(*r));
	r->method = g_rand_boolean(g) ? IB_MAD_METHOD_GET : IB_MAD_METHOD_SET;
	r->dr = g_rand_int_range(g, 0, 4) != 0;
	r->hops = (uint8_t)g_rand_int_range(g, 0, 64);
	for (int i = 0; i < SMP_DR_PATH_MAX; i++)
		r->path[i] = (uint8_t)g_rand_int_range(g, 0, 256);
	r->dlid = (uint16_t)g_rand_int_range(g, 1, 0xC000);
	r->attr = (uint16_t)g_rand_int_range(g, 0x10, 0x20);
	r->mod = g_rand_int(g);
	r->mkey = (uint64_t)g_rand_int(g) << 32 | g_rand_int(g);
	for (int i = 0; i < SMP_DATA_SIZE; i++)
		r->data[i] = (uint8_t)g_rand_int_range(g, 0, 256);
}

static void test_same_bytes(void)
{
	int len = umad_size() + IB_MAD_SIZE;
	struct smp_buf reused = { g_malloc0(len), len, 0 }, whole = { g_malloc0(len), len, 0 };
	GRand *g = g_rand_new_with_seed(7);
	unsigned partial = 0;
	for (int i = 0; i < 20000; i++) {
		struct smp_req r;
		random_req(g, &r);
		uint32_t trid = g_rand_int(g);
		int before = reused.mgtclass;
		int a = smp_encode(&reused, &r, trid, 200), b = smp_encode_whole(&whole, &r, trid, 200);
		g_assert_cmpint(a, ==, b);
		g_assert_cmpint(a, ==, r.dr ? IB_SMI_DIRECT_CLASS : IB_SMI_CLASS);
		partial += before == a;
		g_assert_cmpmem(reused.umad, len, whole.umad, len);
	}
	g_assert_cmpuint(partial, >, 10000); /* most took the short way */
	/* a path of 64 hops: libibmad refuses it; the next request is encoded whole again */
	struct smp_req r;
	random_req(g, &r);
	r.dr = 1;
	r.hops = 64;
	g_assert_cmpint(smp_encode(&reused, &r, 1, 200), ==, -1);
	g_assert_cmpint(reused.mgtclass, ==, 0);
	r.hops = 3;
	g_assert_cmpint(smp_encode(&reused, &r, 2, 200), ==, IB_SMI_DIRECT_CLASS);
	g_assert_cmpint(smp_encode_whole(&whole, &r, 2, 200), ==, IB_SMI_DIRECT_CLASS);
	g_assert_cmpmem(reused.umad, len, whole.umad, len);
	g_rand_free(g);
	g_free(reused.umad);
	g_free(whole.umad);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/smp_encode/same-bytes", test_same_bytes);
	return g_test_run();
}
