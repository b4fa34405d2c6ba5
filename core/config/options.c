/* SPDX-License-Identifier: BSD-2-Clause */
/* options.c - defaults for every run-time setting: OpenSM's defaults where OpenSM has one, and
 * the environment variables OpenSM honours (OSM_CACHE_DIR, OSM_TMP_DIR). */
#include <glib.h>
#include <stdarg.h>
#include <string.h>
#include <ibsm/routing.h>
#include "base/activity.h"
#include "config/options.h"
#include "ibsm_paths.h"         /* IBSM_SYSCONFDIR: written by make for this build */


const char *config_sysconfdir(void)
{
	const char *d = g_getenv("IBSM_SYSCONFDIR");
	return d && *d ? d : IBSM_SYSCONFDIR;
}

void options_defaults(struct sm_options *o)
{
	memset(o, 0, sizeof(*o));
	o->routing_engine = g_strdup("minhop");
	o->log_file = g_strdup("/var/log/ibsm.log");
	o->debug_flags = 0x3;
	o->syslog_state_changes = 1;
	o->sweep_interval = 10;
	o->sminfo_polling_timeout = 10000; /* OpenSM's */
	o->polling_retry_number = 4;
	o->ipoib_mcgroup_creation_validation = 1; /* OpenSM's */
	o->mcgroup_join_validation = 1;
	o->sa_key = 1;              /* OpenSM's */
	o->repair_sweep = 1;
	o->sweep_on_trap = 1;       /* OpenSM's */
	o->exit_on_fatal = 1;       /* OpenSM's; -y clears it */
	o->timeout_ms = 200;
	o->retries = 3;
	o->window = DEFAULT_SMP_WINDOW;
	o->mad_cpu = -1;                /* the kernel places every thread */
	o->max_wire_smps2 = 4;          /* OpenSM's: not above the window, so off */
	o->max_smps_timeout = 600000;   /* OpenSM's, microseconds */
	o->max_op_vls = 5;
	o->max_reverse_hops = 0;
	const char *c = g_getenv("OSM_CACHE_DIR");
	o->cache_dir = g_strdup(c && *c ? c : "/var/cache/ibsm");
	o->cache_dir_explicit = c && *c;
	const char *t = g_getenv("OSM_TMP_DIR");
	o->tmp_dir = g_strdup(t && *t ? t : "/var/log");
	o->tmp_dir_asked = t && *t;
	o->part_enforce = g_strdup("both");
	o->subnet_timeout = 18;
	o->subnet_prefix = 0xfe80000000000000ULL;
	o->hoq_life = 18;
	o->m_key_per_port = 1;
	o->leaf_hoq_life = 16;
	o->vl_stall_count = 7;
	o->leaf_vl_stall_count = 7; /* OpenSM 3.3.23's defaults */
	o->local_phy_errors_threshold = 8;
	o->overrun_errors_threshold = 8;
	o->force_link_speed = 15;
	o->force_link_speed_ext = 31;
	o->force_link_width = 255;
	o->use_mfttop = 1;
	o->fdr10 = 1;               /* OpenSM 3.3.23's defaults */
	o->m_key_lookup = 1;
	o->packet_life = 18;
	o->rtr_pr_mtu = 4;   /* 2048 */
	o->rtr_pr_rate = 16; /* 100 Gb/s */
	o->pid_file = g_strdup("/run/ibsm/ibsm.pid"); /* systemd: RuntimeDirectory=ibsm, PIDFile= */
	o->console = g_strdup("socket");
	o->console_port = 10000;
	o->console_socket = g_strdup("/run/ibsm/console.sock");
	o->perfmgr_sweep_time_s = 180; /* OpenSM 3.3.23's perfmgr defaults */
	o->perfmgr_max_outstanding = 500;
	o->perfmgr_rm_nodes = 1;
	o->perfmgr_log_errors = 1;
	o->perfmgr_query_cpi = 1;
	o->perfmgr_xmit_wait_threshold = 65535;
	o->partition_config_file = g_build_filename(config_sysconfdir(), "ibsm", "partitions.conf", NULL);
	o->qos_policy_file = g_build_filename(config_sysconfdir(), "ibsm", "qos-policy.conf", NULL);
	o->enhanced_qos_vport0_unlimit_default_rl = 1; /* NVIDIA's default */
	o->offsweep_balancing_window = 180; /* NVIDIA's default */
	o->cc_max_outstanding_mads = 500; /* OpenSM's default (the rest of the cc_ keys: 0) */
	o->torus_config = g_build_filename(config_sysconfdir(), "ibsm", "torus-2QoS.conf", NULL);
}

