/* SPDX-License-Identifier: BSD-2-Clause */
/* dag.h - a channel dependency graph kept acyclic as routes are added, for lash's layers: the
 * dependencies of graph/cdg.h (counted, so a route can be taken out again) plus a topological
 * order maintained as edges come (Pearce and Kelly, "A Dynamic Topological Sort Algorithm for
 * Directed Acyclic Graphs", JEA 2006): an edge that agrees with the order costs nothing, one
 * that does not is checked by a search bounded to the part of the order between its ends.
 * lash adds millions of dependencies on a large fabric, and a full search per new one (what
 * cdg_add_path_acyclic does) was most of its time. Not thread-safe. */
#ifndef LASH_DAG_H
#define LASH_DAG_H

#include <stdint.h>

struct dag;

struct dag *dag_new(uint32_t n_channels); /* NULL without memory */
void dag_free(struct dag *d);
uint64_t dag_edges(const struct dag *d);  /* distinct dependencies */

/* One more route depends a -> b (a != b, both below n): 0 added (an existing dependency
 * counted once more, or a new one that keeps the graph acyclic), 1 refused (it would close a
 * cycle; nothing added), -1 out of memory (nothing added). */
int dag_add(struct dag *d, uint32_t a, uint32_t b);
/* One route fewer depends a -> b; the dependency goes with its last route. */
void dag_remove(struct dag *d, uint32_t a, uint32_t b);
/* Is the order kept a topological order of the dependencies (for the tests)? */
int dag_check_order(const struct dag *d);

#endif
