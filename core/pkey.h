/* pkey.h - P_Key table programming (issue 6): the partition policy in force is expanded into
 * the table each end port must hold; the same table goes to the switch port facing it. Index
 * rules and block diffing are pure functions here so the unit tests can check them. */
#ifndef IBSM_PKEY_H
#define IBSM_PKEY_H

#include <stdint.h>
#include <glib.h>
#include "model.h"
#include "partitions.h"

#define PKEY_BLOCK 32          /* entries per PKeyTable block */
#define PKEY_MAX_ENTRIES 2048  /* what a 16-bit block number could ever address we cap here */

struct sm;

/* One table to write: port id `port` gets the table of end port `src` (itself, or for a switch
 * external port the end port it faces), with `cap` entries. */
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

/* PortInfo payload of a switch external port: sets PartitionEnforcementInbound/Outbound when a
 * partition policy is in force and the port faces an end port (a CA or router port). */
void pkey_enforce_bits(const struct sm *sm, const struct fabric *f, uint32_t port, uint8_t *pi);

/* Loads opt->partition_config_file into sm->part_policy: a missing file means the default
 * policy; a file that fails to parse keeps the policy in force (or the default when there is
 * none yet) and logs the error. Returns 0 when the file (or its absence) was taken, -1 if kept. */
int pkey_policy_load(struct sm *sm);

/* The programming phase: reads the tables of every target, writes the blocks that differ.
 * Loads the policy first if none is in force. Returns the number of Sets sent. */
uint32_t pkey_program(struct sm *sm, struct fabric *f);

/* Frees sm->part_policy and the read-back memory. */
void pkey_state_free(struct sm *sm);

#endif
