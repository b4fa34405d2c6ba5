/* SPDX-License-Identifier: BSD-2-Clause */
/* cli.h - command-line parsing into struct sm_options (OpenSM's flags plus ibsm's), driven by the
 * option table of config.h so a flag and its configuration key always agree. */
#ifndef IBSM_CONFIG_CLI_H
#define IBSM_CONFIG_CLI_H

#include <glib.h>
#include <ibsm/routing.h>
#include "config/options.h"

/* what the command line says beyond settings */
struct cli_extra {
	int show_version;    /* --version */
	char *config_file;   /* -F/--config FILE (NULL: not given) */
	char *create_config; /* -c/--create-config FILE */
};
void cli_extra_clear(struct cli_extra *x);

/* Applies argv over *o (only the options given). Returns -1 with *err set on a bad command
 * line. argv is not modified (parsed from a copy), so it can be parsed again on SIGHUP. */
int cli_parse(int argc, char **argv, struct sm_options *o, struct cli_extra *x, GError **err);

#endif
