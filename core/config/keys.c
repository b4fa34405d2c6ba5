/* SPDX-License-Identifier: BSD-2-Clause */
/* keys.c - one table for every setting (opensm.conf key, type, range, flag, doc) so the command
 * line, the YAML file, an existing opensm.conf and the --create-config template cannot disagree;
 * parsing a value into struct sm_options and formatting it back. */
#include <errno.h>
#include <limits.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config/keys.h"

#define OFF(f) offsetof(struct sm_options, f)

static int check_part_enforce(const char *v, GError **err)
{
	if (part_enforce_parse(v) >= 0)
		return 0;
	g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_BAD_VALUE, "'%s' is not both, in, out or off", v);
	return -1;
}
static int check_console(const char *v, GError **err)
{
	if (!strcmp(v, "off") || !strcmp(v, "local") || !strcmp(v, "loopback") || !strcmp(v, "socket") ||
	    !strcmp(v, "unix"))
		return 0;
	g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_BAD_VALUE, "'%s' is not off, local, loopback or socket", v);
	return -1;
}
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
	{ "sa_key", CONFIG_U64, OFF(sa_key), 0, 0, 0, NOFLAG,
	  "SA_Key: SA requests with another non-zero SM_Key are dropped; a non-zero key is trusted "
	  "(keys in records), P_KeyTableRecords go only to this key (OpenSM's default 1 is no secret)", NULL },
	{ "m_key", CONFIG_U64, OFF(m_key), 0, 0, 0, 0, NULL, NULL, NULL,
	  "M_Key secret (0: no M_Key protection); every management port gets a key from it, presented in every SMP", NULL },
	{ "m_key_protection_level", CONFIG_U8, OFF(m_key_protect), 0, 3, 0, 0, NULL, NULL, NULL,
	  "M_Key ProtectBits: 0 Gets answered, 1 the key hidden from Gets without it, 2-3 Gets refused too", NULL },
	{ "m_key_lease_period", CONFIG_INT, OFF(m_key_lease), 0, 65535, 0, 0, NULL, NULL, NULL,
	  "Seconds a port waits after a bad M_Key before dropping its protection (0: never); recovers lost keys", NULL },
	{ "m_key_per_port", CONFIG_BOOL, OFF(m_key_per_port), 0, 1, 0, 0, NULL, NULL, NULL,
	  "A key per port, HMAC-SHA256(m_key, port GUID) (false: m_key itself everywhere, as OpenSM)", NULL },
	{ "m_key_lookup", CONFIG_BOOL, OFF(m_key_lookup), 0, 1, 0, NOFLAG,
	  "Keys of ports read from guid2mkey in cache_dir (the one a port was given last) and written back", NULL },
	{ "sm_priority", CONFIG_U8, OFF(sm_priority), 0, 15, 0, 'p', "priority", "PRIO", NULL,
	  "SM priority (0-15); a master with higher priority (then lower GUID) keeps us standby", NULL },
	{ "ignore_other_sm", CONFIG_BOOL, OFF(ignore_other_sm), 0, 1, 0, NOFLAG,
	  "Be master whatever other SMs say (OpenSM's -d 0; two masters fight: for tests only)", NULL },
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
	{ "torus_config", CONFIG_STRING, OFF(torus_config), 0, 0, CONFIG_F_FALLBACK, 0, "torus_config", "FILE", NULL,
	  "torus-2QoS.conf: the torus or mesh, its seeds and datelines (torus-2QoS)", NULL },
	{ "pgrp_policy_file", CONFIG_STRING, OFF(pgrp_policy_file), 0, 0, 0, 0, "pgrp_policy_file", "FILE", NULL,
	  "Port groups policy: named groups of ports the routing chain's topologies use", NULL },
	{ "topo_policy_file", CONFIG_STRING, OFF(topo_policy_file), 0, 0, 0, 0, "topo_policy_file", "FILE", NULL,
	  "Topology policy: numbered topologies (a switch group and a CA group) for routing chains", NULL },
	{ "rch_policy_file", CONFIG_STRING, OFF(rch_policy_file), 0, 0, 0, 0, "rch_policy_file", "FILE", NULL,
	  "Routing chain policy: unicast steps, each an engine on a topology (set: the chain routes)", NULL },
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
	{ "log_flags", CONFIG_U32, OFF(debug_flags), 0, 0xffffffffLL, 0, 'D', "D", "FLAGS", NULL,
	  "Log flags, each bit a level as OpenSM's -D: 0x1 errors and warnings, 0x2 info, 0x4 verbose, 0x8 debug, "
	  "0x40 routing (also writes the LFT dumps); 0 logs nothing", NULL },
	{ "log_max_size", CONFIG_INT, OFF(log_max_mb), 0, 1 << 20, 0, 'L', "log_limit", "MB", NULL,
	  "Log file size limit in MB: the file is emptied when it would grow past it (0: no limit)", NULL },
	{ "syslog_log_level", CONFIG_U32, OFF(syslog_flags), 0, 0xffffffffLL, 0, NOFLAG,
	  "Log flags (as log_flags) of the lines also sent to syslog, facility daemon (0: none)", NULL },
	{ "log_prefix", CONFIG_STRING, OFF(log_prefix), 0, 0, 0, 0, "log_prefix", "TEXT", NULL,
	  "Syslog identity of ibsm's lines (default: ibsm)", NULL },
	{ "syslog_state_changes", CONFIG_BOOL, OFF(syslog_state_changes), 0, 1, 0, NOFLAG,
	  "State changes (MASTER, STANDBY, NOTACTIVE, SUBNET UP, handovers, fatal errors) also go to "
	  "syslog whatever syslog_log_level says, as OpenSM's do", NULL },
	{ "syslog_socket", CONFIG_STRING, OFF(syslog_socket), 0, 0, 0, NOFLAG,
	  "The unix datagram socket syslog lines are sent to (default /dev/log); never waited for", NULL },
	{ "metrics_port", CONFIG_INT, OFF(metrics_port), 0, 65535, 0, NOFLAG,
	  "Prometheus metrics over HTTP on 127.0.0.1:PORT, GET /metrics (0: off; never another address)", NULL },
	{ "activity_report_subjects", CONFIG_STRING, OFF(activity_report_subjects), 0, 0, 0, NOFLAG,
	  "Activity report subjects written to opensm-activity.dump in the dump directory: a comma "
	  "list of mc, prtn, virt, routing, or all, or none (default)", NULL },
	{ "console", CONFIG_STRING, OFF(console), 0, 0, 0, 0, NULL, NULL, NULL,
	  "Console (ibsm-cli, nc): socket (a unix socket, mode 0600: console_socket), loopback (TCP on "
	  "127.0.0.1:console_port), local (the terminal), off; also OpenSM's -q", NULL },
	{ "console_port", CONFIG_INT, OFF(console_port), 1, 65535, 0, 0, NULL, NULL, NULL,
	  "TCP port of the loopback console (127.0.0.1 only); also OpenSM's -C", NULL },
	{ "console_socket", CONFIG_STRING, OFF(console_socket), 0, 0, 0, 0, "console_socket", "PATH", NULL,
	  "Path of the unix socket console (its directory is made 0700 if missing)", NULL },
	{ "fabric_report_file", CONFIG_STRING, OFF(fabric_report_file), 0, 0, 0, 0, "fabric_report_file", "FILE", NULL,
	  "The fabric report (HTML: topology, routed link load, routing quality; doc/report.md) written there after each heavy sweep (default: none)", NULL },
	{ "perfmgr", CONFIG_BOOL, OFF(perfmgr), 0, 1, 0, NOFLAG,
	  "Performance manager: sweep every port's PortCounters (and PortCountersExtended), log error "
	  "counters that move (doc/perfmgr.md); also OpenSM's --perfmgr", NULL },
	{ "perfmgr_sweep_time_s", CONFIG_INT, OFF(perfmgr_sweep_time_s), 1, 86400, 0, NOFLAG,
	  "Seconds between performance manager sweeps", NULL },
	{ "perfmgr_max_outstanding_queries", CONFIG_INT, OFF(perfmgr_max_outstanding), 1, 100000, 0, NOFLAG,
	  "PerfMgt queries in flight at most (ibsm never has more than 64)", NULL },
	{ "perfmgr_ignore_cas", CONFIG_BOOL, OFF(perfmgr_ignore_cas), 0, 1, 0, NOFLAG,
	  "Query switch ports only, not CA ports", NULL },
	{ "perfmgr_rm_nodes", CONFIG_BOOL, OFF(perfmgr_rm_nodes), 0, 1, 0, NOFLAG,
	  "Forget the counters of nodes (and links) gone from the fabric", NULL },
	{ "perfmgr_log_errors", CONFIG_BOOL, OFF(perfmgr_log_errors), 0, 1, 0, NOFLAG,
	  "Log every error counter that moved, naming the node description and port (PERF-0006)", NULL },
	{ "perfmgr_query_cpi", CONFIG_BOOL, OFF(perfmgr_query_cpi), 0, 1, 0, NOFLAG,
	  "Read each node's PerfMgt ClassPortInfo first: PortCountersExtended where it says so", NULL },
	{ "perfmgr_xmit_wait_log", CONFIG_BOOL, OFF(perfmgr_xmit_wait_log), 0, 1, 0, NOFLAG,
	  "Log ports whose PortXmitWait grew past perfmgr_xmit_wait_threshold in a sweep", NULL },
	{ "perfmgr_xmit_wait_threshold", CONFIG_U32, OFF(perfmgr_xmit_wait_threshold), 0, 0xffffffffLL, 0, NOFLAG,
	  "PortXmitWait increase per sweep above which perfmgr_xmit_wait_log logs the port", NULL },
	{ "event_db_dump_file", CONFIG_STRING, OFF(event_db_dump_file), 0, 0, 0, NOFLAG,
	  "File console `perfmgr dump_counters` writes (default: opensm_port_counters.log in the dump directory)", NULL },
	{ "force_heavy_sweep", CONFIG_BOOL, OFF(force_heavy_sweep), 0, 1, 0, NOFLAG,
	  "Every periodic sweep is a heavy one (full discovery), not a light PortInfo check", NULL },
	{ "repair_sweep", CONFIG_BOOL, OFF(repair_sweep), 0, 1, 0, NOFLAG,
	  "A link change on a subnet that is up (trap 128, or PortStateChange seen by a light sweep) is "
	  "repaired: the switches that changed are read, every other switch's PortStateChange checked, "
	  "the rest taken from the last sweep; false: a heavy sweep (full discovery) every time", NULL },
	{ "sweep_on_trap", CONFIG_BOOL, OFF(sweep_on_trap), 0, 1, 0, NOFLAG,
	  "A trap 128 or 144 (or a port found unhealthy by its error traps) starts a sweep at once "
	  "(false: the next periodic light sweep finds the change)", NULL },
	{ "babbling_port_policy", CONFIG_BOOL, OFF(babbling_port_policy), 0, 1, 0, NOFLAG,
	  "A port that sends the same error trap (129-131) more than 250 times in a row, each within 5 s "
	  "(60 s once unhealthy) of the last, is disabled (PortPhysicalState Disabled)", NULL },
	{ "exit_on_fatal", CONFIG_BOOL, OFF(exit_on_fatal), 0, 1, 0, NOFLAG,
	  "Exit on a fatal discovery error: two CAs with one GUID linked to each other (a link from a "
	  "port to itself) (false: -y, log it and carry on)", NULL },
	{ "sm_inactive", CONFIG_BOOL, OFF(sm_inactive), 0, 1, 0, 'I', "inactive", NULL, "true",
	  "Start in the NOTACTIVE state: answer SMInfo, never sweep or program (SIGHUP re-reads this)", NULL },
	{ "sweep_interval", CONFIG_INT, OFF(sweep_interval), 0, 86400, 0, 's', "sweep", "SEC", NULL,
	  "Light sweep interval in seconds (0: no periodic sweep)", NULL },
	{ "once", CONFIG_BOOL, OFF(once), 0, 1, 0, 'o', "once", NULL, "true",
	  "Bring the subnet up once, then exit", NULL },
	{ "sa_db_dump", CONFIG_BOOL, OFF(sa_db_dump), 0, 1, 0, NOFLAG,
	  "The master writes the SA's ServiceRecords, multicast groups and subscriptions to "
	  "opensm-sa.dump in the dump directory (after a light sweep that finds the SA changed, and at exit)", NULL },
	{ "sa_db_file", CONFIG_STRING, OFF(sa_db_file), 0, 0, 0, NOFLAG,
	  "SA database (an opensm-sa.dump, OpenSM's or ibsm's) loaded each time this SM becomes master (-S)", NULL },
	{ "sminfo_polling_timeout", CONFIG_INT, OFF(sminfo_polling_timeout), 100, 3600000, 0, 0,
	  "sminfo_polling_timeout", "MS", NULL,
	  "Milliseconds between a standby's SMInfo polls of the master", NULL },
	{ "polling_retry_number", CONFIG_INT, OFF(polling_retry_number), 1, 1000, 0, 0,
	  "polling_retry_number", "N", NULL,
	  "Polls of the master unanswered in a row before a standby takes over", NULL },
	{ "honor_guid2lid_file", CONFIG_BOOL, OFF(honor_guid2lid_file), 0, 1, 0, NOFLAG,
	  "Coming out of standby, read guid2lid too (false: keep the LIDs the ports hold) (-x)", NULL },
	{ "no_clients_rereg", CONFIG_BOOL, OFF(no_clients_rereg), 0, 1, 0, NOFLAG,
	  "Never set ClientReregister in PortInfo (clients keep their SA registrations; with an "
	  "sa_db_file that failed to load in part, clients are asked all the same)", NULL },
	{ "disable_multicast", CONFIG_BOOL, OFF(disable_multicast), 0, 1, 0, NOFLAG,
	  "No multicast forwarding: no MFT is written and ClassPortInfo does not claim "
	  "IsUDMulticastSupported; joins are still answered and kept, as OpenSM does (-d 3)", NULL },
	{ "ipoib_mcgroup_creation_validation", CONFIG_BOOL, OFF(ipoib_mcgroup_creation_validation), 0, 1, 0, NOFLAG,
	  "A group created with an MGID of its own: the MGID checked (prefix, flags, not the SA's "
	  "signature), and an IPoIB one other than the broadcast group needs that partition's "
	  "broadcast group, whose Q_Key, P_Key, TClass, SL, FlowLabel and HopLimit it must match", NULL },
	{ "node_name_map_name", CONFIG_STRING, OFF(node_name_map_name), 0, 0, 0, NOFLAG,
	  "ibnetdiscover's node-name-map (NODE-GUID \"name\" a line): its names stand for the "
	  "NodeDescriptions in the dumps (opensm-subnet.lst, opensm-lfts.dump, opensm.fdbs), as OpenSM's", NULL },
	{ "prefix_routes_file", CONFIG_STRING, OFF(prefix_routes_file), 0, 0, 0, NOFLAG,
	  "PathRecords to off-subnet DGIDs: 'PREFIX ROUTER-PORT-GUID' a line ('*' for any), the first "
	  "line matching with its router present wins, no match no path (default: "
	  "/etc/opensm/prefix-routes.conf when there; without a file, the first router)", NULL },
	{ "consolidate_ipv6_snm_req", CONFIG_BOOL, OFF(consolidate_ipv6_snm_req), 0, 1, 0, NOFLAG,
	  "IPv6 solicited-node groups (ff1x:601b:<P_Key>::1:ffxx:xxxx) created alike up to their last "
	  "24 bits share one MLID (each keeps its MGID and members; one MFT tree)", NULL },
	{ "drop_event_subscriptions", CONFIG_BOOL, OFF(drop_event_subscriptions), 0, 1, 0, NOFLAG,
	  "The InformInfo subscriptions of an end port that leaves the fabric are dropped with it "
	  "(false: they stay, as OpenSM's default)", NULL },
	{ "mcgroup_join_validation", CONFIG_BOOL, OFF(mcgroup_join_validation), 0, 1, 0, NOFLAG,
	  "A join of an existing group must match its Q_Key, P_Key, TClass, SL, FlowLabel and "
	  "HopLimit where the request gives them (false: only MTU, rate and lifetime are checked)", NULL },
	{ "transaction_timeout", CONFIG_INT, OFF(timeout_ms), 1, 60000, 0, 't', "timeout", "MS", NULL,
	  "SMP timeout in milliseconds", NULL },
	{ "transaction_retries", CONFIG_INT, OFF(retries), 0, 100, 0, 0, "retries", "N", NULL,
	  "SMP retries after a timeout", NULL },
	{ "max_wire_smps", CONFIG_INT, OFF(window), 0, 255, 0, 'n', "maxsmps", "N", NULL,
	  "SMPs in flight (1-255; 0, OpenSM's unlimited: ibsm's default window of 64)", NULL },
	{ "max_wire_smps2", CONFIG_INT, OFF(max_wire_smps2), 0, 255, 0, NOFLAG,
	  "Second window: when max_wire_smps SMPs are in flight and none is answered for "
	  "max_smps_timeout, one more goes out, up to this many (not above max_wire_smps: off)", NULL },
	{ "max_smps_timeout", CONFIG_INT, OFF(max_smps_timeout), 1, 100000000, 0, NOFLAG,
	  "Microseconds a full window waits for an answer before the second window lets one more SMP out", NULL },
	{ "mad_cpu", CONFIG_INT, OFF(mad_cpu), -1, 1023, 0, 0, "mad_cpu", "CPU", NULL,
	  "CPU the MAD path stays on: the event loop and the threads the MAD library starts with the "
	  "port (umad2sim's receiver under ibsim); threads that compute keep every CPU "
	  "(-1: none, the kernel places every thread; read at start)", NULL },
	{ "max_op_vls", CONFIG_U8, OFF(max_op_vls), 1, 5, 0, 0, "max_op_vls", "N", NULL,
	  "Max operational VLs: 1 VL0, 2 VL0-1, 3 VL0-3, 4 VL0-7, 5 VL0-14", NULL },
	{ "subnet_prefix", CONFIG_U64, OFF(subnet_prefix), 0, 0, 0, 0, "subnet_prefix", "PREFIX", NULL,
	  "Subnet prefix (GID prefix) given to every port", NULL },
	{ "subnet_timeout", CONFIG_U8, OFF(subnet_timeout), 0, 31, 0, NOFLAG,
	  "PortInfo.SubnetTimeout: 4.096 us * 2^N", NULL },
	{ "head_of_queue_lifetime", CONFIG_U8, OFF(hoq_life), 0, 31, 0, NOFLAG,
	  "Head-of-queue lifetime of switch ports to switches: 4.096 us * 2^N (>19: infinite)", NULL },
	{ "leaf_head_of_queue_lifetime", CONFIG_U8, OFF(leaf_hoq_life), 0, 31, 0, NOFLAG,
	  "Head-of-queue lifetime of switch ports to CAs: 4.096 us * 2^N (>19: infinite)", NULL },
	{ "vl_stall_count", CONFIG_U8, OFF(vl_stall_count), 0, 7, 0, NOFLAG,
	  "Packets dropped in a row before a VL enters the stall state", NULL },
	{ "leaf_vl_stall_count", CONFIG_U8, OFF(leaf_vl_stall_count), 0, 7, 0, NOFLAG,
	  "The same for switch ports to CAs and routers", NULL },
	{ "sm_sl", CONFIG_U8, OFF(sm_sl), 0, 15, 0, NOFLAG,
	  "PortInfo:MasterSMSL, the SL to reach the SM (an engine with SLs, torus-2QoS, gives its own)", NULL },
	{ "local_phy_errors_threshold", CONFIG_U8, OFF(local_phy_errors_threshold), 0, 15, 0, NOFLAG,
	  "PortInfo:LocalPhyErrors, the threshold of local physical errors for trap 129", NULL },
	{ "overrun_errors_threshold", CONFIG_U8, OFF(overrun_errors_threshold), 0, 15, 0, NOFLAG,
	  "PortInfo:OverrunErrors, the threshold of credit overruns for trap 130", NULL },
	{ "force_link_speed", CONFIG_U8, OFF(force_link_speed), 0, 15, 0, NOFLAG,
	  "PortInfo:LinkSpeedEnabled written (0: left as it is; 15: LinkSpeedSupported)", NULL },
	{ "force_link_speed_ext", CONFIG_U8, OFF(force_link_speed_ext), 0, 31, 0, NOFLAG,
	  "PortInfo:LinkSpeedExtEnabled written where both ends have extended speeds (0: left; 30: off; 31: supported)", NULL },
	{ "force_link_width", CONFIG_U8, OFF(force_link_width), 0, 255, 0, NOFLAG,
	  "PortInfo:LinkWidthEnabled written (0: left as it is; 255: LinkWidthSupported, on CA and router ports)", NULL },
	{ "use_mfttop", CONFIG_BOOL, OFF(use_mfttop), 0, 1, 0, NOFLAG,
	  "SwitchInfo:MulticastFDBTop written on switches whose port 0 CapabilityMask says they honour it", NULL },
	{ "fdr10", CONFIG_U8, OFF(fdr10), 0, 2, 0, NOFLAG,
	  "FDR10 on Mellanox ports that support it (vendor MlnxExtPortInfo): 0 no such MAD, 1 enabled, 2 disabled", NULL },
	{ "lmc_esp0", CONFIG_BOOL, OFF(lmc_esp0), 0, 1, 0, NOFLAG,
	  "An enhanced switch port 0 gets 2^lmc LIDs like a CA port (false: one LID, LMC 0)", NULL },
	{ "packet_life_time", CONFIG_U8, OFF(packet_life), 0, 31, 0, NOFLAG,
	  "Packet lifetime in a switch: 4.096 us * 2^N", NULL },
	{ "rtr_pr_flow_label", CONFIG_U32, OFF(rtr_pr_flow_label), 0, 0xfffff, 0, NOFLAG,
	  "FlowLabel of PathRecords to an off-subnet DGID (through a router)", NULL },
	{ "rtr_pr_tclass", CONFIG_U8, OFF(rtr_pr_tclass), 0, 255, 0, NOFLAG,
	  "TClass of PathRecords to an off-subnet DGID (through a router)", NULL },
	{ "rtr_pr_sl", CONFIG_U8, OFF(rtr_pr_sl), 0, 15, 0, NOFLAG,
	  "SL of PathRecords to an off-subnet DGID (through a router)", NULL },
	{ "rtr_pr_mtu", CONFIG_U8, OFF(rtr_pr_mtu), 1, 5, 0, NOFLAG,
	  "MTU of PathRecords to an off-subnet DGID, at most (1 256 ... 5 4096)", NULL },
	{ "rtr_pr_rate", CONFIG_U8, OFF(rtr_pr_rate), 2, 18, 0, NOFLAG,
	  "Rate of PathRecords to an off-subnet DGID, at most (IB rate code: 3 10 Gb/s, 7 40, 16 100, ...)", NULL },
	{ "plugin_dir", CONFIG_STRING, OFF(plugin_dir), 0, 0, 0, 0, "plugin-dir", "DIR", NULL,
	  "Extra routing-engine plugin directories, searched first (':'-separated; --plugin-dir "
	  "may be repeated; also $IBSM_PLUGIN_PATH)", NULL },
	{ "fabric_file", CONFIG_STRING, OFF(fabric_file), 0, 0, 0, 0, "fabric", "FILE", NULL,
	  "Offline: route this ibnetdiscover/ibsim fabric file, send no MADs", NULL },
	{ "cache_dir", CONFIG_STRING, OFF(cache_dir), 0, 0, CONFIG_F_ENV, 0, "cache-dir", "DIR", NULL,
	  "guid2lid directory (default $OSM_CACHE_DIR or /var/cache/ibsm)", NULL },
	{ "dump_files_dir", CONFIG_STRING, OFF(tmp_dir), 0, 0, CONFIG_F_ENV, 0, "dump_files_dir", "DIR", NULL,
	  "Directory of opensm-subnet.lst and the dumps (default $OSM_TMP_DIR or /var/log; --fabric: "
	  "only this flag or $OSM_TMP_DIR)", NULL },
	{ "progress", CONFIG_BOOL, OFF(progress), 0, 1, 0, 0, "progress", NULL, "true",
	  "One line per phase on stderr and a summary", NULL },
	{ "daemon", CONFIG_BOOL, OFF(daemon), 0, 1, 0, 'B', "daemon", NULL, "true",
	  "Run in the background", NULL },
	{ "pid_file", CONFIG_STRING, OFF(pid_file), 0, 0, 0, 0, "pid_file", "FILE", NULL,
	  "PID file written when running in the background (mode 0644; blocks a start only while it names a running ibsm)", NULL },
	{ "partition_config_file", CONFIG_STRING, OFF(partition_config_file), 0, 0, CONFIG_F_FALLBACK, 'P', "Pconfig", "FILE", NULL,
	  "Partition configuration file", NULL },
	{ "part_enforce", CONFIG_STRING, OFF(part_enforce), 0, 0, 0, 'Z', "part_enforce", "TYPE", NULL,
	  "Partition enforcement on switch ports facing end ports: both, in, out or off", NULL },
	{ "no_partition_enforcement", CONFIG_BOOL, OFF(no_part_enforce), 0, 1, 0, 'N', "no_part_enforce", NULL, "true",
	  "No partition enforcement on switches (OpenSM's older name for part_enforce off)", NULL },
	{ "allow_both_pkeys", CONFIG_BOOL, OFF(allow_both_pkeys), 0, 1, 0, 'W', "allow_both_pkeys", NULL, "true",
	  "Accepted for OpenSM compatibility: a `both` member always gets a full and a limited P_Key", NULL },
	{ "qos", CONFIG_BOOL, OFF(qos), 0, 1, 0, 'Q', "qos", NULL, "true",
	  "Enable QoS setup", NULL },
	{ "qos_policy_file", CONFIG_STRING, OFF(qos_policy_file), 0, 0, CONFIG_F_FALLBACK, 'Y', "qos_policy_file", "FILE", NULL,
	  "QoS policy file", NULL },
	{ "suppress_sl2vl_mad_status_errors", CONFIG_BOOL, OFF(suppress_sl2vl_mad_status_errors), 0, 1, 0, NOFLAG,
	  "An SL2VL Get or Set answered with a MAD status (a port without SL2VL tables) is logged "
	  "at verbose level, not as an error (VLT-0003)", NULL },
	{ "enhanced_qos_policy_file", CONFIG_STRING, OFF(enhanced_qos_policy_file), 0, 0, 0, NOFLAG,
	  "NVIDIA's enhanced QoS policy: per-SL rate limits (QoSConfigSL) of CA ports (with -Q; unset or null: off)", NULL },
	{ "enhanced_qos_vport0_unlimit_default_rl", CONFIG_BOOL, OFF(enhanced_qos_vport0_unlimit_default_rl), 0, 1, 0, NOFLAG,
	  "Enhanced QoS: virtual port 0 gets unlimited SLs where VPORT_BW_RULES names none for it (false: its default rule)", NULL },
	{ "offsweep_balancing_enabled", CONFIG_BOOL, OFF(offsweep_balancing_enabled), 0, 1, 0, NOFLAG,
	  "minhop/dor/updn: routes kept from the unicast cache (-A) over a changed fabric are computed afresh once the fabric is quiet", NULL },
	{ "offsweep_balancing_window", CONFIG_INT, OFF(offsweep_balancing_window), 1, 86400, 0, NOFLAG,
	  "Seconds without a sweep of a changed fabric before off-sweep balancing routes afresh", NULL },
	{ "qos_max_vls", CONFIG_QOS, OFF(qos_opt[QOS_S_ALL][QOS_P_MAX_VLS]), QOS_P_MAX_VLS, 0, 0, NOFLAG,
	  "every port: data VLs used at most, 1-15 (with -Q; unset: OpenSM's default)", NULL },
	{ "qos_high_limit", CONFIG_QOS, OFF(qos_opt[QOS_S_ALL][QOS_P_HIGH_LIMIT]), QOS_P_HIGH_LIMIT, 0, 0, NOFLAG,
	  "every port: VLHighLimit 0-255 (x 4 KB of high-priority traffic) (with -Q; unset: OpenSM's default)", NULL },
	{ "qos_vlarb_high", CONFIG_QOS, OFF(qos_opt[QOS_S_ALL][QOS_P_VLARB_HIGH]), QOS_P_VLARB_HIGH, 0, 0, NOFLAG,
	  "every port: high-priority VL arbitration, VL:weight,... (up to 64) (with -Q; unset: OpenSM's default)", NULL },
	{ "qos_vlarb_low", CONFIG_QOS, OFF(qos_opt[QOS_S_ALL][QOS_P_VLARB_LOW]), QOS_P_VLARB_LOW, 0, 0, NOFLAG,
	  "every port: low-priority VL arbitration, VL:weight,... (up to 64) (with -Q; unset: OpenSM's default)", NULL },
	{ "qos_sl2vl", CONFIG_QOS, OFF(qos_opt[QOS_S_ALL][QOS_P_SL2VL]), QOS_P_SL2VL, 0, 0, NOFLAG,
	  "every port: VL of SL 0..15, comma-separated (15 drops the SL) (with -Q; unset: OpenSM's default)", NULL },
	{ "qos_ca_max_vls", CONFIG_QOS, OFF(qos_opt[QOS_S_CA][QOS_P_MAX_VLS]), QOS_P_MAX_VLS, 0, 0, NOFLAG,
	  "CA ports: data VLs used at most, 1-15; unset: the qos_ value", NULL },
	{ "qos_ca_high_limit", CONFIG_QOS, OFF(qos_opt[QOS_S_CA][QOS_P_HIGH_LIMIT]), QOS_P_HIGH_LIMIT, 0, 0, NOFLAG,
	  "CA ports: VLHighLimit 0-255 (x 4 KB of high-priority traffic); unset: the qos_ value", NULL },
	{ "qos_ca_vlarb_high", CONFIG_QOS, OFF(qos_opt[QOS_S_CA][QOS_P_VLARB_HIGH]), QOS_P_VLARB_HIGH, 0, 0, NOFLAG,
	  "CA ports: high-priority VL arbitration, VL:weight,... (up to 64); unset: the qos_ value", NULL },
	{ "qos_ca_vlarb_low", CONFIG_QOS, OFF(qos_opt[QOS_S_CA][QOS_P_VLARB_LOW]), QOS_P_VLARB_LOW, 0, 0, NOFLAG,
	  "CA ports: low-priority VL arbitration, VL:weight,... (up to 64); unset: the qos_ value", NULL },
	{ "qos_ca_sl2vl", CONFIG_QOS, OFF(qos_opt[QOS_S_CA][QOS_P_SL2VL]), QOS_P_SL2VL, 0, 0, NOFLAG,
	  "CA ports: VL of SL 0..15, comma-separated (15 drops the SL); unset: the qos_ value", NULL },
	{ "qos_rtr_max_vls", CONFIG_QOS, OFF(qos_opt[QOS_S_RTR][QOS_P_MAX_VLS]), QOS_P_MAX_VLS, 0, 0, NOFLAG,
	  "router ports: data VLs used at most, 1-15; unset: the qos_ value", NULL },
	{ "qos_rtr_high_limit", CONFIG_QOS, OFF(qos_opt[QOS_S_RTR][QOS_P_HIGH_LIMIT]), QOS_P_HIGH_LIMIT, 0, 0, NOFLAG,
	  "router ports: VLHighLimit 0-255 (x 4 KB of high-priority traffic); unset: the qos_ value", NULL },
	{ "qos_rtr_vlarb_high", CONFIG_QOS, OFF(qos_opt[QOS_S_RTR][QOS_P_VLARB_HIGH]), QOS_P_VLARB_HIGH, 0, 0, NOFLAG,
	  "router ports: high-priority VL arbitration, VL:weight,... (up to 64); unset: the qos_ value", NULL },
	{ "qos_rtr_vlarb_low", CONFIG_QOS, OFF(qos_opt[QOS_S_RTR][QOS_P_VLARB_LOW]), QOS_P_VLARB_LOW, 0, 0, NOFLAG,
	  "router ports: low-priority VL arbitration, VL:weight,... (up to 64); unset: the qos_ value", NULL },
	{ "qos_rtr_sl2vl", CONFIG_QOS, OFF(qos_opt[QOS_S_RTR][QOS_P_SL2VL]), QOS_P_SL2VL, 0, 0, NOFLAG,
	  "router ports: VL of SL 0..15, comma-separated (15 drops the SL); unset: the qos_ value", NULL },
	{ "qos_sw0_max_vls", CONFIG_QOS, OFF(qos_opt[QOS_S_SW0][QOS_P_MAX_VLS]), QOS_P_MAX_VLS, 0, 0, NOFLAG,
	  "switch port 0: data VLs used at most, 1-15; unset: the qos_ value", NULL },
	{ "qos_sw0_high_limit", CONFIG_QOS, OFF(qos_opt[QOS_S_SW0][QOS_P_HIGH_LIMIT]), QOS_P_HIGH_LIMIT, 0, 0, NOFLAG,
	  "switch port 0: VLHighLimit 0-255 (x 4 KB of high-priority traffic); unset: the qos_ value", NULL },
	{ "qos_sw0_vlarb_high", CONFIG_QOS, OFF(qos_opt[QOS_S_SW0][QOS_P_VLARB_HIGH]), QOS_P_VLARB_HIGH, 0, 0, NOFLAG,
	  "switch port 0: high-priority VL arbitration, VL:weight,... (up to 64); unset: the qos_ value", NULL },
	{ "qos_sw0_vlarb_low", CONFIG_QOS, OFF(qos_opt[QOS_S_SW0][QOS_P_VLARB_LOW]), QOS_P_VLARB_LOW, 0, 0, NOFLAG,
	  "switch port 0: low-priority VL arbitration, VL:weight,... (up to 64); unset: the qos_ value", NULL },
	{ "qos_sw0_sl2vl", CONFIG_QOS, OFF(qos_opt[QOS_S_SW0][QOS_P_SL2VL]), QOS_P_SL2VL, 0, 0, NOFLAG,
	  "switch port 0: VL of SL 0..15, comma-separated (15 drops the SL); unset: the qos_ value", NULL },
	{ "qos_swe_max_vls", CONFIG_QOS, OFF(qos_opt[QOS_S_SWE][QOS_P_MAX_VLS]), QOS_P_MAX_VLS, 0, 0, NOFLAG,
	  "switch external ports: data VLs used at most, 1-15; unset: the qos_ value", NULL },
	{ "qos_swe_high_limit", CONFIG_QOS, OFF(qos_opt[QOS_S_SWE][QOS_P_HIGH_LIMIT]), QOS_P_HIGH_LIMIT, 0, 0, NOFLAG,
	  "switch external ports: VLHighLimit 0-255 (x 4 KB of high-priority traffic); unset: the qos_ value", NULL },
	{ "qos_swe_vlarb_high", CONFIG_QOS, OFF(qos_opt[QOS_S_SWE][QOS_P_VLARB_HIGH]), QOS_P_VLARB_HIGH, 0, 0, NOFLAG,
	  "switch external ports: high-priority VL arbitration, VL:weight,... (up to 64); unset: the qos_ value", NULL },
	{ "qos_swe_vlarb_low", CONFIG_QOS, OFF(qos_opt[QOS_S_SWE][QOS_P_VLARB_LOW]), QOS_P_VLARB_LOW, 0, 0, NOFLAG,
	  "switch external ports: low-priority VL arbitration, VL:weight,... (up to 64); unset: the qos_ value", NULL },
	{ "qos_swe_sl2vl", CONFIG_QOS, OFF(qos_opt[QOS_S_SWE][QOS_P_SL2VL]), QOS_P_SL2VL, 0, 0, NOFLAG,
	  "switch external ports: VL of SL 0..15, comma-separated (15 drops the SL); unset: the qos_ value", NULL },
	{ "congestion_control", CONFIG_BOOL, OFF(congestion_control), 0, 1, 0, NOFLAG,
	  "Congestion control (IBA A10): after each heavy sweep, SwitchCongestionSetting to every switch, "
	  "CACongestionSetting and the CongestionControlTable to every CA port, from the cc_ keys", NULL },
	{ "cc_key", CONFIG_U64, OFF(cc_key), 0, 0, 0, NOFLAG,
	  "CC_Key presented in every congestion control MAD", NULL },
	{ "cc_max_outstanding_mads", CONFIG_INT, OFF(cc_max_outstanding_mads), 0, INT_MAX, 0, NOFLAG,
	  "Congestion control MADs in flight at most (0: one at a time)", NULL },
	{ "cc_sw_cong_setting_control_map", CONFIG_U32, OFF(cc_sw_control_map), 0, 0xffffffffLL, 0, NOFLAG,
	  "SwitchCongestionSetting Control_Map: a bit per group of its fields the switch is to take (IBA A10.4.3.6)", NULL },
	{ "cc_sw_cong_setting_victim_mask", CONFIG_MASK256, OFF(cc_sw_victim_mask), 0, 0, 0, NOFLAG,
	  "Switch ports (bit N: port N, 256-bit hex) that mark with FECN whether source or victim of congestion", NULL },
	{ "cc_sw_cong_setting_credit_mask", CONFIG_MASK256, OFF(cc_sw_credit_mask), 0, 0, 0, NOFLAG,
	  "Switch ports (bit N: port N, 256-bit hex) that apply credit starvation", NULL },
	{ "cc_sw_cong_setting_threshold", CONFIG_U8, OFF(cc_sw_threshold), 0, 15, 0, NOFLAG,
	  "How aggressively switches mark packets with FECN (0 none, 1 loose ... 15 aggressive)", NULL },
	{ "cc_sw_cong_setting_packet_size", CONFIG_U8, OFF(cc_sw_packet_size), 0, 255, 0, NOFLAG,
	  "Packets smaller than this many credits are never marked with FECN", NULL },
	{ "cc_sw_cong_setting_credit_starvation_threshold", CONFIG_U8, OFF(cc_sw_cs_threshold), 0, 15, 0, NOFLAG,
	  "How aggressive credit starvation is (0 none, 1 loose ... 15 aggressive)", NULL },
	{ "cc_sw_cong_setting_credit_starvation_return_delay", CONFIG_CCT_ENTRY, OFF(cc_sw_cs_return_delay), 0, 0, 0, NOFLAG,
	  "Credit starvation return delay, SHIFT:MULTIPLIER as a CCT entry (shift 0-3, multiplier 0-16383)", NULL },
	{ "cc_sw_cong_setting_marking_rate", CONFIG_INT, OFF(cc_sw_marking_rate), 0, 65535, 0, NOFLAG,
	  "Mean number of packets between two FECN markings", NULL },
	{ "cc_ca_cong_setting_port_control", CONFIG_INT, OFF(cc_ca_port_control), 0, 65535, 0, NOFLAG,
	  "CACongestionSetting Port_Control: bit 0 clear, congestion control per QP; set, per SL and port", NULL },
	{ "cc_ca_cong_setting_control_map", CONFIG_INT, OFF(cc_ca_control_map), 0, 65535, 0, NOFLAG,
	  "CACongestionSetting Control_Map: a bit per SL whose entry the CA takes", NULL },
	{ "cc_ca_cong_setting_ccti_timer", CONFIG_CA_CONG, OFF(cc_ca_entries), CC_CA_TIMER, 65535, 0, NOFLAG,
	  "'SL VALUE' (the key repeated for each SL, or SL VALUE,SL VALUE...): CCTI_Timer, its expiry "
	  "takes 1 from the CCTI", NULL },
	{ "cc_ca_cong_setting_ccti_increase", CONFIG_CA_CONG, OFF(cc_ca_entries), CC_CA_INCREASE, 255, 0, NOFLAG,
	  "'SL VALUE': CCTI_Increase, added to the CCTI on a BECN", NULL },
	{ "cc_ca_cong_setting_trigger_threshold", CONFIG_CA_CONG, OFF(cc_ca_entries), CC_CA_TRIGGER, 255, 0, NOFLAG,
	  "'SL VALUE': Trigger_Threshold, the CCTI at which the CA logs an event", NULL },
	{ "cc_ca_cong_setting_ccti_min", CONFIG_CA_CONG, OFF(cc_ca_entries), CC_CA_MIN, 255, 0, NOFLAG,
	  "'SL VALUE': CCTI_Min, the lowest CCTI (a floor on the injection rate delay)", NULL },
	{ "cc_cct", CONFIG_CCT, OFF(cc_cct), 0, 0, 0, NOFLAG,
	  "CongestionControlTable of every CA port: SHIFT:MULTIPLIER,... (up to 128 entries; unset: "
	  "one block with CCTI_Limit 0)", NULL },
};

