/* SPDX-License-Identifier: BSD-2-Clause */
/* loop.c - the daemon's event loop. GLib's main loop owns signals (g_unix_signal_add) and the
 * sweep timer; the umad fd gets its own always-ready source whose dispatch blocks in the
 * transport for at most 100 ms (under umad2sim poll() sees only the umad fd). Sources only
 * set flags; the umad dispatch does the work, so traps, the light-sweep timer and SIGHUP
 * coalesce into one pending heavy sweep, and a signal is seen within ~100 ms even mid-sweep
 * (the transport's tick dispatches the signal sources during long drains). What lives above
 * the SM (the console, the metrics server) is served the same way: its tick hooks run every
 * pass and from the transport's tick, and it asks for sweeps through loop_request(). */
#include <errno.h>
#include <glib-unix.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>
#include "base/log.h"
#include "config/build.h"
#include "routing/loader.h"
#include "routing/ucast_cache.h"
#include "sm/light.h"
#include "sm/loop.h"
#include "sm/notify.h"
#include "sm/offsweep.h"
#include "sm/policies.h"
#include "sm/sadb.h"
#include "sm/sminfo.h"
#include "sm/stats.h"
#include "sm/sweep.h"

#define INCOMPLETE_RETRY_S 1.0 /* an incomplete sweep is retried this soon, */
#define INCOMPLETE_RETRY_MAX_S 8.0 /* doubling while sweeps stay incomplete, up to this */
#define SMINFO_RECHECK_S 1.0   /* a better SM seen discovering is asked again this soon */

struct loop {
	struct sm *sm;
	GMainLoop *ml;
	int argc;
	char **argv;
	int heavy_pending, repair_pending, light_pending, hup_pending;
	double heavy_at;           /* a heavy sweep is due at this time (0: none) */
	unsigned incomplete;       /* heavy sweeps in a row that did not complete */
	struct light_state light;  /* where the light sweep's port check goes on (sm/light.h) */
	double next_standby_poll;
	int standby_misses;
	int exit_status;
	int notified, reloading;
	guint light_timer;
};

/* The tick hooks, the requests and the counts: process-wide (one SM per process), so hooks
 * and requests may come before loop_run(). */
struct tick_hook {
	loop_tick_fn fn;
	void *data;
};
static GArray *tick_hooks;         /* of struct tick_hook */
static int in_tick;
static int req_heavy, req_light, req_reroute, req_desc;
static int in_sweep;
static int sweeping_off;           /* console `sweep off` */
static struct loop_counts counts = { .last_result = -2 };

void loop_tick_add(struct sm *sm, loop_tick_fn fn, void *data)
{
	(void)sm;
	if (!tick_hooks)
		tick_hooks = g_array_new(FALSE, FALSE, sizeof(struct tick_hook));
	struct tick_hook h = { fn, data };
	g_array_append_val(tick_hooks, h);
}

void loop_tick_remove(loop_tick_fn fn, void *data)
{
	for (guint i = 0; tick_hooks && i < tick_hooks->len; i++) {
		struct tick_hook *h = &g_array_index(tick_hooks, struct tick_hook, i);
		if (h->fn == fn && h->data == data) {
			g_array_remove_index(tick_hooks, i);
			break;
		}
	}
	if (tick_hooks && !tick_hooks->len && !in_tick) {
		g_array_free(tick_hooks, TRUE);
		tick_hooks = NULL;
	}
}

void loop_tick_run(struct sm *sm)
{
	if (in_tick || !tick_hooks)
		return;
	in_tick = 1;
	/* by index: a hook may remove itself (or add another) */
	for (guint i = 0; tick_hooks && i < tick_hooks->len; i++) {
		struct tick_hook h = g_array_index(tick_hooks, struct tick_hook, i);
		h.fn(sm, h.data);
		if (tick_hooks && i < tick_hooks->len &&
		    (g_array_index(tick_hooks, struct tick_hook, i).fn != h.fn ||
		     g_array_index(tick_hooks, struct tick_hook, i).data != h.data))
			i--; /* it removed itself: the next one moved into its place */
	}
	in_tick = 0;
	if (tick_hooks && !tick_hooks->len) {
		g_array_free(tick_hooks, TRUE);
		tick_hooks = NULL;
	}
}

