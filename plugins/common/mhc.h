/* SPDX-License-Identifier: BSD-2-Clause */
/* mhc.h - min-hop machinery shared by the engines that route on shortest paths (minhop, dor):
 * the LFT fill loop (OpenSM's destination order, per-row port balance, LMC-aware choice,
 * worker threads) with a hook that narrows each (switch, destination switch) candidate set,
 * and the equalize-ignore file (-i). Compiled into every engine (plugins/common), so every
 * non-static name carries the mhc_ prefix. */
#ifndef MHC_H
#define MHC_H

#include <stdint.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>
#include "engine_glue.h"
#include "guid_file.h"

/* ---- the equalize-ignore file -------------------------------------------------------------
 * A line is either an end-port GUID (routes to that port do not count in the balance) or a
 * switch node GUID and a port number, OpenSM 3.3's form (routes leaving by that switch port
 * do not count). '#' starts a comment; blank lines are skipped. */
struct mhc_ignore_entry {
	uint64_t guid;
	uint8_t port;     /* 0: an end-port GUID; else the switch port number */
};

struct mhc_ignore {
	struct mhc_ignore_entry *v;
	uint32_t n, cap;
	uint32_t bad_lines;
};

/* Reads path into ig (emptied first). Bad lines are logged as "path:line: why" at level
 * bad_level and skipped. Returns 0, or a negative errno if the file cannot be read (logged
 * at IBSM_LOG_ERROR; ig is then empty). */
int mhc_ignore_load(const struct ibsm_core *core, const char *path, int bad_level,
		    struct mhc_ignore *ig);
void mhc_ignore_clear(struct mhc_ignore *ig);

/* Marks what ig names in fabric f: dest_ignored[port id] for end ports, and
 * exit_ignored[port id] for switch external ports (both arrays [f->n_ports], zeroed by the
 * caller). Returns how many entries matched something in f. */
uint32_t mhc_ignore_mark(const struct mhc_ignore *ig, const struct ibsm_fabric *f,
			 uint8_t *dest_ignored, uint8_t *exit_ignored);

/* The key mhc_ignore_apply reads, for the engines' config_keys tables. */
#define MHC_IGNORE_FILE_KEY \
	{ "port_prof_ignore_file", NULL, \
	  "GUIDs (end port; or switch and port number) whose routes do not count in the balance" }

/* Reads the configured port_prof_ignore_file (if any) and marks what it names in f. Its bad
 * lines are logged as errors once, then quietly while the instance's stamp says the file is
 * unchanged (route() runs every sweep). run->dest_ign and run->exit_ign become calloc'd
 * [n_ports] arrays (NULL when no file is set or it cannot be read: routing goes on without
 * it, as OpenSM does; engine_run_end frees them), run->ignore_matched the entries found in f.
 * Returns 0, or -ENOMEM with run->out->why set. */
int mhc_ignore_apply(struct engine_run *run, const struct ibsm_fabric *f);

/* ---- the LFT fill ------------------------------------------------------------------------- */

/* Narrows the min-hop exit ports c[0 .. n) (ascending, n >= 1) of row switch s toward
 * destination switch t in place; returns the new count (1 .. n). Called at most once per
 * (s, t) per route, from worker threads: it must only read shared data. */
typedef unsigned (*mhc_narrow_fn)(const void *ctx, const struct ibsm_fabric *f, uint32_t s,
				  uint32_t t, uint8_t *c, unsigned n);

/* The last fill of an engine instance, kept so that the next fill copies the rows whose
 * inputs did not change instead of computing them again: a row depends only on the
 * destinations, its switch's links and the hop rows of its switch and of that switch's
 * neighbours, so a copied row is the row a fill would compute, byte for byte. Used when the
 * fill has no narrowing hook and no ignore file, the fabric has the same nodes and ports, and
 * the rows fit MHC_MEMO_MAX_BYTES (beyond, every fill computes every row). */
struct mhc_memo;
#define MHC_MEMO_MAX_BYTES (128u << 20)
void mhc_memo_free(void *memo);

struct mhc_fill {
	struct engine_inst *memo_owner; /* NULL: no memo; else inst->memo keeps the last fill */
	const uint8_t *hops;          /* [S * S] switch hops over the scope's links, 0xFF none */
	const uint8_t *dest_ignored;  /* [n_ports] or NULL: routes to it count nowhere */
	const uint8_t *exit_ignored;  /* [n_ports] or NULL: routes leaving by it do not count */
	const char *threads_key;      /* config key of a thread count (e.g. "minhop_threads") */
	mhc_narrow_fn narrow;         /* NULL: every min-hop port is a candidate */
	const void *narrow_ctx;
};

struct mhc_fill_stats {
	uint32_t rows, dests;  /* switch rows in scope, destination end ports */
	uint64_t routed;       /* LFT entries written */
	uint64_t unreachable;  /* (switch, LID) pairs with no usable path */
	unsigned threads;
	uint32_t rows_reused;  /* rows copied from the last fill (struct mhc_memo) */
};

/* Fills out->lft for the scope: every switch row in scope->switches sends every LID offset
 * of every destination in scope->dests (CA ports grouped by switch, most end ports first,
 * then switch LIDs: OpenSM's order) out of a min-hop port, balancing per row: the fewest
 * LIDs so far (CA and switch LIDs counted apart), then for LMC > 0 a port whose far side is
 * another system, then node. Rows are independent, so the tables do not depend on the
 * thread count. Returns 0, or < 0 with out->why set (-ENOMEM, -ECANCELED). */
int mhc_fill_routes(const struct ibsm_core *core, const struct ibsm_fabric *f,
		    const struct ibsm_scope *sc, struct ibsm_routes *out,
		    const struct mhc_fill *opt, struct mhc_fill_stats *st);

/* Logs what a fill did: the unreachable pairs (info), then one verbose line of counts, with
 * `detail` (e.g. " over 2 dimensions") after the end ports. */
void mhc_fill_log(const struct ibsm_core *core, const struct mhc_fill_stats *st,
		  const char *detail, double seconds);

/* The switch ids in scope->switches, ascending: malloc'd, *n set. NULL only without memory. */
uint32_t *mhc_scope_rows(const struct ibsm_fabric *f, const struct ibsm_scope *sc, uint32_t *n);

#endif
