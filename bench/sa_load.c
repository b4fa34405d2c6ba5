/* SPDX-License-Identifier: BSD-2-Clause */
/* sa_load.c - an SA load client for the benchmark (bench/sa_bench.py): keeps W single
 * PathRecord queries (SubnAdmGet, by SLID and DLID, pairs drawn at random from LIDs 1..N)
 * outstanding against the SM's SA for D seconds and reports what came back and how fast.
 *   sa_load -n MAXLID [-w WINDOW] [-d SECONDS] [-t TIMEOUT_MS] [-r SEED] [-T] [-S MS] [-K N]
 * SIGTERM or SIGINT ends a run early: no new query, the ones in flight answered or timed out,
 * then the figures of what was done.
 * A query is answered when the response with its TID comes (any status: 0, NO_RECORDS for a
 * LID no port holds, BUSY are counted apart); one that gets nothing within the timeout counts
 * as timed out and its slot is reused. Latency: from the send to the answer. Output, one line:
 *   sent S answered A ok O norecords N busy B other X timeouts T seconds W qps Q
 *   p50_ms P p99_ms P max_ms M max_sent_at S start_epoch E
 * (max_sent_at: when the slowest query was sent, in seconds from the start, whose wall clock
 * is start_epoch: to find in the SM's log what held it up), then the slowest answers, slowest
 * first: every one over -S MS (default 50), at most -K N (default 20) of them, or the 5 slowest
 * when none is over, each with its send time on the wall clock (what the SM's log lines carry):
 *   slow_over_ms S count C listed L
 *   slow sent_epoch E.UUUUUU ms M client_waited_ms W client_window_ms Y
 *   timeout sent_epoch E.UUUUUU      (the first -K N queries that got no answer in time)
 * (count: all answers over S ms; W: how long this client waited for a CPU (schedstat, read at
 * most every 10 ms) over Y ms that hold the answer's send and arrival, -1 when unknown: its own
 * share of the delay. tests/chaos/chaos.py matches each against the SM's MAD-0003 stalls)
 * and with -T one line per second of the run (by completion time):
 *   t SEC answered A p50_ms P p99_ms P max_ms M
 * so that a sweep that stops the SA shows as a gap. libibumad only (MAD fields by hand). */
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/umad.h>

#define MAD_SIZE 256
#define SA_CLASS 0x03
#define PR_ATTR 0x0035
#define SA_DATA 56
#define PR_COMP_DLID (1ULL << 4)
#define PR_COMP_SLID (1ULL << 5)

struct slot {
	int busy;
	uint32_t tid;
	double sent;
};

struct done {
	double at, lat;
};

/* This thread's wait for a CPU (ns, /proc/thread-self/schedstat's 2nd field) at time t */
struct sched_mark {
	double t;
	uint64_t wait_ns;
};

static struct sched_mark *marks;
static size_t n_marks, cap_marks;
static int sched_fd = -2;

static void sched_mark(double t)
{
	if (n_marks && t - marks[n_marks - 1].t < 0.010)
		return;
	if (sched_fd == -2)
		sched_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	char buf[128];
	ssize_t len = sched_fd < 0 ? -1 : pread(sched_fd, buf, sizeof(buf) - 1, 0);
	if (len <= 0)
		return;
	buf[len] = 0;
	unsigned long long run, wait;
	if (sscanf(buf, "%llu %llu", &run, &wait) != 2)
		return;
	if (n_marks == cap_marks) {
		size_t cap = cap_marks ? 2 * cap_marks : 4096;
		struct sched_mark *m = realloc(marks, cap * sizeof(*m));
		if (!m)
			return;
		marks = m;
		cap_marks = cap;
	}
	marks[n_marks].t = t;
	marks[n_marks++].wait_ns = wait;
}

/* waited ms over the marks around [from, to] (the last at or before from, the first at or
 * after to); -1 when the marks do not hold it */
