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
#include "engines.h"
#include "log.h"
#include "sm.h"
#include "sweep.h"

#define IBSM_VERSION "0.1.0"
#define SWEEP_RETRIES 4 /* extra heavy sweeps when one is incomplete */

static struct sm *the_sm;

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

static gboolean parse_debug(const char *name, const char *value, gpointer data, GError **err)
{
	(void)name;
	struct sm_options *o = data;
	char *end;
	unsigned long v = strtoul(value, &end, 0);
	if (*end || end == value) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "bad -D value '%s'", value);
		return FALSE;
	}
	o->debug_flags = (uint32_t)v;
	return TRUE;
}

static int verbose_count;
static gboolean opt_verbose(const char *n, const char *v, gpointer d, GError **e)
{
	(void)n; (void)v; (void)d; (void)e;
	verbose_count++;
	return TRUE;
}

static char *guid_str, *lmc_str;
static int max_verbose, show_version;

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end || end == s)
		return -1;
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct sm_options *o)
{
	char *log_file = NULL, *engine = NULL, *cache = NULL;
	int prio = -1, lmc = -1;
	GOptionEntry entries[] = {
		{ "guid", 'g', 0, G_OPTION_ARG_STRING, &guid_str, "Port GUID to bind (0: list ports and ask)", "GUID" },
		{ "lmc", 'l', 0, G_OPTION_ARG_INT, &lmc, "LMC: 2^LMC LIDs per CA port (0-7)", "LMC" },
		{ "priority", 'p', 0, G_OPTION_ARG_INT, &prio, "SM priority (0-15)", "PRIO" },
		{ "reassign_lids", 'r', 0, G_OPTION_ARG_NONE, &o->reassign_lids, "Reassign all LIDs", NULL },
		{ "routing_engine", 'R', 0, G_OPTION_ARG_STRING, &engine, "Routing engines, in order: a,b,c[,no_fallback]", "NAMES" },
		{ "root_guid_file", 'a', 0, G_OPTION_ARG_FILENAME, &o->root_guid_file, "Root switch GUIDs (updn, ftree)", "FILE" },
		{ "cn_guid_file", 'u', 0, G_OPTION_ARG_FILENAME, &o->cn_guid_file, "Compute node GUIDs (ftree)", "FILE" },
		{ "io_guid_file", 'G', 0, G_OPTION_ARG_FILENAME, &o->io_guid_file, "I/O node GUIDs (ftree)", "FILE" },
		{ "max_reverse_hops", 'H', 0, G_OPTION_ARG_INT, &o->max_reverse_hops, "Reverse hops for I/O nodes (ftree)", "N" },
		{ "ignore_guids", 'i', 0, G_OPTION_ARG_FILENAME, &o->port_prof_ignore_file, "Port GUIDs ignored by link load balancing", "FILE" },
		{ "connect_roots", 'z', 0, G_OPTION_ARG_NONE, &o->connect_roots, "Connect roots (updn)", NULL },
		{ "log_file", 'f', 0, G_OPTION_ARG_FILENAME, &log_file, "Log file ('-' = stderr; default /var/log/ibsm.log)", "FILE" },
		{ "erase_log_file", 'e', 0, G_OPTION_ARG_NONE, &o->erase_log, "Truncate the log file first", NULL },
		{ "verbose", 'v', G_OPTION_FLAG_NO_ARG, G_OPTION_ARG_CALLBACK, opt_verbose, "More verbose (repeatable)", NULL },
		{ "vf", 'V', 0, G_OPTION_ARG_NONE, &max_verbose, "Most verbose", NULL },
		{ "debug", 'D', 0, G_OPTION_ARG_CALLBACK, parse_debug, "Log flags (0x1 error, 0x2 info, 0x4 verbose, 0x8 debug, 0x40 routing dumps)", "FLAGS" },
		{ "sweep", 's', 0, G_OPTION_ARG_INT, &o->sweep_interval, "Sweep interval in seconds (0: none)", "SEC" },
		{ "once", 'o', 0, G_OPTION_ARG_NONE, &o->once, "Bring the subnet up once, then exit", NULL },
		{ "timeout", 't', 0, G_OPTION_ARG_INT, &o->timeout_ms, "SMP timeout in ms", "MS" },
		{ "retries", 0, 0, G_OPTION_ARG_INT, &o->retries, "SMP retries", "N" },
		{ "maxsmps", 'n', 0, G_OPTION_ARG_INT, &o->window, "SMPs in flight (default 64)", "N" },
		{ "max_op_vls", 0, 0, G_OPTION_ARG_INT, &lmc_str, "Max operational VLs (1-5)", "N" },
		{ "plugin-dir", 0, 0, G_OPTION_ARG_FILENAME, &o->plugin_dir, "Extra routing-engine plugin directory", "DIR" },
		{ "fabric", 0, 0, G_OPTION_ARG_FILENAME, &o->fabric_file, "Offline: route this ibnetdiscover/ibsim fabric file, no MADs", "FILE" },
		{ "progress", 0, 0, G_OPTION_ARG_NONE, &o->progress, "One line per phase on stderr", NULL },
		{ "cache-dir", 0, 0, G_OPTION_ARG_FILENAME, &cache, "Cache dir for guid2lid (default $OSM_CACHE_DIR or /var/cache/ibsm)", "DIR" },
		{ "version", 0, 0, G_OPTION_ARG_NONE, &show_version, "Print the version", NULL },
		{ NULL, 0, 0, 0, NULL, NULL, NULL }
	};
	GOptionContext *ctx = g_option_context_new("- InfiniBand subnet manager");
	GOptionGroup *grp = g_option_group_new("ibsm", "ibsm", "ibsm", o, NULL);
	g_option_group_add_entries(grp, entries);
	g_option_context_set_main_group(ctx, grp);
	g_option_context_set_summary(ctx, "Discovers the fabric, assigns LIDs, routes with plugin engines, "
				     "programs every switch and brings ports to ACTIVE.");
	GError *err = NULL;
	int max_vls = 0;
	(void)max_vls;
	if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
		fprintf(stderr, "ibsm: %s (see --help)\n", err->message);
		g_error_free(err);
		g_option_context_free(ctx);
		return -1;
	}
	g_option_context_free(ctx);
	if (argc > 1) {
		fprintf(stderr, "ibsm: unexpected argument '%s' (see --help)\n", argv[1]);
		return -1;
	}
	if (show_version) {
		printf("ibsm %s (plugin ABI %d.%d)\n", IBSM_VERSION, IBSM_ABI_MAJOR, IBSM_ABI_MINOR);
		exit(0);
	}
	if (lmc >= 0) {
		if (lmc > 7) {
			fprintf(stderr, "ibsm: -l %d: LMC must be 0-7\n", lmc);
			return -1;
		}
		o->lmc = (uint8_t)lmc;
	}
	if (prio >= 0) {
		if (prio > 15) {
			fprintf(stderr, "ibsm: -p %d: priority must be 0-15\n", prio);
			return -1;
		}
		o->sm_priority = (uint8_t)prio;
	}
	if (guid_str) {
		if (parse_u64(guid_str, &o->guid) < 0) {
			fprintf(stderr, "ibsm: -g '%s': not a GUID (use 0x... or 0 to list ports)\n", guid_str);
			return -1;
		}
		o->guid_given = 1;
	}
	if (lmc_str) {
		fprintf(stderr, "ibsm: --max_op_vls takes a number\n");
		return -1;
	}
	if (engine) {
		g_free(o->routing_engine);
		o->routing_engine = engine;
	}
	if (log_file) {
		g_free(o->log_file);
		o->log_file = log_file;
	}
	if (cache) {
		g_free(o->cache_dir);
		o->cache_dir = cache;
		o->cache_dir_explicit = 1;
	}
	if (o->window < 1 || o->window > 255) {
		fprintf(stderr, "ibsm: -n %d: SMPs in flight must be 1-255\n", o->window);
		return -1;
	}
	if (o->timeout_ms < 1) {
		fprintf(stderr, "ibsm: -t %d: timeout must be positive\n", o->timeout_ms);
		return -1;
	}
	o->verbosity = IBSM_LOG_INFO + verbose_count;
	if (o->debug_flags & 0x8)
		o->verbosity = IBSM_LOG_DEBUG;
	else if (o->debug_flags & 0x4 && o->verbosity < IBSM_LOG_VERBOSE)
		o->verbosity = IBSM_LOG_VERBOSE;
	if (max_verbose) {
		o->verbosity = IBSM_LOG_DEBUG;
		o->debug_flags |= 0xff;
	}
	if (o->debug_flags & IBSM_DEBUG_ROUTING)
		o->dump_routes = 1;
	return 0;
}

