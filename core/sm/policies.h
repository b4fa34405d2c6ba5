/* SPDX-License-Identifier: BSD-2-Clause */
/* policies.h - loading the policy files into the SM (partitions now; QoS and routing chains
 * later): the parser's messages logged here, and a file that fails to parse keeps the policy in
 * force. */
#ifndef IBSM_SM_POLICIES_H
#define IBSM_SM_POLICIES_H

#include "sm/sm.h"

/* The copy of the last partition file taken, in the cache directory (cache_dir), and the mark
 * of its header lines. */
#define PART_SAVED_FILE "partitions.conf.last-good"
#define PART_SAVED_TAG "# ibsm:"

/* Loads opt->partition_config_file into sm->part_policy: a missing file means the default
 * policy (every end port a full member of 0x7fff). A file taken is copied into the cache
 * directory (PART_SAVED_FILE, when its text changed). A file that cannot be taken (it does not
 * parse, cannot be read) keeps the policy in force; at start, when there is none yet, the
 * saved copy is taken instead, and without a usable copy the default policy, as OpenSM
 * 3.3.23 falls back to its default partition; the ERROR (POL-0002) says which and why
 * (FILE:LINE:COL of the bad input). Returns 0 when the file (or its absence) was taken, -1 if
 * not. */
int policies_load_partitions(struct sm *sm);
/* Loads opt->qos_policy_file (under -Q) into sm->qos_policy and hands it to the SA: a missing
 * file means no policy (every path as without one); a file that does not parse, or whose
 * qos-ulps ipoib lines name a P_Key no partition has, keeps the policy in force and logs the
 * error with file:line:column. Without -Q the policy is dropped. Returns 0 when taken, -1 if
 * kept. Call after policies_load_partitions (partition names and P_Keys).
 * Then loads opt->enhanced_qos_policy_file (NVIDIA's enhanced QoS, under -Q; unset or "null":
 * none) into sm->eqos_policy: a file that cannot be taken keeps the policy in force (POL-0012
 * with FILE:LINE:COL); a BW_RULES port group must be a port group of the QoS policy. -1 when
 * either file was kept. */
int policies_load_qos(struct sm *sm);
void policies_free(struct sm *sm);

#endif
