/* SPDX-License-Identifier: BSD-2-Clause */
/* stats.c - the STATS lines after every sweep (and at exit): what each phase cost, what the
 * transport did, which attributes were read and written, traps; make bench and operators
 * read them. */
#include <inttypes.h>
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "sm/stats.h"
#include "sm/traps.h"

void stats_log(struct sm *sm)
{
	const struct phase_log *pl = &sm->phases;
	for (int i = 0; i < pl->n; i++)
		LOG_I("STS-0001", "STATS phase=%s smps=%" PRIu64 " seconds=%.6f", pl->phases[i].name,
		      pl->phases[i].smps, pl->phases[i].seconds);
	uint64_t total = 0;
	if (sm->t) {
		const struct transport_stats *s = transport_stats(sm->t);
		LOG_I("STS-0002", "STATS transport sent=%" PRIu64 " received=%" PRIu64 " retries=%" PRIu64
		      " timeouts=%" PRIu64 " stale=%" PRIu64 " backoffs=%" PRIu64 " persisted=%" PRIu64
		      " short=%" PRIu64, s->sent, s->received, s->retries, s->timeouts, s->dropped_stale,
		      s->backoffs, s->persisted, s->dropped_short);
		LOG_I("STS-0004", "STATS lft_blocks_set=%" PRIu64 " portinfo_set=%" PRIu64
		      " portinfo_get=%" PRIu64 " nodeinfo_get=%" PRIu64 " pkey_get=%" PRIu64 " pkey_set=%" PRIu64,
		      s->by_attr[1][IB_ATTR_LINEARFORWTBL & 63], s->by_attr[1][IB_ATTR_PORT_INFO & 63],
		      s->by_attr[0][IB_ATTR_PORT_INFO & 63], s->by_attr[0][IB_ATTR_NODE_INFO & 63],
		      s->by_attr[0][IB_ATTR_PKEY_TBL & 63], s->by_attr[1][IB_ATTR_PKEY_TBL & 63]);
		/* the longest stretch the SA waited through in this sweep (and since the last STATS),
		 * and how many went over 10, 20, 50, 100 ms */
		static uint64_t prev_over[4];
		LOG_I("STS-0006", "STATS slices over_10ms=%" PRIu64 " over_20ms=%" PRIu64 " over_50ms=%" PRIu64
		      " over_100ms=%" PRIu64 " longest_ms=%.1f from=%s to=%s", s->slices_over[0] - prev_over[0],
		      s->slices_over[1] - prev_over[1], s->slices_over[2] - prev_over[2],
		      s->slices_over[3] - prev_over[3], (double)s->slice_max_us / 1000.0,
		      s->slice_max_label ? s->slice_max_label : "-", s->slice_max_label_to ? s->slice_max_label_to : "-");
		memcpy(prev_over, s->slices_over, sizeof(prev_over));
		transport_slices_reset(sm->t);
		total = s->sent;
		const struct trap_counts *tc = traps_counts();
		LOG_I("STS-0005", "STATS traps received=%" PRIu64 " trap_represses_sent=%" PRIu64,
		      tc->received, tc->represses_sent);
	} else {
		for (int i = 0; i < pl->n; i++)
			total += pl->phases[i].smps;
	}
	LOG_I("STS-0003", "STATS total smps=%" PRIu64 " seconds=%.6f", total, phase_now() - sm->t_start);
}

