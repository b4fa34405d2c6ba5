/* SPDX-License-Identifier: BSD-2-Clause */
/* lft.h - linear forwarding tables: SwitchInfo (LinearFDBTop before any block, LifeTimeValue;
 * PortStateChange is left to discovery), and only the 64-entry LFT blocks that differ from what the switch
 * holds. What a switch holds is remembered across sweeps (our own writes and reads); it is
 * read only at first contact with a switch that has tables, and forgotten when the switch
 * comes back reset. */
#ifndef IBSM_PROGRAM_LFT_H
#define IBSM_PROGRAM_LFT_H

#include <stdint.h>
#include "program/pass.h"

struct lft_memory;

struct lft_memory *lft_memory_new(void);
void lft_memory_free(struct lft_memory *m);
/* Blocks needed for a table of stride entries. */
uint32_t lft_nblocks(uint32_t stride);
/* SwitchInfo Set of switch sw when LinearFDBTop or LifeTimeValue need it. */
void lft_switchinfo(struct pass *g, uint32_t sw);
/* (Both below use g->lft_mem.) Prepares what switch sw holds in nblocks blocks: known from memory, empty (no LID or no
 * LinearFDBTop: a new or reset switch), or read now. Returns the number of blocks read. */
uint32_t lft_prepare(struct pass *g, uint32_t sw, uint32_t nblocks);
/* Queues a Set for every block of every switch that differs from what it holds, block-major
 * across switches, paced by its slicer (fabric/slice.h: at most SLICE_QUEUE_HIGH queued; a
 * 40k-host fabric has 3.7M LFT blocks): the same SMPs in the same order as queueing them all
 * at once. Returns the number queued; stops early when *g->stop becomes non-zero. */
uint32_t lft_write_changed(struct pass *g, uint32_t nblocks);

#endif
