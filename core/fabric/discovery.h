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
	uint32_t ports_read;       /* switch external port PortInfo Gets */
	uint32_t ports_reused;     /* switch external ports taken from the last generation */
	uint32_t reused_reread;    /* of those, read after all (a NodeInfo through it failed) */
	uint32_t psc_cleared;      /* switches whose PortStateChange was cleared */
	uint32_t ports_from_prev;  /* ports whose read failed, taken from the last generation */
	uint32_t switchinfo_from_prev; /* switches whose SwitchInfo read failed, taken likewise */
	uint32_t rounds;           /* rounds after the first (NodeInfo that failed sent again) */
	uint32_t reprobed;         /* NodeInfo sent again in those rounds */
	uint32_t links_carried;    /* links between found nodes whose NodeInfo failed: as last time */
	uint32_t explained;        /* NodeInfo failed toward a port read down, or through a port the
				    * last generation had LinkUp leading nowhere (not in failures) */
	uint32_t carried;          /* nodes not reached (SMPs failed) carried over (fabric/carry.h) */
	uint32_t dropped;          /* nodes not reached too many sweeps in a row: let go */
	uint64_t self_link_guid;   /* not 0: a link from a port to itself was found (two CAs with this
				    * GUID back to back, OpenSM's fatal duplicate-GUID case) */
	uint8_t self_link_port;    /* ... the port */
};

/* Rounds of NodeInfo per discovery: the first, then again through every LinkUp port whose
 * NodeInfo failed for good, while a round still loses some. Each round gives an SMP the
 * transport's whole persistence (mad/transport.c), so at 30 % loss per switch crossed a node
 * ten crossings away is missed by a sweep about 0.16^3 = 0.4 % of the time instead of 16 %. */
#define DISCOVERY_ROUNDS 3

/* Discovers the fabric over t as a work queue: NodeInfo once per link, SwitchInfo, PortInfo of
 * every CA port and switch port 0 (and NodeInfo again, in up to DISCOVERY_ROUNDS - 1 more
 * rounds, where it failed). A switch's external ports are read when its SwitchInfo shows
 * PortStateChange (cleared first, so a later change shows next time) or `prev` (the last
 * generation, may be NULL) does not know them in full; otherwise they are taken from prev:
 * no port of that switch changed state since (the SM's own PortInfo Sets do not set the bit).
 * NodeDescription only for nodes prev does not have, or for every node with
 * DISCOVER_REREAD_DESC (trap 144). With DISCOVER_PSC_NOT_OURS (this SM is not master: another
 * may be, and PortStateChange is its record) every switch's external ports are read and no
 * PortStateChange is cleared: a bit seen set stays set in the node's SwitchInfo for
 * sweep_reset_state_change once this SM is master. Stops early when *stop becomes
 * non-zero (-EINTR). Returns generation `generation` holding one reference, or NULL with *err.
 * A generation is returned even when some SMPs failed (st->failures says how many); then a
 * port whose read failed is taken from prev (a switch's SwitchInfo too), a link whose NodeInfo
 * failed between nodes found all the same is kept as prev had it, and the nodes behind such
 * ports (or behind NodeInfo that failed) are carried over from prev (fabric/carry.h). */
#define DISCOVER_REREAD_DESC  1
#define DISCOVER_PSC_NOT_OURS 2
struct fabric *discover_fabric(struct transport *t, volatile int *stop, uint32_t generation,
			       const struct fabric *prev, int flags, struct discovery_stats *st,
			       GError **err);

#endif
