/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_partitions.c - fuzz target for the partitions.conf parser and its expansion: any input
 * must parse or be refused with a FILE:LINE:COL error, never crash; what parses must expand
 * on a small fabric into sane P_Key lists. Built for libFuzzer by `make fuzz`; its corpus is
 * replayed under ASan by the unit tests. */
#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "base/log.h"
#include "fabric/model.h"
#include "policy/partitions.h"

int fuzz_partitions(const uint8_t *data, size_t size);

/* Two switches, two CAs (one with an unlinked port 2) and a router: built once. */
static struct fabric *fuzz_part_fabric(void)
{
	static struct fabric *f;
	if (f)
		return f;
	struct model_builder *b = model_builder_new();
	/* CA port GUIDs: port1 (and port1 + 1 for port 2), as in the examples of OpenSM's doc/partition-config.txt */
	static const struct { uint64_t guid, port1; uint8_t type, nports; } nodes[] = {
		{ 0x10, 0x10, IBSM_SWITCH, 4 }, { 0x20, 0x20, IBSM_SWITCH, 4 },
		{ 0x1000, 0x123456, IBSM_CA, 1 }, { 0x2000, 0x123457, IBSM_CA, 2 },
		{ 0x3000, 0x300, IBSM_ROUTER, 1 },
	};
	int idx[5];
	for (int i = 0; i < 5; i++) {
		idx[i] = model_add_node(b, nodes[i].guid, nodes[i].type, nodes[i].nports);
		struct model_node_in *n = model_node(b, (uint32_t)idx[i]);
		for (int p = 0; p <= n->nports; p++) {
			if (p == 0 && nodes[i].type != IBSM_SWITCH)
				continue;
			n->ports[p].guid = nodes[i].type == IBSM_SWITCH ? nodes[i].guid
									 : nodes[i].port1 + (uint64_t)p - 1;
			n->ports[p].flags = IBSM_PORT_PRESENT | IBSM_PORT_LINKUP;
			n->ports[p].state = IBSM_STATE_ACTIVE;
		}
	}
	model_link(b, (uint32_t)idx[0], 1, (uint32_t)idx[1], 1);
	model_link(b, (uint32_t)idx[2], 1, (uint32_t)idx[0], 2);
	model_link(b, (uint32_t)idx[3], 1, (uint32_t)idx[1], 2);
	model_link(b, (uint32_t)idx[4], 1, (uint32_t)idx[1], 3);
	f = model_freeze(b, 1, NULL);
	model_builder_free(b);
	return f;
}

int fuzz_partitions(const uint8_t *data, size_t size)
{
	static int quiet;
	if (!quiet) {
		log_set_quiet(1);
		quiet = 1;
	}
	GError *err = NULL;
	struct part_policy *p = part_policy_parse_text((const char *)data, size, "fuzz.conf", &err);
	if (!p) {
		if (!err || !g_str_has_prefix(err->message, "fuzz.conf:"))
			abort();
		g_error_free(err);
		return 0;
	}
	if (err)
		abort();
	/* the default partition always leads; keys are 15-bit and unique */
	if (p->parts->len == 0 || ((struct partition *)p->parts->pdata[0])->pkey != PART_DEFAULT_PKEY)
		abort();
	for (guint i = 0; i < p->parts->len; i++) {
		const struct partition *a = p->parts->pdata[i];
		if (a->pkey == 0 || a->pkey > 0x7fff)
			abort();
		for (guint j = 0; j < i; j++)
			if (((const struct partition *)p->parts->pdata[j])->pkey == a->pkey)
				abort();
	}
	struct fabric *f = fuzz_part_fabric();
	if (!f)
		abort();
	{
		uint32_t sm = f->pub.n_ports ? f->pub.n_ports - 1 : IBSM_NONE;
		struct port_pkeys *pk = part_policy_expand(p, &f->pub, sm);
		uint32_t ends = 0;
		for (uint32_t i = 0; i < f->pub.n_ports; i++) {
			if (pk[i].n > 2 * p->parts->len)
				abort();
			ends += pk[i].n ? 1 : 0;
		}
		if (ends != 5) /* every end port (2 switch port 0s, 3 linked CA/router ports) holds at least the default key */
			abort();
		part_pkeys_free(pk, f->pub.n_ports);
	}
	part_policy_free(p);
	return 0;
}

#ifdef IBSM_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_partitions(data, size);
}
#endif
