/* SPDX-License-Identifier: BSD-2-Clause */
/* wire.c - decoding SA requests and sending their responses (sa/wire.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include "sa/wire.h"

#define RMPP_TYPE_DATA 1
#define RMPP_FLAG_ACTIVE 0x1
#define RMPP_FLAG_FIRST 0x2
#define RMPP_FLAG_LAST 0x4

int sa_decode(const struct mad_in *m, struct sa_request *rq)
{
	memset(rq, 0, sizeof(*rq));
	rq->m = m;
	if (m->len < (int)umad_size() + IB_SA_DATA_OFFS)
		return -1;
	rq->method = m->method;
	rq->attr = m->attr;
	rq->attr_mod = m->attr_mod;
	if (m->class_version != SA_CLASS_VERSION)
		return SA_BAD_VERSION;
	rq->sm_key = mad_get_field64(m->mad, 0, IB_SA_MKEY_F);
	rq->comp_mask = mad_get_field64(m->mad, 0, IB_SA_COMPMASK_F);
	rq->record = m->mad + IB_SA_DATA_OFFS;
	rq->record_len = (size_t)(m->len - (int)umad_size() - IB_SA_DATA_OFFS);
	const ib_mad_addr_t *a = umad_get_mad_addr((void *)m->umad);
	rq->slid = ntohs(a->lid);
	rq->qpn = ntohl(a->qpn) & 0xFFFFFF;
	return 0;
}

/* A response to rq of `payload` record bytes: a fresh umad whose addressing is the request's
 * (the response goes back to where it came from), the MAD header turned into a response. A
 * single MAD is MAD_SIZE bytes; an RMPP transfer (rmpp) has exactly its length, which is how
 * the receiver counts the records. */
static uint8_t *response(const struct sa_request *rq, uint8_t method, uint16_t status,
			 size_t payload, int rmpp, int *len)
{
	size_t mad_len = IB_SA_DATA_OFFS + payload;
	if (mad_len < MAD_SIZE && !rmpp)
		mad_len = MAD_SIZE;
	*len = (int)(umad_size() + mad_len);
	uint8_t *buf = calloc(1, (size_t)*len);
	if (!buf)
		return NULL;
	memcpy(buf, rq->m->umad, umad_size());
	uint8_t *mad = umad_get_mad(buf);
	memcpy(mad, rq->m->mad, IB_SA_DATA_OFFS);
	mad[3] = method;
	mad_set_field(mad, 0, IB_MAD_STATUS_F, status);
	memset(mad + 24, 0, 12); /* RMPP header */
	mad_set_field(mad, 0, IB_SA_ATTROFFS_F, 0);
	umad_set_grh(buf, NULL);
	return buf;
}

static int send_free(struct dispatch *d, const struct sa_request *rq, uint8_t *buf, int len)
{
	int rc = transport_send_raw(dispatch_transport(d), rq->m->mgmt_class, buf, len);
	free(buf);
	return rc;
}

int sa_respond_status(struct dispatch *d, const struct sa_request *rq, uint16_t status)
{
	int len;
	uint8_t method = dispatch_response_method(rq->method);
	int table = method == SA_GETTABLERESP || method == SA_GETMULTIRESP;
	uint8_t *buf = response(rq, method, status, 0, table, &len);
	if (!buf)
		return -ENOMEM;
	if (!table && rq->record && rq->record_len) { /* the request's record, as OpenSM answers */
		size_t n = rq->record_len < SA_MAD_DATA ? rq->record_len : SA_MAD_DATA;
		memcpy(umad_get_mad(buf) + IB_SA_DATA_OFFS, rq->record, n);
	}
	if (table) { /* a table answer is an RMPP transfer even when empty */
		uint8_t *mad = umad_get_mad(buf);
		mad_set_field(mad, 0, IB_SA_RMPP_VERS_F, 1);
		mad_set_field(mad, 0, IB_SA_RMPP_TYPE_F, RMPP_TYPE_DATA);
		mad_set_field(mad, 0, IB_SA_RMPP_FLAGS_F, RMPP_FLAG_ACTIVE | RMPP_FLAG_FIRST | RMPP_FLAG_LAST);
	}
	return send_free(d, rq, buf, len);
}

int sa_respond_one(struct dispatch *d, const struct sa_request *rq, uint8_t method,
		   const uint8_t *rec, size_t rec_size)
{
	int len;
	uint8_t *buf = response(rq, method, SA_OK, SA_MAD_DATA, 0, &len);
	if (!buf)
		return -ENOMEM;
	uint8_t *mad = umad_get_mad(buf);
	memset(mad + IB_SA_DATA_OFFS, 0, SA_MAD_DATA);
	memcpy(mad + IB_SA_DATA_OFFS, rec, rec_size < SA_MAD_DATA ? rec_size : SA_MAD_DATA);
	mad_set_field(mad, 0, IB_SA_ATTROFFS_F, (uint32_t)(sa_rec_stride(rec_size) / 8));
	return send_free(d, rq, buf, len);
}

int sa_respond_table(struct dispatch *d, const struct sa_request *rq, uint8_t method,
		     const uint8_t *recs, uint32_t n, size_t rec_size)
{
	size_t stride = sa_rec_stride(rec_size);
	int len;
	uint8_t *buf = response(rq, method, SA_OK, stride * n, 1, &len);
	if (!buf)
		return -ENOMEM;
	uint8_t *mad = umad_get_mad(buf);
	for (uint32_t i = 0; i < n; i++)
		memcpy(mad + IB_SA_DATA_OFFS + i * stride, recs + i * rec_size, rec_size);
	mad_set_field(mad, 0, IB_SA_ATTROFFS_F, (uint32_t)(stride / 8));
	mad_set_field(mad, 0, IB_SA_RMPP_VERS_F, 1);
	mad_set_field(mad, 0, IB_SA_RMPP_TYPE_F, RMPP_TYPE_DATA);
	mad_set_field(mad, 0, IB_SA_RMPP_FLAGS_F, RMPP_FLAG_ACTIVE | RMPP_FLAG_FIRST | RMPP_FLAG_LAST);
	/* segment numbers and payload lengths are the kernel's (RMPP agent): left 0 here */
	return send_free(d, rq, buf, len);
}
