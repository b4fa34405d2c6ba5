/* SPDX-License-Identifier: BSD-2-Clause */
/* counters.h - what the SA answered, for operators (the metrics endpoint, ops/metrics.c):
 * requests by attribute, method and status, and the time from a request's arrival to its
 * answer as a histogram per attribute. Fixed arrays: no allocation, no hash per request. */
#ifndef IBSM_SA_COUNTERS_H
#define IBSM_SA_COUNTERS_H

#include <stdint.h>

#define SA_CNT_ATTRS 32      /* attributes told apart; the rest count under "other" */
#define SA_CNT_METHODS 5     /* Get, Set, GetTable, GetMulti, Delete */
#define SA_CNT_STATUSES 13   /* sa_counters_status_name(): ok, busy, ... , other */
#define SA_CNT_BUCKETS 14    /* latency bucket bounds (the last is +Inf) */

extern const double sa_cnt_bucket_le[SA_CNT_BUCKETS]; /* seconds, ascending; last: infinity */

struct sa_cnt_attr {
	uint16_t attr;           /* 0xffff: "other" */
	int used;
	uint64_t n[SA_CNT_METHODS][SA_CNT_STATUSES];
	uint64_t bucket[SA_CNT_BUCKETS]; /* answers within each bound (not cumulative) */
	uint64_t count;
	double sum_s;
};

struct sa_counters {
	struct sa_cnt_attr a[SA_CNT_ATTRS + 1]; /* [SA_CNT_ATTRS]: "other" */
};

/* One request answered (status: the MAD status sent) after seconds since it arrived. */
void sa_counters_note(struct sa_counters *c, uint16_t attr, uint8_t method, uint16_t status,
		      double seconds);
/* Names for the labels: "PathRecord" (else NULL), "Get", "ok"/"no_records"/... */
const char *sa_counters_attr_name(uint16_t attr);
const char *sa_counters_method_name(int method_index);
const char *sa_counters_status_name(int status_index);

#endif
