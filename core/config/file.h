/* SPDX-License-Identifier: BSD-2-Clause */
/* file.h - the configuration file reader (YAML or OpenSM's opensm.conf). */
#ifndef IBSM_CONFIG_FILE_H
#define IBSM_CONFIG_FILE_H

#include <glib.h>
#include "config/options.h"

/* Applies PATH (YAML mapping of key: scalar, or OpenSM's "key value" opensm.conf) over *o.
 * Errors name PATH:LINE:COLUMN (1-based). Keys outside the core's table go to o->extra with
 * their place, for config/build.c to accept (an engine declares them, or OpenSM has them) or
 * refuse. */
int config_load(const char *path, struct sm_options *o, GError **err);

#endif
