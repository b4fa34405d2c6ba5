/* sweep.c - one heavy sweep as data flows through the SM (DESIGN.md "One sweep"): discover,
 * decide master/standby, assign LIDs, route through the engine chain, program, SUBNET UP,
 * then the dumps. Also the offline variant (--fabric) that does the same with no MADs. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "dump.h"
#include "engines.h"
#include "lid.h"
#include "log.h"
#include "netfile.h"
#include "sm.h"
#include "sweep.h"
#include "ucast_cache.h"

double sm_now(void)
{
	return (double)g_get_monotonic_time() / 1e6;
}

static double phase_t0;
static uint64_t phase_smp0;

void sm_phase_begin(struct sm *sm, const char *name)
{
	if (sm->n_phases >= SM_MAX_PHASES)
		sm->n_phases = SM_MAX_PHASES - 1;
	sm->phases[sm->n_phases].name = name;
	phase_t0 = sm_now();
	phase_smp0 = sm->t ? transport_stats(sm->t)->sent : 0;
}

void sm_phase_end(struct sm *sm, const char *fmt, ...)
{
	struct phase_stat *p = &sm->phases[sm->n_phases++];
	p->seconds = sm_now() - phase_t0;
	p->smps = (sm->t ? transport_stats(sm->t)->sent : 0) - phase_smp0;
	char detail[256] = "";
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(detail, sizeof(detail), fmt, ap);
		va_end(ap);
	}
	LOG_I("SWP-0001", "phase %s: %s, %" PRIu64 " SMPs, %.3f s", p->name, detail, p->smps, p->seconds);
	if (sm->opt->progress)
		fprintf(stderr, "  %-10s %-44s %8" PRIu64 " SMPs %8.3f s\n", p->name, detail, p->smps,
			p->seconds);
}

void sm_log_stats(struct sm *sm)
{
	uint64_t total = 0;
	for (int i = 0; i < sm->n_phases; i++) {
		LOG_I("STS-0001", "STATS phase=%s smps=%" PRIu64 " seconds=%.6f", sm->phases[i].name,
		      sm->phases[i].smps, sm->phases[i].seconds);
		total += sm->phases[i].smps;
	}
	if (sm->t) {
		const struct transport_stats *s = transport_stats(sm->t);
		LOG_I("STS-0002", "STATS transport sent=%" PRIu64 " received=%" PRIu64 " retries=%" PRIu64
		      " timeouts=%" PRIu64 " stale=%" PRIu64 " backoffs=%" PRIu64, s->sent, s->received,
		      s->retries, s->timeouts, s->dropped_stale, s->backoffs);
		LOG_I("STS-0004", "STATS lft_blocks_set=%" PRIu64 " portinfo_set=%" PRIu64
		      " portinfo_get=%" PRIu64 " nodeinfo_get=%" PRIu64, s->by_attr[1][0x19],
		      s->by_attr[1][0x15], s->by_attr[0][0x15], s->by_attr[0][0x11]);
		total = s->sent;
		uint64_t traps, represses;
		sminfo_trap_counts(&traps, &represses);
		LOG_I("STS-0005", "STATS traps received=%" PRIu64 " trap_represses_sent=%" PRIu64,
		      traps, represses);
	}
	LOG_I("STS-0003", "STATS total smps=%" PRIu64 " seconds=%.6f", total, sm_now() - sm->t_start);
}

static int lid_phase(struct sm *sm, struct fabric *f, int offline, GError **err)
{
	struct lid_opts lo = { .lmc = sm->opt->lmc, .reassign = sm->opt->reassign_lids,
			       .cache_dir = sm->opt->cache_dir };
	struct lid_stats st;
	if (lid_assign_stats(f, &lo, &st, err) < 0)
		return -1;
	LOG_I("LID-0100", "LIDs: %u end ports, %u from guid2lid, %u kept, %u new, %u changed, max LID %u",
	      st.end_ports, st.from_guid2lid, st.kept, st.fresh, st.changed, st.max_lid);
	(void)offline;
	return 0;
}

static int route_phase(struct sm *sm, struct fabric *f, struct routing_run *rr, GError **err)
{
	sm_phase_begin(sm, "routing");
	if (sm->opt->ucast_cache && sm->ucast && sm->ucast_engine &&
	    !strcmp(sm->ucast_engine, sm->opt->routing_engine ? sm->opt->routing_engine : "")) {
		char why[200];
		uint32_t stride = f->pub.max_lid + 1;
		uint8_t *lft = g_malloc((size_t)f->pub.n_switches * stride + 1);
		if (ucast_cache_apply(sm->ucast, f, lft, stride, why, sizeof(why))) {
			rr->lft = lft;
			rr->stride = stride;
			rr->n_switches = f->pub.n_switches;
			g_strlcpy(rr->engine, "cache", sizeof(rr->engine));
			sm_phase_end(sm, "unicast cache: routes kept");
			return 0;
		}
		g_free(lft);
		LOG_I("UCC-0001", "unicast cache: recomputing routes (%s)", why);
	}
	int rc = routing_run(sm->opt->routing_engine, sm->opt, f, rr, err);
	if (rc < 0) {
		sm_phase_end(sm, "failed");
		return -1;
	}
	sm_phase_end(sm, "engine %s, %u switches x %u LIDs", rr->engine, rr->n_switches, rr->stride);
	if (sm->opt->ucast_cache) {
		if (!sm->ucast)
			sm->ucast = ucast_cache_new();
		ucast_cache_store(sm->ucast, f, rr->lft, rr->stride);
		g_free(sm->ucast_engine);
		sm->ucast_engine = g_strdup(sm->opt->routing_engine ? sm->opt->routing_engine : "");
	}
	return 0;
}

static void write_dumps(struct sm *sm, struct fabric *f, struct routing_run *rr)
{
	GError *err = NULL;
	const char *dir = sm->opt->tmp_dir;
	if (dump_subnet_lst(f, dir, &err) < 0) {
		LOG_E("DMP-0001", "%s", err->message);
		g_clear_error(&err);
	}
	/* the engine's own files (e.g. ftree's CA order) are written after every routing */
	if (rr->loaded && rr->loaded->ops->dump && rr->result &&
	    rr->loaded->ops->dump(rr->result, dir, "") < 0)
		LOG_E("DMP-0003", "engine %s could not write its dump files to %s", rr->engine, dir);
	if (!sm->opt->dump_routes || !rr->lft)
		return;
	if (dump_fdbs(f, rr->lft, rr->stride, dir, &err) < 0 ||
	    dump_mcfdbs(f, dir, &err) < 0 ||
	    dump_lfts(f, rr->lft, rr->stride, dir, &err) < 0 ||
	    dump_lid_matrix(f, dir, &err) < 0) {
		LOG_E("DMP-0002", "%s", err->message);
		g_clear_error(&err);
	}
}

