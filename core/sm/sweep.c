/* SPDX-License-Identifier: BSD-2-Clause */
/* sweep.c - one heavy sweep as data flows through the SM (doc/architecture.md, "One sweep, as data flows"): discover,
 * decide master/standby, assign LIDs, route on the routing thread while the main thread keeps
 * serving MADs and programs what needs no routes (LIDs, port settings, P_Keys), program the
 * rest, publish the SA, route the groups, SUBNET UP, then the dumps. Also the offline variant
 * (--fabric) that does the same with no MADs. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/mad.h>
#include "base/mad_cpu.h"
#include "base/activity.h"
#include "base/log.h"
#include "fabric/discovery.h"
#include "fabric/dump.h"
#include "fabric/lid.h"
#include "fabric/netfile.h"
#include "fabric/slice.h"
#include "program/cc.h"
#include "routing/run.h"
#include "sa/index.h"
#include "sa/pkeys.h"
#include "sa/publish.h"
#include "sm/enhanced_qos.h"
#include "sm/mcast_routing.h"
#include "sm/repair.h"
#include "sm/sadb.h"
#include "sm/sminfo.h"
#include "sm/state_change.h"
#include "sm/sweep.h"

#define ROUTING_POLL_MS 20 /* MAD service slice while the routing thread works (at most) */

void sweep_set_live(struct sm *sm, struct routing_result *r)
{
	routing_result_unref(sm->live);
	sm->live = r;
}

static int lid_phase(struct sm *sm, struct fabric *f, GError **err)
{
	struct lid_opts lo = { .lmc = sm->opt->lmc, .reassign = sm->opt->reassign_lids,
			       .lmc_esp0 = sm->opt->lmc_esp0, .cache_dir = sm->opt->cache_dir };
	/* out of standby, as OpenSM: guid2lid only with honor_guid2lid_file (-x), else the LIDs the
	 * ports hold (the last master's) */
	if (sm->out_of_standby && !sm->opt->honor_guid2lid_file)
		lo.cache_dir = NULL;
	struct lid_stats st;
	if (lid_assign_stats(f, &lo, &st, err) < 0)
		return -1;
	LOG_I("SWP-0013", "LIDs: %u end ports, %u from guid2lid, %u kept, %u new, %u changed, max LID %u",
	      st.end_ports, st.from_guid2lid, st.kept, st.fresh, st.changed, st.max_lid);
	return 0;
}

static const char *engine_spec(const struct sm *sm)
{
	return sm->opt->routing_engine ? sm->opt->routing_engine : "";
}

/* -A: the routes in force kept for f when every live LID still leaves each switch towards the
 * same neighbour; NULL when they must be computed. */
static struct routing_result *cached_routes(struct sm *sm, struct fabric *f)
{
	if (!sm->opt->ucast_cache || !sm->ucast || !sm->live || !sm->ucast_engine ||
	    strcmp(sm->ucast_engine, engine_spec(sm)))
		return NULL;
	struct routing_result *r = routing_result_new(f);
	char why[200];
	if (!ucast_cache_apply(sm->ucast, f, r->lft, r->stride, why, sizeof(why))) {
		LOG_I("SWP-0017", "unicast cache: recomputing routes (%s)", why);
		activity_report(ACT_UCAST_CACHE_INVALIDATED, "%s", "");
		routing_result_unref(r);
		return NULL;
	}
	routing_result_inherit(r, sm->live);
	g_strlcpy(r->engine, "cache", sizeof(r->engine));
	return r;
}

/* Routes f on the routing thread; meanwhile the main thread writes the first half of pp (what
 * needs no routes; pp NULL: nothing), then serves SMInfo and traps (and the signal sources
 * through the transport's tick) until the routes are there. SIGTERM or a trap cancels the run
 * (a trap during the first half: once it is written). *seconds: the routing thread's time;
 * *smp_wait: the transport's sent counter when only the waiting was left. */
