/* SPDX-License-Identifier: BSD-2-Clause */
/* updn.h - what the files of the updn engine share: the root GUID file (-a) parser and the
 * root choice (file, OpenSM's hop histogram, or a logged fall-back rule), kept apart from the
 * routing so each file has one job. */
#ifndef UPDN_H
#define UPDN_H

#include <stdint.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>
#include "../common/guid_file.h"

/* Reads an "-a" file, switch node GUIDs one per line ('#' starts a comment), into g (emptied
 * first, in file order). Bad lines are logged as "path:line: why" at level
 * bad_level and skipped. Returns 0, or a negative errno if the file cannot be read (logged at
 * IBSM_LOG_ERROR; g is then empty). */
int updn_guids_load(const struct ibsm_core *core, const char *path, int bad_level,
		    struct guid_list *g);

/* The switch graph of one scope: usable switch-to-switch links, sorted by local port. */
struct updn_graph {
	uint32_t S, L;        /* switches, directed links */
	uint32_t *off;        /* [S + 1]: links of s are [off[s], off[s + 1]) */
	uint32_t *peer;       /* [L] switch at the far end */
	uint8_t *port;        /* [L] local exit port */
	uint64_t *guid;       /* [S] node GUID */
	uint32_t *ca_src;     /* [S] CA ports hanging off s with their link in scope */
	uint32_t *comp;       /* [S] connected component id (0 ..) */
	uint32_t ncomp;
	uint8_t *outside;     /* [ncomp] 1: no switch of the scope in it (its first switch is
			       * made its root, silently) */
};

/* How the roots were chosen, per component (for the log and the tests). */
enum updn_root_how { UPDN_ROOT_FILE = 1, UPDN_ROOT_HISTOGRAM, UPDN_ROOT_CENTRE };

/* Chooses the roots: the file's switches (if any) and, in every component left without one,
 * the switches OpenSM's hop histogram marks (those seeing more than 90% of the component's
 * CAs at one distance and no other distance above 5%; of these, the ones seeing that bar at
 * the fewest hops), else the switches of least eccentricity toward the CA switches (then
 * least total distance, then GUID), candidates given in order in centre[]/ncentre (the first
 * is the default root of that component). centre_only: skip the histogram. is_root[S] is
 * filled; how[comp] says which rule applied. hops is the S x S switch hop matrix (may be NULL
 * when the file covers every component). Returns the number of roots. */
uint32_t updn_pick_roots(const struct ibsm_core *core, const struct updn_graph *g,
			 const uint8_t *hops, const struct guid_list *file, uint8_t *is_root,
			 uint8_t *how, uint32_t *centre, uint32_t *ncentre, uint32_t max_centre,
			 int centre_only);

/* What route() leaves behind (immutable; the unit tests read it through this header). */
struct updn_result {
	uint32_t generation, S;
	uint32_t *rank;        /* [S] BFS distance from the nearest root */
	uint8_t *is_root;      /* [S] */
	uint8_t *how;          /* [S] enum updn_root_how of the switch's component */
	uint32_t nroots, max_rank, rows, dests;
	uint64_t routed;       /* LFT entries written */
	uint64_t unrouted;     /* (row in scope, LID in scope) pairs left without a route */
	uint64_t udu_entries;  /* switch-LID entries that needed up-down-up turns */
	uint64_t off_updn;     /* CA-LID entries off up/down on switches without CAs */
	uint64_t ca_no_path;   /* CA-LID entries missing on switches with CAs (no up/down path) */
	uint64_t load_max;     /* CA-pair routes (base LIDs) on the busiest switch link */
	double load_mean, balance; /* mean over all usable directed switch links; max/mean */
	uint32_t roots_tried;  /* fall-back root candidates compared */
	double seconds;
};

#endif
