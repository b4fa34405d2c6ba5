/* SPDX-License-Identifier: BSD-2-Clause */
/* perfmgr_run.c - glue between the SM and its performance manager, kept above the SM so that
 * sm/ needs no more than one field: the perfmgr sweeps only while this SM is master and the
 * subnet is up, over the generation routes are in force for (sm->live, whose LIDs are final),
 * and its settings follow a reload (SIGHUP) while the console's enable/disable holds until the
 * configuration changes. */
#include <string.h>
#include "ops/perfmgr_run.h"
#include "sm/loop.h"

static struct fabric *fed;           /* the generation the perfmgr was given last (a reference) */
static struct perfmgr_cfg from_opt;  /* the settings last taken from the options */

void perfmgr_run_cfg(const struct sm *sm, struct perfmgr_cfg *c)
{
	const struct sm_options *o = sm->opt;
	perfmgr_cfg_defaults(c);
	c->enabled = o->perfmgr;
	c->sweep_time_s = o->perfmgr_sweep_time_s;
	c->max_outstanding = o->perfmgr_max_outstanding;
	c->ignore_cas = o->perfmgr_ignore_cas;
	c->rm_nodes = o->perfmgr_rm_nodes;
	c->log_errors = o->perfmgr_log_errors;
	c->query_cpi = o->perfmgr_query_cpi;
	c->xmit_wait_log = o->perfmgr_xmit_wait_log;
	c->xmit_wait_threshold = o->perfmgr_xmit_wait_threshold;
	c->timeout_ms = o->timeout_ms;
	c->retries = o->retries;
}

static void tick(struct sm *sm, void *data)
{
	(void)data;
	struct perfmgr *pm = sm->perfmgr;
	if (!pm)
		return;
	struct perfmgr_cfg c;
	perfmgr_run_cfg(sm, &c);
	if (memcmp(&c, &from_opt, sizeof(c))) { /* a reload changed them */
		from_opt = c;
		perfmgr_set_cfg(pm, &c);
		fabric_unref(fed); /* the ports again (perfmgr_ignore_cas may have changed) */
		fed = NULL;
	}
	if (sm->state != IB_SM_MASTER || !sm->subnet_up || !sm->live)
		return; /* a standby's perfmgr waits; answers still out time out later */
	if (!perfmgr_cfg(pm)->enabled) {
		/* off (the default): its view of the ports is not kept up (13-19 ms a generation at
		 * 8192 hosts on the main loop); the tick that finds it enabled gives it the live one */
		fabric_unref(fed);
		fed = NULL;
		return;
	}
	if (sm->live->f != fed) {
		fabric_unref(fed);
		fed = fabric_ref(sm->live->f);
		perfmgr_set_fabric(pm, fed);
	}
	perfmgr_tick(pm, g_get_monotonic_time());
}

void perfmgr_run_start(struct sm *sm)
{
	if (sm->perfmgr || !sm->dispatch)
		return;
	perfmgr_run_cfg(sm, &from_opt);
	sm->perfmgr = perfmgr_new_dispatch(&from_opt, sm->dispatch);
	loop_tick_add(sm, tick, NULL);
}

void perfmgr_run_stop(struct sm *sm)
{
	if (!sm->perfmgr)
		return;
	loop_tick_remove(tick, NULL);
	perfmgr_free(sm->perfmgr);
	sm->perfmgr = NULL;
	fabric_unref(fed);
	fed = NULL;
}
