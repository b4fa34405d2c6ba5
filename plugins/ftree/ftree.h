/* SPDX-License-Identifier: BSD-2-Clause */
/* ftree.h - what the files of the fat-tree engine share: the GUID lists it reads (-a, -u, -G),
 * the tree it builds from the scope (ranks, up/down port groups, leaves in index order, the CA
 * order) and the routing pass over that tree. Kept apart so each file has one job:
 * guids.c reads files, topo.c ranks and validates, route.c fills LFT columns, ftree.c is the
 * engine glue and the CA-order dump. */
#ifndef FTREE_H
#define FTREE_H

#include <stdint.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>
#include "guid_file.h"

#define FTREE_MIN_LEVELS 2
#define FTREE_MAX_LEVELS 8

/* ---- GUID lists (guids.c) ---- */

/* Reads path into g as a sorted set (guid_list_has looks GUIDs up): one GUID a line
 * (0x-prefixed or not), '#' starts a comment, blank lines skipped, anything else is a bad line
 * (logged, skipped). Returns 0, or a negative errno when the file cannot be read (logged at
 * IBSM_LOG_ERROR, naming key and path, and said in why). */
int ftree_guids_load(const struct ibsm_core *core, const char *key, const char *path,
		     struct guid_list *g, char *why, size_t why_len);

/* ---- the tree (topo.c) ---- */

/* A port group: every usable link from one switch to one neighbour switch. */
struct ftree_group {
	uint32_t peer;        /* switch id */
	uint32_t first;       /* ports[first .. first + n) */
	uint8_t n;
};

/* A linked CA port in scope. */
struct ftree_ca {
	uint32_t port;        /* port id */
	uint32_t sw;          /* switch it hangs off */
	uint8_t exit;         /* that switch's port toward it */
	uint8_t cn, io;       /* compute node; listed in the I/O file */
};

struct ftree_sw {
	int32_t rank;         /* 0 = roots; -1 = out of scope */
	uint32_t up0, nup;    /* groups[up0 .. up0 + nup): toward rank - 1 */
	uint32_t down0, ndown;/* toward rank + 1 */
	uint32_t sib0, nsib;  /* same rank */
	uint32_t ca0, nca;    /* cas[ca0 .. ca0 + nca), by port number */
	uint32_t ncn;         /* of which compute nodes */
};

struct ftree_topo {
	uint32_t S;                 /* fabric switch count (arrays below are [S]) */
	struct ftree_sw *sw;
	struct ftree_group *groups;
	uint32_t ngroups;
	uint8_t *ports;             /* [2 * nlinks]: pairs (local port, peer port) */
	uint32_t nlinks;
	struct ftree_ca *cas;
	uint32_t ncas, ncn;
	uint32_t *by_rank;          /* in-scope switch ids, rank ascending, then id */
	uint32_t nscope;
	uint32_t leaf_rank;         /* rank of the compute nodes' switches */
	uint32_t max_rank;
	uint32_t *leaves;           /* switches at leaf_rank in index order */
	uint32_t nleaves;
	uint32_t max_cn_per_leaf;
	int roots_given;
	uint32_t nroots;
};

/* Options read from the core's configuration. */
struct ftree_opts {
	const struct guid_list *roots, *cns, *ios; /* NULL: not given */
	unsigned max_reverse_hops;
};

/* Builds the tree over the scope's switches and usable links, ranks it, validates the rules
 * (the pure fat-tree rules without roots, the relaxed ones with) and indexes the leaves.
 * Returns 0, or < 0 with why filled (the rule broken and the switch that broke it). */
int ftree_topo_build(const struct ibsm_fabric *f, const struct ibsm_scope *sc,
		     const struct ftree_opts *o, struct ftree_topo *t, char *why, size_t whylen);
void ftree_topo_free(struct ftree_topo *t);

/* ---- routing (route.c) ---- */

/* One entry of the CA order: a compute node's port id, or IBSM_NONE for a dummy. */
struct ftree_order {
	uint32_t *port;
	uint32_t n;
	uint32_t per_leaf;
};

struct ftree_stats {
	uint64_t entries;           /* LFT entries written */
	uint32_t ca_dests, sw_dests;
	uint32_t non_updown;        /* switches routed toward a switch LID off up/down paths */
	uint32_t reverse;           /* switches routed toward an I/O node with reverse hops */
	uint32_t unrouted_leaf;     /* (leaf with CAs, CA LID) pairs with no path */
	uint32_t mgmt_only;         /* (switch without CAs, CA LID) entries off up/down paths */
	unsigned threads;
};

/* Orders the compute nodes (leaves in index order, CNs by port, dummies to max per leaf),
 * then routes every destination of the scope into out->lft (rows of in-scope switches only).
 * Returns 0, or < 0 with out->why set. */
int ftree_route_all(const struct ibsm_core *core, const struct ibsm_fabric *f,
		    const struct ibsm_scope *sc, const struct ftree_topo *t,
		    const struct ftree_opts *o, struct ibsm_routes *out,
		    struct ftree_order *order, struct ftree_stats *st);

#endif