int sweep_offline(struct sm *sm, GError **err)
{
	sm->t_start = sm_now();
	sm_phase_begin(sm, "load");
	struct model_builder *b = model_builder_new();
	if (netfile_load(sm->opt->fabric_file, b, err) < 0) {
		model_builder_free(b);
		return -1;
	}
	struct fabric *f = model_freeze(b, ++sm->generation, err);
	model_builder_free(b);
	if (!f)
		return -1;
	sm_phase_end(sm, "%u nodes, %u switches", f->pub.n_nodes, f->pub.n_switches);
	sm_phase_begin(sm, "lids");
	if (lid_phase(sm, f, 1, err) < 0) {
		fabric_free(f);
		return -1;
	}
	sm_phase_end(sm, "max LID %u", f->pub.max_lid);
	struct routing_run rr;
	memset(&rr, 0, sizeof(rr));
	if (route_phase(sm, f, &rr, err) < 0) {
		fabric_free(f);
		return -1;
	}
	sm_phase_begin(sm, "dumps");
	write_dumps(sm, f, &rr);
	GError *e2 = NULL;
	if (sm->opt->cache_dir && lid_save_guid2lid(f, sm->opt->cache_dir, &e2) < 0) {
		LOG_E("LID-0101", "%s", e2->message);
		g_clear_error(&e2);
	}
	sm_phase_end(sm, "written to %s", sm->opt->tmp_dir);
	LOG_I("SWP-0003", "offline: %u nodes, %u switches, max LID %u routed by %s in %.3f s",
	      f->pub.n_nodes, f->pub.n_switches, f->pub.max_lid, rr.engine, rr.seconds);
	sm->summary_nodes = f->pub.n_nodes;
	sm->summary_switches = f->pub.n_switches;
	sm->summary_max_lid = f->pub.max_lid;
	g_strlcpy(sm->summary_engine, rr.engine, sizeof(sm->summary_engine));
	routing_run_clear(&rr);
	fabric_free(f);
	return 0;
}

