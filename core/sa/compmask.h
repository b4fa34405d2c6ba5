/* SPDX-License-Identifier: BSD-2-Clause */
/* compmask.h - component-mask matching (IBA 15.2.4.4): a record type's layout is the list of
 * its components' widths in bits, in record order; component i is bit i of the mask, and a
 * record matches a query when every component whose bit is set is equal in both. Reserved
 * fields are components too: a mask may name them (they then match on their value, 0). */
#ifndef IBSM_SA_COMPMASK_H
#define IBSM_SA_COMPMASK_H

#include <stddef.h>
#include <stdint.h>

#define SA_MAX_COMPONENTS 64

struct sa_layout {
	const char *name;          /* "NodeRecord" */
	uint16_t attr;
	size_t size;               /* record bytes */
	uint8_t n;                 /* components */
	uint16_t width[SA_MAX_COMPONENTS]; /* bits of each, in record order; they add up to size*8 */
	uint16_t offset[SA_MAX_COMPONENTS]; /* filled by sa_layout_init() */
	uint64_t subset;           /* components matched as bit sets: every bit the query sets
				    * must be set in the record (PortInfo.CapabilityMask: the
				    * "is SM" query); the SA does so when the request asks (its
				    * AttributeModifier bit 31), as OpenSM does */
};

/* Computes offsets; 0, or -1 when the widths do not add up to the size (a table error). */
int sa_layout_init(struct sa_layout *l);
/* Does rec match query for every component in mask (equal, or a superset for the subset
 * components; these are at most 64 bits wide)? Bits of mask beyond the layout's components
 * are ignored (IBA: they are reserved). */
int sa_match(const struct sa_layout *l, uint64_t mask, const uint8_t *query, const uint8_t *rec);
/* The bits [off, off + len) of a big-endian byte string, as one value (len <= 64). */
uint64_t sa_bits(const uint8_t *p, unsigned off, unsigned len);

#endif
