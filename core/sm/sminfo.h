/* SPDX-License-Identifier: BSD-2-Clause */
/* sminfo.h - the SM's identity on the wire: the SMInfo agent (answers Get and Set), the query
 * of every other SM to decide master or standby, and the standby's poll of the master. */
#ifndef IBSM_SM_SMINFO_H
#define IBSM_SM_SMINFO_H

#include "sm/sm.h"


/* Registers the SMInfo Get/Set handlers (both SMI classes) with sm->dispatch. */
void sminfo_agent_register(struct sm *sm);
/* SMInfo Set attribute modifiers (IBA 14.2.5.3). */
#define IB_SMINFO_HANDOVER    1
#define IB_SMINFO_ACKNOWLEDGE 2
/* How long a master that sent HANDOVER waits for the ACKNOWLEDGE. */
#define HANDOVER_ACK_S 2.0
/* An SM that did not take our HANDOVER is not handed to again before this many seconds. */
#define HANDOVER_RETRY_S 60.0

/* Queries every other IsSM port of sm->fabric; returns 1 if we must stay standby (a master of
 * our domain, or a better SM discovering while we are not master), setting sm->master_guid.
 * Otherwise *hand_to (if given) is the best SM in STANDBY that outranks us, else 0. An SM
 * whose SMInfo shows another SM_Key is ignored. A better SM still DISCOVERING while we are
 * master sets sm->sminfo_recheck (ask again soon). */
int sminfo_poll_others(struct sm *sm, uint64_t *hand_to);
/* Master, between heavy sweeps (the light sweep): asks the SMs of the last generation again;
 * 1 when a heavy sweep is due (another master, a better SM in STANDBY or discovering). */
int sminfo_master_check(struct sm *sm);
/* Master: SMInfo Set (HANDOVER) to the SM with port GUID `to`, then wait (HANDOVER_ACK_S) for
 * its ACKNOWLEDGE. 1 when acknowledged (sm->master_guid = to: we are to be STANDBY). */
int sminfo_hand_over(struct sm *sm, uint64_t to);
/* While standby: 1 when the master (sm->master_guid) answered SMInfo as MASTER. */
int sminfo_poll_master(struct sm *sm);
/* SMInfo's ActCount (IBA 14.2.5.3: it moves with every SMP the SM sends, so a standby or a
 * monitor sees a live master move between heavy sweeps, light sweeps too): the SMP requests
 * sent, as OpenSM counts its QP0 MADs sent, plus the sweeps done (sm->act_count), mod 2^32. */
uint32_t sminfo_act_count(const struct sm *sm);
/* Is (priority, guid) a better SM than ours? Higher priority wins, then the lower GUID. */
int sminfo_better_than_us(const struct sm *sm, unsigned priority, uint64_t guid);

#endif
