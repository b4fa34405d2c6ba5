/* SPDX-License-Identifier: BSD-2-Clause */
/* node_names.h - OpenSM 3.3.23's node_name_map_name: the node-name-map file of ibnetdiscover
 * ("NODE-GUID "name"" a line), whose names stand for NodeDescriptions where OpenSM prints a
 * node (its print_desc): the dumps (opensm-subnet.lst, opensm-lfts.dump, opensm.fdbs). One map
 * for the process, replaced whole at start and on SIGHUP; read from any thread. */
#ifndef IBSM_FABRIC_NODE_NAMES_H
#define IBSM_FABRIC_NODE_NAMES_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

/* Parses a node-name-map text (path for messages) into a new GUID -> name table (keys are
 * g_malloc'd uint64_t, values strings), as OpenSM's libibnetdisc does: '#' lines and blank
 * lines skipped, a GUID without a name passed over, a GUID named twice keeps its first name;
 * a line that does not start with a GUID is an ERROR (NNM-0001, PATH:LINE) and the whole map
 * is dropped (NULL, *bad 1), as OpenSM drops it. */
GHashTable *node_names_parse(const char *path, const char *text, unsigned *bad);

/* Reads path (NULL or empty: no map) and makes it the map in force; an unreadable file is an
 * ERROR (NNM-0002) and leaves no map (NodeDescriptions are printed). */
void node_names_load(const char *path);

/* The map's name for node GUID guid copied into buf (at most len - 1 characters); NULL when the
 * map has none (or there is no map). */
const char *node_names_copy(uint64_t guid, char *buf, size_t len);

#endif
