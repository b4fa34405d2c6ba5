/* SPDX-License-Identifier: BSD-2-Clause */
/* policies.c - the policy files the SM runs by, read at start and on SIGHUP: the core reads
 * each file (base/file.c: regular files of bounded size only) and hands the text to its parser
 * in policy/, which does no I/O. */
#include <errno.h>
#include "base/file.h"
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

/* Reads the partition file at path: 1 with *out parsed, 0 when there is no such file, -1 with
 * *err when it cannot be read (not a regular file, too big, ...) or does not parse. */
static int read_partitions(const char *path, struct part_policy **out, GError **err)
{
	char *text = NULL;
	size_t len = 0;
	int rc = file_read_capped(path, FILE_CAP_TEXT, "partition file", &text, &len, err);
	if (rc == -ENOENT) {
		g_clear_error(err);
		return 0;
	}
	if (rc < 0)
		return -1;
	*out = part_policy_parse_text(text, len, path, err);
	g_free(text);
	return *out ? 1 : -1;
}

int policies_load_partitions(struct sm *sm)
{
	const char *path = sm->opt->partition_config_file;
	struct part_policy *np = NULL;
	GError *err = NULL;
	int rc = path && *path ? read_partitions(path, &np, &err) : 0;
	if (rc < 0) {
		/* at start: OpenSM's default partition once a file exists, the restricted one */
		LOG_E("POL-0002", "partition file not taken, %s: %s", sm->part_policy ?
		      "the previous policy stays in force" : "the restricted default policy (SM port "
		      "full, other ports limited) is in force", err ? err->message : path);
		g_clear_error(&err);
		if (!sm->part_policy)
			sm->part_policy = part_policy_restricted_default();
		return -1;
	}
	if (rc == 0) {
		LOG_I("POL-0001", "partition file %s not found: default partition only, every end "
		      "port a full member", path && *path ? path : "(none)");
		np = part_policy_default();
	} else {
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
