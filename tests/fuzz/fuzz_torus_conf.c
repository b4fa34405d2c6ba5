/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_torus_conf.c - fuzz target for the torus-2QoS.conf parser (policy/torus_conf.c): any
 * input must parse or be refused with a FILE:LINE:COL error, never crash; what parses must
 * hold together: radices of at least 1 once given (no more switches than unicast LIDs), seed
 * links whose GUIDs agree with their "given" flags and share the seed's from-switch,
 * datelines inside the radix, port_order without duplicates, notes naming the file; then the
 * seed check runs. Built for libFuzzer by `make fuzz`; its corpus is replayed under ASan by
 * the unit tests. */
#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "policy/torus_conf.h"

int fuzz_torus_conf(const uint8_t *data, size_t size);

static void fuzz_torus_seed(const struct torus_conf *c, const struct torus_conf_seed *s)
{
	uint64_t from = 0;
	for (int d = 0; d < TORUS_NDIMS; d++) {
		for (int r = 0; r < TORUS_NDIRS; r++) {
			const struct torus_conf_link *l = &s->link[d][r];
			if (!l->given) {
				if (l->from || l->to)
					abort();
				continue;
			}
			if (!l->from || !l->to || (from && l->from != from) || l->line < s->line)
				abort();
			from = l->from;
		}
		if (!s->dateline_given[d] && s->dateline[d] != 0)
			abort();
		if (s->dateline_given[d] && (!c->topology_given ||
					     abs(s->dateline[d]) >= (int)c->radix[d]))
			abort();
	}
}

int fuzz_torus_conf(const uint8_t *data, size_t size)
{
	GError *err = NULL;
	struct torus_conf *c = torus_conf_parse_text((const char *)data, size, "fuzz.conf", &err);
	if (!c) {
		if (!err || !g_str_has_prefix(err->message, "fuzz.conf:"))
			abort();
		g_error_free(err);
		return 0;
	}
	if (err)
		abort();
	if (c->topology_given) {
		uint64_t n = 1;
		for (int d = 0; d < TORUS_NDIMS; d++) {
			if (c->radix[d] < 1 || (c->radix[d] == 2 && !c->mesh[d]))
				abort();
			n *= c->radix[d];
		}
		if (n > TORUS_CONF_MAX_SWITCHES || c->topology_line < 1)
			abort();
	} else {
		for (int d = 0; d < TORUS_NDIMS; d++)
			if (c->radix[d] != 0)
				abort();
	}
	for (guint i = 0; i < c->seeds->len; i++)
		fuzz_torus_seed(c, &g_array_index(c->seeds, struct torus_conf_seed, i));
	if (c->portgroup_max_ports < 1 || c->portgroup_max_ports > TORUS_CONF_MAX_PORT)
		abort();
	uint8_t seen[256] = { 0 };
	for (guint i = 0; i < c->port_order->len; i++) {
		guint8 p = g_array_index(c->port_order, guint8, i);
		if (p > TORUS_CONF_MAX_PORT || seen[p]++)
			abort();
	}
	for (guint i = 0; i < c->notes->len; i++)
		if (!g_str_has_prefix(c->notes->pdata[i], "fuzz.conf:"))
			abort();
	int r = torus_conf_check_seeds(c, &err);
	if ((r == 0) != (err == NULL) || (err && !g_str_has_prefix(err->message, "fuzz.conf")))
		abort();
	g_clear_error(&err);
	torus_conf_free(c);
	return 0;
}

#ifdef IBSM_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_torus_conf(data, size);
}
#endif
