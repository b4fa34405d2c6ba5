/* SPDX-License-Identifier: BSD-2-Clause */
/* smprate.c - the trivial SMP client: sends directed-route NodeInfo Gets with a window and
 * counts answers per second. `make bench` reports its rate as the ceiling any SM can reach
 * through umad2sim and ibsim on this machine.
 *
 * With -r TRACE it sends instead the SMP requests (Get and Set, directed-route or LID-routed)
 * an SM sent, as tests/tools/smpcount.so recorded them (SMPCOUNT_TRACE), in their order and as
 * they were, only faster: no waiting on the replies, the window always full. That is the
 * ceiling for that SM's own mix of SMPs (hops, attributes, Sets) on that ibsim, which is what
 * `make bench` divides the SM's bring-up time by.
 *
 * With -W NS it spins NS nanoseconds of its own CPU after each answer: an SM's own work per SMP
 * (decoding the answer, updating its model, building the next request), to measure how the
 * ceiling falls with the work a client does between its calls.
 *
 * With -b N a window with SMPs in flight is refilled only once N slots are free, the N sent back
 * to back (bench/results/pin-2026-11-28.md: measured against one send per answer).
 *
 * usage: smprate [-n COUNT] [-w WINDOW] [-p HOPS] [-r TRACE] [-W NS] [-b N]  (under LD_PRELOAD=libumad2sim.so)
 * prints: smps=<answered> seconds=<s> rate=<smps per second> lost=<n> cpu_us=<user+sys of all
 * threads, umad2sim's receiver included, while sending> vcsw=<voluntary> ivcsw=<involuntary
 * context switches meanwhile> (bench/flame.py --counts divides them by the SMPs)
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/umad.h>
#include <infiniband/umad_sm.h>
#include <infiniband/umad_types.h>
#include "../tests/tools/smp_trace.h"

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


/* The SMP requests of a trace (sent, SMI classes, Get or Set); *n set. NULL on failure. */
static struct trace_rec *load_trace(const char *path, long *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	static char buf[1 << 20]; /* a read per MB (glibc ignores the size without a buffer) */
	setvbuf(f, buf, _IOFBF, sizeof(buf));
	long cap = 1 << 16, k = 0;
	struct trace_rec *v = malloc(cap * sizeof(*v)), r;
	while (v && fread(&r, sizeof(r), 1, f) == 1) {
		uint8_t cls = r.mad[1], method = r.mad[3];
		if (r.direction != 0 || (cls != UMAD_CLASS_SUBN_DIRECTED_ROUTE && cls != UMAD_CLASS_SUBN_LID_ROUTED) ||
		    (method != UMAD_METHOD_GET && method != UMAD_METHOD_SET))
			continue;
		if (k == cap) {
			struct trace_rec *w = realloc(v, 2 * cap * sizeof(*v));
			if (!w) {
				free(v);
				v = NULL;
				break;
			}
			v = w;
			cap *= 2;
		}
		v[k++] = r;
	}
	fclose(f);
	*n = k;
	return v;
}

/* The client's own work per answer: CPU spent, not a sleep (-W). */
static void spin_ns(long ns)
{
	double until = now_seconds() + ns / 1e9;

	while (now_seconds() < until)
		;
}

int main(int argc, char **argv)
{
	long count = 100000, window = 32, sent = 0, answered = 0, inflight = 0;
	int hops = 1, opt, fd, agent, lid_agent, len, count_given = 0;
	void *send_buf, *recv_buf;
	double start, seconds;
	const char *trace = NULL;
	struct trace_rec *recs = NULL;
	long nrecs = 0;

	long work_ns = 0;

	long batch = 1;

	while ((opt = getopt(argc, argv, "n:w:p:r:W:b:")) != -1) {
		switch (opt) {
		case 'n': count = strtol(optarg, NULL, 0); count_given = 1; break;
		case 'w': window = strtol(optarg, NULL, 0); break;
		case 'p': hops = atoi(optarg); break;
		case 'r': trace = optarg; break;
		case 'W': work_ns = strtol(optarg, NULL, 0); break;
		case 'b': batch = strtol(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: %s [-n COUNT] [-w WINDOW] [-p HOPS] [-r TRACE] [-W NS] [-b N]\n", argv[0]);
			return 2;
		}
	}
	if (trace) {
		recs = load_trace(trace, &nrecs);
		if (!recs || nrecs == 0) {
			fprintf(stderr, "smprate: %s: no SMP requests to send again\n", trace);
			return 1;
		}
		if (!count_given || count > nrecs)
			count = nrecs;
	}
	if (count < 1 || window < 1 || hops < 0 || hops >= UMAD_SMP_MAX_HOPS || work_ns < 0 || batch < 1) {
		fprintf(stderr, "smprate: bad -n, -w, -p, -W or -b\n");
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
	lid_agent = umad_register(fd, UMAD_CLASS_SUBN_LID_ROUTED, 1, 0, NULL);
	if (agent < 0 || lid_agent < 0) {
		fprintf(stderr, "smprate: umad_register: %s\n", strerror(-(agent < 0 ? agent : lid_agent)));
		return 1;
	}
	send_buf = calloc(1, umad_size() + sizeof(struct umad_smp));
	recv_buf = calloc(1, umad_size() + sizeof(struct umad_smp));
	if (!send_buf || !recv_buf)
		return 1;

	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	start = now_seconds();
	while (answered < count) {
		/* -b: with SMPs in flight, wait until `batch` slots are free */
		int refill = !inflight || inflight <= window - batch;
		while (refill && sent < count && inflight < window) {
			int via = agent;
			if (recs) {
				/* the SM's request as it was, under our own TID */
				const struct trace_rec *r = &recs[sent];
				struct umad_smp *smp = umad_get_mad(send_buf);
				memcpy(smp, r->mad, sizeof(*smp));
				smp->tid = htobe64((uint64_t)sent + 1);
				if (r->mad[1] == UMAD_CLASS_SUBN_LID_ROUTED) {
					umad_set_addr(send_buf, r->lid, 0, 0, 0);
					via = lid_agent;
				} else {
					umad_set_addr(send_buf, PERMISSIVE_LID, 0, 0, 0);
				}
			} else {
				smp_build_node_info_get(send_buf, sent + 1, hops);
			}
			if (umad_send(fd, via, send_buf, sizeof(struct umad_smp), 0, 0) < 0) {
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
		if (work_ns)
			spin_ns(work_ns);
	}
	seconds = now_seconds() - start;
	getrusage(RUSAGE_SELF, &ru1);
	long cpu_us = (ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec + ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) * 1000000L +
		      ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec + ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec;
	printf("smps=%ld seconds=%.3f rate=%.0f lost=%ld cpu_us=%ld vcsw=%ld ivcsw=%ld\n", answered, seconds,
	       seconds > 0 ? answered / seconds : 0.0, sent - answered, cpu_us, ru1.ru_nvcsw - ru0.ru_nvcsw,
	       ru1.ru_nivcsw - ru0.ru_nivcsw);
	umad_unregister(fd, agent);
	umad_unregister(fd, lid_agent);
	umad_close_port(fd);
	free(recs);
	umad_done();
	free(send_buf);
	free(recv_buf);
	return answered == count ? 0 : 1;
}
