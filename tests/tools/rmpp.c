/* SPDX-License-Identifier: BSD-2-Clause */
/* rmpp.c - RMPP for libibumad programs on the simulated test bed. umad2sim (libumad2sim.so,
 * which stands in for the kernel's umad device under ibsim) has none: it cuts every MAD to 256
 * bytes, so an SA GetTable answer (OpenSM sends it with RMPP) reaches saquery or osmtest as its
 * first segment alone, one record. This LD_PRELOAD shim, put BEFORE libumad2sim.so
 * (LD_PRELOAD="rmpp.so libumad2sim.so"), sits between libibumad and umad2sim and does what the
 * kernel's mad_rmpp.c does for an agent registered with a non-zero RMPP version: a send longer
 * than one MAD is segmented and sent under the receiver's window with retransmission, received
 * segments are ACKed and reassembled, and the whole message is read in one piece (a too-small
 * buffer gets -ENOSPC and the length it needs, as user_mad answers). STOP and ABORT drop a
 * transfer. For those agents it also does the MAD layer's request timeouts (umad2sim has none:
 * a request the SA leaves unanswered would be waited for forever, as osmtest -f v does).
 *
 * It wraps the libc calls libibumad makes on the umad device and umad2sim answers: ioctl
 * (IB_USER_MAD_REGISTER_AGENT tells which agents run RMPP), write, read, poll and close, on
 * umad2sim's descriptors (1024..2047) with such an agent; every other call goes straight
 * through, without a lock (umad2sim's own socket I/O comes back through these wrappers). And it
 * wraps libibmad's mad_get_field() to give back the last 32 bytes of each MAD, which umad2sim
 * loses (see restore_tail). The protocol itself is rmpp/rmpp_engine.c (unit-tested in
 * tests/unit/test_rmpp.c, as rmpp/tail_stash.c); this file is the I/O around it. Timers run
 * while the program is in poll() or read() on the port (libibumad's umad_recv, and OpenSM's
 * receiver thread always is): poll waits in slices of at most POLL_SLICE_MS.
 * RMPP_DEBUG=1 logs each transfer, and the counters at exit, on stderr; RMPP_DEBUG=2 also
 * every MAD to and from umad2sim. RMPP_SEGMENT_BYTES=224 makes segments fill only the part of
 * a MAD umad2sim delivers intact, should the lost bytes not come back (receivers take either). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <link.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include "rmpp/rmpp_engine.h"
#include "rmpp/tail_stash.h"

#define MAX_PORTS 16            /* umad file descriptors with an RMPP agent */
#define POLL_SLICE_MS 100       /* longest wait in poll() before timers are looked at */
#define UMAD2SIM_FD_FIRST 1024  /* umad2sim's umad descriptors are 1024..2047 */
#define UMAD2SIM_FD_END 2048
#define SCRATCH_LEN (sizeof(struct ib_user_mad) + 2048)

/* The kernel's struct ib_user_mad_reg_req (linux/ib_user_mad.h) as libibumad passes it. */
struct reg_req {
	uint32_t id;
	uint32_t method_mask[4];
	uint8_t qpn, mgmt_class, mgmt_class_version, oui[3], rmpp_version;
};
_Static_assert(offsetof(struct reg_req, mgmt_class) == 21, "ib_user_mad_reg_req layout");
_Static_assert(offsetof(struct reg_req, rmpp_version) == 26, "ib_user_mad_reg_req layout");
_Static_assert(sizeof(struct reg_req) == 28, "ib_user_mad_reg_req layout (the ioctl number has it)");
/* umad.h names the struct without defining it: the same numbers from ours */
#define REGISTER_AGENT _IOWR(IB_IOCTL_MAGIC, 1, struct reg_req)
#define UNREGISTER_AGENT _IOW(IB_IOCTL_MAGIC, 2, uint32_t)
_Static_assert(UNREGISTER_AGENT == IB_USER_MAD_UNREGISTER_AGENT, "ioctl numbers");

struct port {
	int fd;
	struct rmpp_engine *engine;
};

static struct port ports[MAX_PORTS];
static int n_ports;
/* tracked[fd - UMAD2SIM_FD_FIRST]: the descriptor has an engine. Read without the lock, so
 * that a call on any other descriptor never takes it: umad2sim's own read()/write() on its
 * sockets come back through these wrappers while it holds its device lock. */
