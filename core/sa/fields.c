/* SPDX-License-Identifier: BSD-2-Clause */
/* fields.c - record components from libibmad's field table (sa/fields.h). */
#include <string.h>
#include "sa/fields.h"

#define ATTR_MAX_BYTES 64 /* an SMP attribute */

/* [*off, *off + *len) of a field inside its attribute: the bits that all ones, encoded at
 * the field's own width (mad_encode_field), sets in a zeroed attribute. */
static int locate(enum MAD_FIELDS fld, unsigned *off, unsigned *len)
{
	uint8_t a[ATTR_MAX_BYTES] = { 0 }, ones[ATTR_MAX_BYTES];
	memset(ones, 0xff, sizeof(ones));
	mad_encode_field(a, fld, ones);
	int first = -1, last = -1;
	for (unsigned b = 0; b < ATTR_MAX_BYTES * 8; b++) {
		if ((a[b / 8] >> (7 - b % 8)) & 1) {
			if (first < 0)
				first = (int)b;
			last = (int)b;
		}
	}
	if (first < 0)
		return -1;
	*off = (unsigned)first;
	*len = (unsigned)(last - first + 1);
	return 0;
}

int sa_layout_add_fields(struct sa_layout *l, const enum MAD_FIELDS *fields, size_t n,
			 unsigned attr_bits, const enum MAD_FIELDS *subset, unsigned *end_bits)
{
	unsigned at = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned off, len;
		if (locate(fields[i], &off, &len) < 0 || off < at || l->n + 2 > SA_MAX_COMPONENTS)
			return -1;
		if (off > at)
			l->width[l->n++] = (uint16_t)(off - at); /* a reserved gap */
		for (const enum MAD_FIELDS *x = subset; x && *x != IB_NO_FIELD; x++)
			if (fields[i] == *x)
				l->subset |= 1ULL << l->n;
		l->width[l->n++] = (uint16_t)len;
		at = off + len;
	}
	unsigned end = attr_bits ? attr_bits : (at + 7) / 8 * 8;
	if (end < at || l->n + 1 > SA_MAX_COMPONENTS)
		return -1;
	if (end > at)
		l->width[l->n++] = (uint16_t)(end - at);
	*end_bits = end;
	return 0;
}
