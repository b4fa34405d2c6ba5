/* SPDX-License-Identifier: BSD-2-Clause */
/* main.c - the ibsm command line: the configuration, the log, the routing engines, then either
 * an offline run over a fabric file or the SM bound to a local IB port (--once, or the daemon's
 * event loop until a signal). */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <infiniband/umad.h>
#include "base/mad_cpu.h"
#include "base/log.h"
#include "config/build.h"
#include "ops/console.h"
#include "ops/metrics.h"
#include "ops/perfmgr_run.h"
#include "ops/report.h"
#include "routing/fallback_list.h"
#include "sm/daemon.h"
#include "sm/mcast_routing.h"
#include "sm/loop.h"
#include "sm/notify.h"
#include "sm/policies.h"
#include "sm/port_select.h"
#include "sm/sminfo.h"
#include "sm/stats.h"
#include "sm/sweep.h"
#include "sm/traps.h"

#define IBSM_VERSION "0.2.0"
#define SWEEP_RETRIES 4      /* extra heavy sweeps when one is incomplete */
#define SWEEP_RETRIES_MAX 16 /* ... and more while each gets further than the one before */

static struct sm *the_sm;

/* An error the operator must see: error lines always reach stderr once (log.c copies them
 * there when the log is a file), and the log file if there is one. */
static void report_error(const char *code, const char *msg)
{
	log_sys(IBSM_LOG_ERROR, code, "%s", msg);
}

static void on_signal(int sig)
{
	(void)sig;
	if (the_sm)
		the_sm->stop = 1;
}

/* SIGUSR1 (logrotate) and SIGHUP (reload) before the event loop owns them: noted here, acted
 * on by before_loop_signals(); their default action would kill the SM, e.g. while it waits
 * for its link. */
static volatile sig_atomic_t usr1_seen, hup_seen;

static void on_early_signal(int sig)
{
	if (sig == SIGUSR1)
		usr1_seen = 1;
	else
		hup_seen = 1;
}

static void before_loop_signals(void *ctx)
{
	(void)ctx;
	if (usr1_seen) {
		usr1_seen = 0;
		int rc = log_reopen();
		if (rc < 0)
			LOG_E("SM-0014", "SIGUSR1: cannot reopen the log file: %s; logging goes on to the "
			      "old one", log_open_strerror(rc));
		else
			LOG_I("SM-0013", "SIGUSR1: log file reopened");
	}
	if (hup_seen) {
		hup_seen = 0;
		LOG_I("SM-0015", "SIGHUP before the subnet is up: nothing to reload; the configuration "
		      "read at start stays");
	}
}

static void print_summary(struct sm *sm, double seconds, const char *what)
{
	if (!sm->opt->progress)
		return;
	fprintf(stderr, "ibsm: %s: %u nodes (%u switches), LIDs 1-%u, engine %s, %.3f s\n", what,
		sm->summary_nodes, sm->summary_switches, sm->summary_max_lid, sm->summary_engine, seconds);
}

/* Options from a pristine copy of argv (GOption rewrites what it parses; SIGHUP parses the
 * same command line again). Returns 0, 1 (exit 0: --version) or -1 (exit 1). */
static int configure(int argc, char **argv, struct sm_options *opt)
{
	int show_version = 0;
	char **work = g_memdup2(argv, sizeof(char *) * ((size_t)argc + 1));
	int rc = options_build(argc, work, opt, &show_version, loop_declared_keys, NULL);
	g_free(work);
	if (rc < 0)
		return -1;
	if (show_version) {
		printf("ibsm %s (plugin ABI %d.%d)\n", IBSM_VERSION, IBSM_ABI_MAJOR, IBSM_ABI_MINOR);
		return 1;
	}
	return 0;
}

