/* config.c - one table for every setting (opensm.conf key, type, range, flag, doc) so the command
 * line, the YAML file, an existing opensm.conf and the --create-config template cannot disagree. */
#include <errno.h>
#include <limits.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include "config.h"
#include "log.h"

#define OFF(f) offsetof(struct sm_options, f)
#define NOFLAG 0, NULL, NULL, NULL

/* Order: as the template lists them. Keys are OpenSM's where OpenSM has the setting. */
static const struct config_key keys[] = {
	{ "guid", CONFIG_U64, OFF(guid), 0, 0, 0, 'g', "guid", "GUID", NULL,
	  "Port GUID to bind (0: the first port in INIT/ARMED/ACTIVE; -g 0 lists ports and asks)", NULL },
	{ "lmc", CONFIG_U8, OFF(lmc), 0, 7, 0, 'l', "lmc", "LMC", NULL,
	  "LMC: 2^LMC LIDs per CA port (0-7); switch port 0 gets one LID", NULL },
	{ "use_ucast_cache", CONFIG_BOOL, OFF(ucast_cache), 0, 1, 0, 'A', "ucast_cache", NULL, "true",
	  "Unicast routing cache: keep the routes when a heavy sweep finds nothing that needs new ones", NULL },
	{ "sm_key", CONFIG_U64, OFF(sm_key), 0, 0, 0, 'k', "sm_key", "KEY", NULL,
	  "SM_Key (0: OpenSM's default 1, which is no secret); a set key is shown only to SMs presenting it", NULL },
	{ "sm_priority", CONFIG_U8, OFF(sm_priority), 0, 15, 0, 'p', "priority", "PRIO", NULL,
	  "SM priority (0-15); a master with higher priority (then lower GUID) keeps us standby", NULL },
	{ "reassign_lids", CONFIG_BOOL, OFF(reassign_lids), 0, 1, 0, 'r', "reassign_lids", NULL, "true",
	  "Reassign every LID on the first master sweep (ignores guid2lid)", NULL },
	{ "routing_engine", CONFIG_STRING, OFF(routing_engine), 0, 0, 0, 'R', "routing_engine", "NAMES", NULL,
	  "Routing engines tried in order: a,b,c[,no_fallback] (minhop is the fallback)", NULL },
	{ "root_guid_file", CONFIG_STRING, OFF(root_guid_file), 0, 0, 0, 'a', "root_guid_file", "FILE", NULL,
	  "Root switch GUIDs (updn, ftree)", NULL },
	{ "cn_guid_file", CONFIG_STRING, OFF(cn_guid_file), 0, 0, 0, 'u', "cn_guid_file", "FILE", NULL,
	  "Compute node GUIDs (ftree)", NULL },
	{ "io_guid_file", CONFIG_STRING, OFF(io_guid_file), 0, 0, 0, 'G', "io_guid_file", "FILE", NULL,
	  "I/O node GUIDs (ftree)", NULL },
	{ "max_reverse_hops", CONFIG_INT, OFF(max_reverse_hops), 0, 255, 0, 'H', "max_reverse_hops", "N", NULL,
	  "Reverse hops allowed for I/O nodes (ftree)", NULL },
	{ "port_prof_ignore_file", CONFIG_STRING, OFF(port_prof_ignore_file), 0, 0, 0, 'i', "ignore_guids", "FILE", NULL,
	  "Port GUIDs ignored by link load balancing (minhop)", NULL },
	{ "connect_roots", CONFIG_BOOL, OFF(connect_roots), 0, 1, 0, 'z', "connect_roots", NULL, "true",
	  "Keep the root switches connected to each other (updn)", NULL },
	{ "log_file", CONFIG_STRING, OFF(log_file), 0, 0, 0, 'f', "log_file", "FILE", NULL,
	  "Log file ('-' = stderr)", NULL },
	{ "accum_log_file", CONFIG_BOOL, OFF(erase_log), 0, 1, CONFIG_F_INVERT, 'e', "erase_log_file", NULL, "false",
	  "Append to the log file (false: truncate it at start, like -e)", "Truncate the log file first" },
	{ "log_flags", CONFIG_U32, OFF(debug_flags), 0, 0xffffffffLL, 0, 'D', "debug", "FLAGS", NULL,
	  "Log flags: 0x1 error, 0x2 info, 0x4 verbose, 0x8 debug, 0x40 routing (also writes the LFT dumps)", NULL },
	{ "sweep_interval", CONFIG_INT, OFF(sweep_interval), 0, 86400, 0, 's', "sweep", "SEC", NULL,
	  "Light sweep interval in seconds (0: no periodic sweep)", NULL },
	{ "once", CONFIG_BOOL, OFF(once), 0, 1, 0, 'o', "once", NULL, "true",
	  "Bring the subnet up once, then exit", NULL },
	{ "transaction_timeout", CONFIG_INT, OFF(timeout_ms), 1, 60000, 0, 't', "timeout", "MS", NULL,
	  "SMP timeout in milliseconds", NULL },
	{ "transaction_retries", CONFIG_INT, OFF(retries), 0, 100, 0, 0, "retries", "N", NULL,
	  "SMP retries after a timeout", NULL },
	{ "max_wire_smps", CONFIG_INT, OFF(window), 1, 255, 0, 'n', "maxsmps", "N", NULL,
	  "SMPs in flight (1-255)", NULL },
	{ "max_op_vls", CONFIG_U8, OFF(max_op_vls), 1, 5, 0, 0, "max_op_vls", "N", NULL,
	  "Max operational VLs: 1 VL0, 2 VL0-1, 3 VL0-3, 4 VL0-7, 5 VL0-14", NULL },
	{ "subnet_prefix", CONFIG_U64, OFF(subnet_prefix), 0, 0, 0, NOFLAG,
	  "Subnet prefix (GID prefix) given to every port", NULL },
	{ "subnet_timeout", CONFIG_U8, OFF(subnet_timeout), 0, 31, 0, NOFLAG,
	  "PortInfo.SubnetTimeout: 4.096 us * 2^N", NULL },
	{ "head_of_queue_lifetime", CONFIG_U8, OFF(hoq_life), 0, 31, 0, NOFLAG,
	  "Head-of-queue lifetime of switch ports to switches: 4.096 us * 2^N (>19: infinite)", NULL },
	{ "leaf_head_of_queue_lifetime", CONFIG_U8, OFF(leaf_hoq_life), 0, 31, 0, NOFLAG,
	  "Head-of-queue lifetime of switch ports to CAs: 4.096 us * 2^N (>19: infinite)", NULL },
	{ "vl_stall_count", CONFIG_U8, OFF(vl_stall_count), 0, 7, 0, NOFLAG,
	  "Packets dropped in a row before a VL enters the stall state", NULL },
	{ "packet_life_time", CONFIG_U8, OFF(packet_life), 0, 31, 0, NOFLAG,
	  "Packet lifetime in a switch: 4.096 us * 2^N", NULL },
	{ "plugin_dir", CONFIG_STRING, OFF(plugin_dir), 0, 0, 0, 0, "plugin-dir", "DIR", NULL,
	  "Extra routing-engine plugin directory (also $IBSM_PLUGIN_PATH)", NULL },
	{ "fabric_file", CONFIG_STRING, OFF(fabric_file), 0, 0, 0, 0, "fabric", "FILE", NULL,
	  "Offline: route this ibnetdiscover/ibsim fabric file, send no MADs", NULL },
	{ "cache_dir", CONFIG_STRING, OFF(cache_dir), 0, 0, CONFIG_F_ENV, 0, "cache-dir", "DIR", NULL,
	  "guid2lid directory (default $OSM_CACHE_DIR or /var/cache/ibsm)", NULL },
	{ "dump_files_dir", CONFIG_STRING, OFF(tmp_dir), 0, 0, CONFIG_F_ENV, NOFLAG,
	  "Directory of opensm-subnet.lst and the dumps (default $OSM_TMP_DIR or /var/log)", NULL },
	{ "progress", CONFIG_BOOL, OFF(progress), 0, 1, 0, 0, "progress", NULL, "true",
	  "One line per phase on stderr and a summary", NULL },
	{ "daemon", CONFIG_BOOL, OFF(daemon), 0, 1, 0, 'B', "daemon", NULL, "true",
	  "Run in the background", NULL },
	{ "pid_file", CONFIG_STRING, OFF(pid_file), 0, 0, 0, 0, "pid_file", "FILE", NULL,
	  "PID file written when running in the background", NULL },
	{ "partition_config_file", CONFIG_STRING, OFF(partition_config_file), 0, 0, 0, 'P', "Pconfig", "FILE", NULL,
	  "Partition configuration file", NULL },
	{ "allow_both_pkeys", CONFIG_BOOL, OFF(allow_both_pkeys), 0, 1, 0, 'W', "allow_both_pkeys", NULL, "true",
	  "Accepted for OpenSM compatibility: a `both` member always gets a full and a limited P_Key", NULL },
	{ "qos", CONFIG_BOOL, OFF(qos), 0, 1, 0, 'Q', "qos", NULL, "true",
	  "Enable QoS setup", NULL },
	{ "qos_policy_file", CONFIG_STRING, OFF(qos_policy_file), 0, 0, 0, 'Y', "qos_policy_file", "FILE", NULL,
	  "QoS policy file", NULL },
};

