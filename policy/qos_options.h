/* SPDX-License-Identifier: BSD-2-Clause */
/* qos_options.h - OpenSM's qos_* options (opensm(8), QOS CONFIGURATION; OpenSM's doc/QoS_management_in_OpenSM.txt, "SL2VL Mapping and VL Arbitration"): the
 * value grammar of max_vls, high_limit, vlarb_high, vlarb_low and sl2vl, and how a port type's
 * settings are resolved (qos_ca_ / qos_rtr_ / qos_sw0_ / qos_swe_, else qos_, else OpenSM's
 * default). Part of the policy library: pure, no logging. */
#ifndef IBSM_POLICY_QOS_OPTIONS_H
#define IBSM_POLICY_QOS_OPTIONS_H

#include <glib.h>
#include <stdint.h>

enum qos_param { QOS_P_MAX_VLS, QOS_P_HIGH_LIMIT, QOS_P_VLARB_HIGH, QOS_P_VLARB_LOW, QOS_P_SL2VL,
		 QOS_N_PARAMS };
/* qos_ (every port type), qos_ca_, qos_rtr_, qos_sw0_ (switch port 0), qos_swe_ (switch
 * external ports) */
enum qos_scope { QOS_S_ALL, QOS_S_CA, QOS_S_RTR, QOS_S_SW0, QOS_S_SWE, QOS_N_SCOPES };

#define QOS_VLARB_MAX 64       /* entries of a VLArb table: two blocks of 32 */

struct qos_vlarb_entry {
	uint8_t vl, weight;
};

/* What one port type gets. Lists shorter than the table are padded with 0 (VL 0 / weight 0),
 * as OpenSM reads them. */
struct qos_port_config {
	uint8_t max_vls;       /* 1-15 */
	uint8_t high_limit;    /* VLHighLimit, 0-255 */
	struct qos_vlarb_entry high[QOS_VLARB_MAX], low[QOS_VLARB_MAX];
	uint8_t sl2vl[16];     /* VL of each SL; 15 drops the SL */
};

/* The option key of (scope, param): "qos_max_vls", "qos_ca_sl2vl", ... */
const char *qos_option_key(enum qos_scope s, enum qos_param p);
/* Is VALUE OpenSM's "not set" for param p (max_vls 0, high_limit -1, as `opensm -c` writes)? */
int qos_option_unset(enum qos_param p, const char *value);
/* Checks one value of param p; 0, or -1 with a message naming the entry and the problem (no
 * file position: the caller adds it with the key). */
int qos_option_check(enum qos_param p, const char *value, GError **err);
/* The settings of port type `type` from the option values vals[scope][param] (NULL: not set;
 * each set value already checked): the type's own value, else the qos_ value, else OpenSM's
 * default. */
void qos_config_resolve(char *const vals[QOS_N_SCOPES][QOS_N_PARAMS], enum qos_scope type,
			struct qos_port_config *out);

#endif
