/* SPDX-License-Identifier: BSD-2-Clause */
/* opensm_keys.c - every opensm.conf key of OpenSM 3.3.23 (`opensm -c`) that ibsm has no setting
 * for, with OpenSM's default and why it has no effect, so an OpenSM site's file is read whole and
 * every such key gets a line that says why (config/build.c). */
#include <glib.h>
#include <string.h>
#include "config/keys.h"
#include "config/opensm_keys.h"

#define NE OSK_NO_EFFECT
#define NO_PERFMGR_REDIR "the performance manager follows no PerfMgt redirection: every port is queried at its LID"

static const struct opensm_key table[] = {
	{ "keep_pkey_indexes", "TRUE", NE, "ibsm always keeps a P_Key at the index it has in the port's table, as OpenSM's default TRUE; FALSE (tables laid out afresh, indexes moving under running jobs) is not offered" },
	{ "sm_assigned_guid", "0x00", NE, "ibsm assigns no alias GUIDs" },
	{ "port_profile_switch_nodes", "FALSE", NE, "minhop balances routes over CA ports; switch ports are not profiled" },
	{ "avoid_throttled_links", "FALSE", NE, "ibsm reads no vendor link-throttling attribute" },
	{ "quasi_ftree_indexing", "FALSE", NE, "ftree has no quasi fat-tree indexing" },
	{ "long_transaction_timeout", "500", NE, "OpenSM gives it only to its optimized SL2VL Sets (use_optimized_slvl), which ibsm does not send: every SMP waits transaction_timeout" },
	{ "max_msg_fifo_timeout", "10000", NE, "ibsm has no message FIFO" },
	{ "single_thread", "FALSE", NE, "MADs are always dispatched on one thread" },
	{ "use_original_extended_sa_rates_only", "FALSE", NE, "the SA's rate encoding cannot be switched" },
	{ "use_optimized_slvl", "FALSE", NE, "SL2VL tables are programmed per port (with -Q)" },
	{ "fsync_high_avail_files", "TRUE", NE, "guid2lid is always written with fsync and an atomic rename" },
	{ "perfmgr_redir", "TRUE", NE, NO_PERFMGR_REDIR },
	{ "event_plugin_name", NULL, NE, "ibsm's plugins are routing engines, not OpenSM event plugins" },
	{ "event_plugin_options", NULL, NE, "ibsm's plugins are routing engines, not OpenSM event plugins" },
	{ "force_log_flush", "FALSE", NE, "every log line is written at once" },
	{ "per_module_logging_file", "/etc/opensm/per-module-logging.conf", NE, "log_flags apply to every module" },
	{ "enable_quirks", "FALSE", NE, "ibsm applies no vendor quirks" },
};

const struct opensm_key *opensm_keys(unsigned *n)
{
	*n = G_N_ELEMENTS(table);
	return table;
}

const struct opensm_key *opensm_key_find(const char *key)
{
	for (size_t i = 0; i < G_N_ELEMENTS(table); i++)
		if (!strcmp(table[i].key, key))
			return &table[i];
	return NULL;
}

/* words compared one by one: a number by value, anything else without case */
static int same_word(const char *a, const char *b)
{
	long long sa, sb;
	unsigned long long ua, ub;
	if (config_parse_number(a, 1, &sa, &ua) == 0 && config_parse_number(b, 1, &sb, &ub) == 0)
		return ua == ub && sa == sb;
	return !g_ascii_strcasecmp(a, b);
}

int opensm_key_is_default(const struct opensm_key *k, const char *value)
{
	int unset = !value || !*value || !strcmp(value, "(null)");
	if (!k->osm_default || unset)
		return !k->osm_default && unset;
	char **va = g_strsplit_set(value, " \t", -1), **vb = g_strsplit_set(k->osm_default, " \t", -1);
	int same = 1;
	unsigned i = 0, j = 0;
	for (;; i++, j++) {
		while (va[i] && !*va[i])
			i++;
		while (vb[j] && !*vb[j])
			j++;
		if (!va[i] || !vb[j]) {
			same = !va[i] && !vb[j];
			break;
		}
		if (!same_word(va[i], vb[j])) {
			same = 0;
			break;
		}
	}
	g_strfreev(va);
	g_strfreev(vb);
	return same;
}
