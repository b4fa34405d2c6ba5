/* SPDX-License-Identifier: BSD-2-Clause */
/* policies.c - the policy files the SM runs by, read at start and on SIGHUP. */
#include "base/log.h"
#include "sm/policies.h"

/* What the parser reported: notes (assumptions it made) and the entries it skipped. */
static void log_messages(const struct part_policy *p)
{
	for (guint i = 0; p->notes && i < p->notes->len; i++)
		LOG_I("POL-0004", "partitions: %s", (const char *)g_ptr_array_index(p->notes, i));
	for (guint i = 0; p->skipped && i < p->skipped->len; i++)
		LOG_E("POL-0005", "partitions: %s", (const char *)g_ptr_array_index(p->skipped, i));
}

int policies_load_partitions(struct sm *sm)
{
	const char *path = sm->opt->partition_config_file;
	struct part_policy *np = NULL;
	if (!path || !*path || !g_file_test(path, G_FILE_TEST_EXISTS)) {
		LOG_I("POL-0001", "partition file %s not found: default partition only",
		      path && *path ? path : "(none)");
		np = part_policy_default();
	} else {
		GError *err = NULL;
		np = part_policy_parse_file(path, &err);
		if (!np) {
			LOG_E("POL-0002", "partition file not taken, %s policy stays in force: %s",
			      sm->part_policy ? "the previous" : "the default", err ? err->message : path);
			g_clear_error(&err);
			if (!sm->part_policy)
				sm->part_policy = part_policy_default();
			return -1;
		}
		log_messages(np);
		LOG_I("POL-0003", "partition policy read from %s: %u partitions (%u entries skipped)", path,
		      np->parts ? np->parts->len : 0, np->skipped ? np->skipped->len : 0);
	}
	if (sm->part_policy)
		part_policy_free(sm->part_policy);
	sm->part_policy = np;
	return 0;
}

void policies_free(struct sm *sm)
{
	if (sm->part_policy)
		part_policy_free(sm->part_policy);
	sm->part_policy = NULL;
}
