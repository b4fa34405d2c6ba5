/* SPDX-License-Identifier: BSD-2-Clause */
/* light.h - the cheap periodic check between heavy sweeps. */
#ifndef IBSM_SM_LIGHT_H
#define IBSM_SM_LIGHT_H

#include "sm/sm.h"

/* Reads SwitchInfo.PortStateChange of every switch and our own port's state. Returns 1 when a
 * heavy sweep is needed (a change, a switch not answering, or no generation yet). */
int light_sweep(struct sm *sm);

#endif