void loop_request(struct sm *sm, enum loop_req what)
{
	(void)sm;
	switch (what) {
	case LOOP_REQ_HEAVY: req_heavy = 1; break;
	case LOOP_REQ_LIGHT: req_light = 1; break;
	case LOOP_REQ_REROUTE: req_reroute = req_heavy = 1; break;
	case LOOP_REQ_UPDATE_DESC: req_desc = req_heavy = 1; break;
	}
}

int loop_in_sweep(void)
{
	return in_sweep;
}

int loop_set_sweeping(struct sm *sm, int on)
{
	(void)sm;
	int was = !sweeping_off;
	sweeping_off = !on;
	return was;
}

int loop_sweeping(const struct sm *sm)
{
	(void)sm;
	return !sweeping_off;
}

const struct loop_counts *loop_counts(void)
{
	return &counts;
}

GPtrArray *loop_declared_keys(const struct sm_options *o, void *ctx)
{
	(void)ctx;
	return engine_declared_keys(o->plugin_dir);
}

static gboolean on_stop(gpointer data)
{
	struct loop *l = data;
	LOG_I("LOOP-0002", "stop signal: exiting");
	service_notify_stopping();
	l->sm->stop = 1;
	g_main_loop_quit(l->ml);
	return G_SOURCE_CONTINUE;
}

static gboolean on_hup(gpointer data)
{
	struct loop *l = data;
	l->hup_pending = 1;
	return G_SOURCE_CONTINUE;
}

static gboolean on_usr1(gpointer data)
{
	(void)data;
	int rc = log_reopen();
	if (rc < 0)
		LOG_E("LOOP-0003", "SIGUSR1: cannot reopen the log file: %s", log_open_strerror(rc));
	else
		LOG_I("LOOP-0004", "SIGUSR1: log file reopened");
	return G_SOURCE_CONTINUE;
}

static gboolean on_light_timer(gpointer data)
{
	struct loop *l = data;
	if (!sweeping_off)
		l->light_pending = 1;
	return G_SOURCE_CONTINUE;
}

/* During a long drain: dispatch the signal and timer sources (they only set flags). */
static void transport_tick(void *ctx)
{
	struct loop *l = ctx;
	g_main_context_iteration(NULL, FALSE);
	loop_tick_run(l->sm);
}

static gboolean on_light_timer(gpointer data);

