/* SPDX-License-Identifier: BSD-2-Clause */
/* sadb.h - when the SM writes and reads the SA's database (sa/sa_db.h), as OpenSM 3.3.23 does:
 * sa_db_file is loaded each time this SM becomes master (at start and coming out of standby),
 * before LIDs and programming, so restored groups get their MFTs in the same sweep; the master
 * writes opensm-sa.dump (sa_db_dump) after a light sweep that found nothing to do and at exit,
 * each time only when the SA changed since the last write. */
#ifndef IBSM_SM_SADB_H
#define IBSM_SM_SADB_H

#include "sm/sm.h"

/* The first sweep as master: loads sm->opt->sa_db_file (if set) into the SA. A file restored
 * in part turns no_clients_rereg off (clients are asked to register again, as OpenSM asks). */
void sadb_restore(struct sm *sm);
/* The master, sa_db_dump on: writes opensm-sa.dump to the dump directory if the SA changed. */
void sadb_save(struct sm *sm);

#endif
