/* SPDX-License-Identifier: BSD-2-Clause */
/* metrics.h - the SM's metrics in the Prometheus text format (exposition 0.0.4) over HTTP GET
 * /metrics on 127.0.0.1:metrics_port (opt-in; doc/metrics.md): sweeps, SMPs, phases, SA
 * requests and latency, traps, SM state, the fabric's size, the perfmgr's port counters. */
#ifndef IBSM_OPS_METRICS_H
#define IBSM_OPS_METRICS_H

#include <glib.h>
#include "sm/sm.h"

/* The server when sm->opt->metrics_port is set (a port that cannot be bound is an ERROR, the SM
 * runs on) and its tick hook (sm/loop.h), which also follows a metrics_port changed by SIGHUP,
 * keeps the totals per phase and keeps systemd's STATUS in step with the SM's state
 * (sm/notify.h), metrics or not. Never fatal. */
void metrics_start(struct sm *sm);
void metrics_stop(void);
/* The page: every family, for sm as it is now. */
void metrics_render(struct sm *sm, GString *out);

#endif
