/* SPDX-License-Identifier: BSD-2-Clause */
/* traps.h - the trap agent: every trap is answered with TrapRepress and counted; link and
 * capability changes ask for a heavy sweep at once, error traps once a port is unhealthy. */
#ifndef IBSM_SM_TRAPS_H
#define IBSM_SM_TRAPS_H

#include <stdint.h>
#include "sm/sm.h"

#define TRAP_UNHEALTHY_COUNT 3 /* 129-131 reports before a port counts as unhealthy */

struct trap_counts {
	uint64_t received;
	uint64_t represses_sent;   /* ibsim drops TrapRepress: counted here */
};

/* Registers the trap handler (both SMI classes) with sm->dispatch. */
void traps_agent_register(struct sm *sm);
void traps_agent_unregister(struct sm *sm);
const struct trap_counts *traps_counts(void);
/* Does trap `number` from LID `issuer` ask for a heavy sweep? 128 and 144 at once; 129-131
 * once one issuer reported TRAP_UNHEALTHY_COUNT of them; anything else never. */
int traps_want_sweep(uint16_t number, uint16_t issuer);

#endif
