/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_sa.c - fuzz target for the SA's request path: any bytes taken as an SA MAD are decoded
 * and, when they decode, answered (records built, component masks matched, PathRecords
 * walked) from a small routed fabric, never crashing and never answering a Get with more or
 * less than one record. Built for libFuzzer by `make fuzz`; its corpus is replayed under
 * ASan by `make check` (tests/unit/test_fuzz_replay.c). */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include "fabric/lid.h"
#include "fabric/model.h"
#include "fabric/netfile.h"
#include "routing/result.h"
#include "sa/agent.h"
#include "sa/wire.h"

int fuzz_sa(const uint8_t *data, size_t size);

static const char fabric_text[] =
	"Hca 2 \"h1\"\n[1] \"sw1\"[1]\n\nHca 1 \"h2\"\n[1] \"sw1\"[2]\n\nHca 1 \"h3\"\n[1] \"sw2\"[1]\n\n"
	"Switch 8 \"sw1\"\n[1] \"h1\"[1]\n[2] \"h2\"[1]\n[7] \"sw2\"[7]\n\n"
	"Switch 8 \"sw2\"\n[1] \"h3\"[1]\n[7] \"sw1\"[7]\n";

/* Routes for the two-switch fabric: local LIDs out of their port, the rest over the link. */
static struct routing_result *route(struct fabric *f)
{
	struct routing_result *r = routing_result_new(f);
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		uint32_t node = f->switches[s].node;
		for (uint32_t lid = 1; lid < r->stride; lid++) {
			uint32_t p = f->pub.lid_port[lid];
			uint8_t out = 7;
			if (p == IBSM_NONE)
				out = IBSM_NO_PORT;
			else if (f->ports[p].node == node)
				out = 0;
			else if (f->ports[p].peer != IBSM_NONE && f->ports[f->ports[p].peer].node == node)
				out = f->ports[f->ports[p].peer].num;
			r->lft[(size_t)s * r->stride + lid] = out;
		}
	}
	return r;
}

static struct sa *setup(void)
{
	static struct sa *sa;
	if (sa)
		return sa;
	char *dir = g_dir_make_tmp("ibsm-fuzz-sa-XXXXXX", NULL);
	char *path = g_build_filename(dir, "f.net", NULL);
	g_file_set_contents(path, fabric_text, -1, NULL);
	struct model_builder *b = model_builder_new();
	struct fabric *f = NULL;
	if (netfile_load(path, b, NULL) == 0)
		f = model_freeze(b, 1, NULL);
	model_builder_free(b);
	g_unlink(path);
	g_rmdir(dir);
	g_free(path);
	g_free(dir);
	struct lid_opts lo = { .lmc = 1 };
	if (!f || lid_assign(f, &lo, NULL) < 0)
		abort();
	struct routing_result *r = route(f);
	sa = sa_new(NULL);
	if (!sa)
		abort();
	struct sa_inputs in; /* the generation alone: not master, no SM_Key, no P_Key tables */
	sa_inputs_init(&in);
	sa_inputs_set_routes(&in, r, NULL);
	sa_publish(sa, &in);
	sa_inputs_clear(&in);
	routing_result_unref(r);
	fabric_unref(f);
	return sa;
}

int fuzz_sa(const uint8_t *data, size_t size)
{
	struct sa *sa = setup();
	/* exactly the bytes that arrived, no padding: a read past them is ASan's to see */
	uint8_t *buf = malloc(umad_size() + size);
	if (!buf)
		return 0;
	memset(buf, 0, umad_size());
	uint8_t *mad = umad_get_mad(buf);
	if (size)
		memcpy(mad, data, size);
	struct mad_in m = { .umad = buf, .len = (int)(umad_size() + size), .mad = mad };
	if (size >= 24) { /* the header, as the transport reads it (it drops shorter MADs) */
		m.mgmt_class = mad[1];
		m.class_version = mad[2];
		m.method = mad[3];
		m.attr = (uint16_t)mad_get_field(mad, 0, IB_MAD_ATTRID_F);
		m.attr_mod = mad_get_field(mad, 0, IB_MAD_ATTRMOD_F);
	}
	struct sa_request rq;
	if (sa_decode(&m, &rq) == 0) {
		struct sa_answer a = { .recs = g_byte_array_new() };
		sa_compute(sa, &rq, 1.0, &a);
		if (!a.status && !a.table && a.recs->len != a.rec_size)
			abort(); /* a Get answers one record or a status */
		if (!a.status && a.rec_size && a.recs->len % a.rec_size)
			abort();
		g_byte_array_free(a.recs, TRUE);
	}
	free(buf);
	return 0;
}

#ifdef IBSM_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_sa(data, size);
}
#endif
