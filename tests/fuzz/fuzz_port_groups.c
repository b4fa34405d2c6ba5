/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_port_groups.c - fuzz target for the port groups policy parser and its resolution
 * (policy/port_groups_parse.c, port_groups_resolve.c): any input must parse or be refused with
 * a FILE:LINE:COL error, never crash; what parses must hold together: names that are one
 * visible word and never predefined, at least one rule per group, every reference resolved to
 * the definition the rules say (its own name: the one before; any other: the final one), an
 * evaluation order with each definition after what it names, notes naming the file; then it
 * is resolved over a small fixed fabric, where every set stays inside ALL, the predefined
 * groups split ALL by node type, and a union or subtraction gives what its two groups say.
 * Built for libFuzzer by `make fuzz`; its corpus is replayed under ASan by the unit tests. */
#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "policy/port_groups.h"

int fuzz_port_groups(const uint8_t *data, size_t size);

/* A small fabric: two switches (ports 0-3), CAs of hosts h1 and h2, a router, a CA without a
 * description. GUIDs 1-9 so that short inputs hit them. */
static const struct pgrp_port fuzz_pgrp_fabric[] = {
	{ 1, 1, 0, PGRP_NODE_SWITCH, "SW-1" }, { 1, 1, 1, PGRP_NODE_SWITCH, "SW-1" },
	{ 1, 1, 2, PGRP_NODE_SWITCH, "SW-1" }, { 1, 1, 3, PGRP_NODE_SWITCH, "SW-1" },
	{ 2, 2, 0, PGRP_NODE_SWITCH, "SW-2" }, { 2, 2, 1, PGRP_NODE_SWITCH, "SW-2" },
	{ 2, 2, 2, PGRP_NODE_SWITCH, "SW-2" }, { 2, 2, 3, PGRP_NODE_SWITCH, "SW-2" },
	{ 3, 4, 1, PGRP_NODE_CA, "h1 HCA-1" }, { 3, 5, 2, PGRP_NODE_CA, "h1 HCA-1" },
	{ 6, 7, 1, PGRP_NODE_CA, "h2 HCA-2" }, { 8, 8, 1, PGRP_NODE_ROUTER, "r1" },
	{ 9, 9, 1, PGRP_NODE_CA, NULL },
};

static void fuzz_pgrp_name(const char *name)
{
	if (!name || !*name || pgrp_predefined_lookup(name) >= 0)
		abort();
	for (const char *c = name; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == ',' || *c == ':' || *c == '#' || *c == 0x7f)
			abort();
}

static void fuzz_pgrp_ref(const struct pgrp_policy *p, guint gi, const struct pgrp_ref *ref)
{
	const struct pgrp_group *g = p->groups->pdata[gi];
	if (!ref->name || !ref->line || !ref->col)
		abort();
	if (ref->predefined >= 0) {
		if (ref->predefined >= PGRP_N_PREDEFINED || ref->group != -1 ||
		    strcmp(pgrp_predefined_name(ref->predefined), ref->name) != 0)
			abort();
		return;
	}
	if (ref->group < 0 || (guint)ref->group >= p->groups->len)
		abort();
	const struct pgrp_group *t = p->groups->pdata[ref->group];
	if (strcmp(t->name, ref->name) != 0)
		abort();
	if (strcmp(ref->name, g->name) == 0 ? ref->group != g->previous :
	    t != pgrp_policy_find(p, ref->name))
		abort();
}

static void fuzz_pgrp_rule(const struct pgrp_policy *p, guint gi, const struct pgrp_rule *r)
{
	switch (r->kind) {
	case PGRP_RULE_PORT_GUID:
		if (!r->guids || r->guids->len == 0)
			abort();
		for (guint k = 0; k < r->guids->len; k++) {
			const struct pgrp_guid *x = &g_array_index(r->guids, struct pgrp_guid, k);
			int any = 0;
			for (int w = 0; w < 4; w++)
				any |= x->ports.bits[w] != 0;
			if (!x->guid || (x->all_ports && any) || (!x->all_ports && !any) ||
			    (x->ports.bits[3] >> (PGRP_MAX_PORT % 64 + 1)))
				abort();
			for (guint j = 0; j < k; j++)
				if (g_array_index(r->guids, struct pgrp_guid, j).guid == x->guid)
					abort();
		}
		break;
	case PGRP_RULE_GUID_RANGE:
		if (!r->lo || r->lo > r->hi)
			abort();
		break;
	case PGRP_RULE_PORT_NAME:
		if (!r->names || r->names->len == 0)
			abort();
		for (guint k = 0; k < r->names->len; k++) {
			const struct pgrp_name *e = &g_array_index(r->names, struct pgrp_name, k);
			if (!e->hostname || !*e->hostname || e->port == 0 || e->port < -1 ||
			    e->port > PGRP_MAX_PORT || e->hca_idx < -1 || e->hca_idx > 65535)
				abort();
		}
		break;
	case PGRP_RULE_NODE_NAME:
		if (!r->pattern || !r->regex || r->port < -1 || r->port > PGRP_MAX_PORT)
			abort();
		break;
	case PGRP_RULE_UNION:
	case PGRP_RULE_SUBTRACT:
		fuzz_pgrp_ref(p, gi, &r->ref[0]);
		fuzz_pgrp_ref(p, gi, &r->ref[1]);
		break;
	default:
		abort();
	}
}

