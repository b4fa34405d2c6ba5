/* SPDX-License-Identifier: BSD-2-Clause */
/* enhanced_qos.h - NVIDIA's enhanced QoS on the fabric: after each sweep that programmed the
 * subnet, the per-SL rate limits the policy in force (sm->eqos_policy, loaded by
 * sm/policies.c) gives every CA port, written with QoSConfigSL (program/vendor_qos.h), and
 * what each port was given in the dump directory (EQOS_DUMP_FILE). doc/enhanced-qos.md. */
#ifndef IBSM_SM_ENHANCED_QOS_H
#define IBSM_SM_ENHANCED_QOS_H

#include "program/vendor_qos.h"
#include "sm/sm.h"

#define EQOS_DUMP_FILE "ibsm-enhanced-qos.dump"

/* The wants of generation f under policy p: one per linked CA port (its BW_RULES limits), and
 * with a VPORT_BW_RULES section one more per port for its virtual port 0; groups resolved
 * through sm's QoS policy (qos may be NULL: no port is in any group). *n gets their count. */
struct vqos_want *eqos_wants(const struct eqos_policy *p, const struct qos_policy *qos,
			     const struct part_policy *parts, int vport0_unlimit,
			     const struct fabric *f, uint32_t *n);
/* The sweep's step: nothing unless -Q and a policy is in force; never fails the sweep. */
void enhanced_qos_sweep(struct sm *sm, const struct fabric *f);

#endif
