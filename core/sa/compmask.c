/* SPDX-License-Identifier: BSD-2-Clause */
/* compmask.c - component-mask matching over record layouts (sa/compmask.h). */
#include <string.h>
#include "sa/compmask.h"

int sa_layout_init(struct sa_layout *l)
{
	unsigned off = 0;
	for (uint8_t i = 0; i < l->n; i++) {
		l->offset[i] = (uint16_t)off;
		off += l->width[i];
	}
	return off == l->size * 8 ? 0 : -1;
}

uint64_t sa_bits(const uint8_t *p, unsigned off, unsigned len)
{
	uint64_t v = 0;
	for (unsigned b = off; b < off + len; b++)
		v = v << 1 | ((p[b / 8] >> (7 - b % 8)) & 1);
	return v;
}

/* Are bits [off, off + len) of a and b equal? Whole bytes compared as bytes. */
static int same_bits(const uint8_t *a, const uint8_t *b, unsigned off, unsigned len)
{
	if (off % 8 == 0 && len % 8 == 0)
		return memcmp(a + off / 8, b + off / 8, len / 8) == 0;
	while (len) {
		unsigned n = len > 64 ? 64 : len;
		if (sa_bits(a, off, n) != sa_bits(b, off, n))
			return 0;
		off += n;
		len -= n;
	}
	return 1;
}

int sa_match(const struct sa_layout *l, uint64_t mask, const uint8_t *query, const uint8_t *rec)
{
	for (uint8_t i = 0; i < l->n && mask; i++, mask >>= 1) {
		if (!(mask & 1))
			continue;
		if ((l->subset >> i) & 1) {
			uint64_t q = sa_bits(query, l->offset[i], l->width[i]);
			if ((sa_bits(rec, l->offset[i], l->width[i]) & q) != q)
				return 0;
		} else if (!same_bits(query, rec, l->offset[i], l->width[i])) {
			return 0;
		}
	}
	return 1;
}
