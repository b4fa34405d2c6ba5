/* SPDX-License-Identifier: BSD-2-Clause */
/* mkey_write.h - the M_Key fields of the PortInfo a programming pass writes to each management port
 * (a CA port, a switch's port 0): the key derived for it, ProtectBits and the lease period
 * (mad/mkey_derive.h), and what to do when a port does not take our key: ask it (a Get without a key
 * shows the key at ProtectBits 0) and write again presenting that key; a key hidden from us
 * comes back once the port's lease period runs out. */
#ifndef IBSM_PROGRAM_MKEY_WRITE_H
#define IBSM_PROGRAM_MKEY_WRITE_H

#include <stdint.h>
#include "program/pass.h"

/* Puts the wanted M_Key, ProtectBits and lease period into pi (a PortInfo to be written to
 * management port `port`); 1 when the port holds something else. With protection off, a port
 * we never keyed keeps the fields it holds (0: nothing to write); one we keyed is cleared. A port that reads as it
 * answered our last write of exactly these (ibsim keeps no M_Key) is taken as holding them. */
int mkey_port_fields(struct pass *g, uint32_t port, uint8_t *pi);
/* Our Set of pi to `port` was taken (answer: its GetResp data): SMPs to it present the key it
 * now holds. */
void mkey_port_written(struct pass *g, uint32_t port, const uint8_t *pi, const uint8_t *answer);
/* Our Set to `port` got no answer: with M_Key protection on, the port is asked for its key
 * (a Get presenting none) and written again presenting the key it shows. 1 when that probe
 * went out (the failure is then counted by it), 0 when there is nothing to try. */
int mkey_port_recover(struct pass *g, uint32_t port);

#endif
