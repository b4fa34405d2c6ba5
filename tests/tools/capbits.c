/* SPDX-License-Identifier: BSD-2-Clause */
/* capbits.c - makes the SM believe every port claims the PortInfo CapabilityMask bits named in
 * $CAPBITS (a number, e.g. 0x40000000 for IsMulticastFDBTopSupported, bit 30; 0x02000000 for
 * IsClientReregistrationSupported, bit 25; IBA 14.2.5.6), which ibsim's ports do not claim: an
 * LD_PRELOAD shim that wraps umad_recv() and ORs them into each PortInfo GetResp (and a Set's
 * answer) the SM receives, so a test sees in the SMP trace (smpcount.c, SMPCOUNT_TRACE) what an
 * SM writes to such a port (use_mfttop's SwitchInfo:MulticastFDBTop, no_clients_rereg's
 * ClientReregister). Put it before the SMP counter and libumad2sim in LD_PRELOAD; it changes
 * nothing else. */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <infiniband/umad.h>

#define SMP_DATA 64
#define PI_CAPMASK 20        /* CapabilityMask: 32 bits, network order, within PortInfo */

typedef int (*umad_recv_fn)(int, void *, int *, int);
static umad_recv_fn real_recv;

int umad_recv(int portid, void *umad, int *length, int timeout_ms)
{
	if (!real_recv)
		real_recv = (umad_recv_fn)dlsym(RTLD_NEXT, "umad_recv");
	if (!real_recv) {
		errno = ENOSYS;
		return -ENOSYS;
	}
	int rc = real_recv(portid, umad, length, timeout_ms);
	if (rc < 0 || !umad || !length || *length < SMP_DATA + PI_CAPMASK + 4)
		return rc;
	const char *env = getenv("CAPBITS");
	uint32_t bits = env ? (uint32_t)strtoul(env, NULL, 0) : 0;
	uint8_t *mad = (uint8_t *)umad_get_mad(umad);
	int smp = mad[1] == 0x01 || mad[1] == 0x81;
	int attr_portinfo = mad[16] == 0x00 && mad[17] == 0x15;
	if (smp && mad[3] == 0x81 && attr_portinfo)
		for (int i = 0; i < 4; i++)
			mad[SMP_DATA + PI_CAPMASK + i] |= (uint8_t)(bits >> (24 - 8 * i));
	return rc;
}
