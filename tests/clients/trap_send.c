/* SPDX-License-Identifier: BSD-2-Clause */
/* trap_send.c - sends Trap(Notice) SMPs, LID-routed, to the SM as a port in trouble would: the
 * simulated tests' trap storms (babbling_port_policy, sweep_on_trap). ibsim raises only trap 128
 * itself; this raises any generic trap with the 129-131 data details (LID and port number).
 *   trap_send SM_LID TRAP LID PORT COUNT [ISSUER_LID [GAP_US]]
 * sends COUNT identical notices (ISSUER_LID defaults to LID; 0: LID), GAP_US microseconds
 * apart (default 1000: back to back, umad2sim's queue to the SM overflows and drops some);
 * exits 0 when all were handed to the transport. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/mad.h>

#define NOTICE_ATTR 0x0002 /* IBA 14.2.5.1: Notice */

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: trap_send SM_LID TRAP LID PORT COUNT [ISSUER_LID [GAP_US]]\n");
		return 2;
	}
	int sm_lid = atoi(argv[1]), trap = atoi(argv[2]), lid = atoi(argv[3]), port = atoi(argv[4]);
	int count = atoi(argv[5]), issuer = argc > 6 ? atoi(argv[6]) : 0;
	int gap_us = argc > 7 ? atoi(argv[7]) : 1000;
	if (!issuer)
		issuer = lid;
	int classes[] = { IB_SMI_CLASS, IB_SMI_DIRECT_CLASS };
	struct ibmad_port *src = mad_rpc_open_port(NULL, 0, classes, 2);
	if (!src) {
		fprintf(stderr, "trap_send: cannot open the port\n");
		return 1;
	}
	/* Notice: IsGeneric 1, Type 1 (urgent), ProducerType 2 (switch), TrapNumber, IssuerLID,
	 * then DataDetails: 2 reserved bytes, LIDADDR, PortNum (IBA 14.2.5.1, traps 129-131) */
	uint8_t notice[IB_SMP_DATA_SIZE] = { 0 };
	notice[0] = 0x80 | 1;
	notice[3] = 2;
	notice[4] = (uint8_t)(trap >> 8);
	notice[5] = (uint8_t)trap;
	notice[6] = (uint8_t)(issuer >> 8);
	notice[7] = (uint8_t)issuer;
	notice[12] = (uint8_t)(lid >> 8);
	notice[13] = (uint8_t)lid;
	notice[14] = (uint8_t)port;
	ib_portid_t dport = { 0 };
	dport.lid = sm_lid;
	int sent = 0;
	for (int i = 0; i < count; i++) {
		ib_rpc_t rpc;
		memset(&rpc, 0, sizeof(rpc));
		rpc.mgtclass = IB_SMI_CLASS;
		rpc.method = IB_MAD_METHOD_TRAP;
		rpc.attr.id = NOTICE_ATTR;
		rpc.dataoffs = IB_SMP_DATA_OFFS;
		rpc.datasz = IB_SMP_DATA_SIZE;
		rpc.trid = 0x7e000000ULL + (uint64_t)i;
		if (mad_send_via(&rpc, &dport, NULL, notice, src) < 0)
			fprintf(stderr, "trap_send: trap %d of %d not sent\n", i + 1, count);
		else
			sent++;
		if (gap_us > 0 && i + 1 < count)
			usleep((useconds_t)gap_us);
	}
	mad_rpc_close_port(src);
	printf("%d\n", sent);
	return sent == count ? 0 : 1;
}
