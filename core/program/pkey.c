/* SPDX-License-Identifier: BSD-2-Clause */
/* pkey.c - P_Key table programming (doc/design.md, bring-up step 8): expands the partition policy
 * in force into one table per end port, gives the switch port facing a CA port the same table,
 * knows what every port holds (from its own writes across sweeps, else by reading it), lays the
 * keys out by the index rules and writes only the 32-entry blocks that differ. The GetResp of
 * each Set is the read-back; a mismatch is logged once and remembered, so a fabric that does not
 * store some bit is not rewritten every sweep. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <infiniband/mad.h>
#include "base/activity.h"
#include "base/guid_hash.h"
#include "base/log.h"
#include "fabric/dr.h"
#include "fabric/slice.h"
#include "program/pkey.h"

/* ---- pure layout ------------------------------------------------------------------------ */

static int valid_key(uint16_t k)
{
	return (k & 0x7fff) != 0;
}

uint32_t pkey_layout(const uint16_t *cur, uint32_t cap, const struct port_pkeys *want,
		     uint16_t *out)
{
	if (cap > PKEY_MAX_ENTRIES)
		cap = PKEY_MAX_ENTRIES;
	memset(out, 0, sizeof(*out) * cap);
	uint32_t n = want ? want->n : 0;
	if (!n)
		return 0;
	/* wanted keys, duplicates and invalid keys removed, in policy order (on the stack for the
	 * few keys of most ports: 100k tables a pass) */
	uint16_t keys_few[64];
	uint8_t placed_few[64] = { 0 };
	uint16_t *keys = n <= 64 ? keys_few : g_new(uint16_t, n);
	uint8_t *placed = n <= 64 ? placed_few : g_new0(uint8_t, n);
	uint32_t nk = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint16_t k = want->keys[i];
		int dup = !valid_key(k);
		for (uint32_t j = 0; j < nk && !dup; j++)
			dup = keys[j] == k;
		if (!dup)
			keys[nk++] = k;
	}
	if (!cap) {
		if (keys != keys_few) {
			g_free(keys);
			g_free(placed);
		}
		return nk;
	}
	/* index 0: the indx0 key, else the default key (full member first) */
	int pin = -1;
	for (uint32_t j = 0; j < nk && pin < 0; j++)
		if (want->indx0_key && keys[j] == want->indx0_key)
			pin = (int)j;
	if (pin < 0) { /* no indx0 key (or this port does not hold it): the default key */
		for (uint32_t j = 0; j < nk && pin < 0; j++)
			if (keys[j] == (PART_DEFAULT_PKEY | PART_FULL_BIT))
				pin = (int)j;
		for (uint32_t j = 0; j < nk && pin < 0; j++)
			if (keys[j] == PART_DEFAULT_PKEY)
				pin = (int)j;
	}
	uint32_t from = 0;
	if (pin >= 0) {
		out[0] = keys[pin];
		placed[pin] = 1;
		from = 1;
	}
	/* keys keep the index they have: exact value first, then the same key with the other
	 * membership (a membership change does not move a key) */
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t j = 0; j < nk; j++) {
			if (placed[j])
				continue;
			for (uint32_t i = from; i < cap; i++) {
				if (out[i] || !valid_key(cur[i]))
					continue;
				if (pass == 0 ? cur[i] == keys[j] : (cur[i] & 0x7fff) == (keys[j] & 0x7fff)) {
					/* in pass 1, an index whose exact key is still wanted is not taken */
					int wanted_exact = 0;
					for (uint32_t m = 0; pass == 1 && m < nk && !wanted_exact; m++)
						wanted_exact = !placed[m] && keys[m] == cur[i];
					if (wanted_exact)
						continue;
					out[i] = keys[j];
					placed[j] = 1;
					break;
				}
			}
		}
	/* new keys: lowest free index */
	uint32_t dropped = 0, next = from;
	for (uint32_t j = 0; j < nk; j++) {
		if (placed[j])
			continue;
		while (next < cap && out[next])
			next++;
		if (next >= cap) {
			dropped++;
			continue;
		}
		out[next] = keys[j];
		placed[j] = 1;
	}
	if (keys != keys_few) {
		g_free(keys);
		g_free(placed);
	}
	return dropped;
}