/* Nodes of the last generation that this discovery did not reach: cut off or gone. */
static void report_lost_nodes(const struct fabric *prev, const struct fabric *f)
{
	if (!prev)
		return;
	uint32_t lost = 0;
	for (uint32_t n = 0; n < prev->pub.n_nodes; n++) {
		const struct ibsm_node *node = &prev->nodes[n];
		if (fabric_node_by_guid(f, node->guid) != IBSM_NONE)
			continue;
		if (lost++ < 64)
			LOG_E("SWP-0008", "%s 0x%016" PRIx64 " (%s) is unreachable: not found by this sweep",
			      node->type == IBSM_SWITCH ? "switch" : "CA", node->guid, node->desc);
	}
	if (lost)
		LOG_E("SWP-0009", "%u nodes unreachable since the last sweep", lost);
}

int sweep_heavy(struct sm *sm, GError **err)
{
	sm->n_phases = 0;
	sm->smp_failures = 0;
	sm_phase_begin(sm, "discovery");
	if (sm->state != SM_MASTER)
		sm->state = SM_DISCOVERING;
	struct fabric *f = discover_fabric(sm, err);
	if (!f) {
		sm_phase_end(sm, "failed");
		return -1;
	}
	report_lost_nodes(sm->fabric, f);
	uint64_t sig = fabric_topology_signature(f);
	sm->topology_changed = sig != sm->topology_sig;
	if (sm->topology_changed && sm->topology_sig)
		LOG_I("SWP-0007", "topology changed since the last sweep");
	sm->topology_sig = sig;
	fabric_free(sm->fabric);
	sm->fabric = f;
	sm_phase_end(sm, "%u nodes, %u switches, %u ports", f->pub.n_nodes, f->pub.n_switches,
		     f->pub.n_ports);
	if (f->pub.sm_port != IBSM_NONE)
		sm->port_guid = f->ports[f->pub.sm_port].guid;

	sm_phase_begin(sm, "sminfo");
	int standby = sminfo_poll_others(sm);
	sm_phase_end(sm, "%s", standby ? "another SM is master" : "we are master");
	if (standby) {
		if (sm->state != SM_STANDBY)
			LOG_I("SMI-0003", "STANDBY: SM 0x%016" PRIx64 " is master; not programming the fabric",
			      sm->master_guid);
		sm->state = SM_STANDBY;
		return SWEEP_STANDBY;
	}
	if (sm->state != SM_MASTER) {
		sm->first_master_sweep = 1;
		LOG_I("SMI-0006", "entering MASTER state");
	}
	sm->state = SM_MASTER;
	sm->act_count++;

	if (lid_phase(sm, f, 0, err) < 0)
		return -1;
	struct routing_run rr;
	memset(&rr, 0, sizeof(rr));
	if (route_phase(sm, f, &rr, err) < 0)
		return -1;
	double t0 = sm_now();
	uint64_t smp0 = transport_stats(sm->t)->sent;
	int first = sm->first_master_sweep;
	int rc = program_fabric(sm, f, rr.lft, rr.stride);
	sm->first_master_sweep = 0;
	sm->opt->reassign_lids = 0; /* -r applies to the first master sweep only */
	GError *e2 = NULL;
	if (sm->opt->cache_dir && lid_save_guid2lid(f, sm->opt->cache_dir, &e2) < 0) {
		LOG_E("LID-0101", "%s", e2->message);
		g_clear_error(&e2);
	}
	if (rc == 0 && !sm->smp_failures && (first || sm->sweep_writes || sm->topology_changed))
		LOG_I("SWP-0002", "SUBNET UP");
	else if (rc == 0 && !sm->smp_failures)
		LOG_I("SWP-0006", "heavy sweep: nothing changed, nothing written");
	else
		LOG_E("SWP-0004", "sweep incomplete: %u SMPs failed for good; not all ports ACTIVE: %s",
		      sm->smp_failures, rc ? "yes" : "no");
	sm->summary_nodes = f->pub.n_nodes;
	sm->summary_switches = f->pub.n_switches;
	sm->summary_max_lid = f->pub.max_lid;
	g_strlcpy(sm->summary_engine, rr.engine, sizeof(sm->summary_engine));
	write_dumps(sm, f, &rr);
	routing_run_clear(&rr);
	LOG_I("SWP-0005", "heavy sweep %u: %u writes, %" PRIu64 " SMPs programming, %.3f s total",
	      sm->generation, sm->sweep_writes, transport_stats(sm->t)->sent - smp0, sm_now() - t0 + 0.0);
	return rc == 0 && !sm->smp_failures ? SWEEP_UP : SWEEP_INCOMPLETE;
}