static void reload(struct loop *l)
{
	struct sm_options fresh;
	int show_version = 0;
	LOG_I("LOOP-0005", "SIGHUP: re-reading the configuration, then a heavy sweep");
	GError *err = NULL;
	service_notify_reloading();
	char **argv = g_memdup2(l->argv, sizeof(char *) * ((size_t)l->argc + 1));
	int rc = options_build_err(l->argc, argv, &fresh, &show_version, loop_declared_keys, NULL, &err);
	g_free(argv);
	struct fallback_list *chain = rc < 0 ? NULL : fallback_list_new(fresh.routing_engine, &fresh, &err);
	if (!chain) {
		LOG_E("LOOP-0006", "SIGHUP: the new configuration is not valid (%s); keeping the running one",
		      err ? err->message : "?");
		g_clear_error(&err);
		options_free(&fresh);
		policies_load_partitions(l->sm); /* the policy files are re-read all the same */
		policies_load_qos(l->sm);
		return;
	}
	/* the engines are set up anew with the new configuration; the routes in force keep the
	 * instances that computed them until the next routing replaces them */
	fallback_list_free(l->sm->chain);
	l->sm->chain = chain;
	/* -A: routes cached under the old configuration are not the new engines' (their files,
	 * keys and policies may have changed): the next sweep routes again */
	ucast_cache_free(l->sm->ucast);
	l->sm->ucast = NULL;
	struct sm_options old = *l->sm->opt;
	*l->sm->opt = fresh;
	if (fresh.sweep_interval != old.sweep_interval) {
		if (l->light_timer)
			g_source_remove(l->light_timer);
		l->light_timer = fresh.sweep_interval > 0 ?
				 g_timeout_add_seconds((guint)fresh.sweep_interval, on_light_timer, l) : 0;
		LOG_I("LOOP-0007", "sweep interval now %d s", fresh.sweep_interval);
	}
	/* what only applies at start stays as it was */
	l->sm->opt->reassign_lids = 0;
	if (g_strcmp0(fresh.log_file, old.log_file) || fresh.erase_log != old.erase_log)
		LOG_I("LOOP-0009", "SIGHUP: log_file and accum_log_file take effect at the next start; "
		      "the log stays %s", old.log_file ? old.log_file : "-");
	if (fresh.mad_cpu != old.mad_cpu && old.mad_cpu < 0)
		LOG_I("LOOP-0009", "SIGHUP: mad_cpu takes effect at the next start; the MAD path stays unpinned");
	else if (fresh.mad_cpu != old.mad_cpu)
		LOG_I("LOOP-0009", "SIGHUP: mad_cpu takes effect at the next start; the MAD path stays on CPU %d",
		      old.mad_cpu);
	l->sm->opt->mad_cpu = old.mad_cpu;
	options_free(&old);
	sm_apply_mkey(l->sm); /* ports keep their keys until the next sweep writes the new ones */
	options_apply_log(l->sm->opt);
	options_log_notes(l->sm->opt, 0);
	policies_load_partitions(l->sm); /* re-read -P (a bad file keeps the policy in force) */
	policies_load_qos(l->sm);        /* and -Y, likewise */
}

/* A heavy sweep; with `repair`, a repair first (sweep_repair), the heavy sweep if declined. */
static void heavy(struct loop *l, int repair)
{
	struct sm *sm = l->sm;
	GError *err = NULL;
	double t0 = phase_now();
	in_sweep = 1;
	int res = repair ? sweep_repair(sm, &err) : SWEEP_DECLINED;
	if (repair && res != SWEEP_DECLINED)
		counts.repairs++;
	else if (repair)
		counts.repairs_declined++;
	if (res == SWEEP_DECLINED)
		res = sweep_heavy(sm, &err);
	in_sweep = 0;
	/* what follows a sweep (its STATS lines, the hooks) is served apart from it */
	transport_slice_label("after-sweep");
	transport_step_now(sm->t);
	if (res < 0) {
		LOG_SYS_E("LOOP-0001", "%s", err->message);
		g_clear_error(&err);
	}
	if (sm->fatal) { /* exit_on_fatal (sm/sweep.c): the daemon exits with status 1 */
		l->exit_status = 1;
		g_main_loop_quit(l->ml);
	}
	counts.heavy++;
	if (res < 0)
		counts.heavy_failed++;
	else if (res < 4)
		counts.heavy_by_result[res]++;
	counts.last_result = res < 0 ? -1 : res;
	counts.last_heavy_at = phase_now();
	counts.last_heavy_seconds = counts.last_heavy_at - t0;
	stats_log(sm);
	transport_step_now(sm->t);
	offsweep_after_sweep(sm); /* routes kept from the cache over a change: balanced later */
	/* An incomplete sweep (SMPs lost for good, a port that would not go ACTIVE) is retried
	 * after 1 s, then 2, 4, 8 s while sweeps stay incomplete: not sooner when much was lost.
	 * What it could not reach keeps its routes (fabric/carry.h), so nothing waits on the retry;
	 * and a lossy fabric swept back to back only gets more load, and its live nodes more
	 * chances to be missed CARRY_MAX_MISSES times in a row. A trap, SIGHUP or a light sweep
	 * that sees a change still sweeps at once. */
	l->incomplete = res == SWEEP_INCOMPLETE || res < 0 ? l->incomplete + 1 : 0;
	l->heavy_at = l->incomplete ? phase_now() + MIN(INCOMPLETE_RETRY_S * (double)(1u << MIN(l->incomplete - 1, 8u)),
							   INCOMPLETE_RETRY_MAX_S) : 0;
	if (!l->heavy_at && sm->sminfo_recheck) /* a better SM was still discovering */
		l->heavy_at = phase_now() + SMINFO_RECHECK_S;
	if (res == SWEEP_STANDBY) {
		l->next_standby_poll = phase_now() + sm->opt->sminfo_polling_timeout / 1000.0;
		l->standby_misses = 0;
	}
	/* systemd: READY after the first sweep whatever came of it (a standby or cut-off SM must
	 * not be killed for missing its start timeout), and again after every reload */
	const char *status = res == SWEEP_UP ? "SUBNET UP" : res == SWEEP_STANDBY ? "STANDBY" :
			     res == SWEEP_INACTIVE ? "NOTACTIVE" : "sweep incomplete, retrying";
	if (!l->notified || l->reloading) {
		char text[128];
		g_snprintf(text, sizeof(text), "%s (%u nodes)", status, sm->summary_nodes);
		service_notify_ready(text);
		l->notified = 1;
		l->reloading = 0;
	}
}

