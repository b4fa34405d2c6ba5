/* SPDX-License-Identifier: BSD-2-Clause */
/* build.h - building the run-time configuration (struct sm_options) from defaults, the
 * configuration file and the command line, at start and again on SIGHUP. */
#ifndef IBSM_CONFIG_BUILD_H
#define IBSM_CONFIG_BUILD_H

#include <glib.h>
#include "config/options.h"

/* The keys the engines found declare (struct config_declared *, config/template.h), for the
 * options being built (their plugin_dir); NULL when no engine declares any. The caller frees. */
typedef GPtrArray *(*config_declared_fn)(const struct sm_options *o, void *ctx);

/* Defaults, then the configuration file (-F, else ibsm.yaml, else OpenSM's opensm.conf), then
 * the command line (a flag beats the file). Every key outside the core's table is declared by
 * an engine (`declared`, may be NULL), or is one of OpenSM's without effect, or unknown: each
 * of the last two gets a note (config/opensm_keys.h) in o->notes, as do the files chosen (the
 * caller logs them with options_log_notes once its log is open). On error returns -1 with
 * *err set ("FILE:LINE:COL: ...") and logs it (CFG-0001 file, CFG-0002 command line), *o
 * holding the defaults. With -c FILE it writes the template (engine keys included) and returns
 * 0 with o->create_config set; the caller exits. */
int options_build_err(int argc, char **argv, struct sm_options *o, int *show_version,
		      config_declared_fn declared, void *declared_ctx, GError **err);
/* The same, printing the problem; with -c FILE it writes the template and exits 0. */
int options_build(int argc, char **argv, struct sm_options *o, int *show_version,
		  config_declared_fn declared, void *declared_ctx);

/* Logs o's notes (the files used, the keys without effect), or with PROBLEMS_ONLY its warnings
 * and errors only, and forgets them. */
void options_log_notes(struct sm_options *o, int problems_only);

#endif