static double sched_waited(double from, double to, double *window_ms)
{
	size_t lo = 0, hi = n_marks;
	while (lo < hi) { /* first mark with t > from */
		size_t mid = (lo + hi) / 2;
		if (marks[mid].t <= from)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	size_t i = lo - 1, j = i;
	while (j < n_marks && marks[j].t < to)
		j++;
	if (j == n_marks)
		return -1;
	*window_ms = (marks[j].t - marks[i].t) * 1000;
	return (double)(marks[j].wait_ns - marks[i].wait_ns) / 1e6;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rng;
static uint32_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* p-th percentile (0..1) of v[0..n) sorted in place; 0 when empty */
static double pct(double *v, size_t n, double p)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	size_t i = (size_t)(p * (double)(n - 1) + 0.5);
	return v[i];
}

static int cmp_done_lat_desc(const void *a, const void *b)
{
	double x = ((const struct done *)a)->lat, y = ((const struct done *)b)->lat;
	return x > y ? -1 : x < y;
}

/* The slowest answers, slowest first: those over slow_ms (at most slow_max), else the 5
 * slowest; sent on the wall clock = epoch0 + (at - lat) since t0. Sorts only those (a probe
 * of a whole chaos run answers millions). */
static void print_slowest(const struct done *dn, size_t n, double slow_ms, int slow_max, double epoch0)
{
	size_t over = 0, k = 0;
	for (size_t i = 0; i < n; i++)
		over += dn[i].lat * 1000 > slow_ms;
	struct done *v = malloc((over > 5 ? over : 5) * sizeof(*v));
	if (!v)
		return;
	for (size_t i = 0; i < n; i++) {
		if (over) {
			if (dn[i].lat * 1000 > slow_ms)
				v[k++] = dn[i];
		} else if (k < 5) {
			v[k++] = dn[i];
		} else { /* keep the 5 slowest: replace the fastest kept */
			size_t m = 0;
			for (size_t j = 1; j < 5; j++)
				if (v[j].lat < v[m].lat)
					m = j;
			if (dn[i].lat > v[m].lat)
				v[m] = dn[i];
		}
	}
	qsort(v, k, sizeof(*v), cmp_done_lat_desc);
	if (over && k > (size_t)slow_max)
		k = (size_t)slow_max;
	printf("slow_over_ms %.3f count %zu listed %zu\n", slow_ms, over, k);
	for (size_t i = 0; i < k; i++) {
		double window = -1, waited = sched_waited(v[i].at - v[i].lat, v[i].at, &window);
		printf("slow sent_epoch %.6f ms %.3f client_waited_ms %.1f client_window_ms %.1f\n",
		       epoch0 + v[i].at - v[i].lat, v[i].lat * 1000, waited, window);
	}
	free(v);
}

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)(v >> 16)); put16(p + 2, (uint16_t)v); }
static void put64(uint8_t *p, uint64_t v) { put32(p, (uint32_t)(v >> 32)); put32(p + 4, (uint32_t)v); }

static volatile sig_atomic_t term_seen;

static void on_term(int sig)
{
	(void)sig;
	term_seen = 1;
}