uint32_t pkey_diff_blocks(const uint16_t *held, const uint16_t *want, uint32_t cap,
			  uint8_t *changed)
{
	uint32_t nb = (cap + PKEY_BLOCK_SIZE - 1) / PKEY_BLOCK_SIZE, n = 0;
	for (uint32_t b = 0; b < nb; b++) {
		uint32_t len = MIN(PKEY_BLOCK_SIZE, cap - b * PKEY_BLOCK_SIZE);
		changed[b] = memcmp(held + b * PKEY_BLOCK_SIZE, want + b * PKEY_BLOCK_SIZE,
				    len * sizeof(uint16_t)) != 0;
		n += changed[b];
	}
	return n;
}

GArray *pkey_targets(const struct fabric *f)
{
	GArray *t = g_array_new(FALSE, FALSE, sizeof(struct pkey_target));
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		if (!fabric_is_end_port(f, p) || !f->px[p].have_portinfo)
			continue;
		const struct ibsm_port *ep = &f->ports[p];
		struct pkey_target e = { .port = p, .src = p,
					 .cap = f->nx[ep->node].partition_cap };
		if (e.cap)
			g_array_append_val(t, e);
		if (f->nodes[ep->node].type == IBSM_SWITCH || ep->peer == IBSM_NONE)
			continue;
		uint32_t q = ep->peer, sw = f->ports[q].node;
		if (f->nodes[sw].type != IBSM_SWITCH || !f->px[q].have_portinfo)
			continue;
		struct pkey_target s = { .port = q, .src = p, .cap = f->nx[sw].pkey_enf_cap };
		if (s.cap)
			g_array_append_val(t, s);
	}
	/* switch ports facing another switch: read (the SA's P_KeyTableRecords list them, as
	 * OpenSM's do), never written (no partition is enforced between switches) */
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		const struct ibsm_port *x = &f->ports[p];
		uint32_t node = x->node;
		if (!x->num || f->nodes[node].type != IBSM_SWITCH || x->peer == IBSM_NONE ||
		    !f->px[p].have_portinfo || f->nodes[f->ports[x->peer].node].type != IBSM_SWITCH)
			continue;
		struct pkey_target r = { .port = p, .src = IBSM_NONE, .cap = f->nx[node].pkey_enf_cap };
		if (r.cap)
			g_array_append_val(t, r);
	}
	return t;
}

uint32_t pkey_attr_mod(const struct fabric *f, uint32_t port, uint32_t block)
{
	const struct ibsm_port *p = &f->ports[port];
	if (f->nodes[p->node].type == IBSM_SWITCH && p->num)
		return ((uint32_t)p->num << 16) | (block & 0xffff);
	return block & 0xffff;
}

/* ---- what each table holds, across sweeps ------------------------------------------------ */

struct held_key {
	uint64_t guid;             /* node GUID */
	uint8_t port;              /* port number */
};

struct pkey_held {              /* one allocation: its own key in the table, and the keys */
	struct held_key k;
	uint32_t cap;
	uint32_t pass;             /* the programming pass that last confirmed it */
	uint16_t keys[];           /* [cap] */
};

struct memo {                  /* a Set whose read-back differed, already logged */
	uint16_t want[PKEY_BLOCK_SIZE], got[PKEY_BLOCK_SIZE];
};

/* What decided a target's table in the last pass, by port id of that pass's generation: a
 * target whose inputs are the same again (same policy, same port, same end port behind it,
 * same size, its table confirmed by that pass and to be trusted) is skipped with no per-table
 * work: its table is what the last pass left (pkey_layout keeps a laid-out table as it is). */
struct pk_last {
	uint64_t guid;             /* node GUID of the target port (0: no target here) */
	uint64_t src_guid;         /* node GUID of its end port; 0 for a switch port facing a switch */
	uint64_t src_pguid;        /* and that port's GUID */
	uint8_t num, src_num;
	uint32_t cap;
	struct pkey_held *h;       /* its entry in held */
};

struct pkey_memory {
	GHashTable *held;          /* struct held_key -> struct pkey_held */
	GHashTable *memo;          /* "guid/port/block" -> struct memo */
	uint32_t pass;             /* passes so far */
	struct pk_last *last;      /* [last_n] by port id, from the last pass (NULL: none) */
	uint32_t last_n, last_targets;
	uint64_t policy_sig;       /* the policy and SM port the last pass expanded */
	const struct part_policy *policy;
	uint64_t version;          /* changes whenever what pkey_memory_table answers may change */
	const struct fabric *version_f; /* the generation the version holds for */
	uint32_t version_gen;
};

static uint64_t versions;      /* process-wide: a version is never shared by two memories */

/* A new version; the P_Key pass's jobs take them too (pkey_prepare_start). */
static uint64_t next_version(void)
{
	return __atomic_add_fetch(&versions, 1, __ATOMIC_RELAXED);
}

