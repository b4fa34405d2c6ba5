/* SPDX-License-Identifier: BSD-2-Clause */
/* mc_member.c - a multicast client of the project's own, as an application (IPoIB, an MPI) uses
 * the SA: it joins its port to a group (SubnAdmSet(MCMemberRecord)), leaves it
 * (SubnAdmDelete), or does both in a loop, one request outstanding, and says what the SA
 * answered. The simulated tests and the benchmark use it; it knows nothing of ibsm.
 *   mc_member [-l] [-c] [-s STATE] [-p PORTGUID] [-k SMKEY] [-n LOOPS] [-B MAXLID] MGID
 * -l: leave instead of join; -c: create if missing (Q_Key 0x0b1b, P_Key 0xffff, MTU 2048 and
 * 10 Gb/s exactly, SL 0; a join names only MGID, PortGID and JoinState); -s: JoinState (1
 * full, 2 non-member, 4 send-only; default 1); -p: for another port (a proxy); -k: SM_Key;
 * -n: LOOPS times join (creating) and leave: the group is made and deleted each time;
 * -B: every CA port of LIDs 1..MAXLID (found by SubnAdmGet(NodeRecord) per LID) joined by proxy
 * as a full member, one after the other, as when a cluster's hosts come up (IPoIB broadcast).
 * Lines on stdout:
 *   status 0xSSSS mlid 0xMMMM state 0xS          (one join or leave)
 *   loops N failed F seconds S rate R            (-n: join+leave pairs per second)
 *   joins N failed F seconds S rate R            (-B: proxy joins per second) */
#include <arpa/inet.h>
#include <endian.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>

#define SA_DATA 56
#define MCMR_SIZE 52
#define SA_SET 0x02
#define SA_DELETE 0x15

/* component mask bits (IBA 15.2.5.17) */
#define C_MGID (1ULL << 0)
#define C_PORT_GID (1ULL << 1)
#define C_QKEY (1ULL << 2)
#define C_MTU_SEL (1ULL << 4)
#define C_MTU (1ULL << 5)
#define C_TCLASS (1ULL << 6)
#define C_PKEY (1ULL << 7)
#define C_RATE_SEL (1ULL << 8)
#define C_RATE (1ULL << 9)
#define C_SL (1ULL << 12)
#define C_FLOW (1ULL << 13)
#define C_JOIN (1ULL << 16)
#define JOIN_MASK (C_MGID | C_PORT_GID | C_JOIN)
#define CREATE_MASK (JOIN_MASK | C_QKEY | C_PKEY | C_SL | C_FLOW | C_TCLASS | C_MTU_SEL | C_MTU | \
		     C_RATE_SEL | C_RATE)

static int fd, agent;
static uint16_t sm_lid;
static uint64_t next_tid = 0x4d00;
static uint64_t sm_key;

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

/* One request; 0 with the answer's status and record, -1 on no answer. */
static int request_attr(uint8_t method, uint16_t attr, const uint8_t *rec, size_t size, uint64_t mask,
			uint16_t *status, uint8_t *answer)
{
	uint8_t buf[1024] = { 0 };
	uint8_t *mad = umad_get_mad(buf);
	uint64_t tid = next_tid++;
	mad_set_field(mad, 0, IB_MAD_BASEVER_F, 1);
	mad_set_field(mad, 0, IB_MAD_MGMTCLASS_F, IB_SA_CLASS);
	mad_set_field(mad, 0, IB_MAD_CLASSVER_F, 2);
	mad_set_field(mad, 0, IB_MAD_METHOD_F, method);
	mad_set_field64(mad, 0, IB_MAD_TRID_F, tid);
	mad_set_field(mad, 0, IB_MAD_ATTRID_F, attr);
	mad_set_field64(mad, 0, IB_SA_MKEY_F, sm_key);
	mad_set_field64(mad, 0, IB_SA_COMPMASK_F, mask);
	memcpy(mad + SA_DATA, rec, size);
	/* asked again each second (same TID) until an answer or the ceiling */
	for (double give_up = now() + patience_s(30.0); now() < give_up;) {
		umad_set_addr(buf, sm_lid, 1, 0, IB_DEFAULT_QP1_QKEY);
		if (umad_send(fd, agent, buf, 256, 1000, 0) < 0)
			return -1;
		double end = now() + 1.0;
		while (now() < end) {
			uint8_t rb[1024];
			int len = sizeof(rb) - (int)umad_size();
			if (umad_recv(fd, rb, &len, 100) < 0)
				continue;
			uint8_t *r = umad_get_mad(rb);
			if (!(r[3] & 0x80) || (uint32_t)mad_get_field64(r, 0, IB_MAD_TRID_F) != (uint32_t)tid)
				continue;
			*status = (uint16_t)mad_get_field(r, 0, IB_MAD_STATUS_F);
			memcpy(answer, r + SA_DATA, size);
			return 0;
		}
	}
	return -1;
}

static int request(uint8_t method, const uint8_t *rec, uint64_t mask, uint16_t *status, uint8_t *answer)
{
	return request_attr(method, 0x38, rec, MCMR_SIZE, mask, status, answer);
}

