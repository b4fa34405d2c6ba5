/* loop.h - the long-running SM: a GMainLoop that owns signals, the sweep timer and the umad
 * source; sweeps, traps, reloads and standby polling are driven from here. */
#ifndef IBSM_LOOP_H
#define IBSM_LOOP_H

#include "sm.h"

/* Runs until SIGTERM/SIGINT. argc/argv are kept to rebuild the options on SIGHUP.
 * Returns the process exit status. */
int loop_run(struct sm *sm, int argc, char **argv);

/* One light sweep: SwitchInfo.PortStateChange of every switch and our port's state.
 * Returns 1 when a heavy sweep is needed. */
int light_sweep(struct sm *sm);

/* While standby: SMInfo of the master; returns 1 when it answered as master. */
int standby_poll_master(struct sm *sm);

#endif