/* opensm.conf keys (OpenSM 3.3.23) for settings ibsm does not have (yet): accepted and ignored */
static const char *const opensm_only[] = {
	"m_key", "m_key_lease_period", "m_key_protection_level", "m_key_lookup", "sa_key",
	"lmc_esp0", "sm_sl", "leaf_vl_stall_count", "force_link_speed", "force_link_speed_ext",
	"force_link_width", "fdr10", "local_phy_errors_threshold", "overrun_errors_threshold",
	"use_mfttop", "no_partition_enforcement", "part_enforce",
	"keep_pkey_indexes", "sm_assigned_guid", "force_heavy_sweep", "sweep_on_trap",
	"port_profile_switch_nodes", "hop_weights_file", "port_search_ordering_file",
	"avoid_throttled_links", "lid_matrix_dump_file", "lfts_file",
	"quasi_ftree_indexing", "ids_guid_file", "guid_routing_order_file", "do_mesh_analysis",
	"lash_start_vl", "nue_max_num_vls", "nue_include_switches", "port_shifting", "scatter_ports",
	"guid_routing_order_no_scatter", "sa_db_file", "sa_db_dump", "torus_config",
	"ignore_other_sm", "sminfo_polling_timeout", "polling_retry_number", "honor_guid2lid_file",
	"max_wire_smps2", "max_smps_timeout", "long_transaction_timeout", "max_msg_fifo_timeout",
	"single_thread", "sm_inactive", "babbling_port_policy", "drop_event_subscriptions",
	"ipoib_mcgroup_creation_validation", "mcgroup_join_validation",
	"use_original_extended_sa_rates_only", "use_optimized_slvl", "fsync_high_avail_files",
	"perfmgr", "perfmgr_redir", "perfmgr_sweep_time_s", "perfmgr_max_outstanding_queries",
	"perfmgr_ignore_cas", "perfmgr_rm_nodes", "perfmgr_log_errors", "perfmgr_query_cpi",
	"perfmgr_xmit_wait_log", "perfmgr_xmit_wait_threshold", "event_db_dump_file",
	"event_plugin_name", "event_plugin_options", "node_name_map_name", "force_log_flush",
	"log_max_size", "per_module_logging_file", "enable_quirks", "no_clients_rereg",
	"disable_multicast", "exit_on_fatal", "console", "console_port",
	"suppress_sl2vl_mad_status_errors", "qos_max_vls", "qos_high_limit", "qos_vlarb_high",
	"qos_vlarb_low", "qos_sl2vl", "qos_ca_max_vls", "qos_ca_high_limit", "qos_ca_vlarb_high",
	"qos_ca_vlarb_low", "qos_ca_sl2vl", "qos_sw0_max_vls", "qos_sw0_high_limit",
	"qos_sw0_vlarb_high", "qos_sw0_vlarb_low", "qos_sw0_sl2vl", "qos_swe_max_vls",
	"qos_swe_high_limit", "qos_swe_vlarb_high", "qos_swe_vlarb_low", "qos_swe_sl2vl",
	"qos_rtr_max_vls", "qos_rtr_high_limit", "qos_rtr_vlarb_high", "qos_rtr_vlarb_low",
	"qos_rtr_sl2vl", "congestion_control", "cc_key", "cc_max_outstanding_mads",
	"cc_sw_cong_setting_control_map", "cc_sw_cong_setting_victim_mask",
	"cc_sw_cong_setting_credit_mask", "cc_sw_cong_setting_threshold",
	"cc_sw_cong_setting_packet_size", "cc_sw_cong_setting_credit_starvation_threshold",
	"cc_sw_cong_setting_credit_starvation_return_delay", "cc_sw_cong_setting_marking_rate",
	"cc_ca_cong_setting_port_control", "cc_ca_cong_setting_control_map",
	"cc_ca_cong_setting_ccti_timer", "cc_ca_cong_setting_ccti_increase",
	"cc_ca_cong_setting_trigger_threshold", "cc_ca_cong_setting_ccti_min", "cc_cct",
	"prefix_routes_file", "consolidate_ipv6_snm_req", "log_prefix",
};

