/* SPDX-License-Identifier: BSD-2-Clause */
/* index.c - per-generation indexes of NodeRecord, PortInfoRecord and LinkRecord by LID and
 * GUID (sa/index.h): for each, the ports sorted by (value, port id), with their values beside
 * them, looked up by binary search. Which ports enter each index mirrors the scans of
 * sa/node_record.c, sa/portinfo_record.c and sa/link_record.c; those scans still decide, port
 * by port, whether a record is answered. */
#include <stdlib.h>
#include "sa/index.h"

struct ix_entry {
	uint64_t value;
	uint32_t port;
};

struct ix_one {
	uint64_t *value;   /* [n], ascending */
	uint32_t *port;    /* [n], ascending within one value */
	size_t n;
};

struct sa_index {
	struct ix_one ix[SA_IX_N];
};

static int cmp_entry(const void *a, const void *b)
{
	const struct ix_entry *x = a, *y = b;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return x->port < y->port ? -1 : x->port > y->port;
}

/* The LID records about port p carry: a switch's for its every port, else the port's. */
static uint16_t record_lid(const struct fabric *f, uint32_t p)
{
	const struct ibsm_node *n = &f->nodes[f->ports[p].node];
	return n->type == IBSM_SWITCH ? f->ports[n->port0].lid : f->ports[p].lid;
}

static void add(GArray *a, uint64_t value, uint32_t port)
{
	struct ix_entry e = { .value = value, .port = port };
	g_array_append_val(a, e);
}

static void seal(struct ix_one *o, GArray *a)
{
	g_array_sort(a, cmp_entry);
	o->n = a->len;
	o->value = g_new(uint64_t, o->n ? o->n : 1);
	o->port = g_new(uint32_t, o->n ? o->n : 1);
	for (size_t i = 0; i < o->n; i++) {
		const struct ix_entry *e = &g_array_index(a, struct ix_entry, i);
		o->value[i] = e->value;
		o->port[i] = e->port;
	}
	g_array_free(a, TRUE);
}

struct sa_index *sa_index_new(const struct fabric *f)
{
	struct sa_index *ix = g_new0(struct sa_index, 1);
	GArray *a[SA_IX_N];
	for (int k = 0; k < SA_IX_N; k++)
		a[k] = g_array_new(FALSE, FALSE, sizeof(struct ix_entry));
	for (uint32_t node = 0; node < f->pub.n_nodes; node++) {
		const struct ibsm_node *n = &f->nodes[node];
		int sw = n->type == IBSM_SWITCH;
		for (uint32_t pn = 0; pn <= n->nports; pn++) {
			uint32_t p = n->port0 + pn;
			const struct ibsm_port *port = &f->ports[p];
			/* NodeRecord: a switch's port 0, a CA's (router's) ports, with a LID */
			if ((sw ? pn == 0 : pn != 0) && port->lid) {
				add(a[SA_IX_NR_LID], port->lid, p);
				add(a[SA_IX_NR_NODE_GUID], n->guid, p);
				add(a[SA_IX_NR_PORT_GUID], port->guid, p);
			}
			/* PortInfoRecord: every port of a switch, a CA's from 1 */
			if (sw || pn != 0)
				add(a[SA_IX_PIR_LID], record_lid(f, p), p);
			/* LinkRecord: every linked port but port 0 */
			if (pn != 0 && port->peer != IBSM_NONE) {
				add(a[SA_IX_LR_FROM], record_lid(f, p), p);
				add(a[SA_IX_LR_TO], record_lid(f, port->peer), p);
			}
		}
	}
	for (int k = 0; k < SA_IX_N; k++)
		seal(&ix->ix[k], a[k]);
	return ix;
}

void sa_index_free(struct sa_index *ix)
{
	if (!ix)
		return;
	for (int k = 0; k < SA_IX_N; k++) {
		g_free(ix->ix[k].value);
		g_free(ix->ix[k].port);
	}
	g_free(ix);
}

const uint32_t *sa_index_ports(const struct sa_index *ix, enum sa_ix_key key, uint64_t value,
			       size_t *n)
{
	const struct ix_one *o = &ix->ix[key];
	size_t lo = 0, hi = o->n; /* the first entry not below value */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->value[mid] < value)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t end = lo;
	while (end < o->n && o->value[end] == value)
		end++;
	*n = end - lo;
	return o->port + lo;
}

int sa_index_pick(const struct sa_index *ix, const struct sa_layout *l, const struct sa_ix_spec *specs,
		  size_t n_specs, uint64_t mask, const uint8_t *query, const uint32_t **ports, size_t *n)
{
	int found = 0;
	for (size_t i = 0; ix && i < n_specs; i++) {
		uint8_t c = specs[i].bit;
		if (c >= l->n || !((mask >> c) & 1))
			continue;
		size_t m;
		const uint32_t *p = sa_index_ports(ix, specs[i].key,
						   sa_bits(query, l->offset[c], l->width[c]), &m);
		if (!found || m < *n) {
			*ports = p;
			*n = m;
		}
		found = 1;
	}
	return found;
}

size_t sa_index_bytes(const struct sa_index *ix)
{
	size_t b = ix ? sizeof(*ix) : 0;
	for (int k = 0; ix && k < SA_IX_N; k++)
		b += ix->ix[k].n * (sizeof(uint64_t) + sizeof(uint32_t));
	return b;
}
