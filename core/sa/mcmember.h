/* SPDX-License-Identifier: BSD-2-Clause */
/* mcmember.h - MCMemberRecord (IBA 15.2.5.17) over the group registry: a join (SubnAdmSet)
 * creates a group or joins one whose parameters the request's selectors accept, a leave
 * (SubnAdmDelete) takes join states back, Get/GetTable list groups and members. Statuses as
 * the IBA asks: INSUFFICIENT_COMPONENTS when a create lacks Q_Key, P_Key, SL, FlowLabel or
 * TClass (or a join its MGID, PortGID or JoinState), REQ_INVALID for an incompatible join, a
 * port outside the group's partition, a proxy (a requester joining or leaving for another port)
 * outside it without the SM_Key, a change to a port's own (not proxied) membership by another
 * port, a leave of states not held; NO_RESOURCES when no MLID the switches can hold is left or
 * the port is a member of SA_MC_MAX_PER_PORT groups. */
#ifndef IBSM_SA_MCMEMBER_H
#define IBSM_SA_MCMEMBER_H

#include <glib.h>
#include <stdint.h>
#include "sa/mcast_groups.h"

#define MCMR_SIZE 52
#define SA_MC_MAX_PER_PORT 512 /* groups a port may be a member of, unless joined with the SM_Key:
				* IPoIB joins a few per address family and partition, an
				* application a few hundred at most; no host takes every MLID */
#define MCMR_ATTR 0x0038

/* component mask bits */
enum {
	MCMR_MGID = 1 << 0, MCMR_PORT_GID = 1 << 1, MCMR_QKEY = 1 << 2, MCMR_MLID = 1 << 3,
	MCMR_MTU_SEL = 1 << 4, MCMR_MTU = 1 << 5, MCMR_TCLASS = 1 << 6, MCMR_PKEY = 1 << 7,
	MCMR_RATE_SEL = 1 << 8, MCMR_RATE = 1 << 9, MCMR_LIFE_SEL = 1 << 10, MCMR_LIFE = 1 << 11,
	MCMR_SL = 1 << 12, MCMR_FLOW = 1 << 13, MCMR_HOP = 1 << 14, MCMR_SCOPE = 1 << 15,
	MCMR_JOIN_STATE = 1 << 16, MCMR_PROXY = 1 << 17,
};

struct mcm_requester {
	uint64_t port_guid;     /* the port the request came from */
	int trusted;            /* it presented the SM_Key */
};

struct mcm_env {
	uint8_t max_mtu, max_rate, packet_life; /* what the subnet's links allow; lifetime default */
	/* OpenSM's ipoib_mcgroup_creation_validation and mcgroup_join_validation set FALSE (zero:
	 * both checks made, OpenSM's default) */
	int no_create_check, no_join_check;
	/* may port (GUID) be a member of partition pkey? NULL: every port may */
	int (*pkey_ok)(void *ctx, uint64_t port_guid, uint16_t pkey);
	void *ctx;
};

/* SubnAdmSet: *created says a group was made (trap 66); out gets the record answered. */
uint16_t mcm_join(struct mc_groups *g, const struct mcm_env *env, const uint8_t *rec, uint64_t mask,
		  const struct mcm_requester *who, uint8_t *out, int *created);
/* SubnAdmDelete: *deleted says the group went with it (trap 67). */
uint16_t mcm_leave(struct mc_groups *g, const struct mcm_env *env, const uint8_t *rec, uint64_t mask,
		   const struct mcm_requester *who, uint8_t *out, int *deleted);
/* Get/GetTable, as IBA 15.2.5.17 and OpenSM answer: the groups the query's MGID, MLID and other
 * fields (under their selectors) match and whose partition the requester is in; per group the
 * record of the member the PortGID names, else (trusted) one record per member, else one for
 * the group. Untrusted requesters see PortGID, JoinState and ProxyJoin zero. Appended to out. */
void mcm_query(struct mc_groups *g, const struct mcm_env *env, const uint8_t *rec, uint64_t mask,
	       const struct mcm_requester *who, GByteArray *out);
/* The record of GRP for member M (NULL: none). */
void mcm_record(const struct mc_group *grp, const struct mc_member *m, uint8_t *out);

#endif