/* the string keys with a grammar of their own */
static const struct {
	const char *key;
	int (*check)(const char *value, GError **err);
} checks[] = {
	{ "part_enforce", check_part_enforce },
	{ "console", check_console },
};

static int check_string(const struct config_key *k, const char *value, GError **err)
{
	for (size_t i = 0; i < G_N_ELEMENTS(checks); i++)
		if (!strcmp(checks[i].key, k->key))
			return checks[i].check(value, err);
	return 0;
}

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

static void *field(struct sm_options *o, const struct config_key *k)
{
	return (char *)o + k->offset;
}

static const void *cfield(const struct sm_options *o, const struct config_key *k)
{
	return (const char *)o + k->offset;
}

int config_parse_number(const char *s, int minus_ok, long long *out_signed, unsigned long long *out)
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

int config_parse_bool(const char *s, int *out)
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

/* CONFIG_CA_CONG: field WHICH of one SL's entry */
static void ca_cong_put(struct cc_ca_entry *e, int which, unsigned v)
{
	switch (which) {
	case CC_CA_TIMER: e->ccti_timer = (uint16_t)v; break;
	case CC_CA_INCREASE: e->ccti_increase = (uint8_t)v; break;
	case CC_CA_TRIGGER: e->trigger_threshold = (uint8_t)v; break;
	default: e->ccti_min = (uint8_t)v; break;
	}
}