G_DEFINE_QUARK(ibsm-config-error-quark, config_error)

const struct config_key *config_keys(size_t *n)
{
	*n = G_N_ELEMENTS(keys);
	return keys;
}

const struct config_key *config_key_find(const char *key)
{
	for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
		if (!strcmp(keys[i].key, key))
			return &keys[i];
	return NULL;
}

int config_is_opensm_only(const char *key)
{
	for (size_t i = 0; i < G_N_ELEMENTS(opensm_only); i++)
		if (!strcmp(opensm_only[i], key))
			return 1;
	return 0;
}

static void *field(struct sm_options *o, const struct config_key *k)
{
	return (char *)o + k->offset;
}

static const void *cfield(const struct sm_options *o, const struct config_key *k)
{
	return (const char *)o + k->offset;
}

/* decimal, or hex with 0x; unsigned unless MINUS_OK */
static int parse_number(const char *s, int minus_ok, long long *out_signed, unsigned long long *out)
{
	int neg = 0;
	const char *p = s;
	if (*p == '-' && minus_ok) {
		neg = 1;
		p++;
	}
	int base = 10;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	if (!g_ascii_isxdigit(*p))
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(p, &end, base);
	if (errno || *end)
		return -1;
	if (neg) {
		if (v > (unsigned long long)LLONG_MAX)
			return -1;
		*out_signed = -(long long)v;
	} else {
		*out_signed = v > (unsigned long long)LLONG_MAX ? LLONG_MAX : (long long)v;
	}
	*out = v;
	return 0;
}