static guint held_hash(gconstpointer k)
{
	const struct held_key *h = k;
	return guid_port_hash(h->guid, h->port, 0);
}

static gboolean held_equal(gconstpointer a, gconstpointer b)
{
	const struct held_key *x = a, *y = b;
	return x->guid == y->guid && x->port == y->port;
}

struct pkey_memory *pkey_memory_new(void)
{
	struct pkey_memory *m = g_new0(struct pkey_memory, 1);
	m->held = g_hash_table_new_full(held_hash, held_equal, NULL, g_free); /* the key is in the value */
	m->memo = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	m->version = next_version();
	return m;
}

void pkey_memory_free(struct pkey_memory *m)
{
	if (!m)
		return;
	g_hash_table_destroy(m->held);
	g_hash_table_destroy(m->memo);
	g_free(m->last);
	g_free(m);
}

/* The skip record points into held: it goes with what it points to. */
static void last_forget(struct pkey_memory *m)
{
	g_free(m->last);
	m->last = NULL;
	m->last_n = m->last_targets = 0;
	m->version = next_version();
	m->version_f = NULL;
}

void pkey_memory_forget(struct pkey_memory *m)
{
	g_hash_table_remove_all(m->held);
	last_forget(m);
}

uint64_t pkey_memory_version(const struct pkey_memory *m, const struct fabric *f)
{
	return m && m->version_f == f && f && m->version_gen == f->pub.generation ? m->version : 0;
}

/* A value that changes with anything of the policy that expansion reads, and with the SM's
 * port (SELF). */
static uint64_t policy_signature(const struct part_policy *pol, const struct fabric *f)
{
	uint64_t h = 1469598103934665603ull;
#define MIX(v) (h = (h ^ (uint64_t)(v)) * 1099511628211ull)
	uint32_t sm = f->pub.sm_port;
	MIX(sm == IBSM_NONE ? 0 : f->ports[sm].guid);
	MIX(sm == IBSM_NONE ? 0 : f->nodes[f->ports[sm].node].guid);
	MIX(sm == IBSM_NONE ? 0 : f->ports[sm].num);
	for (guint i = 0; pol->parts && i < pol->parts->len; i++) {
		const struct partition *pt = g_ptr_array_index(pol->parts, i);
		MIX(pt->pkey);
		MIX(pt->indx0);
		MIX(pt->defmember);
		for (guint j = 0; pt->members && j < pt->members->len; j++) {
			const struct part_member *mb = &g_array_index(pt->members, struct part_member, j);
			MIX(mb->sel);
			MIX(mb->guid);
			MIX(mb->membership);
		}
		MIX(0xfeed);
	}
#undef MIX
	return h;
}

/* ---- one pass ------------------------------------------------------------------------------ */

struct pk_run {
	struct pass *g;
	struct pkey_target *tg;
	uint32_t n;
	uint16_t **held;           /* [n][cap] what it holds (read, remembered, or read back) */
	uint8_t *ok;               /* [n] held is known and no SMP for it failed */
	uint16_t **want;           /* [n][cap] */
	uint16_t *tables;          /* held and want of every target, one allocation */
	uint32_t gets, sets, trusted;
};

enum { PK_GET = 0, PK_SET = 1 };

static struct held_key target_key(const struct fabric *f, uint32_t port)
{
	const struct ibsm_port *p = &f->ports[port];
	return (struct held_key){ .guid = f->nodes[p->node].guid, .port = p->num };
}

static void memo_key(const struct pk_run *r, uint32_t t, uint32_t block, char *buf, size_t len)
{
	struct held_key k = target_key(r->g->f, r->tg[t].port);
	g_snprintf(buf, len, "%016" PRIx64 "/%u/%u", k.guid, k.port, block);
}

static void put_block(uint8_t *data, const uint16_t *keys, uint32_t len)
{
	memset(data, 0, PKEY_BLOCK_SIZE * 2);
	for (uint32_t i = 0; i < len; i++) {
		data[2 * i] = (uint8_t)(keys[i] >> 8);
		data[2 * i + 1] = (uint8_t)keys[i];
	}
}

static void get_block(const uint8_t *data, uint16_t *keys, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		keys[i] = (uint16_t)(data[2 * i] << 8 | data[2 * i + 1]);
}

