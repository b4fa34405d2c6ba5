/* SPDX-License-Identifier: BSD-2-Clause */
/* ib.h - InfiniBand wire constants the core uses that libibmad does not name: sizes of MADs,
 * SMP payloads and table blocks, capability-mask bits, physical states, MAD status codes.
 * Attribute ids and field layouts come from libibmad (IB_ATTR_*, IB_*_F). */
#ifndef IBSM_MAD_IB_H
#define IBSM_MAD_IB_H

#define MAD_SIZE          256  /* one MAD, header included */
#define SMP_DATA_SIZE     64   /* SMP payload (attribute data) */
#define SMP_DR_PATH_MAX   64   /* DR path bytes: path[1..hops] are the exit ports */
#define SMP_DR_HOPS_MAX   63   /* longest directed route */

#define LFT_BLOCK_SIZE    64   /* LinearForwardingTable entries per block */
#define PKEY_BLOCK_SIZE   32   /* P_KeyTable entries per block */

/* PortInfo.CapabilityMask bits */
#define IB_CAP_IS_SM              (1u << 1)
#define IB_CAP_SL_MAP             (1u << 6)  /* IsSLMappingSupported */
#define IB_CAP_CLIENT_REREG       (1u << 25)

/* PortInfo.PortPhysicalState */
#define IB_PHYS_POLLING   2
#define IB_PHYS_DISABLED  3
#define IB_PHYS_LINKUP    5

/* SMInfo.SMState */
enum ib_sm_state { IB_SM_NOTACTIVE = 0, IB_SM_DISCOVERING = 1, IB_SM_STANDBY = 2, IB_SM_MASTER = 3 };

/* MAD status (common part, bits 2..4 of the 15-bit status) */
#define MAD_STATUS_OK                 0x0000
#define MAD_STATUS_BAD_VERSION        0x0004
#define MAD_STATUS_UNSUP_METHOD       0x0008
#define MAD_STATUS_UNSUP_METHOD_ATTR  0x000C
#define MAD_STATUS_INVALID_FIELD      0x001C

/* A response method has this bit */
#define MAD_METHOD_RESPONSE_BIT 0x80

#endif
