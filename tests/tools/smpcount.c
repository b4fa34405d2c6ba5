/* SPDX-License-Identifier: BSD-2-Clause */
/* smpcount.c - an SMP counter outside the SM, so the simulated tests judge what an SM sends by
 * watching the wire, not by its own statistics. An LD_PRELOAD shim put BEFORE libumad2sim.so:
 * it wraps libibumad's umad_send() and umad_recv(), decodes each MAD (management class, method,
 * attribute, modifier, directed route or LID) and counts it in a file named by SMPCOUNT_FILE
 * that a test reads while the SM runs. It never changes a MAD, a return value or errno.
 *
 * The file is a fixed-size counter space, mmap()ed MAP_SHARED and updated with atomic
 * operations, so it is always current and every process that loads the shim with the same
 * SMPCOUNT_FILE (an SM that forks with -B, a restart) adds to the same counts. Layout (native
 * byte order, x86_64 little-endian; tests/sim/harness.py reads it):
 *
 *   header, 64 bytes: magic "SMPCNT1\n", u32 version (1), u32 header size (64),
 *     u32 total slots, u32 total slot size (16), u32 detail slots, u32 detail slot size (96),
 *     u64 umad_send calls that failed, u64 MADs received with a non-zero umad status,
 *     u64 MADs too short to decode, u64 counts lost because a table was full
 *   totals: {u64 key, u64 count}; key = 1<<63 | direction<<32 | class<<24 | method<<16 | attr
 *     (direction 0: sent by umad_send with success, 1: received by umad_recv), 0 = free slot
 *   details, one per distinct sent MAD that is not a Get of an SM class (Sets, GetResp,
 *     TrapRepress...): u64 state (0 free, 1 being filled, 2 ready), u64 count, u8 class,
 *     u8 method, u16 attr, u32 attribute modifier, u16 LID (LID-routed) or 0, u8 hop count,
 *     u8 flags (1: directed route), u16 DrSLID, u16 DrDLID, u8 initial path[64] (0..hops).
 *
 * SMPCOUNT_TRACE names a second, optional output: every SMP (classes 0x01 and 0x81; every MAD
 * with SMPCOUNT_TRACE_ALL=1) sent or received, one 280-byte
 * record each, appended with one write() (O_APPEND, so processes sharing the file do not tear
 * records): u64 CLOCK_MONOTONIC ns, u32 pid, u8 direction (0 sent, 1 received), u8 umad status
 * (0 or 1: non-zero), u16 MAD length, u16 LID of the umad address (network order undone),
 * u8 pad[6], then the first 256 bytes of the MAD (zero-filled). bench/repair_bench.py reads
 * it to time a repair from the trap to the last LFT block acknowledged; bench/smprate.c -r
 * sends an SM's requests again to measure the ceiling for its mix; a test may compare the MADs
 * two SMs sent. With SMPCOUNT_TRACE_BUFFER=1 records are written 256 at a time (and at exit),
 * a write per MAD being too dear for a bring-up of a million SMPs; the file is then complete
 * only once the process has exited. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/umad.h>
#include "smp_trace.h"

#define SMPCOUNT_MAGIC "SMPCNT1\n"
#define SMPCOUNT_VERSION 1
#define N_TOTALS 1024
#define N_DETAILS 16384
#define MAD_HDR_LEN 24     /* common MAD header: class, method, attribute id and modifier */
#define SMP_LEN 256
#define CLASS_SM_LID 0x01
#define CLASS_SM_DR 0x81
#define METHOD_GET 0x01
#define DIR_SENT 0
#define DIR_RECEIVED 1

struct header {
	char magic[8];
	uint32_t version, header_size;
	uint32_t n_totals, total_size;
	uint32_t n_details, detail_size;
	uint64_t send_failed, recv_bad_status, undecodable, overflow;
};

struct total {
	uint64_t key, count;
};

struct detail {
	uint64_t state, count;
	uint8_t mgmt_class, method;
	uint16_t attr;
	uint32_t attr_mod;
	uint16_t lid;
	uint8_t hops, flags;
	uint16_t dr_slid, dr_dlid;
	uint8_t path[64];
};

