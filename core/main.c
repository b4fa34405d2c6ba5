/* main.c - the ibsm command line: OpenSM's flags, binding to a local IB port (or offline
 * with --fabric), the bring-up, and the simple serve loop until a signal. */
#include <errno.h>
#include <inttypes.h>
#include <endian.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/umad.h>
#include "cli.h"
#include "daemon.h"
#include "engines.h"
#include "loop.h"
#include "pkey.h"
#include "port_select.h"
#include "log.h"
#include "sm.h"
#include "sweep.h"
#include "ucast_cache.h"

#define IBSM_VERSION "0.1.0"
#define SWEEP_RETRIES 4 /* extra heavy sweeps when one is incomplete */

static struct sm *the_sm;
static char **argv_saved; /* pristine command line, for SIGHUP */

/* An error the operator must see: error lines always reach stderr once (log.c copies them
 * there when the log is a file), and the log file if there is one. */
static void report_error(const char *code, const char *msg)
{
	log_msg(IBSM_LOG_ERROR, code, "%s", msg);
}

static void on_signal(int sig)
{
	(void)sig;
	if (the_sm)
		the_sm->stop = 1;
}

static void print_summary(struct sm *sm, double seconds, const char *what)
{
	if (!sm->opt->progress)
		return;
	fprintf(stderr, "ibsm: %s: %u nodes (%u switches), LIDs 1-%u, engine %s, %.3f s\n", what,
		sm->summary_nodes, sm->summary_switches, sm->summary_max_lid, sm->summary_engine, seconds);
}

