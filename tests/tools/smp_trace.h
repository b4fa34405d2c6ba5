/* SPDX-License-Identifier: BSD-2-Clause */
/* smp_trace.h - one record of the SMP trace smpcount.so writes (SMPCOUNT_TRACE): the MAD as
 * sent or received with its time, so bench/smprate.c can replay an SM's requests and
 * bench/repair_bench.py can time a repair from the wire. One layout, read by both and by
 * Python (280 bytes, little-endian). */
#ifndef IBSM_SMP_TRACE_H
#define IBSM_SMP_TRACE_H

#include <stdint.h>

struct trace_rec {
	uint64_t ns;                /* CLOCK_MONOTONIC */
	uint32_t pid;
	uint8_t direction, bad_status; /* 0 sent, 1 received; MAD status not 0 */
	uint16_t len, lid;
	uint8_t pad[6];
	uint8_t mad[256];
};

_Static_assert(sizeof(struct trace_rec) == 280, "trace record layout is read by bench/repair_bench.py");

#endif
