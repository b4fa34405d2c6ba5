/* options.c - defaults for every run-time setting (OpenSM's defaults where OpenSM has one, and
 * the environment variables OpenSM honours), then the configuration file, then the command line. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "config.h"
#include "log.h"
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
	o->pid_file = g_strdup("/var/run/ibsm.pid");
	o->partition_config_file = g_strdup("/etc/ibsm/partitions.conf");
	o->qos_policy_file = g_strdup("/etc/ibsm/qos-policy.conf");
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
	g_free(o->pid_file);
	g_free(o->partition_config_file);
	g_free(o->qos_policy_file);
	g_free(o->config_file);
	g_free(o->create_config);
	memset(o, 0, sizeof(*o));
}

/* Reentrant (SIGHUP): everything lives in *o and locals. The command line is parsed twice: first
 * only to learn -F (so GOption, not a hand-written scan, decides what is a flag), then over the
 * file's values so a flag beats the file. */
int options_build_err(int argc, char **argv, struct sm_options *o, int *show_version, GError **errp)
{
	struct cli_extra x = { 0 };
	GError *e = NULL, **err = &e;
	options_defaults(o);
	if (cli_parse(argc, argv, o, &x, err) < 0) {
		LOG_E("CFG-0002", "%s (see --help)", (*err)->message);
		goto fail;
	}
	options_free(o);
	options_defaults(o);
	char *path = x.config_file;
	x.config_file = NULL;
	if (!path && !x.show_version && g_file_test(IBSM_DEFAULT_CONFIG, G_FILE_TEST_EXISTS))
		path = g_strdup(IBSM_DEFAULT_CONFIG);
	if (path && !x.show_version && config_load(path, o, err) < 0) {
		LOG_E("CFG-0001", "%s", (*err)->message);
		g_free(path);
		goto fail;
	}
	o->config_file = path;
	cli_extra_clear(&x);
	if (cli_parse(argc, argv, o, &x, err) < 0) { /* cannot fail where the first parse passed */
		LOG_E("CFG-0002", "%s (see --help)", (*err)->message);
		goto fail;
	}
	if (show_version)
		*show_version = x.show_version;
	if (x.create_config) {
		if (config_write_template(x.create_config, o, err) < 0) {
			LOG_E("CFG-0004", "cannot write the configuration template: %s", (*err)->message);
			goto fail;
		}
		o->create_config = x.create_config;
		x.create_config = NULL;
	}
	cli_extra_clear(&x);
	return 0;
fail:
	cli_extra_clear(&x);
	options_free(o);
	options_defaults(o);
	g_propagate_error(errp, e);
	return -1;
}

int options_build(int argc, char **argv, struct sm_options *o, int *show_version)
{
	GError *err = NULL;
	if (options_build_err(argc, argv, o, show_version, &err) < 0) {
		g_error_free(err); /* already logged */
		return -1;
	}
	if (o->create_config) {
		if (strcmp(o->create_config, "-"))
			printf("ibsm: configuration template written to %s\n", o->create_config);
		options_free(o);
		exit(0);
	}
	return 0;
}
