/* SPDX-License-Identifier: BSD-2-Clause */
/* lft.c - SwitchInfo and LFT block programming with the memory of what each switch holds. */
#include <inttypes.h>
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric/dr.h"
#include "fabric/slice.h"
#include "program/lft.h"

struct held_lft {
	uint32_t nblocks;
	uint8_t *rows;      /* [nblocks * LFT_BLOCK_SIZE] what the switch holds (HELD_ROWS blocks) */
	uint8_t *known;     /* [nblocks] enum held */
};

/* What a block of the memory says. An empty block is not written into rows: a new fabric's
 * 1280 switches x 150 blocks were 12 MB set to IBSM_NO_PORT on the event loop's thread, to be
 * overwritten by the first write's read-back. */
enum held { HELD_UNKNOWN = 0, HELD_ROWS, HELD_EMPTY /* every entry IBSM_NO_PORT */ };

struct lft_memory {
	GHashTable *held;   /* uint64 switch node GUID -> struct held_lft * */
};

enum { K_SWITCHINFO, K_LFT };

static void held_free(gpointer p)
{
	struct held_lft *h = p;
	g_free(h->rows);
	g_free(h->known);
	g_free(h);
}

struct lft_memory *lft_memory_new(void)
{
	struct lft_memory *m = g_new0(struct lft_memory, 1);
	m->held = g_hash_table_new_full(model_guid_hash, model_guid_equal, g_free, held_free);
	return m;
}

void lft_memory_free(struct lft_memory *m)
{
	if (!m)
		return;
	g_hash_table_destroy(m->held);
	g_free(m);
}

uint32_t lft_nblocks(uint32_t stride)
{
	return (stride + LFT_BLOCK_SIZE - 1) / LFT_BLOCK_SIZE;
}

static void log_failure(struct pass *g, const struct smp_req *r, uint32_t node, int status)
{
	char why[64];
	smp_status_text(status, why, sizeof(why));
	LOG_E("LFT-0002", "%s attr 0x%02x mod %u to switch 0x%016" PRIx64 " (%s) failed: %s",
	      smp_method_name(r->method), r->attr, r->mod, g->f->nodes[node].guid,
	      g->f->nodes[node].desc, why);
}

static void on_switchinfo(struct transport *t, const struct smp_req *r, int status,
			  const uint8_t *data, void *ctx)
{
	(void)t;
	struct pass *g = ctx;
	uint32_t node = smp_cookie_id(r->cookie);
	if (status != 0) {
		g->failed++;
		g->failures++;
		log_failure(g, r, node, status);
		return;
	}
	memcpy(g->f->nx[node].switchinfo, data, SMP_DATA_SIZE);
}

void lft_switchinfo(struct pass *g, uint32_t sw)
{
	uint32_t node = g->f->switches[sw].node;
	if (!g->f->nx[node].have_switchinfo)
		return; /* never write a SwitchInfo we could not read */
	const uint8_t *old = g->f->nx[node].switchinfo;
	uint32_t top = g->f->pub.max_lid;
	if (mad_get_field((void *)old, 0, IB_SW_LINEAR_FDB_TOP_F) == top &&
	    mad_get_field((void *)old, 0, IB_SW_LIFE_TIME_F) == g->o->packet_life)
		return;
	struct smp_req r;
	fabric_smp_to_node(&r, g->f, node, IB_MAD_METHOD_SET, IB_ATTR_SWITCH_INFO, 0, on_switchinfo, g,
			   smp_cookie(K_SWITCHINFO, node, 0));
	memcpy(r.data, old, SMP_DATA_SIZE);
	mad_set_field(r.data, 0, IB_SW_LINEAR_FDB_TOP_F, top);
	mad_set_field(r.data, 0, IB_SW_LIFE_TIME_F, g->o->packet_life);
	/* PortStateChange is discovery's: it cleared it before reading the ports; writing 1 now
	 * would lose a change that happened since */
	mad_set_field(r.data, 0, IB_SW_STATE_CHANGE_F, 0);
	transport_submit(g->t, &r);
	g->sets++;
}

static void on_block(struct transport *t, const struct smp_req *r, int status, const uint8_t *data,
		     void *ctx)
{
	(void)t;
	struct pass *g = ctx;
	uint32_t sw = smp_cookie_id(r->cookie), block = smp_cookie_sub(r->cookie);
	uint32_t node = g->f->switches[sw].node;
	struct held_lft *h = g->lft_held ? g->lft_held[sw] :
			     g_hash_table_lookup(g->lft_mem->held, &g->f->nodes[node].guid);
	if (status != 0) {
		g->failed++;
		g->failures++;
		log_failure(g, r, node, status);
		if (h && block < h->nblocks)
			h->known[block] = HELD_UNKNOWN; /* what it holds now is not known */
		return;
	}
	/* a Get reads what the switch holds; a Set's GetResp is the read-back */
	if (h && block < h->nblocks) {
		memcpy(h->rows + (size_t)block * LFT_BLOCK_SIZE, data, LFT_BLOCK_SIZE);
		h->known[block] = HELD_ROWS;
	}
}

/* The memory of switch node `node`, grown to nblocks; blocks it adds are empty when the switch
 * holds nothing (no LID or LinearFDBTop, or above it) or when we wrote it before, else unknown. */