static gboolean umad_prepare(GSource *s, gint *timeout)
{
	(void)s;
	*timeout = 0;
	return TRUE;
}

static gboolean umad_dispatch(GSource *s, GSourceFunc cb, gpointer data)
{
	(void)s; (void)cb;
	struct loop *l = data;
	struct sm *sm = l->sm;
	if (sm->stop)
		return G_SOURCE_CONTINUE;
	if (l->hup_pending) {
		l->hup_pending = 0;
		reload(l);
		l->reloading = 1;
		l->heavy_pending = 1;
	}
	if (sm->takeover_pending) { /* the master handed over to us (sm/sminfo.c) */
		sm->takeover_pending = 0;
		l->heavy_pending = 1;
	}
	if (sm->trap_pending) {
		sm->trap_pending = 0;
		if (sm->state != IB_SM_STANDBY && !sm->opt->sm_inactive && !sweeping_off) {
			/* traps 128 alone: a repair may do (sweep_repair declines what it cannot) */
			if (sm->trap_full || !sm->opt->repair_sweep)
				l->heavy_pending = 1;
			else
				l->repair_pending = 1;
		}
	}
	if (req_reroute) { /* console `reroute`: the routes cached under -A are not reused */
		req_reroute = 0;
		ucast_cache_free(sm->ucast);
		sm->ucast = NULL;
	}
	if (req_desc) {    /* console `update_desc` */
		req_desc = 0;
		sm->reread_desc = 1;
	}
	if (req_heavy) {
		req_heavy = 0;
		l->heavy_pending = 1;
	}
	if (req_light) {
		req_light = 0;
		l->light_pending = 1;
	}
	if (l->light_pending && sm->opt->force_heavy_sweep && sm->state == IB_SM_MASTER) {
		l->light_pending = 0; /* force_heavy_sweep: every periodic sweep is a heavy one */
		l->heavy_pending = 1;
	}
	if (l->light_pending) {
		l->light_pending = 0;
		/* the SMs too, as OpenSM's light sweep does: a better one may wait in STANDBY */
		if (sm->state == IB_SM_MASTER) {
			counts.light++;
			counts.last_light_at = phase_now();
			in_sweep = 1;
			transport_slice_label("light");
			int changed = light_sweep(sm, &l->light) || sminfo_master_check(sm);
			transport_slice_label("idle");
			in_sweep = 0;
			if (!changed)
				sadb_save(sm); /* sa_db_dump: the SA's state, if it changed (OpenSM's place) */
			if (changed) {
				counts.light_changes++;
				/* PortStateChange alone (light.c noted the switches): a repair may do */
				if (sm->trap_full || !sm->trap_lids || !sm->trap_lids->len || !sm->opt->repair_sweep)
					l->heavy_pending = 1;
				else
					l->repair_pending = 1;
			}
		}
	}
	if (sm->state == IB_SM_STANDBY && phase_now() >= l->next_standby_poll) {
		/* every sminfo_polling_timeout ms; polling_retry_number misses in a row: take over */
		l->next_standby_poll = phase_now() + sm->opt->sminfo_polling_timeout / 1000.0;
		if (sminfo_poll_master(sm)) {
			l->standby_misses = 0;
		} else if (++l->standby_misses >= sm->opt->polling_retry_number) {
			LOG_SYS("LOOP-0008", "master 0x%016" PRIx64 " stopped answering: taking over after "
				"%d unanswered polls", sm->master_guid, l->standby_misses);
			l->standby_misses = 0;
			l->heavy_pending = 1;
		} else {
			LOG_I("LOOP-0010", "master 0x%016" PRIx64 " did not answer poll %d of %d",
			      sm->master_guid, l->standby_misses, sm->opt->polling_retry_number);
		}
	}
	if (!sweeping_off && offsweep_due(sm)) /* off-sweep balancing: quiet for its window */
		l->heavy_pending = 1;
	if (l->heavy_at && phase_now() >= l->heavy_at && !sweeping_off)
		l->heavy_pending = 1;
	if ((l->heavy_pending || l->repair_pending) && !sm->stop) {
		int repair = !l->heavy_pending;
		l->heavy_pending = l->repair_pending = 0;
		heavy(l, repair);
	}
	transport_slice_label("tick-hooks");
	loop_tick_run(sm); /* the console, metrics, ... (loop.h) */
	transport_slice_label("idle");
	if (!sm->stop)
		/* serve SMInfo, traps, SA; block at most 100 ms, less when a trap asks for a sweep */
		transport_poll_until(sm->t, 100, &sm->trap_pending);
	return G_SOURCE_CONTINUE;
}

