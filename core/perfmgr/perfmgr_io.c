/* SPDX-License-Identifier: BSD-2-Clause */
/* perfmgr_io.c - the perfmgr on the real port: its GMPs (class 0x04, LID-routed to QP1 with the
 * well-known Q_Key, IBA 13.5.3) go out through the transport as raw MADs, and the answers come
 * back through the MAD dispatch (GetResp of class 0x04), so no thread and no socket of its own. */
#include <string.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include "mad/transport.h"
#include "perfmgr/perfmgr.h"

struct pm_io {
	struct transport *t;
	uint8_t *umad;
	int umad_len;
};

static int io_send(void *ctx, uint16_t dlid, const uint8_t *mad, size_t len)
{
	struct pm_io *io = ctx;
	memset(io->umad, 0, (size_t)io->umad_len);
	memcpy(umad_get_mad(io->umad), mad, MIN(len, (size_t)MAD_SIZE));
	umad_set_addr(io->umad, dlid, 1, 0, IB_DEFAULT_QP1_QKEY);
	return transport_send_raw(io->t, IB_PERFORMANCE_CLASS, io->umad, io->umad_len);
}

static void on_answer(struct dispatch *d, const struct mad_in *m, void *ctx)
{
	(void)d;
	int len = m->len - (int)umad_size();
	if (len > 0)
		perfmgr_on_mad(ctx, m->mad, (size_t)len);
}

static void io_free(void *ctx)
{
	struct pm_io *io = ctx;
	g_free(io->umad);
	g_free(io);
}

struct perfmgr *perfmgr_new_dispatch(const struct perfmgr_cfg *c, struct dispatch *d)
{
	struct pm_io *io = g_new0(struct pm_io, 1);
	io->umad_len = transport_umad_len();
	io->umad = g_malloc0((size_t)io->umad_len);
	io->t = dispatch_transport(d);
	struct perfmgr *pm = perfmgr_new(c, io_send, io);
	perfmgr_own(pm, d, io_free);
	dispatch_register(d, IB_PERFORMANCE_CLASS, IB_MAD_METHOD_GET_RESPONSE, DISPATCH_ANY_ATTR, on_answer, pm);
	return pm;
}
