/* SPDX-License-Identifier: BSD-2-Clause */
/* port_groups_resolve.c - the ports each group of a port groups policy holds, over a flat
 * array of ports the caller builds from its fabric (struct pgrp_port), so that the policy
 * library needs no core types. A set is a bit set over the array's indexes.
 * What matches (the documents' words made exact):
 *  - port-guid G: the ports whose node GUID or port GUID is G (for a switch: every port, whose
 *    port GUID is the switch's node GUID; for a CA node GUID: all its ports; for a CA port GUID:
 *    that port), restricted to the listed port numbers when '@' gives them.
 *  - port-guid-range LO-HI: the same, for every G in LO..HI.
 *  - port-name: CA and router ports only (never a switch); the NodeDescription's first word
 *    (up to a blank) is the hostname, exactly; with hca_idx N its next word is "HCA-N"
 *    exactly (so HCA-1 is not HCA-10); with port P only port number P.
 *  - node-name: any node type whose NodeDescription the expression matches from its start
 *    (see port_groups_parse.c); with a port only that port number.
 *  - union-rule A, B: A + B; subtract-rule A, B: A - B; a group with several rules is the
 *    union of its rules.
 *  - ALL: every port of the array; ALL_SWITCHES: switch ports (port 0 included); ALL_CAS: CA
 *    ports; ALL_ROUTERS: router ports. */
#include <string.h>
#include "policy/port_groups.h"

struct pgrp_resolved {
	size_t n_ports, n_words;
	uint64_t *predefined[PGRP_N_PREDEFINED];
	GPtrArray *defs;           /* uint64_t *: per definition, in the policy's groups order */
	GHashTable *by_name;       /* char * (owned) -> uint64_t *: the final definitions and
				    * the predefined groups */
};

static void set_add(uint64_t *s, size_t i)
{
	s[i / 64] |= 1ull << (i % 64);
}

static int guid_item_matches(const struct pgrp_guid *item, const struct pgrp_port *pt)
{
	return item->all_ports || pgrp_port_set_has(&item->ports, pt->port_num);
}

static void match_port_guid(const struct pgrp_rule *r, const struct pgrp_port *ports, size_t n,
			    uint64_t *out)
{
	GHashTable *by_guid = g_hash_table_new(g_int64_hash, g_int64_equal);
	for (guint k = 0; k < r->guids->len; k++) {
		struct pgrp_guid *item = &g_array_index(r->guids, struct pgrp_guid, k);
		g_hash_table_insert(by_guid, &item->guid, item);
	}
	for (size_t i = 0; i < n; i++) {
		const struct pgrp_guid *a = g_hash_table_lookup(by_guid, &ports[i].node_guid);
		const struct pgrp_guid *b = g_hash_table_lookup(by_guid, &ports[i].port_guid);
		if ((a && guid_item_matches(a, &ports[i])) ||
		    (b && guid_item_matches(b, &ports[i])))
			set_add(out, i);
	}
	g_hash_table_destroy(by_guid);
}

static void match_guid_range(const struct pgrp_rule *r, const struct pgrp_port *ports, size_t n,
			     uint64_t *out)
{
	for (size_t i = 0; i < n; i++) {
		const struct pgrp_port *pt = &ports[i];
		if ((pt->node_guid >= r->lo && pt->node_guid <= r->hi) ||
		    (pt->port_guid >= r->lo && pt->port_guid <= r->hi))
			set_add(out, i);
	}
}

static int is_space(char c)
{
	return c == ' ' || c == '\t';
}

/* "HCA-N" at d, followed by the end or a blank, with N == idx. */
static int hca_word_is(const char *d, int idx)
{
	if (strncmp(d, "HCA-", 4) != 0)
		return 0;
	d += 4;
	if (!g_ascii_isdigit(*d))
		return 0;
	long v = 0;
	for (; g_ascii_isdigit(*d); d++) {
		v = v * 10 + (*d - '0');
		if (v > 1000000)
			return 0;
	}
	return (*d == '\0' || is_space(*d)) && v == idx;
}

static int name_matches(const struct pgrp_name *e, const struct pgrp_port *pt)
{
	if (pt->node_type != PGRP_NODE_CA && pt->node_type != PGRP_NODE_ROUTER)
		return 0;
	if (e->port >= 0 && pt->port_num != e->port)
		return 0;
	const char *d = pt->node_desc ? pt->node_desc : "";
	size_t h = strlen(e->hostname);
	if (strncmp(d, e->hostname, h) != 0 || (d[h] != '\0' && !is_space(d[h])))
		return 0;
	if (e->hca_idx < 0)
		return 1;
	d += h;
	while (is_space(*d))
		d++;
	return hca_word_is(d, e->hca_idx);
}

static void match_port_name(const struct pgrp_rule *r, const struct pgrp_port *ports, size_t n,
			    uint64_t *out)
{
	for (size_t i = 0; i < n; i++)
		for (guint k = 0; k < r->names->len; k++) {
			const struct pgrp_name *e = &g_array_index(r->names, struct pgrp_name, k);
			if (name_matches(e, &ports[i])) {
				set_add(out, i);
				break;
			}
		}
}

