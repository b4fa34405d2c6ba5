/* SPDX-License-Identifier: BSD-2-Clause */
/* agent.h - the SA agent (management class 0x03) as the SM sees it: made with its dispatch
 * (agent.c), fed whole snapshots of what it answers from (sa_publish, sa/publish.h), asked to
 * report traps (sa/reports.h) and driven for multicast (sa/mcast_requests.h). It answers Get,
 * GetTable, GetMulti, Set and Delete for the attributes of sa/handlers.c from the last
 * snapshot handed over, and only while that snapshot says this SM is master (a standby drops
 * SA requests, counted). */
#ifndef IBSM_SA_AGENT_H
#define IBSM_SA_AGENT_H

#include "sa/answer.h"
#include "sa/inputs.h"
#include "sa/mcast_requests.h"
#include "sa/publish.h"
#include "sa/reports.h"

struct sa;
struct dispatch;
struct sa_request;

/* Registers the SA's methods with d (d NULL: an SA that only computes answers, for tests and
 * fuzzing). NULL if the record tables are inconsistent (logged). It answers from nothing
 * (sa_inputs_init's defaults, not master) until a snapshot is handed over. */
struct sa *sa_new(struct dispatch *d);
void sa_free(struct sa *sa);
const struct sa_stats *sa_stats(struct sa *sa);
/* Requests answered by attribute, method and status, with latency histograms (sa/counters.h). */
struct sa_counters;
const struct sa_counters *sa_counters(const struct sa *sa);
/* The answer to a decoded request from the published snapshot (no MAD sent, master or not);
 * `now` in seconds of a monotonic clock (service leases). */
void sa_compute(struct sa *sa, const struct sa_request *rq, double now, struct sa_answer *a);

#endif