static int parse_bool(const char *s, int *out)
{
	if (!g_ascii_strcasecmp(s, "true") || !g_ascii_strcasecmp(s, "yes")) {
		*out = 1;
		return 0;
	}
	if (!g_ascii_strcasecmp(s, "false") || !g_ascii_strcasecmp(s, "no")) {
		*out = 0;
		return 0;
	}
	return -1;
}

/* restores K's default (a null value in the file) */
static void set_default(struct sm_options *o, const struct config_key *k)
{
	struct sm_options d;
	options_defaults(&d);
	if (k->type == CONFIG_STRING) {
		char **dst = field(o, k);
		g_free(*dst);
		*dst = g_strdup(*(char **)field(&d, k));
	} else {
		size_t sz = k->type == CONFIG_U64 ? 8 : k->type == CONFIG_U32 ? 4 : k->type == CONFIG_U8 ? 1 : sizeof(int);
		memcpy(field(o, k), field(&d, k), sz);
	}
	if (!strcmp(k->key, "guid"))
		o->guid_given = d.guid_given;
	if (!strcmp(k->key, "cache_dir"))
		o->cache_dir_explicit = d.cache_dir_explicit;
	options_free(&d);
}

int config_set(struct sm_options *o, const struct config_key *k, const char *value, GError **err)
{
	if (!value || !*value || !strcmp(value, "(null)")) {
		set_default(o, k);
		return 0;
	}
	long long sv;
	unsigned long long uv;
	int b;
	switch (k->type) {
	case CONFIG_BOOL:
		if (parse_bool(value, &b) < 0) {
			g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_BAD_VALUE,
				    "'%s' is not a boolean (true/false, yes/no)", value);
			return -1;
		}
		*(int *)field(o, k) = (k->flags & CONFIG_F_INVERT) ? !b : b;
		return 0;
	case CONFIG_INT:
	case CONFIG_U8:
		if (parse_number(value, k->min < 0, &sv, &uv) < 0 || sv < k->min || sv > k->max) {
			g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_BAD_VALUE,
				    "'%s' is not a number in %lld-%lld", value, k->min, k->max);
			return -1;
		}
		if (k->type == CONFIG_U8)
			*(uint8_t *)field(o, k) = (uint8_t)sv;
		else
			*(int *)field(o, k) = (int)sv;
		return 0;
	case CONFIG_U32:
		if (parse_number(value, 0, &sv, &uv) < 0 || uv > 0xffffffffULL) {
			g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_BAD_VALUE,
				    "'%s' is not a 32-bit number (decimal or 0x hex)", value);
			return -1;
		}
		*(uint32_t *)field(o, k) = (uint32_t)uv;
		return 0;
	case CONFIG_U64:
		if (parse_number(value, 0, &sv, &uv) < 0) {
			g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_BAD_VALUE,
				    "'%s' is not a 64-bit number (decimal or 0x hex)", value);
			return -1;
		}
		*(uint64_t *)field(o, k) = uv;
		if (!strcmp(k->key, "guid"))
			o->guid_given = uv != 0; /* from a file, 0 means "the first usable port" */
		return 0;
	case CONFIG_STRING: {
		char **dst = field(o, k);
		g_free(*dst);
		*dst = g_strdup(value);
		if (!strcmp(k->key, "cache_dir"))
			o->cache_dir_explicit = 1;
		return 0;
	}
	}
	return -1;
}

