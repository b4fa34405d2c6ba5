/* SPDX-License-Identifier: BSD-2-Clause */
/* state.h - the SA agent's state, shared by the files that each do one part of its work:
 * agent.c (making it, the requests in and the answers out), handlers.c and the record
 * handlers, publish.c (the snapshot handed over and what is derived from it), reports.c,
 * mcast_requests.c. Nothing outside core/sa/ sees it (sa/agent.h keeps struct sa opaque). */
#ifndef IBSM_SA_STATE_H
#define IBSM_SA_STATE_H

#include <glib.h>
#include <stdint.h>
#include "sa/answer.h"
#include "sa/counters.h"
#include "sa/inputs.h"

/* The most record bytes one answer carries (an RMPP transfer of this many bytes is some 42000
 * segments): a GetTable that would be larger (PathRecords of every pair of a large fabric) is
 * answered TOO_MANY_RECORDS (IBA 15.2.5: the requester asks again with a narrower mask). Every
 * linear table of a 3000-switch fabric fits. */
#define SA_ANSWER_MAX (8u << 20)

struct dispatch;
struct sa_services;
struct sa_inform;
struct sa_queue;
struct sa_index;
struct mc_groups;
struct qos_match;

struct sa {
	struct dispatch *d;            /* NULL: an SA that only computes answers */
	/* the snapshot in force (sa/publish.c): a copy with its own references */
	struct sa_inputs in;
	/* derived from it when handed over (sa/publish.c) */
	struct qos_match *qos;         /* in.qos compiled for in.r (NULL: no policy) */
	uint8_t *part_sl;              /* [0x8000] the SL of each partition's paths (+1; 0: none) */
	uint8_t mc_mtu, mc_rate;       /* the most a group may ask of every link (mcast_requests.c) */
	struct sa_index *ix;           /* in.r's generation by LID and GUID (sa/index.h; NULL: none) */
	struct sa_index *ix_next;      /* built ahead for generation ix_next_f (sa_publish_index) */
	const struct fabric *ix_next_f;
	/* kept across generations */
	struct sa_services *svc;       /* ServiceRecords registered */
	struct sa_inform *inform;      /* event subscriptions and their Reports (reports.c) */
	guint report_timer;            /* resends unacknowledged Reports */
	struct sa_queue *q;            /* requests waiting for their answer (agent.c) */
	struct mc_groups *mc;          /* multicast groups (mcast_requests.c) */
	void (*mc_changed)(void *ctx, uint16_t mlid); /* a group's members changed */
	void *mc_ctx;
	struct sa_stats st;
	struct sa_counters cnt;        /* answers by attribute, method, status; latency (agent.c) */
};

#endif
