/* SPDX-License-Identifier: BSD-2-Clause */
/* mkey_derive.h - the M_Key the SM gives each management port (a CA port, a switch's port 0) and
 * presents in every SMP to it (IBA 14.2.4). The keys come from one configured secret: by
 * default a key per port, HMAC-SHA256(secret, port GUID), so a key read off one host opens no
 * other port; or, m_key_per_port false, the secret itself everywhere, as OpenSM's m_key. */
#ifndef IBSM_MAD_MKEY_DERIVE_H
#define IBSM_MAD_MKEY_DERIVE_H

#include <stdint.h>

struct mkey_cfg {
	uint64_t secret;     /* m_key; 0: M_Key protection off */
	uint8_t protect;     /* m_key_protection_level, ProtectBits 0..3 */
	uint16_t lease_s;    /* m_key_lease_period, seconds (0: never expires) */
	int per_port;        /* m_key_per_port */
};

static inline int mkey_enabled(const struct mkey_cfg *c)
{
	return c && c->secret != 0;
}

/* The key of the management port with this GUID: 0 when protection is off, never 0 when on. */
uint64_t mkey_for_guid(const struct mkey_cfg *c, uint64_t port_guid);

#endif
