/* SPDX-License-Identifier: BSD-2-Clause */
/* vltables.h - what the SL2VL mapping tables and VL arbitration blocks of the fabric hold,
 * remembered across sweeps, and the Gets and Sets that make them what QoS wants: a table not
 * known (first contact, a port that came back, a reset switch) is read first, only tables that
 * differ are written (a switch found new or reset is written without the read: the Set's answer
 * tells what it holds), a Set that reads back differently is reported once and not repeated. The
 * SA's SL2VLTableRecords and VLArbitrationTableRecords are answered from this memory. */
#ifndef IBSM_PROGRAM_VLTABLES_H
#define IBSM_PROGRAM_VLTABLES_H

#include <stdint.h>
#include "fabric/model.h"
#include "program/pass.h"

#define VLT_SL2VL_LEN 8    /* bytes of an SL2VL table: SL 2i in the high nibble of byte i */
#define VLT_VLARB_LEN 64   /* bytes of a VLArb block: 32 (VL, weight) entries */

/* One table to hold: which port it belongs to, how it is addressed, what it must contain. */
struct vlt_want {
	uint32_t port;         /* the port id whose table it is (trust: it must have stayed up) */
	uint32_t smp_port;     /* the port id the SMP is addressed to (a switch: its port 0) */
	uint16_t attr;         /* IB_ATTR_SLVL_TABLE or IB_ATTR_VL_ARBITRATION */
	uint32_t mod;          /* attribute modifier */
	uint8_t len;           /* bytes that matter (a VLArb block shorter than its capacity) */
	uint8_t data[VLT_VLARB_LEN]; /* wanted contents (bytes past len are written as 0) */
};

struct vlt_memory;
struct vlt_memory *vlt_memory_new(void);
void vlt_memory_free(struct vlt_memory *m);
/* Forgets everything held (another SM may have written the tables). */
void vlt_memory_forget(struct vlt_memory *m);

struct vlt_stats {
	uint32_t tables, trusted, read, written, failed;
};

/* Makes the fabric hold every wanted table: unknown ones read, differing ones written, replies
 * awaited; what each holds remembered for the next pass. Returns the number of Sets. */
uint32_t vlt_program(struct pass *g, struct vlt_memory *m, const struct vlt_want *w, uint32_t n,
		     struct vlt_stats *st);

/* What a table holds as last read or written (NULL when not known): node GUID, the port number
 * the SMP goes to (a CA port; 0 for a switch), attribute and modifier as vlt_want addresses it;
 * *len gets the bytes known. */
const uint8_t *vlt_memory_held(const struct vlt_memory *m, uint64_t node_guid, uint8_t port,
			       uint16_t attr, uint32_t mod, uint8_t *len);

#endif
