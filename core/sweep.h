/* sweep.h - heavy sweep (discover -> program -> SUBNET UP) and its offline twin. */
#ifndef IBSM_SWEEP_H
#define IBSM_SWEEP_H

#include <glib.h>
#include "sm.h"

enum { SWEEP_UP = 0, SWEEP_STANDBY = 1, SWEEP_INCOMPLETE = 2 };

/* Returns SWEEP_* or -1 with *err. */
int sweep_heavy(struct sm *sm, GError **err);
int sweep_offline(struct sm *sm, GError **err);
void sm_log_stats(struct sm *sm);

#endif