_Static_assert(sizeof(struct header) == 64, "header layout is read by harness.py");
_Static_assert(sizeof(struct total) == 16, "total slot layout is read by harness.py");
_Static_assert(sizeof(struct detail) == 96, "detail slot layout is read by harness.py");
_Static_assert(offsetof(struct detail, path) == 32, "detail slot layout is read by harness.py");

#define MAP_BYTES (sizeof(struct header) + N_TOTALS * sizeof(struct total) + N_DETAILS * sizeof(struct detail))


static int trace_fd = -1;
static int trace_all;
/* getpid() is a system call (glibc keeps no copy): once per record it was two more per SMP
 * than the SM makes, in the very bring-up make bench times. Read at start and in a child. */
static uint32_t trace_pid;

static void trace_pid_refresh(void)
{
	trace_pid = (uint32_t)getpid();
}
#define TRACE_BUF_RECS 256
static struct trace_rec *trace_buf; /* SMPCOUNT_TRACE_BUFFER=1: records not yet written */
static unsigned trace_buffered;
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;

static void trace_flush_locked(void)
{
	if (trace_buffered) {
		ssize_t w = write(trace_fd, trace_buf, trace_buffered * sizeof(*trace_buf));
		(void)w;
		trace_buffered = 0;
	}
}

static void __attribute__((destructor)) trace_fini(void)
{
	if (trace_fd < 0 || !trace_buf)
		return;
	pthread_mutex_lock(&trace_lock);
	trace_flush_locked();
	pthread_mutex_unlock(&trace_lock);
}
static struct header *map_hdr;
static struct total *map_totals;
static struct detail *map_details;

typedef int (*umad_send_fn)(int, int, void *, int, int, int);
typedef int (*umad_recv_fn)(int, void *, int *, int);
static umad_send_fn real_send;
static umad_recv_fn real_recv;

/* Maps SMPCOUNT_FILE, creating and sizing it under an flock() if it is new; leaves the map
 * NULL (nothing is counted) if the variable is unset or the file is not a counter file. */
static void __attribute__((constructor)) smpcount_init(void)
{
	const char *tpath = getenv("SMPCOUNT_TRACE");
	trace_pid_refresh();
	pthread_atfork(NULL, NULL, trace_pid_refresh); /* -B: the SM forks before any MAD */
	if (tpath && *tpath) {
		const char *all = getenv("SMPCOUNT_TRACE_ALL");
		trace_all = all && !strcmp(all, "1");
		const char *buf = getenv("SMPCOUNT_TRACE_BUFFER");
		if (buf && !strcmp(buf, "1"))
			trace_buf = malloc(TRACE_BUF_RECS * sizeof(*trace_buf));
		trace_fd = open(tpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (trace_fd < 0)
			fprintf(stderr, "smpcount: %s: %s; not tracing\n", tpath, strerror(errno));
	}
	const char *path = getenv("SMPCOUNT_FILE");
	if (!path || !*path)
		return;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "smpcount: %s: %s; not counting\n", path, strerror(errno));
		return;
	}
	struct stat st;
	int ok = flock(fd, LOCK_EX) == 0 && fstat(fd, &st) == 0;
	if (ok && st.st_size == 0)
		ok = ftruncate(fd, (off_t)MAP_BYTES) == 0 && fstat(fd, &st) == 0;
	void *m = ok && st.st_size == (off_t)MAP_BYTES ?
		  mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
	if (m != MAP_FAILED) {
		struct header *h = m;
		if (h->version == 0) { /* new file: all zero, fill the header */
			h->header_size = sizeof(struct header);
			h->n_totals = N_TOTALS;
			h->total_size = sizeof(struct total);
			h->n_details = N_DETAILS;
			h->detail_size = sizeof(struct detail);
			memcpy(h->magic, SMPCOUNT_MAGIC, 8);
			__atomic_store_n(&h->version, SMPCOUNT_VERSION, __ATOMIC_RELEASE);
		}
		if (memcmp(h->magic, SMPCOUNT_MAGIC, 8) || h->version != SMPCOUNT_VERSION ||
		    h->n_totals != N_TOTALS || h->n_details != N_DETAILS) {
			munmap(m, MAP_BYTES);
			m = MAP_FAILED;
		}
	}
	if (m == MAP_FAILED) {
		fprintf(stderr, "smpcount: %s is not an smpcount file of this version; not counting\n", path);
	} else {
		map_hdr = m;
		map_totals = (struct total *)(map_hdr + 1);
		map_details = (struct detail *)(map_totals + N_TOTALS);
	}
	flock(fd, LOCK_UN);
	close(fd); /* the mapping stays */
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static void count_total(int direction, uint8_t mgmt_class, uint8_t method, uint16_t attr)
{
	uint64_t key = 1ULL << 63 | (uint64_t)direction << 32 | (uint64_t)mgmt_class << 24 |
		       (uint64_t)method << 16 | attr;
	for (uint32_t i = 0, s = (uint32_t)(mix64(key) % N_TOTALS); i < N_TOTALS; i++, s = (s + 1) % N_TOTALS) {
		uint64_t cur = __atomic_load_n(&map_totals[s].key, __ATOMIC_ACQUIRE);
		if (cur == 0) {
			uint64_t expected = 0;
			if (__atomic_compare_exchange_n(&map_totals[s].key, &expected, key, 0, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE))
				cur = key;
			else
				cur = expected;
		}
		if (cur == key) {
			__atomic_add_fetch(&map_totals[s].count, 1, __ATOMIC_RELAXED);
			return;
		}
	}
	__atomic_add_fetch(&map_hdr->overflow, 1, __ATOMIC_RELAXED);
}

