/* SPDX-License-Identifier: BSD-2-Clause */
/* perfmgr.h - the performance manager (OpenSM's perfmgr_* keys): sweeps PortCounters (and
 * PortCountersExtended where the port's ClassPortInfo says it has them) of every port over
 * PerfMgt GMPs (IBA 16.1), keeps running totals from deltas (the 32/16/8-bit counters saturate,
 * IBA 16.1.3.5: a counter past half its range is cleared with a PortCounters Set so it never
 * sticks), logs error counters that moved with the node description and port. Driven from the
 * event loop (perfmgr_tick), its answers come through the MAD dispatch; it never blocks. */
#ifndef IBSM_PERFMGR_PERFMGR_H
#define IBSM_PERFMGR_PERFMGR_H

#include <glib.h>
#include <stdint.h>
#include "fabric/model.h"
#include "mad/dispatch.h"

/* The counters kept per port, in this order (PortCounters, then PortCountersExtended). */
enum perfmgr_counter {
	PM_SYMBOL_ERR,            /* SymbolErrorCounter (16 bits) */
	PM_LINK_ERR_RECOVER,      /* LinkErrorRecoveryCounter (8) */
	PM_LINK_DOWNED,           /* LinkDownedCounter (8) */
	PM_RCV_ERR,               /* PortRcvErrors (16) */
	PM_RCV_RMT_PHYS_ERR,      /* PortRcvRemotePhysicalErrors (16) */
	PM_RCV_SWITCH_RELAY_ERR,  /* PortRcvSwitchRelayErrors (16) */
	PM_XMIT_DISCARDS,         /* PortXmitDiscards (16) */
	PM_XMIT_CONSTRAINT_ERR,   /* PortXmitConstraintErrors (8) */
	PM_RCV_CONSTRAINT_ERR,    /* PortRcvConstraintErrors (8) */
	PM_LINK_INTEGRITY_ERR,    /* LocalLinkIntegrityErrors (4) */
	PM_BUFFER_OVERRUN_ERR,    /* ExcessiveBufferOverrunErrors (4) */
	PM_VL15_DROPPED,          /* VL15Dropped (16) */
	PM_XMIT_WAIT,             /* PortXmitWait (32) */
	PM_XMIT_DATA,             /* PortXmitData, in 4-byte words (32, or 64 extended) */
	PM_RCV_DATA,              /* PortRcvData (32 / 64) */
	PM_XMIT_PKTS,             /* PortXmitPkts (32 / 64) */
	PM_RCV_PKTS,              /* PortRcvPkts (32 / 64) */
	PM_UNICAST_XMIT_PKTS,     /* extended only (64) */
	PM_UNICAST_RCV_PKTS,
	PM_MULTICAST_XMIT_PKTS,
	PM_MULTICAST_RCV_PKTS,
	PM_N_COUNTERS
};
#define PM_N_ERROR_COUNTERS (PM_VL15_DROPPED + 1) /* PM_SYMBOL_ERR .. PM_VL15_DROPPED */

/* IBA's attribute name ("SymbolErrorCounter") and a short snake_case one for metrics and JSON
 * ("symbol_err"). */
const char *perfmgr_counter_name(int c);
const char *perfmgr_counter_key(int c);
int perfmgr_counter_is_error(int c);

/* The settings: OpenSM 3.3.23's perfmgr keys (perfmgr_redir and event_plugin_name have no
 * effect). */
struct perfmgr_cfg {
	int enabled;              /* perfmgr */
	int sweep_time_s;         /* perfmgr_sweep_time_s (>= 1) */
	int max_outstanding;      /* perfmgr_max_outstanding_queries (>= 1) */
	int ignore_cas;           /* perfmgr_ignore_cas: switch ports only */
	int rm_nodes;             /* perfmgr_rm_nodes: forget nodes gone from the fabric */
	int log_errors;           /* perfmgr_log_errors */
	int query_cpi;            /* perfmgr_query_cpi: ClassPortInfo first (extended counters) */
	int xmit_wait_log;        /* perfmgr_xmit_wait_log */
	uint32_t xmit_wait_threshold; /* perfmgr_xmit_wait_threshold: PortXmitWait delta logged */
	int timeout_ms;           /* per query attempt */
	int retries;              /* extra attempts */
};
void perfmgr_cfg_defaults(struct perfmgr_cfg *c);

