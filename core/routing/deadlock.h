/* SPDX-License-Identifier: BSD-2-Clause */
/* deadlock.h - are a generation's final tables free of credit loops? Every route from every
 * end port to every LID is followed through the LFTs with the SL its path gets and the VL each
 * hop's SL2VL table gives it, and the (channel, VL) dependency graph over the switch-to-switch
 * links (graph/cdg.h; Dally and Seitz 1987, IBA 1.3 vol. 1 18.2.5.3) is searched for cycles.
 * The core runs it on every routing chain's merged tables (routing/orch.c); the engines' unit
 * tests run it on each engine's tables (tests/unit/fabric_fixture.h, fx_deadlock_check()).
 *
 * Cost. A route's out port at a switch depends only on the destination LID, and the VL of a
 * hop on (in port, out port, SL): so per destination LID the walk visits each (link, VL, SL)
 * state once, whatever the number of sources (a visited state ends the walk: what follows was
 * added already). Without path_sl every route of a destination has SL 0 and one start per
 * switch suffices (two when the switch's SL2VL depends on the in port): O(LIDs x (switches +
 * links used)). With path_sl it is asked once per (source LID, destination LID), as OpenSM's
 * dfsssp assigns its lanes (osm_ucast_dfsssp.c: every LID of every source, LMC included):
 * O(LIDs^2) calls, the bound at large sizes (measured in doc/chains.md). */
#ifndef IBSM_ROUTING_DEADLOCK_H
#define IBSM_ROUTING_DEADLOCK_H

#include <stdint.h>
#include "fabric/model.h"

struct deadlock_report {
	uint64_t routes;            /* (source end port, destination LID) routes walked */
	uint32_t vls;               /* distinct VLs the routes use */
	uint32_t channels_in_cycles;/* 0: free of credit loops */
	char cycle[512];            /* one cycle, "sw 0xGUID port P vl V -> ...", or "" */
	/* ---- beyond the shared API ---- */
	uint16_t vl_mask;           /* bit v: some hop leaving a switch uses VL v */
	uint32_t channels;          /* (switch-to-switch link, VL) channels some route uses */
	uint32_t cycle_len;         /* channels on the cycle named (it may be cut short) */
	uint64_t dependencies;      /* distinct dependencies between channels */
	uint64_t unrouted;          /* walks that met no entry, a port without a link, or VL 15:
				     * not followed further (routing/verify.c judges delivery) */
	uint64_t path_sl_calls;     /* path_sl() asked */
	double seconds;
};

/* Walks every route from every end port (CA/router ports, switch port 0) to every LID of
 * every end port through the tables lft (stride entries per switch row, switch ids of f),
 * the SL of each route path_sl(ctx, slid, dlid) (NULL: SL 0), the VL at each hop
 * sl2vl(ctx, in_port_id, out_port_id, vl[16]) as the engine's hook gives it (NULL or < 0:
 * the identity, VL = SL), and builds the (channel, VL) dependency graph over the
 * switch-to-switch links. Returns channels_in_cycles (0: free of credit loops); rep may be
 * NULL. UINT32_MAX when out of memory (rep->cycle says so). */
uint32_t deadlock_check(const struct fabric *f, const uint8_t *lft, uint32_t stride,
			uint8_t (*path_sl)(const void *ctx, uint16_t slid, uint16_t dlid),
			int (*sl2vl)(const void *ctx, uint32_t in_port, uint32_t out_port, uint8_t vl[16]),
			const void *ctx, struct deadlock_report *rep);

/* The same over part of the routes: DEADLOCK_CA_ROUTES keeps only routes between CA and router
 * ports (what the data traffic uses; switch port 0 is left out as source and destination):
 * minhop and ftree route switch LIDs down and up again, which closes loops that only
 * management traffic to switches could fill (SMPs travel on VL 15, which has no credits). */
#define DEADLOCK_CA_ROUTES 0x1
uint32_t deadlock_check_flags(const struct fabric *f, const uint8_t *lft, uint32_t stride,
			      uint8_t (*path_sl)(const void *ctx, uint16_t slid, uint16_t dlid),
			      int (*sl2vl)(const void *ctx, uint32_t in_port, uint32_t out_port,
					   uint8_t vl[16]),
			      const void *ctx, unsigned flags, struct deadlock_report *rep);

#endif