static int open_log(const struct sm_options *opt)
{
	int erase = opt->erase_log && opt->log_file && strcmp(opt->log_file, "-");
	int rc = erase ? log_open_erased(opt->log_file, 1) : log_open(opt->log_file, 1);
	if (rc < 0) { /* said on stderr (the log is stderr now) and to syslog */
		log_set_syslog_target(opt->syslog_state_changes, opt->syslog_socket);
		log_set_syslog(opt->syslog_flags, opt->log_prefix);
		LOG_SYS_E("SM-0018", "cannot open log file %s: %s", opt->log_file, log_open_strerror(rc));
		return -1;
	}
	options_apply_log(opt);
	return 0;
}

/* The guid2lid directory: offline only when named; otherwise it must be writable, or LIDs
 * would not survive a restart. */
static int prepare_cache_dir(struct sm_options *opt)
{
	if (opt->fabric_file && !opt->cache_dir_explicit) {
		g_free(opt->cache_dir);
		opt->cache_dir = NULL;
	}
	if (opt->tmp_dir && g_mkdir_with_parents(opt->tmp_dir, 0755) < 0) /* --dump_files_dir DIR */
		LOG_E("SM-0016", "dump directory %s cannot be created: %s", opt->tmp_dir, strerror(errno));
	if (opt->cache_dir && (g_mkdir_with_parents(opt->cache_dir, 0755) < 0 ||
			       access(opt->cache_dir, W_OK) < 0)) {
		int e = errno; /* one error line: log.c copies it to stderr */
		LOG_SYS_E("SM-0008", "cache directory %s is not writable: %s (set OSM_CACHE_DIR or "
			  "--cache-dir)", opt->cache_dir, strerror(e));
		return -1;
	}
	return 0;
}

/* -B: into the background before any libibumad call (umad2sim's receiver thread does not
 * survive a fork), the caller waiting on *ready_fd until started() or our exit; then the pid
 * file (also under systemd: logrotate signals by it). */
static int daemonize(struct sm_options *opt, int *ready_fd, int *write_pid)
{
	GError *err = NULL;
	if (opt->daemon && !opt->once) {
		if (!opt->log_file || !strcmp(opt->log_file, "-")) {
			report_error("SM-0010", "-B needs a log file (-f FILE): stderr goes to /dev/null");
			return -1;
		}
		if (daemon_detach(ready_fd, &err) < 0) {
			report_error("SM-0011", err->message);
			g_error_free(err);
			return -1;
		}
	}
	*write_pid = !opt->once && opt->pid_file && *opt->pid_file &&
		     (opt->daemon || g_getenv("NOTIFY_SOCKET"));
	if (*write_pid && daemon_write_pidfile(opt->pid_file, &err) < 0) {
		report_error("SM-0012", err->message);
		g_error_free(err);
		*write_pid = 0;
		return -1;
	}
	return 0;
}

/* Bound and past every start-up error: -B's caller may return (exit 0), and our stdio, which
 * carried the errors until now, goes to /dev/null. */
static void started(struct sm *sm, int *ready_fd)
{
	if (sm->opt->daemon && !sm->opt->once)
		daemon_stdio_to_devnull();
	daemon_ready(ready_fd);
}

