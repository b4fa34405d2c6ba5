/* SPDX-License-Identifier: BSD-2-Clause */
/* stats.h - the STATS lines of the SM's log (parsed by make bench). */
#ifndef IBSM_SM_STATS_H
#define IBSM_SM_STATS_H

#include "sm/sm.h"

/* Logs the phases of the last sweep, the transport's counters and the trap counts. */
void stats_log(struct sm *sm);

#endif