char *config_format(const struct sm_options *o, const struct config_key *k)
{
	const void *p = cfield(o, k);
	switch (k->type) {
	case CONFIG_BOOL: {
		int b = *(const int *)p != 0;
		if (k->flags & CONFIG_F_INVERT)
			b = !b;
		return g_strdup(b ? "true" : "false");
	}
	case CONFIG_INT:
		return g_strdup_printf("%d", *(const int *)p);
	case CONFIG_U8:
		return g_strdup_printf("%u", *(const uint8_t *)p);
	case CONFIG_U32:
		return g_strdup_printf("0x%02x", *(const uint32_t *)p);
	case CONFIG_U64:
		return g_strdup_printf("0x%016llx", (unsigned long long)*(const uint64_t *)p);
	case CONFIG_STRING:
		return g_strdup(*(char *const *)p);
	}
	return NULL;
}

/* ---- reading ----------------------------------------------------------------------------- */

struct load_ctx {
	const char *path;
	struct sm_options *o;
	GPtrArray *ignored; /* OpenSM-only keys seen */
};

/* applies KEY VALUE found at LINE:COL (1-based); VALUE NULL = null */
static int apply(struct load_ctx *c, const char *key, unsigned kline, unsigned kcol, const char *value,
		 unsigned vline, unsigned vcol, GError **err)
{
	const struct config_key *k = config_key_find(key);
	if (!k) {
		if (config_is_opensm_only(key)) {
			g_ptr_array_add(c->ignored, g_strdup(key));
			return 0;
		}
		g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_UNKNOWN_KEY, "%s:%u:%u: unknown key '%s'",
			    c->path, kline, kcol, key);
		return -1;
	}
	GError *e = NULL;
	if (config_set(c->o, k, value, &e) < 0) {
		g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_BAD_VALUE, "%s:%u:%u: %s: %s", c->path, vline, vcol,
			    key, e->message);
		g_error_free(e);
		return -1;
	}
	return 0;
}

static int is_plain_null(const yaml_event_t *ev)
{
	const char *v = (const char *)ev->data.scalar.value;
	if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	return !*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") || !strcmp(v, "NULL");
}

