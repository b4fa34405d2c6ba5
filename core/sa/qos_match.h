/* SPDX-License-Identifier: BSD-2-Clause */
/* qos_match.h - the QoS policy in force (-Q, -Y) as the SA applies it to PathRecord and
 * MultiPathRecord queries: its port groups resolved against the published generation (port
 * GUIDs, port names, partitions by P_Key or name through the P_Key tables the ports hold, node
 * types, the SM's own port) and the first match rule a (source, destination, query) satisfies,
 * else the DEFAULT level. */
#ifndef IBSM_SA_QOS_MATCH_H
#define IBSM_SA_QOS_MATCH_H

#include <stdint.h>
#include "fabric/model.h"
#include "policy/partitions.h"
#include "policy/qos_policy.h"
#include "sa/pkeys.h"

struct qos_match;

/* A matcher for policy pol (not copied: it must outlive the matcher) with the partition
 * names of pp (copied; NULL: none). */
struct qos_match *qos_match_new(const struct qos_policy *pol, const struct part_policy *pp);
void qos_match_free(struct qos_match *m);
/* Resolves the port groups against generation f (SELF: f's SM port) and its P_Key tables pk
 * (NULL: not known; pkey and partition groups then hold no port). f NULL: nothing matches. */
void qos_match_compile(struct qos_match *m, const struct fabric *f, const struct sa_pkeys *pk);

/* Is end port id `port` in the policy's port group named `name` (as last compiled for f)?
 * 0 when no such group or port. Used by the enhanced QoS policy's BW_RULES (sm/enhanced_qos.c). */
int qos_match_in_group(const struct qos_match *m, const char *name, uint32_t port);

/* What a PathRecord query carries that rules match on */
struct qos_query {
	int has_service_id, has_qos_class, has_pkey;
	uint64_t service_id;
	uint16_t qos_class;
	uint16_t pkey;
};

/* The level for a path from port id src to port id dst: the first rule matched (source and
 * destination groups, and every criterion the rule has, which the query must carry), else the
 * DEFAULT level. NULL when no policy is compiled for f. *rule gets the rule index (-1: DEFAULT). */
const struct qos_level *qos_match_level(const struct qos_match *m, const struct fabric *f,
					uint32_t src, uint32_t dst, const struct qos_query *q,
					int *rule);

#endif
