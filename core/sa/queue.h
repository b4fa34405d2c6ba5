/* SPDX-License-Identifier: BSD-2-Clause */
/* queue.h - SA requests waiting for their answer: bounded as a whole and per requester (its
 * LID), served round-robin by requester, so that one client's storm neither starves the
 * others nor grows without end: what does not fit is answered BUSY by the agent. */
#ifndef IBSM_SA_QUEUE_H
#define IBSM_SA_QUEUE_H

#include <stdint.h>

struct sa_queue;

struct sa_queue *sa_queue_new(unsigned max_total, unsigned max_per_requester);
void sa_queue_free(struct sa_queue *q);
/* Keeps a copy of UMAD (LEN bytes) from the requester at SLID; -1 when the queue or that
 * requester's share of it is full (nothing kept). */
int sa_queue_push(struct sa_queue *q, uint16_t slid, const void *umad, int len);
/* The next request, round-robin over the requesters that have one (each requester's own in
 * arrival order): a buffer the caller g_free()s, its length in *len; NULL when empty. */
void *sa_queue_pop(struct sa_queue *q, int *len);
unsigned sa_queue_len(const struct sa_queue *q);
/* The most requests the queue has held at once. */
unsigned sa_queue_high_water(const struct sa_queue *q);

#endif