/* Binds to the local port: device, transport, the MAD dispatch and its agents. */
static int bind_port(struct sm *sm, struct local_port *lp)
{
	GError *err = NULL;
	/* before libibumad starts any thread of its own: those inherit this thread's CPU */
	if (mad_cpu_pin(sm->opt->mad_cpu, &err) < 0) {
		report_error("SM-0019", err->message);
		g_error_free(err);
		return -1;
	}
	if (mad_cpu_pinned() != MAD_CPU_OFF)
		LOG_I("SM-0020", "the MAD path stays on CPU %d (mad_cpu)", mad_cpu_pinned());
	if (umad_init() < 0) {
		report_error("SM-0017", "umad_init failed: libibumad cannot be used");
		return -1;
	}
	if (choose_port(sm->opt, lp) < 0)
		return -1;
	char msg[256];
	sm->dev = smdev_open(lp->ca, lp->port, msg, sizeof(msg));
	if (!sm->dev) {
		report_error("SM-0004", msg);
		return -1;
	}
	sm->port_guid = lp->guid;
	LOG_I("SM-0005", "bound to %s port %d, GUID 0x%016" PRIx64, lp->ca, lp->port, lp->guid);
	struct transport_io io;
	smdev_io(sm->dev, &io);
	struct transport_cfg tc = { .window = sm->opt->window, .timeout_ms = sm->opt->timeout_ms,
				    .retries = sm->opt->retries, .persist = 1,
				    .window2 = sm->opt->max_wire_smps2, .window2_timeout_us = sm->opt->max_smps_timeout };
	sm->t = transport_new(&io, &tc);
	sm_apply_mkey(sm);
	sm->dispatch = dispatch_new(sm->t);
	sminfo_agent_register(sm);
	traps_agent_register(sm);
	sm->sa = sa_new(sm->dispatch);
	sm->prog = programmer_new(sm->t, &sm->stop);
	/* what the switches' MFTs and the ports' SL2VL / VLArb tables hold, for their records */
	sm->sa_in.mft = programmer_mft(sm->prog);
	sm->sa_in.vlt = programmer_vl_tables(sm->prog);
	sa_publish(sm->sa, &sm->sa_in); /* with the keys sm_apply_mkey() put in */
	mcast_init(sm);
	phase_log_init(&sm->phases, sm->t, sm->opt->progress);
	return 0;
}

/* Did the sweep just made get further than the one before (it wrote something, or fewer
 * SMPs failed and fewer ports stayed down)? */
static int progressing(const struct sm *sm, uint32_t *last_failures)
{
	int p = sm->sweep_writes > 0 || sm->sweep_failures < *last_failures;
	*last_failures = sm->sweep_failures;
	return p;
}

/* The link of our port is down (it is the first IB port, or -g's): wait for it as OpenSM does.
 * Under systemd the service is up meanwhile (READY=1 with a STATUS saying what it waits for),
 * or a start would time out on a cable not yet plugged. 0 once up, 1 on SIGTERM. */
static int wait_for_link(struct sm *sm, const struct local_port *lp)
{
	if (port_link_up(lp->state))
		return 0;
	gchar *status = g_strdup_printf("waiting for the link of %s port %d", lp->ca, lp->port);
	service_notify_ready(status);
	g_free(status);
	return port_wait_link(sm->t, lp, &sm->stop);
}

/* --once: one heavy sweep, again at once while incomplete (lost SMPs, a port that did not come
 * up), as a master SM must until the subnet is stable: SWEEP_RETRIES times, and on (up to
 * SWEEP_RETRIES_MAX) while each sweep gets further, as on a lossy fabric. Exit status 0 up,
 * 1 failed, 2 standby or inactive (-I). */
static int run_once(struct sm *sm)
{
	GError *err = NULL;
	int res = sweep_heavy(sm, &err);
	uint32_t failures = sm->sweep_failures;
	int progress = 1;
	for (int again = 0; res == SWEEP_INCOMPLETE && !sm->stop &&
	     (again < SWEEP_RETRIES || (progress && again < SWEEP_RETRIES_MAX)); again++) {
		LOG_I("SM-0009", "sweep incomplete (%u SMPs lost or ports not ACTIVE): sweeping again "
		      "(%d of %d, more while each gets further)", sm->sweep_failures, again + 1,
		      SWEEP_RETRIES);
		stats_log(sm);
		res = sweep_heavy(sm, &err);
		progress = progressing(sm, &failures);
	}
	int rc = 0;
	if (res < 0) {
		report_error("SM-0006", err->message);
		g_clear_error(&err);
		rc = 1;
	} else if (res == SWEEP_STANDBY || res == SWEEP_INACTIVE) {
		rc = 2;
	} else if (res == SWEEP_INCOMPLETE) {
		rc = 1;
	}
	if (res == SWEEP_UP)
		print_summary(sm, phase_now() - sm->t_start, "SUBNET UP");
	stats_log(sm);
	return rc;
}

