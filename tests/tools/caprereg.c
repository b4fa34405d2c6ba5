/* SPDX-License-Identifier: BSD-2-Clause */
/* caprereg.c - makes the SM believe every port supports ClientReregister (PortInfo
 * CapabilityMask bit 25, IBA 14.2.5.6), which ibsim's ports do not claim: an LD_PRELOAD shim
 * that wraps umad_recv() and sets the bit in each PortInfo GetResp (and Set's answer) the SM
 * receives, so a test sees in the SMP trace (smpcount.c, SMPCOUNT_TRACE) whether the SM sets
 * ClientReregister in its PortInfo Sets (no_clients_rereg). Put it before the SMP counter and
 * libumad2sim in LD_PRELOAD; it changes nothing else. */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <infiniband/umad.h>

#define SMP_DATA 64
#define PI_CAPMASK 20        /* CapabilityMask: 32 bits, network order, within PortInfo */
#define CAP_CLIENT_REREG_BYTE 0x02  /* bit 25: bit 1 of its first byte */

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
	uint8_t *mad = (uint8_t *)umad_get_mad(umad);
	int smp = mad[1] == 0x01 || mad[1] == 0x81;
	int attr_portinfo = mad[16] == 0x00 && mad[17] == 0x15;
	if (smp && mad[3] == 0x81 && attr_portinfo)
		mad[SMP_DATA + PI_CAPMASK] |= CAP_CLIENT_REREG_BYTE;
	return rc;
}
