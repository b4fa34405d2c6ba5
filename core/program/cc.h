/* SPDX-License-Identifier: BSD-2-Clause */
/* cc.h - congestion control as OpenSM 3.3.23 does it (osm_congestion_control.c): with the
 * `congestion_control` key, after a heavy sweep has programmed the fabric, one
 * SwitchCongestionSetting Set to every switch (its port 0's LID), one CACongestionSetting Set
 * and the CongestionControlTable blocks to every CA port, as GMPs of class 0x21 (IBA Annex
 * A10) on QP1 carrying the CC_Key, from the cc_* keys. What a port accepted is remembered and
 * not sent again until the configuration (SIGHUP) asks for something else; a port that refuses
 * or does not answer is logged once and left alone until the configuration changes.
 * doc/congestion-control.md. */
#ifndef IBSM_PROGRAM_CC_H
#define IBSM_PROGRAM_CC_H

#include <stddef.h>
#include <stdint.h>
#include "config/options.h"
#include "fabric/model.h"
#include "mad/dispatch.h"

#define CC_CLASS 0x21             /* Congestion Control management class (A10.4.1) */
#define CC_CLASS_VERSION 2        /* as OpenSM binds and sends it */
#define CC_ATTR_SW_CONG_SETTING 0x0014 /* SwitchCongestionSetting (A10.4.3.6) */
#define CC_ATTR_CA_CONG_SETTING 0x0016 /* CACongestionSetting (A10.4.3.8) */
#define CC_ATTR_CCT 0x0017             /* CongestionControlTable (A10.4.3.9) */

/* The CC MAD (A10.4.1, OpenSM's ib_cc_mad_t): the common 24-byte header, the CC_Key at 24, 32
 * bytes of log data at 32 (zero in a Set), 192 bytes of management data at 64. */
#define CC_MAD_SIZE 256
#define CC_OFF_KEY 24
#define CC_OFF_LOG 32
#define CC_OFF_DATA 64
#define CC_DATA_SIZE 192
#define CC_CCT_BLOCK_ENTRIES 64   /* CCT entries per block (one MAD, attribute modifier = block) */
#define CC_FIRST_TID 0x7A93       /* OpenSM's first CC transaction ID (the first sent is one more) */

/* The management data of each Set, as OpenSM's cc_setup_mad_data builds it from the keys.
 * SwitchCongestionSetting: Control_Map (4 bytes), Victim_Mask (32), Credit_Mask (32),
 * Threshold in the top nibble of byte 68, Packet_Size, CS_Threshold in the top nibble of a
 * 16-bit field, CS_ReturnDelay (16 bits), Marking_Rate (16 bits): 76 bytes. */
void cc_encode_sw(const struct sm_options *o, uint8_t data[CC_DATA_SIZE]);
/* CACongestionSetting: Port_Control, Control_Map (16 bits each), then 16 entries of 8 bytes
 * (CCTI_Timer 16 bits, CCTI_Increase, Trigger_Threshold, CCTI_Min, 3 reserved bytes). */
void cc_encode_ca(const struct sm_options *o, uint8_t data[CC_DATA_SIZE]);
/* CongestionControlTable blocks sent: (entries - 1) / 64 + 1, or 1 without entries. */
int cc_cct_blocks(const struct sm_options *o);
/* Block b: CCTI_Limit (entries - 1, or 0) and 2 reserved bytes, then its 64 entries
 * (shift << 14 | multiplier); without entries only the limit (0). */
void cc_encode_cct(const struct sm_options *o, int block, uint8_t data[CC_DATA_SIZE]);
/* A whole Set: base version 1, class 0x21, class version 2, method Set, attribute, modifier,
 * transaction ID, CC_Key, zero log data, DATA. */
void cc_encode_mad(uint8_t mad[CC_MAD_SIZE], uint16_t attr, uint32_t mod, uint64_t tid, uint64_t cc_key,
		   const uint8_t data[CC_DATA_SIZE]);

/* The I/O the manager runs on: the real port (cc_sweep) or a test's fake agent. send: one
 * CC MAD LID-routed to QP1 (0 or -errno); poll: runs I/O for up to timeout_ms, handing each
 * CC answer to cc_on_answer() as it comes. */
struct cc_io {
	void *ctx;
	int (*send)(void *ctx, uint16_t dlid, const uint8_t *mad, size_t len);
	void (*poll)(void *ctx, int timeout_ms);
};

struct cc_stats {
	uint32_t sent;          /* Sets sent this pass (first attempts) */
	uint32_t resent;        /* ... sent again after a timeout */
	uint32_t accepted;      /* answered with status 0 */
	uint32_t refused;       /* answered with a non-zero status */
	uint32_t timed_out;     /* never answered, every attempt */
	uint32_t held;          /* not sent: the port holds it already */
	uint32_t left_alone;    /* ports not asked: they refused this configuration before */
	uint32_t switches, ca_ports; /* asked this pass */
};

/* Each Set waits transaction_timeout per attempt, with transaction_retries more attempts. */
struct cc_mgr;
struct cc_mgr *cc_new(const struct cc_io *io);
void cc_free(struct cc_mgr *m);
/* One CC answer (the whole MAD): matched to its Set by transaction ID (low 32 bits). */
void cc_on_answer(struct cc_mgr *m, const uint8_t *mad, size_t len);
/* The pass over generation f: nothing unless o->congestion_control; sends what the ports do
 * not hold, at most cc_max_outstanding_mads at a time, waits for every answer or timeout
 * (or *stop). Returns the Sets sent. */
uint32_t cc_run(struct cc_mgr *m, const struct fabric *f, const struct sm_options *o, volatile int *stop,
		struct cc_stats *st);

/* The heavy sweep's step on the real port (one manager per process, its answers taken from
 * d's class 0x21 GetResp): nothing unless congestion_control; never fails the sweep. */
void cc_sweep(struct dispatch *d, const struct fabric *f, const struct sm_options *o, volatile int *stop);

#endif
