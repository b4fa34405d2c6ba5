/* SPDX-License-Identifier: BSD-2-Clause */
/* service_requests.h - ServiceRecord Set, Delete, Get and GetTable as the SA judges them
 * (doc/sa-partitions.md): who may register, delete and see which service, over the registry
 * of sa/service.h. */
#ifndef IBSM_SA_SERVICE_REQUESTS_H
#define IBSM_SA_SERVICE_REQUESTS_H

struct sa;
struct sa_answer;
struct sa_request;
struct sa_view;

/* A record handler (sa/handlers.h): now in seconds of a monotonic clock (leases). */
void sa_service_request(struct sa *sa, const struct sa_request *rq, const struct sa_view *v, double now,
			struct sa_answer *a);

#endif
