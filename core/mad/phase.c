/* SPDX-License-Identifier: BSD-2-Clause */
/* phase.c - phase accounting for the sweep log and --progress (one line per phase wherever
 * the user looks: the progress line is left out when the log itself is on stderr). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <glib.h>
#include "base/log.h"
#include "mad/phase.h"

double phase_now(void)
{
	return (double)g_get_monotonic_time() / 1e6;
}

void phase_log_init(struct phase_log *pl, struct transport *t, int progress)
{
	*pl = (struct phase_log){ .t = t, .progress = progress };
}

void phase_log_reset(struct phase_log *pl)
{
	pl->n = 0;
}

static uint64_t smps_sent(const struct phase_log *pl)
{
	return pl->t ? transport_stats(pl->t)->sent : 0;
}

void phase_begin(struct phase_log *pl, const char *name)
{
	if (pl->n >= PHASE_MAX)
		pl->n = PHASE_MAX - 1; /* the last slot is reused rather than overflowing */
	pl->phases[pl->n].name = name;
	transport_slice_label(name);
	if (pl->t)
		transport_step_now(pl->t);
	pl->t0 = phase_now();
	pl->smp0 = smps_sent(pl);
}

void phase_end(struct phase_log *pl, const char *fmt, ...)
{
	struct phase_stat *p = &pl->phases[pl->n++];
	p->seconds = phase_now() - pl->t0;
	p->smps = smps_sent(pl) - pl->smp0;
	char detail[256] = "";
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(detail, sizeof(detail), fmt, ap);
		va_end(ap);
	}
	LOG_I("PHS-0001", "phase %s: %s, %" PRIu64 " SMPs, %.3f s", p->name, detail, p->smps, p->seconds);
	/* --progress: the same on stderr, unless the log line above went there already (-f -) */
	if (pl->progress && !log_reaches_stderr(IBSM_LOG_INFO))
		fprintf(stderr, "  %-10s %-44s %8" PRIu64 " SMPs %8.3f s\n", p->name, detail, p->smps,
			p->seconds);
}