static void record(uint8_t *rec, const uint8_t mgid[16], uint64_t port_guid_be, uint8_t state)
{
	memset(rec, 0, MCMR_SIZE);
	memcpy(rec, mgid, 16);
	rec[16] = 0xfe;
	rec[17] = 0x80;
	memcpy(rec + 24, &port_guid_be, 8);
	rec[32] = 0x00; rec[33] = 0x00; rec[34] = 0x0b; rec[35] = 0x1b; /* Q_Key */
	rec[38] = 2 << 6 | 4;                                            /* MTU exactly 2048 */
	rec[40] = 0xff; rec[41] = 0xff;                                  /* P_Key */
	rec[42] = 2 << 6 | 3;                                            /* rate exactly 10 Gb/s */
	rec[48] = (uint8_t)(0x20 | (state & 0xf));                       /* link-local scope */
}

/* -B: the CA ports of LIDs 1..maxlid joined by proxy; the join phase timed. */
static int broadcast(const uint8_t mgid[16], int maxlid)
{
	uint64_t *guids = calloc((size_t)maxlid + 1, sizeof(uint64_t));
	int n = 0, failed = 0;
	for (int lid = 1; lid <= maxlid; lid++) {
		uint8_t nr[108] = { 0 }, ans[108];
		uint16_t st;
		nr[0] = (uint8_t)(lid >> 8);
		nr[1] = (uint8_t)lid;
		if (request_attr(0x01, 0x11, nr, sizeof(nr), 1, &st, ans) < 0 || st)
			continue;
		if (ans[6] != 1)  /* NodeInfo.NodeType: CA */
			continue;
		memcpy(&guids[n++], ans + 24, 8); /* NodeInfo.PortGUID, network order */
	}
	double t0 = now();
	for (int i = 0; i < n; i++) {
		uint8_t rec[MCMR_SIZE], a[MCMR_SIZE];
		uint16_t st;
		record(rec, mgid, guids[i], 1);
		if (request(SA_SET, rec, JOIN_MASK, &st, a) < 0 || st) {
			if (!failed++)
				fprintf(stderr, "mc_member: proxy join of port %d refused: status 0x%04x\n", i, st);
		}
	}
	double s = now() - t0;
	printf("joins %d failed %d seconds %.3f rate %.0f\n", n, failed, s, s > 0 ? n / s : 0);
	free(guids);
	return failed || !n ? 1 : 0;
}

int main(int argc, char **argv)
{
	int c, leave = 0, create = 0, loops = 0, bcast = 0;
	uint8_t state = 1;
	uint64_t proxy = 0;
	while ((c = getopt(argc, argv, "lcs:p:k:n:B:")) != -1) {
		if (c == 'l')
			leave = 1;
		else if (c == 'c')
			create = 1;
		else if (c == 's')
			state = (uint8_t)strtoul(optarg, NULL, 0);
		else if (c == 'p')
			proxy = strtoull(optarg, NULL, 0);
		else if (c == 'k')
			sm_key = strtoull(optarg, NULL, 0);
		else if (c == 'n')
			loops = atoi(optarg);
		else if (c == 'B')
			bcast = atoi(optarg);
		else
			goto usage;
	}
	uint8_t mgid[16];
	if (optind + 1 != argc || inet_pton(AF_INET6, argv[optind], mgid) != 1)
		goto usage;
	if (umad_init() < 0)
		return 1;
	umad_port_t port;
	if (umad_get_port(NULL, 0, &port) < 0) {
		fprintf(stderr, "mc_member: no port\n");
		return 1;
	}
	sm_lid = (uint16_t)port.sm_lid;
	uint64_t guid_be = proxy ? htobe64(proxy) : port.port_guid;
	umad_release_port(&port);
	fd = umad_open_port(NULL, 0);
	agent = fd < 0 ? -1 : umad_register(fd, IB_SA_CLASS, 2, 0, NULL);
	if (agent < 0) {
		fprintf(stderr, "mc_member: cannot open the port or register the SA class\n");
		return 1;
	}
	uint8_t rec[MCMR_SIZE], ans[MCMR_SIZE];
	uint16_t st;
	if (bcast > 0)
		return broadcast(mgid, bcast);
	if (loops > 0) {
		int failed = 0;
		double t0 = now();
		for (int i = 0; i < loops; i++) {
			record(rec, mgid, guid_be, 1);
			int a = request(SA_SET, rec, CREATE_MASK, &st, ans);
			failed += a < 0 || st;
			int b = request(SA_DELETE, rec, JOIN_MASK, &st, ans);
			failed += b < 0 || st;
			if (a < 0 && b < 0) { /* the SA is gone: no point going on */
				printf("no answer after %d loops\n", i);
				return 2;
			}
		}
		double s = now() - t0;
		printf("loops %d failed %d seconds %.3f rate %.0f\n", loops, failed, s, s > 0 ? loops / s : 0);
		return failed ? 1 : 0;
	}
	record(rec, mgid, guid_be, state);
	if (request(leave ? SA_DELETE : SA_SET, rec, create && !leave ? CREATE_MASK : JOIN_MASK, &st, ans) < 0) {
		printf("no answer\n");
		return 2;
	}
	printf("status 0x%04x mlid 0x%04x state 0x%x\n", st, ans[36] << 8 | ans[37], ans[48] & 0xf);
	return st ? 1 : 0;
usage:
	fprintf(stderr, "usage: mc_member [-l] [-c] [-s STATE] [-p PORTGUID] [-k SMKEY] [-n LOOPS] [-B MAXLID] MGID\n");
	return 2;
}