/* A Set read back differently: logged once per (want, got), remembered so it is not rewritten. */
static void readback_mismatch(struct pk_run *r, uint32_t ti, uint32_t block, const uint16_t *sent,
			      const uint16_t *got, uint32_t len)
{
	struct pkey_memory *mem = r->g->pkey_mem;
	char key[64];
	memo_key(r, ti, block, key, sizeof(key));
	struct memo *m = g_hash_table_lookup(mem->memo, key);
	if (m && !memcmp(m->want, sent, len * 2) && !memcmp(m->got, got, len * 2))
		return; /* already logged */
	m = g_new0(struct memo, 1);
	memcpy(m->want, sent, len * sizeof(uint16_t));
	memcpy(m->got, got, len * sizeof(uint16_t));
	g_hash_table_replace(mem->memo, g_strdup(key), m);
	uint32_t i = 0;
	while (i < len && got[i] == sent[i])
		i++;
	const struct fabric *f = r->g->f;
	const struct ibsm_port *p = &f->ports[r->tg[ti].port];
	LOG_E("PKY-0002", "PKeyTable block %u of port %u of node 0x%016" PRIx64 " (%s) reads back "
	      "differently (index %u: wrote 0x%04x, holds 0x%04x); not rewritten until the policy changes",
	      block, p->num, f->nodes[p->node].guid, f->nodes[p->node].desc,
	      block * PKEY_BLOCK_SIZE + i, sent[i], got[i]);
}

static void on_pk_done(struct transport *t, const struct smp_req *q, int status,
		       const uint8_t *data, void *ctx)
{
	(void)t;
	struct pk_run *r = ctx;
	uint32_t ti = smp_cookie_id(q->cookie), block = smp_cookie_sub(q->cookie);
	int kind = smp_cookie_kind(q->cookie);
	const struct pkey_target *tg = &r->tg[ti];
	const struct fabric *f = r->g->f;
	const struct ibsm_port *p = &f->ports[tg->port];
	if (status != 0 || !data) {
		char why[64];
		smp_status_text(status, why, sizeof(why));
		r->g->failed++;
		r->g->failures++;
		r->ok[ti] = 0;
		LOG_E("PKY-0001", "PKeyTable %s block %u of port %u of node 0x%016" PRIx64 " (%s) failed: %s",
		      kind == PK_SET ? "Set" : "Get", block, p->num, f->nodes[p->node].guid,
		      f->nodes[p->node].desc, why);
		return;
	}
	uint32_t len = MIN(PKEY_BLOCK_SIZE, tg->cap - block * PKEY_BLOCK_SIZE);
	uint16_t *held = r->held[ti] + block * PKEY_BLOCK_SIZE;
	get_block(data, held, len); /* a Get, or a Set's read-back: what the port holds now */
	if (kind == PK_GET)
		return;
	const uint16_t *sent = r->want[ti] + block * PKEY_BLOCK_SIZE;
	if (!memcmp(held, sent, len * sizeof(uint16_t))) {
		char key[64];
		memo_key(r, ti, block, key, sizeof(key));
		g_hash_table_remove(r->g->pkey_mem->memo, key);
		return;
	}
	readback_mismatch(r, ti, block, sent, held, len);
}

static int pk_req(struct pk_run *r, struct smp_req *q, uint32_t ti, uint32_t block, int kind)
{
	uint32_t port = r->tg[ti].port;
	return fabric_smp_to_port(q, r->g->f, port, kind == PK_SET ? IB_MAD_METHOD_SET : IB_MAD_METHOD_GET,
				  IB_ATTR_PKEY_TBL, pkey_attr_mod(r->g->f, port, block), on_pk_done, r,
				  smp_cookie((uint8_t)kind, ti, (uint16_t)block));
}

/* Can the remembered table of port be trusted? Only when it was confirmed by the previous pass
 * (the port was there all along), has the same size, and neither the port nor its switch came
 * back since: a port not ACTIVE came up (or back), a switch without LID or LinearFDBTop was
 * reset. */
static int port_steady(const struct fabric *f, uint32_t port)
{
	const struct ibsm_port *p = &f->ports[port];
	if (p->num && p->state != IBSM_STATE_ACTIVE)
		return 0;
	return !f->nx[p->node].found_empty;
}

static const struct pkey_held *trusted_held(const struct pk_run *r, uint32_t port, uint32_t cap)
{
	const struct fabric *f = r->g->f;
	struct held_key k = target_key(f, port);
	const struct pkey_held *h = g_hash_table_lookup(r->g->pkey_mem->held, &k);
	if (!h || h->cap != cap || h->pass + 1 != r->g->pkey_mem->pass)
		return NULL;
	return port_steady(f, port) ? h : NULL;
}

