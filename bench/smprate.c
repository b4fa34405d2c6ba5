/* SPDX-License-Identifier: BSD-2-Clause */
/* smprate.c - the trivial SMP client: sends directed-route NodeInfo Gets with a window and
 * counts answers per second. `make bench` reports its rate as the ceiling any SM can reach
 * through umad2sim and ibsim on this machine.
 *
 * usage: smprate [-n COUNT] [-w WINDOW] [-p HOPS]     (run under LD_PRELOAD=libumad2sim.so)
 * prints: smps=<answered> seconds=<s> rate=<smps per second> lost=<n>
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/umad.h>
#include <infiniband/umad_sm.h>
#include <infiniband/umad_types.h>

_Static_assert(sizeof(struct umad_smp) == 256, "an SMP is 256 bytes");

enum { RECV_TIMEOUT_MS = 2000, PERMISSIVE_LID = 0xffff };

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Fills a directed-route NodeInfo Get that leaves through port 1 on every hop. */
static void smp_build_node_info_get(void *umad, uint64_t tid, int hops)
{
	struct umad_smp *smp = umad_get_mad(umad);
	int i;

	memset(smp, 0, sizeof(*smp));
	smp->base_version = 1;
	smp->mgmt_class = UMAD_CLASS_SUBN_DIRECTED_ROUTE;
	smp->class_version = 1;
	smp->method = UMAD_METHOD_GET;
	smp->hop_cnt = hops;
	smp->tid = htobe64(tid);
	smp->attr_id = htobe16(UMAD_SM_ATTR_NODE_INFO);
	smp->dr_slid = htobe16(PERMISSIVE_LID);
	smp->dr_dlid = htobe16(PERMISSIVE_LID);
	for (i = 1; i <= hops; i++)
		smp->initial_path[i] = 1;
	umad_set_addr(umad, PERMISSIVE_LID, 0, 0, 0);
}

int main(int argc, char **argv)
{
	long count = 100000, window = 32, sent = 0, answered = 0, inflight = 0;
	int hops = 1, opt, fd, agent, len;
	void *send_buf, *recv_buf;
	double start, seconds;

	while ((opt = getopt(argc, argv, "n:w:p:")) != -1) {
		switch (opt) {
		case 'n': count = strtol(optarg, NULL, 0); break;
		case 'w': window = strtol(optarg, NULL, 0); break;
		case 'p': hops = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-n COUNT] [-w WINDOW] [-p HOPS]\n", argv[0]);
			return 2;
		}
	}
	if (count < 1 || window < 1 || hops < 0 || hops >= UMAD_SMP_MAX_HOPS) {
		fprintf(stderr, "smprate: bad -n, -w or -p\n");
		return 2;
	}
	if (umad_init() < 0) {
		fprintf(stderr, "smprate: umad_init failed\n");
		return 1;
	}
	fd = umad_open_port(NULL, 0);
	if (fd < 0) {
		fprintf(stderr, "smprate: umad_open_port: %s\n", strerror(-fd));
		return 1;
	}
	agent = umad_register(fd, UMAD_CLASS_SUBN_DIRECTED_ROUTE, 1, 0, NULL);
	if (agent < 0) {
		fprintf(stderr, "smprate: umad_register: %s\n", strerror(-agent));
		return 1;
	}
	send_buf = calloc(1, umad_size() + sizeof(struct umad_smp));
	recv_buf = calloc(1, umad_size() + sizeof(struct umad_smp));
	if (!send_buf || !recv_buf)
		return 1;

	start = now_seconds();
	while (answered < count) {
		while (sent < count && inflight < window) {
			smp_build_node_info_get(send_buf, sent + 1, hops);
			if (umad_send(fd, agent, send_buf, sizeof(struct umad_smp), 0, 0) < 0) {
				fprintf(stderr, "smprate: umad_send failed\n");
				return 1;
			}
			sent++;
			inflight++;
		}
		len = sizeof(struct umad_smp);
		if (umad_recv(fd, recv_buf, &len, RECV_TIMEOUT_MS) < 0)
			break;          /* no answer within the timeout: the rest counts as lost */
		inflight--;
		if (umad_status(recv_buf) == 0)
			answered++;
	}
	seconds = now_seconds() - start;
	printf("smps=%ld seconds=%.3f rate=%.0f lost=%ld\n", answered, seconds,
	       seconds > 0 ? answered / seconds : 0.0, sent - answered);
	umad_unregister(fd, agent);
	umad_close_port(fd);
	umad_done();
	free(send_buf);
	free(recv_buf);
	return answered == count ? 0 : 1;
}
