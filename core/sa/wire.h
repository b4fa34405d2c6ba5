/* SPDX-License-Identifier: BSD-2-Clause */
/* wire.h - the SA's MAD format (IBA 15.2): methods, class status codes, the SA header (SM_Key,
 * AttributeOffset, ComponentMask) of a request, and the responses: one record (GetResp) or a
 * table sent as one RMPP transfer (GetTableResp), which the kernel segments (the agent is
 * registered with RMPP). */
#ifndef IBSM_SA_WIRE_H
#define IBSM_SA_WIRE_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "mad/dispatch.h"

#define SA_CLASS_VERSION 2
#define SA_HDR_SIZE 56            /* MAD 24 + RMPP 12 + SA 20: records start here */
#define SA_MAD_DATA 200           /* record bytes in one MAD */

enum sa_method {
	SA_GET = 0x01, SA_SET = 0x02, SA_GETRESP = 0x81, SA_REPORT = 0x06, SA_REPORTRESP = 0x86,
	SA_GETTABLE = 0x12, SA_GETTABLERESP = 0x92, SA_GETMULTI = 0x14, SA_GETMULTIRESP = 0x94,
	SA_DELETE = 0x15, SA_DELETERESP = 0x95,
};

/* MAD status: the generic codes in the low byte, the SA's class codes in bits 8-14 */
enum sa_status {
	SA_OK = 0,
	SA_BUSY = 0x0001,
	SA_BAD_VERSION = 0x0004,
	SA_UNSUP_METHOD = 0x0008,
	SA_UNSUP_METHOD_ATTR = 0x000C,
	SA_INVALID_FIELD = 0x001C,
	SA_ERR_NO_RESOURCES = 0x0100,
	SA_ERR_REQ_INVALID = 0x0200,
	SA_ERR_NO_RECORDS = 0x0300,
	SA_ERR_TOO_MANY_RECORDS = 0x0400,
	SA_ERR_REQ_INVALID_GID = 0x0500,
	SA_ERR_REQ_INSUFFICIENT_COMPONENTS = 0x0600,
	SA_ERR_REQ_DENIED = 0x0700,
};

/* A decoded request: header fields and its record (the MAD's data, SA_MAD_DATA bytes). */
struct sa_request {
	const struct mad_in *m;
	uint8_t method;
	uint16_t attr;
	uint32_t attr_mod;
	uint64_t sm_key;
	uint64_t comp_mask;
	const uint8_t *record;     /* the MAD's data: SA_MAD_DATA bytes, or more (an RMPP request) */
	size_t record_len;
	uint16_t slid;             /* the requester's LID and QPN (where the request came from) */
	uint32_t qpn;
};

/* Decodes m; 0, or the status to answer with (a wrong class version), or -1 when the MAD is
 * too short to answer at all (dropped). */
int sa_decode(const struct mad_in *m, struct sa_request *rq);

/* Answers rq with status and no record. */
int sa_respond_status(struct dispatch *d, const struct sa_request *rq, uint16_t status);
/* Answers a Get (or Set/Delete) with one record of rec_size bytes. */
int sa_respond_one(struct dispatch *d, const struct sa_request *rq, uint8_t method,
		   const uint8_t *rec, size_t rec_size);
/* Answers a GetTable or GetMulti (method: GetTableResp, GetMultiResp) with n records of
 * rec_size bytes each (packed at the AttributeOffset of rec_size rounded up to 8 bytes), as
 * one RMPP transfer. */
int sa_respond_table(struct dispatch *d, const struct sa_request *rq, uint8_t method,
		     const uint8_t *recs, uint32_t n, size_t rec_size);

/* A big-endian 64-bit field of a record (a GUID, half a GID). */
static inline uint64_t sa_be64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return be64toh(v);
}

/* Writes the GID prefix:guid at gid (16 bytes). */
static inline void sa_put_gid(uint8_t *gid, uint64_t prefix, uint64_t guid)
{
	uint64_t hi = htobe64(prefix), lo = htobe64(guid);
	memcpy(gid, &hi, 8);
	memcpy(gid + 8, &lo, 8);
}

/* AttributeOffset (in 8-byte words) of a record of rec_size bytes. */
static inline size_t sa_rec_stride(size_t rec_size)
{
	return (rec_size + 7) & ~(size_t)7;
}

#endif
