/* SPDX-License-Identifier: BSD-2-Clause */
/* mft.c - MFT block programming with the memory of what each switch holds (mft.h). */
#include <inttypes.h>
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric/dr.h"
#include "program/mft.h"

#define K_MFT 1
#define K_TOP 2
#define CAP_MCAST_FDB_TOP 0x40000000u /* PortInfo:CapabilityMask IsMulticastFDBTopSupported */
#define TOP_NONE (MFT_MLID_FIRST - 1)  /* MulticastFDBTop below 0xC000: no entry is valid */


enum { B_UNKNOWN, B_KNOWN };

struct held_mft {
	uint64_t guid;
	uint32_t nblocks;      /* blocks remembered (grows) */
	uint8_t npos;          /* positions of the switch */
	uint32_t generation;   /* the generation whose "found empty" was applied */
	uint16_t *rows;        /* [(block * npos + pos) * 32 + i] */
	uint8_t *state;        /* [block * npos + pos]: B_* */
	int top_known;         /* top is what the switch holds (written since it was last reset) */
	uint16_t top;          /* SwitchInfo:MulticastFDBTop */
};

struct mft_memory {
	struct transport *t;
	GHashTable *by_guid;   /* switch GUID -> index into held + 1 */
	GPtrArray *held;       /* struct held_mft * (indices stable: cookies carry them) */
	uint32_t in_flight;
	uint64_t failures;
	int use_top;           /* use_mfttop */
};

static void held_free(gpointer p)
{
	struct held_mft *h = p;
	g_free(h->rows);
	g_free(h->state);
	g_free(h);
}

struct mft_memory *mft_memory_new(struct transport *t)
{
	struct mft_memory *m = g_new0(struct mft_memory, 1);
	m->t = t;
	m->by_guid = g_hash_table_new_full(model_guid_hash, model_guid_equal, g_free, NULL);
	m->held = g_ptr_array_new_with_free_func(held_free);
	m->use_top = 1;
	return m;
}

void mft_memory_free(struct mft_memory *m)
{
	if (!m)
		return;
	g_hash_table_destroy(m->by_guid);
	g_ptr_array_free(m->held, TRUE);
	g_free(m);
}

void mft_memory_forget(struct mft_memory *m)
{
	/* indices stay (replies in flight carry them); what they knew goes */
	for (guint i = 0; i < m->held->len; i++) {
		struct held_mft *h = g_ptr_array_index(m->held, i);
		if (h->nblocks)
			memset(h->state, B_UNKNOWN, (size_t)h->nblocks * h->npos);
		h->generation = 0;
		h->top_known = 0;
	}
}

void mft_memory_use_top(struct mft_memory *m, int use_top)
{
	m->use_top = use_top;
}

static struct held_mft *held_of(const struct mft_memory *m, uint64_t guid, uint32_t *index)
{
	gpointer v = g_hash_table_lookup(m->by_guid, &guid);
	if (!v)
		return NULL;
	if (index)
		*index = GPOINTER_TO_UINT(v) - 1;
	return g_ptr_array_index(m->held, GPOINTER_TO_UINT(v) - 1);
}

/* The memory of a switch, grown to nblocks: blocks it adds hold nothing when the switch was
 * found empty (or everything before was known), else are unknown. */
