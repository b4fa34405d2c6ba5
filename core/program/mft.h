/* SPDX-License-Identifier: BSD-2-Clause */
/* mft.h - multicast forwarding tables: what each switch holds, in blocks of 32 MLIDs by
 * positions of 16 ports (IBA 14.2.5.12; attribute modifier position << 28 | block), kept across
 * sweeps like the LFTs, and the Sets of only the blocks that differ from what is wanted. A
 * block never read or written is written whole (a Get costs as much as a Set); a switch found
 * reset (no LID or LinearFDBTop) is known to hold nothing. Sets go out without waiting: their
 * replies update the memory whenever they come, so a join does not wait for a sweep. The SA
 * reads the memory for MulticastForwardingTableRecords: what the switches hold. Where a switch
 * honours it, SwitchInfo:MulticastFDBTop follows the blocks in use (mft_memory_use_top()). */
#ifndef IBSM_PROGRAM_MFT_H
#define IBSM_PROGRAM_MFT_H

#include <stdint.h>
#include "fabric/model.h"
#include "mad/transport.h"

#define MFT_MLID_FIRST 0xC000
#define MFT_BLOCK_MLIDS 32
#define MFT_POSITION_PORTS 16

struct mft_memory;

/* The port mask (256 bits) switch sw should have for mlid, NULL: no port. */
typedef const uint64_t *(*mft_want_fn)(void *ctx, uint32_t sw, uint16_t mlid);

struct mft_stats {
	uint32_t blocks_written;   /* Sets queued */
	uint32_t switches;         /* switches with at least one */
	uint32_t over_cap;         /* switches whose MulticastFDBCap is below an MLID in use */
	uint32_t tops_written;     /* SwitchInfo Sets of MulticastFDBTop queued */
};

struct mft_memory *mft_memory_new(struct transport *t);
void mft_memory_free(struct mft_memory *m);
/* Forgets every switch (another SM may have written them). */
void mft_memory_forget(struct mft_memory *m);
/* use_mfttop: with it (the default) mft_program() also writes SwitchInfo:MulticastFDBTop of
 * every switch whose port 0 CapabilityMask has IsMulticastFDBTopSupported (bit 30), as OpenSM
 * 3.3.23 does: 0xC000 + 32 * (the blocks up to the last holding a port of it) - 1, or 0xBFFF
 * (no entry valid) on a switch outside every tree, whose blocks are cleared too. A switch that
 * honours the top and holds one below 0xC000 forwards no multicast at all. */
void mft_memory_use_top(struct mft_memory *m, int use_top);
/* Queues a Set for every block and position of every switch of f that differs from want(),
 * for the MLIDs 0xC000 .. mlid_top (and every block a switch was seen to hold more in).
 * Returns the number of Sets queued; the replies come through the transport. */
uint32_t mft_program(struct mft_memory *m, const struct fabric *f, uint16_t mlid_top, mft_want_fn want,
		     void *ctx, struct mft_stats *st);
/* Sets not yet answered. */
uint32_t mft_in_flight(const struct mft_memory *m);
/* SMPs that failed since the memory was made. */
uint64_t mft_failures(const struct mft_memory *m);
/* What switch `guid` holds in block `block`, position `pos`: 1 with out[32] filled when known,
 * 0 when not (never written, or a Set failed). */
int mft_memory_block(const struct mft_memory *m, uint64_t guid, uint32_t block, uint8_t pos,
		     uint16_t out[MFT_BLOCK_MLIDS]);
/* Blocks and positions known for switch guid (0 when none). */
uint32_t mft_memory_nblocks(const struct mft_memory *m, uint64_t guid, uint8_t *positions);

#endif
