/* SPDX-License-Identifier: BSD-2-Clause */
/* records.c - the record kinds answered: what of them a requester may see, and which of those
 * a query's component mask matches (sa/records.h). */
#include <string.h>
#include "sa/records.h"
#include "sa/wire.h"

int sa_view_sees(const struct sa_view *v, uint32_t p)
{
	if (p == IBSM_NONE) /* a record about no port of the generation */
		return !v->pk;
	return sa_pkeys_share(v->pk, v->requester, p);
}

/* The port a record of size bytes names by its LID (and port number at port_at), or
 * IBSM_NONE. The kinds judged so are those OpenSM 3.3.23 answers that way (its
 * osm_sa_slvl_record.c, osm_sa_vlarb_record.c, osm_sa_pkey_record.c, osm_sa_sw_info_record.c,
 * osm_sa_lft_record.c, osm_sa_mft_record.c, osm_sa_sminfo_record.c). */
static uint32_t named_port(const struct fabric *f, const uint8_t *rec, size_t size, uint8_t port_at)
{
	uint16_t lid = (uint16_t)(rec[0] << 8 | rec[1]);
	uint32_t p = lid && lid <= f->pub.max_lid ? f->pub.lid_port[lid] : IBSM_NONE;
	if (p == IBSM_NONE)
		return p;
	const struct ibsm_node *n = &f->nodes[f->ports[p].node];
	if (n->type != IBSM_SWITCH)
		return p;
	if (port_at && port_at < size && rec[port_at] <= n->nports)
		return n->port0 + rec[port_at];
	return n->port0;
}

/* Keeps of the records from start on those whose LID names a port the requester may see, for
 * the kinds judged by LID. */
static void keep_seen(const struct sa_kind *k, const struct sa_view *v, guint start, GByteArray *out)
{
	size_t size = k->layout.size;
	if (!k->by_lid || !v->pk)
		return;
	guint kept = start;
	for (guint off = start; off + size <= out->len; off += (guint)size) {
		if (!sa_view_sees(v, named_port(v->f, out->data + off, size, k->port_at)))
			continue;
		if (kept != off)
			memmove(out->data + kept, out->data + off, size);
		kept += (guint)size;
	}
	g_byte_array_set_size(out, kept);
}

void sa_kind_build(const struct sa_kind *k, const struct sa_view *v, int trusted, GByteArray *out)
{
	guint start = out->len;
	k->build(v, trusted, out);
	keep_seen(k, v, start, out);
}

void sa_kind_answer(const struct sa_kind *k, const struct sa_view *v, int trusted, const uint8_t *query,
		    size_t query_len, uint64_t mask, GByteArray *out)
{
	guint start = out->len;
	size_t size = k->layout.size, n = 0;
	uint8_t copy[SA_MAD_DATA];
	const uint8_t *asked = query;
	uint64_t asked_mask = mask;
	const struct sa_layout *l = &k->layout;
	struct sa_layout exact;
	if (l->subset && !v->bitwise) { /* without AttributeModifier bit 31: compared exactly */
		exact = *l;
		exact.subset = 0;
		l = &exact;
	}
	if (k->query && v->f && size <= sizeof(copy) && query_len >= size) {
		memcpy(copy, query, size);
		k->query(v, &mask, copy);
		query = copy;
	}
	if (v->f) {
		/* a query fixing an indexed LID or GUID reads only the records that carry it */
		if (!(k->build_indexed && v->ix && query_len >= size &&
		      k->build_indexed(v, trusted, mask, query, out)))
			k->build(v, trusted, out);
		keep_seen(k, v, start, out);
	}
	for (size_t off = start; off + size <= out->len; off += size) {
		if (!sa_match(l, mask, query, out->data + off))
			continue;
		if (start + n * size != off)
			memmove(out->data + start + n * size, out->data + off, size);
		if (k->answer && query_len >= size)
			k->answer(asked_mask, asked, out->data + start + n * size);
		n++;
	}
	g_byte_array_set_size(out, (guint)(start + n * size));
}