static int run_offline(struct sm *sm)
{
	GError *err = NULL;
	phase_log_init(&sm->phases, NULL, sm->opt->progress);
	node_names_load(sm->opt->node_name_map_name); /* the dumps' names, as online */
	int rc = 0;
	if (sweep_offline(sm, &err) < 0) {
		report_error("SM-0003", err->message);
		g_error_free(err);
		rc = 1;
	} else {
		print_summary(sm, phase_now() - sm->t_start, "offline");
	}
	stats_log(sm);
	return rc;
}

/* SIGTERM and SIGINT stop the SM, SIGHUP and SIGUSR1 are noted (before_loop_signals): outside
 * the event loop, which owns them while it runs. When it returns, GLib's signal sources go
 * and GLib puts SIG_DFL back: installed again then, or a second SIGTERM, a ^C or logrotate's
 * SIGUSR1 during the shutdown (the threads joined, the SMPs on the wire waited for) would kill
 * the SM before it removed its pid file. */
static void own_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_early_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
}

static int run_online(struct sm *sm, int argc, char **argv)
{
	int ready_fd = -1, write_pid = 0, rc = 1;
	struct local_port lp;
	if (daemonize(sm->opt, &ready_fd, &write_pid) < 0)
		goto out;
	own_signals();
	signal(SIGPIPE, SIG_IGN);
	if (bind_port(sm, &lp) < 0)
		goto out;
	started(sm, &ready_fd);
	transport_set_tick(sm->t, before_loop_signals, NULL);
	int stopped = wait_for_link(sm, &lp);
	transport_set_tick(sm->t, NULL, NULL);
	before_loop_signals(NULL);
	if (stopped) {
		rc = sm->opt->once ? 1 : 0; /* stopped before the subnet was up: --once failed */
		goto out;
	}
	if (sm->opt->progress)
		fprintf(stderr, "ibsm: bringing up the subnet from %s port %d (GUID 0x%016" PRIx64 ")\n",
			lp.ca, lp.port, lp.guid);
	policies_load_partitions(sm);
	policies_load_qos(sm);
	if (sm->opt->once) {
		rc = run_once(sm);
	} else {
		/* the daemon: the event loop does the first heavy sweep and everything after */
		perfmgr_run_start(sm);
		console_start(sm, IBSM_VERSION); /* never fatal (ops/console.h) */
		metrics_start(sm); /* metrics_port, systemd STATUS (never fatal: ops/metrics.h) */
		report_file_start(sm); /* fabric_report_file after heavy sweeps (ops/report.h) */
		rc = loop_run(sm, argc, argv);
		own_signals(); /* GLib left SIG_DFL behind */
		console_stop();
		report_file_stop();
		metrics_stop();
		stats_log(sm); /* the totals at exit, too (after the last sweep's) */
	}
out:
	if (!sm->opt->once)
		LOG_I("SM-0007", "exiting");
	if (write_pid)
		daemon_remove_pidfile(sm->opt->pid_file);
	if (ready_fd >= 0)
		close(ready_fd); /* a start-up error: -B's caller exits with our status */
	return rc;
}

#if defined(__SANITIZE_ADDRESS__)
void __lsan_do_leak_check(void); /* the leak check LeakSanitizer would run at exit() */
#endif

/* The end, once everything the SM owns is released: _exit, not exit. The libraries' atexit
 * handlers are skipped on purpose: libumad2sim's joins its receiver thread while it holds
 * the mutex that thread takes for a MAD that has just arrived (a deadlock: the SM never
 * exits), and the umad port is still open (mad/device.h smdev_release_at_exit). Nothing of
 * ibsm's is left to atexit; standard I/O is flushed here, umad2sim's ./sys-<pid>/ removed, and
 * an ASan build runs its leak check here (valgrind checks at the process's end either way). */
static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path);
}