static struct held_mft *held_grow(struct mft_memory *m, const struct fabric *f, uint32_t node,
				  uint32_t nblocks, uint8_t npos, uint32_t *index)
{
	uint64_t guid = f->nodes[node].guid;
	struct held_mft *h = held_of(m, guid, index);
	if (!h) {
		h = g_new0(struct held_mft, 1);
		h->guid = guid;
		h->npos = npos;
		g_ptr_array_add(m->held, h);
		uint64_t *k = g_new(uint64_t, 1);
		*k = guid;
		g_hash_table_insert(m->by_guid, k, GUINT_TO_POINTER(m->held->len));
		*index = m->held->len - 1;
	}
	int empty = f->nx[node].found_empty;
	if (h->generation != f->pub.generation) {
		h->generation = f->pub.generation;
		if (empty)
			h->top_known = 0; /* reset: its SwitchInfo as read says */
		if (empty && h->nblocks) { /* reset since we knew it: it holds nothing now */
			memset(h->rows, 0, (size_t)h->nblocks * h->npos * MFT_BLOCK_MLIDS * 2);
			memset(h->state, B_KNOWN, (size_t)h->nblocks * h->npos);
		}
	}
	if (h->nblocks >= nblocks && h->npos == npos)
		return h;
	uint32_t nb = nblocks > h->nblocks ? nblocks : h->nblocks;
	uint16_t *rows = g_new0(uint16_t, (size_t)nb * npos * MFT_BLOCK_MLIDS);
	uint8_t *state = g_new0(uint8_t, (size_t)nb * npos);
	for (uint32_t b = 0; b < nb; b++)
		for (uint8_t p = 0; p < npos; p++) {
			size_t i = (size_t)b * npos + p;
			if (b < h->nblocks && p < h->npos) {
				size_t j = (size_t)b * h->npos + p;
				memcpy(rows + i * MFT_BLOCK_MLIDS, h->rows + j * MFT_BLOCK_MLIDS, MFT_BLOCK_MLIDS * 2);
				state[i] = h->state[j];
			} else {
				state[i] = empty ? B_KNOWN : B_UNKNOWN;
			}
		}
	g_free(h->rows);
	g_free(h->state);
	h->rows = rows;
	h->state = state;
	h->nblocks = nb;
	h->npos = npos;
	return h;
}

static void on_block(struct transport *t, const struct smp_req *r, int status, const uint8_t *data,
		     void *ctx)
{
	(void)t;
	struct mft_memory *m = ctx;
	uint32_t idx = smp_cookie_id(r->cookie);
	uint16_t sub = smp_cookie_sub(r->cookie);
	uint32_t block = sub & 0x1ff;
	uint8_t pos = (uint8_t)(sub >> 9);
	m->in_flight--;
	if (idx >= m->held->len)
		return;
	struct held_mft *h = g_ptr_array_index(m->held, idx);
	if (block >= h->nblocks || pos >= h->npos)
		return;
	size_t i = (size_t)block * h->npos + pos;
	if (status != 0) {
		char why[64];
		smp_status_text(status, why, sizeof(why));
		if (m->failures++ < 20)
			LOG_E("MFT-0001", "Set MFT block %u position %u to switch 0x%016" PRIx64 " failed: %s",
			      block, pos, h->guid, why);
		h->state[i] = B_UNKNOWN;
		return;
	}
	for (unsigned k = 0; k < MFT_BLOCK_MLIDS; k++)
		h->rows[i * MFT_BLOCK_MLIDS + k] = (uint16_t)(data[2 * k] << 8 | data[2 * k + 1]);
	h->state[i] = B_KNOWN;
}

/* The 16 bits of position pos of a 256-bit port mask. */
static uint16_t mask_bits(const uint64_t *mask, uint8_t pos)
{
	return mask ? (uint16_t)(mask[pos >> 2] >> ((pos & 3) * 16)) : 0;
}

/* Blocks of switch h that hold a port: the table must be cleared up to there, too. */
static uint32_t held_top(const struct held_mft *h)
{
	for (uint32_t b = h->nblocks; b > 0; b--)
		for (uint8_t p = 0; p < h->npos; p++) {
			size_t i = (size_t)(b - 1) * h->npos + p;
			if (h->state[i] != B_KNOWN)
				return b;
			for (unsigned k = 0; k < MFT_BLOCK_MLIDS; k++)
				if (h->rows[i * MFT_BLOCK_MLIDS + k])
					return b;
		}
	return 0;
}

