/* SPDX-License-Identifier: BSD-2-Clause */
/* rmpp_engine.h - the RMPP state machine of tests/tools/rmpp.c (IBA 13.6, as the Linux kernel's
 * mad_rmpp.c runs it for an agent registered with an RMPP version), kept apart from the I/O so
 * that tests/unit/test_rmpp.c drives it without ibsim.
 *
 * One engine serves one umad file descriptor. Its caller hands it what the application writes
 * (rmpp_engine_send), what comes off the wire (rmpp_engine_receive) and the time (every call
 * takes a monotonic NOW in milliseconds; the engine reads no clock); the engine writes
 * segments, ACKs and ABORTs through rmpp_io.send and queues what the application is to read
 * (rmpp_engine_read). Buffers are libibumad's: a struct ib_user_mad header, then the MAD. */
#ifndef IBSM_TESTS_RMPP_ENGINE_H
#define IBSM_TESTS_RMPP_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RMPP_MAD_SIZE 256      /* one MAD on the wire */
#define RMPP_HDR_END 36        /* common MAD header (24) + RMPP header (12) */
#define RMPP_SEG_PAYLOAD 220   /* what PayloadLength counts per full segment: all after the
				* RMPP header (the class header of every segment included) */

/* RMPP header (MAD bytes 24..35) */
#define RMPP_OFF_VERSION 24
#define RMPP_OFF_TYPE 25
#define RMPP_OFF_FLAGS 26      /* RRespTime (high 5 bits) | flags (low 3) */
#define RMPP_OFF_STATUS 27
#define RMPP_OFF_SEGNUM 28
#define RMPP_OFF_PAYLEN 32     /* PayloadLength (DATA) or NewWindowLast (ACK) */

#define RMPP_VERSION 1
enum rmpp_type { RMPP_TYPE_DATA = 1, RMPP_TYPE_ACK = 2, RMPP_TYPE_STOP = 3, RMPP_TYPE_ABORT = 4 };
enum rmpp_flag { RMPP_FLAG_ACTIVE = 1, RMPP_FLAG_FIRST = 2, RMPP_FLAG_LAST = 4 };
enum rmpp_status {                 /* the ABORT/STOP status codes the engine sends */
	RMPP_STATUS_T2L = 118,     /* total time too long */
	RMPP_STATUS_BAD_SEG = 120, /* inconsistent Last and PayloadLength / first segment */
	RMPP_STATUS_BADT = 121,    /* illegal RMPP type */
	RMPP_STATUS_W2S = 122,     /* NewWindowLast too small */
	RMPP_STATUS_S2B = 123,     /* SegmentNumber too big */
	RMPP_STATUS_BAD_STATUS = 124,
	RMPP_STATUS_UNV = 125,     /* unsupported version */
};

/* Timers and window; rmpp_config_default() gives the kernel's values. */
struct rmpp_config {
	uint32_t window;           /* segments a receiver opens per ACK (kernel: 64) */
	uint32_t ack_timeout_ms;   /* sender: wait for an ACK, then retransmit (kernel: 2000,
				    * or the send's own timeout when it is shorter) */
	uint32_t recv_timeout_ms;  /* receiver: an unfinished transfer is aborted (kernel: 40000) */
	uint32_t linger_ms;        /* receiver: a finished one still re-ACKs duplicates (10000) */
	uint32_t segment_bytes;    /* sender: bytes of each MAD its segments fill (kernel: all
				    * 256; PayloadLength counts accordingly, and a receiver takes
				    * the size from it). umad2sim delivers only the first 224
				    * (RMPP_UMAD2SIM_BYTES) intact unless rmpp.c restores the rest */
};
#define RMPP_UMAD2SIM_BYTES 224

struct rmpp_io {
	void *ctx;
	/* Puts one MAD on the wire: umad header + RMPP_MAD_SIZE bytes. 0 or a negative errno. */
	int (*send)(void *ctx, const void *umad, size_t len);
	/* Optional: one line of debugging (no newline). */
	void (*log)(void *ctx, const char *line);
};

