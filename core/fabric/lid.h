/* SPDX-License-Identifier: BSD-2-Clause */
/* lid.h - the LID manager: gives every end port of a fabric generation its LID range
 * (guid2lid first, then a valid LID already on the port, then the lowest free range) and
 * keeps OpenSM's guid2lid cache file, so LIDs survive restarts and SM fail-over. */
#ifndef IBSM_LID_H
#define IBSM_LID_H

#include <glib.h>
#include <stdint.h>
#include "fabric/model.h"

#define LID_GUID2LID_FILE "guid2lid"  /* in the cache dir (OSM_CACHE_DIR) */
#define LID_UCAST_MAX     0xBFFF      /* highest unicast LID */

struct lid_opts {
	uint8_t lmc;            /* -l: CA ports get 2^lmc LIDs aligned to 2^lmc */
	int reassign;           /* -r: ignore guid2lid and the LIDs on the ports. OpenSM does
	                         * this on its first master sweep only: clear it afterwards */
	int lmc_esp0;           /* OpenSM's lmc_esp0: an enhanced switch port 0 gets 2^lmc LIDs
	                         * too (default 0: every switch port 0 gets one LID, LMC 0) */
	const char *cache_dir;  /* NULL: no guid2lid */
};

/* What one lid_assign() did. */
struct lid_stats {
	uint32_t end_ports;        /* ports that have a LID now */
	uint32_t from_guid2lid;    /* base LID from a guid2lid entry */
	uint32_t kept;             /* LID already on the port, no guid2lid entry */
	uint32_t fresh;            /* newly allocated range */
	uint32_t changed;          /* base LID differs from the one the port had (0 counts) */
	uint32_t guid2lid_ignored; /* guid2lid lines dropped: malformed, invalid, duplicate,
	                            * conflicting, or not fitting the current LMC */
	uint32_t reserved_lids;    /* LIDs held for guid2lid GUIDs absent from this generation */
	uint32_t limit;            /* highest LID allowed (LinearFDBCap, unicast range) */
	uint32_t max_lid;          /* highest LID assigned */
	int fallback;              /* 0; 1: absent GUIDs' reservations dropped to fit;
	                            * 2: every LID reassigned to fit */
};

/* Assigns LIDs on generation f: ports[].lid and .lmc of every end port (fabric_is_end_port:
 * CA/router ports with a link or the SM's port, and switch port 0, which gets one LID and
 * LMC 0 unless it is an enhanced port 0 and o->lmc_esp0 is set). Other ports get LID 0.
 * Then calls fabric_index_lids(f) and sets f->pub.lmc. Reads <cache_dir>/guid2lid if present
 * (malformed or conflicting lines are logged with file:line and skipped). On failure
 * (-ENOSPC: the fabric does not fit below the smallest LinearFDBCap) f is left unchanged and
 * *err says how many LIDs were needed and what limits them. stats may be NULL. */
int lid_assign(struct fabric *f, const struct lid_opts *o, GError **err);
int lid_assign_stats(struct fabric *f, const struct lid_opts *o, struct lid_stats *stats,
		     GError **err);

/* Writes <cache_dir>/guid2lid atomically (temp file in the same dir + fsync + rename + fsync
 * of the dir), in OpenSM's format: "0x<guid16> 0x<min4> 0x<max4>" and a blank line per
 * entry, sorted by GUID. Entries of the old file whose GUID is not an end port of f are kept
 * (their LIDs stay reserved, as in OpenSM's in-memory table) unless they overlap a LID of f.
 * Creates cache_dir if missing. NULL cache_dir: nothing to do. Returns 0 or -errno with *err
 * naming the path and the system error. */
int lid_save_guid2lid(const struct fabric *f, const char *cache_dir, GError **err);

/* Highest LID usable on f: min(smallest LinearFDBCap - 1, 0xBFFF); a cap of 0 (unknown)
 * counts as 49152. *cap_switch (may be NULL) gets the node id of the switch with the
 * smallest cap, or IBSM_NONE. */
uint32_t lid_highest_usable(const struct fabric *f, uint32_t *cap_switch);

#define LID_ERROR lid_error_quark()
GQuark lid_error_quark(void);

#endif
