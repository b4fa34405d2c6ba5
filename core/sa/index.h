/* SPDX-License-Identifier: BSD-2-Clause */
/* index.h - per-generation indexes of the SA's linear record kinds, so that a Get or GetTable
 * whose component mask fixes a LID or a GUID reads the few records with that value instead of
 * every record of the generation: NodeRecord by LID, NodeGUID, PortGUID; PortInfoRecord by
 * EndportLID; LinkRecord by FromLID, ToLID. Built once when a generation is handed over
 * (sa/publish.c) and read by the record kinds (sa/records.h, build_indexed). Each index holds
 * every port whose record can carry a given value, in port-id order, which is the order the
 * kinds' full scans emit their records in; the answer is then matched under the whole mask as
 * before, so it is the same, byte for byte, as the scan's. */
#ifndef IBSM_SA_INDEX_H
#define IBSM_SA_INDEX_H

#include <stddef.h>
#include <stdint.h>
#include "fabric/model.h"
#include "sa/compmask.h"

enum sa_ix_key {
	SA_IX_NR_LID,       /* NodeRecord.LID: switch port 0, CA/router ports, LID not 0 */
	SA_IX_NR_NODE_GUID, /* NodeRecord.NodeInfo.NodeGUID: the same ports */
	SA_IX_NR_PORT_GUID, /* NodeRecord.NodeInfo.PortGUID: the same ports */
	SA_IX_PIR_LID,      /* PortInfoRecord.EndportLID: every port of a switch (its LID), CA
			     * ports 1.. (their own, 0 too) */
	SA_IX_LR_FROM,      /* LinkRecord.FromLID: every linked port but switch port 0 */
	SA_IX_LR_TO,        /* LinkRecord.ToLID: the same ports, by their peer's LID */
	SA_IX_N
};

/* A component a kind's index answers: component `bit` of its layout, found in index `key`. */
struct sa_ix_spec {
	uint8_t bit;
	enum sa_ix_key key;
};

struct sa_index;

/* The indexes of generation f (which must outlive them and not change its LIDs or GUIDs). */
struct sa_index *sa_index_new(const struct fabric *f);
void sa_index_free(struct sa_index *ix);  /* NULL: nothing */
/* The ports (ascending) whose records carry value in index key; *n of them (0: none). */
const uint32_t *sa_index_ports(const struct sa_index *ix, enum sa_ix_key key, uint64_t value,
			       size_t *n);
/* Of the n_specs components of layout l (sa_layout_init done) a kind's indexes answer, those
 * mask fixes: the ports of the one with the fewest (its value read from query). Returns 0 when
 * the mask fixes none (or ix is NULL): the caller scans every record. */
int sa_index_pick(const struct sa_index *ix, const struct sa_layout *l, const struct sa_ix_spec *specs,
		  size_t n_specs, uint64_t mask, const uint8_t *query, const uint32_t **ports, size_t *n);
/* Bytes the indexes hold. */
size_t sa_index_bytes(const struct sa_index *ix);

#endif
