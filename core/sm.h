/* sm.h - the SM's run-time state shared by the bring-up phases (discovery, SMInfo, LIDs,
 * routing, programming): one struct, owned by main, passed to each phase. */
#ifndef IBSM_SM_H
#define IBSM_SM_H

#include <stdint.h>
#include "model.h"
#include "options.h"
#include "transport.h"

struct ucast_cache;
struct part_policy;

enum sm_state { SM_NOTACTIVE = 0, SM_DISCOVERING = 1, SM_STANDBY = 2, SM_MASTER = 3 };

struct phase_stat {
	const char *name;
	uint64_t smps;
	double seconds;
};

#define SM_MAX_PHASES 12

struct sm {
	struct sm_options *opt;
	struct transport *t;
	struct umad_dev *dev;
	uint64_t port_guid;          /* our port */
	uint8_t my_port_num;
	enum sm_state state;
	uint32_t act_count;
	uint32_t generation;
	int first_master_sweep;
	uint64_t master_guid;        /* when standby: the master we saw */
	struct fabric *fabric;       /* last complete generation */
	uint32_t smp_failures;       /* SMPs that failed for good in this sweep */
	struct ucast_cache *ucast;   /* -A: the last routes, kept by switch GUID */
	char *ucast_engine;          /* the -R they were computed with */
	uint64_t topology_sig;       /* of the last discovered generation */
	int topology_changed;        /* this sweep's cabling differs from the last one */
	uint32_t sweep_writes;       /* Sets (PortInfo, SwitchInfo, LFT blocks) this sweep sent */
	volatile int stop;
	int trap_pending;             /* a trap asked for a heavy sweep */
	struct phase_stat phases[SM_MAX_PHASES];
	int n_phases;
	double t_start;
	/* held LFT state, per switch GUID, to diff against (NULL rows: unknown / empty) */
	GHashTable *held_lft;        /* uint64 node guid -> struct held_lft * */
	uint32_t summary_nodes, summary_switches, summary_max_lid;
	/* partitions (core/pkey.c): the policy in force (NULL until first loaded) and the P_Key
	 * blocks whose read-back differed from what was written ("guid/port/block" -> memo) */
	struct part_policy *part_policy;
	GHashTable *pkey_memo;
	char summary_engine[64];
};

/* Discovery: a work queue of DR SMPs over the whole fabric; returns a new generation. */
struct fabric *discover_fabric(struct sm *sm, GError **err);
/* SMInfo: query every other IsSM port; returns 1 if we must stay standby. */
int sminfo_poll_others(struct sm *sm);
/* Handles an unsolicited MAD (SMInfo Get/Set, traps). */
void sm_unsolicited(struct transport *t, void *umad, int len, void *ctx);
/* Programming: the bring-up order of DESIGN.md. lft: final tables. Returns 0 if all done. */
int program_fabric(struct sm *sm, struct fabric *f, const uint8_t *lft, uint32_t stride);
/* Phase accounting for --progress and STATS lines. */
void sm_phase_begin(struct sm *sm, const char *name);
void sm_phase_end(struct sm *sm, const char *detail_fmt, ...) __attribute__((format(printf, 2, 3)));
double sm_now(void);
void sminfo_trap_counts(uint64_t *received, uint64_t *represses);

#endif
