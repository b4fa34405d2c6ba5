/* SPDX-License-Identifier: BSD-2-Clause */
/* queue.c - the SA's request queue (queue.h): a FIFO per requester, and a ring of the
 * requesters that have something waiting; popping takes one request from the requester at the
 * head of the ring and puts it back at the tail if it has more. */
#include <glib.h>
#include "sa/queue.h"

struct requester {
	uint16_t slid;
	GQueue items; /* of struct item * */
};

struct item {
	int len;
	void *buf;      /* handed to the caller as it is */
};

struct sa_queue {
	unsigned max_total, max_per;
	unsigned total, high_water;
	GHashTable *by_lid; /* slid -> struct requester * (only those with items) */
	GQueue ring;        /* of struct requester *, each once */
};

static void item_free(gpointer p)
{
	struct item *it = p;
	g_free(it->buf);
	g_free(it);
}

static void requester_free(gpointer p)
{
	struct requester *r = p;
	g_queue_clear_full(&r->items, item_free);
	g_free(r);
}

struct sa_queue *sa_queue_new(unsigned max_total, unsigned max_per_requester)
{
	struct sa_queue *q = g_new0(struct sa_queue, 1);
	q->max_total = max_total ? max_total : 1;
	q->max_per = max_per_requester ? max_per_requester : 1;
	q->by_lid = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, requester_free);
	g_queue_init(&q->ring);
	return q;
}

void sa_queue_free(struct sa_queue *q)
{
	if (!q)
		return;
	g_queue_clear(&q->ring);
	g_hash_table_destroy(q->by_lid);
	g_free(q);
}

int sa_queue_push(struct sa_queue *q, uint16_t slid, const void *umad, int len)
{
	if (len < 0 || q->total >= q->max_total)
		return -1;
	struct requester *r = g_hash_table_lookup(q->by_lid, GUINT_TO_POINTER(slid));
	if (r && r->items.length >= q->max_per)
		return -1;
	if (!r) {
		r = g_new0(struct requester, 1);
		r->slid = slid;
		g_queue_init(&r->items);
		g_hash_table_insert(q->by_lid, GUINT_TO_POINTER(slid), r);
		g_queue_push_tail(&q->ring, r);
	}
	struct item *it = g_new(struct item, 1);
	it->len = len;
	it->buf = g_memdup2(umad, (gsize)len);
	g_queue_push_tail(&r->items, it);
	if (++q->total > q->high_water)
		q->high_water = q->total;
	return 0;
}

void *sa_queue_pop(struct sa_queue *q, int *len)
{
	struct requester *r = g_queue_pop_head(&q->ring);
	if (!r)
		return NULL;
	struct item *it = g_queue_pop_head(&r->items);
	q->total--;
	if (r->items.length)
		g_queue_push_tail(&q->ring, r);
	else
		g_hash_table_remove(q->by_lid, GUINT_TO_POINTER(r->slid));
	void *out = it->buf;
	*len = it->len;
	g_free(it);
	return out;
}

unsigned sa_queue_len(const struct sa_queue *q)
{
	return q->total;
}

unsigned sa_queue_high_water(const struct sa_queue *q)
{
	return q->high_water;
}