/* Every target's table: from memory, or Gets of every block. */
/* A P_Key pass over a large fabric is 100k tables (every end port and the switch ports facing
 * them or other switches): the SA is served between slices of it (a few ms each, fabric/slice.h),
 * never kept waiting for all. One pass at a time, on the event loop's thread. */
static struct slicer serve;

static inline void serve_between(struct pass *g, uint32_t i)
{
	(void)g;
	(void)i;
	slicer_check(&serve);
}

static void read_tables(struct pk_run *r)
{
	for (uint32_t i = 0; i < r->n; i++) {
		serve_between(r->g, i);
		const struct pkey_held *h = trusted_held(r, r->tg[i].port, r->tg[i].cap);
		if (h) {
			memcpy(r->held[i], h->keys, h->cap * sizeof(uint16_t));
			r->trusted++;
			continue;
		}
		uint32_t nb = (r->tg[i].cap + PKEY_BLOCK_SIZE - 1) / PKEY_BLOCK_SIZE;
		for (uint32_t b = 0; b < nb; b++) {
			struct smp_req q;
			if (pk_req(r, &q, i, b, PK_GET) < 0) {
				r->ok[i] = 0;
				break;
			}
			transport_submit(r->g->t, &q);
			r->gets++;
		}
	}
	transport_drain(r->g->t, r->g->stop);
}

/* The blocks of target i that differ from what it holds, unless already reported as not
 * reading back. */
static void write_table(struct pk_run *r, uint32_t i)
{
	const struct pkey_target *tg = &r->tg[i];
	uint8_t changed[PKEY_MAX_ENTRIES / PKEY_BLOCK_SIZE];
	uint32_t nb = (tg->cap + PKEY_BLOCK_SIZE - 1) / PKEY_BLOCK_SIZE;
	pkey_diff_blocks(r->held[i], r->want[i], tg->cap, changed);
	for (uint32_t b = 0; b < nb; b++) {
		if (!changed[b])
			continue;
		uint32_t len = MIN(PKEY_BLOCK_SIZE, tg->cap - b * PKEY_BLOCK_SIZE);
		char key[64];
		memo_key(r, i, b, key, sizeof(key));
		struct memo *m = g_hash_table_lookup(r->g->pkey_mem->memo, key);
		if (m && !memcmp(m->want, r->want[i] + b * PKEY_BLOCK_SIZE, len * 2) &&
		    !memcmp(m->got, r->held[i] + b * PKEY_BLOCK_SIZE, len * 2))
			continue; /* the read-back mismatch we already reported */
		struct smp_req q;
		if (pk_req(r, &q, i, b, PK_SET) < 0)
			continue;
		put_block(q.data, r->want[i] + b * PKEY_BLOCK_SIZE, len);
		transport_submit(r->g->t, &q);
		r->sets++;
	}
}

static void last_record(struct pk_last *l, const struct fabric *f, const struct pkey_target *tg,
			struct pkey_held *h);

/* What every fully known table holds now, for the next pass, with its skip record in nl (by
 * port id); the others are forgotten. */
static void remember_tables(struct pk_run *r, struct pk_last *nl)
{
	struct pkey_memory *mem = r->g->pkey_mem;
	int twice = 0; /* a key met twice this pass (duplicate GUIDs): records looked up at the end */
	for (uint32_t i = 0; i < r->n; i++) {
		struct held_key k = target_key(r->g->f, r->tg[i].port);
		if (!r->ok[i] || (r->g->stop && *r->g->stop)) {
			g_hash_table_remove(mem->held, &k);
			continue;
		}
		struct pkey_held *h = g_hash_table_lookup(mem->held, &k);
		twice |= h && h->pass == mem->pass;
		if (!h || h->cap != r->tg[i].cap) { /* else the last pass's entry, rewritten in place */
			h = g_malloc(sizeof(*h) + r->tg[i].cap * sizeof(uint16_t));
			h->k = k;
			h->cap = r->tg[i].cap;
			g_hash_table_replace(mem->held, &h->k, h);
		}
		h->pass = mem->pass;
		memcpy(h->keys, r->held[i], h->cap * sizeof(uint16_t));
		if (!twice)
			last_record(&nl[r->tg[i].port], r->g->f, &r->tg[i], h);
	}
	for (uint32_t i = 0; twice && i < r->n; i++) { /* an entry replaced may be one recorded */
		struct held_key k = target_key(r->g->f, r->tg[i].port);
		struct pkey_held *h = r->ok[i] && !(r->g->stop && *r->g->stop) ? g_hash_table_lookup(mem->held, &k) : NULL;
		nl[r->tg[i].port] = (struct pk_last){ 0 };
		if (h)
			last_record(&nl[r->tg[i].port], r->g->f, &r->tg[i], h);
	}
}

