/* SPDX-License-Identifier: BSD-2-Clause */
/* smp_rewrite.c - makes the SM believe ibsim's nodes are hardware they are not: an LD_PRELOAD
 * shim that wraps umad_recv() and rewrites the SMP GetResps the SM receives, so a test sees in
 * the SMP trace (smpcount.c, SMPCOUNT_TRACE) what an SM sends to such devices. Each knob is an
 * environment variable (a number, 0x... allowed); unset ones change nothing:
 *   CAPBITS        ORed into PortInfo CapabilityMask (IBA 14.2.5.6), which ibsim's ports do not
 *                  claim: 0x40000000 IsMulticastFDBTopSupported (bit 30, use_mfttop's
 *                  SwitchInfo:MulticastFDBTop), 0x02000000 IsClientReregistrationSupported
 *                  (bit 25, no_clients_rereg's ClientReregister)
 *   DEVID          written as NodeInfo DeviceID (ibsim's nodes report 0), e.g. 0x1003 for a
 *                  ConnectX-3: OpenSM's vendor MlnxExtPortInfo for `fdr10`
 *   EPI_SUPPORTED  ORed into LinkSpeedSupported (byte 7) of each MlnxExtPortInfo (0xFF90)
 *                  answer, which ibsim answers with zeros: a port that supports FDR10
 * Put it before the SMP counter and libumad2sim in LD_PRELOAD. */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <infiniband/umad.h>

#define SMP_DATA      64
#define PI_CAPMASK    20     /* PortInfo CapabilityMask: 32 bits, network order */
#define NI_DEVID      30     /* NodeInfo DeviceID: 16 bits, network order */
#define EPI_SUPPORTED 7      /* MlnxExtPortInfo LinkSpeedSupported */

typedef int (*umad_recv_fn)(int, void *, int *, int);
static umad_recv_fn real_recv;

/* The knob's value; 0 (and *set 0) when it is not in the environment. */
static uint32_t knob(const char *name, int *set)
{
	const char *env = getenv(name);
	*set = env != NULL;
	return env ? (uint32_t)strtoul(env, NULL, 0) : 0;
}

static int attr_is(const uint8_t *mad, uint16_t attr)
{
	return mad[16] == (uint8_t)(attr >> 8) && mad[17] == (uint8_t)attr;
}

int umad_recv(int portid, void *umad, int *length, int timeout_ms)
{
	if (!real_recv)
		real_recv = (umad_recv_fn)dlsym(RTLD_NEXT, "umad_recv");
	if (!real_recv) {
		errno = ENOSYS;
		return -ENOSYS;
	}
	int rc = real_recv(portid, umad, length, timeout_ms);
	if (rc < 0 || !umad || !length || *length < SMP_DATA + NI_DEVID + 2)
		return rc;
	uint8_t *mad = (uint8_t *)umad_get_mad(umad);
	int smp_resp = (mad[1] == 0x01 || mad[1] == 0x81) && mad[3] == 0x81;
	if (!smp_resp)
		return rc;
	int set;
	uint32_t v;
	if (attr_is(mad, 0x0015) && (v = knob("CAPBITS", &set), set))
		for (int i = 0; i < 4; i++)
			mad[SMP_DATA + PI_CAPMASK + i] |= (uint8_t)(v >> (24 - 8 * i));
	if (attr_is(mad, 0x0011) && (v = knob("DEVID", &set), set)) {
		mad[SMP_DATA + NI_DEVID] = (uint8_t)(v >> 8);
		mad[SMP_DATA + NI_DEVID + 1] = (uint8_t)v;
	}
	if (attr_is(mad, 0xff90) && (v = knob("EPI_SUPPORTED", &set), set))
		mad[SMP_DATA + EPI_SUPPORTED] |= (uint8_t)v;
	return rc;
}
