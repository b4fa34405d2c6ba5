/* SPDX-License-Identifier: BSD-2-Clause */
/* sweep.h - one heavy sweep (discover, decide master or standby, LIDs, route, program, SUBNET
 * UP) and its offline twin over a fabric file. */
#ifndef IBSM_SM_SWEEP_H
#define IBSM_SM_SWEEP_H

#include <glib.h>
#include "sm/sm.h"

enum { SWEEP_UP = 0, SWEEP_STANDBY = 1, SWEEP_INCOMPLETE = 2, SWEEP_INACTIVE = 3 /* sm_inactive (-I) */,
       SWEEP_DECLINED = 4 /* sweep_repair(): not repaired, a heavy sweep is due */ };

/* Returns SWEEP_* or -1 with *err. */
int sweep_heavy(struct sm *sm, GError **err);
/* The sweep a trap 128 starts on a subnet that is up: sm->fabric repaired (sm/repair.h)
 * instead of discovered, then the rest of a heavy sweep. SWEEP_DECLINED (nothing done but
 * reading) when a repair does not apply or found what it does not handle. */
int sweep_repair(struct sm *sm, GError **err);
int sweep_offline(struct sm *sm, GError **err);
/* Routes in force become r (a reference taken over), the previous ones released. */
void sweep_set_live(struct sm *sm, struct routing_result *r);
/* Waits for the dump files of the last generation to be written (sm_release, tests). */
void sweep_join_dumps(struct sm *sm);

#endif
