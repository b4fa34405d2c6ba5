/* SPDX-License-Identifier: BSD-2-Clause */
/* device.c - the real umad port under the transport: registration of the classes the SM sends
 * and serves (one agent each), the issm device, and send/receive/wait for the transport. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include "mad/device.h"

#define UMAD_METHOD_MASK_BITS 128 /* umad_register()'s method mask: 16 bytes */

struct smdev {
	int fd, issm_fd;
	int agent_dr, agent_lid, agent_sa;
	int agent_perf;        /* PerfMgt (class 0x04) requests of the perfmgr, < 0: none */
	int agent_cc;          /* Congestion Control (class 0x21) Sets (program/cc.h), < 0: none */
};

static int dev_send(void *ctx, int mgmt_class, void *umad, int len, int timeout_ms)
{
	struct smdev *d = ctx;
	int agent = mgmt_class == IB_SMI_DIRECT_CLASS ? d->agent_dr :
		    mgmt_class == IB_SMI_CLASS ? d->agent_lid :
		    mgmt_class == IB_PERFORMANCE_CLASS ? d->agent_perf :
		    mgmt_class == IB_CC_CLASS ? d->agent_cc : d->agent_sa;
	int rc = umad_send(d->fd, agent, umad, len - (int)umad_size(), timeout_ms, 0);
	return rc < 0 ? rc : 0;
}

static int dev_wait(void *ctx, int timeout_ms)
{
	struct smdev *d = ctx;
	struct pollfd p = { .fd = d->fd, .events = POLLIN };
	int rc = poll(&p, 1, timeout_ms);
	return rc > 0 && (p.revents & POLLIN) ? 1 : 0;
}

static int dev_recv(void *ctx, void *umad, int *len, int timeout_ms)
{
	struct smdev *d = ctx;
	/* Without a wait umad_recv() only reads (libibumad polls only for a timeout), and the read
	 * never blocks: the port is opened O_NONBLOCK (umad_open_port), and umad2sim's read of an
	 * empty queue returns -EWOULDBLOCK. A poll first would only take umad2sim's two locks
	 * once more per MAD, against its receiver thread. */
	if (timeout_ms && !dev_wait(ctx, timeout_ms))
		return -EAGAIN;
	int mlen = *len - (int)umad_size();
	int rc = umad_recv(d->fd, umad, &mlen, 0);
	if (rc < 0)
		return rc;
	if (umad_status(umad) == EAGAIN)
		return -EAGAIN;
	*len = mlen + (int)umad_size();
	return 0;
}

/* The request methods we serve for a class, as umad_register()'s bit mask. Responses need no
 * registration (they match our own requests), so only request methods go in. */
static void method_mask(long mask[UMAD_METHOD_MASK_BITS / (8 * sizeof(long))], const int *methods,
			size_t n)
{
	const size_t bits = 8 * sizeof(long);
	memset(mask, 0, UMAD_METHOD_MASK_BITS / 8);
	for (size_t i = 0; i < n; i++) {
		g_assert(methods[i] >= 0 && methods[i] < UMAD_METHOD_MASK_BITS);
		mask[(size_t)methods[i] / bits] |= 1L << ((size_t)methods[i] % bits);
	}
}

static struct smdev *open_fail(struct smdev *d, char *err, size_t errlen, const char *fmt,
			       const char *ca, int port, int errnum)
{
	snprintf(err, errlen, fmt, ca, port, strerror(errnum));
	if (d->fd >= 0)
		umad_close_port(d->fd);
	g_free(d);
	return NULL;
}

struct smdev *smdev_open(const char *ca, int port, char *err, size_t errlen)
{
	struct smdev *d = g_new0(struct smdev, 1);
	d->issm_fd = -1;
	d->fd = umad_open_port(ca, port);
	if (d->fd < 0)
		return open_fail(d, err, errlen, "cannot open umad device of %s port %d: %s", ca, port,
				 -d->fd);
	/* SMPs we serve: SMInfo Get/Set, traps (and the TrapRepress of another SM) */
	static const int smi_methods[] = { IB_MAD_METHOD_GET, IB_MAD_METHOD_SET, IB_MAD_METHOD_TRAP,
					   IB_MAD_METHOD_TRAP_REPRESS };
	/* SA requests come to the issm holder; umad2sim's receiver thread crashes on a MAD for
	 * an unregistered class, so the class is registered even before the SA answers */
	static const int sa_methods[] = { IB_MAD_METHOD_GET, IB_MAD_METHOD_SET, IB_MAD_METHOD_GET_TABLE,
					  IB_MAD_METHOD_DELETE, IB_MAD_METHOD_REPORT,
					  IB_MAD_METHOD_GETMULTI };
	long mask[UMAD_METHOD_MASK_BITS / (8 * sizeof(long))];
	method_mask(mask, smi_methods, G_N_ELEMENTS(smi_methods));
	d->agent_dr = umad_register(d->fd, IB_SMI_DIRECT_CLASS, 1, 0, mask);
	d->agent_lid = umad_register(d->fd, IB_SMI_CLASS, 1, 0, mask);
	method_mask(mask, sa_methods, G_N_ELEMENTS(sa_methods));
	d->agent_sa = umad_register(d->fd, IB_SA_CLASS, 2, 1, mask);
	/* the perfmgr's Gets and Sets: it serves no PerfMgt request, so no method; its answers
	 * match its requests (and umad2sim needs the class registered to deliver them) */
	memset(mask, 0, sizeof(mask));
	d->agent_perf = umad_register(d->fd, IB_PERFORMANCE_CLASS, 1, 0, mask);
	/* the same for congestion control's Sets (class version 2, as OpenSM binds it) */
	d->agent_cc = umad_register(d->fd, IB_CC_CLASS, 2, 0, mask);
	int bad = d->agent_dr < 0 ? d->agent_dr : d->agent_lid < 0 ? d->agent_lid : d->agent_sa;
	if (bad < 0)
		return open_fail(d, err, errlen, "cannot register the SMI and SA classes on %s port %d (%s): "
				 "is another SM running on this port?", ca, port, -bad);
	char path[256];
	if (umad_get_issm_path(ca, port, path, sizeof(path)) < 0 ||
	    (d->issm_fd = open(path, O_RDWR)) < 0)
		return open_fail(d, err, errlen, "cannot open the issm device of %s port %d (%s): "
				 "is another SM running on this port?", ca, port, errno);
	return d;
}

void smdev_close(struct smdev *d)
{
	if (!d)
		return;
	if (d->issm_fd >= 0)
		close(d->issm_fd);
	umad_close_port(d->fd);
	g_free(d);
}

void smdev_release_at_exit(struct smdev *d)
{
	if (!d)
		return;
	if (d->issm_fd >= 0) /* IsSM off now: a standby need not wait for our SMInfo to fail */
		close(d->issm_fd);
	/* d->fd stays open: the kernel closes it, agents and all, as the process ends */
	g_free(d);
}

void smdev_io(struct smdev *d, struct transport_io *io)
{
	io->ctx = d;
	io->send = dev_send;
	io->recv = dev_recv;
	io->wait = dev_wait;
}
