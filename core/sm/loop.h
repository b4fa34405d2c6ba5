/* SPDX-License-Identifier: BSD-2-Clause */
/* loop.h - the long-running SM: a GMainLoop that owns signals, the sweep timer and the umad
 * source; sweeps, traps, reloads and standby polling are driven from here. */
#ifndef IBSM_SM_LOOP_H
#define IBSM_SM_LOOP_H

#include <glib.h>
#include "sm/sm.h"

/* Runs until SIGTERM/SIGINT. argc/argv are kept to rebuild the options on SIGHUP.
 * Returns the process exit status. */
int loop_run(struct sm *sm, int argc, char **argv);

/* config_declared_fn for options_build(): the keys of the engines on o's search path. */
GPtrArray *loop_declared_keys(const struct sm_options *o, void *ctx);

#endif