static void on_top(struct transport *t, const struct smp_req *r, int status, const uint8_t *data,
		   void *ctx)
{
	(void)t;
	struct mft_memory *m = ctx;
	uint32_t idx = smp_cookie_id(r->cookie);
	m->in_flight--;
	if (idx >= m->held->len)
		return;
	struct held_mft *h = g_ptr_array_index(m->held, idx);
	if (status != 0) {
		char why[64];
		smp_status_text(status, why, sizeof(why));
		if (m->failures++ < 20)
			LOG_E("MFT-0003", "Set SwitchInfo MulticastFDBTop 0x%04x to switch 0x%016" PRIx64
			      " failed: %s", (unsigned)mad_get_field((void *)r->data, 0, IB_SW_MCAST_FDB_TOP_F),
			      h->guid, why);
		h->top_known = 0;
		return;
	}
	(void)data; /* the top asked for: a switch reads it back as it holds it, one that does not
		     * keep it would be written at every pass */
	h->top = (uint16_t)mad_get_field((void *)r->data, 0, IB_SW_MCAST_FDB_TOP_F);
	h->top_known = 1;
}

/* SwitchInfo:MulticastFDBTop of a switch that honours it (its port 0's CapabilityMask says
 * IsMulticastFDBTopSupported, as OpenSM's use_mfttop asks): the last MLID of the last block
 * holding a port, or 0xBFFF (no entry valid) when the switch is in no tree. Written when it
 * differs from what the switch holds; returns 1 if a Set was queued. */
static int program_top(struct mft_memory *m, const struct fabric *f, uint32_t node, struct held_mft *h,
		       uint32_t index, int32_t last_block)
{
	const struct ibsm_node *n = &f->nodes[node];
	if (!m->use_top || !f->px[n->port0].have_portinfo ||
	    !(mad_get_field((void *)f->px[n->port0].portinfo, 0, IB_PORT_CAPMASK_F) & CAP_MCAST_FDB_TOP))
		return 0;
	uint16_t want = last_block < 0 ? TOP_NONE :
			(uint16_t)(MFT_MLID_FIRST + (uint32_t)(last_block + 1) * MFT_BLOCK_MLIDS - 1);
	uint16_t have = h->top_known ? h->top :
			(uint16_t)mad_get_field((void *)f->nx[node].switchinfo, 0, IB_SW_MCAST_FDB_TOP_F);
	if (have == want)
		return 0;
	struct smp_req r;
	fabric_smp_to_node(&r, f, node, IB_MAD_METHOD_SET, IB_ATTR_SWITCH_INFO, 0, on_top, m,
			   smp_cookie(K_TOP, index, 0));
	memcpy(r.data, f->nx[node].switchinfo, SMP_DATA_SIZE);
	mad_set_field(r.data, 0, IB_SW_MCAST_FDB_TOP_F, want);
	/* PortStateChange: writing 1 would clear a change discovery has not seen */
	mad_set_field(r.data, 0, IB_SW_STATE_CHANGE_F, 0);
	h->top = want;
	h->top_known = 1;
	transport_submit(m->t, &r);
	m->in_flight++;
	return 1;
}

