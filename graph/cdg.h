/* SPDX-License-Identifier: BSD-2-Clause */
/* cdg.h - channel dependency graphs (Dally and Seitz, "Deadlock-free message routing in
 * multiprocessor interconnection networks", 1987; IBA 1.3 vol. 1, 18.2.5.3 on credit loops): a
 * channel is one direction of a link on one virtual lane; a route that enters a switch on
 * channel a and leaves it on channel b makes b's buffer wait for a's (the dependency a -> b).
 * Routes are free of credit loops when the graph of all their dependencies has no cycle. The
 * engines that give routes virtual lanes (dfsssp, nue, lash) build one per VL layer, and the
 * core checks the final tables with one (routing/deadlock.h). Channels are dense ids
 * 0..n-1 the caller chooses (e.g. directed link id * VLs + VL). An edge counts the routes that
 * add it, so a route's dependencies can be taken out again. Not thread-safe: one graph, one
 * thread. */
#ifndef IBSM_GRAPH_CDG_H
#define IBSM_GRAPH_CDG_H

#include <stdint.h>

struct cdg;

/* A graph of n channels and no dependency; NULL when out of memory. */
struct cdg *cdg_new(uint32_t n_channels);
void cdg_free(struct cdg *g);
uint32_t cdg_channels(const struct cdg *g);
/* Dependencies (distinct edges) in the graph now. */
uint64_t cdg_edges(const struct cdg *g);

/* One more route depends a -> b (a != b; channel ids below n). 0, or -1 out of memory. */
int cdg_add(struct cdg *g, uint32_t a, uint32_t b);
/* One route fewer depends a -> b; the edge goes with its last route. */
void cdg_remove(struct cdg *g, uint32_t a, uint32_t b);
/* The dependencies of one route over channels ch[0..n): ch[i] -> ch[i+1] (a repeated channel,
 * ch[i] == ch[i+1], adds nothing). 0, or -1 out of memory (nothing added then). */
int cdg_add_path(struct cdg *g, const uint32_t *ch, uint32_t n);
void cdg_remove_path(struct cdg *g, const uint32_t *ch, uint32_t n);

/* Does channel `to` follow from `from` through the dependencies (from == to: yes)? */
int cdg_reaches(struct cdg *g, uint32_t from, uint32_t to);
/* Would one more route over ch[0..n) close a cycle? The graph is left as it was. -1 when out
 * of memory. */
int cdg_path_closes_cycle(struct cdg *g, const uint32_t *ch, uint32_t n);
/* Adds the route's dependencies unless they close a cycle: 0 added, 1 refused (nothing
 * added), -1 out of memory. */
int cdg_add_path_acyclic(struct cdg *g, const uint32_t *ch, uint32_t n);

/* One cycle of the graph: its channels in order into cycle[0..max) (the first repeated after
 * the last), returning its length, which may exceed max; 0 when the graph has no cycle. */
uint32_t cdg_find_cycle(struct cdg *g, uint32_t *cycle, uint32_t max);
/* Channels that lie on some cycle (in a strongly connected component of more than one
 * channel); 0: acyclic. */
uint32_t cdg_cyclic_channels(struct cdg *g);

#endif
