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
#include "engine_dests.h"
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

/* ---- OpenSM's routing inputs (mhc_order.c) ------------------------------------------------ */

struct mhc_order_opts {
	const char *order_file;     /* guid_routing_order_file, or NULL */
	int port_shifting;          /* port_shifting */
	uint64_t scatter_seed;      /* scatter_ports: 0 off */
	int no_scatter_listed;      /* guid_routing_order_no_scatter */
};

/* Reads the four keys into o; non-zero when any is set. */
int mhc_order_options(const struct ibsm_core *core, struct mhc_order_opts *o);

/* Puts the destinations guid_routing_order_file names first (file order) and marks which get
 * scattered. Returns 0, or < 0 with out->why set: the file unreadable, or bad lines (each
 * logged as FILE:LINE), so the engine fails and the chain's fallback or the routes in place
 * stay. */
int mhc_order_apply(const struct ibsm_core *core, const struct ibsm_fabric *f,
		    const struct mhc_order_opts *o, struct engine_dests *d, struct ibsm_routes *out);

/* hop_weights_file (mhc_weights.c): *weights becomes a malloc'd [n_ports] array, every port 1
 * but the switch ports the file weights. Returns 0, or < 0 with out->why set (file unreadable,
 * bad lines logged as FILE:LINE). */
int mhc_weights_load(const struct ibsm_core *core, const struct ibsm_fabric *f, const char *path,
		     uint8_t **weights, struct ibsm_routes *out);
/* The routing inputs minhop and dor share: OpenSM's order keys into *order, and
 * hop_weights_file loaded (mhc_weights_load); opt->order and opt->weights are set from them.
 * The caller frees opt->weights (cast) after the fill. Returns 0, or < 0 with out->why set. */
struct mhc_fill;
int mhc_inputs_load(const struct ibsm_core *core, const struct ibsm_fabric *f,
		    struct mhc_order_opts *order, struct mhc_fill *opt, struct ibsm_routes *out);
/* The S x S switch distances over the scope's links, each link counting its output port's
 * weight (0xFF unreachable, at most 0xFE). 0 or -ENOMEM. */
int mhc_weighted_hops(const struct ibsm_fabric *f, const struct ibsm_scope *sc,
		      const uint8_t *weights, uint8_t **hops);

/* port_search_ordering_file (mhc_search_order.c), OpenSM's general-routing use: *rank becomes a
 * malloc'd [n_ports] array, the position of each switch port in its switch's search order (the
 * port number where the file says nothing). Returns 0, or < 0 with out->why set. */
int mhc_search_order_load(const struct ibsm_core *core, const struct ibsm_fabric *f,
			  const char *path, uint8_t **rank, struct ibsm_routes *out);

/* The next number of a row's generator (splitmix64). */
uint64_t mhc_order_rand(uint64_t *state);

/* The keys mhc_order_options reads, for the engines' config_keys tables. */
#define MHC_ORDER_KEYS \
	{ "guid_routing_order_file", NULL, \
	  "Port GUIDs, one a line, routed first and in this order (OpenSM's -X)" }, \
	{ "port_shifting", "FALSE", \
	  "Start the search among equal ports at an offset that moves with their load (OpenSM's)" }, \
	{ "scatter_ports", "0", \
	  "Seed (0: off): pick at random among the least loaded ports, the same for one seed" }, \
	{ "guid_routing_order_no_scatter", "FALSE", \
	  "Do not scatter the ports guid_routing_order_file lists" }, \
	{ "hop_weights_file", NULL, \
	  "Switch GUID, port, weight (1-255) a line: paths weigh the sum of their ports' weights" }

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
 * the hop matrix (and the rows, when the core does not keep them: ABI 1.4 last_rows) fit
 * MHC_MEMO_MAX_BYTES (beyond, every fill computes every row). */
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
	const struct mhc_order_opts *order; /* NULL: none of OpenSM's routing inputs */
	const uint8_t *weights;       /* [n_ports] hop_weights_file's, with hops computed over them */
	const uint8_t *search_rank;   /* [n_ports] port_search_ordering_file's order, or NULL */
};

struct mhc_fill_stats {
	uint32_t rows, dests;  /* switch rows in scope, destination end ports */
	uint64_t routed;       /* LFT entries written */
	uint64_t unreachable;  /* (switch, LID) pairs with no usable path */
	unsigned threads;
	uint32_t rows_reused;  /* rows copied from the last fill (struct mhc_memo) */
	uint32_t rows_part;    /* rows of which one destination class was copied */
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