static void match_node_name(const struct pgrp_rule *r, const struct pgrp_port *ports, size_t n,
			    uint64_t *out)
{
	const char *last_desc = NULL;
	uint64_t last_node = 0;
	int last = 0, have_last = 0;
	for (size_t i = 0; i < n; i++) {
		const struct pgrp_port *pt = &ports[i];
		if (r->port >= 0 && pt->port_num != r->port)
			continue;
		const char *d = pt->node_desc ? pt->node_desc : "";
		/* the ports of one node come together, with one description: match it once */
		if (!have_last || pt->node_guid != last_node || d != last_desc) {
			last = g_regex_match(r->regex, d, 0, NULL);
			last_desc = d;
			last_node = pt->node_guid;
			have_last = 1;
		}
		if (last)
			set_add(out, i);
	}
}

static const uint64_t *ref_set(const struct pgrp_resolved *res, const struct pgrp_ref *ref)
{
	if (ref->predefined >= 0 && ref->predefined < PGRP_N_PREDEFINED)
		return res->predefined[ref->predefined];
	if (ref->group >= 0 && (guint)ref->group < res->defs->len)
		return res->defs->pdata[ref->group];
	return NULL;
}

static void match_rule(const struct pgrp_resolved *res, const struct pgrp_rule *r,
		       const struct pgrp_port *ports, size_t n, uint64_t *out)
{
	const uint64_t *a, *b;
	switch (r->kind) {
	case PGRP_RULE_PORT_GUID:
		match_port_guid(r, ports, n, out);
		break;
	case PGRP_RULE_GUID_RANGE:
		match_guid_range(r, ports, n, out);
		break;
	case PGRP_RULE_PORT_NAME:
		match_port_name(r, ports, n, out);
		break;
	case PGRP_RULE_NODE_NAME:
		if (r->regex)
			match_node_name(r, ports, n, out);
		break;
	case PGRP_RULE_UNION:
	case PGRP_RULE_SUBTRACT:
		a = ref_set(res, &r->ref[0]);
		b = ref_set(res, &r->ref[1]);
		for (size_t w = 0; a && b && w < res->n_words; w++)
			out[w] |= r->kind == PGRP_RULE_UNION ? a[w] | b[w] : a[w] & ~b[w];
		break;
	}
}

static void fill_predefined(struct pgrp_resolved *res, const struct pgrp_port *ports, size_t n)
{
	for (int k = 0; k < PGRP_N_PREDEFINED; k++)
		res->predefined[k] = g_new0(uint64_t, res->n_words ? res->n_words : 1);
	for (size_t i = 0; i < n; i++) {
		set_add(res->predefined[PGRP_ALL], i);
		if (ports[i].node_type == PGRP_NODE_SWITCH)
			set_add(res->predefined[PGRP_ALL_SWITCHES], i);
		else if (ports[i].node_type == PGRP_NODE_CA)
			set_add(res->predefined[PGRP_ALL_CAS], i);
		else if (ports[i].node_type == PGRP_NODE_ROUTER)
			set_add(res->predefined[PGRP_ALL_ROUTERS], i);
	}
	for (int k = 0; k < PGRP_N_PREDEFINED; k++)
		g_hash_table_insert(res->by_name, g_strdup(pgrp_predefined_name(k)),
				    res->predefined[k]);
}

struct pgrp_resolved *pgrp_policy_resolve(const struct pgrp_policy *p,
					  const struct pgrp_port *ports, size_t n)
{
	struct pgrp_resolved *res = g_new0(struct pgrp_resolved, 1);
	res->n_ports = ports ? n : 0;
	res->n_words = (res->n_ports + 63) / 64;
	res->defs = g_ptr_array_new_with_free_func(g_free);
	res->by_name = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	fill_predefined(res, ports, res->n_ports);
	if (!p)
		return res;
	for (guint i = 0; i < p->groups->len; i++)
		g_ptr_array_add(res->defs, g_new0(uint64_t, res->n_words ? res->n_words : 1));
	/* the parser's order: every definition after those its references mean */
	for (guint k = 0; k < p->order->len; k++) {
		int gi = g_array_index(p->order, int, k);
		if (gi < 0 || (guint)gi >= p->groups->len)
			continue;
		const struct pgrp_group *g = p->groups->pdata[gi];
		for (guint ri = 0; ri < g->rules->len; ri++)
			match_rule(res, g->rules->pdata[ri], ports, res->n_ports,
				   res->defs->pdata[gi]);
	}
	for (guint i = 0; i < p->groups->len; i++) {
		const struct pgrp_group *g = p->groups->pdata[i];
		if (g->final)
			g_hash_table_insert(res->by_name, g_strdup(g->name), res->defs->pdata[i]);
	}
	return res;
}

void pgrp_resolved_free(struct pgrp_resolved *r)
{
	if (!r)
		return;
	g_hash_table_destroy(r->by_name);
	g_ptr_array_free(r->defs, TRUE);
	for (int k = 0; k < PGRP_N_PREDEFINED; k++)
		g_free(r->predefined[k]);
	g_free(r);
}

size_t pgrp_resolved_words(const struct pgrp_resolved *r)
{
	return r->n_words;
}

const uint64_t *pgrp_resolved_group(const struct pgrp_resolved *r, const char *name)
{
	return name ? g_hash_table_lookup(r->by_name, name) : NULL;
}

const uint64_t *pgrp_resolved_definition(const struct pgrp_resolved *r, guint i)
{
	return i < r->defs->len ? r->defs->pdata[i] : NULL;
}

size_t pgrp_resolved_count(const struct pgrp_resolved *r, const uint64_t *set)
{
	size_t c = 0;
	for (size_t w = 0; set && w < r->n_words; w++)
		c += (size_t)__builtin_popcountll(set[w]);
	return c;
}