int main(int argc, char **argv)
{
	struct sm_options opt;
	int show_version = 0;
	/* GOption rewrites the argv it parses: parse shallow copies of a pristine one, so SIGHUP
	 * can apply the same command line again */
	argv_saved = g_strdupv(argv);
	char **argv_work = g_memdup2(argv_saved, sizeof(char *) * ((size_t)argc + 1));
	int build_rc = options_build(argc, argv_work, &opt, &show_version);
	g_free(argv_work);
	if (build_rc < 0) {
		options_free(&opt);
		return 1;
	}
	if (show_version) {
		printf("ibsm %s (plugin ABI %d.%d)\n", IBSM_VERSION, IBSM_ABI_MAJOR, IBSM_ABI_MINOR);
		options_free(&opt);
		return 0;
	}
	if (opt.erase_log && opt.log_file && strcmp(opt.log_file, "-"))
		(void)truncate(opt.log_file, 0);
	int lrc = log_open(opt.log_file, 1);
	if (lrc < 0) {
		fprintf(stderr, "ibsm: cannot open log file %s: %s\n", opt.log_file, strerror(-lrc));
		options_free(&opt);
		return 1;
	}
	log_set_level(opt.verbosity);

	struct sm sm;
	memset(&sm, 0, sizeof(sm));
	sm.opt = &opt;
	sm.state = SM_NOTACTIVE;
	the_sm = &sm;
	sm.t_start = sm_now();
	GError *err = NULL;
	int rc = 0;
	LOG_I("SM-0001", "ibsm %s starting (engines: %s, LMC %u, priority %u)", IBSM_VERSION,
	      opt.routing_engine, opt.lmc, opt.sm_priority);

	/* refuse a bad -R before touching anything */
	if (engine_chain_check(opt.routing_engine, opt.plugin_dir, &err) < 0) {
		report_error("SM-0002", err->message);
		g_error_free(err);
		options_free(&opt);
		log_close();
		return 1;
	}

	/* Offline, a fabric file is not the live fabric: use a guid2lid only when a cache is named
	 * (OSM_CACHE_DIR or --cache-dir), never the system one by default. */
	if (opt.fabric_file && !opt.cache_dir_explicit) {
		g_free(opt.cache_dir);
		opt.cache_dir = NULL;
	}
	/* the cache must be writable, or LIDs would not survive a restart */
	if (opt.cache_dir && (g_mkdir_with_parents(opt.cache_dir, 0755) < 0 ||
			      access(opt.cache_dir, W_OK) < 0)) {
		fprintf(stderr, "ibsm: cache directory %s is not writable: %s "
			"(set OSM_CACHE_DIR or --cache-dir)\n", opt.cache_dir, strerror(errno));
		LOG_E("SM-0008", "cache directory %s is not writable: %s", opt.cache_dir, strerror(errno));
		options_free(&opt);
		log_close();
		return 1;
	}

	if (opt.fabric_file) {
		if (sweep_offline(&sm, &err) < 0) {
			report_error("SM-0003", err->message);
			g_error_free(err);
			rc = 1;
		} else {
			print_summary(&sm, sm_now() - sm.t_start, "offline");
		}
		sm_log_stats(&sm);
		options_free(&opt);
		log_close();
		return rc;
	}

	/* -B: into the background before any libibumad call (umad2sim's receiver thread does not
	 * survive a fork); the parent exits 0 at once */
	if (opt.daemon && !opt.once) {
		if (!opt.log_file || !strcmp(opt.log_file, "-")) {
			report_error("SM-0015", "-B needs a log file (-f FILE): stderr goes to /dev/null");
			options_free(&opt);
			log_close();
			return 1;
		}
		if (daemon_detach(&err) < 0) {
			report_error("SM-0016", err->message);
			g_error_free(err);
			options_free(&opt);
			log_close();
			return 1;
		}
	}
	/* a pid file for -B and under systemd (logrotate signals by it) */
	int write_pid = !opt.once && opt.pid_file && *opt.pid_file &&
			(opt.daemon || g_getenv("NOTIFY_SOCKET"));
	if (write_pid && daemon_write_pidfile(opt.pid_file, &err) < 0) {
		report_error("SM-0017", err->message);
		g_error_free(err);
		options_free(&opt);
		log_close();
		return 1;
	}
	if (opt.daemon && !opt.once)
		daemon_stdio_to_devnull();

	struct local_port lp;
	if (umad_init() < 0 || choose_port(&opt, &lp) < 0) {
		options_free(&opt);
		log_close();
		return 1;
	}
	char msg[256];
	sm.dev = umad_dev_open(lp.ca, lp.port, msg, sizeof(msg));
	if (!sm.dev) {
		report_error("SM-0004", msg);
		options_free(&opt);
		log_close();
		return 1;
	}
	sm.port_guid = lp.guid;
	LOG_I("SM-0005", "bound to %s port %d, GUID 0x%016" PRIx64, lp.ca, lp.port, lp.guid);
	struct transport_io io;
	umad_dev_io(sm.dev, &io);
	struct transport_cfg tc = { .window = opt.window, .timeout_ms = opt.timeout_ms, .retries = opt.retries };
	sm.t = transport_new(&io, &tc);
	transport_set_unsolicited(sm.t, sm_unsolicited, &sm);

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (opt.progress)
		fprintf(stderr, "ibsm: bringing up the subnet from %s port %d (GUID 0x%016" PRIx64 ")\n",
			lp.ca, lp.port, lp.guid);
	if (!opt.once) {
		/* the daemon: the event loop does the first heavy sweep and everything after */
		rc = loop_run(&sm, argc, argv_saved);
		LOG_I("SM-0007", "exiting");
		if (write_pid)
			daemon_remove_pidfile(opt.pid_file);
	} else {
		int res = sweep_heavy(&sm, &err);
		/* An incomplete sweep (lost SMPs, a port that did not come up) is swept again at
		 * once, a few times, as a master SM must until the subnet is stable. */
		for (int again = 0; again < SWEEP_RETRIES && res == SWEEP_INCOMPLETE && !sm.stop; again++) {
			LOG_I("SM-0009", "sweep incomplete: sweeping again (%d of %d)", again + 1, SWEEP_RETRIES);
			sm_log_stats(&sm);
			res = sweep_heavy(&sm, &err);
		}
		if (res < 0) {
			report_error("SM-0006", err->message);
			g_clear_error(&err);
			rc = 1;
		} else if (res == SWEEP_STANDBY) {
			rc = 2;
		} else if (res == SWEEP_INCOMPLETE) {
			rc = 1;
		}
		if (res == SWEEP_UP)
			print_summary(&sm, sm_now() - sm.t_start, "SUBNET UP");
		sm_log_stats(&sm);
	}
	transport_free(sm.t);
	umad_dev_close(sm.dev);
	fabric_free(sm.fabric);
	ucast_cache_free(sm.ucast);
	g_free(sm.ucast_engine);
	if (sm.held_lft)
		g_hash_table_destroy(sm.held_lft);
	pkey_state_free(&sm);
	options_free(&opt);
	log_close();
	g_strfreev(argv_saved);
	return rc;
}
