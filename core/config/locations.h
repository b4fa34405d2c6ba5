/* SPDX-License-Identifier: BSD-2-Clause */
/* locations.h - where ibsm looks for its files when none is named: its own under
 * SYSCONFDIR/ibsm, else OpenSM's under SYSCONFDIR/opensm, so an OpenSM site's files work where
 * they already are; every choice is noted for the log. */
#ifndef IBSM_CONFIG_LOCATIONS_H
#define IBSM_CONFIG_LOCATIONS_H

struct sm_options;

/* The configuration file to read when -F names none: SYSCONFDIR/ibsm/ibsm.yaml, unless it sets
 * no key (comments only, as the package ships it) and SYSCONFDIR/opensm/opensm.conf exists;
 * else that opensm.conf, else NULL (g_free it). */
char *config_default_file(void);
/* Notes which configuration file was read (path: -F's or config_default_file()'s), and which
 * was passed over: an ibsm.yaml that sets no key, or an opensm.conf (a warning). */
void config_note_file(struct sm_options *o, const char *path, int named);
/* The policy files (partitions, QoS policy, torus-2QoS) left at ibsm's default path that does
 * not exist take OpenSM's file of the same name when that one exists; notes the file used. */
void config_resolve_policy_files(struct sm_options *o);

#endif
