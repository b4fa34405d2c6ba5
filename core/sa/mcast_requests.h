/* SPDX-License-Identifier: BSD-2-Clause */
/* mcast_requests.h - the SA's multicast groups as requests and generations change them:
 * MCMemberRecord joins, leaves and queries (sa/mcmember.h) answered within what the published
 * generation allows (the least MTU and rate of its links, the MLIDs its switches hold,
 * partition membership), traps 66/67 for groups made and deleted, the members of ports that
 * left the fabric taken out; and the SM's side: a hook told of every change (the MFTs need the
 * group's tree again), the groups, those partitions.conf asks for. */
#ifndef IBSM_SA_MCAST_REQUESTS_H
#define IBSM_SA_MCAST_REQUESTS_H

#include <stdint.h>

struct sa;
struct sa_answer;
struct sa_request;
struct sa_view;
struct fabric;
struct mc_groups;
struct part_policy;

/* changed(ctx, mlid) after every join and leave (NULL: none). */
void sa_set_mcast_hook(struct sa *sa, void (*changed)(void *ctx, uint16_t mlid), void *ctx);
/* The groups (kept across generations). */
struct mc_groups *sa_mcast_groups(struct sa *sa);
/* The groups a partition policy asks for made (NULL: the default partition's); the number
 * new. */
unsigned sa_mcast_partitions(struct sa *sa, const struct part_policy *pp);

/* For the SA's own files. */
void sa_mcast_init(struct sa *sa);
void sa_mcast_fini(struct sa *sa);
/* MCMemberRecord Set (join), Delete (leave), Get/GetTable (a record handler, sa/handlers.h). */
void sa_mcast_request(struct sa *sa, const struct sa_request *rq, const struct sa_view *v, double now,
		      struct sa_answer *a);
/* What generation f allows groups: the least MTU and rate of its ACTIVE links, the MLIDs
 * every switch can forward. */
void sa_mcast_limits(struct sa *sa, const struct fabric *f);
/* Members whose port is not in generation f leave every group; trap 67 for groups that go. */
void sa_mcast_ports_gone(struct sa *sa, const struct fabric *f);

#endif