static unsigned ca_cong_get(const struct cc_ca_entry *e, int which)
{
	switch (which) {
	case CC_CA_TIMER: return e->ccti_timer;
	case CC_CA_INCREASE: return e->ccti_increase;
	case CC_CA_TRIGGER: return e->trigger_threshold;
	default: return e->ccti_min;
	}
}

/* A 256-bit number in hex, as OpenSM's opts_parse_256bit reads it: 0x optional, 1 to 64 digits,
 * stored big-endian (byte 0 holds bits 255..248, byte 31 bits 7..0: bit N is port N). */
static int parse_mask256(const char *v, uint8_t out[32], GError **err)
{
	const char *p = v;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	size_t n = strlen(p);
	int ok = n >= 1 && n <= 64;
	for (size_t i = 0; ok && i < n; i++)
		ok = g_ascii_isxdigit(p[i]);
	if (!ok) {
		g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_BAD_VALUE,
			    "'%s' is not a 256-bit hex number (1 to 64 hex digits, 0x optional)", v);
		return -1;
	}
	memset(out, 0, 32);
	for (size_t i = 0; i < n; i++) { /* digit i from the right is nibble i */
		unsigned d = (unsigned)g_ascii_xdigit_value(p[n - 1 - i]);
		out[31 - i / 2] |= (uint8_t)(i % 2 ? d << 4 : d);
	}
	return 0;
}

