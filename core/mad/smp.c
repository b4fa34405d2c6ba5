/* SPDX-License-Identifier: BSD-2-Clause */
/* smp.c - the SMP request builder every reader and writer of the core uses. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/mad.h>
#include "mad/smp.h"

void smp_req_init(struct smp_req *r, uint8_t method, uint16_t attr, uint32_t mod,
		  smp_done_fn done, void *ctx, uint64_t cookie)
{
	memset(r, 0, sizeof(*r));
	r->method = method;
	r->dr = 1;
	r->attr = attr;
	r->mod = mod;
	r->done = done;
	r->ctx = ctx;
	r->cookie = cookie;
}

void smp_req_route_dr(struct smp_req *r, uint8_t hops, const uint8_t *path)
{
	r->dr = 1;
	r->hops = hops < SMP_DR_HOPS_MAX ? hops : SMP_DR_HOPS_MAX;
	memcpy(r->path, path, sizeof(r->path));
	r->path[0] = 0;
}

int smp_req_route_append(struct smp_req *r, uint8_t port)
{
	if (r->hops >= SMP_DR_HOPS_MAX)
		return -E2BIG;
	r->path[++r->hops] = port;
	return 0;
}

const char *smp_method_name(uint8_t method)
{
	return method == IB_MAD_METHOD_SET ? "Set" : "Get";
}

void smp_status_text(int status, char *buf, size_t len)
{
	if (status < 0)
		snprintf(buf, len, "%s", strerror(-status));
	else
		snprintf(buf, len, "status 0x%02x", (unsigned)status);
}
