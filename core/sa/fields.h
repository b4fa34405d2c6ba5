/* SPDX-License-Identifier: BSD-2-Clause */
/* fields.h - record layouts taken from libibmad's field table: the components of an SMP
 * attribute embedded in a record (PortInfo, SwitchInfo) are its fields in wire order, each
 * located by writing all ones into a zeroed attribute, with every reserved gap a component of
 * its own, so a layout cannot drift from the encoding used everywhere else. */
#ifndef IBSM_SA_FIELDS_H
#define IBSM_SA_FIELDS_H

#include <stddef.h>
#include <infiniband/mad.h>
#include "sa/compmask.h"

/* Appends the components of fields[0..n) to l (after those it has). attr_bits: the
 * attribute's size, the tail after its last field becoming one reserved component (0: pad to
 * a whole byte only). The fields listed in subset (ended by IB_NO_FIELD; NULL: none) are
 * marked as bit sets (compmask.h). *end_bits: where the attribute's components end. 0, or -1
 * when a field is missing or out of wire order, or the layout is full. */
int sa_layout_add_fields(struct sa_layout *l, const enum MAD_FIELDS *fields, size_t n,
			 unsigned attr_bits, const enum MAD_FIELDS *subset, unsigned *end_bits);

#endif
