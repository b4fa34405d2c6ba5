/* SPDX-License-Identifier: BSD-2-Clause */
/* config_file.h - the configuration file reader (YAML or OpenSM's opensm.conf). */
#ifndef IBSM_CONFIG_CONFIG_FILE_H
#define IBSM_CONFIG_CONFIG_FILE_H

#include <glib.h>
#include "config/options.h"

/* Applies PATH (YAML mapping of key: scalar, or OpenSM's "key value" opensm.conf) over *o.
 * Errors name PATH:LINE:COLUMN (1-based). Keys outside the core's table go to o->extra with
 * their place, for config/build.c to accept (an engine declares them, or OpenSM has them) or
 * refuse. */
int config_load(const char *path, struct sm_options *o, GError **err);

/* Reads PATH the same way (core keys' values checked, errors at PATH:LINE:COLUMN) into a table
 * of what it sets: key -> struct config_extra (value as a file spells it, NULL for null; where
 * it was written). For a routing chain step's own file, whose keys override the main ones.
 * NULL with *err. */
GHashTable *config_load_pairs(const char *path, GError **err);

#endif
