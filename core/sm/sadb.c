/* SPDX-License-Identifier: BSD-2-Clause */
/* sadb.c - the SA's database loaded on becoming master and written by the master (sm/sadb.h). */
#include "base/log.h"
#include "sa/mcast_requests.h"
#include "sa/sa_db.h"
#include "sm/sadb.h"

void sadb_restore(struct sm *sm)
{
	if (!sm->sa || !sm->opt->sa_db_file || !*sm->opt->sa_db_file)
		return;
	/* the groups partitions.conf asks for first, as OpenSM has its well-known groups before it
	 * loads: a dump's members of the IPoIB groups join them (a group of the file without a
	 * full member, and not well known, is closed) */
	if (sm->part_policy)
		sa_mcast_partitions(sm->sa, sm->part_policy);
	struct sa_db_stats st;
	int rc = sa_db_load(sm->sa, sm->opt->sa_db_file, sm->fabric, &st);
	if (rc != 0 && sm->opt->no_clients_rereg) {
		LOG_W("PST-0001", "the SA database %s was %s: no_clients_rereg is off, end ports are asked "
		      "to register again (ClientReregister)", sm->opt->sa_db_file,
		      rc < 0 ? "not read" : "restored in part");
		sm->opt->no_clients_rereg = 0;
	}
}

void sadb_save(struct sm *sm)
{
	if (!sm->sa || !sm->opt->sa_db_dump || sm->state != IB_SM_MASTER || !sm->opt->tmp_dir)
		return;
	sa_db_dump(sm->sa, sm->opt->tmp_dir, 0);
}