static struct routing_result *route_live(struct sm *sm, struct fabric *f, struct program_pass *pp,
					 double *seconds, uint64_t *smp_wait, GError **err)
{
	struct routing_job *job = routing_job_start(sm->chain, f);
	if (pp)
		program_before_routes(pp);
	*smp_wait = transport_stats(sm->t)->sent;
	/* slices of 1, 2, 4 .. 20 ms: a small fabric's routes are taken up within a millisecond or
	 * two, a large one's without waking the main thread more than 50 times a second */
	int slice = 1;
	while (!routing_job_done(job)) {
		if (sm->stop || sm->trap_pending)
			fallback_list_cancel(sm->chain, 1);
		transport_poll(sm->t, slice, 0);
		slice = MIN(slice * 2, ROUTING_POLL_MS);
	}
	*seconds = routing_job_seconds(job);
	return routing_job_join(job, err);
}

/* The routes of f: kept by the unicast cache, or computed (offline on this thread; live on the
 * routing thread, with the first half of pp written beside it when pp is not NULL). The
 * "routing" phase: with pp, the programming beside it has phases of its own (lids, ports,
 * pkeys: their SMPs are theirs), so "routing" is logged once the routes are joined, with the
 * routing thread's own time and only the SMPs sent while nothing but the wait was left: the
 * phases overlap in time, their SMPs are each counted once. */
static struct routing_result *route_phase(struct sm *sm, struct fabric *f, struct program_pass *pp,
					  GError **err)
{
	phase_begin(&sm->phases, "routing");
	struct routing_result *r = cached_routes(sm, f);
	if (r) {
		phase_end(&sm->phases, "unicast cache: routes kept");
		activity_report(ACT_UCAST_CACHE_ROUTING_DONE, "%s", "");
		return r;
	}
	double seconds = 0;
	uint64_t smp_wait = 0;
	r = sm->t ? route_live(sm, f, pp, &seconds, &smp_wait, err) : routing_run(sm->chain, f, err);
	if (pp && sm->t) {
		phase_begin(&sm->phases, "routing");
		sm->phases.t0 = phase_now() - seconds;
		sm->phases.smp0 = smp_wait;
	}
	if (!r) {
		phase_end(&sm->phases, "failed");
		activity_report(ACT_ROUTING_FAILED, "routing_engine=%s", engine_spec(sm));
		return NULL;
	}
	phase_end(&sm->phases, "engine %s, %u switches x %u LIDs%s", r->engine, r->n_switches, r->stride,
		  pp && sm->t ? " (LIDs, ports and P_Keys programmed beside it)" : "");
	activity_report(ACT_ROUTING_SUCCEED, "routing_engine=%s", r->engine);
	if (sm->opt->ucast_cache) {
		if (!sm->ucast)
			sm->ucast = ucast_cache_new();
		ucast_cache_store(sm->ucast, f, r->lft, r->stride);
		g_free(sm->ucast_engine);
		sm->ucast_engine = g_strdup(engine_spec(sm));
	}
	return r;
}

/* The dump files of a generation: subnet.lst always, the route dumps with -D. On a large
 * fabric they take tens of ms, so a thread of their own writes them from references to the
 * (immutable) generation while the SA goes on answering; one at a time. */
struct dump_job {
	struct routing_result *r;
	char *dir;
	int routes;
	int mcfdbs;     /* offline: no groups, an empty opensm.mcfdbs (live: sm/mcast_routing.c writes it) */
	gint *done;     /* set as the thread's last act (sm->dump_done) */
};

