/* SPDX-License-Identifier: BSD-2-Clause */
/* port_select.h - which local port the SM binds to. */
#ifndef IBSM_PORT_SELECT_H
#define IBSM_PORT_SELECT_H

#include <stdint.h>
#include <infiniband/umad.h>
#include "config/options.h"

struct local_port {
	char ca[UMAD_CA_NAME_LEN];
	int port;
	uint64_t guid;
	int state;
};

/* Returns 0 with *chosen, or -1 after printing why (no port, bad -g, bad choice). */
int choose_port(struct sm_options *o, struct local_port *chosen);

#endif
