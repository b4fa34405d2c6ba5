/* SPDX-License-Identifier: BSD-2-Clause */
/* inform_requests.h - InformInfo Set (subscribe, unsubscribe) and InformInfoRecord Get and
 * GetTable as the SA answers them: a subscriber must be a port of the published generation,
 * and a requester sees the subscriptions of the ports it shares a partition with. */
#ifndef IBSM_SA_INFORM_REQUESTS_H
#define IBSM_SA_INFORM_REQUESTS_H

struct sa;
struct sa_answer;
struct sa_request;
struct sa_view;

/* Record handlers (sa/handlers.h): InformInfo (Set) and InformInfoRecord (the queries). */
void sa_inform_request(struct sa *sa, const struct sa_request *rq, const struct sa_view *v, double now,
		       struct sa_answer *a);
void sa_inform_record_request(struct sa *sa, const struct sa_request *rq, const struct sa_view *v,
			      double now, struct sa_answer *a);

#endif