static uint32_t program_switch(struct mft_memory *m, const struct fabric *f, uint32_t sw,
			       uint32_t want_blocks, mft_want_fn want, void *ctx, struct mft_stats *st)
{
	uint32_t node = f->switches[sw].node;
	const struct ibsm_node *n = &f->nodes[node];
	uint8_t npos = (uint8_t)(n->nports / MFT_POSITION_PORTS + 1);
	uint32_t cap = mad_get_field((void *)f->nx[node].switchinfo, 0, IB_SW_MCAST_FDB_CAP_F);
	uint32_t cap_blocks = (cap + MFT_BLOCK_MLIDS - 1) / MFT_BLOCK_MLIDS;
	uint32_t nblocks = want_blocks;
	if (nblocks > cap_blocks) {
		if (st->over_cap++ < 10)
			LOG_E("MFT-0002", "switch 0x%016" PRIx64 " (%s) has room for %u MLIDs: groups above "
			      "MLID 0x%04x are not programmed there", n->guid, n->desc, cap,
			      MFT_MLID_FIRST + cap - 1);
		nblocks = cap_blocks;
	}
	uint32_t index;
	struct held_mft *h = held_grow(m, f, node, nblocks, npos, &index);
	uint32_t top = held_top(h);
	if (top > nblocks)
		nblocks = top < cap_blocks ? top : cap_blocks;
	uint32_t sent = 0;
	int32_t last_block = -1; /* the last block holding a port of this switch */
	for (uint32_t b = 0; b < nblocks; b++)
		for (uint8_t p = 0; p < npos; p++) {
			uint16_t wanted[MFT_BLOCK_MLIDS];
			for (unsigned k = 0; k < MFT_BLOCK_MLIDS; k++) {
				uint32_t mlid = MFT_MLID_FIRST + b * MFT_BLOCK_MLIDS + k;
				wanted[k] = mlid < MFT_MLID_FIRST + cap && mlid <= 0xFFFF ?
					    mask_bits(want(ctx, sw, (uint16_t)mlid), p) : 0;
				if (wanted[k])
					last_block = (int32_t)b;
			}
			size_t i = (size_t)b * npos + p;
			if (h->state[i] == B_KNOWN &&
			    !memcmp(h->rows + i * MFT_BLOCK_MLIDS, wanted, sizeof(wanted)))
				continue;
			struct smp_req r;
			fabric_smp_to_node(&r, f, node, IB_MAD_METHOD_SET, IB_ATTR_MULTICASTFORWTBL,
					   (uint32_t)p << 28 | b, on_block, m,
					   smp_cookie(K_MFT, index, (uint16_t)(p << 9 | b)));
			for (unsigned k = 0; k < MFT_BLOCK_MLIDS; k++) {
				r.data[2 * k] = (uint8_t)(wanted[k] >> 8);
				r.data[2 * k + 1] = (uint8_t)wanted[k];
			}
			/* what it will hold: a second pass before the reply sends nothing again */
			memcpy(h->rows + i * MFT_BLOCK_MLIDS, wanted, sizeof(wanted));
			h->state[i] = B_KNOWN;
			transport_submit(m->t, &r);
			m->in_flight++;
			sent++;
		}
	/* after the blocks: a top raised over blocks not yet written would forward by stale ones */
	st->tops_written += (uint32_t)program_top(m, f, node, h, index, last_block);
	return sent;
}

uint32_t mft_program(struct mft_memory *m, const struct fabric *f, uint16_t mlid_top, mft_want_fn want,
		     void *ctx, struct mft_stats *st)
{
	memset(st, 0, sizeof(*st));
	uint32_t want_blocks = mlid_top >= MFT_MLID_FIRST ?
			       (uint32_t)(mlid_top - MFT_MLID_FIRST) / MFT_BLOCK_MLIDS + 1 : 0;
	for (uint32_t sw = 0; sw < f->pub.n_switches; sw++) {
		uint32_t node = f->switches[sw].node;
		if (!f->nx[node].have_switchinfo)
			continue;
		uint32_t n = program_switch(m, f, sw, want_blocks, want, ctx, st);
		st->blocks_written += n;
		st->switches += n > 0;
	}
	return st->blocks_written;
}

uint32_t mft_in_flight(const struct mft_memory *m)
{
	return m->in_flight;
}

uint64_t mft_failures(const struct mft_memory *m)
{
	return m->failures;
}

int mft_memory_block(const struct mft_memory *m, uint64_t guid, uint32_t block, uint8_t pos,
		     uint16_t out[MFT_BLOCK_MLIDS])
{
	const struct held_mft *h = held_of(m, guid, NULL);
	if (!h || block >= h->nblocks || pos >= h->npos)
		return 0;
	size_t i = (size_t)block * h->npos + pos;
	if (h->state[i] != B_KNOWN)
		return 0;
	memcpy(out, h->rows + i * MFT_BLOCK_MLIDS, MFT_BLOCK_MLIDS * 2);
	return 1;
}

uint32_t mft_memory_nblocks(const struct mft_memory *m, uint64_t guid, uint8_t *positions)
{
	const struct held_mft *h = held_of(m, guid, NULL);
	*positions = h ? h->npos : 0;
	return h ? h->nblocks : 0;
}
