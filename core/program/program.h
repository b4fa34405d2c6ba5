/* SPDX-License-Identifier: BSD-2-Clause */
/* program.h - writing a routed generation into the fabric, in the order that works on real
 * switches and on ibsim (doc/design.md, "Bring-up order"), by the master SM. The programmer keeps
 * what it knows the fabric holds (LFT and P_Key blocks) from sweep to sweep, so a sweep reads
 * only what it cannot know and writes only what differs. */
#ifndef IBSM_PROGRAM_PROGRAM_H
#define IBSM_PROGRAM_PROGRAM_H

#include <stdint.h>
#include "config/options.h"
#include "fabric/model.h"
#include "mad/phase.h"
#include "mad/transport.h"
#include "policy/partitions.h"
#include "routing/result.h"

struct programmer;

/* The programmer of the SM on transport t; stop (may be NULL) interrupts a pass. */
struct programmer *programmer_new(struct transport *t, volatile int *stop);
void programmer_free(struct programmer *p);
/* Forgets what the fabric holds: call it on becoming master (another SM may have written). */
void programmer_forget(struct programmer *p);
/* What the switches' MFTs hold, and the writer of them (program/mft.h). */
struct mft_memory *programmer_mft(struct programmer *p);
/* What the SL2VL and VLArb tables hold (program/vltables.h), for the SA's records. */
struct vlt_memory;
const struct vlt_memory *programmer_vl_tables(const struct programmer *p);
/* The P_Key table port id `port` of f holds as the last pass left it (*cap entries; NULL:
 * not known), for the SA's snapshot. */
const uint16_t *programmer_pkey_table(const struct programmer *p, const struct fabric *f,
				      uint32_t port, uint32_t *cap);
/* Unchanged while the snapshot would be the same (program/pkey.h, pkey_memory_version). */
uint64_t programmer_pkey_version(const struct programmer *p, const struct fabric *f);

struct program_report {
	uint32_t writes;           /* Sets that change the fabric (PortInfo, SwitchInfo, LFT, P_Key) */
	uint32_t lft_blocks_written, lft_blocks_read;
	uint32_t pkey_blocks_written, pkey_blocks_read;
	uint32_t qos_writes;       /* SL2VL/VLArb blocks and VLHighLimit PortInfo Sets (-Q) */
	uint32_t failed;           /* SMPs that failed or were refused (a refused state change) */
	uint32_t failures;         /* SMPs that failed for good */
	uint32_t not_active;       /* linked ports left not ACTIVE */
};

/* Programs generation f with routes r (r->f == f): the SM port first; LID, MasterSMLID, LMC on
 * every end port; MTU/OperVLs on switch links in INIT; SwitchInfo (LinearFDBTop before blocks);
 * P_Key tables of `partitions` (NULL: none); changed LFT blocks with ARMED streaming beside them;
 * ACTIVE once both ends are ARMED. Phases are accounted in pl. first_master: the first sweep as
 * master (ClientReregister). Returns 0 when every linked port is ACTIVE and nothing failed,
 * -EIO otherwise (the report says what). Updates f's port states as read back. */
int program_fabric(struct programmer *p, struct fabric *f, const struct routing_result *r,
		   const struct sm_options *o, const struct part_policy *partitions,
		   struct phase_log *pl, int first_master, struct program_report *rep);

/* The same pass in two halves, so that what needs no routes is written while the routing
 * thread computes them (IBA order: LIDs, port settings and P_Keys before LFTs and ARMED):
 * program_pass_new() prepares a pass over f; program_before_routes() writes the SM port, the
 * end ports (MasterSMSL: the one last written, else sm_sl), FDR10, switch ports, SwitchInfo
 * and the P_Keys, and reads the LFT blocks it cannot know; program_with_routes() writes what
 * is left (all of it when the first half did not run): the MasterSMSL of end ports the routes'
 * engine gives another SL (PRG-0005; none with engines whose path_sl returns the hint), QoS,
 * LFT blocks with ARMED beside them, ACTIVE, gives the verdict as
 * program_fabric() does and frees the pass. program_pass_free() drops a pass whose routes
 * never came (what the first half wrote stays: ports in INIT with their LIDs, no LFT). */
struct program_pass;
struct program_pass *program_pass_new(struct programmer *p, struct fabric *f, const struct sm_options *o,
				      const struct part_policy *partitions, struct phase_log *pl,
				      int first_master);
void program_before_routes(struct program_pass *pp);
int program_with_routes(struct program_pass *pp, const struct routing_result *r, struct program_report *rep);
void program_pass_free(struct program_pass *pp);

#endif
