/* SPDX-License-Identifier: BSD-2-Clause */
/* sm.h - the SM's run-time state, owned by main and shared by the SM's life (sweeps, the event
 * loop, SMInfo, traps, light sweeps). Lower layers never see it: each is handed what it needs. */
#ifndef IBSM_SM_SM_H
#define IBSM_SM_SM_H

#include <stdint.h>
#include "config/options.h"
#include "fabric/model.h"
#include "fabric/node_names.h"
#include "mad/device.h"
#include "mad/dispatch.h"
#include "mad/guid2mkey.h"
#include "mad/ib.h"
#include "mad/phase.h"
#include "mad/transport.h"
#include "policy/partitions.h"
#include "policy/qos_policy.h"
#include "program/program.h"
#include "routing/fallback_list.h"
#include "routing/result.h"
#include "routing/ucast_cache.h"
#include "sa/agent.h"
#include "sa/prefix_routes.h"

/* OpenSM's default SM_Key: SMs that share it recognise each other's SMInfo. */
#define SM_KEY_DEFAULT 0x0000000000000001ULL

struct eqos_policy;
struct vqos_memory;

struct trap_lid {
	uint16_t lid;
	uint32_t seq;
};

struct sm {
	struct sm_options *opt;
	struct transport *t;           /* NULL offline */
	struct smdev *dev;
	struct dispatch *dispatch;     /* SMInfo, trap and SA agents */
	struct sa *sa;                 /* the SA agent (NULL offline) */
	struct perfmgr *perfmgr;       /* the performance manager (perfmgr/perfmgr.h; ops/perfmgr_run.c
				        * drives it; NULL offline) */
	/* what the SA answers from: changed where the SM's state changes, then handed over whole
	 * (sa_publish(sm->sa, &sm->sa_in)) */
	struct sa_inputs sa_in;
	struct mcast_mgr *mcast;       /* multicast trees and MFTs (sm/mcast_routing.h; NULL offline) */
	struct phase_log phases;       /* of the sweep in progress */
	struct fallback_list *chain;   /* engines set up for the configuration in force */
	struct programmer *prog;       /* what the fabric holds, across sweeps */
	struct part_policy *part_policy; /* partitions in force (NULL until loaded) */
	struct qos_policy *qos_policy;   /* QoS policy in force (-Q; NULL: none) */
	struct eqos_policy *eqos_policy; /* enhanced QoS policy in force (-Q; NULL: none; sm/policies.c) */
	struct vqos_memory *vqos;        /* what QoSConfigSL Sets left on the ports (sm/enhanced_qos.c) */
	struct guid2mkey *g2m;           /* OpenSM's guid2mkey (mad/guid2mkey.h), online only */
	double offsweep_at;              /* off-sweep balancing due then (phase_now()), 0: none (sm/offsweep.c) */
	uint64_t port_guid;            /* our port */
	enum ib_sm_state state;
	uint32_t act_count;
	uint32_t generation;
	int first_master_sweep;
	int out_of_standby;            /* was STANDBY: no LIDs assigned as master since (guid2lid) */
	int inactive_said;             /* the NOTACTIVE line (sm_inactive) was logged */
	uint64_t master_guid;          /* when standby: the master we saw */
	/* handover (sm/sminfo.c): the better standby we sent HANDOVER to and whether it has
	 * acknowledged; the master that handed over to us (its MASTER answer is ignored by the
	 * sweep that takes over); a takeover or a re-poll the event loop is to start */
	uint64_t handover_to;
	int handover_acked;
	uint64_t handed_over_by;
	volatile int takeover_pending;
	int sminfo_recheck;
	uint64_t handover_refused_by;  /* not handed to again before handover_retry_at */
	double handover_retry_at;
	struct fabric *fabric;         /* last discovered generation (a reference) */
	struct routing_result *live;   /* routes in force, with their generation (a reference) */
	GThread *dump_thread;          /* writing the last generation's dump files */
	gint dump_done;                /* set by dump_thread as its last act */
	struct ucast_cache *ucast;     /* -A: the last routes, kept by switch GUID */
	char *ucast_engine;            /* the -R they were computed with */
	uint64_t topology_sig;         /* of the last discovered generation */
	int topology_changed;          /* this sweep's cabling differs from the last one */
	int subnet_up;                 /* the last sweep as master completed (SUBNET UP logged) */
	int in_repair;                 /* sweep_repair is running (sm/sweep.c) */
	int repair_cancelled;          /* a repair's routing was cancelled by a newer trap: the
	                                * next trap may repair again on its generation */
	uint32_t sweep_writes;         /* Sets this sweep sent */
	uint32_t sweep_failures;       /* SMPs this sweep lost for good + linked ports not ACTIVE */
	volatile int stop;             /* SIGTERM/SIGINT */
	int fatal;                     /* a fatal discovery error under exit_on_fatal: exit 1 */
	volatile int trap_pending;     /* a trap asked for a heavy sweep */
	/* traps 128 since the last sweep (sm/repair.h): their issuer LIDs and arrival numbers; a
	 * repair reads their switches instead of a whole discovery, unless trap_full says another
	 * trap (144, 129-131) wants a heavy sweep */
	GArray *trap_lids;             /* struct trap_lid */
	uint32_t trap_seq;             /* traps 128 received so far */
	int trap_full;
	int reread_desc;               /* trap 144: read every NodeDescription again */
	uint32_t summary_nodes, summary_switches, summary_max_lid;
	char summary_engine[64];
	double t_start;
};

