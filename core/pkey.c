/* pkey.c - P_Key table programming (issue 6, DESIGN.md step 6): expands the partition policy in
 * force into one table per end port, gives the switch port facing a CA port the same table,
 * reads what every port holds, lays the keys out by the index rules and writes only the
 * 32-entry blocks that differ. The GetResp of each Set is the read-back; a mismatch is logged
 * once and remembered, so a fabric that does not store some bit is not rewritten every sweep. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <infiniband/mad.h>
#include "log.h"
#include "pkey.h"
#include "sm.h"

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
	/* wanted keys, duplicates and invalid keys removed, in policy order */
	uint16_t *keys = g_new(uint16_t, n);
	uint8_t *placed = g_new0(uint8_t, n);
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
		g_free(keys);
		g_free(placed);
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
	g_free(keys);
	g_free(placed);
	return dropped;
}

uint32_t pkey_diff_blocks(const uint16_t *held, const uint16_t *want, uint32_t cap,
			  uint8_t *changed)
{
	uint32_t nb = (cap + PKEY_BLOCK - 1) / PKEY_BLOCK, n = 0;
	for (uint32_t b = 0; b < nb; b++) {
		uint32_t len = MIN(PKEY_BLOCK, cap - b * PKEY_BLOCK);
		changed[b] = memcmp(held + b * PKEY_BLOCK, want + b * PKEY_BLOCK,
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
	return t;
}

uint32_t pkey_attr_mod(const struct fabric *f, uint32_t port, uint32_t block)
{
	const struct ibsm_port *p = &f->ports[port];
	if (f->nodes[p->node].type == IBSM_SWITCH && p->num)
		return ((uint32_t)p->num << 16) | (block & 0xffff);
	return block & 0xffff;
}

void pkey_enforce_bits(const struct sm *sm, const struct fabric *f, uint32_t port, uint8_t *pi)
{
	const struct ibsm_port *p = &f->ports[port];
	if (!sm->part_policy || !p->num || f->nodes[p->node].type != IBSM_SWITCH ||
	    p->peer == IBSM_NONE || f->nodes[f->ports[p->peer].node].type == IBSM_SWITCH)
		return;
	mad_set_field(pi, 0, IB_PORT_PART_EN_INB_F, 1);
	mad_set_field(pi, 0, IB_PORT_PART_EN_OUTB_F, 1);
}

/* ---- policy ----------------------------------------------------------------------------- */

int pkey_policy_load(struct sm *sm)
{
	const char *path = sm->opt->partition_config_file;
	struct part_policy *np = NULL;
	if (!path || !*path || !g_file_test(path, G_FILE_TEST_EXISTS)) {
		LOG_I("PKY-0001", "partition file %s not found: default partition only",
		      path && *path ? path : "(none)");
		np = part_policy_default();
	} else {
		GError *err = NULL;
		np = part_policy_parse_file(path, &err);
		if (!np) {
			LOG_E("PKY-0002", "partition file not taken, %s policy stays in force: %s",
			      sm->part_policy ? "the previous" : "the default",
			      err ? err->message : path);
			g_clear_error(&err);
			if (!sm->part_policy)
				sm->part_policy = part_policy_default();
			return -1;
		}
		LOG_I("PKY-0003", "partition policy read from %s: %u partitions", path,
		      np->parts ? np->parts->len : 0);
	}
	if (sm->part_policy)
		part_policy_free(sm->part_policy);
	sm->part_policy = np;
	return 0;
}

/* ---- programming ------------------------------------------------------------------------ */

struct memo {                  /* a Set whose read-back differed */
	uint16_t want[PKEY_BLOCK], got[PKEY_BLOCK];
};

struct pk_run {
	struct sm *sm;
	struct fabric *f;
	struct pkey_target *tg;
	uint32_t n;
	uint16_t **held;           /* [n][cap] as read */
	uint8_t *ok;               /* [n] every block read */
	uint16_t **want;           /* [n][cap] */
	uint32_t sets, failed;
};

enum { PK_GET = 0, PK_SET = 1 };

static void memo_key(const struct pk_run *r, uint32_t t, uint32_t block, char *buf, size_t len)
{
	const struct ibsm_port *p = &r->f->ports[r->tg[t].port];
	g_snprintf(buf, len, "%016" PRIx64 "/%u/%u", r->f->nodes[p->node].guid, p->num, block);
}

static void put_block(uint8_t *data, const uint16_t *keys, uint32_t len)
{
	memset(data, 0, PKEY_BLOCK * 2);
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

static void on_pk_done(struct transport *t, const struct smp_req *q, int status,
		       const uint8_t *data, void *ctx)
{
	(void)t;
	struct pk_run *r = ctx;
	uint32_t ti = (uint32_t)(q->cookie >> 17), block = (uint32_t)(q->cookie >> 1) & 0xffff;
	int kind = (int)(q->cookie & 1);
	const struct pkey_target *tg = &r->tg[ti];
	const struct ibsm_port *p = &r->f->ports[tg->port];
	if (status != 0 || !data) {
		r->sm->smp_failures++;
		r->failed++;
		r->ok[ti] = 0;
		LOG_E("PKY-0004", "PKeyTable %s block %u of port %u of node 0x%016" PRIx64 " (%s) failed: %s%x",
		      kind == PK_SET ? "Set" : "Get", block, p->num, r->f->nodes[p->node].guid,
		      r->f->nodes[p->node].desc, status < 0 ? "errno " : "status 0x",
		      status < 0 ? -status : status);
		return;
	}
	uint32_t len = MIN(PKEY_BLOCK, tg->cap - block * PKEY_BLOCK);
	if (kind == PK_GET) {
		get_block(data, r->held[ti] + block * PKEY_BLOCK, len);
		return;
	}
	uint16_t got[PKEY_BLOCK] = { 0 };
	get_block(data, got, len);
	char key[64];
	memo_key(r, ti, block, key, sizeof(key));
	const uint16_t *sent = r->want[ti] + block * PKEY_BLOCK;
	if (!memcmp(got, sent, len * sizeof(uint16_t))) {
		g_hash_table_remove(r->sm->pkey_memo, key);
		return;
	}
	struct memo *m = g_hash_table_lookup(r->sm->pkey_memo, key);
	if (m && !memcmp(m->want, sent, sizeof(m->want)) && !memcmp(m->got, got, sizeof(m->got)))
		return; /* already logged */
	m = g_new0(struct memo, 1);
	memcpy(m->want, sent, len * sizeof(uint16_t));
	memcpy(m->got, got, len * sizeof(uint16_t));
	g_hash_table_replace(r->sm->pkey_memo, g_strdup(key), m);
	uint32_t i = 0;
	while (i < len && got[i] == sent[i])
		i++;
	LOG_E("PKY-0005", "PKeyTable block %u of port %u of node 0x%016" PRIx64 " (%s) reads back "
	      "differently (index %u: wrote 0x%04x, holds 0x%04x); not rewritten until the policy changes",
	      block, p->num, r->f->nodes[p->node].guid, r->f->nodes[p->node].desc,
	      block * PKEY_BLOCK + i, sent[i], got[i]);
}

/* DR route to the port: a CA port is reached through its own switch (a CA applies the table
 * of the port the SMP enters through); our own node with 0 hops. */
static int pk_req(struct pk_run *r, struct smp_req *q, uint32_t ti, uint32_t block, int kind)
{
	const struct fabric *f = r->f;
	uint32_t port = r->tg[ti].port;
	memset(q, 0, sizeof(*q));
	q->method = kind == PK_SET ? IB_MAD_METHOD_SET : IB_MAD_METHOD_GET;
	q->dr = 1;
	if (fabric_port_dr_path(f, port, &q->hops, q->path) < 0)
		return -ENOENT;
	q->attr = IB_ATTR_PKEY_TBL;
	q->mod = pkey_attr_mod(f, port, block);
	q->done = on_pk_done;
	q->ctx = r;
	q->cookie = ((uint64_t)ti << 17) | ((uint64_t)block << 1) | (uint64_t)kind;
	return 0;
}

uint32_t pkey_program(struct sm *sm, struct fabric *f)
{
	if (!sm->part_policy)
		pkey_policy_load(sm);
	if (!sm->pkey_memo)
		sm->pkey_memo = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	if (f->pub.sm_port == IBSM_NONE || !sm->part_policy)
		return 0;
	struct port_pkeys *pk = part_policy_expand(sm->part_policy, &f->pub, f->pub.sm_port);
	GArray *ta = pkey_targets(f);
	struct pk_run r = { .sm = sm, .f = f, .tg = (struct pkey_target *)(void *)ta->data,
			    .n = ta->len };
	r.held = g_new0(uint16_t *, r.n ? r.n : 1);
	r.want = g_new0(uint16_t *, r.n ? r.n : 1);
	r.ok = g_new0(uint8_t, r.n ? r.n : 1);
	uint32_t gets = 0;
	for (uint32_t i = 0; i < r.n; i++) {
		if (r.tg[i].cap > PKEY_MAX_ENTRIES)
			r.tg[i].cap = PKEY_MAX_ENTRIES;
		r.held[i] = g_new0(uint16_t, r.tg[i].cap + PKEY_BLOCK);
		r.want[i] = g_new0(uint16_t, r.tg[i].cap + PKEY_BLOCK);
		r.ok[i] = 1;
		uint32_t nb = (r.tg[i].cap + PKEY_BLOCK - 1) / PKEY_BLOCK;
		for (uint32_t b = 0; b < nb; b++) {
			struct smp_req q;
			if (pk_req(&r, &q, i, b, PK_GET) < 0) {
				r.ok[i] = 0;
				break;
			}
			transport_submit(sm->t, &q);
			gets++;
		}
	}
	transport_drain(sm->t, &sm->stop);
	uint32_t dropped_ports = 0;
	for (uint32_t i = 0; i < r.n && !sm->stop; i++) {
		if (!r.ok[i])
			continue; /* never write a table we could not read */
		const struct pkey_target *tg = &r.tg[i];
		uint32_t dropped = pkey_layout(r.held[i], tg->cap, &pk[tg->src], r.want[i]);
		if (dropped && dropped_ports++ < 10) {
			const struct ibsm_port *p = &f->ports[tg->port];
			LOG_E("PKY-0006", "port %u of node 0x%016" PRIx64 " (%s): %u P_Keys do not fit in "
			      "its %u entries and are dropped", p->num, f->nodes[p->node].guid,
			      f->nodes[p->node].desc, dropped, tg->cap);
		}
		uint8_t changed[PKEY_MAX_ENTRIES / PKEY_BLOCK];
		uint32_t nb = (tg->cap + PKEY_BLOCK - 1) / PKEY_BLOCK;
		pkey_diff_blocks(r.held[i], r.want[i], tg->cap, changed);
		for (uint32_t b = 0; b < nb; b++) {
			if (!changed[b])
				continue;
			uint32_t len = MIN(PKEY_BLOCK, tg->cap - b * PKEY_BLOCK);
			char key[64];
			memo_key(&r, i, b, key, sizeof(key));
			struct memo *m = g_hash_table_lookup(sm->pkey_memo, key);
			if (m && !memcmp(m->want, r.want[i] + b * PKEY_BLOCK, len * 2) &&
			    !memcmp(m->got, r.held[i] + b * PKEY_BLOCK, len * 2))
				continue; /* the read-back mismatch we already reported */
			struct smp_req q;
			if (pk_req(&r, &q, i, b, PK_SET) < 0)
				continue;
			put_block(q.data, r.want[i] + b * PKEY_BLOCK, len);
			transport_submit(sm->t, &q);
			r.sets++;
		}
	}
	transport_drain(sm->t, &sm->stop);
	if (dropped_ports > 10)
		LOG_E("PKY-0007", "%u ports had P_Keys dropped for lack of room", dropped_ports);
	for (uint32_t i = 0; i < r.n; i++) {
		g_free(r.held[i]);
		g_free(r.want[i]);
	}
	g_free(r.held);
	g_free(r.want);
	g_free(r.ok);
	g_array_free(ta, TRUE);
	part_pkeys_free(pk, f->pub.n_ports);
	LOG_V("PKY-0008", "P_Key tables: %u blocks read, %u written", gets, r.sets);
	return r.sets;
}

void pkey_state_free(struct sm *sm)
{
	if (sm->part_policy)
		part_policy_free(sm->part_policy);
	sm->part_policy = NULL;
	if (sm->pkey_memo)
		g_hash_table_destroy(sm->pkey_memo);
	sm->pkey_memo = NULL;
}
