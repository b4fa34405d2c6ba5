/* SPDX-License-Identifier: BSD-2-Clause */
/* smp_encode.c - SMP requests into umad buffers, whole or by the fields that differ
 * (smp_encode.h). */
#include <string.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include "mad/smp_encode.h"

int smp_encode_whole(struct smp_buf *b, const struct smp_req *r, uint32_t trid, int timeout_ms)
{
	ib_rpc_t rpc;
	ib_portid_t pid;
	memset(&rpc, 0, sizeof(rpc));
	memset(&pid, 0, sizeof(pid));
	memset(b->umad, 0, (size_t)b->len);
	b->mgtclass = 0;
	rpc.mgtclass = r->dr ? IB_SMI_DIRECT_CLASS : IB_SMI_CLASS;
	rpc.method = r->method;
	rpc.attr.id = r->attr;
	rpc.attr.mod = r->mod;
	rpc.timeout = (unsigned)timeout_ms;
	rpc.datasz = IB_SMP_DATA_SIZE;
	rpc.dataoffs = IB_SMP_DATA_OFFS;
	rpc.mkey = r->mkey;
	rpc.trid = trid;
	if (r->dr) {
		pid.drpath.cnt = r->hops;
		memcpy(pid.drpath.p, r->path, sizeof(pid.drpath.p));
		pid.drpath.p[0] = 0;
		pid.drpath.drslid = 0xffff;
		pid.drpath.drdlid = 0xffff;
	} else {
		pid.lid = r->dlid;
	}
	uint8_t data[IB_SMP_DATA_SIZE];
	memcpy(data, r->data, sizeof(data)); /* a Get carries data too (SMInfo: SM_Key) */
	if (mad_build_pkt(b->umad, &rpc, &pid, NULL, data) < 0)
		return -1;
	b->mgtclass = rpc.mgtclass;
	return rpc.mgtclass;
}

int smp_encode(struct smp_buf *b, const struct smp_req *r, uint32_t trid, int timeout_ms)
{
	int mgtclass = r->dr ? IB_SMI_DIRECT_CLASS : IB_SMI_CLASS;
	/* a request, never a response: mad_encode's response bit, hop pointer and direction stay
	 * 0, status 0, DrSLID and DrDLID 0xffff, the versions and the class as last encoded */
	if (b->mgtclass != mgtclass || r->method & IB_MAD_RESPONSE || (r->dr && r->hops >= IB_SUBNET_PATH_HOPS_MAX))
		return smp_encode_whole(b, r, trid, timeout_ms);
	uint8_t *mad = umad_get_mad(b->umad);
	mad_set_field(mad, 0, IB_MAD_METHOD_F, r->method);
	mad_set_field64(mad, 0, IB_MAD_TRID_F, trid);
	mad_set_field(mad, 0, IB_MAD_ATTRID_F, r->attr);
	mad_set_field(mad, 0, IB_MAD_ATTRMOD_F, r->mod);
	mad_set_field64(mad, 0, IB_MAD_MKEY_F, r->mkey);
	if (r->dr) {
		uint8_t path[IB_SUBNET_PATH_HOPS_MAX];
		memcpy(path, r->path, sizeof(path));
		path[0] = 0;
		mad_set_field(mad, 0, IB_DRSMP_HOPCNT_F, r->hops);
		mad_set_array(mad, 0, IB_DRSMP_PATH_F, path);
		umad_set_addr(b->umad, 0xffff, 0, 0, 0);
	} else {
		umad_set_addr(b->umad, r->dlid, 0, 0, 0);
	}
	memcpy(mad + IB_SMP_DATA_OFFS, r->data, IB_SMP_DATA_SIZE);
	(void)timeout_ms; /* mad_build_pkt does not write it either: umad_send does */
	return mgtclass;
}