static GSourceFuncs umad_funcs = { umad_prepare, NULL, umad_dispatch, NULL, NULL, NULL };

int loop_run(struct sm *sm, int argc, char **argv)
{
	struct loop l;
	memset(&l, 0, sizeof(l));
	l.sm = sm;
	l.argc = argc;
	l.argv = argv;
	l.ml = g_main_loop_new(NULL, FALSE);
	l.heavy_pending = 1; /* the first heavy sweep */
	guint sids[4];
	sids[0] = g_unix_signal_add(SIGTERM, on_stop, &l);
	sids[1] = g_unix_signal_add(SIGINT, on_stop, &l);
	sids[2] = g_unix_signal_add(SIGHUP, on_hup, &l);
	sids[3] = g_unix_signal_add(SIGUSR1, on_usr1, &l);
	l.light_timer = sm->opt->sweep_interval > 0 ?
			g_timeout_add_seconds((guint)sm->opt->sweep_interval, on_light_timer, &l) : 0;
	GSource *src = g_source_new(&umad_funcs, sizeof(GSource));
	g_source_set_callback(src, NULL, &l, NULL);
	g_source_attach(src, NULL);
	transport_set_tick(sm->t, transport_tick, &l);
	if (!sm->stop)
		g_main_loop_run(l.ml);
	sadb_save(sm); /* at exit, as OpenSM: the master's SA state, if it changed */
	transport_set_tick(sm->t, NULL, NULL);
	g_source_destroy(src);
	g_source_unref(src);
	for (int i = 0; i < 4; i++)
		g_source_remove(sids[i]);
	if (l.light_timer)
		g_source_remove(l.light_timer);
	g_main_loop_unref(l.ml);
	return l.exit_status;
}
