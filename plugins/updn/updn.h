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

struct updn_graph;

/* Reads ids_guid_file (OpenSM's -m: "SWITCH-GUID ID" a line) into id[] (indexed as g's
 * switches; those not named keep what id[] holds). Returns 0, or < 0 with why set: the file
 * unreadable or bad lines (each logged as FILE:LINE). *matched: switches given an ID. */
int updn_ids_load(const struct ibsm_core *core, const char *path, const struct updn_graph *g,
		  uint64_t *id, uint32_t *matched, char *why, size_t why_len);

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

/* The (at most max) switches of component c, most central first (least eccentricity toward
 * the CA switches, then least total distance, then GUID), into out. Returns how many. */
uint32_t updn_central(const struct updn_graph *g, const uint8_t *hops, uint32_t c,
		      uint32_t *out, uint32_t max);

/* What a candidate root set gives (CA routes of base LIDs over the directed switch links). */
struct updn_eval {
	uint64_t max;     /* on the busiest link */
	uint64_t sumsq;   /* sum of the squared link loads: the tie-break, smoother is better */
	int connected;    /* every (switch with CAs, CA LID) pair has an up/down path */
};
/* is_root values of a candidate set: a root, and the first root, from which the switches of
 * equal rank are ordered by distance (so several roots hang together: up/down still connects
 * every pair when the roots are a connected group around the first). */
#define UPDN_ROOT 1
#define UPDN_FIRST_ROOT 2
typedef void (*updn_eval_fn)(void *ctx, const uint8_t *is_root, struct updn_eval *e);

/* Is a better than b: connected first, then the lighter busiest link, then the smaller sum
 * of squares? */
int updn_eval_better(const struct updn_eval *a, const struct updn_eval *b);

/* What the search did, for the log and the tests. */
struct updn_search {
	struct updn_eval detected, single, chosen; /* single: the best root alone */
	uint32_t evals, singles, added;
	int by_distance;  /* equal ranks of the chosen set ordered by distance from its first root */
};

/* Chooses the fall-back roots of one component by the routes they give: is_root holds the
 * detection's choice on entry (every component's roots); the switches of pool (candidates of
 * that component, most central first) are tried each alone, then, from the best of those,
 * added one at a time while one makes the busiest link lighter (ties: the smaller sum of
 * squared loads). A set leaving a CA pair without an up/down path never wins. At most
 * max_evals sets are evaluated. is_root gets the best set; returns its number of roots. */
uint32_t updn_search_roots(const struct ibsm_core *core, const struct updn_graph *g,
			   const uint32_t *pool, uint32_t npool, uint32_t max_evals,
			   updn_eval_fn eval, void *ctx, uint8_t *is_root,
			   struct updn_search *st);

/* What route() leaves behind (immutable; the unit tests read it through this header). */
struct updn_result {
	uint32_t generation, S;
	uint32_t *rank;        /* [S] BFS distance from the nearest root (dnup: leaf switch) */
	uint8_t *is_root;      /* [S] (dnup: the leaf switches, those with CAs) */
	uint32_t *ord;         /* [S] the strict order orienting the links: a step toward the
				* smaller ord is up; routes never go up after going down */
	int dnup;              /* dnup's result */
	uint8_t *how;          /* [S] enum updn_root_how of the switch's component */
	uint32_t nroots, max_rank, rows, dests;
	uint64_t routed;       /* LFT entries written */
	uint64_t unrouted;     /* (row in scope, LID in scope) pairs left without a route */
	uint64_t udu_entries;  /* switch-LID entries that needed up-down-up turns */
	uint64_t off_updn;     /* CA-LID entries off up/down on switches without CAs */
	uint64_t ca_no_path;   /* CA-LID entries missing on switches with CAs (no up/down path) */
	uint64_t load_max;     /* CA-pair routes (base LIDs) on the busiest switch link */
	double load_mean, balance; /* mean over all usable directed switch links; max/mean */
	uint32_t roots_tried;  /* fall-back root sets compared */
	uint64_t load_detected; /* load_max the detection's root alone would give (search only) */
	uint64_t load_single;   /* load_max of the best root alone (search only) */
	double seconds;
};

#endif