/* Counters, for the tests and the debugging output. */
struct rmpp_stats {
	uint64_t segments_sent, segments_resent, acks_sent, acks_received, aborts_sent,
		 aborts_received, stops_received, segments_received, segments_dropped,
		 messages_sent, messages_received, sends_timed_out, receives_timed_out,
		 requests_resent, requests_timed_out;
};

struct rmpp_engine;

void rmpp_config_default(struct rmpp_config *cfg);
/* CFG NULL: rmpp_config_default(). NULL on allocation failure. */
struct rmpp_engine *rmpp_engine_new(const struct rmpp_io *io, const struct rmpp_config *cfg);
void rmpp_engine_free(struct rmpp_engine *e);

/* An agent the application registered (IB_USER_MAD_REGISTER_AGENT); RMPP runs only for agents
 * with a non-zero RMPP version, on the RMPP classes (SA, device management, BIS, vendor
 * 0x30-0x4f). Returns 0, or -EINVAL when the engine would not run RMPP for it. */
int rmpp_engine_add_agent(struct rmpp_engine *e, uint32_t agent_id, uint8_t mgmt_class,
			  uint8_t rmpp_version);
void rmpp_engine_remove_agent(struct rmpp_engine *e, uint32_t agent_id);

/* What the application writes (umad header + MAD, LEN bytes). Returns 0 when the engine took
 * it (an RMPP DATA message of an RMPP agent: it is segmented and sent under the window), 1
 * when the caller is to pass it to the wire unchanged, or a negative errno.
 *
 * A request of an RMPP agent sent with a timeout (umad timeout_ms) then waits for its
 * response as in the kernel's MAD layer: resent up to umad retries times, one timeout apart
 * (a request sent with RMPP is not resent), then the application reads a notice with umad
 * status ETIMEDOUT and the request's MAD header (user_mad's). umad2sim has no timeouts. */
int rmpp_engine_send(struct rmpp_engine *e, const void *umad, size_t len, uint64_t now);

/* One MAD from the wire (umad header + MAD, LEN bytes). ACK/STOP/ABORT and DATA segments of an
 * RMPP agent are consumed (a finished message is queued whole); anything else is queued as it
 * is. Returns the number of messages this queued (0 or 1). */
int rmpp_engine_receive(struct rmpp_engine *e, const void *umad, size_t len, uint64_t now);

/* The application's read, as the kernel's user_mad answers it: the next queued message
 * whole (returns its length, umad header included), or, when COUNT is too small for a
 * reassembled message, its umad header (whose length field says what is needed) and first
 * MAD, returning -ENOSPC and keeping it queued (-EINVAL if not even that fits). A single MAD
 * is cut to COUNT, as umad2sim does. -EAGAIN when nothing is queued. */
ssize_t rmpp_engine_read(struct rmpp_engine *e, void *buf, size_t count);
/* Length (umad header included) of the next queued message, 0 if none. */
size_t rmpp_engine_pending(const struct rmpp_engine *e);

/* Retransmits, gives up and expires what is due at NOW. */
void rmpp_engine_tick(struct rmpp_engine *e, uint64_t now);
/* The next time rmpp_engine_tick has something to do, UINT64_MAX if none. */
uint64_t rmpp_engine_next_deadline(const struct rmpp_engine *e);
/* Transfers in progress (sending, receiving, finished but lingering) and requests waiting
 * for their response. */
unsigned rmpp_engine_transfers(const struct rmpp_engine *e);
const struct rmpp_stats *rmpp_engine_stats(const struct rmpp_engine *e);

/* Helpers on a MAD (no umad header). */
bool rmpp_is_rmpp_class(uint8_t mgmt_class);
/* Bytes of MAD header + class header before the data a segment carries (SA: 56). */
unsigned rmpp_data_offset(uint8_t mgmt_class);

#endif