static int load_yaml(struct load_ctx *c, const char *text, size_t len, GError **err)
{
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser)) {
		g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_IO, "%s: cannot start the YAML parser", c->path);
		return -1;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	enum { TOP, DOC, KEY, VALUE, END } st = TOP;
	char *key = NULL;
	unsigned kline = 0, kcol = 0;
	int rc = -1, docs = 0;
	for (;;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&parser, &ev)) {
			g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_SYNTAX, "%s:%zu:%zu: %s%s%s", c->path,
				    parser.problem_mark.line + 1, parser.problem_mark.column + 1,
				    parser.problem ? parser.problem : "YAML syntax error",
				    parser.context ? " " : "", parser.context ? parser.context : "");
			break;
		}
		unsigned line = (unsigned)ev.start_mark.line + 1, col = (unsigned)ev.start_mark.column + 1;
		yaml_event_type_t t = ev.type;
		int bad = 0;
		if (t == YAML_STREAM_END_EVENT) {
			rc = 0;
		} else if (t == YAML_STREAM_START_EVENT || t == YAML_DOCUMENT_END_EVENT) {
			/* nothing */
		} else if (t == YAML_DOCUMENT_START_EVENT) {
			if (docs++) {
				g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_SYNTAX,
					    "%s:%u:%u: only one YAML document is allowed", c->path, line, col);
				bad = 1;
			}
			st = DOC;
		} else if (st == DOC && t == YAML_MAPPING_START_EVENT) {
			st = KEY;
		} else if (st == DOC && t == YAML_SCALAR_EVENT && is_plain_null(&ev)) {
			st = END; /* an empty document */
		} else if (st == KEY && t == YAML_MAPPING_END_EVENT) {
			st = END;
		} else if (st == KEY && t == YAML_SCALAR_EVENT) {
			g_free(key);
			key = g_strdup((const char *)ev.data.scalar.value);
			kline = line;
			kcol = col;
			st = VALUE;
		} else if (st == VALUE && t == YAML_SCALAR_EVENT) {
			const char *v = is_plain_null(&ev) ? NULL : (const char *)ev.data.scalar.value;
			bad = apply(c, key, kline, kcol, v, line, col, err) < 0;
			st = KEY;
		} else if (st == VALUE) {
			g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_BAD_VALUE,
				    "%s:%u:%u: %s: the value must be a single scalar (key: value)", c->path, line, col,
				    key);
			bad = 1;
		} else if (st == KEY) {
			g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_SYNTAX,
				    "%s:%u:%u: a key must be a plain word (key: value)", c->path, line, col);
			bad = 1;
		} else {
			g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_SYNTAX,
				    "%s:%u:%u: expected a mapping of key: value lines", c->path, line, col);
			bad = 1;
		}
		yaml_event_delete(&ev);
		if (bad || t == YAML_STREAM_END_EVENT)
			break;
	}
	g_free(key);
	yaml_parser_delete(&parser);
	return rc == 0 && !(err && *err) ? 0 : -1;
}

/* OpenSM's opensm.conf: "key value" lines, '#' comments; "(null)" = unset */
static int load_opensm_conf(struct load_ctx *c, char *text, GError **err)
{
	char **lines = g_strsplit(text, "\n", -1);
	int rc = 0;
	for (unsigned i = 0; lines[i] && rc == 0; i++) {
		char *l = lines[i];
		g_strchomp(l);
		char *p = l;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			continue;
		char *k = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		char *v = p;
		if (*p)
			*p++ = 0;
		while (*p == ' ' || *p == '\t')
			p++;
		v = p;
		rc = apply(c, k, i + 1, (unsigned)(k - l) + 1, *v ? v : NULL, i + 1, (unsigned)(v - l) + 1, err);
	}
	g_strfreev(lines);
	return rc;
}

/* first line that is neither blank nor a comment looks like "key value" (no ':' after key) */
static int looks_like_opensm_conf(const char *text)
{
	const char *p = text;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		const char *q = p;
		while (q < p + n && (*q == ' ' || *q == '\t' || *q == '\r'))
			q++;
		if (q < p + n && *q != '#') {
			if (q != p)
				return 0; /* indented: YAML */
			const char *w = q;
			while (w < p + n && (g_ascii_isalnum(*w) || *w == '_'))
				w++;
			if (w == q || w >= p + n || (*w != ' ' && *w != '\t'))
				return 0;
			while (w < p + n && (*w == ' ' || *w == '\t'))
				w++;
			return w < p + n && *w != ':' && *w != '\r';
		}
		p = eol ? eol + 1 : p + n;
	}
	return 0;
}