static void pk_run_free(struct pk_run *r)
{
	g_free(r->tables);
	g_free(r->held);
	g_free(r->want);
	g_free(r->ok);
}

/* The activity report (base/activity.h): every key that enters port i's table. */
static void report_added(const struct pk_run *r, uint32_t i)
{
	const struct fabric *f = r->g->f;
	const struct ibsm_port *p = &f->ports[r->tg[i].port];
	for (uint32_t j = 0; j < r->tg[i].cap; j++)
		if (valid_key(r->want[i][j]) && r->want[i][j] != r->held[i][j])
			activity_report(ACT_PRTN_GUID_ADD, "port_guid=0x%016" PRIx64 " port=%u pkey=0x%04x "
					"block_index=%u pkey_index=%u", p->guid ? p->guid : f->nodes[p->node].guid,
					p->num, r->want[i][j], j / PKEY_BLOCK_SIZE, j % PKEY_BLOCK_SIZE);
}

/* The last pass's record of target tg when nothing that decides its table changed: the same
 * policy (same_policy), the same port at this id, the same end port behind it, the same size,
 * its table confirmed by the last pass and the port steady (pkey.c's trust rule). */
static const struct pk_last *unchanged(const struct pkey_memory *m, const struct fabric *f,
				       const struct pkey_target *tg, int same_policy)
{
	if (!same_policy || tg->port >= m->last_n)
		return NULL;
	const struct pk_last *l = &m->last[tg->port];
	const struct ibsm_port *p = &f->ports[tg->port];
	if (!l->h || l->guid != f->nodes[p->node].guid || l->num != p->num || l->cap != tg->cap)
		return NULL;
	uint64_t sg = 0, spg = 0;
	uint8_t sn = 0;
	if (tg->src != IBSM_NONE) {
		const struct ibsm_port *sp = &f->ports[tg->src];
		sg = f->nodes[sp->node].guid;
		spg = sp->guid;
		sn = sp->num;
	}
	if (l->src_guid != sg || l->src_pguid != spg || l->src_num != sn)
		return NULL;
	if (l->h->pass + 1 != m->pass || l->h->cap != tg->cap || !port_steady(f, tg->port))
		return NULL;
	return l;
}

static void last_record(struct pk_last *l, const struct fabric *f, const struct pkey_target *tg,
			struct pkey_held *h)
{
	const struct ibsm_port *p = &f->ports[tg->port];
	*l = (struct pk_last){ .guid = f->nodes[p->node].guid, .num = p->num, .cap = tg->cap, .h = h };
	if (tg->src != IBSM_NONE) {
		const struct ibsm_port *sp = &f->ports[tg->src];
		l->src_guid = f->nodes[sp->node].guid;
		l->src_pguid = sp->guid;
		l->src_num = sp->num;
	}
}

/* What a pass decides before its first SMP: the targets, which of them the last pass leaves
 * as they are, the policy's keys per port, the tables' memory. Touches only f (read) and the
 * P_Key memory, never the transport: it runs beside the SMPs of the LIDs and ports phases
 * (pkey_prepare_start) as well as in line. */
struct pkey_prep {
	struct slice_job job;
	struct pass *g;
	const struct part_policy *policy;
	int active;                /* 0: no SM port or no policy (the memory's records dropped) */
	int remembering;           /* the job is the pass's end (remember_main), not its plan */
	GArray *todo;              /* the targets whose inputs changed */
	struct pk_last *nl;        /* [n_ports] this pass's skip records (mem->last) */
	uint32_t kept;
	int layout_same;
	struct port_pkeys *pk;     /* the policy expanded, by port id */
	GPtrArray *skipped, *notes; /* its messages, logged by the pass */
	struct pk_run r;
};

