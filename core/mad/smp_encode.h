/* SPDX-License-Identifier: BSD-2-Clause */
/* smp_encode.h - an SMP request into a umad buffer, by libibmad (mad_build_pkt and its fields).
 * A buffer the transport sends again and again (one per window slot) keeps what every request of
 * one management class shares (versions, status, hop pointer, DrSLID/DrDLID): a request of the
 * class the buffer last held rewrites only the fields that differ between requests (6 of
 * mad_encode's 15, no clearing of the buffer): a bring-up sends half a million SMPs
 * (IBA 13.4.3, 14.2.1). */
#ifndef IBSM_MAD_SMP_ENCODE_H
#define IBSM_MAD_SMP_ENCODE_H

#include <stdint.h>
#include "mad/smp_req.h"

struct smp_buf {
	uint8_t *umad;   /* umad_size() + 256 bytes */
	int len;
	int mgtclass;    /* of the request last encoded whole into it; 0: none */
};

/* Encodes request r with transaction ID trid into b: whole (mad_build_pkt over a cleared buffer)
 * the first time and when the class changes, else only its own fields. The bytes are the same
 * either way. Returns the management class (the umad agent to send it by), or -1 when libibmad
 * refuses it (a DR path of 64 hops or more). */
int smp_encode(struct smp_buf *b, const struct smp_req *r, uint32_t trid, int timeout_ms);
/* The same request encoded whole, always (the reference smp_encode is tested against). */
int smp_encode_whole(struct smp_buf *b, const struct smp_req *r, uint32_t trid, int timeout_ms);

#endif
