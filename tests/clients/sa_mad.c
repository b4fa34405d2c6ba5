/* SPDX-License-Identifier: BSD-2-Clause */
/* sa_mad.c - sends SA requests exactly as written, of any length, and prints each answer: the
 * simulated tests' way to ask what saquery cannot (a ServiceRecord Set or Delete, a record cut
 * short, a request from a host in no partition) and to read every byte of what comes back.
 *   sa_mad [-s SMLID] [-t TIMEOUT_MS] [-w WINDOW] [-v] < requests
 * One request a line: METHOD ATTR MASK LEN [key=SMKEY] [mod=ATTRMOD] [HEX]
 *   METHOD, ATTR, MASK: numbers (0x.. hex); LEN: bytes of the MAD as sent (56 is the SA header
 *   alone, 256 a whole MAD; "full" = 256); HEX: the record from byte 56 on (missing bytes 0).
 * One answer a line, in input order:
 *   status 0xSSSS method 0xMM records N size S     (S: the AttributeOffset in bytes)
 *   timeout
 * and with -v each record's bytes after it: "rec HEX". WINDOW requests are in flight at once
 * (default 8), each waits TIMEOUT_MS (default 1000) and is never resent: a request the SA drops
 * reads "timeout". The agent is registered with RMPP, so with the RMPP test library preloaded a
 * GetTable answer arrives whole. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>

#define SA_DATA 56
#define MAD_BYTES 256
#define MAX_REQ 100000
#define RECV_MAX (1 << 20)

struct req {
	uint8_t mad[MAD_BYTES];
	int len;
	uint32_t tid;
	double deadline;
	int state;                 /* 0 waiting to go, 1 sent, 2 answered or timed out */
	char *answer;              /* the line(s) to print */
};

static int fd, agent, verbose;
static uint16_t sm_lid;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Parses one request line into r; -1 on a malformed line. */
static int parse(char *line, struct req *r, uint32_t tid)
{
	char *tok[8];
	int n = 0;
	for (char *s = strtok(line, " \t\n"); s && n < 8; s = strtok(NULL, " \t\n"))
		tok[n++] = s;
	if (n < 4)
		return -1;
	memset(r, 0, sizeof(*r));
	uint8_t *mad = r->mad;
	mad_set_field(mad, 0, IB_MAD_BASEVER_F, 1);
	mad_set_field(mad, 0, IB_MAD_MGMTCLASS_F, IB_SA_CLASS);
	mad_set_field(mad, 0, IB_MAD_CLASSVER_F, 2);
	mad[3] = (uint8_t)strtoul(tok[0], NULL, 0); /* with the response bit (IB_MAD_METHOD_F has 7) */
	mad_set_field(mad, 0, IB_MAD_ATTRID_F, (uint32_t)strtoul(tok[1], NULL, 0));
	mad_set_field64(mad, 0, IB_SA_COMPMASK_F, strtoull(tok[2], NULL, 0));
	r->len = strcmp(tok[3], "full") ? atoi(tok[3]) : MAD_BYTES;
	if (r->len < 0 || r->len > MAD_BYTES)
		return -1;
	r->tid = tid;
	mad_set_field64(mad, 0, IB_MAD_TRID_F, tid);
	for (int i = 4; i < n; i++) {
		if (!strncmp(tok[i], "key=", 4)) {
			mad_set_field64(mad, 0, IB_SA_MKEY_F, strtoull(tok[i] + 4, NULL, 0));
			continue;
		}
		if (!strncmp(tok[i], "mod=", 4)) {
			mad_set_field(mad, 0, IB_MAD_ATTRMOD_F, (uint32_t)strtoul(tok[i] + 4, NULL, 0));
			continue;
		}
		size_t at = SA_DATA;
		for (const char *h = tok[i]; h[0] && h[1] && at < MAD_BYTES; h += 2) {
			int a = hexval(h[0]), b = hexval(h[1]);
			if (a < 0 || b < 0)
				return -1;
			mad[at++] = (uint8_t)(a << 4 | b);
		}
	}
	return 0;
}

static void send_req(struct req *r, int timeout_ms)
{
	uint8_t buf[4096] = { 0 };
	umad_set_addr(buf, sm_lid, 1, 0, IB_DEFAULT_QP1_QKEY);
	memcpy(umad_get_mad(buf), r->mad, (size_t)r->len);
	r->state = 1;
	r->deadline = now() + timeout_ms / 1000.0;
	if (umad_send(fd, agent, buf, r->len, timeout_ms, 0) < 0) {
		r->state = 2;
		r->answer = strdup("send failed");
	}
}