int config_load(const char *path, struct sm_options *o, GError **err)
{
	char *text = NULL;
	gsize len = 0;
	GError *e = NULL;
	if (!g_file_get_contents(path, &text, &len, &e)) {
		g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_IO, "%s: %s", path, e->message);
		g_error_free(e);
		return -1;
	}
	if (memchr(text, 0, len)) {
		g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_SYNTAX, "%s: not a text file", path);
		g_free(text);
		return -1;
	}
	struct load_ctx c = { path, o, g_ptr_array_new_with_free_func(g_free) };
	int rc = looks_like_opensm_conf(text) ? load_opensm_conf(&c, text, err) : load_yaml(&c, text, len, err);
	if (rc == 0 && c.ignored->len) {
		/* one line; the log truncates long lines, so the list stops at about 700 characters */
		GString *list = g_string_new(NULL);
		guint i;
		for (i = 0; i < c.ignored->len && list->len < 700; i++)
			g_string_append_printf(list, "%s%s", i ? ", " : "", (char *)c.ignored->pdata[i]);
		if (i < c.ignored->len)
			g_string_append_printf(list, " and %u more", c.ignored->len - i);
		LOG_I("CFG-0003", "%s: %u OpenSM setting%s not used by ibsm, ignored: %s", path, c.ignored->len,
		      c.ignored->len == 1 ? "" : "s", list->str);
		g_string_free(list, TRUE);
	}
	g_ptr_array_free(c.ignored, TRUE);
	g_free(text);
	return rc;
}

/* ---- writing ----------------------------------------------------------------------------- */

/* a YAML scalar that reads back as the same string */
static void append_yaml_string(GString *s, const char *v)
{
	int plain = *v && !strchr("-?:,[]{}#&*!|>'\"%@`~ ", *v);
	for (const char *p = v; *p && plain; p++)
		if (!(g_ascii_isalnum(*p) || strchr("_./,+-=", *p)))
			plain = 0;
	int ignored;
	long long sv;
	unsigned long long uv;
	if (plain && (parse_bool(v, &ignored) == 0 || parse_number(v, 1, &sv, &uv) == 0 ||
		      !g_ascii_strcasecmp(v, "null")))
		plain = 0;
	if (plain) {
		g_string_append(s, v);
		return;
	}
	g_string_append_c(s, '"');
	for (const char *p = v; *p; p++) {
		if (*p == '"' || *p == '\\')
			g_string_append_c(s, '\\');
		g_string_append_c(s, *p);
	}
	g_string_append_c(s, '"');
}

static void append_value(GString *s, const struct config_key *k, const char *v)
{
	if (!v)
		g_string_append(s, "~");
	else if (k->type == CONFIG_STRING)
		append_yaml_string(s, v);
	else
		g_string_append(s, v);
}

int config_write_template(const char *path, const struct sm_options *o, GError **err)
{
	struct sm_options d;
	options_defaults(&d);
	GString *s = g_string_new(NULL);
	g_string_append(s,
		"# ibsm configuration (YAML: one \"key: value\" per line). Read from /etc/ibsm/ibsm.yaml,\n"
		"# or the file named with -F/--config; a command-line flag beats the file. Keys are\n"
		"# OpenSM's opensm.conf keys where OpenSM has the setting, so an opensm.conf is read too.\n"
		"# Numbers: decimal or 0x hex; booleans: true/false; ~ means the default.\n"
		"# Generated by ibsm --create-config.\n\n");
	size_t n;
	const struct config_key *ks = config_keys(&n);
	for (size_t i = 0; i < n; i++) {
		const struct config_key *k = &ks[i];
		char *v = config_format(o, k), *dv = config_format(&d, k);
		int is_default = g_strcmp0(v, dv) == 0;
		g_string_append_printf(s, "# %s", k->doc);
		if (k->long_flag) {
			g_string_append(s, " [");
			if (k->short_flag)
				g_string_append_printf(s, "-%c, ", k->short_flag);
			g_string_append_printf(s, "--%s]", k->long_flag);
		}
		g_string_append_c(s, '\n');
		if (!is_default) {
			g_string_append(s, "# default: ");
			append_value(s, k, dv);
			g_string_append_c(s, '\n');
		}
		if (is_default && (k->flags & CONFIG_F_ENV))
			g_string_append(s, "# ");
		g_string_append_printf(s, "%s: ", k->key);
		append_value(s, k, v);
		g_string_append(s, "\n\n");
		g_free(v);
		g_free(dv);
	}
	options_free(&d);
	int rc = 0;
	if (!strcmp(path, "-")) {
		fputs(s->str, stdout);
		fflush(stdout);
	} else {
		GError *e = NULL;
		if (!g_file_set_contents(path, s->str, (gssize)s->len, &e)) {
			g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_IO, "%s", e->message);
			g_error_free(e);
			rc = -1;
		}
	}
	g_string_free(s, TRUE);
	return rc;
}