static int same_detail(const struct detail *a, const struct detail *b)
{
	return a->mgmt_class == b->mgmt_class && a->method == b->method && a->attr == b->attr &&
	       a->attr_mod == b->attr_mod && a->lid == b->lid && a->hops == b->hops &&
	       a->flags == b->flags && a->dr_slid == b->dr_slid && a->dr_dlid == b->dr_dlid &&
	       !memcmp(a->path, b->path, sizeof(a->path));
}

static void count_detail(const struct detail *d)
{
	uint64_t hash = 1469598103934665603ULL; /* FNV-1a over the key fields */
	const uint8_t *p = (const uint8_t *)&d->mgmt_class;
	for (size_t i = 0; i < sizeof(*d) - offsetof(struct detail, mgmt_class); i++)
		hash = (hash ^ p[i]) * 1099511628211ULL;
	for (uint32_t i = 0, s = (uint32_t)(hash % N_DETAILS); i < N_DETAILS; i++, s = (s + 1) % N_DETAILS) {
		struct detail *slot = &map_details[s];
		uint64_t state = __atomic_load_n(&slot->state, __ATOMIC_ACQUIRE);
		if (state == 0) {
			uint64_t expected = 0;
			if (__atomic_compare_exchange_n(&slot->state, &expected, 1, 0, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE)) {
				memcpy(&slot->mgmt_class, &d->mgmt_class,
				       sizeof(*d) - offsetof(struct detail, mgmt_class));
				__atomic_store_n(&slot->state, 2, __ATOMIC_RELEASE);
				__atomic_add_fetch(&slot->count, 1, __ATOMIC_RELAXED);
				return;
			}
			state = expected;
		}
		/* another thread or process is filling this slot: wait for it (it is a memcpy away) */
		for (int spin = 0; state == 1 && spin < 100000; spin++) {
			sched_yield();
			state = __atomic_load_n(&slot->state, __ATOMIC_ACQUIRE);
		}
		if (state == 2 && same_detail(slot, d)) {
			__atomic_add_fetch(&slot->count, 1, __ATOMIC_RELAXED);
			return;
		}
	}
	__atomic_add_fetch(&map_hdr->overflow, 1, __ATOMIC_RELAXED);
}

