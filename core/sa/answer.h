/* SPDX-License-Identifier: BSD-2-Clause */
/* answer.h - what the SA makes of requests, as data: one request's answer (struct sa_answer,
 * filled by the record handlers, sent by the agent) and the counts of all of them (struct
 * sa_stats, the SM's STATS line). A header of its own so that the SA's files (sa/state.h)
 * and its users (sa/agent.h) share the types without including each other. */
#ifndef IBSM_SA_ANSWER_H
#define IBSM_SA_ANSWER_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

/* What a request is answered with: a status, or the records (rec_size bytes each; a Get's
 * one record, a GetTable's table). recs is the caller's. */
struct sa_answer {
	uint16_t status;
	uint8_t method;            /* the response's (GetResp, GetTableResp, DeleteResp) */
	int table;
	size_t rec_size;
	GByteArray *recs;
};

struct sa_stats {
	uint64_t requests, answered, not_master, bad, bad_key, no_records, unsupported;
	uint64_t reports_sent, reports_acked, subscriptions;
	uint64_t busy;             /* requests answered BUSY (the queue was full) */
	uint64_t queued_max;       /* the most requests waiting at once */
	uint64_t mcast_changes;    /* joins and leaves done */
	uint64_t mcast_groups;     /* multicast groups now */
	uint64_t too_big;          /* tables refused TOO_MANY_RECORDS (over SA_ANSWER_MAX bytes) */
	uint64_t subscriptions_refused, joins_refused; /* NO_RESOURCES: a port's share, or all */
};

#endif
