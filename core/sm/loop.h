/* SPDX-License-Identifier: BSD-2-Clause */
/* loop.h - the long-running SM: a GMainLoop that owns signals, the sweep timer and the umad
 * source; sweeps, traps, reloads and standby polling are driven from here. */
#ifndef IBSM_SM_LOOP_H
#define IBSM_SM_LOOP_H

#include <glib.h>
#include <stdint.h>
#include "sm/sm.h"

/* Runs until SIGTERM/SIGINT. argc/argv are kept to rebuild the options on SIGHUP.
 * Returns the process exit status. */
int loop_run(struct sm *sm, int argc, char **argv);

/* The tick hook (for what lives above the SM: the console, the metrics server, the perfmgr's
 * pacing). fn(sm, data) is called on the main thread once every event-loop pass (<= ~100 ms
 * apart) and from the transport's tick during long drains (every ~50 ms, also mid-sweep).
 * Under umad2sim poll() sees only the umad fd, so a socket must be non-blocking and serviced
 * from here. fn must not block and must do bounded work; it must not start a sweep itself
 * (ask with loop_request()). Never called re-entrantly. Hooks may be added before loop_run()
 * and stay until removed (process-wide: one SM per process). */
typedef void (*loop_tick_fn)(struct sm *sm, void *data);
void loop_tick_add(struct sm *sm, loop_tick_fn fn, void *data);
void loop_tick_remove(loop_tick_fn fn, void *data);
/* Calls every hook once (loop_run does; tests may too). */
void loop_tick_run(struct sm *sm);

/* Asks the running loop for work, as a trap or the sweep timer would: done at its next pass. */
enum loop_req {
	LOOP_REQ_HEAVY,        /* a heavy sweep */
	LOOP_REQ_LIGHT,        /* a light sweep (master only) */
	LOOP_REQ_REROUTE,      /* a heavy sweep that routes anew (the -A cache dropped first) */
	LOOP_REQ_UPDATE_DESC,  /* a heavy sweep that reads every NodeDescription again */
};
void loop_request(struct sm *sm, enum loop_req what);
/* Sweeping on or off (OpenSM's console `sweep on|off`): off, the periodic sweeps, the sweeps
 * traps ask for and the retries of incomplete sweeps are not run; requests (loop_request) and
 * a standby's takeover still are. Returns the previous setting. */
int loop_set_sweeping(struct sm *sm, int on);
int loop_sweeping(const struct sm *sm);

/* What the loop has done, for the console and the metrics (read on the main thread). */
struct loop_counts {
	uint64_t heavy, light;            /* sweeps run (heavy: repairs included) */
	uint64_t heavy_by_result[4];      /* SWEEP_UP, _STANDBY, _INCOMPLETE, _INACTIVE */
	uint64_t heavy_failed;            /* sweep_heavy() < 0 */
	uint64_t light_changes;           /* light sweeps that asked for a heavy one */
	uint64_t repairs;                 /* sweeps that repaired the last generation (sm/repair.h) */
	uint64_t repairs_declined;        /* repairs tried that left it to a heavy sweep */
	int last_result;                  /* SWEEP_* of the last heavy sweep, -1 failed, -2 none */
	double last_heavy_at;             /* phase_now() when it ended (0: none) */
	double last_heavy_seconds;        /* how long it took */
	double last_light_at;
};
const struct loop_counts *loop_counts(void);
/* 1 while a sweep runs (a tick hook called from a drain mid-sweep sees 1). */
int loop_in_sweep(void);

/* config_declared_fn for options_build(): the keys of the engines on o's search path. */
GPtrArray *loop_declared_keys(const struct sm_options *o, void *ctx);

#endif