/* --- port selection --- */

struct local_port {
	char ca[UMAD_CA_NAME_LEN];
	int port;
	uint64_t guid;
	int state;
};

static int list_ports(struct local_port *out, int max)
{
	char names[UMAD_MAX_DEVICES][UMAD_CA_NAME_LEN];
	int n = umad_get_cas_names(names, UMAD_MAX_DEVICES);
	int k = 0;
	for (int i = 0; i < n && k < max; i++) {
		umad_ca_t ca;
		if (umad_get_ca(names[i], &ca) < 0)
			continue;
		for (int p = 1; p <= ca.numports && k < max; p++) {
			umad_port_t *up = ca.ports[p];
			if (!up || !strcmp(up->link_layer, "Ethernet"))
				continue;
			g_strlcpy(out[k].ca, names[i], sizeof(out[k].ca));
			out[k].port = p;
			out[k].guid = be64toh(up->port_guid);
			out[k].state = up->state;
			k++;
		}
		umad_release_ca(&ca);
	}
	return k;
}

static int choose_port(struct sm_options *o, struct local_port *chosen)
{
	struct local_port ports[64];
	int n = list_ports(ports, 64);
	if (n <= 0) {
		fprintf(stderr, "ibsm: no InfiniBand port found on this machine.\n"
			"      To use a simulated fabric, start ibsim and run ibsm with\n"
			"      LD_PRELOAD=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so\n"
			"      (Debian packages ibsim-utils, libumad2sim0), or route a fabric\n"
			"      file offline with --fabric FILE.\n");
		return -1;
	}
	static const char *states[] = { "?", "DOWN", "INIT", "ARMED", "ACTIVE" };
	if (o->guid_given && o->guid == 0) {
		printf("Available ports:\n");
		for (int i = 0; i < n; i++)
			printf("  %d: %s port %d GUID 0x%016" PRIx64 " %s\n", i + 1, ports[i].ca,
			       ports[i].port, ports[i].guid,
			       ports[i].state >= 1 && ports[i].state <= 4 ? states[ports[i].state] : "?");
		printf("Enter choice (1-%d): ", n);
		fflush(stdout);
		char line[64];
		if (!fgets(line, sizeof(line), stdin)) {
			fprintf(stderr, "ibsm: no choice read\n");
			return -1;
		}
		int c = atoi(line);
		if (c < 1 || c > n) {
			fprintf(stderr, "ibsm: invalid choice '%s'\n", g_strstrip(line));
			return -1;
		}
		*chosen = ports[c - 1];
		return 0;
	}
	if (o->guid_given) {
		for (int i = 0; i < n; i++)
			if (ports[i].guid == o->guid) {
				*chosen = ports[i];
				return 0;
			}
		fprintf(stderr, "ibsm: -g 0x%016" PRIx64 ": no local port has this GUID; local ports:\n", o->guid);
		for (int i = 0; i < n; i++)
			fprintf(stderr, "  %s port %d GUID 0x%016" PRIx64 "\n", ports[i].ca, ports[i].port,
				ports[i].guid);
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (ports[i].state >= 2 && ports[i].state <= 4) {
			*chosen = ports[i];
			return 0;
		}
	fprintf(stderr, "ibsm: no local port is in INIT, ARMED or ACTIVE state (is the link up?)\n");
	return -1;
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
	options_defaults(&opt);
	if (parse_args(argc, argv, &opt) < 0) {
		options_free(&opt);
		return 1;
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
	int res = sweep_heavy(&sm, &err);
	/* An incomplete sweep (lost SMPs, a port that did not come up) is swept again at once,
	 * a few times, as a master SM must until the subnet is stable. */
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

	if (!opt.once) {
		/* serve SMInfo and traps; re-sweep every -s seconds or on a trap */
		double next = sm_now() + (opt.sweep_interval > 0 ? opt.sweep_interval : 1e9);
		rc = 0;
		while (!sm.stop) {
			transport_poll(sm.t, 100, 0);
			if (sm.stop)
				break;
			if (sm_now() >= next || sm.trap_pending) {
				sm.trap_pending = 0;
				res = sweep_heavy(&sm, &err);
				if (res < 0) {
					LOG_E("SM-0006", "%s", err->message);
					g_clear_error(&err);
				}
				next = sm_now() + (opt.sweep_interval > 0 ? opt.sweep_interval : 1e9);
				if (res == SWEEP_INCOMPLETE)
					next = sm_now() + 1.0; /* not stable yet: again soon */
			}
		}
		LOG_I("SM-0007", "exiting on signal");
	}
	transport_free(sm.t);
	umad_dev_close(sm.dev);
	fabric_free(sm.fabric);
	if (sm.held_lft)
		g_hash_table_destroy(sm.held_lft);
	options_free(&opt);
	log_close();
	return rc;
}
