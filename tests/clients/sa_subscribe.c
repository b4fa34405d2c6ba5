/* SPDX-License-Identifier: BSD-2-Clause */
/* sa_subscribe.c - a subscriber of the SA's event forwarding, as an application would be: it
 * subscribes its port to traps (SubnAdmSet(InformInfo), Subscribe=1, any LID, type and
 * producer), prints every Report(Notice) it receives and answers it with a ReportResp, and
 * unsubscribes at the end. The simulated tests use it to see traps 64/65 reach a subscriber.
 *   sa_subscribe [-t TRAP]... [-n COUNT] [-w SECONDS] [-q] [-N] [-S]
 * -n: stop after COUNT Reports; -w: after SECONDS (default 60); -q: never answer ReportResp
 * (a dead subscriber); -N: do not unsubscribe at exit; -S: for ibsim, which hands an unsolicited
 * request (a Report) only to a client attached as an SM: register the SMP classes too (the
 * SMInfo queries a port with IsSM draws need an agent; they are dropped), then open the port's
 * issm device as an SM does, which makes this client one.
 * Lines on stdout:
 *   subscribed TRAP status 0xSSSS
 *   report trap TRAP issuer LID subject GID tid 0xTID */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>

#define SA_DATA 56
#define II_SIZE 36

static int fd, agent;
static uint16_t sm_lid;
static uint64_t next_tid = 0x7100;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* How long to keep asking before "no answer": a ceiling that only catches a hang (a busy SA,
 * a sanitized SM on a loaded machine, answers late, not never), scaled like the tests' own
 * waits by IBSM_TEST_SLOW (doc/testing.md). */
static double patience_s(double s)
{
	const char *e = getenv("IBSM_TEST_SLOW");
	double f = e && *e ? atof(e) : 1.0;
	return s * (f > 1.0 ? f : 1.0);
}

static void mad_header(uint8_t *mad, uint8_t method, uint16_t attr, uint64_t tid)
{
	mad_set_field(mad, 0, IB_MAD_BASEVER_F, 1);
	mad_set_field(mad, 0, IB_MAD_MGMTCLASS_F, IB_SA_CLASS);
	mad_set_field(mad, 0, IB_MAD_CLASSVER_F, 2);
	mad_set_field(mad, 0, IB_MAD_METHOD_F, method);
	mad_set_field64(mad, 0, IB_MAD_TRID_F, tid);
	mad_set_field(mad, 0, IB_MAD_ATTRID_F, attr);
}

static int send_mad(uint8_t *buf, uint16_t dlid, int timeout_ms)
{
	umad_set_addr(buf, dlid, 1, 0, IB_DEFAULT_QP1_QKEY);
	return umad_send(fd, agent, buf, 256, timeout_ms, 0);
}

/* Handles one MAD: a Report is printed and acknowledged; returns 1 for a Report, 2 for the
 * response with TID want (its status in *status), 0 otherwise. */
static int handle(uint8_t *buf, int quiet, uint64_t want, uint16_t *status)
{
	uint8_t *mad = umad_get_mad(buf);
	uint8_t method = mad[3]; /* with the response bit (IB_MAD_METHOD_F has 7 bits) */
	uint64_t tid = mad_get_field64(mad, 0, IB_MAD_TRID_F);
	if (getenv("SA_SUBSCRIBE_DEBUG"))
		fprintf(stderr, "got method 0x%x class 0x%x attr 0x%x tid 0x%llx status %d\n", method, mad[1],
			(unsigned)mad_get_field(mad, 0, IB_MAD_ATTRID_F), (unsigned long long)tid, umad_status(buf));
	if (method == 0x06) { /* Report */
		const uint8_t *n = mad + SA_DATA;
		char gid[64];
		inet_ntop(AF_INET6, n + 10 + 6, gid, sizeof(gid));
		printf("report trap %u issuer %u subject %s tid 0x%llx\n", n[4] << 8 | n[5],
		       n[6] << 8 | n[7], gid, (unsigned long long)tid);
		fflush(stdout);
		if (!quiet) {
			uint16_t slid = ntohs(umad_get_mad_addr(buf)->lid);
			mad[3] = 0x86; /* ReportResp, the same TID */
			send_mad(buf, slid, 0);
		}
		return 1;
	}
	if ((method & 0x80) && (uint32_t)tid == (uint32_t)want) { /* the high half is the agent's */
		*status = (uint16_t)mad_get_field(mad, 0, IB_MAD_STATUS_F);
		return 2;
	}
	return 0;
}