/* The answer line(s) of a response MAD of len bytes. */
static char *describe(const uint8_t *mad, int len)
{
	unsigned status = mad_get_field((void *)mad, 0, IB_MAD_STATUS_F);
	unsigned size = mad_get_field((void *)mad, 0, IB_SA_ATTROFFS_F) * 8;
	int data = len > SA_DATA ? len - SA_DATA : 0;
	unsigned n = 0;
	if (!status && size)
		n = mad[3] == 0x81 ? 1 : (unsigned)data / size;
	size_t cap = 128 + (verbose ? (size_t)n * (size * 2 + 8) : 0);
	char *s = malloc(cap), *p = s;
	p += snprintf(p, cap, "status 0x%04x method 0x%02x records %u size %u", status, mad[3], n, size);
	for (unsigned i = 0; verbose && i < n; i++) {
		p += sprintf(p, "\nrec ");
		for (unsigned b = 0; b < size && SA_DATA + i * size + b < (unsigned)len; b++)
			p += sprintf(p, "%02x", mad[SA_DATA + i * size + b]);
	}
	return s;
}

/* Takes in whatever answers are waiting (up to wait_ms for the first). */
static void receive(struct req *reqs, int n, int wait_ms)
{
	static uint8_t buf[RECV_MAX];
	for (;;) {
		int len = RECV_MAX - (int)umad_size();
		if (umad_recv(fd, buf, &len, wait_ms) < 0)
			return;
		wait_ms = 0;
		uint8_t *mad = umad_get_mad(buf);
		if (!(mad[3] & 0x80) || umad_status(buf))
			continue;
		uint32_t tid = (uint32_t)mad_get_field64(mad, 0, IB_MAD_TRID_F);
		for (int i = 0; i < n; i++)
			if (reqs[i].state == 1 && reqs[i].tid == tid) {
				reqs[i].state = 2;
				reqs[i].answer = describe(mad, len);
				break;
			}
	}
}

int main(int argc, char **argv)
{
	int timeout_ms = 1000, window = 8, c, smlid_arg = 0;
	while ((c = getopt(argc, argv, "s:t:w:v")) != -1) {
		if (c == 's')
			smlid_arg = (int)strtol(optarg, NULL, 0);
		else if (c == 't')
			timeout_ms = atoi(optarg);
		else if (c == 'w')
			window = atoi(optarg) > 0 ? atoi(optarg) : 1;
		else if (c == 'v')
			verbose = 1;
		else {
			fprintf(stderr, "usage: sa_mad [-s SMLID] [-t TIMEOUT_MS] [-w WINDOW] [-v] < requests\n");
			return 2;
		}
	}
	struct req *reqs = calloc(MAX_REQ, sizeof(*reqs));
	int n = 0;
	char line[4096];
	while (n < MAX_REQ && fgets(line, sizeof(line), stdin)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (parse(line, &reqs[n], 0x5a000000u + (uint32_t)n) < 0) {
			fprintf(stderr, "sa_mad: request %d: malformed line\n", n + 1);
			return 2;
		}
		n++;
	}
	if (umad_init() < 0)
		return 1;
	umad_port_t port;
	if (umad_get_port(NULL, 0, &port) < 0) {
		fprintf(stderr, "sa_mad: no port\n");
		return 1;
	}
	sm_lid = (uint16_t)(smlid_arg ? (unsigned)smlid_arg : port.sm_lid);
	umad_release_port(&port);
	fd = umad_open_port(NULL, 0);
	agent = fd < 0 ? -1 : umad_register(fd, IB_SA_CLASS, 2, 1, NULL);
	if (agent < 0) {
		fprintf(stderr, "sa_mad: cannot open the port or register the SA class\n");
		return 1;
	}
	int next = 0, done = 0;
	while (done < n) {
		int flying = 0;
		for (int i = 0; i < next; i++)
			flying += reqs[i].state == 1;
		while (next < n && flying < window) {
			send_req(&reqs[next++], timeout_ms);
			flying++;
		}
		receive(reqs, next, 20);
		double t = now();
		done = 0;
		for (int i = 0; i < next; i++) {
			if (reqs[i].state == 1 && t > reqs[i].deadline) {
				reqs[i].state = 2;
				reqs[i].answer = strdup("timeout");
			}
			done += reqs[i].state == 2;
		}
	}
	for (int i = 0; i < n; i++) {
		printf("%s\n", reqs[i].answer);
		free(reqs[i].answer);
	}
	free(reqs);
	umad_close_port(fd);
	umad_done();
	return 0;
}