static struct held_lft *held_grow(struct lft_memory *m, const struct fabric *f, uint32_t node,
				  uint32_t nblocks)
{
	uint64_t guid = f->nodes[node].guid;
	struct held_lft *h = g_hash_table_lookup(m->held, &guid);
	if (h && h->nblocks >= nblocks)
		return h;
	struct held_lft *n = g_new0(struct held_lft, 1);
	n->nblocks = nblocks;
	n->rows = g_malloc((size_t)nblocks * LFT_BLOCK_SIZE); /* HELD_ROWS blocks only */
	n->known = g_malloc0(nblocks);
	uint32_t from = 0;
	if (h) {
		memcpy(n->rows, h->rows, (size_t)h->nblocks * LFT_BLOCK_SIZE);
		memcpy(n->known, h->known, h->nblocks);
		from = h->nblocks;
	}
	uint32_t top = f->nx[node].lft_top;
	for (uint32_t b = from; b < nblocks; b++)
		n->known[b] = h || f->nx[node].found_empty || b * LFT_BLOCK_SIZE > top ? HELD_EMPTY :
			      HELD_UNKNOWN;
	uint64_t *k = g_new(uint64_t, 1);
	*k = guid;
	g_hash_table_replace(m->held, k, n);
	return n;
}

uint32_t lft_prepare(struct pass *g, uint32_t sw, uint32_t nblocks)
{
	struct lft_memory *m = g->lft_mem;
	uint32_t node = g->f->switches[sw].node;
	uint64_t guid = g->f->nodes[node].guid;
	if (g_hash_table_contains(m->held, &guid) && g->f->nx[node].found_empty) {
		/* no LID or no LinearFDBTop any more: the switch was reset (rebooted); what we
		 * remembered writing is gone */
		LOG_I("LFT-0001", "switch 0x%016" PRIx64 " (%s) lost its tables: reprogramming it",
		      guid, g->f->nodes[node].desc);
		g_hash_table_remove(m->held, &guid);
	}
	struct held_lft *h = held_grow(m, g->f, node, nblocks);
	uint32_t to_read = 0;
	for (uint32_t b = 0; b < nblocks; b++) {
		if (h->known[b])
			continue;
		struct smp_req r;
		fabric_smp_to_node(&r, g->f, node, IB_MAD_METHOD_GET, IB_ATTR_LINEARFORWTBL, b, on_block,
				   g, smp_cookie(K_LFT, sw, (uint16_t)b));
		transport_submit(g->t, &r);
		to_read++;
	}
	return to_read;
}

/* The wanted block b of switch sw: the final table's entries, no-route past its end. */
static void wanted_block(const struct pass *g, uint32_t sw, uint32_t b, uint8_t want[LFT_BLOCK_SIZE])
{
	memset(want, IBSM_NO_PORT, LFT_BLOCK_SIZE);
	uint32_t first = b * LFT_BLOCK_SIZE;
	for (uint32_t i = 0; i < LFT_BLOCK_SIZE && first + i < g->stride; i++)
		want[i] = g->lft[(size_t)sw * g->stride + first + i];
}

/* A block of an empty table. */
static const uint8_t no_route[LFT_BLOCK_SIZE] = {
	[0 ... LFT_BLOCK_SIZE - 1] = IBSM_NO_PORT
};

uint32_t lft_write_changed(struct pass *g, uint32_t nblocks)
{
	uint32_t sent = 0, ns = g->f->pub.n_switches;
	/* each switch's memory looked up once, not once per block nor per answer (the pass
	 * frees it) */
	g_free(g->lft_held);
	struct held_lft **held = g->lft_held = g_new0(struct held_lft *, ns ? ns : 1);
	for (uint32_t sw = 0; sw < ns; sw++)
		held[sw] = g_hash_table_lookup(g->lft_mem->held,
					       &g->f->nodes[g->f->switches[sw].node].guid);
	struct slicer sl;
	slicer_init(&sl, g->t, g->stop);
	/* block-major across switches spreads the load over all switches */
	for (uint32_t b = 0; b < nblocks && !(g->stop && *g->stop); b++) {
		uint32_t first = b * LFT_BLOCK_SIZE;
		for (uint32_t sw = 0; sw < ns; sw++) {
			slicer_check(&sl); /* the blocks compared: the SA is served every few ms */
			uint32_t node = g->f->switches[sw].node;
			if (!g->f->nx[node].have_switchinfo)
				continue;
			struct held_lft *h = held[sw];
			/* a whole block inside the table is compared where it lies, not copied */
			uint8_t tail[LFT_BLOCK_SIZE];
			const uint8_t *want = tail;
			if (first + LFT_BLOCK_SIZE <= g->stride)
				want = g->lft + (size_t)sw * g->stride + first;
			else
				wanted_block(g, sw, b, tail);
			if (h && b < h->nblocks && h->known[b] != HELD_UNKNOWN &&
			    !memcmp(h->known[b] == HELD_ROWS ? h->rows + (size_t)b * LFT_BLOCK_SIZE : no_route,
				    want, LFT_BLOCK_SIZE))
				continue;
			struct smp_req r;
			fabric_smp_to_node(&r, g->f, node, IB_MAD_METHOD_SET, IB_ATTR_LINEARFORWTBL, b,
					   on_block, g, smp_cookie(K_LFT, sw, (uint16_t)b));
			memcpy(r.data, want, LFT_BLOCK_SIZE);
			transport_submit(g->t, &r);
			sent++;
		}
	}
	return sent;
}
