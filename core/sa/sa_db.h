/* SPDX-License-Identifier: BSD-2-Clause */
/* sa_db.h - the SA's state that must outlive the process (OpenSM 3.3.23's sa_db_dump and
 * sa_db_file): ServiceRecords with their leases, multicast groups with their members and join
 * states, InformInfo subscriptions, written to opensm-sa.dump in OpenSM's text format and read
 * back from such a file (OpenSM's or ibsm's), so that a restart or a standby taking over keeps
 * what clients registered. The format, one record a line (each followed by a blank line):
 *   MC Group 0xMLID [(well known)]: mgid=0xP:0xI port_gid=0xP:0xI qkey=0x mlid=0x mtu=0x
 *     tclass=0x pkey=0x rate=0x pkt_life=0x sl_flow_hop=0x scope_state=0x proxy_join=0x
 *   mcm_port: port_gid=0xP:0xI scope_state=0x proxy_join=0x       (members of the group above)
 *   InformInfo Record: subscriber_gid=0xP:0xI subscriber_enum=0x InformInfo: gid=0xP:0xI
 *     lid_range_begin=0x lid_range_end=0x is_generic=0x subscribe=0x trap_type=0x trap_num=0x
 *     qpn_resp_time_val=0x node_type=0x rep_addr: lid=0x path_bits=0x static_rate=0x
 *     remote_qp=0x remote_qkey=0x pkey_ix=0x sl=0x
 *   Service Record: id=0x gid=0xP:0xI pkey=0x lease=0x key=0x:0x name='...' data8=0x:0x
 *     data16=0x:0x data32=0x:0x data64=0x:0x modified_time=0x lease_period=0x
 * (modified_time: wall-clock seconds of the last registration; lease_period: its lease in
 * seconds, 0xFFFFFFFF for ever). GUIDInfo Record lines (alias GUIDs, which ibsm does not
 * assign) and lines starting with # are passed over. */
#ifndef IBSM_SA_SA_DB_H
#define IBSM_SA_SA_DB_H

#include <glib.h>
#include "fabric/model.h"

#define SA_DB_FILE "opensm-sa.dump"

struct sa;

/* The dump's text of the SA's state now (g_free). */
char *sa_db_text(struct sa *sa);
/* Writes DIR/opensm-sa.dump (mode 0600) through DIR/opensm-sa.dump.tmp and a rename, when the
 * text differs from what this SA last wrote or loaded, or the file is missing (force: in any
 * case). 0 written, 1 not
 * needed, -1 failed (logged). */
int sa_db_dump(struct sa *sa, const char *dir, int force);

struct sa_db_stats {
	unsigned groups, members, services, subscriptions;  /* restored */
	unsigned kept;           /* already there (the same group, service or subscription) */
	unsigned refused;        /* well-formed but not restorable (MLID taken, port not in f, ...) */
	unsigned bad_lines;      /* not parsed: logged with FILE:LINE, skipped */
	unsigned dropped_groups; /* groups left without a full member (not well known): deleted */
};
/* Loads PATH into the SA: groups (same MGID, MLID, parameters; members whose port f has, f NULL:
 * any), services (with the lease they have left; expired ones are dropped), subscriptions. A
 * line that does not parse is logged (FILE:LINE: what) and skipped, the rest is loaded. 0 all
 * restored, 1 in part (a bad line, or a record that could not be restored: clients should be
 * asked to register again), -1 the file cannot be read (logged). */
int sa_db_load(struct sa *sa, const char *path, const struct fabric *f, struct sa_db_stats *st);

#endif
