/* SPDX-License-Identifier: BSD-2-Clause */
/* vendor_qos.h - per-SL rate limits written with NVIDIA's vendor SMP attribute QoSConfigSL
 * (attribute 0xFF82, NVIDIA OpenSM's IB_MAD_ATTR_QOS_CONFIG_SL): its bytes, and the pass that
 * sets them on the ports the enhanced QoS policy names (sm/enhanced_qos.c builds the wants).
 * A port that does not take the attribute (no answer, or a MAD status: ibsim, non-NVIDIA
 * SMAs) is asked once, logged once, and left alone until vqos_memory_retry. */
#ifndef IBSM_PROGRAM_VENDOR_QOS_H
#define IBSM_PROGRAM_VENDOR_QOS_H

#include <stdint.h>
#include "fabric/model.h"
#include "mad/transport.h"

#define VQOS_ATTR_QOS_CONFIG_SL 0xFF82
/* Attribute modifier: the physical port's number, or this bit with the virtual port's index
 * (NVIDIA OpenSM's VPORT_QOS_CONFIG_SL_ATTR_MOD_HO). */
#define VQOS_MOD_VPORT 0x80000000u
#define VQOS_N_SL 16
#define VQOS_RATE_MASK 0x000FFFFFu   /* bits 0-19 of an SL's word: RateLimit */
#define VQOS_ALLOC_SHIFT 20          /* bits 20-31: BandwidthAllocation (written 0) */

/* The 64 data bytes: SL s's 32-bit big-endian word at byte 4s, RateLimit in its low 20 bits. */
void vqos_encode(const uint32_t rate[VQOS_N_SL], uint8_t data[64]);
void vqos_decode(const uint8_t data[64], uint32_t rate[VQOS_N_SL], uint16_t alloc[VQOS_N_SL]);

/* What became of a want (vqos_program sets it). */
enum vqos_outcome { VQOS_NOT_SENT = 0, VQOS_TAKEN, VQOS_REFUSED, VQOS_UNCHANGED, VQOS_LEFT_ALONE };

/* One Set wanted: on end port `port` (a CA port id of the generation); mod 0: the physical
 * port (sent with its port number), VQOS_MOD_VPORT | i: virtual port i. */
struct vqos_want {
	uint32_t port;
	uint32_t mod;
	uint32_t rate[VQOS_N_SL];
	uint8_t outcome;          /* enum vqos_outcome */
};

struct vqos_stats {
	uint32_t sent;        /* Sets sent this pass */
	uint32_t taken;       /* answered with status 0 */
	uint32_t refused;     /* not answered or answered with a status (now left alone) */
	uint32_t unchanged;   /* held what we last wrote: not sent */
	uint32_t left_alone;  /* refused in an earlier pass: not sent */
};

/* What each (port GUID, modifier) was last given, and which refused: kept across sweeps. */
struct vqos_memory;
struct vqos_memory *vqos_memory_new(void);
void vqos_memory_free(struct vqos_memory *m);
/* Forgets what was written (another SM may have written since) and who refused. */
void vqos_memory_forget(struct vqos_memory *m);
/* Forgets who refused only (a new policy: each port is asked once more). */
void vqos_memory_retry(struct vqos_memory *m);

/* Sends the Sets of want[0, n) that differ from what the memory says the port holds, one each
 * (the transport's retries aside), skipping targets that refused before, and waits for their
 * answers (*stop ends the wait). Refusals are logged, the first ones by port, once per target.
 * Each want's outcome is set. Returns the number sent. */
uint32_t vqos_program(struct vqos_memory *m, struct transport *t, volatile int *stop,
		      const struct fabric *f, struct vqos_want *want, uint32_t n,
		      struct vqos_stats *st);

#endif
