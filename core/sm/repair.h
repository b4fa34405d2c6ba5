/* SPDX-License-Identifier: BSD-2-Clause */
/* repair.h - the next generation from the last one and the few ports that changed, instead of
 * a whole discovery: what a trap 128 (or a light sweep that saw PortStateChange) starts when
 * the SM is master and its last sweep completed. The switches that reported a change are read
 * (SwitchInfo, every port, NodeInfo through every LinkUp port, so a cable moved between two
 * reads is seen too), then the neighbours whose links changed, then every other switch's
 * PortStateChange is checked (one SwitchInfo each), and any that shows a change is read in
 * turn. Anything a repair does not handle (an SMP lost, a switch never seen, our own port, too
 * many rounds) declines it, and a heavy sweep runs instead: the repair is a shortcut to the
 * same generation, never a different answer (tests/sim/66-repair.t compares them). */
#ifndef IBSM_SM_REPAIR_H
#define IBSM_SM_REPAIR_H

#include <stdint.h>
#include "sm/sm.h"

/* A repair's result for one sweep. */
struct repair_stats {
	uint32_t switches_read, ports_read, nodeinfo_sent, verified, links_down, links_up,
		 nodes_new, nodes_dropped, routes_fixed, rounds;
};

/* The repaired generation of sm->fabric (one reference, the caller's), or NULL with why[]
 * saying what made the repair decline (a heavy sweep is due). The switches to read first are
 * those of sm->trap_lids (issuer LIDs of traps 128: a switch's port 0, or a CA port whose
 * switch is read); the traps that arrive while it runs are dropped from sm->trap_lids when the
 * repair read their switch's SwitchInfo after they arrived (the change they report is in this
 * generation), so a second trap of the same change does not start another repair. */
struct fabric *repair_discover(struct sm *sm, struct repair_stats *st, char *why, size_t why_len);

#endif
