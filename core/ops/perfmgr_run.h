/* SPDX-License-Identifier: BSD-2-Clause */
/* perfmgr_run.h - the SM drives its performance manager: created at start with the perfmgr_*
 * settings, fed the routed generation after each sweep as master, paced from the event loop's
 * tick hook (sm/loop.h), freed before the MAD dispatch. */
#ifndef IBSM_OPS_PERFMGR_RUN_H
#define IBSM_OPS_PERFMGR_RUN_H

#include "perfmgr/perfmgr.h"
#include "sm/sm.h"

/* sm->perfmgr from sm->opt (also when perfmgr is off: the console may turn it on) and its tick
 * hook. Online only (sm->dispatch set). */
void perfmgr_run_start(struct sm *sm);
void perfmgr_run_stop(struct sm *sm);
/* The settings sm->opt asks for (timeouts and retries: the SMP ones). */
void perfmgr_run_cfg(const struct sm *sm, struct perfmgr_cfg *c);

#endif
