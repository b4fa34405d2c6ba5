/* SPDX-License-Identifier: BSD-2-Clause */
/* records.c - the table of record kinds the SA serves (sa/records.h). */
#include "sa/records.h"

extern struct sa_kind sa_node_record, sa_portinfo_record, sa_link_record, sa_lft_record,
	sa_guidinfo_record, sa_sminfo_record, sa_pkey_record, sa_switchinfo_record, sa_sl2vl_record,
	sa_vlarb_record, sa_mft_record;

static struct sa_kind *const kinds[] = { &sa_node_record, &sa_portinfo_record, &sa_link_record,
					 &sa_lft_record, &sa_guidinfo_record, &sa_sminfo_record,
					 &sa_pkey_record, &sa_switchinfo_record, &sa_sl2vl_record,
					 &sa_vlarb_record, &sa_mft_record };

int sa_kinds_check(const char **bad)
{
	for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++) {
		if ((kinds[i]->init && kinds[i]->init(&kinds[i]->layout) < 0) ||
		    sa_layout_init(&kinds[i]->layout) < 0) {
			if (bad)
				*bad = kinds[i]->layout.name;
			return -1;
		}
	}
	return 0;
}

const struct sa_kind *sa_kind_of(uint16_t attr)
{
	for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++)
		if (kinds[i]->layout.attr == attr)
			return kinds[i];
	return NULL;
}
