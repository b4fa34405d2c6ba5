/* SPDX-License-Identifier: BSD-2-Clause */
/* lft_block.c - reads one LinearForwardingTable block of many switches in one process, for
 * tests/chaos/fastcheck.py: dump_fts never shows the entry of LID LinearFDBTop when that is a
 * multiple of 64 (8192 hosts and 1280 switches are 148 x 64 LIDs), and one smpdump per switch
 * costs a fifth of a second each, minutes at every sample. chaos.py compiles it next to the
 * build as it does bench/sa_load.c.
 *   lft_block < lines "DRPATH BLOCK"   ->   lines "DRPATH BLOCK P0 P1 ... P63" or "DRPATH BLOCK ERR" */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/mad.h>

int main(void)
{
	int classes[] = { IB_SMI_CLASS, IB_SMI_DIRECT_CLASS };
	struct ibmad_port *port = mad_rpc_open_port(NULL, 0, classes, 2);
	char line[512], path[400];
	unsigned block;

	if (!port) {
		fprintf(stderr, "lft_block: cannot open the umad port\n");
		return 1;
	}
	while (fgets(line, sizeof(line), stdin)) {
		ib_portid_t id;
		uint8_t buf[IB_SMP_DATA_SIZE];

		if (sscanf(line, "%399s %u", path, &block) != 2)
			continue;
		memset(&id, 0, sizeof(id));
		memset(buf, 0, sizeof(buf));
		if (str2drpath(&id.drpath, path, 0, 0) < 0 ||
		    !smp_query_via(buf, &id, IB_ATTR_LINEARFORWTBL, block, 0, port)) {
			printf("%s %u ERR\n", path, block);
			continue;
		}
		printf("%s %u", path, block);
		for (int i = 0; i < 64; i++)
			printf(" %u", buf[i]);
		printf("\n");
	}
	mad_rpc_close_port(port);
	return 0;
}