/* Counts one MAD (UMAD: libibumad's buffer, a struct ib_user_mad then the MAD itself). */
static void count_mad(int direction, const void *umad, int mad_len)
{
	const struct ib_user_mad *u = umad;
	const uint8_t *mad = u->data;
	if (mad_len < MAD_HDR_LEN) {
		__atomic_add_fetch(&map_hdr->undecodable, 1, __ATOMIC_RELAXED);
		return;
	}
	uint8_t mgmt_class = mad[1], method = mad[3];
	uint16_t attr = (uint16_t)(mad[16] << 8 | mad[17]);
	count_total(direction, mgmt_class, method, attr);
	int sm_class = mgmt_class == CLASS_SM_LID || mgmt_class == CLASS_SM_DR;
	if (direction != DIR_SENT || (sm_class && method == METHOD_GET))
		return;
	struct detail d;
	memset(&d, 0, sizeof(d));
	d.mgmt_class = mgmt_class;
	d.method = method;
	d.attr = attr;
	d.attr_mod = (uint32_t)mad[20] << 24 | (uint32_t)mad[21] << 16 | (uint32_t)mad[22] << 8 | mad[23];
	if (mgmt_class == CLASS_SM_DR && mad_len >= SMP_LEN) {
		d.flags = 1;
		d.hops = mad[7] & 0x3f;
		d.dr_slid = (uint16_t)(mad[32] << 8 | mad[33]);
		d.dr_dlid = (uint16_t)(mad[34] << 8 | mad[35]);
		memcpy(d.path, mad + 128, (size_t)d.hops + 1);
		d.path[0] = 0;
	} else {
		d.lid = ntohs(u->addr.lid);
	}
	count_detail(&d);
}

/* One trace record (SMPCOUNT_TRACE); umad is libibumad's buffer, mad_len the MAD bytes. */
static void trace_mad(int direction, const void *umad, int mad_len)
{
	const struct ib_user_mad *u = umad;
	if (mad_len < 2 || (!trace_all && u->data[1] != CLASS_SM_LID && u->data[1] != CLASS_SM_DR))
		return;
	struct trace_rec r;
	struct timespec ts;
	memset(&r, 0, sizeof(r));
	clock_gettime(CLOCK_MONOTONIC, &ts);
	r.ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	r.pid = trace_pid;
	r.direction = (uint8_t)direction;
	r.bad_status = u->status != 0;
	r.len = (uint16_t)(mad_len < 0 ? 0 : mad_len);
	r.lid = ntohs(u->addr.lid);
	memcpy(r.mad, u->data, mad_len < 0 ? 0 : mad_len > 256 ? 256 : (size_t)mad_len);
	if (trace_buf) {
		pthread_mutex_lock(&trace_lock);
		trace_buf[trace_buffered++] = r;
		if (trace_buffered == TRACE_BUF_RECS)
			trace_flush_locked();
		pthread_mutex_unlock(&trace_lock);
		return;
	}
	ssize_t w = write(trace_fd, &r, sizeof(r));
	(void)w;
}

int umad_send(int portid, int agentid, void *umad, int length, int timeout_ms, int retries)
{
	if (!real_send)
		real_send = (umad_send_fn)dlsym(RTLD_NEXT, "umad_send");
	if (!real_send) {
		errno = ENOSYS;
		return -ENOSYS;
	}
	/* decoded from a copy taken before the send: once umad_send returns, a threaded SM
	 * (OpenSM) may already reuse the buffer for the answer */
	uint8_t copy[sizeof(struct ib_user_mad) + 256];
	int copied = length < 0 ? 0 : length > 256 ? 256 : length; /* MAD bytes */
	if ((map_hdr || trace_fd >= 0) && umad)
		memcpy(copy, umad, sizeof(struct ib_user_mad) + (size_t)copied);
	int rc = real_send(portid, agentid, umad, length, timeout_ms, retries);
	if (trace_fd >= 0 && umad && rc >= 0) {
		int saved = errno;
		trace_mad(DIR_SENT, copy, copied);
		errno = saved;
	}
	if (map_hdr) {
		int saved = errno;
		if (rc < 0)
			__atomic_add_fetch(&map_hdr->send_failed, 1, __ATOMIC_RELAXED);
		else
			count_mad(DIR_SENT, copy, copied);
		errno = saved;
	}
	return rc;
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
	if (trace_fd >= 0 && rc >= 0 && umad && length) {
		int saved = errno;
		trace_mad(DIR_RECEIVED, umad, *length);
		errno = saved;
	}
	if (map_hdr && rc >= 0 && umad && length) {
		int saved = errno;
		if (((const struct ib_user_mad *)umad)->status)
			__atomic_add_fetch(&map_hdr->recv_bad_status, 1, __ATOMIC_RELAXED);
		else
			count_mad(DIR_RECEIVED, umad, *length);
		errno = saved;
	}
	return rc;
}
