/* SPDX-License-Identifier: BSD-2-Clause */
/* options.h - every run-time setting of the SM in one struct, filled from defaults, then the
 * configuration file, then the command line (config/build.h). Names follow OpenSM's option
 * names so configuration keys map one to one (config/keys.h). */
#ifndef IBSM_CONFIG_OPTIONS_H
#define IBSM_CONFIG_OPTIONS_H

#include <glib.h>
#include <stdint.h>
#include "base/log.h"
#include "policy/qos_options.h"

#define DEFAULT_SMP_WINDOW 64 /* SMPs in flight (doc/design.md "Transport": <= 128 under ibsim) */

/* A key of the configuration file that is not in the core's table: an engine's own key, or
 * an OpenSM key ibsm does not use. Kept with where it was written, for the error message. */
struct config_extra {
	char *value;               /* NULL: null/~ in the file */
	char *where;               /* "FILE:LINE:COL" */
};

struct sm_options {
	uint64_t guid;              /* -g: port GUID to bind, 0 = first usable */
	int guid_given;             /* -g was on the command line (-g 0 lists and asks) */
	uint8_t lmc;                /* -l 0..7 */
	uint8_t sm_priority;        /* -p 0..15 */
	int ignore_other_sm;        /* -d 0: master whatever other SMs say */
	uint64_t sm_key;            /* -k SM_Key (0: OpenSM's default, 1) */
	uint64_t sa_key;            /* SA requests with another non-zero SM_Key dropped (OpenSM's, 1) */
	int drop_event_subscriptions; /* InformInfo subscriptions of a port that left go with it */
	int consolidate_ipv6_snm_req; /* IPv6 solicited-node groups of a partition share one MLID */
	uint64_t m_key;             /* M_Key secret, 0: protection off (mad/mkey_derive.h) */
	uint8_t m_key_protect;      /* m_key_protection_level: ProtectBits 0-3 */
	int m_key_lease;            /* m_key_lease_period, seconds */
	int m_key_per_port;         /* a key per port derived from m_key (else m_key everywhere) */
	int ucast_cache;            /* -A: keep routes across sweeps when still valid */
	int reassign_lids;          /* -r */
	char *routing_engine;       /* -R "a,b,c" (default "minhop") */
	char *root_guid_file;       /* -a */
	char *cn_guid_file;         /* -u */
	char *io_guid_file;         /* -G */
	char *torus_config;         /* --torus_config */
	char *pgrp_policy_file;     /* routing chains: port groups (policy/port_groups.h) */
	char *topo_policy_file;     /* routing chains: topologies (policy/chain_policy.h) */
	char *rch_policy_file;      /* routing chains: the unicast steps; set = the orchestrator routes */
	int max_reverse_hops;       /* -H */
	char *port_prof_ignore_file;/* -i */
	int connect_roots;          /* -z */
	char *log_file;             /* -f ("-": stderr) */
	int erase_log;              /* -e */
	uint32_t debug_flags;       /* -D/-v/-V: OpenSM's log flags (0x1 error,0x2 info,0x4 verbose,0x8 debug,0x40 routing) */
	uint32_t syslog_flags;      /* syslog_log_level: the log flags also sent to syslog (0: none) */
	char *log_prefix;           /* --log_prefix: syslog identity (NULL: "ibsm") */
	int syslog_state_changes;   /* state changes (log_sys) also to syslog (OpenSM's OSM_LOG_SYS) */
	char *syslog_socket;        /* the syslog datagram socket (NULL: /dev/log) */
	int metrics_port;           /* Prometheus metrics on 127.0.0.1:PORT (0: off; ops/metrics.h) */
	char *activity_report_subjects; /* activity report subjects (base/activity.h; NULL: none) */
	char *console;              /* -q: off|local|loopback|socket (= unix; ops/console.h) */
	int console_port;           /* -C: the loopback console's TCP port (127.0.0.1 only) */
	char *console_socket;       /* the unix socket console's path */
	char *fabric_report_file;   /* the fabric report (ops/report.h) written after each heavy sweep (NULL: none) */
	/* the performance manager: OpenSM's perfmgr_* keys (perfmgr/perfmgr.h) */
	int perfmgr, perfmgr_sweep_time_s, perfmgr_max_outstanding, perfmgr_ignore_cas, perfmgr_rm_nodes;
	int perfmgr_log_errors, perfmgr_query_cpi, perfmgr_xmit_wait_log;
	uint32_t perfmgr_xmit_wait_threshold;
	char *event_db_dump_file;   /* console `perfmgr dump_counters` writes there */
	int log_max_mb;             /* -L/log_max_size: log file emptied past this size (0: no limit) */
	int sweep_interval;         /* -s seconds, 0 = no periodic sweep */
	int force_heavy_sweep;      /* every periodic sweep is heavy */
	int repair_sweep;           /* a link change is repaired, not swept whole (sm/repair.h) */
	int sweep_on_trap;          /* traps 128/144 (and an unhealthy port) start a sweep */
	int babbling_port_policy;   /* a port repeating an error trap 250 times is disabled (sm/traps.c) */
	int exit_on_fatal;          /* exit on a fatal discovery error (duplicate GUID: fabric/discovery.c) */
	int suppress_sl2vl_mad_status_errors; /* a refused SL2VL Set is not an ERR line */
	int sm_inactive;            /* -I: NOTACTIVE, never sweeps */
	int once;                   /* --once */
	/* state kept across a restart or a failover (OpenSM's keys of the same names) */
	int sa_db_dump;              /* the master writes opensm-sa.dump (light sweeps, exit) */
	char *sa_db_file;            /* -S: the SA database loaded on becoming master (NULL: none) */
	int sminfo_polling_timeout;  /* ms between a standby's SMInfo polls of the master */
	int polling_retry_number;    /* polls unanswered in a row before a standby takes over */
	int honor_guid2lid_file;     /* -x: guid2lid read when coming out of standby too */
	int no_clients_rereg;        /* never ClientReregister in PortInfo Sets */
	/* multicast as OpenSM's keys of the same names set it (sa/mcmember.c, sm/mcast_routing.c) */
	int disable_multicast;       /* no MFTs written; ClassPortInfo without IsUDMulticastSupported */
	int ipoib_mcgroup_creation_validation; /* a named MGID is checked when a group is created */
	int mcgroup_join_validation; /* a join's Q_Key, P_Key, TClass, SL, FlowLabel, HopLimit checked */
	char *prefix_routes_file;    /* OpenSM's; NULL: SYSCONFDIR/opensm/prefix-routes.conf if there */
	char *node_name_map_name;    /* ibnetdiscover's node-name-map: names in dumps (fabric/node_names.h) */
	int timeout_ms;             /* -t SMP timeout */
	int retries;                /* --retries */
	int window;                 /* --window: SMPs in flight */
	int mad_cpu;                /* the MAD path's CPU, -1 none (base/mad_cpu.h) */
	int max_wire_smps2;         /* a stalled window may grow to this (> window; mad/transport.h) */
	int max_smps_timeout;       /* ... after this many microseconds without an answer */
	uint8_t max_op_vls;         /* -o? max operational VLs (default 5 = VL0-7? see README) */
	char *plugin_dir;           /* --plugin-dir */
	char *fabric_file;          /* --fabric (offline) */
	char *cache_dir;            /* OSM_CACHE_DIR or default /var/cache/ibsm */
	int cache_dir_explicit;     /* from OSM_CACHE_DIR or --cache-dir (not the default, not the file) */
	char *tmp_dir;              /* OSM_TMP_DIR or default /var/log; NULL: no dumps (offline, not asked) */
	int tmp_dir_asked;          /* from OSM_TMP_DIR or --dump_files_dir (not the file): offline may write */
	int progress;               /* --progress: per-phase progress lines on stderr */
	int dump_routes;            /* write fdbs/lfts dumps (routing log flag, or --dump) */
	uint8_t subnet_timeout;     /* PortInfo.SubnetTimeout */
	uint64_t subnet_prefix;
	uint8_t hoq_life, leaf_hoq_life, vl_stall_count, packet_life;
	/* OpenSM's further PortInfo/SwitchInfo settings (program/portinfo.c, program/mft.c) */
	uint8_t leaf_vl_stall_count, sm_sl, local_phy_errors_threshold, overrun_errors_threshold;
	uint8_t force_link_speed, force_link_speed_ext, force_link_width;
	int use_mfttop;             /* SwitchInfo:MulticastFDBTop where PortInfo:CapabilityMask says so */
	uint8_t fdr10;              /* OpenSM's fdr10: 0 no MlnxExtPortInfo MADs, 1 FDR10 enabled, 2 disabled (program/fdr10.c) */
	int m_key_lookup;           /* OpenSM's guid2mkey and neighbors files used (mad/guid2mkey.h) */
	int lmc_esp0;               /* an enhanced switch port 0 gets the LMC too (fabric/lid.c) */
	uint32_t rtr_pr_flow_label;  /* rtr_pr_*: what PathRecords through a router carry */
	uint8_t rtr_pr_tclass, rtr_pr_sl, rtr_pr_mtu, rtr_pr_rate;
	int daemon;                 /* -B: run in the background (done by main) */
	char *pid_file;             /* --pid_file (default /run/ibsm/ibsm.pid) */
	char *partition_config_file;/* -P partitions.conf (core/pkey.c; missing = default partition) */
	int allow_both_pkeys;       /* -W, OpenSM compatibility only: `both` is always honoured */
	char *part_enforce;         /* -Z both|in|out|off: switch ports facing end ports (options_part_enforce) */
	int no_part_enforce;        /* -N / no_partition_enforcement: off whatever part_enforce says */
	int qos;                    /* -Q: SL2VL/VLArb programmed, the QoS policy enforced */
	char *qos_policy_file;      /* -Y: the QoS policy file (sa/qos_policy) */
	char *enhanced_qos_policy_file; /* NVIDIA's enhanced QoS policy (per-SL rate limits; NULL/"null": off) */
	int enhanced_qos_vport0_unlimit_default_rl; /* virtual port 0: SLs no rule names unlimited */
	int offsweep_balancing_enabled;  /* routes kept from the cache over a changed fabric: routed afresh once quiet */
	int offsweep_balancing_window;   /* ... for that many seconds (sm/offsweep.c) */
	char *qos_opt[QOS_N_SCOPES][QOS_N_PARAMS]; /* qos_[ca_|rtr_|sw0_|swe_]<param>, NULL unset */
	char *config_file;          /* the configuration file read, NULL = none */
	char *create_config;        /* -c FILE: template written there (options_build_err) */
	GHashTable *extra;          /* key -> struct config_extra: file keys outside the table */
	unsigned explicit_keys;     /* OPT_EXPLICIT_*: path keys set by the file or the command line */
	GPtrArray *notes;           /* struct config_note: what the build has to say, logged once the log is open */
	/* OpenSM's congestion control keys (IBA Annex A10; program/cc.h, doc/congestion-control.md) */
	int congestion_control;     /* CC MADs (class 0x21) sent after each heavy sweep's programming */
	uint64_t cc_key;            /* CC_Key presented in every CC MAD */
	int cc_max_outstanding_mads;      /* CC MADs in flight at most */
	uint32_t cc_sw_control_map;       /* SwitchCongestionSetting: Control_Map */
	uint8_t cc_sw_victim_mask[32];    /* ... Victim_Mask, a 256-bit number, byte 0 its top (port 255) */
	uint8_t cc_sw_credit_mask[32];    /* ... Credit_Mask, the same */
	uint8_t cc_sw_threshold;          /* ... Threshold (4 bits) */
	uint8_t cc_sw_packet_size;        /* ... Packet_Size (credits) */
	uint8_t cc_sw_cs_threshold;       /* ... CS_Threshold (4 bits) */
	uint16_t cc_sw_cs_return_delay;   /* ... CS_ReturnDelay as shift << 14 | multiplier */
	int cc_sw_marking_rate;           /* ... Marking_Rate (16 bits) */
	int cc_ca_port_control;           /* CACongestionSetting: Port_Control (16 bits) */
	int cc_ca_control_map;            /* ... Control_Map (16 bits, a bit per SL) */
	struct cc_ca_entry {              /* ... one entry per SL */
		uint16_t ccti_timer;
		uint8_t ccti_increase, trigger_threshold, ccti_min;
	} cc_ca_entries[16];
	uint16_t cc_cct[128];             /* CongestionControlTable entries, shift << 14 | multiplier */
	int cc_cct_len;                   /* entries given (0: the table is one block, CCTI_Limit 0) */
};

