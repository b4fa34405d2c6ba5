/* SPDX-License-Identifier: BSD-2-Clause */
/* traps.h - the trap agent: every trap is answered with TrapRepress and counted; link and
 * capability changes ask for a heavy sweep at once (unless sweep_on_trap is off), error traps
 * (129-131) once the same one keeps coming, and a port that babbles on is disabled
 * (babbling_port_policy), as OpenSM 3.3.23's trap receiver does. */
#ifndef IBSM_SM_TRAPS_H
#define IBSM_SM_TRAPS_H

#include <stdint.h>
#include "sm/sm.h"

#define TRAP_NOTICE_BYTES     64        /* the Notice as an SMP carries it */
#define TRAP_SUPPRESS_US      5000000   /* OpenSM's trap suppression timeout: 5 s */
#define TRAP_UNHEALTHY_US     60000000  /* ... once the port is unhealthy: 60 s */
#define TRAP_REPEAT_IGNORE    10        /* more earlier ones in a row: the port is unhealthy */
#define TRAP_BABBLING_DISABLE 250       /* this many earlier ones: a babbling port, disabled */

struct trap_counts {
	uint64_t received;
	uint64_t represses_sent;   /* ibsim drops TrapRepress: counted here */
};

/* Registers the trap handler (both SMI classes) with sm->dispatch. */
void traps_agent_register(struct sm *sm);
void traps_agent_unregister(struct sm *sm);
const struct trap_counts *traps_counts(void);
/* Does trap `number` ask for a sweep by itself? 128 and 144. */
int traps_want_sweep(uint16_t number);

/* One more trap 129-131 (its 64-byte notice) at now_us: what it means, with *prev the traps of
 * the same series before it (same reporting LID, port and notice bytes, each within
 * TRAP_SUPPRESS_US of the last, TRAP_UNHEALTHY_US once unhealthy). */
enum trap_repeat {
	TRAP_REPEAT_NEW,        /* TRAP_REPEAT_IGNORE or fewer before it */
	TRAP_REPEAT_UNHEALTHY,  /* the port just became unhealthy: a heavy sweep */
	TRAP_REPEAT_IGNORED,    /* unhealthy already: nothing more */
	TRAP_REPEAT_DISABLE,    /* babbling_policy and TRAP_BABBLING_DISABLE before it: disable */
};
enum trap_repeat traps_repeat(const uint8_t *notice, int64_t now_us, int babbling_policy, uint32_t *prev);
void traps_repeat_reset(void);

#endif
