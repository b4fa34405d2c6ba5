/* cli.h - command-line parsing into struct sm_options (OpenSM's flags plus ibsm's). */
#ifndef IBSM_CLI_H
#define IBSM_CLI_H

#include <ibsm/routing.h>
#include "options.h"

/* Applies argv over *o (only the options given). Prints the problem and returns -1 on a bad
 * command line. *show_version is set when --version was given. argv is not modified. */
int cli_parse(int argc, char **argv, struct sm_options *o, int *show_version);

#endif