static uint8_t tracked[UMAD2SIM_FD_END - UMAD2SIM_FD_FIRST];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t scratch[SCRATCH_LEN]; /* one MAD read from umad2sim, used under the lock */
static int debug;
static uint32_t segment_bytes = RMPP_MAD_SIZE;
static uint64_t tails_restored, tails_missed;  /* under the lock */

static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_write)(int, const void *, size_t);
static int (*real_poll)(struct pollfd *, nfds_t, int);
static int (*real_ioctl)(int, unsigned long, ...);
static int (*real_close)(int);
static pthread_once_t resolved = PTHREAD_ONCE_INIT;

static void resolve_real(void)
{
	real_read = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	real_write = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	real_poll = (int (*)(struct pollfd *, nfds_t, int))dlsym(RTLD_NEXT, "poll");
	real_ioctl = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
	const char *d = getenv("RMPP_DEBUG");
	debug = d && *d ? atoi(d) : 0;
	const char *b = getenv("RMPP_SEGMENT_BYTES");
	if (b && *b)
		segment_bytes = (uint32_t)strtoul(b, NULL, 0);
}

static void resolve(void)
{
	pthread_once(&resolved, resolve_real);
}

/* ---- ibsim's and umad2sim's ways, worked around for every program under the library ----
 * 1. umad2sim 0.10 hands each MAD its receiver thread reads to the descriptor registered for
 * the MAD's class, and a class nobody registered (yet) kills the process: it locks the queue
 * of a descriptor that does not exist. Such MADs come: ibsim seats the next process on a node
 * in the client slot the last one left, and routes a response by that slot, so a segment the
 * SA sends again for the previous saquery reaches the next one, which has not registered. The
 * kernel drops them. So, before main, the umad device is opened once and an agent registered
 * for each class the test bed carries, with no methods: what comes for a class the program
 * never registers, or before it does, waits in a queue nobody reads; the program's own agents
 * come after these and take their classes over.
 * 2. At exit umad2sim tells ibsim on its control socket, and ibsim may read that before the
 * last MADs on the data socket, which it then never reads: the final RMPP ACK of a saquery is
 * lost, and the SA sends its last segment again (see 1). So at exit, if the program sent
 * anything, a directed-route NodeInfo Get to its own port goes after it on the data socket, and
 * the answer is awaited: ibsim reads a client's data socket in order, so by then it has
 * everything before. (Only when the program did not register SMPs itself: the answer must
 * come to the catch-all agent.)
 * Only under ibsim (IBSIM_SOCKNAME set: the harness sets it for every simulated process);
 * RMPP_NO_CATCHALL=1 leaves both out. */
static uint64_t now_ms(void);
static int catchall_fd = -1;
static uint32_t catchall_dr_agent;
static volatile int program_has_dr, program_sent;

static void flush_to_ibsim(void)
{
	if (catchall_fd < 0 || program_has_dr || !program_sent)
		return;
	uint8_t buf[sizeof(struct ib_user_mad) + 256];
	memset(buf, 0, sizeof(buf));
	struct ib_user_mad *u = (struct ib_user_mad *)buf;
	uint8_t *m = buf + sizeof(*u);
	u->agent_id = catchall_dr_agent;
	u->addr.lid = htons(0xffff);            /* directed route */
	m[0] = 1; m[1] = 0x81; m[2] = 1; m[3] = 0x01;     /* SubnGet, hop count 0: to itself */
	const uint8_t tid[8] = { 0, 0, 0, 0, 0xf1, 0x05, 0x1b, 0x51 };
	memcpy(m + 8, tid, 8);
	m[16] = 0x00; m[17] = 0x11;             /* NodeInfo */
	m[32] = m[33] = m[34] = m[35] = 0xff;   /* DrSLID, DrDLID: permissive */
	if (real_write(catchall_fd, buf, sizeof(buf)) < 0)
		return;
	uint64_t end = now_ms() + 1000;
	while (now_ms() < end) {
		struct pollfd p = { .fd = catchall_fd, .events = POLLIN };
		if (real_poll(&p, 1, 50) <= 0)
			continue;
		uint8_t in[sizeof(struct ib_user_mad) + 2048];
		ssize_t n = real_read(catchall_fd, in, sizeof(in));
		if (n >= (ssize_t)(sizeof(struct ib_user_mad) + 16) && in[sizeof(*u) + 1] == 0x81 &&
		    !memcmp(in + sizeof(*u) + 12, tid + 4, 4))
			return;
	}
}

