/* SPDX-License-Identifier: BSD-2-Clause */
/* template.h - the commented configuration template (`--create-config`). */
#ifndef IBSM_CONFIG_TEMPLATE_H
#define IBSM_CONFIG_TEMPLATE_H

#include <glib.h>
#include "config/options.h"

/* A key an engine declares (ibsm_engine.config_keys), as the template lists it. */
struct config_declared {
	char *engine;              /* engine name */
	char *name;
	char *default_value;       /* NULL: unset */
	char *help;
};
void config_declared_free(gpointer p); /* GDestroyNotify for a GPtrArray of them */

/* Writes a commented YAML template to path ("-": stdout): every key of the table, its value in
 * *o (defaults when *o is options_defaults()), its default when different, and its doc line;
 * then, per engine, the keys in `declared` (struct config_declared *, may be NULL) with the
 * value in o->extra or commented out at their default. */
int config_write_template(const char *path, const struct sm_options *o, const GPtrArray *declared,
			  GError **err);

#endif
