/* SPDX-License-Identifier: BSD-2-Clause */
/* path_record.h - PathRecord (IBA 15.2.5.16): the path between two end ports of the published
 * generation as the switches forward it (a walk over the routes in force), with the minimum
 * MTU and rate over its links, the SL the routing engine gives it, and the MTU, rate and
 * packet-lifetime selectors of the query (greater than, less than, exactly, largest). */
#ifndef IBSM_SA_PATH_RECORD_H
#define IBSM_SA_PATH_RECORD_H

#include <glib.h>
#include <stdint.h>
#include "sa/records.h"

#define PR_SIZE 64

/* Component numbers (IBA order; the numbering OpenSM and clients use) */
enum {
	PR_SID_MSB, PR_SID_LSB, PR_DGID, PR_SGID, PR_DLID, PR_SLID, PR_RAW, PR_RESV0, PR_FLOW,
	PR_HOPLIMIT, PR_TCLASS, PR_REVERSIBLE, PR_NUMBPATH, PR_PKEY, PR_QOS, PR_SL, PR_MTU_SEL,
	PR_MTU, PR_RATE_SEL, PR_RATE, PR_LIFE_SEL, PR_LIFE, PR_PREFERENCE, PR_RESV2, PR_N
};

struct mc_groups;

struct pr_env {
	uint64_t subnet_prefix;
	uint8_t packet_life;       /* PacketLifeTime of every path (OpenSM's packet_life_time) */
	struct mc_groups *mc;      /* the multicast groups a multicast DGID names (NULL: none) */
	int strict;                /* an unknown LID or GID is the status (MultiPathRecord), not
				    * an empty answer (PathRecord, as OpenSM) */
	/* a path to an off-subnet DGID goes to the first router port: its FlowLabel, TClass and
	 * SL, its MTU and rate at most (rtr_pr_*; mtu and rate 0: no limit) */
	uint32_t rtr_flow_label;
	uint8_t rtr_tclass, rtr_sl, rtr_mtu, rtr_rate;
	/* prefix_routes_file's routes (sa/prefix_routes.h), or NULL: every prefix to the first
	 * router */
	const GArray *prefix_routes;
};

/* Answers a PathRecord query (the request's record and mask) into out (PR_SIZE bytes each):
 * every (source, destination) pair the query names, every path of their LMC ranges (at most
 * NumbPath each when the GetTable has it; a Get: the first path found), between ports the
 * requester (v->requester) shares a partition with, both of them; a multicast DGID: the path
 * to the group; an off-subnet DGID: the path to the first router port (env->rtr_*). Returns 0 (an unknown LID or GID: no record, as OpenSM 3.3.23), or with
 * env->strict the SA status of an unknown GID or LID; a path the requester may not see is no
 * record (NO_RECORDS for a Get), as on OpenSM.
 * Past v->answer_max bytes it stops (every pair of a large fabric is gigabytes). */
uint16_t pr_query(const struct sa_view *v, const struct pr_env *env, const uint8_t *query,
		  uint64_t mask, int table, GByteArray *out);
/* Writes component comp of a PathRecord (a query built by MultiPathRecord, or an answer). */
void pr_put(uint8_t *rec, int comp, uint64_t v);
/* The layout (for component matching in tests). */
const struct sa_layout *pr_layout(void);
/* IB rate code -> bandwidth in units of 0.5 Gb/s (0: unknown code). */
unsigned pr_rate_units(uint8_t rate);
/* The fastest rate code not above units (0.5 Gb/s each); 0 if none. */
uint8_t pr_rate_at_most(unsigned units);
/* A port's link bandwidth in 0.5 Gb/s units (LinkWidthActive x LinkSpeedActive). */
unsigned pr_port_units(const struct ibsm_port *p);

#endif
