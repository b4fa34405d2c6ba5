/* SPDX-License-Identifier: BSD-2-Clause */
/* policies.c - the policy files the SM runs by, read at start and on SIGHUP: the core reads
 * each file (base/file.c: regular files of bounded size only) and hands the text to its parser
 * in policy/, which does no I/O. */
#include <errno.h>
#include "base/file.h"
#include "base/log.h"
#include "sa/agent.h"
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
	if (sm->sa)
		sa_set_partitions(sm->sa, np);
	if (sm->part_policy)
		part_policy_free(sm->part_policy);
	sm->part_policy = np;
	return 0;
}

/* The line of the qos-ulps rule that names P_Key k (for the message). */
static unsigned ulps_line(const struct qos_policy *q, uint64_t k)
{
	for (guint i = 0; i < q->rules->len; i++) {
		const struct qos_match_rule *r = g_ptr_array_index(q->rules, i);
		if (r->from_ulps && r->pkey && qos_ranges_have(r->pkey, k & 0x7fff))
			return r->line;
	}
	return 0;
}

/* The ipoib lines' P_Keys must be partitions (OpenSM refuses the file otherwise). */
static int check_ipoib_pkeys(const struct qos_policy *q, const struct part_policy *pp, GError **err)
{
	for (guint i = 0; q->ipoib_pkeys && i < q->ipoib_pkeys->len; i++) {
		const struct qos_range *r = &g_array_index(q->ipoib_pkeys, struct qos_range, i);
		for (uint64_t k = r->lo; k <= r->hi && k <= 0xffff; k++) {
			int found = 0;
			for (guint j = 0; pp && pp->parts && j < pp->parts->len && !found; j++)
				found = ((const struct partition *)g_ptr_array_index(pp->parts, j))->pkey == (k & 0x7fff);
			if (!found) {
				g_set_error(err, QOS_POLICY_ERROR, 0, "%s:%u: qos-ulps: IPoIB P_Key 0x%04x is not a "
					    "partition of the partition policy", q->source, ulps_line(q, k),
					    (unsigned)k);
				return -1;
			}
		}
	}
	return 0;
}

/* Reads the QoS policy file at path: 1 with *out parsed (and its ipoib P_Keys partitions of
 * pp), 0 when there is no such file, -1 with *err when it cannot be taken. */
static int read_qos(const char *path, const struct part_policy *pp, struct qos_policy **out,
		    GError **err)
{
	char *text = NULL;
	size_t len = 0;
	int rc = path && *path ? file_read_capped(path, FILE_CAP_TEXT, "QoS policy file", &text, &len, err)
			       : -ENOENT;
	if (rc == -ENOENT) {
		g_clear_error(err);
		return 0;
	}
	if (rc < 0)
		return -1;
	*out = qos_policy_parse_text(text, len, path, err);
	g_free(text);
	if (*out && check_ipoib_pkeys(*out, pp, err) < 0) {
		qos_policy_free(*out);
		*out = NULL;
	}
	return *out ? 1 : -1;
}

static void log_qos_policy(const struct qos_policy *np, const char *path)
{
	for (guint i = 0; np->notes && i < np->notes->len; i++)
		LOG_I("POL-0008", "QoS policy: %s", (const char *)g_ptr_array_index(np->notes, i));
	unsigned named_groups = 0, ulps = 0;
	for (guint i = 0; i < np->groups->len; i++)
		named_groups += !((const struct qos_port_group *)g_ptr_array_index(np->groups, i))->generated;
	for (guint i = 0; i < np->rules->len; i++)
		ulps += ((const struct qos_match_rule *)g_ptr_array_index(np->rules, i))->from_ulps != 0;
	LOG_I("POL-0009", "QoS policy read from %s: %u port groups (%u named), %u levels, %u match "
	      "rules (%u from qos-ulps)", path, np->groups->len, named_groups, np->levels->len,
	      np->rules->len, ulps);
}

int policies_load_qos(struct sm *sm)
{
	const char *path = sm->opt->qos_policy_file;
	struct qos_policy *np = NULL;
	GError *err = NULL;
	int rc = sm->opt->qos ? read_qos(path, sm->part_policy, &np, &err) : 0;
	if (rc < 0) {
		LOG_E("POL-0007", "QoS policy file not taken, %s: %s", sm->qos_policy ?
		      "the previous policy stays in force" : "no QoS policy is in force",
		      err ? err->message : path);
		g_clear_error(&err);
		if (sm->sa && sm->qos_policy) /* partition names may have changed */
			sa_set_qos_policy(sm->sa, sm->qos_policy, sm->part_policy);
		return -1;
	}
	if (rc == 0 && sm->opt->qos)
		LOG_I("POL-0006", "QoS policy file %s not found: no QoS policy (PathRecords as without "
		      "one; SL2VL and VL arbitration from the qos_* options)", path && *path ? path : "(none)");
	if (np)
		log_qos_policy(np, path);
	if (sm->sa)
		sa_set_qos_policy(sm->sa, np, sm->part_policy);
	if (sm->qos_policy)
		qos_policy_free(sm->qos_policy);
	sm->qos_policy = np;
	return 0;
}

void policies_free(struct sm *sm)
{
	if (sm->part_policy)
		part_policy_free(sm->part_policy);
	sm->part_policy = NULL;
	if (sm->sa)
		sa_set_qos_policy(sm->sa, NULL, NULL);
	if (sm->qos_policy)
		qos_policy_free(sm->qos_policy);
	sm->qos_policy = NULL;
}
