/* SPDX-License-Identifier: BSD-2-Clause */
/* port_select.h - which local port the SM binds to, and waiting for its link at start. */
#ifndef IBSM_PORT_SELECT_H
#define IBSM_PORT_SELECT_H

#include <stdint.h>
#include <infiniband/umad.h>
#include <ibsm/fabric.h>
#include "config/options.h"
#include "mad/transport.h"

struct local_port {
	char ca[UMAD_CA_NAME_LEN];
	int port;
	uint64_t guid;
	int state;
};

/* Returns 0 with *chosen, or -1 after printing why (no port, bad -g, bad choice). Without
 * -g: the first port in INIT, ARMED or ACTIVE as sysfs shows it, else the first IB port, link
 * down (chosen->state says which; port_wait_link() then waits for it). */
int choose_port(struct sm_options *o, struct local_port *chosen);

static inline int port_link_up(int state)
{
	return state >= IBSM_STATE_INIT && state <= IBSM_STATE_ACTIVE; /* an SM can bring it up */
}

/* Waits until the link of our own port lp is up: its state is read from the port's SMA
 * (0-hop PortInfo) at once and then every second; the wait is logged once (PORT-0001), and
 * unsolicited MADs are served meanwhile. 0 once up; 1 when *stop became non-zero (SIGTERM),
 * seen within 100 ms. */
int port_wait_link(struct transport *t, const struct local_port *lp, volatile int *stop);

#endif
