/* SPDX-License-Identifier: BSD-2-Clause */
/* mkey_derive.h - the M_Key the SM gives each management port (a CA port, a switch's port 0) and
 * presents in every SMP to it (IBA 14.2.4). The keys come from one configured secret: by
 * default a key per port, HMAC-SHA256(secret, port GUID), so a key read off one host opens no
 * other port; or, m_key_per_port false, the secret itself everywhere, as OpenSM's m_key. */
#ifndef IBSM_MAD_MKEY_DERIVE_H
#define IBSM_MAD_MKEY_DERIVE_H

#include <stdint.h>

struct guid2mkey;

struct mkey_cfg {
	uint64_t secret;     /* m_key; 0: M_Key protection off */
	uint8_t protect;     /* m_key_protection_level, ProtectBits 0..3 */
	uint16_t lease_s;    /* m_key_lease_period, seconds (0: never expires) */
	int per_port;        /* m_key_per_port */
	struct guid2mkey *lookup; /* m_key_lookup: the keys ports were last given (mad/guid2mkey.h),
				   * not owned; NULL: off */
};

static inline int mkey_enabled(const struct mkey_cfg *c)
{
	return c && c->secret != 0;
}

/* The key of the management port with this GUID: 0 when protection is off, never 0 when on. */
uint64_t mkey_for_guid(const struct mkey_cfg *c, uint64_t port_guid);
/* The key a management port with this GUID holds as far as the configuration knows: its
 * guid2mkey entry (m_key_lookup), else mkey_for_guid(). */
uint64_t mkey_held_guess(const struct mkey_cfg *c, uint64_t port_guid);
/* m_key_lookup, a port not reached yet: the guid2mkey key of the port OpenSM's neighbors file
 * names at the other end of port `num` of the port with GUID `guid`; 0 when none is known. */
uint64_t mkey_peer_guess(const struct mkey_cfg *c, uint64_t guid, uint8_t num);
/* Any key to present: protection on, or a guid2mkey entry with a key (m_key_lookup). */
int mkey_any(const struct mkey_cfg *c);

#endif
