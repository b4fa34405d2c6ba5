/* SPDX-License-Identifier: BSD-2-Clause */
/* mlid.h - the multicast LIDs the SA hands to groups: 0xC000 up to 0xFFFE (0xFFFF is the
 * permissive LID), the lowest free one first, given back when a group is deleted and used
 * again, so that any number of join/leave cycles leaves the pool as it found it. */
#ifndef IBSM_SA_MLID_H
#define IBSM_SA_MLID_H

#include <stdint.h>

#define MLID_FIRST 0xC000
#define MLID_LAST 0xFFFE

struct mlid_pool;

struct mlid_pool *mlid_pool_new(void);
void mlid_pool_free(struct mlid_pool *p);
/* The lowest free MLID, now in use; 0 when every one is. */
uint16_t mlid_alloc(struct mlid_pool *p);
/* Takes MLID itself (a group that must keep its MLID); -1 when it is out of range or in use. */
int mlid_take(struct mlid_pool *p, uint16_t mlid);
/* Gives MLID back (one not in use, or out of range, is ignored). */
void mlid_release(struct mlid_pool *p, uint16_t mlid);
unsigned mlid_in_use(const struct mlid_pool *p);

#endif
