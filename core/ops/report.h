/* SPDX-License-Identifier: BSD-2-Clause */
/* report.h - the fabric report operators read in a browser: one self-contained HTML document
 * (inline SVG and CSS, no script, nothing fetched) drawn from the routes in force and their
 * generation: the topology as a picture (switch tiers, or a grid for tori and meshes), the
 * routed load of every switch-to-switch link as a heat map, routing quality (link loads, shift
 * permutations, VLs, the credit-loop check), partitions, multicast groups and the performance
 * manager's error counters. The console's `report html` and the after-sweep file
 * (fabric_report_file) both come from report_build(). doc/report.md describes it. */
#ifndef IBSM_OPS_REPORT_H
#define IBSM_OPS_REPORT_H

#include <glib.h>
#include <stdint.h>
#include "fabric/model.h"
#include "routing/result.h"

struct sm;
struct mc_groups;
struct part_policy;
struct perfmgr;

#define REPORT_SHIFTS 16              /* shift permutations tried (at most) */
#define REPORT_MAX_SWITCHES_DRAWN 256 /* above: a summary by tier instead of every switch */
#define REPORT_TOP_LINKS 32           /* the most loaded links listed */
#define REPORT_MAX_ROWS 500           /* partitions, groups, ports with errors listed */

/* Routing quality of one set of tables over the routes between CA ports (base LIDs): the
 * load of a directed switch-to-switch link is the number of (source, destination) CA port
 * pairs whose route leaves a switch by it. */
struct report_quality {
	uint32_t links;             /* directed switch-to-switch links (parallel ones each) */
	uint32_t ca_ports;          /* CA and router ports with a link and a LID */
	uint64_t routes;            /* CA port pairs counted */
	uint64_t unrouted;          /* of them: not delivered (no entry, loop, wrong port) */
	uint32_t max_load;
	double mean_load;           /* over every directed switch-to-switch link */
	/* shift permutations: CA port i (in port GUID order) sends to CA port (i + k) mod n,
	 * for up to REPORT_SHIFTS values of k spread evenly over 1 .. n - 1; the worst is the one
	 * whose most loaded link carries the most routes */
	uint32_t shifts;            /* values of k tried */
	uint32_t worst_shift;       /* k of the worst one (0: none tried) */
	uint32_t worst_shift_load;  /* its most loaded link's routes */
	uint32_t shift_k[REPORT_SHIFTS];    /* each k tried, ascending */
	uint32_t shift_load[REPORT_SHIFTS]; /* its most loaded link's routes */
	/* the credit-loop check (routing/deadlock.h) over the CA-to-CA routes with their SLs
	 * and SL2VL tables */
	int checked;                /* 0: no routes, not checked */
	uint16_t vl_mask;           /* VLs the routes use leaving switches */
	uint32_t vls;
	uint32_t loop_channels;     /* 0: free of credit loops */
	char cycle[512];
};

/* The load of every directed switch-to-switch link of f under tables lft (stride entries per
 * switch row): load[port id of the sending switch port] (an array of f->pub.n_ports, set
 * here; NULL: not returned), and q's links, ca_ports, routes, unrouted, max_load and
 * mean_load. */
void report_link_load(const struct fabric *f, const uint8_t *lft, uint32_t stride, uint32_t *load,
		      struct report_quality *q);
/* Everything in q for the routes r (the link loads, the shifts and the credit-loop check with
 * r's engines' path SLs and SL2VL tables); load as above (may be NULL). */
void report_quality(const struct routing_result *r, uint32_t *load, struct report_quality *q);

/* Where each switch is drawn. */
struct report_layout {
	uint32_t n;                 /* switches */
	double *x, *y;              /* [n]: centre of each switch's box, in SVG units */
	uint32_t *tier;             /* [n]: tier (0: switches with CAs, then hops away); grid: y */
	uint32_t n_tiers;
	int grid;                   /* 1: a torus or mesh whose coordinates were found */
	uint32_t dims[3];           /* grid: switches along each dimension (1: none) */
	int wrap[3];                /* grid: the dimension closes into a ring */
	double width, height;
	double cell_w, cell_h;       /* distance between neighbouring columns, rows */
};

/* Lays out the switches of f: a grid when the switch links form a torus or mesh of up to
 * three dimensions with consistent port numbers (the port a link leaves by names its
 * direction), else tiers by hops from the switches with CAs, spines on top. */
void report_layout(const struct fabric *f, struct report_layout *l);
void report_layout_clear(struct report_layout *l);

/* What a report shows besides the routes. */
struct report_inputs {
	const struct routing_result *r;    /* the routes in force (NULL: none yet) */
	const struct fabric *f;            /* the generation (NULL: r's) */
	const struct part_policy *parts;   /* partitions in force (NULL: none known) */
	struct mc_groups *mc;              /* the SA's multicast groups (NULL: none known) */
	const struct perfmgr *pm;          /* the performance manager (NULL: not running) */
	const char *sm_state;              /* "MASTER", ... (NULL: not said) */
	uint64_t sm_guid;
	int subnet_up;
	uint32_t sweeps;                   /* generation number of the last heavy sweep */
	uint32_t max_switches_drawn;       /* 0: REPORT_MAX_SWITCHES_DRAWN */
};

/* What the routes say, computed once per generation of routes: the expensive part (link
 * loads, shifts, the credit-loop check, the layout), O(CA ports x switches) and more: seconds
 * on fabrics of thousands of switches, so the SM computes it off the main thread. Reads only
 * r and f (immutable, referenced here): thread-safe. */
struct report_data {
	struct routing_result *r;   /* a reference; NULL: no routes for f */
	struct fabric *f;           /* a reference; NULL: no fabric yet */
	uint32_t *load;             /* [f->pub.n_ports]: routes per directed link (report_link_load) */
	struct report_quality q;
	struct report_layout layout;
	double seconds;             /* computing it took */
};
/* r: the routes (NULL: none); f: the generation (NULL: r's; routes of another generation
 * than f are left out). */
struct report_data *report_data_compute(struct routing_result *r, struct fabric *f);
void report_data_free(struct report_data *d);   /* NULL: nothing */
/* The document from d and what in adds (partitions, groups, perfmgr, SM state; in->r and
 * in->f are not used): cheap, on the main thread (g_string_free(.., TRUE) it). */
GString *report_render(const struct report_data *d, const struct report_inputs *in);
/* Both at once (tests, small fabrics). */
GString *report_build(const struct report_inputs *in);
/* The data of the SM's routes in force: computed on the spot when the fabric is small, else
 * NULL while a thread computes it (the event loop's tick starts it; ask again later). */
const struct report_data *report_data_current(struct sm *sm);
/* The report of the SM's routes in force (core/ops: sees struct sm); NULL while its data is
 * being computed (as above). */
GString *report_html(struct sm *sm);
/* Has the report written to the SM's fabric_report_file after each heavy sweep that brings new
 * routes while master (a tick hook, sm/loop.h; nothing when the key is unset). */
void report_file_start(struct sm *sm);
/* Stops it: waits for a computation in progress, drops what is kept. */
void report_file_stop(void);
/* Writes html to path atomically (path.tmp, then rename). 0, or -errno with *err set. */
int report_write_file(const char *path, const GString *html, GError **err);

#endif
