/* SPDX-License-Identifier: BSD-2-Clause */
/* portinfo.h - PortInfo writes, each a read-modify-write of the last PortInfo read: LID,
 * MasterSMLID, LMC, prefix and timeout on end ports; MTU, OperVLs, HOQ and enforcement bits on
 * switch links; and the port state steps INIT -> ARMED -> ACTIVE. */
#ifndef IBSM_PROGRAM_PORTINFO_H
#define IBSM_PROGRAM_PORTINFO_H

#include <stdint.h>
#include "program/pass.h"

/* The Set of an end port (CA port or switch port 0) when something differs from what it holds
 * (or ClientReregister is due): LID, MasterSMLID, MasterSMSL, LMC, prefix, timeout; on a CA
 * port also NeighborMTU, OperVLs and portinfo_link_settings(). A CA port ARMED or ACTIVE whose
 * OperVLs or NeighborMTU differ is set DOWN with them (PIN-0003): they take effect in INIT
 * only (IBA 14.2.5.6), and its link comes back in INIT. Returns 1 if a Set was queued. */
int portinfo_end_port(struct pass *g, uint32_t port, uint16_t sm_lid);
/* Once the routes are known (g->r), the end ports given a MasterSMSL before (g->smsl_guess)
 * that the routes' SL differs from, written again (portinfo_end_port()); how many Sets. With
 * engines whose path_sl gives the hint (most): none. */
uint32_t portinfo_end_ports_smsl(struct pass *g, uint16_t sm_lid);
/* The NOP Set of a switch external port with a link: NeighborMTU, OperVLs, HOQLife,
 * VLStallCount (leaf_ ones toward CAs and routers), portinfo_link_settings(), partition
 * enforcement toward end ports. Sent in INIT, and past INIT when NeighborMTU, OperVLs, HOQLife
 * or VLStallCount differ from what the port holds (a fabric another SM left, PIN-0004) or the
 * enforcement bits must change; returns 1 if one was queued. */
int portinfo_switch_port(struct pass *g, uint32_t port);
/* OpenSM's link settings in payload pi of linked port `port` (not switch port 0):
 * LocalPhyErrors/OverrunErrors thresholds; LinkSpeedEnabled = force_link_speed (15: set to
 * supported) unless 15 and already so; LinkSpeedExtEnabled = force_link_speed_ext where both
 * ends have extended speeds; LinkWidthEnabled = force_link_width (255, set to supported: on CA
 * and router ports only, as OpenSM 3.3.23).
 * Returns the AttributeModifier bit 31 (SMSupportsExtendedSpeeds) when the Set must carry it:
 * the 10 Gb/s bit of LinkSpeedEnabled changes on a port with IsExtendedSpeedsSupported. */
uint32_t portinfo_link_settings(const struct fabric *f, const struct sm_options *o, uint32_t port, uint8_t *pi);
/* Moves every linked port in state `from` to `to` (with need_peer: only where the peer is in
 * `from` or `to` too). Returns the number of Sets queued. */
uint32_t portinfo_step_state(struct pass *g, uint8_t from, uint8_t to, int need_peer);
/* With M_Key protection on, only the SM may disable a port and ibsm never does: every switch
 * port read Disabled was disabled by someone else and is set to Polling again (PIN-0002).
 * Returns how many; the link trains and the next sweep brings it up. */
uint32_t portinfo_enable_disabled(struct pass *g);
/* Is port a switch or CA port with a link whose PortInfo was read? */
int portinfo_linked(const struct fabric *f, uint32_t port);
/* A Set of port's VLHighLimit (QoS); the reply updates px[].portinfo. Returns 1 if queued. */
int portinfo_vl_high_limit(struct pass *g, uint32_t port, uint8_t limit);
/* PortInfo payload of a switch external port facing an end port (a CA or router port):
 * PartitionEnforcementInbound/Outbound set or cleared as `enforce` says (PART_ENFORCE_IN|OUT,
 * config/options.h); any other port's payload is left as it is. */
void portinfo_enforcement_bits(const struct fabric *f, uint32_t port, int enforce, uint8_t *pi);

#endif