static gpointer dump_main(gpointer p)
{
	struct dump_job *j = p;
	const struct fabric *f = j->r->f;
	GError *err = NULL;
	if (dump_subnet_lst(f, NULL, j->dir, &err) < 0) {
		LOG_E("SWP-0011", "%s", err->message);
		g_clear_error(&err);
	}
	if (j->routes &&
	    (dump_fdbs(f, j->r->lft, j->r->stride, NULL, j->dir, &err) < 0 ||
	     (j->mcfdbs && dump_mcfdbs(f, j->dir, &err) < 0) ||
	     dump_lfts(f, j->r->lft, j->r->stride, NULL, j->dir, &err) < 0 ||
	     dump_lid_matrix(f, NULL, j->dir, &err) < 0)) {
		LOG_E("SWP-0012", "%s", err->message);
		g_clear_error(&err);
	}
	/* a routing chain's steps: each its own files over its part (NVIDIA's SM manual, "Routing Chains", "Dump Files per Routing Engine") */
	for (guint i = 0; j->routes && j->r->step_dumps && i < j->r->step_dumps->len; i++) {
		const struct routing_step_dump *d = g_ptr_array_index(j->r->step_dumps, i);
		struct dump_part part = { d->tag, &d->scope };
		if (dump_subnet_lst(f, &part, j->dir, &err) < 0 ||
		    dump_fdbs(f, d->lft, j->r->stride, &part, j->dir, &err) < 0 ||
		    dump_lfts(f, d->lft, j->r->stride, &part, j->dir, &err) < 0 ||
		    dump_lid_matrix(f, &part, j->dir, &err) < 0) {
			LOG_E("SWP-0012", "%s", err->message);
			g_clear_error(&err);
		}
	}
	routing_result_unref(j->r);
	g_free(j->dir);
	gint *done = j->done;
	g_free(j);
	g_atomic_int_set(done, 1);
	return NULL;
}

void sweep_join_dumps(struct sm *sm)
{
	if (sm->dump_thread)
		g_thread_join(sm->dump_thread);
	sm->dump_thread = NULL;
}

static void write_dumps(struct sm *sm, struct routing_result *r)
{
	if (!sm->opt->tmp_dir) /* offline and not asked (config/build.c) */
		return;
	/* the engines' own files (e.g. ftree's CA order) are written after every routing */
	routing_dump(r, sm->opt->tmp_dir);
	/* the last sweep's files may still be written (the route dumps of a large fabric take
	 * seconds, more on a busy disk): the SA is served meanwhile */
	if (sm->dump_thread && !g_atomic_int_get(&sm->dump_done))
		LOG_I("SWP-0025", "the last sweep's dump files are still being written to %s: this sweep "
		      "waits for them (the SA is served meanwhile)", sm->opt->tmp_dir);
	slice_join(sm->t, sm->dump_thread, &sm->dump_done);
	sm->dump_thread = NULL;
	struct dump_job *j = g_new0(struct dump_job, 1);
	j->r = routing_result_ref(r);
	j->dir = g_strdup(sm->opt->tmp_dir);
	j->routes = sm->opt->dump_routes;
	j->mcfdbs = sm->mcast == NULL;
	j->done = &sm->dump_done;
	g_atomic_int_set(&sm->dump_done, 0);
	sm->dump_thread = mad_cpu_thread_new("ibsm-dumps", dump_main, j);
}

/* What is made from a generation once its LIDs are set, on a thread of its own while the
 * programming's SMPs go out (slice_job): the SA's indexes, the guid2lid file and
 * m_key_lookup's neighbors file, each synced (tens of ms of CPU and of the disk at 8192 hosts).
 * The event loop reads none of it meanwhile; guid2mkey's keys, which the programming writes,
 * are saved at the end (keys_main). */
struct lids_job {
	const struct fabric *f;
	const char *dir;       /* guid2lid's; NULL: not saved */
	struct guid2mkey *g2m; /* its neighbors saved; NULL: not */
	int index;             /* the SA's indexes wanted */
	struct sa_index *ix;
	GError *err;
	int rc;
	struct slice_job job;
};