static void fuzz_pgrp_check(const struct pgrp_policy *p)
{
	guint n = p->groups->len;
	if (p->order->len != n)
		abort();
	int *at = g_new(int, n ? n : 1);
	for (guint i = 0; i < n; i++)
		at[i] = -1;
	for (guint k = 0; k < n; k++) {
		int gi = g_array_index(p->order, int, k);
		if (gi < 0 || (guint)gi >= n || at[gi] >= 0)
			abort();
		at[gi] = (int)k;
	}
	for (guint i = 0; i < n; i++) {
		const struct pgrp_group *g = p->groups->pdata[i];
		fuzz_pgrp_name(g->name);
		if (!g->use || strchr(g->use, ':') || g->rules->len == 0 || !g->line ||
		    g->name_line < g->line)
			abort();
		if (g->previous >= 0 && ((guint)g->previous >= i ||
		    strcmp(((const struct pgrp_group *)p->groups->pdata[g->previous])->name,
			   g->name) != 0))
			abort();
		if ((pgrp_policy_find(p, g->name) == g) != (g->final != 0) ||
		    !pgrp_policy_has(p, g->name))
			abort();
		for (guint ri = 0; ri < g->rules->len; ri++) {
			const struct pgrp_rule *r = g->rules->pdata[ri];
			fuzz_pgrp_rule(p, i, r);
			if ((r->kind == PGRP_RULE_UNION || r->kind == PGRP_RULE_SUBTRACT))
				for (int k = 0; k < 2; k++)
					if (r->ref[k].group >= 0 && at[r->ref[k].group] >= at[i])
						abort();
		}
	}
	g_free(at);
	for (guint i = 0; i < p->notes->len; i++)
		if (!g_str_has_prefix(p->notes->pdata[i], "fuzz.pgrp:"))
			abort();
}

static void fuzz_pgrp_resolve(const struct pgrp_policy *p)
{
	size_t n = G_N_ELEMENTS(fuzz_pgrp_fabric);
	struct pgrp_resolved *r = pgrp_policy_resolve(p, fuzz_pgrp_fabric, n);
	size_t words = pgrp_resolved_words(r);
	const uint64_t *all = pgrp_resolved_group(r, "ALL");
	if (words != 1 || !all || all[0] != (1ull << n) - 1)
		abort();
	uint64_t parts = 0;
	for (int k = PGRP_ALL_SWITCHES; k < PGRP_N_PREDEFINED; k++) {
		const uint64_t *s = pgrp_resolved_group(r, pgrp_predefined_name(k));
		if (!s || (parts & s[0]))
			abort();
		parts |= s[0];
	}
	if (parts != all[0])
		abort();
	for (guint i = 0; i < p->groups->len; i++) {
		const struct pgrp_group *g = p->groups->pdata[i];
		const uint64_t *s = pgrp_resolved_definition(r, i);
		if (!s || (s[0] & ~all[0]) || (g->final && pgrp_resolved_group(r, g->name) != s))
			abort();
		for (guint ri = 0; ri < g->rules->len; ri++) {
			const struct pgrp_rule *ru = g->rules->pdata[ri];
			if (ru->kind != PGRP_RULE_UNION && ru->kind != PGRP_RULE_SUBTRACT)
				continue;
			const uint64_t *a = ru->ref[0].group >= 0 ?
				pgrp_resolved_definition(r, (guint)ru->ref[0].group) :
				pgrp_resolved_group(r, ru->ref[0].name);
			const uint64_t *b = ru->ref[1].group >= 0 ?
				pgrp_resolved_definition(r, (guint)ru->ref[1].group) :
				pgrp_resolved_group(r, ru->ref[1].name);
			uint64_t want = ru->kind == PGRP_RULE_UNION ? a[0] | b[0] : a[0] & ~b[0];
			if ((s[0] & want) != want || (g->rules->len == 1 && s[0] != want))
				abort();
		}
	}
	pgrp_resolved_free(r);
}

int fuzz_port_groups(const uint8_t *data, size_t size)
{
	GError *err = NULL;
	struct pgrp_policy *p = pgrp_policy_parse_text((const char *)data, size, "fuzz.pgrp", &err);
	if (!p) {
		if (!err || !g_str_has_prefix(err->message, "fuzz.pgrp:") ||
		    (err->code != PGRP_POLICY_ERROR_SYNTAX &&
		     err->code != PGRP_POLICY_ERROR_REFERENCE))
			abort();
		g_error_free(err);
		return 0;
	}
	if (err)
		abort();
	fuzz_pgrp_check(p);
	fuzz_pgrp_resolve(p);
	pgrp_policy_free(p);
	return 0;
}

#ifdef IBSM_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_port_groups(data, size);
}
#endif
