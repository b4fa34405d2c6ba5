/* SPDX-License-Identifier: BSD-2-Clause */
/* agent.h - the SA agent (management class 0x03): answers Get and GetTable for the record
 * kinds of sa/records.h, and ClassPortInfo, from the last published generation, and only
 * while this SM is master (a standby drops SA requests, counted). */
#ifndef IBSM_SA_AGENT_H
#define IBSM_SA_AGENT_H

#include <stdint.h>
#include "mad/dispatch.h"
#include "routing/result.h"

struct sa;

struct sa_stats {
	uint64_t requests, answered, not_master, bad, no_records, unsupported;
};

/* Registers the SA's methods with d. NULL if the record tables are inconsistent (logged). */
struct sa *sa_new(struct dispatch *d);
void sa_free(struct sa *sa);
/* The routed generation answers come from from now on (a reference is taken; NULL: none):
 * switched in one step, so a request sees one generation whole. */
void sa_publish(struct sa *sa, struct routing_result *r);
/* Our SM_Key: a request presenting it sees the keys in records (M_Key, SM_Key). */
void sa_set_sm_key(struct sa *sa, uint64_t sm_key);
/* What PathRecords carry from the configuration: GIDs' subnet prefix, PacketLifeTime. */
void sa_set_path_env(struct sa *sa, uint64_t subnet_prefix, uint8_t packet_life);
/* Master or not: only a master answers. */
void sa_set_master(struct sa *sa, int master);
const struct sa_stats *sa_stats(const struct sa *sa);

#endif
