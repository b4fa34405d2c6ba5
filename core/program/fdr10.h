/* SPDX-License-Identifier: BSD-2-Clause */
/* fdr10.h - OpenSM's `fdr10` key: FDR10 (Mellanox's 10.3125 Gb/s lane rate, outside the IBA's
 * LinkSpeed field) is enabled or disabled with the vendor SMP attribute MlnxExtPortInfo
 * (0xFF90), on the ports of the devices OpenSM 3.3.23 asks it of (osm_subnet.c,
 * is_mlnx_ext_port_info_supported): read on every linked port of such a device, and where
 * LinkSpeedSupported has the FDR10 bit, LinkSpeedEnabled written when it differs from the key
 * (osm_link_mgr.c). A port that does not answer (ibsim, other SMAs) is asked once, logged
 * once, and left alone until the programmer forgets what it knew. */
#ifndef IBSM_PROGRAM_FDR10_H
#define IBSM_PROGRAM_FDR10_H

#include <stdint.h>
#include "program/pass.h"

#define FDR10_ATTR 0xFF90    /* MlnxExtPortInfo (OpenSM's IB_MAD_ATTR_MLNX_EXTENDED_PORT_INFO) */
#define FDR10_SPEED 0x01     /* the FDR10 bit of its LinkSpeed fields */

/* Its 64 data bytes (OpenSM's ib_mlnx_ext_port_info_t): StateChangeEnable at byte 3,
 * LinkSpeedSupported 7, LinkSpeedEnabled 11, LinkSpeedActive 15, the rest reserved. */
#define FDR10_OFF_STATE_CHANGE_ENABLE 3
#define FDR10_OFF_SUPPORTED 7
#define FDR10_OFF_ENABLED 11
#define FDR10_OFF_ACTIVE 15

/* The key's values (OpenSM's): 0 no MlnxExtPortInfo MAD at all, 1 enabled, 2 disabled. */
enum { FDR10_OFF = 0, FDR10_ENABLE = 1, FDR10_DISABLE = 2 };

/* Is the device one OpenSM sends MlnxExtPortInfo to (NodeInfo VendorID, DeviceID)? */
int fdr10_device_asked(uint32_t vendor_id, uint16_t device_id);
/* The Set's data: the port's answer with StateChangeEnable 1 and LinkSpeedEnabled FDR10 or 0. */
void fdr10_encode_set(const uint8_t held[64], int enable, uint8_t out[64]);

struct fdr10_stats {
	uint32_t asked;       /* Gets sent this pass */
	uint32_t answered;    /* ... answered with status 0 */
	uint32_t capable;     /* ... whose LinkSpeedSupported has FDR10 */
	uint32_t written;     /* Sets sent (LinkSpeedEnabled differed from the key) */
	uint32_t refused;     /* Gets or Sets not answered, or answered with a status */
	uint32_t left_alone;  /* refused in an earlier pass: not asked */
};

/* Who refused (node GUID, port number), kept across passes. */
struct fdr10_memory;
struct fdr10_memory *fdr10_memory_new(void);
void fdr10_memory_free(struct fdr10_memory *m);
void fdr10_memory_forget(struct fdr10_memory *m);

/* The pass: with g->o->fdr10 set, a MlnxExtPortInfo Get (one attempt) to every port of an
 * asked device that is INIT or above (CA and router ports, switch external ports, an enhanced
 * switch port 0), then the Sets wanted; waits for the answers. Returns the Sets sent. */
uint32_t fdr10_program(struct pass *g, struct fdr10_memory *m, struct fdr10_stats *st);

#endif