__attribute__((constructor)) static void catch_all_agents(void)
{
	const char *off = getenv("RMPP_NO_CATCHALL");
	if (!getenv("IBSIM_SOCKNAME") || (off && *off == '1'))
		return;
	resolve();
	int fd = open("/dev/infiniband/umad0", O_RDWR | O_NONBLOCK); /* umad2sim's, attaches to ibsim */
	if (fd < UMAD2SIM_FD_FIRST || fd >= UMAD2SIM_FD_END)
		return;
	static const uint8_t classes[] = { 0x81, 0x01, 0x03, 0x04 };
	for (size_t i = 0; i < sizeof(classes); i++) {
		struct reg_req r = { .qpn = classes[i] == 0x01 || classes[i] == 0x81 ? 0 : 1,
				     .mgmt_class = classes[i],
				     .mgmt_class_version = classes[i] == 0x03 ? 2 : 1 };
		if (real_ioctl(fd, REGISTER_AGENT, &r) == 0 && classes[i] == 0x81)
			catchall_dr_agent = r.id;
	}
	catchall_fd = fd;
	atexit(flush_to_ibsim); /* after umad2sim's own atexit (the open above): runs before it */
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Never through stdio: stderr's write() comes back here. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "rmpp[%d]: ", (int)getpid());
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	size_t len = strlen(line);
	line[len++] = '\n';
	if (real_write(STDERR_FILENO, line, len) < 0)
		return;
}

/* The lock, with cancellation held off: OpenSM stops its receiver thread with pthread_cancel
 * and umad2sim's write and poll are cancellation points. */
static int enter(void)
{
	int old;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	pthread_mutex_lock(&lock);
	return old;
}

static void leave(int old)
{
	pthread_mutex_unlock(&lock);
	pthread_setcancelstate(old, NULL);
}

/* ------------------------------------------------------------------ the engine's I/O */

/* RMPP_DEBUG=2: one line per MAD the program or the engine hands to umad2sim, and per MAD
 * read from it. */
static void trace_mad(int fd, const char *dir, const void *umad, size_t len)
{
	if (debug < 2 || len < sizeof(struct ib_user_mad) + RMPP_HDR_END)
		return;
	const struct ib_user_mad *u = umad;
	const uint8_t *m = u->data;
	say("fd %d: %s agent %u lid %u status %u: class 0x%02x method 0x%02x attr 0x%04x tid "
	    "0x%02x%02x%02x%02x%02x%02x%02x%02x rmpp v%u type %u flags 0x%x seg %u paylen/newwin %u, "
	    "%zu bytes", fd, dir, u->agent_id, ntohs(u->addr.lid), u->status, m[1], m[3],
	    m[16] << 8 | m[17], m[8], m[9], m[10], m[11], m[12], m[13], m[14], m[15], m[24], m[25],
	    m[26] & 7u, (unsigned)(m[28] << 24 | m[29] << 16 | m[30] << 8 | m[31]),
	    (unsigned)(m[32] << 24 | m[33] << 16 | m[34] << 8 | m[35]), len - sizeof(*u));
}

static int wire_send(void *ctx, const void *umad, size_t len)
{
	int fd = (int)(intptr_t)ctx;
	trace_mad(fd, "wire <-", umad, len);
	ssize_t n = real_write(fd, umad, len);
	return n == (ssize_t)len ? 0 : -EIO;
}

static void wire_log(void *ctx, const char *line)
{
	say("fd %d: %s", (int)(intptr_t)ctx, line);
}

static struct port *port_of(int fd)
{
	for (int i = 0; i < n_ports; i++)
		if (ports[i].fd == fd)
			return &ports[i];
	return NULL;
}

