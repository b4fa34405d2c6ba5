/* SPDX-License-Identifier: BSD-2-Clause */
/* guid_hash.h - the hash of a port named by its node's GUID and its number, for the tables that
 * remember something per port across generations (P_Key tables, enforcement bits, the
 * neighbors file). Node GUIDs of one fabric are consecutive and a switch has up to 254 ports,
 * so the two are mixed by multiplication: XORing the port into the low bits gave many equal
 * hashes (long probes at 100k entries). */
#ifndef IBSM_BASE_GUID_HASH_H
#define IBSM_BASE_GUID_HASH_H

#include <stdint.h>
#include <glib.h>

/* extra: anything else the key holds (a kind of entry), 0 if nothing */
static inline guint guid_port_hash(uint64_t guid, unsigned port, unsigned extra)
{
	uint64_t x = guid * 0x9e3779b97f4a7c15ull ^ ((uint64_t)extra << 8 | port) * 0xc2b2ae3d27d4eb4full;
	x ^= x >> 29;
	x *= 0x9e3779b97f4a7c15ull;
	return (guint)(x >> 32);
}

#endif
