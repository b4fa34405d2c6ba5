/* SPDX-License-Identifier: BSD-2-Clause */
/* dispatch.h - unsolicited MADs (requests to the SM, traps, reports) handed to the agent that
 * registered for their management class, method and attribute (the SMI agent, later the SA);
 * a request nobody serves is answered at once with the IBA status "unsupported method/
 * attribute combination" instead of leaving the client to time out. */
#ifndef IBSM_MAD_DISPATCH_H
#define IBSM_MAD_DISPATCH_H

#include <stddef.h>
#include <stdint.h>
#include "mad/transport.h"

#define DISPATCH_ANY_ATTR 0x10000 /* register for every attribute of a class and method */

/* One received MAD, decoded header fields beside the raw umad buffer. */
struct mad_in {
	void *umad;            /* umad buffer (umad_get_mad() gives the MAD) */
	int len;               /* its length */
	uint8_t *mad;          /* the MAD itself */
	uint8_t mgmt_class, class_version, method;
	uint16_t attr;
	uint32_t attr_mod;
	uint64_t tid;
};

/* Fills M from the received UMAD buffer of LEN bytes (M points into it). */
void dispatch_mad_in(struct mad_in *m, void *umad, int len);

struct dispatch;
typedef void (*dispatch_fn)(struct dispatch *d, const struct mad_in *m, void *ctx);

struct dispatch_stats {
	uint64_t received, handled, unsupported, dropped;
};

/* Takes over t's unsolicited callback. */
struct dispatch *dispatch_new(struct transport *t);
void dispatch_free(struct dispatch *d);
struct transport *dispatch_transport(const struct dispatch *d);
/* Registers fn for (class, method, attr); attr DISPATCH_ANY_ATTR matches every attribute not
 * registered on its own. A later registration of the same key replaces the earlier one;
 * fn NULL removes it. */
void dispatch_register(struct dispatch *d, uint8_t mgmt_class, uint8_t method, uint32_t attr,
		       dispatch_fn fn, void *ctx);
/* Sends the response to request m, built in place in its buffer: method, status (for a
 * directed-route SMP in the DR status field, with the direction bit set), and data_len bytes
 * of data copied at data_offset into the MAD (data NULL: left as received). */
int dispatch_respond(struct dispatch *d, const struct mad_in *m, uint8_t method, uint16_t status,
		     const void *data, size_t data_offset, size_t data_len);
/* The response method that answers request method `method` (Set and Get: GetResp). */
uint8_t dispatch_response_method(uint8_t method);
const struct dispatch_stats *dispatch_stats(const struct dispatch *d);

#endif
