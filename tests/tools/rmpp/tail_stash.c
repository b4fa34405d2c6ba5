/* SPDX-License-Identifier: BSD-2-Clause */
/* tail_stash.c - a small ring of MAD ends keyed by the MAD's first 224 bytes (see
 * tail_stash.h for why): a hash to skip most slots, the bytes themselves to be sure. */
#include "tail_stash.h"

#include <pthread.h>
#include <string.h>

struct slot {
	uint64_t hash;          /* 0: free */
	uint8_t head[TAIL_STASH_KEPT];
	uint8_t tail[TAIL_STASH_MAD - TAIL_STASH_KEPT];
};

static struct slot slots[TAIL_STASH_SLOTS];
static unsigned next_slot;
static pthread_mutex_t stash_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t head_hash(const uint8_t *mad)
{
	uint64_t h = 1469598103934665603ULL;  /* FNV-1a */
	for (unsigned i = 0; i < TAIL_STASH_KEPT; i++)
		h = (h ^ mad[i]) * 1099511628211ULL;
	return h ? h : 1;
}

void tail_stash_put(const uint8_t *mad)
{
	uint64_t h = head_hash(mad);
	pthread_mutex_lock(&stash_lock);
	struct slot *s = &slots[next_slot];
	next_slot = (next_slot + 1) % TAIL_STASH_SLOTS;
	s->hash = h;
	memcpy(s->head, mad, TAIL_STASH_KEPT);
	memcpy(s->tail, mad + TAIL_STASH_KEPT, sizeof(s->tail));
	pthread_mutex_unlock(&stash_lock);
}

bool tail_stash_restore(uint8_t *mad, size_t len)
{
	if (len <= TAIL_STASH_KEPT)
		return false;
	uint64_t h = head_hash(mad);
	bool found = false;
	pthread_mutex_lock(&stash_lock);
	/* newest first: a MAD sent twice (a retransmission) takes the latest copy's end */
	for (unsigned n = 0; n < TAIL_STASH_SLOTS && !found; n++) {
		struct slot *s = &slots[(next_slot + TAIL_STASH_SLOTS - 1 - n) % TAIL_STASH_SLOTS];
		if (s->hash != h || memcmp(s->head, mad, TAIL_STASH_KEPT))
			continue;
		size_t take = len < TAIL_STASH_MAD ? len - TAIL_STASH_KEPT : sizeof(s->tail);
		memcpy(mad + TAIL_STASH_KEPT, s->tail, take);
		s->hash = 0;
		found = true;
	}
	pthread_mutex_unlock(&stash_lock);
	return found;
}

void tail_stash_clear(void)
{
	pthread_mutex_lock(&stash_lock);
	memset(slots, 0, sizeof(slots));
	next_slot = 0;
	pthread_mutex_unlock(&stash_lock);
}
