/* SPDX-License-Identifier: BSD-2-Clause */
/* pkey.h - P_Key table programming: the partition policy in force is expanded into the table
 * each end port must hold; the same table goes to the switch port facing it. Index rules and
 * block diffing are pure functions here so the unit tests can check them; what each table
 * holds is remembered across sweeps, so an unchanged fabric is neither read nor written. */
#ifndef IBSM_PROGRAM_PKEY_H
#define IBSM_PROGRAM_PKEY_H

#include <stdint.h>
#include <glib.h>
#include "fabric/model.h"
#include "policy/partitions.h"
#include "program/pass.h"

#define PKEY_MAX_ENTRIES 2048  /* what a 16-bit block number could ever address we cap here */

/* One table to write: port id `port` gets the table of end port `src` (itself, or for a switch
 * external port the end port it faces), with `cap` entries; src IBSM_NONE (a switch port
 * facing another switch): only read, for the SA to show. */
struct pkey_target {
	uint32_t port, src, cap;
};

/* Lays out the wanted keys of one port over a table of cap entries, given what it holds now
 * (cur, cap entries, 0 = empty). Rules in order: the indx0 key at index 0, otherwise the default
 * key (0x7fff with its membership bit); every other key keeps the index it has (exact match
 * first, then the same 15-bit key with the other membership); new keys take the lowest free
 * index. out gets cap entries. Returns how many wanted keys did not fit. */
uint32_t pkey_layout(const uint16_t *cur, uint32_t cap, const struct port_pkeys *want,
		     uint16_t *out);

/* Blocks of a cap-entry table that differ between held and want: sets changed[b] (0/1) for
 * each of the ceil(cap/32) blocks, returns how many differ. */
uint32_t pkey_diff_blocks(const uint16_t *held, const uint16_t *want, uint32_t cap,
			  uint8_t *changed);

/* Every table to program on f: every end port with a PortInfo (CA ports: NodeInfo.PartitionCap,
 * switch port 0: the switch's NodeInfo.PartitionCap) and every switch external port facing a
 * CA port (SwitchInfo.PartitionEnforcementCap). Targets with capacity 0 are left out. */
GArray *pkey_targets(const struct fabric *f);

/* Attribute modifier of a PKeyTable block: block number, plus the port number in bits 16..23
 * for a switch external port. */
uint32_t pkey_attr_mod(const struct fabric *f, uint32_t port, uint32_t block);

struct pkey_memory *pkey_memory_new(void);
void pkey_memory_free(struct pkey_memory *m);
/* The table port id `port` of f holds as the last pass left it (*cap entries), or NULL when
 * that is not known. */
const uint16_t *pkey_memory_table(const struct pkey_memory *m, const struct fabric *f, uint32_t port,
				  uint32_t *cap);
/* Forgets what every table holds (another SM may have written them while we were not master). */
void pkey_memory_forget(struct pkey_memory *m);
/* A value that stays the same from one pass to the next only when what pkey_memory_table
 * answers for every port id of f is what it answered for the same id of the generation of the
 * pass before (every table kept, no target came or went); 0 when the last pass was not on f.
 * Copies made from the tables (the SA's) can be kept while it stays. */
uint64_t pkey_memory_version(const struct pkey_memory *m, const struct fabric *f);

struct pkey_stats {
	uint32_t tables;           /* tables programmed */
	uint32_t trusted;          /* known from earlier sweeps: not read */
	uint32_t skipped;          /* of those, inputs unchanged: not looked at (no layout, no diff) */
	uint32_t blocks_read, blocks_written;
};

/* What pkey_program() decides before its first SMP (targets, tables left as they are, the
 * policy's keys per port), started on a thread of its own now: it runs beside the SMPs sent
 * until pkey_program(), which takes it (made again there if the policy is another). Touches
 * f (read only) and g->pkey_mem, which nothing else may touch meanwhile. */
void pkey_prepare_start(struct pass *g, const struct part_policy *policy);
/* Waits for a prepared pass, or for the end of one (what pkey_program() left remembering
 * beside the next phases), serving the fabric meanwhile, and forgets it; none: nothing. The
 * memory (pkey_memory_*) is whole only after it. */
void pkey_prepare_drop(struct pass *g);

/* The programming step, with g->pkey_mem: every target's table known (remembered if it can be
 * trusted, else read), the blocks that differ from the policy's layout written, what each
 * holds remembered (with a transport, by a job joined by pkey_prepare_drop()). Nothing when
 * policy is NULL. Returns the number of blocks written. */
uint32_t pkey_program(struct pass *g, const struct part_policy *policy, struct pkey_stats *st);

#endif
