/* SPDX-License-Identifier: BSD-2-Clause */
/* file.h - the file routing engine's parts (OpenSM's -R file, osm_ucast_file.c): the readers of
 * OpenSM's two dump formats (parse.c) and the result route() leaves (file.c). */
#ifndef FILE_ENGINE_H
#define FILE_ENGINE_H

#include <stddef.h>
#include <stdint.h>

/* ---- opensm-lfts.dump (lfts_file, -U) -------------------------------------------------------
 * "Unicast lids [0-N] of switch Lid L guid 0xGUID ('desc'):" starts a switch's table (its old
 * entries are dropped); each "0xLID PORT # ... portguid 0xGUID: 'desc'" line under it is one
 * entry (the port GUID optional); "N lids dumped", blank and '#' lines are skipped. */
struct lft_reader {
	/* a switch table starts: 0 or a negative errno to stop */
	int (*sw)(void *ctx, uint64_t guid, unsigned line);
	/* an entry of the table begun last (none before the first switch) */
	int (*entry)(void *ctx, uint32_t lid, unsigned port, uint64_t port_guid, unsigned line);
	void *ctx;
};

/* ---- opensm-lid-matrix.dump (lid_matrix_dump_file, -M) --------------------------------------
 * "Switch: guid 0xGUID" starts a switch; each "0xLID: hh hh ... # portguid 0xGUID" line is the
 * hop count to that LID through ports 0, 1, ... (hex). */
struct hops_reader {
	int (*sw)(void *ctx, uint64_t guid, unsigned line);
	int (*hops)(void *ctx, uint32_t lid, const uint8_t *hops, unsigned n, uint64_t port_guid,
		    unsigned line);
	void *ctx;
};

/* Parse text (len bytes) with the callbacks. Returns 0, the callbacks' negative errno, or
 * -EINVAL with why (why_len bytes) naming name:line and what is wrong there. */
int file_parse_lfts(const char *text, size_t len, const char *name,
		    const struct lft_reader *rd, char *why, size_t why_len);
int file_parse_hops(const char *text, size_t len, const char *name,
		    const struct hops_reader *rd, char *why, size_t why_len);

/* What route() leaves behind (immutable; the unit tests read it). */
struct file_result {
	uint32_t generation;
	uint32_t file_switches;    /* switch tables of lfts_file found in the fabric (scope) */
	uint32_t unknown_switches; /* tables of switches this fabric does not have: skipped */
	uint32_t filled_switches;  /* rows lfts_file has no table for: min-hop on the LID matrix */
	uint64_t entries;          /* LFT entries taken from lfts_file */
	uint64_t remapped;         /* of them, LIDs moved to the port's LIDs now (by port GUID) */
	uint64_t bad_port;         /* entries naming a port the switch does not have: skipped */
	uint64_t beyond;           /* entries for LIDs above this fabric's LFT rows: skipped */
	uint64_t filled;           /* entries the min-hop fill wrote */
	uint64_t hop_rows;         /* hop rows taken from lid_matrix_dump_file */
	double seconds;
};

#endif