/* The key settings of the configuration in force, at start and after each SIGHUP that took a
 * new configuration: the M_Key ones handed to the transport, the SM_Key (and what PathRecords
 * carry) to the SA in a new snapshot. */
static inline void sm_apply_mkey(struct sm *sm)
{
	/* the SA shows keys in its records to a requester presenting our SM_Key (1: OpenSM's);
	 * its PathRecords carry the subnet prefix and PacketLifeTime */
	sm->sa_in.sm_key = sm->opt->sm_key ? sm->opt->sm_key : SM_KEY_DEFAULT;
	sm->sa_in.qos_on = sm->opt->qos;
	sm->sa_in.sa_key = sm->opt->sa_key;
	sm->sa_in.drop_event_subs = sm->opt->drop_event_subscriptions;
	sm->sa_in.consolidate_snm = sm->opt->consolidate_ipv6_snm_req;
	sm->sa_in.subnet_prefix = sm->opt->subnet_prefix;
	sm->sa_in.packet_life = sm->opt->packet_life;
	sm->sa_in.rtr_flow_label = sm->opt->rtr_pr_flow_label;
	sm->sa_in.rtr_tclass = sm->opt->rtr_pr_tclass;
	sm->sa_in.rtr_sl = sm->opt->rtr_pr_sl;
	sm->sa_in.rtr_mtu = sm->opt->rtr_pr_mtu;
	sm->sa_in.rtr_rate = sm->opt->rtr_pr_rate;
	{
		char *dflt = g_build_filename(config_sysconfdir(), "opensm", "prefix-routes.conf", NULL);
		const char *p = sm->opt->prefix_routes_file;
		sa_inputs_set_prefix_routes(&sm->sa_in, prefix_routes_load(p ? p : dflt, p != NULL));
		g_free(dflt);
	}
	node_names_load(sm->opt->node_name_map_name);
	sm->sa_in.mc_disabled = sm->opt->disable_multicast;
	sm->sa_in.mfttop = sm->opt->use_mfttop;
	sm->sa_in.mc_create_check = sm->opt->ipoib_mcgroup_creation_validation;
	sm->sa_in.mc_join_check = sm->opt->mcgroup_join_validation;
	sa_publish(sm->sa, &sm->sa_in);
	if (sm->t && !sm->g2m && sm->opt->cache_dir) { /* read once, at start (as OpenSM) */
		char *path = g_build_filename(sm->opt->cache_dir, GUID2MKEY_FILE, NULL);
		sm->g2m = guid2mkey_load(path);
		g_free(path);
	}
	struct mkey_cfg c = { .secret = sm->opt->m_key, .protect = sm->opt->m_key_protect,
			      .lease_s = (uint16_t)sm->opt->m_key_lease, .per_port = sm->opt->m_key_per_port,
			      .lookup = sm->opt->m_key_lookup ? sm->g2m : NULL };
	if (sm->t)
		transport_set_mkey(sm->t, &c);
}

#endif
