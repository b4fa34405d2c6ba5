/* SPDX-License-Identifier: BSD-2-Clause */
/* neighbors.h - m_key_lookup's record of who is linked to whom (OpenSM's neighbors file, kept
 * in guid2mkey), from each new generation: the keys of ports not reached yet next time. */
#ifndef IBSM_FABRIC_NEIGHBORS_H
#define IBSM_FABRIC_NEIGHBORS_H

#include "fabric/model.h"
#include "fabric/slice.h"
#include "mad/mkey_derive.h"

/* Every link of f into c->lookup (nothing without one), but those prev had too: they are
 * there already (recorded then; entries are only replaced). 50 000 links at 8192 hosts are
 * tens of ms: sl (or NULL) serves the fabric between slices of them. */
void fabric_record_neighbors(const struct fabric *f, const struct mkey_cfg *c, const struct fabric *prev,
			     struct slicer *sl);

#endif