/* What the perfmgr sends through: one GMP of class 0x04 to dlid, QP1 (the whole MAD, len bytes,
 * its TID set by the perfmgr). Returns 0 or -errno. perfmgr_new_dispatch() sends through the
 * transport; a unit test gives its own. */
typedef int (*perfmgr_send_fn)(void *ctx, uint16_t dlid, const uint8_t *mad, size_t len);

struct perfmgr;
struct perfmgr *perfmgr_new(const struct perfmgr_cfg *c, perfmgr_send_fn send, void *send_ctx);
/* The real fabric: GMPs through d's transport, answers (class 0x04 GetResp) from d. */
struct perfmgr *perfmgr_new_dispatch(const struct perfmgr_cfg *c, struct dispatch *d);
void perfmgr_free(struct perfmgr *pm);
/* perfmgr_io.c's: perfmgr_free() then unregisters the answers from d and frees send_ctx. */
void perfmgr_own(struct perfmgr *pm, struct dispatch *d, void (*free_send_ctx)(void *ctx));
/* New settings (a reload, the console); a disabled perfmgr stops sending at once. */
void perfmgr_set_cfg(struct perfmgr *pm, const struct perfmgr_cfg *c);
const struct perfmgr_cfg *perfmgr_cfg(const struct perfmgr *pm);
void perfmgr_enable(struct perfmgr *pm, int on);
/* The generation whose ports are swept from the next sweep on (read at once, no reference
 * kept; NULL: none). Linked ports with a LID are swept (a switch's at its port 0 LID); ports of
 * nodes no longer in it, and ports no longer linked, are forgotten when perfmgr_rm_nodes is set. */
void perfmgr_set_fabric(struct perfmgr *pm, struct fabric *f);
/* From the event loop, every pass: starts a sweep when due, sends what the window allows,
 * times queries out. Never blocks. now_us: g_get_monotonic_time(). */
void perfmgr_tick(struct perfmgr *pm, int64_t now_us);
/* A sweep now (the console), whatever the timer says. */
void perfmgr_sweep_now(struct perfmgr *pm);
/* A received PerfMgt MAD (the whole MAD, len bytes): an answer to one of ours is used. */
void perfmgr_on_mad(struct perfmgr *pm, const uint8_t *mad, size_t len);
/* Forgets every running total (console clear_counters); the next sweep starts from zero. */
void perfmgr_clear_counters(struct perfmgr *pm);

struct perfmgr_status {
	int enabled, sweeping;
	uint64_t sweeps;          /* completed */
	uint64_t queries_sent, answers, timeouts, errors, resets;
	uint32_t outstanding, ports;
	double last_sweep_s;      /* duration of the last completed sweep */
	int64_t last_sweep_end_us;/* monotonic, 0: none */
};
void perfmgr_status(const struct perfmgr *pm, struct perfmgr_status *st);

/* One port as others see it (H3's metrics, H4's report, the console). */
struct perfmgr_port_view {
	uint64_t node_guid;
	const char *desc;         /* NodeDescription */
	uint8_t port;
	uint16_t lid;             /* the LID queried (a switch's port 0 LID) */
	int is_switch;
	int valid;                /* answered at least once */
	int extended;             /* 64-bit data counters (PortCountersExtended) */
	uint64_t total[PM_N_COUNTERS];   /* running totals since start or clear_counters */
	uint64_t last[PM_N_COUNTERS];    /* the value last read from the port */
	uint64_t delta[PM_N_COUNTERS];   /* the increase seen by the last sweep */
	int64_t last_read_us;     /* monotonic time of the last answer */
};
/* Ports answered at least once, in node GUID, port order (pm NULL: none). */
void perfmgr_foreach_port(const struct perfmgr *pm, void (*cb)(const struct perfmgr_port_view *v,
							    void *data), void *data);
/* Prometheus text lines (# HELP/# TYPE and samples) for every counter of every answered port:
 * ibsm_perfmgr_<key>_total{node_guid="0x..",node_desc="..",port="N"} and the perfmgr's own
 * ibsm_perfmgr_sweeps_total, ibsm_perfmgr_queries_total{result=...} (pm NULL: nothing). */
void perfmgr_prometheus(const struct perfmgr *pm, GString *out);

#endif
