/* SPDX-License-Identifier: BSD-2-Clause */
/* offsweep.h - off-sweep balancing (NVIDIA's offsweep_balancing_enabled / _window): routes a
 * heavy sweep kept from the unicast cache (-A) over a fabric whose cabling changed are valid
 * but no longer balanced (a link come back carries nothing); once the fabric has been quiet
 * for the window, the routes are computed afresh by the engine (minhop, dor, updn) and the LFT
 * blocks that differ written. doc/offsweep-balancing.md. */
#ifndef IBSM_SM_OFFSWEEP_H
#define IBSM_SM_OFFSWEEP_H

#include "sm/sm.h"

/* After each sweep (heavy or repair): a pass becomes due `window` seconds from now when the
 * routes in force came from the cache over a changed fabric (a due pass is pushed back);
 * routes computed by the engine cancel a due pass. */
void offsweep_after_sweep(struct sm *sm);
/* 1 when the pass is due now (the master, nothing sweeping): the unicast cache is dropped, so
 * the heavy sweep the caller runs next routes every switch afresh (OFS-0001). */
int offsweep_due(struct sm *sm);
/* Is the routing engine in force one that off-sweep balancing applies to? (the first of -R) */
int offsweep_engine_ok(const char *routing_engine);

#endif