int main(int argc, char **argv)
{
	int window = 1, timeout_ms = 2000, timeline = 0, maxlid = 0, slow_max = 20;
	double duration = 10, slow_ms = 50;
	rng = 0x9E3779B97F4A7C15ULL;
	int c;
	while ((c = getopt(argc, argv, "n:w:d:t:r:TS:K:")) != -1) {
		if (c == 'n')
			maxlid = atoi(optarg);
		else if (c == 'w')
			window = atoi(optarg);
		else if (c == 'd')
			duration = atof(optarg);
		else if (c == 't')
			timeout_ms = atoi(optarg);
		else if (c == 'r')
			rng = strtoull(optarg, NULL, 0) | 1;
		else if (c == 'T')
			timeline = 1;
		else if (c == 'S')
			slow_ms = atof(optarg);
		else if (c == 'K')
			slow_max = atoi(optarg);
		else {
			fprintf(stderr, "usage: sa_load -n MAXLID [-w WINDOW] [-d SECONDS] [-t TIMEOUT_MS] "
				"[-r SEED] [-T] [-S MS] [-K N]\n");
			return 2;
		}
	}
	if (maxlid < 1 || window < 1 || window > 4096 || slow_max < 0) {
		fprintf(stderr, "sa_load: -n MAXLID (>= 1), a window of 1..4096 and -K N >= 0 needed\n");
		return 2;
	}
	umad_port_t port;
	if (umad_init() < 0 || umad_get_port(NULL, 0, &port) < 0) {
		fprintf(stderr, "sa_load: no port\n");
		return 1;
	}
	uint16_t sm_lid = (uint16_t)port.sm_lid;
	umad_release_port(&port);
	int fd = umad_open_port(NULL, 0);
	int agent = fd < 0 ? -1 : umad_register(fd, SA_CLASS, 2, 0, NULL);
	if (agent < 0) {
		fprintf(stderr, "sa_load: cannot open the port or register the SA class\n");
		return 1;
	}
	struct slot *slots = calloc((size_t)window, sizeof(*slots));
	size_t cap = 1 << 16, n_done = 0;
	struct done *dn = malloc(cap * sizeof(*dn));
	uint8_t *sbuf = calloc(1, umad_size() + MAD_SIZE), *rbuf = calloc(1, umad_size() + 4096);
	if (!slots || !dn || !sbuf || !rbuf)
		return 1;
	double *lost = malloc((size_t)(slow_max + 1) * sizeof(*lost));
	size_t n_lost = 0;
	if (!lost)
		return 1;
	uint64_t sent = 0, ok = 0, norec = 0, busy = 0, other = 0, timeouts = 0;
	uint32_t seq = 1;
	struct timespec wall0;
	clock_gettime(CLOCK_REALTIME, &wall0);
	double t0 = now_s(), end = t0 + duration;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	double epoch0 = (double)wall0.tv_sec + wall0.tv_nsec / 1e9;
	for (;;) {
		double t = now_s();
		sched_mark(t - t0);
		if (term_seen && end > t)
			end = t; /* SIGTERM: no new queries, the ones in flight answered, then the figures */
		int active = 0;
		for (int i = 0; i < window; i++) {
			struct slot *s = &slots[i];
			if (s->busy && t - s->sent > timeout_ms / 1000.0) {
				s->busy = 0;
				timeouts++;
				if (n_lost < (size_t)slow_max)
					lost[n_lost++] = s->sent - t0;
			}
			if (!s->busy && t < end) {
				uint8_t *m = umad_get_mad(sbuf);
				memset(m, 0, MAD_SIZE);
				m[0] = 1;
				m[1] = SA_CLASS;
				m[2] = 2;
				m[3] = 0x01; /* SubnAdmGet */
				s->tid = ((seq++ & 0xFFFF) << 16) | (uint32_t)i;
				put32(m + 12, s->tid);
				put16(m + 16, PR_ATTR);
				put64(m + 48, PR_COMP_DLID | PR_COMP_SLID);
				put16(m + SA_DATA + 40, (uint16_t)(1 + next_rand() % (uint32_t)maxlid));
				put16(m + SA_DATA + 42, (uint16_t)(1 + next_rand() % (uint32_t)maxlid));
				umad_set_addr(sbuf, sm_lid, 1, 0, 0x80010000);
				s->sent = now_s();
				if (umad_send(fd, agent, sbuf, MAD_SIZE, timeout_ms, 0) < 0) {
					other++;
					continue;
				}
				s->busy = 1;
				sent++;
			}
			active += s->busy;
		}
		if (!active && t >= end)
			break;
		int len = 4096; /* the MAD room after the umad header */
		if (umad_recv(fd, rbuf, &len, 5) < 0)
			continue;
		if (umad_status(rbuf))
			continue; /* the MAD layer's timeout of one of ours: counted by our own clock */
		const uint8_t *m = umad_get_mad(rbuf);
		if (!(m[3] & 0x80))
			continue;
		uint32_t tid = (uint32_t)m[12] << 24 | (uint32_t)m[13] << 16 | (uint32_t)m[14] << 8 | m[15];
		uint32_t i = tid & 0xFFFF;
		if (i >= (uint32_t)window || !slots[i].busy || slots[i].tid != tid)
			continue; /* a late answer to a query already given up */
		double at = now_s();
		sched_mark(at - t0);
		slots[i].busy = 0;
		uint16_t status = (uint16_t)(m[4] << 8 | m[5]);
		if (!status)
			ok++;
		else if (status & 0x0001)
			busy++;
		else if ((status & 0x7F00) == 0x0300)
			norec++;
		else
			other++;
		if (n_done == cap) {
			cap *= 2;
			dn = realloc(dn, cap * sizeof(*dn));
			if (!dn)
				return 1;
		}
		dn[n_done].at = at - t0;
		dn[n_done++].lat = at - slots[i].sent;
	}
	double wall = now_s() - t0;
	double slowest_at = 0, slowest = -1;
	for (size_t i = 0; i < n_done; i++)
		if (dn[i].lat > slowest) {
			slowest = dn[i].lat;
			slowest_at = dn[i].at - dn[i].lat;
		}
	double *lat = malloc((n_done + 1) * sizeof(*lat));
	if (!lat)
		return 1;
	for (size_t i = 0; i < n_done; i++)
		lat[i] = dn[i].lat * 1000;
	double p50 = pct(lat, n_done, 0.50), p99 = pct(lat, n_done, 0.99), mx = n_done ? lat[n_done - 1] : 0;
	printf("sent %llu answered %zu ok %llu norecords %llu busy %llu other %llu timeouts %llu "
	       "seconds %.3f qps %.0f p50_ms %.3f p99_ms %.3f max_ms %.3f max_sent_at %.3f "
	       "start_epoch %.3f\n",
	       (unsigned long long)sent, n_done, (unsigned long long)ok, (unsigned long long)norec,
	       (unsigned long long)busy, (unsigned long long)other, (unsigned long long)timeouts, wall,
	       n_done / (wall > 0 ? wall : 1), p50, p99, mx, slowest_at, epoch0);
	print_slowest(dn, n_done, slow_ms, slow_max, epoch0);
	for (size_t i = 0; i < n_lost; i++)
		printf("timeout sent_epoch %.6f\n", epoch0 + lost[i]);
	if (timeline) {
		int secs = (int)wall + 1;
		for (int sec = 0; sec < secs; sec++) {
			size_t k = 0;
			for (size_t i = 0; i < n_done; i++)
				if ((int)dn[i].at == sec)
					lat[k++] = dn[i].lat * 1000;
			double a = pct(lat, k, 0.50), b = pct(lat, k, 0.99), m = k ? lat[k - 1] : 0;
			printf("t %d answered %zu p50_ms %.3f p99_ms %.3f max_ms %.3f\n", sec, k, a, b, m);
		}
	}
	umad_close_port(fd);
	umad_done();
	free(lat);
	free(dn);
	free(marks);
	free(lost);
	free(slots);
	free(sbuf);
	free(rbuf);
	return 0;
}
