/* options.c - defaults for every run-time setting (OpenSM's defaults where OpenSM has one)
 * and the environment variables OpenSM honours (OSM_CACHE_DIR, OSM_TMP_DIR). */
#include <glib.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "options.h"
#include <ibsm/routing.h>

void options_defaults(struct sm_options *o)
{
	memset(o, 0, sizeof(*o));
	o->routing_engine = g_strdup("minhop");
	o->log_file = g_strdup("/var/log/ibsm.log");
	o->verbosity = IBSM_LOG_INFO;
	o->debug_flags = 0x3;
	o->sweep_interval = 10;
	o->timeout_ms = 200;
	o->retries = 3;
	o->window = 64;
	o->max_op_vls = 5;
	o->max_reverse_hops = 0;
	const char *c = g_getenv("OSM_CACHE_DIR");
	o->cache_dir = g_strdup(c && *c ? c : "/var/cache/ibsm");
	o->cache_dir_explicit = c && *c;
	const char *t = g_getenv("OSM_TMP_DIR");
	o->tmp_dir = g_strdup(t && *t ? t : "/var/log");
	o->subnet_timeout = 18;
	o->subnet_prefix = 0xfe80000000000000ULL;
	o->hoq_life = 18;
	o->leaf_hoq_life = 16;
	o->vl_stall_count = 7;
	o->packet_life = 18;
}

void options_free(struct sm_options *o)
{
	g_free(o->routing_engine);
	g_free(o->root_guid_file);
	g_free(o->cn_guid_file);
	g_free(o->io_guid_file);
	g_free(o->port_prof_ignore_file);
	g_free(o->log_file);
	g_free(o->plugin_dir);
	g_free(o->fabric_file);
	g_free(o->cache_dir);
	g_free(o->tmp_dir);
	memset(o, 0, sizeof(*o));
}

int options_build(int argc, char **argv, struct sm_options *o, int *show_version)
{
	options_defaults(o);
	return cli_parse(argc, argv, o, show_version);
}