/* SHIFT:MULTIPLIER (a CCT entry: IBA A10.4.3.9) as shift << 14 | multiplier */
static int parse_cct_entry(const char *v, uint16_t *out)
{
	char *s = g_strstrip(g_strdup(v));
	char *colon = strchr(s, ':');
	long long sv;
	unsigned long long shift, mult;
	int rc = -1;
	if (colon) {
		*colon = 0;
		if (config_parse_number(g_strstrip(s), 0, &sv, &shift) == 0 &&
		    config_parse_number(g_strstrip(colon + 1), 0, &sv, &mult) == 0 && shift <= 3 && mult <= 0x3fff) {
			*out = (uint16_t)(shift << 14 | mult);
			rc = 0;
		}
	}
	g_free(s);
	return rc;
}

/* "SL VALUE" (OpenSM's form, the key repeated per SL), or several joined by commas */
static int parse_ca_cong(struct cc_ca_entry *e, int which, long long max, const char *v, GError **err)
{
	char **parts = g_strsplit(v, ",", -1);
	int rc = 0;
	for (char **p = parts; *p && rc == 0; p++) {
		char **w = g_strsplit_set(g_strstrip(*p), " \t", -1);
		const char *words[3] = { NULL, NULL, NULL };
		int nw = 0;
		for (char **q = w; *q; q++)
			if (**q && nw < 3)
				words[nw++] = *q;
		long long sv;
		unsigned long long sl, val;
		if (nw != 2 || config_parse_number(words[0], 0, &sv, &sl) < 0 || sl > 15 ||
		    config_parse_number(words[1], 0, &sv, &val) < 0 || val > (unsigned long long)max) {
			g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_BAD_VALUE,
				    "'%s' is not 'SL VALUE' (SL 0-15, VALUE 0-%lld; several joined by commas)", v, max);
			rc = -1;
		} else {
			ca_cong_put(&e[sl], which, (unsigned)val);
		}
		g_strfreev(w);
	}
	g_strfreev(parts);
	return rc;
}

