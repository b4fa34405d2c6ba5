/* SPDX-License-Identifier: BSD-2-Clause */
/* smp_req.h - one SMP request as callers hand it to the transport (mad/transport.h) and as the
 * encoder writes it into a umad buffer (mad/smp_encode.h): its own header, so that neither of
 * the two needs the other's. */
#ifndef IBSM_MAD_SMP_REQ_H
#define IBSM_MAD_SMP_REQ_H

#include <stdint.h>
#include "mad/ib.h"

struct transport;
struct smp_req;

/* status: 0 = success; > 0 = MAD status field (e.g. 0x1C); < 0 = -errno (-ETIMEDOUT after
 * the configured retries and, while other SMPs were answered meanwhile, more). data: the 64-byte SMP data of the response (NULL on failure). */
typedef void (*smp_done_fn)(struct transport *t, const struct smp_req *r, int status,
			    const uint8_t *data, void *ctx);

struct smp_req {
	uint8_t method;        /* IB_MAD_METHOD_GET / _SET */
	uint8_t dr;            /* directed route (else LID routed to dlid) */
	uint8_t hops;          /* DR: path[1..hops] */
	uint8_t path[SMP_DR_PATH_MAX];
	uint16_t dlid;
	uint16_t attr;
	uint32_t mod;
	uint64_t mkey;
	uint8_t data[SMP_DATA_SIZE]; /* payload of a Set */
	smp_done_fn done;
	void *ctx;
	uint64_t cookie;       /* caller's, e.g. node/port ids */
	uint8_t max_attempts;  /* 0: the transport's retries (and persisting); n: at most n attempts
	                        * (a vendor attribute a fabric may silently drop: vendor_qos.c) */
};

#endif
