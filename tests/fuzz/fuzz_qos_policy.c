/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_qos_policy.c - fuzz target for the QoS policy file parser (policy/qos_parse.c): any
 * input must parse or be refused with a FILE:LINE:COL error, never crash; what parses must
 * hold together: DEFAULT at levels[0], every rule's level and port-group indexes in range,
 * ranges with lo <= hi, SLs of 0-15, 15-bit P_Keys. Built for libFuzzer by `make fuzz`; its
 * corpus is replayed under ASan by the unit tests. */
#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "policy/qos_policy.h"

int fuzz_qos_policy(const uint8_t *data, size_t size);

static void fuzz_qos_ranges(const GArray *a, uint64_t max)
{
	for (guint i = 0; i < a->len; i++) {
		const struct qos_range *r = &g_array_index(a, struct qos_range, i);
		if (r->lo > r->hi || r->hi > max)
			abort();
	}
}

static void fuzz_qos_indexes(const GArray *a, guint n)
{
	for (guint i = 0; i < a->len; i++)
		if (g_array_index(a, guint, i) >= n)
			abort();
}

int fuzz_qos_policy(const uint8_t *data, size_t size)
{
	GError *err = NULL;
	struct qos_policy *p = qos_policy_parse_text((const char *)data, size, "fuzz.conf", &err);
	if (!p) {
		if (!err || !g_str_has_prefix(err->message, "fuzz.conf:"))
			abort();
		g_error_free(err);
		return 0;
	}
	if (err || p->levels->len == 0)
		abort();
	/* DEFAULT first: its name without case or blanks (OpenSM drops a name's blanks) */
	GString *k = g_string_new(NULL);
	for (const char *c = ((const struct qos_level *)p->levels->pdata[0])->name; *c; c++)
		if (!strchr(" \t\r\v\f", *c))
			g_string_append_c(k, g_ascii_tolower(*c));
	if (strcmp(k->str, "default") != 0)
		abort();
	g_string_free(k, TRUE);
	for (guint i = 0; i < p->levels->len; i++) {
		const struct qos_level *l = p->levels->pdata[i];
		if (!l->name || l->sl < 0 || l->sl > 15 || l->mtu_limit > 5 || l->rate_limit > 18 ||
		    l->packet_life > 31)
			abort();
		fuzz_qos_ranges(l->path_bits, 127);
		fuzz_qos_ranges(l->pkeys, 0x7fff);
	}
	for (guint i = 0; i < p->groups->len; i++) {
		const struct qos_port_group *g = p->groups->pdata[i];
		if (!g->name)
			abort();
		fuzz_qos_ranges(g->guids, UINT64_MAX);
		fuzz_qos_ranges(g->pkeys, 0x7fff);
		for (guint j = 0; j < g->names->len; j++) {
			const struct qos_port_name *n = &g_array_index(g->names, struct qos_port_name, j);
			if (!n->desc || n->port < 1 || n->port > 254)
				abort();
		}
	}
	int ulps_seen = 0;
	for (guint i = 0; i < p->rules->len; i++) {
		const struct qos_match_rule *r = p->rules->pdata[i];
		if (r->level >= p->levels->len)
			abort();
		if (ulps_seen && !r->from_ulps)  /* the full syntax first */
			abort();
		ulps_seen |= r->from_ulps;
		fuzz_qos_indexes(r->source, p->groups->len);
		fuzz_qos_indexes(r->destination, p->groups->len);
		fuzz_qos_ranges(r->qos_class, 0xfff);
		fuzz_qos_ranges(r->service_id, UINT64_MAX);
		fuzz_qos_ranges(r->pkey, 0x7fff);
	}
	fuzz_qos_ranges(p->ipoib_pkeys, 0x7fff);
	for (guint i = 0; i < p->notes->len; i++)
		if (!g_str_has_prefix(p->notes->pdata[i], "fuzz.conf:"))
			abort();
	qos_policy_free(p);
	return 0;
}

#ifdef IBSM_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_qos_policy(data, size);
}
#endif
