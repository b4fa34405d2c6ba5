/* cli.c - OpenSM's command-line flags (and ours) parsed into struct sm_options with
 * GOptionContext; reentrant, because SIGHUP re-applies the command line over a re-read config. */
#include <errno.h>
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

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

/* per parse: the command line is parsed again on SIGHUP */
static int verbose_count;
static gboolean opt_verbose(const char *n, const char *v, gpointer d, GError **e)
{
	(void)n; (void)v; (void)d; (void)e;
	verbose_count++;
	return TRUE;
}

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

int cli_parse(int argc, char **argv, struct sm_options *o, int *show_version_out)
{
	char *guid_str = NULL, *lmc_str = NULL;
	int max_verbose = 0, show_version = 0;
	verbose_count = 0;
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
	if (show_version_out)
		*show_version_out = show_version;
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

