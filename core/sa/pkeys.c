/* SPDX-License-Identifier: BSD-2-Clause */
/* pkeys.c - the SA's copy of the P_Key tables (sa/pkeys.h). */
#include <glib.h>
#include <string.h>
#include "sa/pkeys.h"

struct sa_pkeys {
	unsigned refs;
	uint32_t n_ports;
	uint32_t *off;      /* [n_ports + 1]: keys[off[p] .. off[p + 1]) */
	uint8_t *known;     /* [n_ports] */
	uint16_t *keys;
};

struct sa_pkeys *sa_pkeys_new(const struct fabric *f, sa_pkey_table_fn table, const void *ctx)
{
	struct sa_pkeys *k = g_new0(struct sa_pkeys, 1);
	k->refs = 1;
	k->n_ports = f->pub.n_ports;
	k->off = g_new0(uint32_t, k->n_ports + 1);
	k->known = g_new0(uint8_t, k->n_ports);
	GArray *all = g_array_new(FALSE, FALSE, sizeof(uint16_t));
	for (uint32_t p = 0; p < k->n_ports; p++) {
		uint32_t cap = 0;
		const uint16_t *t = table ? table(ctx, f, p, &cap) : NULL;
		k->off[p] = all->len;
		if (t) {
			k->known[p] = 1;
			g_array_append_vals(all, t, cap);
		}
	}
	k->off[k->n_ports] = all->len;
	k->keys = (uint16_t *)g_array_free(all, FALSE);
	return k;
}

struct sa_pkeys *sa_pkeys_ref(struct sa_pkeys *k)
{
	if (k)
		k->refs++;
	return k;
}

void sa_pkeys_unref(struct sa_pkeys *k)
{
	if (!k || --k->refs)
		return;
	g_free(k->off);
	g_free(k->known);
	g_free(k->keys);
	g_free(k);
}

const uint16_t *sa_pkeys_of(const struct sa_pkeys *k, uint32_t port, uint32_t *n)
{
	if (!k || port >= k->n_ports || !k->known[port]) {
		*n = 0;
		return NULL;
	}
	*n = k->off[port + 1] - k->off[port];
	return k->keys + k->off[port];
}

/* The entry of t (n keys) with the low 15 bits of key, or 0; a full membership before a limited
 * one (a table may hold both: allow_both_pkeys). */
static uint16_t find(const uint16_t *t, uint32_t n, uint16_t key)
{
	uint16_t got = 0;
	for (uint32_t i = 0; i < n; i++)
		if ((t[i] & 0x7fff) == (key & 0x7fff) && (t[i] & 0x7fff)) {
			if (t[i] & 0x8000)
				return t[i];
			got = t[i];
		}
	return got;
}

/* Does the table hold a valid key (low 15 bits not 0)? */
static int any_key(const uint16_t *t, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (t[i] & 0x7fff)
			return 1;
	return 0;
}

int sa_pkeys_share(const struct sa_pkeys *k, uint32_t a, uint32_t b)
{
	if (a == b || !k)
		return 1;
	if (a >= k->n_ports || b >= k->n_ports)
		return 0;
	uint32_t na, nb;
	const uint16_t *ta = sa_pkeys_of(k, a, &na), *tb = sa_pkeys_of(k, b, &nb);
	if (!ta || !tb || !any_key(ta, na) || !any_key(tb, nb))
		return 1;
	for (uint32_t i = 0; i < na; i++) {
		uint16_t y = (ta[i] & 0x7fff) ? find(tb, nb, ta[i]) : 0;
		if (y && ((ta[i] | y) & 0x8000))
			return 1;
	}
	return 0;
}

int sa_pkeys_has(const struct sa_pkeys *k, uint32_t port, uint16_t pkey)
{
	if (!(pkey & 0x7fff) || !k)
		return 1;
	if (port >= k->n_ports)
		return 0;
	uint32_t n;
	const uint16_t *t = sa_pkeys_of(k, port, &n);
	return !t || find(t, n, pkey) != 0;
}

uint16_t sa_pkeys_shared(const struct sa_pkeys *k, uint32_t a, uint32_t b, uint16_t want)
{
	uint32_t na, nb;
	const uint16_t *ta = sa_pkeys_of(k, a, &na), *tb = sa_pkeys_of(k, b, &nb);
	if (!ta || !tb) /* not programmed by us (yet): the default partition */
		return want && (want & 0x7fff) != 0x7fff ? 0 : 0xffff;
	uint16_t best = 0;
	for (uint32_t i = 0; i < na; i++) {
		uint16_t x = ta[i];
		if (!(x & 0x7fff) || (want && (x & 0x7fff) != (want & 0x7fff)))
			continue;
		uint16_t y = find(tb, nb, x);
		if (y && ((x | y) & 0x8000) && (!best || (x & 0x7fff) < (best & 0x7fff)))
			best = x;
	}
	return best;
}