static void prep_main(void *arg)
{
	struct pkey_prep *pr = arg;
	struct pass *g = pr->g;
	const struct part_policy *policy = pr->policy;
	struct fabric *f = g->f;
	struct pkey_memory *mem = g->pkey_mem;
	if (f->pub.sm_port == IBSM_NONE || !policy) {
		last_forget(mem); /* no pass: the next one decides every table again */
		return;
	}
	pr->active = 1;
	mem->pass++;
	uint64_t sig = policy_signature(policy, f);
	int same_policy = mem->last && policy == mem->policy && sig == mem->policy_sig;
	GArray *ta = pkey_targets(f);
	const struct pkey_target *all = (const struct pkey_target *)(void *)ta->data;
	/* the targets whose inputs changed; the others keep their table with no work at all */
	GArray *todo = g_array_new(FALSE, FALSE, sizeof(struct pkey_target));
	struct pk_last *nl = g_new0(struct pk_last, f->pub.n_ports ? f->pub.n_ports : 1);
	uint32_t kept = 0;
	for (uint32_t i = 0; i < ta->len; i++) {
		struct pkey_target tg = all[i];
		if (tg.cap > PKEY_MAX_ENTRIES)
			tg.cap = PKEY_MAX_ENTRIES;
		const struct pk_last *l = unchanged(mem, f, &tg, same_policy);
		if (l) {
			l->h->pass = mem->pass;
			nl[tg.port] = *l;
			kept++;
		} else {
			g_array_append_val(todo, tg);
		}
	}
	pr->layout_same = !todo->len && kept == mem->last_targets && mem->last && mem->last_n == f->pub.n_ports;
	g_free(mem->last);
	mem->last = nl;
	mem->last_n = f->pub.n_ports;
	mem->last_targets = ta->len;
	mem->policy = policy;
	mem->policy_sig = sig;
	g_array_free(ta, TRUE);
	pr->todo = todo;
	pr->nl = nl;
	pr->kept = kept;
	struct pk_run *r = &pr->r;
	*r = (struct pk_run){ .g = g, .tg = (struct pkey_target *)(void *)todo->data, .n = todo->len };
	if (r->n) {
		pr->skipped = g_ptr_array_new_with_free_func(g_free);
		pr->notes = g_ptr_array_new_with_free_func(g_free);
		pr->pk = part_policy_expand_msgs(policy, &f->pub, f->pub.sm_port, pr->skipped, pr->notes);
	}
	r->held = g_new0(uint16_t *, r->n ? r->n : 1);
	r->want = g_new0(uint16_t *, r->n ? r->n : 1);
	r->ok = g_new0(uint8_t, r->n ? r->n : 1);
	/* 100k tables on a large fabric: one allocation, not two a table (every block is read,
	 * written and compared up to the table's cap only) */
	size_t words = 0;
	for (uint32_t i = 0; i < r->n; i++)
		words += 2 * (size_t)r->tg[i].cap;
	/* zeroed by a write, not calloc's fresh pages: on a prepared pass it is this job that
	 * touches the 10+ MB (page faults, 3000 at 8192 hosts), not the event loop's answers */
	r->tables = g_new(uint16_t, words ? words : 1);
	memset(r->tables, 0, (words ? words : 1) * sizeof(uint16_t));
	words = 0;
	for (uint32_t i = 0; i < r->n; i++) {
		r->held[i] = r->tables + words;
		r->want[i] = r->held[i] + r->tg[i].cap;
		words += 2 * (size_t)r->tg[i].cap;
		r->ok[i] = 1;
	}
}

/* The end of a pass: what every table holds remembered, with the records and the version the
 * SA's copy goes by. */
static void remember_main(void *arg)
{
	struct pkey_prep *pr = arg;
	struct pass *g = pr->g;
	struct pkey_memory *mem = g->pkey_mem;
	remember_tables(&pr->r, pr->nl); /* with the skip record of what was programmed */
	if (g->stop && *g->stop)
		last_forget(mem);
	/* what pkey_memory_table answers on f is what it answered on the last generation when
	 * every table was kept and no target came or went */
	if (!pr->layout_same || !mem->version_f)
		mem->version = next_version();
	mem->version_f = g->f;
	mem->version_gen = g->f->pub.generation;
}

static struct pkey_prep *prep_new(struct pass *g, const struct part_policy *policy)
{
	struct pkey_prep *pr = g_new0(struct pkey_prep, 1);
	pr->g = g;
	pr->policy = policy;
	return pr;
}

void pkey_prepare_start(struct pass *g, const struct part_policy *policy)
{
	pkey_prepare_drop(g);
	struct pkey_prep *pr = prep_new(g, policy);
	g->pkey_prep = pr;
	slice_job_start(&pr->job, "ibsm-pkey-prep", prep_main, pr);
}

static void prep_free(struct pkey_prep *pr)
{
	pk_run_free(&pr->r);
	if (pr->todo)
		g_array_free(pr->todo, TRUE);
	if (pr->pk)
		part_pkeys_free(pr->pk, pr->g->f->pub.n_ports);
	if (pr->skipped)
		g_ptr_array_free(pr->skipped, TRUE);
	if (pr->notes)
		g_ptr_array_free(pr->notes, TRUE);
	g_free(pr);
}

