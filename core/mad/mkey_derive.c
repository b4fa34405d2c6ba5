/* SPDX-License-Identifier: BSD-2-Clause */
/* mkey_derive.c - per-port M_Keys from one secret (mad/mkey_derive.h). */
#include <glib.h>
#include "mad/guid2mkey.h"
#include "mad/mkey_derive.h"

static void be64(uint64_t v, guchar out[8])
{
	for (int i = 0; i < 8; i++)
		out[i] = (guchar)(v >> (56 - 8 * i));
}

uint64_t mkey_for_guid(const struct mkey_cfg *c, uint64_t port_guid)
{
	if (!mkey_enabled(c))
		return 0;
	if (!c->per_port)
		return c->secret;
	guchar key[8], msg[8], digest[32];
	gsize len = sizeof(digest);
	be64(c->secret, key);
	be64(port_guid, msg);
	GHmac *h = g_hmac_new(G_CHECKSUM_SHA256, key, sizeof(key));
	g_hmac_update(h, msg, sizeof(msg));
	g_hmac_get_digest(h, digest, &len);
	g_hmac_unref(h);
	uint64_t k = 0;
	for (int i = 0; i < 8; i++)
		k = k << 8 | digest[i];
	return k ? k : 1; /* 0 would mean "unprotected" */
}

uint64_t mkey_held_guess(const struct mkey_cfg *c, uint64_t port_guid)
{
	uint64_t k;
	if (c && c->lookup && guid2mkey_get(c->lookup, port_guid, &k))
		return k;
	return mkey_for_guid(c, port_guid);
}

int mkey_any(const struct mkey_cfg *c)
{
	return mkey_enabled(c) || (c && guid2mkey_any(c->lookup));
}

uint64_t mkey_peer_guess(const struct mkey_cfg *c, uint64_t guid, uint8_t num)
{
	uint64_t peer, k;
	if (!c || !c->lookup || !guid2mkey_neighbor(c->lookup, guid, num, &peer))
		return 0;
	return guid2mkey_get(c->lookup, peer, &k) ? k : 0;
}