/* SHIFT:MULTIPLIER,... up to 128 entries (OpenSM's OSM_CCT_ENTRY_MAX) */
static int parse_cct(struct sm_options *o, const char *v, GError **err)
{
	uint16_t t[128] = { 0 };
	char **parts = g_strsplit(v, ",", -1);
	int n = 0, rc = 0;
	for (char **p = parts; *p && rc == 0; p++, n++) {
		if (n == 128) {
			g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_BAD_VALUE, "more than 128 CCT entries");
			rc = -1;
		} else if (parse_cct_entry(*p, &t[n]) < 0) {
			g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_BAD_VALUE, "CCT entry %d '%s' is not "
				    "SHIFT:MULTIPLIER (shift 0-3, multiplier 0-16383)", n, g_strstrip(*p));
			rc = -1;
		}
	}
	g_strfreev(parts);
	if (rc == 0) {
		memcpy(o->cc_cct, t, sizeof(t));
		o->cc_cct_len = n;
	}
	return rc;
}

/* restores K's default (a null value in the file) */
static void set_default(struct sm_options *o, const struct config_key *k)
{
	struct sm_options d;
	options_defaults(&d);
	if (k->type == CONFIG_STRING || k->type == CONFIG_QOS) {
		char **dst = field(o, k);
		g_free(*dst);
		*dst = g_strdup(*(char **)field(&d, k));
	} else if (k->type == CONFIG_CA_CONG) {
		struct cc_ca_entry *e = field(o, k);
		for (int sl = 0; sl < 16; sl++)
			ca_cong_put(&e[sl], (int)k->min, 0);
	} else if (k->type == CONFIG_CCT) {
		memcpy(o->cc_cct, d.cc_cct, sizeof(o->cc_cct));
		o->cc_cct_len = d.cc_cct_len;
	} else {
		size_t sz = k->type == CONFIG_U64 ? 8 : k->type == CONFIG_U32 ? 4 : k->type == CONFIG_U8 ? 1 :
			    k->type == CONFIG_MASK256 ? 32 : k->type == CONFIG_CCT_ENTRY ? 2 : sizeof(int);
		memcpy(field(o, k), field(&d, k), sz);
	}
	if (!strcmp(k->key, "guid"))
		o->guid_given = d.guid_given;
	if (!strcmp(k->key, "cache_dir"))
		o->cache_dir_explicit = d.cache_dir_explicit;
	options_mark_explicit(o, k->key, 0);
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
		if (config_parse_bool(value, &b) < 0) {
			g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_BAD_VALUE,
				    "'%s' is not a boolean (true/false, yes/no)", value);
			return -1;
		}
		*(int *)field(o, k) = (k->flags & CONFIG_F_INVERT) ? !b : b;
		return 0;
	case CONFIG_INT:
	case CONFIG_U8:
		if (config_parse_number(value, k->min < 0, &sv, &uv) < 0 || sv < k->min || sv > k->max) {
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
		if (config_parse_number(value, 0, &sv, &uv) < 0 || uv > 0xffffffffULL) {
			g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_BAD_VALUE,
				    "'%s' is not a 32-bit number (decimal or 0x hex)", value);
			return -1;
		}
		*(uint32_t *)field(o, k) = (uint32_t)uv;
		return 0;
	case CONFIG_U64:
		if (config_parse_number(value, 0, &sv, &uv) < 0) {
			g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_BAD_VALUE,
				    "'%s' is not a 64-bit number (decimal or 0x hex)", value);
			return -1;
		}
		*(uint64_t *)field(o, k) = uv;
		if (!strcmp(k->key, "guid"))
			o->guid_given = uv != 0; /* from a file, 0 means "the first usable port" */
		return 0;
	case CONFIG_MASK256:
		return parse_mask256(value, field(o, k), err);
	case CONFIG_CCT_ENTRY:
		if (parse_cct_entry(value, field(o, k)) < 0) {
			g_set_error(err, CONFIG_ERROR, CONFIG_ERROR_BAD_VALUE,
				    "'%s' is not SHIFT:MULTIPLIER (shift 0-3, multiplier 0-16383)", value);
			return -1;
		}
		return 0;
	case CONFIG_CA_CONG:
		return parse_ca_cong(field(o, k), (int)k->min, k->max, value, err);
	case CONFIG_CCT:
		return parse_cct(o, value, err);
	case CONFIG_QOS:
		if (qos_option_unset((enum qos_param)k->min, value)) {
			set_default(o, k); /* OpenSM's "not set": qos_max_vls 0, qos_high_limit -1 */
			return 0;
		}
		if (qos_option_check((enum qos_param)k->min, value, err) < 0)
			return -1;
		/* fall through */
	case CONFIG_STRING: {
		if (check_string(k, value, err) < 0)
			return -1;
		char **dst = field(o, k);
		g_free(*dst);
		*dst = g_strdup(value);
		options_mark_explicit(o, k->key, 1);
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
	case CONFIG_QOS:
		return g_strdup(*(char *const *)p);
	case CONFIG_MASK256: {
		GString *g = g_string_new("0x");
		for (int i = 0; i < 32; i++)
			g_string_append_printf(g, "%02X", ((const uint8_t *)p)[i]);
		return g_string_free(g, FALSE);
	}
	case CONFIG_CCT_ENTRY: {
		uint16_t e = *(const uint16_t *)p;
		return g_strdup_printf("%u:%u", e >> 14, e & 0x3fff);
	}
	case CONFIG_CA_CONG: { /* every SL whose field is set, else OpenSM's "0 0" */
		const struct cc_ca_entry *e = p;
		GString *g = g_string_new(NULL);
		for (int sl = 0; sl < 16; sl++)
			if (ca_cong_get(&e[sl], (int)k->min))
				g_string_append_printf(g, "%s%d %u", g->len ? "," : "", sl, ca_cong_get(&e[sl], (int)k->min));
		if (!g->len)
			g_string_append(g, "0 0");
		return g_string_free(g, FALSE);
	}
	case CONFIG_CCT: {
		if (!o->cc_cct_len)
			return NULL;
		GString *g = g_string_new(NULL);
		for (int i = 0; i < o->cc_cct_len; i++)
			g_string_append_printf(g, "%s%u:%u", i ? "," : "", o->cc_cct[i] >> 14, o->cc_cct[i] & 0x3fff);
		return g_string_free(g, FALSE);
	}
	}
	return NULL;
}

