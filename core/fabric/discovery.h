/* SPDX-License-Identifier: BSD-2-Clause */
/* discovery.h - finding the fabric from the SM's port with directed-route SMPs. */
#ifndef IBSM_FABRIC_DISCOVERY_H
#define IBSM_FABRIC_DISCOVERY_H

#include <glib.h>
#include <stdint.h>
#include "fabric/model.h"
#include "mad/transport.h"

struct discovery_stats {
	uint32_t nodes;
	uint32_t nodeinfo_sent;    /* NodeInfo Gets (one per link) */
	uint32_t dup_links;        /* links that led to a node already found */
	uint32_t failures;         /* SMPs that failed for good */
	uint32_t desc_read;        /* NodeDescription Gets */
};

/* Discovers the fabric over t as a work queue: NodeInfo once per link, PortInfo of every port,
 * SwitchInfo; NodeDescription only for nodes `prev` (the last generation, may be NULL) does not
 * have, or for every node when reread_desc is set (trap 144). Stops early when *stop becomes
 * non-zero (-EINTR). Returns generation `generation` holding one reference, or NULL with *err.
 * A generation is returned even when some SMPs failed (st->failures says how many). */
struct fabric *discover_fabric(struct transport *t, volatile int *stop, uint32_t generation,
			       const struct fabric *prev, int reread_desc, struct discovery_stats *st,
			       GError **err);

#endif