static void lids_main(void *p)
{
	struct lids_job *j = p;
	if (j->dir)
		j->rc = lid_save_guid2lid(j->f, j->dir, &j->err);
	guid2mkey_save_neighbors(j->g2m); /* logs G2M-0003 when it cannot */
	if (j->index)
		j->ix = sa_index_new(j->f);
}

static void lids_job_start(struct sm *sm, const struct fabric *f, struct lids_job *j)
{
	*j = (struct lids_job){ f, sm->opt->cache_dir, sm->opt->m_key_lookup ? sm->g2m : NULL,
				sm->sa != NULL, NULL, NULL, 0, { 0 } };
	slice_job_start(&j->job, "ibsm-lids-files", lids_main, j);
}

/* Joins the job (serving the fabric meanwhile); the SA's indexes stay in j->ix. */
static void lids_job_finish(struct sm *sm, struct lids_job *j)
{
	slice_job_finish(sm->t, &j->job);
	if (j->rc < 0) {
		LOG_E("SWP-0014", "%s", j->err->message);
		g_clear_error(&j->err);
		j->rc = 0;
	}
}

static void keys_main(void *p)
{
	guid2mkey_save(p); /* logs G2M-0003 when it cannot */
}

static void summarize(struct sm *sm, const struct fabric *f, const char *engine)
{
	sm->summary_nodes = f->pub.n_nodes;
	sm->summary_switches = f->pub.n_switches;
	sm->summary_max_lid = f->pub.max_lid;
	g_strlcpy(sm->summary_engine, engine, sizeof(sm->summary_engine));
}

