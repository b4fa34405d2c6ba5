/* SPDX-License-Identifier: BSD-2-Clause */
/* devid.c - makes the SM believe every node is the device $DEVID (NodeInfo DeviceID, e.g.
 * 0x1003 for a ConnectX-3), which ibsim's nodes are not (they report 0): an LD_PRELOAD shim that
 * wraps umad_recv() and writes it into each NodeInfo GetResp the SM receives, so a test sees in
 * the SMP trace (smpcount.c, SMPCOUNT_TRACE) what an SM sends to such devices (OpenSM's vendor
 * MlnxExtPortInfo for `fdr10`) and how it takes ibsim's answer. With $EPI_SUPPORTED (e.g. 0x1)
 * also ORs that into LinkSpeedSupported (byte 7) of each MlnxExtPortInfo (0xFF90) answer, which
 * ibsim answers with zeros: a port that supports FDR10, for the Sets an SM sends it. Put it
 * before the SMP counter and libumad2sim in LD_PRELOAD; it changes nothing else. */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <infiniband/umad.h>

#define SMP_DATA 64
#define NI_DEVID 30          /* DeviceID: 16 bits, network order, within NodeInfo */
#define EPI_SUPPORTED 7      /* MlnxExtPortInfo LinkSpeedSupported */

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
	const char *env = getenv("DEVID");
	if (rc < 0 || !umad || !length || !env || *length < SMP_DATA + NI_DEVID + 2)
		return rc;
	uint16_t devid = (uint16_t)strtoul(env, NULL, 0);
	uint8_t *mad = (uint8_t *)umad_get_mad(umad);
	int smp = mad[1] == 0x01 || mad[1] == 0x81;
	int attr_nodeinfo = mad[16] == 0x00 && mad[17] == 0x11;
	if (smp && mad[3] == 0x81 && attr_nodeinfo) {
		mad[SMP_DATA + NI_DEVID] = (uint8_t)(devid >> 8);
		mad[SMP_DATA + NI_DEVID + 1] = (uint8_t)devid;
	}
	const char *sup = getenv("EPI_SUPPORTED");
	if (smp && mad[3] == 0x81 && mad[16] == 0xff && mad[17] == 0x90 && sup)
		mad[SMP_DATA + EPI_SUPPORTED] |= (uint8_t)strtoul(sup, NULL, 0);
	return rc;
}
