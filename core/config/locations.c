/* SPDX-License-Identifier: BSD-2-Clause */
/* locations.c - ibsm's files first, OpenSM's where ibsm's do not exist: the configuration file
 * (ibsm.yaml when it sets a key, else opensm.conf) and the policy files keys name by default
 * (partitions.conf, qos-policy.conf, torus-2QoS.conf); each choice becomes a log line, and so
 * does an opensm.conf left unread. */
#include <glib.h>
#include <stddef.h>
#include <string.h>
#include "base/log.h"
#include "config/config_file.h"
#include "config/locations.h"
#include "config/options.h"

static char *in_dir(const char *sm, const char *name)
{
	return g_build_filename(config_sysconfdir(), sm, name, NULL);
}

/* Does PATH write a key? The packaged template (every key commented out) writes none. A file
 * that cannot be read or parsed counts as writing some, so that loading it reports its error. */
static int sets_keys(const char *path)
{
	GError *e = NULL;
	GHashTable *pairs = config_load_pairs(path, &e);
	if (!pairs) {
		g_error_free(e);
		return 1;
	}
	int n = g_hash_table_size(pairs) > 0;
	g_hash_table_destroy(pairs);
	return n;
}

char *config_default_file(void)
{
	char *own = in_dir("ibsm", "ibsm.yaml"), *osm = in_dir("opensm", "opensm.conf");
	int own_exists = g_file_test(own, G_FILE_TEST_EXISTS), osm_exists = g_file_test(osm, G_FILE_TEST_EXISTS);
	if (own_exists && !(osm_exists && !sets_keys(own))) {
		g_free(osm);
		return own;
	}
	g_free(own);
	if (osm_exists)
		return osm;
	g_free(osm);
	return NULL;
}

void config_note_file(struct sm_options *o, const char *path, int named)
{
	char *own = in_dir("ibsm", "ibsm.yaml");
	char *osm = in_dir("opensm", "opensm.conf");
	if (named) {
		options_note(o, IBSM_LOG_INFO, "LOC-0001", "configuration file: %s (-F)", path);
	} else if (path && !g_strcmp0(path, osm)) {
		if (g_file_test(own, G_FILE_TEST_EXISTS))
			options_note(o, IBSM_LOG_INFO, "LOC-0001", "configuration file: %s (OpenSM's; %s sets no key: "
				     "ignored)", path, own);
		else
			options_note(o, IBSM_LOG_INFO, "LOC-0001", "configuration file: %s (OpenSM's; %s does not "
				     "exist)", path, own);
	} else if (path && !g_strcmp0(path, own) && g_file_test(osm, G_FILE_TEST_EXISTS)) {
		options_note(o, IBSM_LOG_INFO, "LOC-0001", "configuration file: %s", path);
		/* an OpenSM site's settings (sm_priority of an HA pair, ...) are not in force */
		options_note(o, IBSM_LOG_WARN, "LOC-0003", "OpenSM's %s is NOT read: %s sets keys, so it is the "
			     "configuration; copy the settings that matter into it, or comment out all of its keys "
			     "to have %s read", osm, own, osm);
	} else if (path && !g_strcmp0(path, own) && !sets_keys(own)) {
		options_note(o, IBSM_LOG_INFO, "LOC-0001", "configuration file: %s (sets no key: the defaults)", path);
	} else if (path) {
		options_note(o, IBSM_LOG_INFO, "LOC-0001", "configuration file: %s", path);
	} else
		options_note(o, IBSM_LOG_INFO, "LOC-0001", "no configuration file (neither %s nor %s): "
			     "defaults and the command line", own, osm);
	g_free(own);
	g_free(osm);
}

/* one policy file: KEY's value *path, ibsm's default name NAME */
static void resolve(struct sm_options *o, const char *key, char **path, unsigned explicit_bit, const char *name,
		    int say)
{
	if (!*path)
		return;
	int exists = g_file_test(*path, G_FILE_TEST_EXISTS);
	if (o->explicit_keys & explicit_bit || exists) {
		if (say)
			options_note(o, IBSM_LOG_INFO, "LOC-0002", "%s: %s%s", key, *path, exists ? "" : " (does not exist)");
		return;
	}
	char *own = in_dir("ibsm", name);
	char *osm = in_dir("opensm", name);
	if (!g_strcmp0(*path, own) && g_file_test(osm, G_FILE_TEST_EXISTS)) {
		options_note(o, IBSM_LOG_INFO, "LOC-0002", "%s: %s (OpenSM's; %s does not exist)", key, osm, own);
		g_free(*path);
		*path = osm;
		osm = NULL;
	} else if (say) {
		options_note(o, IBSM_LOG_INFO, "LOC-0002", "%s: none (neither %s nor %s exists)", key, *path, osm);
	}
	g_free(own);
	g_free(osm);
}

void config_resolve_policy_files(struct sm_options *o)
{
	/* said only where it matters: QoS policy with -Q, torus-2QoS.conf when an engine names torus */
	int torus = (o->routing_engine && strstr(o->routing_engine, "torus")) || o->rch_policy_file;
	resolve(o, "partition_config_file", &o->partition_config_file, OPT_EXPLICIT_PARTITIONS, "partitions.conf", 1);
	resolve(o, "qos_policy_file", &o->qos_policy_file, OPT_EXPLICIT_QOS_POLICY, "qos-policy.conf", o->qos);
	resolve(o, "torus_config", &o->torus_config, OPT_EXPLICIT_TORUS, "torus-2QoS.conf", torus);
}
