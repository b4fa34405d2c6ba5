/* SPDX-License-Identifier: BSD-2-Clause */
/* offsweep.c - off-sweep balancing (sm/offsweep.h). */
#include <string.h>
#include "base/log.h"
#include "mad/phase.h"
#include "sm/offsweep.h"

int offsweep_engine_ok(const char *routing_engine)
{
	const char *e = routing_engine && *routing_engine ? routing_engine : "minhop";
	size_t n = strcspn(e, ",");
	return (n == 6 && !strncmp(e, "minhop", n)) || (n == 3 && !strncmp(e, "dor", n)) ||
	       (n == 4 && !strncmp(e, "updn", n));
}

void offsweep_after_sweep(struct sm *sm)
{
	if (!sm->opt->offsweep_balancing_enabled || !sm->live || sm->state != IB_SM_MASTER) {
		sm->offsweep_at = 0;
		return;
	}
	int from_cache = !strcmp(sm->live->engine, "cache");
	if (!from_cache) {
		sm->offsweep_at = 0; /* the engine's own routes: balanced */
		return;
	}
	if (!sm->topology_changed || !offsweep_engine_ok(sm->opt->routing_engine))
		return;
	int window = sm->opt->offsweep_balancing_window > 0 ? sm->opt->offsweep_balancing_window : 180;
	if (!sm->offsweep_at)
		LOG_I("OFS-0002", "routes kept from the unicast cache over a changed fabric: they are "
		      "computed afresh once the fabric is quiet for %d s (offsweep_balancing_window)", window);
	sm->offsweep_at = phase_now() + window;
}

int offsweep_due(struct sm *sm)
{
	if (!sm->offsweep_at || phase_now() < sm->offsweep_at)
		return 0;
	sm->offsweep_at = 0;
	if (!sm->opt->offsweep_balancing_enabled || sm->state != IB_SM_MASTER)
		return 0;
	LOG_I("OFS-0001", "off-sweep balancing: the fabric was quiet for %d s; routing afresh "
	      "(the unicast cache dropped), only the LFT blocks that differ are written",
	      sm->opt->offsweep_balancing_window);
	ucast_cache_free(sm->ucast);
	sm->ucast = NULL;
	return 1;
}
