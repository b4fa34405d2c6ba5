/* SPDX-License-Identifier: BSD-2-Clause */
/* qos.h - QoS programming (-Q): the SL2VL mapping tables and VL arbitration tables every port
 * must hold, from the qos_* options of its port type (CA, router, switch port 0, switch
 * external port) or from the routing engine when it supplies them (torus-2QoS), every SL
 * mapped to a VL the port operates; VLHighLimit in PortInfo. Without -Q only the tables the
 * routing engine supplies are written (an engine that gives its routes virtual lanes - dfsssp,
 * nue, lash, torus-2QoS - needs them to be deadlock-free; OpenSM writes none without -Q and
 * asks for `-R dfsssp -Q`, opensm(8)), and no VLHighLimit; with an engine that supplies none,
 * nothing is written, as OpenSM: the tables keep what the ports hold. */
#ifndef IBSM_PROGRAM_QOS_H
#define IBSM_PROGRAM_QOS_H

#include <stdint.h>
#include "policy/qos_options.h"
#include "program/pass.h"
#include "program/vltables.h"
#include "routing/result.h"

struct qos_memory;
struct qos_memory *qos_memory_new(void);
void qos_memory_free(struct qos_memory *m);
void qos_memory_forget(struct qos_memory *m);
const struct vlt_memory *qos_memory_tables(const struct qos_memory *m);

/* OperVLs code (1: VL0, 2: VL0-1, 3: VL0-3, 4: VL0-7, 5: VL0-14) -> data VLs. */
unsigned qos_oper_vls_count(uint8_t code);
/* The VL a table may hold at a port with `count` usable data VLs: VL 15 (drop) and VLs below
 * count as they are; others masked to the largest power of two not above count (OpenSM masks
 * by OperVLs the same way, so the tables read back alike). */
uint8_t qos_fit_vl(uint8_t vl, unsigned count);
/* The SL2VL table bytes (SL 2i high nibble of byte i) of a 16-entry map fitted to count. */
void qos_sl2vl_bytes(const uint8_t vl[16], unsigned count, uint8_t out[8]);

/* The programming step of a pass: every table wanted (g->o->qos on), or those the engine
 * gives (off), then vlt_program; what nobody wants is forgotten (a later -Q reads it again).
 * r: the routes in force (engine sl2vl/vlarb hooks), may be NULL. Returns the number of Sets. */
uint32_t qos_program(struct pass *g, struct qos_memory *m, const struct routing_result *r,
		     struct vlt_stats *st);

#endif