int sweep_offline(struct sm *sm, GError **err)
{
	sm->t_start = phase_now();
	phase_begin(&sm->phases, "load");
	struct model_builder *b = model_builder_new();
	if (netfile_load(sm->opt->fabric_file, b, err) < 0) {
		model_builder_free(b);
		return -1;
	}
	struct fabric *f = model_freeze(b, ++sm->generation, err);
	model_builder_free(b);
	if (!f)
		return -1;
	phase_end(&sm->phases, "%u nodes, %u switches", f->pub.n_nodes, f->pub.n_switches);
	phase_begin(&sm->phases, "lids");
	if (lid_phase(sm, f, err) < 0) {
		fabric_unref(f);
		return -1;
	}
	phase_end(&sm->phases, "max LID %u", f->pub.max_lid);
	struct routing_result *r = route_phase(sm, f, NULL, err);
	if (!r) {
		fabric_unref(f);
		return -1;
	}
	phase_begin(&sm->phases, "dumps");
	write_dumps(sm, r);
	sweep_join_dumps(sm); /* offline: the files are the result */
	struct lids_job lj;
	lids_job_start(sm, f, &lj);
	lids_job_finish(sm, &lj);
	sa_index_free(lj.ix);
	phase_end(&sm->phases, "written to %s", sm->opt->tmp_dir ? sm->opt->tmp_dir : "(none)");
	LOG_I("SWP-0003", "offline: %u nodes, %u switches, max LID %u routed by %s in %.3f s",
	      f->pub.n_nodes, f->pub.n_switches, f->pub.max_lid, r->engine, r->seconds);
	summarize(sm, f, r->engine);
	sweep_set_live(sm, r);
	fabric_unref(f);
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

/* f becomes sm->fabric (the reference taken over): the nodes lost and whether the cabling
 * changed are said. */
static void install_generation(struct sm *sm, struct fabric *f)
{
	report_lost_nodes(sm->fabric, f);
	uint64_t sig = fabric_topology_signature(f);
	sm->topology_changed = sig != sm->topology_sig;
	if (sm->topology_changed && sm->topology_sig)
		LOG_I("SWP-0007", "topology changed since the last sweep");
	sm->topology_sig = sig;
	fabric_unref(sm->fabric);
	sm->fabric = f;
	if (f->pub.sm_port != IBSM_NONE)
		sm->port_guid = f->ports[f->pub.sm_port].guid;
}

/* Discovery into sm->fabric; the number of SMPs that failed for good, or -1 with *err. */
static int discover_phase(struct sm *sm, GError **err)
{
	struct discovery_stats ds;
	phase_begin(&sm->phases, "discovery");
	int reread = sm->reread_desc;
	sm->reread_desc = 0;
	/* not master yet: PortStateChange may be another master's record (sm/state_change.h) */
	int flags = (reread ? DISCOVER_REREAD_DESC : 0) | (sm->state != IB_SM_MASTER ? DISCOVER_PSC_NOT_OURS : 0);
	struct fabric *f = discover_fabric(sm->t, &sm->stop, ++sm->generation, sm->fabric, flags, &ds, err);
	if (!f) {
		phase_end(&sm->phases, "failed");
		return -1;
	}
	if (ds.self_link_guid && sm->opt->exit_on_fatal) {
		/* OpenSM's fatal discovery error (osm_node_info_rcv.c): exit (main returns 1) */
		fabric_unref(f);
		phase_end(&sm->phases, "fatal");
		g_set_error(err, MODEL_ERROR, EEXIST, "FATAL: duplicate GUID 0x%016" PRIx64 " found by a link "
			    "from port %u to itself (two CAs with one GUID, back to back): exiting "
			    "(exit_on_fatal; -y stays)", ds.self_link_guid, ds.self_link_port);
		sm->fatal = 1;
		sm->stop = 1;
		return -1;
	}
	if (ds.self_link_guid)
		LOG_SYS_E("SWP-0024", "duplicate GUID 0x%016" PRIx64 " found by a link from port %u to "
			  "itself: staying up (exit_on_fatal false, -y)", ds.self_link_guid, ds.self_link_port);
	install_generation(sm, f);
	phase_end(&sm->phases, "%u nodes, %u switches, %u ports", f->pub.n_nodes, f->pub.n_switches,
		  f->pub.n_ports);
	return (int)ds.failures;
}

/* The P_Key table a port holds, from the programmer's memory (for the SA's copy). */
static const uint16_t *pkey_table(const void *ctx, const struct fabric *f, uint32_t port, uint32_t *cap)
{
	return programmer_pkey_table(ctx, f, port, cap);
}

struct pkeys_job {
	const struct programmer *prog;
	const struct fabric *f;
	struct sa_pkeys *pk;
};

static void pkeys_main(void *p)
{
	struct pkeys_job *j = p;
	j->pk = sa_pkeys_new(j->f, pkey_table, j->prog);
}

/* The SA's copy of the P_Key tables for f: the one it holds when the programmer says every
 * table and every port id is as in the generation it was made from, else a new one. The copy
 * takes tens of ms at 100k tables (about 100 ms at 245k, 40k end ports): made on a thread of
 * its own, the SA served meanwhile from the last generation. The programmer's memory stands
 * still (the pass and its jobs are over; only a sweep changes it). */
static struct sa_pkeys *sa_tables(struct sm *sm, const struct fabric *f)
{
	static uint64_t version; /* of the copy the SA holds (versions are process-wide) */
	uint64_t v = programmer_pkey_version(sm->prog, f);
	if (v && v == version && sm->sa_in.pk && !sm->topology_changed)
		return sa_pkeys_ref(sm->sa_in.pk);
	version = v;
	struct pkeys_job j = { sm->prog, f, NULL };
	slice_offload(sm->t, "ibsm-sa-pkeys", pkeys_main, &j);
	return j.pk;
}

/* Master or standby: 1 when another SM is master (or a better one is discovering). */
static int mastership_phase(struct sm *sm)
{
	phase_begin(&sm->phases, "sminfo");
	uint64_t hand_to = 0;
	int standby = 0;
	if (sm->opt->ignore_other_sm) { /* OpenSM's -d 0 */
		if (sm->state != IB_SM_MASTER)
			LOG_I("SWP-0020", "ignore_other_sm (-d 0): not asking other SMs, this SM is master");
	} else {
		standby = sminfo_poll_others(sm, &hand_to);
	}
	/* a better SM waits in STANDBY: hand over (a daemon; --once runs one sweep and leaves) */
	if (!standby && hand_to && !sm->opt->once && sminfo_hand_over(sm, hand_to)) {
		standby = 1;
		sm->subnet_up = 0;
	}
	phase_end(&sm->phases, "%s", standby ? "another SM is master" : "we are master");
	if (standby) {
		if (sm->state != IB_SM_STANDBY)
			LOG_SYS("SWP-0015", "entering STANDBY state: SM 0x%016" PRIx64 " is master; not "
			        "programming the fabric", sm->master_guid);
		sm->state = IB_SM_STANDBY;
		return 1;
	}
	if (sm->state != IB_SM_MASTER) {
		sm->first_master_sweep = 1;
		programmer_forget(sm->prog); /* whatever we knew, another SM may have rewritten */
		if (sm->vqos)
			vqos_memory_forget(sm->vqos); /* QoSConfigSL limits too (sm/enhanced_qos.c) */
		LOG_SYS("SWP-0016", "entering MASTER state");
	}
	sm->state = IB_SM_MASTER;
	sm->act_count++;
	return 0;
}

static int after_discovery(struct sm *sm, int failures, GError **err);

int sweep_heavy(struct sm *sm, GError **err)
{
	sm->repair_cancelled = 0; /* a heavy sweep supersedes a cancelled repair */
	phase_log_reset(&sm->phases);
	if (sm->opt->sm_inactive) { /* -I: answer SMInfo as NOTACTIVE, touch nothing */
		if (sm->state != IB_SM_NOTACTIVE || !sm->inactive_said)
			LOG_SYS("SWP-0019", "entering NOTACTIVE state (sm_inactive, -I): not sweeping, not "
			        "programming the fabric; with sm_inactive off in the configuration file (and "
			        "no -I on the command line), a SIGHUP makes this SM take part");
		sm->inactive_said = 1;
		sm->state = IB_SM_NOTACTIVE;
		sm->subnet_up = 0;
		sm->sa_in.master = 0;
		sa_publish(sm->sa, &sm->sa_in);
		return SWEEP_INACTIVE;
	}
	sm->inactive_said = 0;
	if (sm->state != IB_SM_MASTER && sm->state != IB_SM_DISCOVERING)
		LOG_SYS("SWP-0021", "entering DISCOVERING state");
	if (sm->state == IB_SM_STANDBY)
		sm->out_of_standby = 1; /* until a sweep as master has assigned LIDs */
	if (sm->state != IB_SM_MASTER)
		sm->state = IB_SM_DISCOVERING;
	/* what a trap reported before this discovery, this discovery sees; one during it cancels
	 * the routing (a newer sweep is due). Cleared here, not only by the event loop: --once
	 * has none, and a trap there would cancel the routing of every sweep after it. */
	sm->trap_pending = 0;
	sm->trap_full = 0;
	if (sm->trap_lids)
		g_array_set_size(sm->trap_lids, 0);
	int failures = discover_phase(sm, err);
	if (failures < 0)
		return -1;
	return after_discovery(sm, failures, err);
}

int sweep_repair(struct sm *sm, GError **err)
{
	/* the subnet up, or down only because a trap that came during the last repair's routing
	 * cancelled it (two links going at once, their traps a routing apart): that repair's
	 * generation is installed and whole, and this one goes on from it */
	int resumable = sm->repair_cancelled;
	sm->repair_cancelled = 0;
	if (!sm->fabric || !sm->t || sm->state != IB_SM_MASTER || !(sm->subnet_up || resumable) ||
	    sm->opt->sm_inactive || sm->trap_full || sm->reread_desc || !sm->trap_lids || !sm->trap_lids->len)
		return SWEEP_DECLINED;
	phase_log_reset(&sm->phases);
	phase_begin(&sm->phases, "discovery");
	struct repair_stats rs;
	char why[200];
	struct fabric *f = repair_discover(sm, &rs, why, sizeof(why));
	if (!f) {
		phase_end(&sm->phases, "repair declined");
		LOG_I("SWP-0023", "repair declined: %s; a heavy sweep instead", why);
		return SWEEP_DECLINED;
	}
	transport_slice_label("repair-install");
	install_generation(sm, f);
	transport_step_now(sm->t);
	phase_end(&sm->phases, "repair: %u nodes, %u switches, %u ports", f->pub.n_nodes,
		  f->pub.n_switches, f->pub.n_ports);
	LOG_I("SWP-0022", "repair %u: %u switches read (%u ports, %u NodeInfo), %u verified by "
	      "SwitchInfo, %u links down, %u up, %u nodes new, %u dropped, %u routes mended, %u rounds",
	      sm->generation, rs.switches_read, rs.ports_read, rs.nodeinfo_sent, rs.verified,
	      rs.links_down, rs.links_up, rs.nodes_new, rs.nodes_dropped, rs.routes_fixed, rs.rounds);
	sm->in_repair = 1;
	int rc = after_discovery(sm, 0, err);
	sm->in_repair = 0;
	return rc;
}

/* What a sweep does once sm->fabric is the new generation (discovered or repaired). */
static int after_discovery(struct sm *sm, int failures, GError **err)
{
	if (mastership_phase(sm)) {
		sm->subnet_up = 0;
		sm->sa_in.master = 0;
		sa_publish(sm->sa, &sm->sa_in);
		return SWEEP_STANDBY;
	}
	/* the SA answers as master, and shows this SM as it now is */
	sm->sa_in.master = 1;
	sm->sa_in.priority = sm->opt->sm_priority;
	sm->sa_in.state = sm->state;
	sm->sa_in.act_count = sminfo_act_count(sm);
	sa_publish(sm->sa, &sm->sa_in);
	struct fabric *f = sm->fabric;
	sweep_reset_state_change(sm); /* the bits a discovery as non-master left set */
	if (sm->first_master_sweep)
		sadb_restore(sm); /* before LIDs and programming, as OpenSM (sm/sadb.h) */
	transport_slice_label("lids");
	if (lid_phase(sm, f, err) < 0)
		return -1;
	struct lids_job lj;
	lids_job_start(sm, f, &lj);
	sm->out_of_standby = 0;
	double t0 = phase_now();
	uint64_t smp0 = transport_stats(sm->t)->sent;
	int first = sm->first_master_sweep;
	/* ClientReregister on the first master sweep, unless no_clients_rereg */
	struct program_pass *pp = program_pass_new(sm->prog, f, sm->opt, sm->part_policy, &sm->phases,
						   first && !sm->opt->no_clients_rereg);
	/* what needs no routes is written while they are computed (program.h) */
	struct routing_result *r = route_phase(sm, f, pp, err);
	if (!r) {
		/* nothing that needs routes is programmed (no LFT, no port past INIT): the switches
		 * keep the routes in force; the LIDs, port settings and P_Keys written beside the
		 * routing stay */
		program_pass_free(pp);
		lids_job_finish(sm, &lj);
		sa_index_free(lj.ix);
		sm->subnet_up = 0;
		if (err && g_error_matches(*err, ENGINE_ERROR, ENGINE_ERROR_CANCELLED)) {
			sm->repair_cancelled = sm->in_repair && !sm->stop;
			LOG_I("SWP-0010", "routing cancelled: %s", sm->stop ? "stopping" : "a newer sweep is due");
			g_clear_error(err);
			return SWEEP_INCOMPLETE;
		}
		LOG_SYS_E("SWP-0018", "no routes for generation %u: nothing is programmed that needs them (no "
		          "LFT block, no port moved past INIT), the switches keep the routes in force",
		          sm->generation);
		return -1;
	}
	struct program_report rep;
	int rc = program_with_routes(pp, r, &rep);
	sm->first_master_sweep = 0;
	sm->opt->reassign_lids = 0; /* -r applies to the first master sweep only */
	sm->sweep_writes = rep.writes;
	sm->sweep_failures = (uint32_t)failures + rep.failures + rep.not_active;
	transport_slice_label("guid2lid");
	lids_job_finish(sm, &lj);
	/* m_key_lookup: the keys written and seen this sweep, saved as OpenSM does at SUBNET UP,
	 * beside what the loop does until then (after the job above: both write the neighbors
	 * file when it changed) */
	struct slice_job keys;
	if (sm->opt->m_key_lookup && sm->g2m)
		slice_job_start(&keys, "ibsm-guid2mkey", keys_main, sm->g2m);
	else
		keys = (struct slice_job){ 0 };
	transport_step_now(sm->t);
	int complete = rc == 0 && !failures;
	/* up again after incomplete sweeps, too: the subnet was not declared up meanwhile */
	int say_up = complete && (first || !sm->subnet_up || rep.writes || sm->topology_changed);
	sm->subnet_up = complete;
	/* the SA answers from this generation (and a copy of its P_Key tables) from now on */
	if (sm->sa) {
		transport_step_now(sm->t);
		transport_slice_label("sa-pkeys");
		struct sa_pkeys *pk = sa_tables(sm, f);
		transport_step_now(sm->t);
		transport_slice_label("sa-publish");
		/* its indexes (tens of ms at 50 000 ports), built beside the programming */
		sa_publish_index(sm->sa, f, lj.ix);
		lj.ix = NULL;
		sa_inputs_set_routes(&sm->sa_in, r, pk);
		sa_publish(sm->sa, &sm->sa_in);
	}
	/* every group's tree again over this generation, and the MFT blocks that differ */
	transport_step_now(sm->t);
	transport_slice_label("mcast");
	mcast_sweep(sm, r);
	transport_slice_label("guid2mkey");
	slice_job_finish(sm->t, &keys);
	sa_index_free(lj.ix); /* no SA: not made */
	/* said once the SA answers from this generation and its groups are routed: a client that
	 * waits for SUBNET UP and then asks the SA gets what was just programmed */
	if (say_up)
		LOG_SYS("SWP-0002", "SUBNET UP");
	else if (complete)
		LOG_I("SWP-0006", "heavy sweep: nothing changed, nothing written");
	else
		LOG_E("SWP-0004", "sweep incomplete: %u SMPs failed for good; %u linked ports not ACTIVE",
		      failures + rep.failures, rep.not_active);
	transport_slice_label("enhanced-qos");
	enhanced_qos_sweep(sm, f); /* NVIDIA's QoSConfigSL rate limits; never fails the sweep */
	cc_sweep(sm->dispatch, f, sm->opt, &sm->stop); /* congestion control (program/cc.h); never fails it */
	transport_slice_label("after-mcast");
	/* what follows takes tens of ms on a large fabric: the SA is served between the parts */
	transport_step_now(sm->t);
	summarize(sm, f, r->engine);
	transport_step_now(sm->t);
	transport_slice_label("dumps");
	write_dumps(sm, r);
	transport_step_now(sm->t);
	transport_slice_label("set-live");
	sweep_set_live(sm, r);
	transport_step_now(sm->t);
	transport_slice_label("idle");
	LOG_I("SWP-0005", "heavy sweep %u: %u writes, %" PRIu64 " SMPs programming, %.3f s total",
	      sm->generation, rep.writes, transport_stats(sm->t)->sent - smp0, phase_now() - t0);
	return complete ? SWEEP_UP : SWEEP_INCOMPLETE;
}
