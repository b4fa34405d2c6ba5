/* SPDX-License-Identifier: BSD-2-Clause */
/* services.h - the struct ibsm_core lent to one chain step: log lines carrying the engine's
 * name, every configuration key readable (no whitelist), the switch hop matrix, a
 * cancelled() that SIGTERM or a newer sweep request really sets, the core's file reader
 * (base/file_read.h), so no plugin's file can block or exhaust the daemon, and the rows the
 * engine's last route() left as the core keeps them. */
#ifndef IBSM_ROUTING_SERVICES_H
#define IBSM_ROUTING_SERVICES_H

#include <glib.h>
#include <stdarg.h>
#include <ibsm/routing.h>
#include "config/options.h"

/* The services for engine `engine_name` in a step. Its configuration is a snapshot taken now:
 * step_config (the step's own file, may be NULL), then every key of o (the core's table, the
 * file keys outside it, the command line), then the engine's declared defaults (may be NULL). */
struct ibsm_core *services_new(const char *engine_name, const struct sm_options *o,
			       GHashTable *step_config, const struct ibsm_config_key *declared);
void services_free(struct ibsm_core *core);
/* A plugin's log line: level clamped to IBSM_LOG_ERROR..DEBUG, "WHO: text" under code. */
void services_vlog(int level, const char *code, const char *who, const char *fmt, va_list ap);
/* read_file() of struct ibsm_core and struct ibsm_orch_core (ABI 1.3): file_read_setting()
 * with the text cap, the message into why. */
int services_read_file(const char *key, const char *path, char **text, size_t *len, char *why,
		       size_t why_len);
/* What last_rows() (ABI 1.4) hands the engine from now on: rows (tables of routing/tables.h,
 * referenced; NULL: none), the last ones let go of. Routing thread, outside route(). */
void services_keep_rows(struct ibsm_core *core, uint8_t *rows, uint32_t n_switches, uint32_t stride);
/* Sets or clears what cancelled() reports (any thread). */
void services_cancel(struct ibsm_core *core, int on);

#endif
