/* SPDX-License-Identifier: BSD-2-Clause */
/* light.h - the cheap periodic check between heavy sweeps. */
#ifndef IBSM_SM_LIGHT_H
#define IBSM_SM_LIGHT_H

#include <stdint.h>
#include "sm/sm.h"

/* The port check of the light sweep: PortInfo of the ports the last generation has linked
 * (switch external ports, switch port 0, CA and router ports), compared with what that
 * generation holds for them (as discovered, and as the programmer's Sets left them). A switch
 * raises PortStateChange when a port's state changes on its own, but not for a PortInfo Set
 * (IBA; ibsim likewise): a port disabled or given another LID by another program shows only
 * here. Cost: a light sweep reads all of them when there are at most LIGHT_PORTS_MIN, else
 * 1/LIGHT_CYCLE of them, the next slice each time. A port is then checked at least every
 * LIGHT_CYCLE light sweeps (40 s at the default interval), and a switch sees at most its port
 * count / LIGHT_CYCLE Gets per light sweep besides its SwitchInfo (a 36-port switch: 9); the
 * SM sends about as many SMPs per light sweep as a heavy sweep's discovery does per
 * LIGHT_CYCLE of them (at 8192 hosts, ~12k PortInfo Gets every 10 s, a quarter second of SMPs
 * at the transport's rate). */
#define LIGHT_PORTS_MIN 1024
#define LIGHT_CYCLE 4

struct light_state {
	uint32_t next;         /* port id where the next slice starts */
};

/* Reads SwitchInfo.PortStateChange of every switch, our own port's state, and the next slice
 * of the port check (every port when ls is NULL). A port whose PortPhysicalState or PortState
 * fell, or whose LID or LMC is not the one this SM gave it, is logged (LSW-0002); a switch
 * port's reading replaces the generation's (the heavy sweep then knows it without trying a
 * NodeInfo through it). Only Gets are sent: the heavy sweep repairs (LIDs set again, ports
 * brought to ACTIVE, routes around a disabled link; with M_Key protection a port disabled by
 * someone else is enabled again, program/portinfo.h). Returns 1 when a heavy sweep is
 * needed (a change, a switch not answering, or no generation yet). */
int light_sweep(struct sm *sm, struct light_state *ls);

#endif