/* keys whose defaults fall back to OpenSM's files when ibsm's do not exist (config/locations.c) */
#define OPT_EXPLICIT_PARTITIONS 0x1
#define OPT_EXPLICIT_QOS_POLICY 0x2
#define OPT_EXPLICIT_TORUS      0x4

struct config_note {
	int level;                  /* IBSM_LOG_ERROR, IBSM_LOG_WARN, IBSM_LOG_INFO (base/log.h) */
	char *code;
	char *text;
};

/* $IBSM_SYSCONFDIR when set (a test root, a container), else the build's SYSCONFDIR (/etc):
 * the defaults SYSCONFDIR/ibsm/... and OpenSM's SYSCONFDIR/opensm/... (config/locations.h) */
const char *config_sysconfdir(void);
void options_defaults(struct sm_options *o);
void options_free(struct sm_options *o);
/* Records file key `key` outside the table (value may be NULL) with its place. */
void options_set_extra(struct sm_options *o, const char *key, const char *value, const char *where);
/* Marks (on) or clears the OPT_EXPLICIT_* bit of KEY, if it has one. */
void options_mark_explicit(struct sm_options *o, const char *key, int on);
/* Adds a note to be logged once the log is open. */
void options_note(struct sm_options *o, int level, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The log's flags, size limit and syslog from o (base/log.h). */
void options_apply_log(const struct sm_options *o);
/* part_enforce: "both" 3, "in" 1, "out" 2, "off" 0, else -1 */
int part_enforce_parse(const char *v);
/* the enforcement in force: PART_ENFORCE_IN | PART_ENFORCE_OUT, or 0 */
int options_part_enforce(const struct sm_options *o);
#define PART_ENFORCE_IN  0x1
#define PART_ENFORCE_OUT 0x2

#define IBSM_DEBUG_ROUTING 0x40

#endif
