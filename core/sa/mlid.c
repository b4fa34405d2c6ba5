/* SPDX-License-Identifier: BSD-2-Clause */
/* mlid.c - the MLID pool (mlid.h): a bitmap of the 16383 multicast LIDs, and the first word
 * that may have a free bit, so that the lowest free MLID is found without a scan from the
 * start each time. */
#include <glib.h>
#include "sa/mlid.h"

#define N_MLIDS (MLID_LAST - MLID_FIRST + 1)
#define N_WORDS ((N_MLIDS + 63) / 64)

struct mlid_pool {
	uint64_t used[N_WORDS];
	unsigned in_use;
	unsigned first_free_word; /* no free bit before this word */
};

struct mlid_pool *mlid_pool_new(void)
{
	struct mlid_pool *p = g_new0(struct mlid_pool, 1);
	/* the bits past the last MLID of the last word never count as free */
	for (unsigned i = N_MLIDS; i < N_WORDS * 64; i++)
		p->used[i / 64] |= 1ULL << (i % 64);
	return p;
}

void mlid_pool_free(struct mlid_pool *p)
{
	g_free(p);
}

uint16_t mlid_alloc(struct mlid_pool *p)
{
	for (unsigned w = p->first_free_word; w < N_WORDS; w++) {
		if (p->used[w] == UINT64_MAX)
			continue;
		unsigned bit = (unsigned)__builtin_ctzll(~p->used[w]);
		p->used[w] |= 1ULL << bit;
		p->in_use++;
		p->first_free_word = w;
		return (uint16_t)(MLID_FIRST + w * 64 + bit);
	}
	p->first_free_word = N_WORDS;
	return 0;
}

int mlid_take(struct mlid_pool *p, uint16_t mlid)
{
	if (mlid < MLID_FIRST || mlid > MLID_LAST)
		return -1;
	unsigned i = (unsigned)(mlid - MLID_FIRST);
	if (p->used[i / 64] & (1ULL << (i % 64)))
		return -1;
	p->used[i / 64] |= 1ULL << (i % 64);
	p->in_use++;
	return 0;
}

void mlid_release(struct mlid_pool *p, uint16_t mlid)
{
	if (mlid < MLID_FIRST || mlid > MLID_LAST)
		return;
	unsigned i = (unsigned)(mlid - MLID_FIRST);
	if (!(p->used[i / 64] & (1ULL << (i % 64))))
		return;
	p->used[i / 64] &= ~(1ULL << (i % 64));
	p->in_use--;
	if (i / 64 < p->first_free_word)
		p->first_free_word = i / 64;
}

unsigned mlid_in_use(const struct mlid_pool *p)
{
	return p->in_use;
}
