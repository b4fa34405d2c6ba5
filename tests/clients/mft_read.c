/* SPDX-License-Identifier: BSD-2-Clause */
/* mft_read.c - reads a switch's multicast forwarding table with SubnGet(MulticastForwardingTable)
 * SMPs, by LID, as the fabric holds it: the simulated tests judge multicast trees from this,
 * not from anything ibsm says. (infiniband-diags' ibroute -M prints a port grid meant for eyes.)
 *   mft_read LID NPORTS [BLOCKS]
 * reads positions 0 .. NPORTS/16 of blocks 0 .. BLOCKS-1 (32 MLIDs each; default 4) and prints
 * one line per MLID that has a port: "0xMLID port port ...". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <infiniband/mad.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: mft_read LID NPORTS [BLOCKS]\n");
		return 2;
	}
	int lid = atoi(argv[1]), nports = atoi(argv[2]), blocks = argc > 3 ? atoi(argv[3]) : 4;
	int classes[] = { IB_SMI_CLASS, IB_SMI_DIRECT_CLASS };
	struct ibmad_port *port = mad_rpc_open_port(NULL, 0, classes, 2);
	if (!port) {
		fprintf(stderr, "mft_read: cannot open the port\n");
		return 1;
	}
	ib_portid_t id = { 0 };
	id.lid = lid;
	int rc = 0;
	for (int b = 0; b < blocks; b++) {
		uint16_t masks[32][16] = { { 0 } };
		for (int pos = 0; pos <= nports / 16; pos++) {
			uint8_t data[IB_SMP_DATA_SIZE] = { 0 };
			if (!smp_query_via(data, &id, IB_ATTR_MULTICASTFORWTBL, (unsigned)(pos << 28 | b), 2000,
					   port)) {
				fprintf(stderr, "mft_read: LID %d block %d position %d: no answer\n", lid, b, pos);
				rc = 1;
				continue;
			}
			for (int i = 0; i < 32; i++)
				masks[i][pos] = (uint16_t)(data[2 * i] << 8 | data[2 * i + 1]);
		}
		for (int i = 0; i < 32; i++) {
			int any = 0;
			for (int p = 0; p <= nports; p++)
				if ((masks[i][p / 16] >> (p % 16)) & 1) {
					if (!any)
						printf("0x%04x", 0xC000 + b * 32 + i);
					printf(" %d", p);
					any = 1;
				}
			if (any)
				printf("\n");
		}
	}
	mad_rpc_close_port(port);
	return rc;
}
