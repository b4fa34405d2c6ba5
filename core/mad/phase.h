/* SPDX-License-Identifier: BSD-2-Clause */
/* phase.h - what each phase of a sweep cost: SMPs the transport sent and seconds, logged as it
 * ends (and on stderr with --progress, unless the log line is shown there: log_reaches_stderr),
 * kept for the STATS lines at the end of a sweep. */
#ifndef IBSM_MAD_PHASE_H
#define IBSM_MAD_PHASE_H

#include <stdint.h>
#include "mad/transport.h"

#define PHASE_MAX 16

struct phase_stat {
	const char *name;      /* a string literal */
	uint64_t smps;
	double seconds;
};

struct phase_log {
	struct transport *t;       /* NULL offline: 0 SMPs */
	int progress;              /* also print each phase on stderr (once: see phase_end) */
	struct phase_stat phases[PHASE_MAX];
	int n;
	double t0;                 /* of the phase in progress */
	uint64_t smp0;
};

void phase_log_init(struct phase_log *pl, struct transport *t, int progress);
void phase_log_reset(struct phase_log *pl); /* a new sweep */
/* A phase begins: its name labels the transport's slice statistics, and the SA is served
 * (what came is answered) before it starts: a phase with no SMPs never waits on I/O. */
void phase_begin(struct phase_log *pl, const char *name);
void phase_end(struct phase_log *pl, const char *detail_fmt, ...) __attribute__((format(printf, 2, 3)));
double phase_now(void); /* monotonic seconds */

#endif
