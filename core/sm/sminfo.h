/* SPDX-License-Identifier: BSD-2-Clause */
/* sminfo.h - the SM's identity on the wire: the SMInfo agent (answers Get and Set), the query
 * of every other SM to decide master or standby, and the standby's poll of the master. */
#ifndef IBSM_SM_SMINFO_H
#define IBSM_SM_SMINFO_H

#include "sm/sm.h"

/* OpenSM's default SM_Key: SMs that share it recognise each other's SMInfo. */
#define SM_KEY_DEFAULT 0x0000000000000001ULL

/* Registers the SMInfo Get/Set handlers (both SMI classes) with sm->dispatch. */
void sminfo_agent_register(struct sm *sm);
/* Queries every other IsSM port of sm->fabric; returns 1 if we must stay standby (a master,
 * or a better SM discovering), setting sm->master_guid. */
int sminfo_poll_others(struct sm *sm);
/* While standby: 1 when the master (sm->master_guid) answered SMInfo as MASTER. */
int sminfo_poll_master(struct sm *sm);
/* Is (priority, guid) a better SM than ours? Higher priority wins, then the lower GUID. */
int sminfo_better_than_us(const struct sm *sm, unsigned priority, uint64_t guid);

#endif
