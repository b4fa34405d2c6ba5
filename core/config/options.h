/* SPDX-License-Identifier: BSD-2-Clause */
/* options.h - every run-time setting of the SM in one struct, filled from defaults, then the
 * configuration file, then the command line (config/build.h). Names follow OpenSM's option
 * names so configuration keys map one to one (config/keys.h). */
#ifndef IBSM_CONFIG_OPTIONS_H
#define IBSM_CONFIG_OPTIONS_H

#include <glib.h>
#include <stdint.h>
#include "ibsm_paths.h"
#include "policy/qos_options.h"

#define IBSM_DEFAULT_CONFIG IBSM_SYSCONFDIR "/ibsm/ibsm.yaml"

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
	uint64_t sm_key;            /* -k SM_Key (0: OpenSM's default, 1) */
	uint64_t m_key;             /* M_Key secret, 0: protection off (mad/mkey.h) */
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
	int verbosity;              /* -V/-v/-D: IBSM_LOG_* */
	uint32_t debug_flags;       /* -D bit mask (0x1 error,0x2 info,0x4 verbose,0x8 debug,0x40 routing) */
	int sweep_interval;         /* -s seconds, 0 = no periodic sweep */
	int once;                   /* --once */
	int timeout_ms;             /* -t SMP timeout */
	int retries;                /* --retries */
	int window;                 /* --window: SMPs in flight */
	uint8_t max_op_vls;         /* -o? max operational VLs (default 5 = VL0-7? see README) */
	char *plugin_dir;           /* --plugin-dir */
	char *fabric_file;          /* --fabric (offline) */
	char *cache_dir;            /* OSM_CACHE_DIR or default /var/cache/ibsm */
	int cache_dir_explicit;     /* from OSM_CACHE_DIR or --cache-dir, not the default */
	char *tmp_dir;              /* OSM_TMP_DIR or default /var/log */
	int progress;               /* --progress: per-phase progress lines on stderr */
	int dump_routes;            /* write fdbs/lfts dumps (routing log flag, or --dump) */
	uint8_t subnet_timeout;     /* PortInfo.SubnetTimeout */
	uint64_t subnet_prefix;
	uint8_t hoq_life, leaf_hoq_life, vl_stall_count, packet_life;
	int daemon;                 /* -B: run in the background (done by main) */
	char *pid_file;             /* --pid_file (default /run/ibsm/ibsm.pid) */
	char *partition_config_file;/* -P partitions.conf (core/pkey.c; missing = default partition) */
	int allow_both_pkeys;       /* -W, OpenSM compatibility only: `both` is always honoured */
	int qos;                    /* -Q: SL2VL/VLArb programmed, the QoS policy enforced */
	char *qos_policy_file;      /* -Y: the QoS policy file (sa/qos_policy) */
	char *qos_opt[QOS_N_SCOPES][QOS_N_PARAMS]; /* qos_[ca_|rtr_|sw0_|swe_]<param>, NULL unset */
	char *config_file;          /* the configuration file read, NULL = none */
	char *create_config;        /* -c FILE: template written there (options_build_err) */
	GHashTable *extra;          /* key -> struct config_extra: file keys outside the table */
};

void options_defaults(struct sm_options *o);
void options_free(struct sm_options *o);
/* Records file key `key` outside the table (value may be NULL) with its place. */
void options_set_extra(struct sm_options *o, const char *key, const char *value, const char *where);

#define IBSM_DEBUG_ROUTING 0x40

#endif