/* SubnAdmSet(InformInfo) for trap; the response's status, or -1 on a timeout. */
static int inform(uint16_t trap, int subscribe, uint32_t qpn, int quiet, int *reports)
{
	uint8_t buf[4096] = { 0 };
	uint8_t *mad = umad_get_mad(buf);
	uint64_t tid = next_tid++;
	mad_header(mad, IB_MAD_METHOD_SET, IB_SA_ATTR_INFORMINFO, tid);
	uint8_t *ii = mad + SA_DATA;
	ii[16] = ii[17] = 0xff;                 /* LIDRangeBegin 0xFFFF: every LID */
	ii[22] = 1;                             /* IsGeneric */
	ii[23] = (uint8_t)subscribe;
	ii[24] = ii[25] = 0xff;                 /* Type: any */
	ii[26] = (uint8_t)(trap >> 8);
	ii[27] = (uint8_t)trap;
	ii[28] = (uint8_t)(qpn >> 16);
	ii[29] = (uint8_t)(qpn >> 8);
	ii[30] = (uint8_t)qpn;
	ii[31] = 16;                            /* RespTimeValue */
	ii[33] = ii[34] = ii[35] = 0xff;        /* ProducerType: any */
	/* asked again every 1.5 s (same TID) until an answer or the ceiling */
	for (double give_up = now() + patience_s(30.0); now() < give_up;) {
		int src = send_mad(buf, sm_lid, 1000);
		if (getenv("SA_SUBSCRIBE_DEBUG"))
			fprintf(stderr, "sent to LID %u: %d\n", sm_lid, src);
		if (src < 0)
			return -1;
		double end = now() + 1.5;
		while (now() < end) {
			uint8_t rb[4096];
			int len = sizeof(rb) - (int)umad_size();
			if (umad_recv(fd, rb, &len, 200) < 0)
				continue;
			uint16_t st;
			int k = handle(rb, quiet, tid, &st);
			if (k == 1)
				(*reports)++;
			if (k == 2)
				return st;
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	uint16_t traps[16];
	int ntraps = 0, count = 0, quiet = 0, keep = 0;
	double wait_s = 60;
	int c, sim_sm = 0;
	while ((c = getopt(argc, argv, "t:n:w:qNS")) != -1) {
		if (c == 't' && ntraps < 16)
			traps[ntraps++] = (uint16_t)strtoul(optarg, NULL, 0);
		else if (c == 'n')
			count = atoi(optarg);
		else if (c == 'w')
			wait_s = atof(optarg);
		else if (c == 'q')
			quiet = 1;
		else if (c == 'N')
			keep = 1;
		else if (c == 'S')
			sim_sm = 1;
		else {
			fprintf(stderr, "usage: sa_subscribe [-t TRAP]... [-n COUNT] [-w SECONDS] [-q] [-N] [-S]\n");
			return 2;
		}
	}
	if (!ntraps)
		traps[ntraps++] = 0xFFFF;
	if (umad_init() < 0)
		return 1;
	umad_port_t port;
	if (umad_get_port(NULL, 0, &port) < 0) {
		fprintf(stderr, "sa_subscribe: no port\n");
		return 1;
	}
	sm_lid = (uint16_t)port.sm_lid;
	umad_release_port(&port);
	fd = umad_open_port(NULL, 0);
	long mask[16 / sizeof(long)] = { 0 };
	mask[0x06 / (8 * sizeof(long))] |= 1L << (0x06 % (8 * sizeof(long))); /* Reports come unasked */
	agent = fd < 0 ? -1 : umad_register(fd, IB_SA_CLASS, 2, 0, mask);
	if (agent < 0) {
		fprintf(stderr, "sa_subscribe: cannot open the port or register the SA class\n");
		return 1;
	}
	if (sim_sm && (umad_register(fd, IB_SMI_CLASS, 1, 0, NULL) < 0 ||
		       umad_register(fd, IB_SMI_DIRECT_CLASS, 1, 0, NULL) < 0)) {
		fprintf(stderr, "sa_subscribe: cannot register the SMP classes (-S)\n");
		return 1;
	}
	char issm[256];
	int issm_fd = -1;
	if (sim_sm && (umad_get_issm_path(NULL, 0, issm, sizeof(issm)) < 0 ||
		       (issm_fd = open(issm, O_RDWR)) < 0)) {
		fprintf(stderr, "sa_subscribe: cannot open the issm device (-S)\n");
		return 1;
	}
	int reports = 0, rc = 0;
	for (int i = 0; i < ntraps; i++) {
		int st = inform(traps[i], 1, 0, quiet, &reports);
		printf("subscribed %u status 0x%04x\n", traps[i], st < 0 ? 0xffff : st);
		fflush(stdout);
		if (st)
			rc = 1;
	}
	double end = now() + wait_s;
	while (!rc && now() < end && (!count || reports < count)) {
		uint8_t rb[4096];
		int len = sizeof(rb) - (int)umad_size();
		if (umad_recv(fd, rb, &len, 200) >= 0) {
			uint16_t st;
			if (handle(rb, quiet, 0, &st) == 1)
				reports++;
		}
	}
	for (int i = 0; i < ntraps && !keep; i++)
		inform(traps[i], 0, 1, quiet, &reports);
	if (issm_fd >= 0)
		close(issm_fd);
	umad_close_port(fd);
	umad_done();
	printf("reports %d\n", reports);
	return rc ? rc : count && reports < count ? 3 : 0;
}