static struct rmpp_engine *engine_of(int fd)
{
	struct port *p = port_of(fd);
	return p ? p->engine : NULL;
}

static bool is_tracked(int fd)
{
	return fd >= UMAD2SIM_FD_FIRST && fd < UMAD2SIM_FD_END &&
	       __atomic_load_n(&tracked[fd - UMAD2SIM_FD_FIRST], __ATOMIC_ACQUIRE);
}

static struct rmpp_engine *engine_new_for(int fd)
{
	struct rmpp_engine *e = engine_of(fd);
	if (e || n_ports == MAX_PORTS || fd < UMAD2SIM_FD_FIRST || fd >= UMAD2SIM_FD_END)
		return e;
	struct rmpp_io io = { (void *)(intptr_t)fd, wire_send, debug ? wire_log : NULL };
	struct rmpp_config cfg;
	rmpp_config_default(&cfg);
	cfg.segment_bytes = segment_bytes;
	e = rmpp_engine_new(&io, &cfg);
	if (!e)
		return NULL;
	ports[n_ports].fd = fd;
	ports[n_ports].engine = e;
	n_ports++;
	__atomic_store_n(&tracked[fd - UMAD2SIM_FD_FIRST], 1, __ATOMIC_RELEASE);
	return e;
}

static void print_stats(int fd, const struct rmpp_engine *e)
{
	const struct rmpp_stats *s = rmpp_engine_stats(e);
	say("fd %d: messages sent %llu received %llu; segments sent %llu resent %llu received %llu "
	    "dropped %llu; ACKs sent %llu received %llu; ABORTs sent %llu received %llu, STOPs %llu; "
	    "timed out: sends %llu receives %llu; requests resent %llu timed out %llu", fd,
	    (unsigned long long)s->messages_sent, (unsigned long long)s->messages_received,
	    (unsigned long long)s->segments_sent, (unsigned long long)s->segments_resent,
	    (unsigned long long)s->segments_received, (unsigned long long)s->segments_dropped,
	    (unsigned long long)s->acks_sent, (unsigned long long)s->acks_received,
	    (unsigned long long)s->aborts_sent, (unsigned long long)s->aborts_received,
	    (unsigned long long)s->stops_received, (unsigned long long)s->sends_timed_out,
	    (unsigned long long)s->receives_timed_out, (unsigned long long)s->requests_resent,
	    (unsigned long long)s->requests_timed_out);
}

static void port_forget(int fd)
{
	struct port *p = port_of(fd);
	if (!p)
		return;
	if (debug)
		print_stats(fd, p->engine);
	rmpp_engine_free(p->engine);
	*p = ports[n_ports - 1];
	n_ports--;
	__atomic_store_n(&tracked[fd - UMAD2SIM_FD_FIRST], 0, __ATOMIC_RELEASE);
}

static void __attribute__((destructor)) rmpp_fini(void)
{
	if (!debug)
		return;
	int old = enter();
	for (int i = 0; i < n_ports; i++)
		print_stats(ports[i].fd, ports[i].engine);
	if (n_ports || tails_restored || tails_missed)
		say("MAD ends umad2sim lost: %llu put back, %llu not found",
		    (unsigned long long)tails_restored, (unsigned long long)tails_missed);
	leave(old);
}

/* ------------------------------------------------------------------ umad2sim's lost bytes */

/* umad2sim queues a received MAD in a buffer of struct sim_request's size (288 bytes), umad
 * header included: the MAD's bytes 224..255 never reach the program, which reads 32 bytes of
 * umad2sim's heap in their place (a NodeRecord's end, a ServiceRecord's data, every RMPP
 * segment's last 32 bytes). Its receiver thread does call libibmad's mad_get_field() on the
 * whole MAD first (to read the class): this wrapper keeps the end of each such MAD of an RMPP
 * class aside (rmpp/tail_stash.c), and pump() writes it back into what umad2sim hands over. */
static uint32_t (*real_mad_get_field)(void *, int, enum MAD_FIELDS);
static uintptr_t umad2sim_lo, umad2sim_hi;  /* umad2sim's code */
static pthread_once_t umad2sim_found = PTHREAD_ONCE_INIT;

