/* SPDX-License-Identifier: BSD-2-Clause */
/* activity.h - the SM activity report (activity_report_subjects, as NVIDIA's OpenSM has it):
 * one line per activity of the subjects asked for, appended to opensm-activity.dump in the dump
 * directory, so an operator can follow joins, partitions and routing runs after the fact. */
#ifndef IBSM_BASE_ACTIVITY_H
#define IBSM_BASE_ACTIVITY_H

/* The activity IDs and names of the report (its table: ID, name, additional fields). */
enum activity {
	ACT_MCM_MEMBER = 1,            /* mlid mgid port_guid join_state (1 join, -1 leave) */
	ACT_MCG_CHANGE = 2,            /* mlid mgid change (0 create, 1 delete) */
	ACT_PRTN_GUID_ADD = 3,         /* port_guid pkey block_index pkey_index */
	ACT_PRTN_CREATE = 4,           /* pkey prtn_name */
	ACT_PRTN_DELETE = 5,           /* pkey delete_reason (0 empty, 1 duplicate, 2 sm shutdown) */
	ACT_PORT_VIRT_DISCOVER = 6,    /* port_guid top_index (ibsm knows no virtual ports) */
	ACT_VPORT_STATE_CHANGE = 7,    /* port_guid vport_guid vport_index vport_lid vport_state */
	ACT_MCG_TREE_CALC = 8,         /* mlid */
	ACT_ROUTING_SUCCEED = 9,       /* routing_engine */
	ACT_ROUTING_FAILED = 10,       /* routing_engine */
	ACT_UCAST_CACHE_INVALIDATED = 11,
	ACT_UCAST_CACHE_ROUTING_DONE = 12,
};
#define ACTIVITY_FILE "opensm-activity.dump"

/* Subjects: a comma list of mc (IDs 1, 2, 8), prtn (3-5), virt (6, 7), routing (8-12), all,
 * none (NULL or "": none). The file goes to DIR (NULL: nowhere). An unknown word is said
 * (ACT-0001) and left out. Called at start and on SIGHUP. */
void activity_configure(const char *subjects, const char *dir);
/* Is activity A reported (a hint to skip building its fields)? */
int activity_on(enum activity a);
/* One line: "<time> <id> <name> <fields>", fields "key=value" separated by spaces. */
void activity_report(enum activity a, const char *fields_fmt, ...) __attribute__((format(printf, 2, 3)));
void activity_close(void);

#endif
