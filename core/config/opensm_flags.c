/* SPDX-License-Identifier: BSD-2-Clause */
/* opensm_flags.c - the flags of `opensm --help` (3.3.23) that ibsm's key table does not carry
 * itself: second names of ibsm's settings, and flags of OpenSM keys without effect in ibsm
 * (config/opensm_keys.c says why, in one warning per flag). */
#include <glib.h>
#include <string.h>
#include "config/opensm_flags.h"

static const struct opensm_flag flags[] = {
	{ "smkey", 0, "KEY", "sm_key", NULL, "OpenSM's name of --sm_key" },
	{ "debug", 'd', "N", NULL, NULL,
	  "OpenSM's debug option: 0 ignore other SMs, 1 single thread, 2 flush the log, 3 no multicast, 10 testability" },
	{ "honor_guid2lid", 'x', NULL, "honor_guid2lid_file", "TRUE", "Honour guid2lid when coming out of standby (honor_guid2lid_file)" },
	{ "stay_on_fatal", 'y', NULL, "exit_on_fatal", "FALSE", "Do not exit on a fatal discovery error (exit_on_fatal FALSE)" },
	{ "console", 'q', "MODE", "console", NULL, "console: off|local|loopback|socket (socket: a unix socket)" },
	{ "console-port", 'C', "PORT", "console_port", NULL, "loopback console's TCP port" },
	{ "lid_matrix_file", 'M', "FILE", "lid_matrix_dump_file", NULL, "Hop counts the file engine routes on" },
	{ "lfts_file", 'U', "FILE", "lfts_file", NULL, "LFTs the file engine programs" },
	{ "sadb_file", 'S', "FILE", "sa_db_file", NULL, "SA database loaded on becoming master (sa_db_file)" },
	{ "ids_guid_file", 'm', "FILE", "ids_guid_file", NULL, "OpenSM: updn switch IDs" },
	{ "guid_routing_order_file", 'X', "FILE", "guid_routing_order_file", NULL, "OpenSM: routing order of port GUIDs" },
	{ "hop_weights_file", 'w', "FILE", "hop_weights_file", NULL, "OpenSM: per-port hop weights" },
	{ "port_search_ordering_file", 'O', "FILE", "port_search_ordering_file", NULL, "OpenSM: dor port order" },
	{ "dimn_ports_file", 0, "FILE", "port_search_ordering_file", NULL, "OpenSM: old name of --port_search_ordering_file" },
	{ "port-shifting", 0, NULL, "port_shifting", "TRUE", "OpenSM: shift port routes" },
	{ "scatter-ports", 0, "SEED", "scatter_ports", NULL, "OpenSM: random port choice" },
	{ "do_mesh_analysis", 0, NULL, "do_mesh_analysis", "TRUE", "lash: find a mesh's dimensions (fewer layers)" },
	{ "lash_start_vl", 0, "VL", "lash_start_vl", NULL, "lash's first VL" },
	{ "sm_sl", 0, "SL", "sm_sl", NULL, "SL to reach the SM: PortInfo:MasterSMSL (sm_sl)" },
	{ "nue_max_num_vls", 0, "N", "nue_max_num_vls", NULL, "nue: the VLs it may use (1: one VL, escape paths)" },
	{ "congestion_control", 0, NULL, "congestion_control", "TRUE", "Congestion control: CC MADs after each heavy sweep (congestion_control)" },
	{ "cc_key", 0, "KEY", "cc_key", NULL, "CC_Key of the congestion control MADs (cc_key)" },
	{ "perfmgr", 0, NULL, "perfmgr", "TRUE", "Run the performance manager (doc/perfmgr.md)" },
	{ "perfmgr_sweep_time_s", 0, "SEC", "perfmgr_sweep_time_s", NULL, "Seconds between performance manager sweeps" },
	{ "prefix_routes_file", 0, "FILE", "prefix_routes_file", NULL, "OpenSM: off-subnet prefix routes" },
	{ "consolidate_ipv6_snm_req", 0, NULL, "consolidate_ipv6_snm_req", "TRUE", "One MLID for the IPv6 solicited-node groups of a partition (consolidate_ipv6_snm_req)" },
	{ "guid_routing_order_no_scatter", 0, NULL, "guid_routing_order_no_scatter", "TRUE", "OpenSM: no scatter for ordered GUIDs" },
};

const struct opensm_flag *opensm_flags(unsigned *n)
{
	*n = G_N_ELEMENTS(flags);
	return flags;
}

const struct opensm_flag *opensm_flag_find(const char *name)
{
	for (size_t i = 0; i < G_N_ELEMENTS(flags); i++) {
		if (name[1] == '-' ? !strcmp(name + 2, flags[i].long_name) : (name[1] == flags[i].short_name && !name[2]))
			return &flags[i];
	}
	return NULL;
}

const char *opensm_debug_option_key(long n)
{
	switch (n) {
	case 0: return "ignore_other_sm";
	case 1: return "single_thread";
	case 2: return "force_log_flush";
	case 3: return "disable_multicast";
	case 10: return "";
	default: return NULL;
	}
}