/* Under libumad2sim (the simulator's stand-in for /dev/umad, preloaded), what its atexit
 * cleanup would have done: remove the ./sys-<pid>/ tree it made in the working directory. */
static void remove_umad2sim_sysfs(void)
{
	const char *preload = getenv("LD_PRELOAD");
	if (!preload || !strstr(preload, "umad2sim"))
		return;
	char path[64];
	g_snprintf(path, sizeof(path), "./sys-%d", (int)getpid());
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
		nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static G_NORETURN void end_process(int rc)
{
	remove_umad2sim_sysfs();
	fflush(NULL);
#if defined(__SANITIZE_ADDRESS__)
	__lsan_do_leak_check();
#endif
	_exit(rc);
}

/* Everything the SM holds, in reverse order of construction. */
static void sm_release(struct sm *sm)
{	if (sm->trap_lids)
		g_array_free(sm->trap_lids, TRUE);

	if (sm->t) /* first: nothing may answer into what is freed below, or into a closed port */
		transport_quiesce(sm->t, 2 * sm->opt->timeout_ms);
	sweep_join_dumps(sm);
	sweep_set_live(sm, NULL);
	traps_agent_unregister(sm);
	perfmgr_run_stop(sm); /* before the dispatch its answers come through */
	mcast_free(sm);
	sa_free(sm->sa);
	sm->sa = NULL; /* policies_free below must not hand it anything */
	sa_inputs_clear(&sm->sa_in);
	dispatch_free(sm->dispatch);
	programmer_free(sm->prog);
	transport_free(sm->t);
	smdev_release_at_exit(sm->dev); /* the port closes with the process (main's end) */
	fabric_unref(sm->fabric);
	ucast_cache_free(sm->ucast);
	g_free(sm->ucast_engine);
	fallback_list_free(sm->chain);
	policies_free(sm);
}

int main(int argc, char **argv)
{
	/* from the first instruction: a reload or logrotate signal sent while the SM is still
	 * starting (a restart followed at once by a reload) must not kill it */
	struct sigaction early;
	memset(&early, 0, sizeof(early));
	early.sa_handler = on_early_signal;
	early.sa_flags = SA_RESTART; /* a read or connect of the start-up is not cut short */
	sigaction(SIGHUP, &early, NULL);
	sigaction(SIGUSR1, &early, NULL);
	struct sm_options opt;
	char **argv_saved = g_strdupv(argv);
	int rc = configure(argc, argv_saved, &opt);
	if (rc != 0 || open_log(&opt) < 0) {
		options_free(&opt);
		g_strfreev(argv_saved);
		return rc > 0 ? 0 : 1;
	}
	struct sm sm;
	memset(&sm, 0, sizeof(sm));
	sm.opt = &opt;
	sm.state = IB_SM_NOTACTIVE;
	sa_inputs_init(&sm.sa_in);
	sm.t_start = phase_now();
	the_sm = &sm;
	LOG_I("SM-0001", "ibsm %s starting (engines: %s%s%s, LMC %u, priority %u)", IBSM_VERSION,
	      opt.routing_engine, opt.rch_policy_file ? "; routing chain " : "",
	      opt.rch_policy_file ? opt.rch_policy_file : "", opt.lmc, opt.sm_priority);
	options_log_notes(&opt, 0); /* the files used, the keys without effect */
	/* the engines are loaded and set up before anything touches the fabric: a bad -R fails here */
	GError *err = NULL;
	sm.chain = fallback_list_new(opt.routing_engine, &opt, &err);
	if (!sm.chain) {
		report_error("SM-0002", err->message);
		g_error_free(err);
		rc = 1;
	} else if (prepare_cache_dir(&opt) < 0) {
		rc = 1;
	} else {
		rc = opt.fabric_file ? run_offline(&sm) : run_online(&sm, argc, argv_saved);
	}
	sm_release(&sm);
	the_sm = NULL;
	options_free(&opt);
	log_close();
	g_strfreev(argv_saved);
	end_process(rc);
}