void pkey_prepare_drop(struct pass *g)
{
	if (!g->pkey_prep)
		return;
	slice_job_finish(g->t, &g->pkey_prep->job);
	prep_free(g->pkey_prep);
	g->pkey_prep = NULL;
}

uint32_t pkey_program(struct pass *g, const struct part_policy *policy, struct pkey_stats *st)
{
	struct fabric *f = g->f;
	*st = (struct pkey_stats){ 0 };
	struct pkey_prep *pr = g->pkey_prep;
	g->pkey_prep = NULL;
	if (pr && (pr->remembering || pr->policy != policy)) { /* not this pass's plan: made again */
		slice_job_finish(g->t, &pr->job);
		prep_free(pr);
		pr = NULL;
	}
	if (pr) {
		slice_job_finish(g->t, &pr->job); /* the SA served meanwhile */
	} else {
		pr = prep_new(g, policy);
		prep_main(pr);
	}
	if (!pr->active) {
		prep_free(pr);
		return 0;
	}
	slicer_init(&serve, g->t, g->stop);
	if (g->t)
		transport_step_now(g->t);
	for (guint i = 0; pr->notes && i < pr->notes->len; i++)
		LOG_V("PKY-0007", "partitions: %s", (const char *)g_ptr_array_index(pr->notes, i));
	for (guint i = 0; pr->skipped && i < pr->skipped->len; i++)
		LOG_E("PKY-0006", "partitions: %s", (const char *)g_ptr_array_index(pr->skipped, i));
	struct pk_run r = pr->r;
	struct port_pkeys *pk = pr->pk;
	uint32_t kept = pr->kept;
	read_tables(&r);
	uint32_t dropped_ports = 0;
	for (uint32_t i = 0; i < r.n && !(g->stop && *g->stop); i++) {
		serve_between(g, i);
		if (!r.ok[i] || r.tg[i].src == IBSM_NONE)
			continue; /* never write a table we could not read, nor one only read */
		const struct pkey_target *tg = &r.tg[i];
		uint32_t dropped = pkey_layout(r.held[i], tg->cap, &pk[tg->src], r.want[i]);
		if (dropped && dropped_ports++ < 10) {
			const struct ibsm_port *p = &f->ports[tg->port];
			LOG_E("PKY-0003", "port %u of node 0x%016" PRIx64 " (%s): %u P_Keys do not fit in "
			      "its %u entries and are dropped", p->num, f->nodes[p->node].guid,
			      f->nodes[p->node].desc, dropped, tg->cap);
		}
		if (activity_on(ACT_PRTN_GUID_ADD))
			report_added(&r, i);
		write_table(&r, i);
	}
	transport_drain(g->t, g->stop);
	if (dropped_ports > 10)
		LOG_E("PKY-0004", "%u ports had P_Keys dropped for lack of room", dropped_ports);
	st->tables = r.n + kept;
	st->trusted = r.trusted + kept;
	st->skipped = kept;
	st->blocks_read = r.gets;
	st->blocks_written = r.sets;
	LOG_V("PKY-0005", "P_Key tables: %u, %u known from earlier sweeps (%u of them unchanged, not "
	      "looked at), %u blocks read, %u written", st->tables, st->trusted, kept, r.gets, r.sets);
	pr->r = r;
	/* what the tables hold is remembered beside the next phases' SMPs (100k entries on a
	 * large fabric): joined by pkey_prepare_drop(), before anything asks the memory */
	if (g->t) {
		pr->remembering = 1;
		g->pkey_prep = pr;
		slice_job_start(&pr->job, "ibsm-pkey-memory", remember_main, pr);
	} else {
		remember_main(pr);
		prep_free(pr);
	}
	g->sets += st->blocks_written;
	return st->blocks_written;
}

const uint16_t *pkey_memory_table(const struct pkey_memory *m, const struct fabric *f, uint32_t port,
				  uint32_t *cap)
{
	/* by port id when the last pass was on f (the SA's copy asks for every port): the entry
	 * the lookup below would find */
	if (m->last && port < m->last_n && m->version_f == f && m->version_gen == f->pub.generation) {
		const struct pk_last *l = &m->last[port];
		const struct ibsm_port *p = &f->ports[port];
		if (l->h && l->guid == f->nodes[p->node].guid && l->num == p->num) {
			*cap = l->h->cap;
			return l->h->keys;
		}
	}
	struct held_key k = target_key(f, port);
	const struct pkey_held *h = g_hash_table_lookup(m->held, &k);
	*cap = h ? h->cap : 0;
	return h ? h->keys : NULL;
}