static int find_umad2sim_code(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libumad2sim"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			umad2sim_lo = info->dlpi_addr + ph->p_vaddr;
			umad2sim_hi = umad2sim_lo + ph->p_memsz;
		}
	}
	return 1;
}

static void find_umad2sim(void)
{
	real_mad_get_field = (uint32_t (*)(void *, int, enum MAD_FIELDS))dlsym(RTLD_NEXT, "mad_get_field");
	dl_iterate_phdr(find_umad2sim_code, NULL);
}

uint32_t mad_get_field(void *buf, int base_offs, enum MAD_FIELDS field)
{
	pthread_once(&umad2sim_found, find_umad2sim);
	if (field == IB_MAD_MGMTCLASS_F && base_offs == 0 && buf) {
		uintptr_t caller = (uintptr_t)__builtin_return_address(0);
		if (caller >= umad2sim_lo && caller < umad2sim_hi &&
		    rmpp_is_rmpp_class(((const uint8_t *)buf)[1]))
			tail_stash_put(buf);
	}
	return real_mad_get_field ? real_mad_get_field(buf, base_offs, field) : 0;
}

/* UMAD (LEN bytes, as umad2sim handed it over) gets its MAD's end back. */
static void restore_tail(uint8_t *umad, size_t len)
{
	const size_t hdr = sizeof(struct ib_user_mad);
	if (len <= hdr + TAIL_STASH_KEPT || ((const struct ib_user_mad *)umad)->status ||
	    !rmpp_is_rmpp_class(umad[hdr + 1]))
		return;
	if (tail_stash_restore(umad + hdr, len - hdr))
		tails_restored++;
	else
		tails_missed++;
}

/* Moves what umad2sim holds for FD into the engine until a message is ready for the program
 * or umad2sim has nothing more; returns umad2sim's last answer (and its errno in *ERR) when it
 * ran dry, 0 when a message is ready. */
static ssize_t pump(int fd, struct rmpp_engine *e, uint64_t now, int *err)
{
	while (!rmpp_engine_pending(e)) {
		ssize_t n = real_read(fd, scratch, sizeof(scratch));
		if (n <= 0) {
			*err = errno;
			return n;
		}
		restore_tail(scratch, (size_t)n);
		trace_mad(fd, "wire ->", scratch, (size_t)n);
		rmpp_engine_receive(e, scratch, (size_t)n, now);
	}
	return 0;
}

/* ------------------------------------------------------------------ the wrapped calls */

static void track_agent(int fd, unsigned long request, void *arg)
{
	int old = enter();
	if (request == REGISTER_AGENT) {
		const struct reg_req *q = arg;
		if (q->mgmt_class == 0x81)
			program_has_dr = 1;
		if (q->rmpp_version && rmpp_is_rmpp_class(q->mgmt_class)) {
			struct rmpp_engine *e = engine_new_for(fd);
			int rc = e ? rmpp_engine_add_agent(e, q->id, q->mgmt_class, q->rmpp_version) : -ENOMEM;
			if (debug || rc < 0)
				say("fd %d: agent %u class 0x%02x RMPP version %u: %s", fd, q->id, q->mgmt_class,
				    q->rmpp_version, rc < 0 ? "NOT handled (no room)" : "RMPP on");
		}
	} else {
		struct rmpp_engine *e = engine_of(fd);
		if (e)
			rmpp_engine_remove_agent(e, *(const uint32_t *)arg);
	}
	leave(old);
}

int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	resolve();
	bool umad_fd = fd >= UMAD2SIM_FD_FIRST && fd < UMAD2SIM_FD_END;
	/* held back, as the close below: see there */
	int rc = umad_fd && request == UNREGISTER_AGENT ? 0 : real_ioctl(fd, request, arg);
	if (rc == 0 && arg && umad_fd && (request == REGISTER_AGENT || request == UNREGISTER_AGENT)) {
		int saved = errno;
		track_agent(fd, request, arg);
		errno = saved;
	}
	return rc;
}

