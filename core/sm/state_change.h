/* SPDX-License-Identifier: BSD-2-Clause */
/* state_change.h - PortStateChange once this SM is master. A discovery run while another SM
 * may be master reads every port and clears no switch's PortStateChange (it is that master's
 * record of what changed: a standby starting up would otherwise hide a link that came back
 * from the master, whose next sweep takes the switch's ports as unchanged). Once this SM is
 * master, the bits that discovery saw set are cleared, as OpenSM's state manager does after
 * its sweep (osm_state_mgr.c, state_mgr_reset_state_change_bit). */
#ifndef IBSM_SM_STATE_CHANGE_H
#define IBSM_SM_STATE_CHANGE_H

#include "sm/sm.h"

/* Clears PortStateChange on every switch of sm->fabric whose SwitchInfo, as discovery read it,
 * has it set (fabric/discovery.h, DISCOVER_PSC_NOT_OURS); the Sets go out on sm->t and finish
 * with the next drain. Returns how many were sent. */
uint32_t sweep_reset_state_change(struct sm *sm);

#endif