void options_free(struct sm_options *o)
{
	g_free(o->routing_engine);
	g_free(o->root_guid_file);
	g_free(o->cn_guid_file);
	g_free(o->io_guid_file);
	g_free(o->torus_config);
	g_free(o->pgrp_policy_file);
	g_free(o->topo_policy_file);
	g_free(o->rch_policy_file);
	g_free(o->port_prof_ignore_file);
	g_free(o->prefix_routes_file);
	g_free(o->node_name_map_name);
	g_free(o->log_file);
	g_free(o->plugin_dir);
	g_free(o->fabric_file);
	g_free(o->sa_db_file);
	g_free(o->cache_dir);
	g_free(o->tmp_dir);
	g_free(o->pid_file);
	g_free(o->enhanced_qos_policy_file);
	g_free(o->partition_config_file);
	g_free(o->qos_policy_file);
	g_free(o->part_enforce);
	g_free(o->log_prefix);
	g_free(o->syslog_socket);
	g_free(o->activity_report_subjects);
	g_free(o->console);
	g_free(o->console_socket);
	g_free(o->fabric_report_file);
	g_free(o->event_db_dump_file);
	for (int i = 0; i < QOS_N_SCOPES; i++)
		for (int j = 0; j < QOS_N_PARAMS; j++)
			g_free(o->qos_opt[i][j]);
	g_free(o->config_file);
	g_free(o->create_config);
	if (o->extra)
		g_hash_table_destroy(o->extra);
	if (o->notes)
		g_ptr_array_free(o->notes, TRUE);
	memset(o, 0, sizeof(*o));
}

static void extra_free(gpointer p)
{
	struct config_extra *x = p;
	g_free(x->value);
	g_free(x->where);
	g_free(x);
}

void options_set_extra(struct sm_options *o, const char *key, const char *value, const char *where)
{
	if (!o->extra)
		o->extra = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, extra_free);
	struct config_extra *x = g_new0(struct config_extra, 1);
	x->value = g_strdup(value);
	x->where = g_strdup(where);
	g_hash_table_replace(o->extra, g_strdup(key), x);
}


void options_mark_explicit(struct sm_options *o, const char *key, int on)
{
	static const struct { const char *key; unsigned bit; } bits[] = {
		{ "partition_config_file", OPT_EXPLICIT_PARTITIONS },
		{ "qos_policy_file", OPT_EXPLICIT_QOS_POLICY },
		{ "torus_config", OPT_EXPLICIT_TORUS },
	};
	for (size_t i = 0; i < G_N_ELEMENTS(bits); i++)
		if (!strcmp(bits[i].key, key))
			o->explicit_keys = on ? o->explicit_keys | bits[i].bit : o->explicit_keys & ~bits[i].bit;
}

static void note_free(gpointer p)
{
	struct config_note *n = p;
	g_free(n->code);
	g_free(n->text);
	g_free(n);
}

void options_note(struct sm_options *o, int level, const char *code, const char *fmt, ...)
{
	if (!o->notes)
		o->notes = g_ptr_array_new_with_free_func(note_free);
	struct config_note *n = g_new0(struct config_note, 1);
	n->level = level;
	n->code = g_strdup(code);
	va_list ap;
	va_start(ap, fmt);
	n->text = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_ptr_array_add(o->notes, n);
}

int part_enforce_parse(const char *v)
{
	static const char *const names[] = { "off", "in", "out", "both" };
	for (int i = 0; i < 4; i++)
		if (!g_ascii_strcasecmp(v, names[i]))
			return i;
	return -1;
}

int options_part_enforce(const struct sm_options *o)
{
	if (o->no_part_enforce)
		return 0;
	int m = o->part_enforce ? part_enforce_parse(o->part_enforce) : 3;
	return m < 0 ? 3 : m;
}

void options_apply_log(const struct sm_options *o)
{
	log_set_flags(o->debug_flags);
	log_set_max_size(o->log_max_mb);
	log_set_syslog(o->syslog_flags, o->log_prefix);
	log_set_syslog_target(o->syslog_state_changes, o->syslog_socket);
	activity_configure(o->activity_report_subjects, o->tmp_dir);
}