ssize_t write(int fd, const void *buf, size_t count)
{
	resolve();
	if (fd >= UMAD2SIM_FD_FIRST && fd < UMAD2SIM_FD_END)
		program_sent = 1;
	if (!is_tracked(fd))
		return real_write(fd, buf, count);
	int saved = errno;
	int old = enter();
	struct rmpp_engine *e = engine_of(fd);
	int rc = e ? rmpp_engine_send(e, buf, count, now_ms()) : 1;
	leave(old);
	errno = saved;
	if (rc == 1) {
		trace_mad(fd, "wire <-", buf, count);
		return real_write(fd, buf, count);
	}
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	return (ssize_t)count;
}

ssize_t read(int fd, void *buf, size_t count)
{
	resolve();
	if (!is_tracked(fd))
		return real_read(fd, buf, count);
	int saved = errno;
	int old = enter();
	struct rmpp_engine *e = engine_of(fd);
	if (!e) {
		leave(old);
		errno = saved;
		return real_read(fd, buf, count);
	}
	uint64_t now = now_ms();
	rmpp_engine_tick(e, now);
	int err = saved;
	ssize_t dry = pump(fd, e, now, &err);
	bool ready = rmpp_engine_pending(e) > 0;
	ssize_t n = ready ? rmpp_engine_read(e, buf, count) : dry;
	leave(old);
	if (!ready) {
		errno = err;
		return n;  /* umad2sim's own answer when it has nothing (-EWOULDBLOCK as a value) */
	}
	errno = saved;
	if (n < 0) {
		errno = (int)-n;  /* -ENOSPC (or -EINVAL), as user_mad's read */
		return -1;
	}
	return n;
}

/* umad2sim's poll waits on the first umad descriptor of the set alone; so does this one, in
 * slices, running the timers and pumping between them. */
int poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	resolve();
	nfds_t idx = nfds;
	for (nfds_t i = 0; i < nfds && idx == nfds; i++)
		if (fds[i].fd >= UMAD2SIM_FD_FIRST && fds[i].fd < UMAD2SIM_FD_END)
			idx = i;
	if (idx == nfds || !is_tracked(fds[idx].fd))
		return real_poll(fds, nfds, timeout);
	int saved = errno, old, failures = 0;
	int fd = fds[idx].fd;
	uint64_t deadline = timeout < 0 ? UINT64_MAX : now_ms() + (uint64_t)timeout;
	for (;;) {
		old = enter();
		struct rmpp_engine *e = engine_of(fd);
		uint64_t now = now_ms(), next = UINT64_MAX;
		bool ready = false;
		if (e) {
			int err;
			rmpp_engine_tick(e, now);
			pump(fd, e, now, &err);
			ready = rmpp_engine_pending(e) > 0;
			next = rmpp_engine_next_deadline(e);
		}
		leave(old);
		errno = saved;
		if (!e)  /* closed meanwhile */
			return real_poll(fds, nfds, deadline == UINT64_MAX ? -1 :
					 (int)(deadline > now ? deadline - now : 0));
		if (ready || now >= deadline) {
			for (nfds_t i = 0; i < nfds; i++)
				fds[i].revents = 0;
			if (ready)
				fds[idx].revents = POLLIN;
			return ready ? 1 : 0;
		}
		uint64_t wake = now + POLL_SLICE_MS;
		if (deadline < wake)
			wake = deadline;
		if (next < wake)
			wake = next > now ? next : now;
		/* umad2sim answers -1 when woken with nothing queued: another thread's read() took
		 * it. Look again, unless it keeps saying so. */
		int rc = real_poll(fds, nfds, (int)(wake - now));
		if (rc < 0 && ++failures > 100)
			return rc;
		if (rc >= 0)
			failures = 0;
	}
}

/* A umad descriptor is never really closed (nor its agents unregistered, above): umad2sim
 * 0.10's receiver thread looks up the queue of the agent a MAD is for and locks it before it
 * checks it exists, so a MAD that comes after the close (a late answer to a request this
 * library resent, a last RMPP ACK) kills the process, its output unflushed. The kernel drops
 * such a MAD; here it lands in a queue nobody reads until the process exits. */
int close(int fd)
{
	resolve();
	if (is_tracked(fd)) {
		int saved = errno;
		int old = enter();
		port_forget(fd);
		leave(old);
		errno = saved;
	}
	if (fd >= UMAD2SIM_FD_FIRST && fd < UMAD2SIM_FD_END)
		return 0;
	return real_close(fd);
}
