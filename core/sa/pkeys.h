/* SPDX-License-Identifier: BSD-2-Clause */
/* pkeys.h - the P_Key tables of one generation as the SA sees them: a copy, taken when the
 * generation is published, of what the programming pass left in every port (the programmer's
 * memory changes with the next sweep; the SA's answers must not). Flat, by port id, and
 * reference-counted (main thread only): the SM's snapshot and the SA's copy of it share one. */
#ifndef IBSM_SA_PKEYS_H
#define IBSM_SA_PKEYS_H

#include <stdint.h>
#include "fabric/model.h"

struct sa_pkeys;

/* table(ctx, f, port, &cap): the keys port holds (NULL: not known). */
typedef const uint16_t *(*sa_pkey_table_fn)(const void *ctx, const struct fabric *f, uint32_t port,
					     uint32_t *cap);
/* A copy of every port's table (one reference). */
struct sa_pkeys *sa_pkeys_new(const struct fabric *f, sa_pkey_table_fn table, const void *ctx);
/* Another reference to k (k NULL: NULL); dropping the last one frees it (k NULL: nothing). */
struct sa_pkeys *sa_pkeys_ref(struct sa_pkeys *k);
void sa_pkeys_unref(struct sa_pkeys *k);
/* Port id port's table (*n entries), or NULL when not known. */
const uint16_t *sa_pkeys_of(const struct sa_pkeys *k, uint32_t port, uint32_t *n);
/* The P_Key a path between ports a and b may use: want (0: the lowest 15-bit key they share,
 * as OpenSM picks) when both hold it (low 15 bits) and at least one is a full member; returned
 * as a holds it.
 * 0 when there is none. Ports whose tables are not known share the default partition. */
uint16_t sa_pkeys_shared(const struct sa_pkeys *k, uint32_t a, uint32_t b, uint16_t want);
/* May ports a and b see each other through the SA: do they share a partition (a key both hold,
 * one of them as a full member)? As OpenSM's osm_physp_share_pkey: a port shares with itself,
 * and a port whose table is not known or holds no valid key shares with every port. With k
 * NULL (no table known) every pair shares; else an id outside the tables (IBSM_NONE: a
 * requester not in the generation) shares with none but itself. */
int sa_pkeys_share(const struct sa_pkeys *k, uint32_t a, uint32_t b);
/* Does port hold partition pkey (low 15 bits, either membership)? As OpenSM's
 * osm_physp_has_pkey, except that a table not known is not held against the port: yes (k
 * NULL: every port holds every key); an invalid key (low 15 bits 0) is held by every port;
 * an id outside the tables holds none. */
int sa_pkeys_has(const struct sa_pkeys *k, uint32_t port, uint16_t pkey);

#endif
