/* SPDX-License-Identifier: BSD-2-Clause */
/* policies.c - the policy files the SM runs by, read at start and on SIGHUP: the core reads
 * each file (base/file_read.c: regular files of bounded size only) and hands the text to its parser
 * in policy/, which does no I/O. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "base/activity.h"
#include "base/file_read.h"
#include "base/log.h"
#include "policy/enhanced_qos.h"
#include "program/vendor_qos.h"
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

/* Reads the partition file at path: 1 with *out parsed (and *text its contents, when text is
 * not NULL), 0 when there is no such file, -1 with *err when it cannot be read (not a regular
 * file, too big, ...) or does not parse. */
static int read_partitions(const char *path, struct part_policy **out, char **text_out, GError **err)
{
	char *text = NULL;
	size_t len = 0;
	int rc = file_read_setting("partition_config_file", path, FILE_CAP_TEXT, &text, &len, err);
	if (rc == -ENOENT) {
		g_clear_error(err);
		return 0;
	}
	if (rc < 0)
		return -1;
	*out = part_policy_parse_text(text, len, path, err);
	if (*out && text_out)
		*text_out = text;
	else
		g_free(text);
	return *out ? 1 : -1;
}

/* ---- the copy of the last partition policy that loaded ---------------------------------------
 * Written (atomically: a temporary file, fsync, rename, fsync of the directory) into the cache
 * directory each time a partition file is taken whose text differs from the copy's; removed
 * when the policy in force is the built-in default (no file). At start, a partition file that
 * cannot be taken gives way to it, so a typo made while the SM was down does not take every
 * host out of its partitions. Its first lines say what it is. */

static char *saved_path(const struct sm *sm)
{
	const char *dir = sm->opt->cache_dir;
	return dir && *dir ? g_build_filename(dir, PART_SAVED_FILE, NULL) : NULL;
}

/* The copy's text after its header lines (those starting with SAVED_TAG), or NULL. */
static const char *saved_body(const char *text)
{
	const char *p = text;
	while (p && g_str_has_prefix(p, PART_SAVED_TAG)) {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return p;
}

static int write_durably(const char *dir, const char *path, const char *text, size_t len, GError **err)
{
	char *tmp = g_strconcat(path, ".tmp.XXXXXX", NULL);
	const char *failed = tmp;
	int fd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, 0644), rc = 0;
	if (fd < 0)
		goto fail;
	for (size_t off = 0; off < len;) {
		ssize_t n = write(fd, text + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		off += (size_t)n;
	}
	if (fsync(fd) < 0)
		goto fail;
	int closed = close(fd);
	fd = -1;
	if (closed < 0)
		goto fail;
	failed = path;
	if (rename(tmp, path) < 0)
		goto fail;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) { /* the rename itself durable (best effort: some file systems refuse) */
		(void)fsync(dfd);
		close(dfd);
	}
	goto out;
fail:
	rc = errno ? -errno : -EIO;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(-rc), "cannot write %s: %s", failed,
		    g_strerror(-rc));
out:
	g_free(tmp);
	return rc;
}

/* Keeps text (the partition file at source, just taken) as the copy, unless the copy holds it. */
static void save_copy(const struct sm *sm, const char *source, const char *text)
{
	char *path = saved_path(sm);
	if (!path)
		return;
	char *old = NULL;
	size_t old_len = 0;
	GError *err = NULL;
	if (file_read_capped(path, FILE_CAP_TEXT, "saved partition file", &old, &old_len, NULL) == 0 &&
	    !g_strcmp0(saved_body(old), text)) {
		g_free(old);
		g_free(path);
		return;
	}
	g_free(old);
	GDateTime *now = g_date_time_new_now_local();
	char *when = g_date_time_format(now, "%Y-%m-%d %H:%M:%S %z");
	g_date_time_unref(now);
	char *all = g_strdup_printf(PART_SAVED_TAG " the last partition policy ibsm loaded: a copy of %s "
				    "taken %s.\n" PART_SAVED_TAG " ibsm starts with it when that file cannot "
				    "be taken (it does not parse, cannot be read); do not edit.\n%s",
				    source, when, text);
	g_free(when);
	if (write_durably(sm->opt->cache_dir, path, all, strlen(all), &err) < 0) {
		LOG_E("POL-0010", "the copy of the partition policy is not kept: %s", err->message);
		g_clear_error(&err);
	}
	g_free(all);
	g_free(path);
}

/* The built-in default is in force: no copy of a file stands for it any more. */
static void drop_copy(const struct sm *sm)
{
	char *path = saved_path(sm);
	if (path && unlink(path) < 0 && errno != ENOENT)
		LOG_E("POL-0010", "the copy of the partition policy %s cannot be removed: %s", path,
		      g_strerror(errno));
	g_free(path);
}

/* The copy, parsed, or NULL (none, or not usable: *why says so). */
static struct part_policy *load_copy(const struct sm *sm, char **why)
{
	char *path = saved_path(sm);
	*why = NULL;
	if (!path)
		return NULL;
	struct part_policy *p = NULL;
	GError *err = NULL;
	int rc = read_partitions(path, &p, NULL, &err);
	if (rc < 0)
		*why = g_strdup_printf("; the saved copy is not usable either (%s)", err ? err->message : path);
	g_clear_error(&err);
	g_free(path);
	return rc > 0 ? p : NULL;
}

/* The activity report: partitions of np that old did not have are created, those of old that
 * np lacks deleted (reason 0: no port is in them now); old NULL: all created; np NULL: all of
 * old deleted as the SM shuts down (reason 2). */
static int has_pkey(const struct part_policy *pp, uint16_t pkey)
{
	for (guint i = 0; pp->parts && i < pp->parts->len; i++)
		if (((const struct partition *)g_ptr_array_index(pp->parts, i))->pkey == pkey)
			return 1;
	return 0;
}

static void report_partitions(const struct part_policy *old, const struct part_policy *np)
{
	if (!activity_on(ACT_PRTN_CREATE) && !activity_on(ACT_PRTN_DELETE))
		return;
	for (guint i = 0; np && np->parts && i < np->parts->len; i++) {
		const struct partition *p = g_ptr_array_index(np->parts, i);
		if (!old || !has_pkey(old, p->pkey))
			activity_report(ACT_PRTN_CREATE, "pkey=0x%04x prtn_name=%s", p->pkey,
					p->name && *p->name ? p->name : "-");
	}
	for (guint i = 0; old && old->parts && i < old->parts->len; i++) {
		const struct partition *p = g_ptr_array_index(old->parts, i);
		if (!np || !has_pkey(np, p->pkey))
			activity_report(ACT_PRTN_DELETE, "pkey=0x%04x delete_reason=%d", p->pkey, np ? 0 : 2);
	}
}

int policies_load_partitions(struct sm *sm)
{
	const char *path = sm->opt->partition_config_file;
	struct part_policy *np = NULL;
	char *text = NULL;
	GError *err = NULL;
	int rc = path && *path ? read_partitions(path, &np, &text, &err) : 0;
	if (rc < 0 && sm->part_policy) {
		LOG_E("POL-0002", "partition file not taken, the previous policy stays in force: %s",
		      err ? err->message : path);
		g_clear_error(&err);
		return -1;
	}
	if (rc < 0) {
		/* at start: the last policy that loaded; without one, what OpenSM 3.3.23 does with
		 * a partitions file in error (it says "retrying with default config"): the default
		 * partition with every end port a full member, no other partition */
		char *why = NULL;
		np = load_copy(sm, &why);
		if (np) {
			log_messages(np);
			LOG_E("POL-0002", "partition file not taken, the copy of the last partition policy "
			      "that loaded (%s: %u partitions) is in force: %s", np->source,
			      np->parts ? np->parts->len : 0, err ? err->message : path);
		} else {
			LOG_E("POL-0002", "partition file not taken, as OpenSM does the default partition "
			      "0x7fff with every end port a full member is in force, no other partition%s: %s",
			      why ? why : "", err ? err->message : path);
			np = part_policy_default();
		}
		g_free(why);
		g_clear_error(&err);
		report_partitions(NULL, np);
		sm->part_policy = np;
		sm->sa_in.parts = np;
		sa_publish(sm->sa, &sm->sa_in);
		return -1;
	}
	if (rc == 0) {
		LOG_I("POL-0001", "partition file %s not found: default partition only, every end "
		      "port a full member", path && *path ? path : "(none)");
		np = part_policy_default();
		drop_copy(sm);
	} else {
		log_messages(np);
		LOG_I("POL-0003", "partition policy read from %s: %u partitions (%u entries skipped)", path,
		      np->parts ? np->parts->len : 0, np->skipped ? np->skipped->len : 0);
		save_copy(sm, path, text);
	}
	g_free(text);
	report_partitions(sm->part_policy, np);
	sm->sa_in.parts = np; /* handed over before the old policy goes */
	sa_publish(sm->sa, &sm->sa_in);
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
	int rc = path && *path ? file_read_setting("qos_policy_file", path, FILE_CAP_TEXT, &text, &len, err)
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

static int load_qos_policy(struct sm *sm)
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
		return -1;
	}
	if (rc == 0 && sm->opt->qos)
		LOG_I("POL-0006", "QoS policy file %s not found: no QoS policy (PathRecords as without "
		      "one; SL2VL and VL arbitration from the qos_* options)", path && *path ? path : "(none)");
	if (np)
		log_qos_policy(np, path);
	sm->sa_in.qos = np; /* handed over before the old policy goes */
	sa_publish(sm->sa, &sm->sa_in);
	if (sm->qos_policy)
		qos_policy_free(sm->qos_policy);
	sm->qos_policy = np;
	return 0;
}

/* ---- NVIDIA's enhanced QoS policy (enhanced_qos_policy_file) -------------------------------- */

static int eqos_off(const char *path)
{
	return !path || !*path || !strcmp(path, "null") || !strcmp(path, "(null)");
}

/* Every port group BW_RULES names is a port group of the QoS policy file (else -1, *err). */
static int check_eqos_groups(const struct eqos_policy *p, const struct qos_policy *q, GError **err)
{
	for (guint i = 0; i < p->port.rules->len; i++) {
		const struct eqos_rule *r = g_ptr_array_index(p->port.rules, i);
		int found = 0;
		for (guint g = 0; r->kind == EQOS_T_GROUP && q && g < q->groups->len && !found; g++) {
			const struct qos_port_group *grp = g_ptr_array_index(q->groups, g);
			found = grp->name && !strcmp(grp->name, r->group);
		}
		if (r->kind == EQOS_T_GROUP && !found) {
			g_set_error(err, EQOS_POLICY_ERROR, EQOS_POLICY_ERROR_SYNTAX, "%s:%u:%u: port group "
				    "'%s' is not a port group of the QoS policy file (%s)", p->source, r->line,
				    r->col, r->group, q ? q->source : "none in force");
			return -1;
		}
	}
	return 0;
}

static struct eqos_policy *read_eqos(struct sm *sm, const char *path, GError **err)
{
	char *text = NULL;
	size_t len = 0;
	if (file_read_setting("enhanced_qos_policy_file", path, FILE_CAP_TEXT, &text, &len, err) < 0)
		return NULL;
	struct eqos_policy *p = eqos_policy_parse_text(text, len, path, err);
	g_free(text);
	if (p && check_eqos_groups(p, sm->qos_policy, err) < 0) {
		eqos_policy_free(p);
		p = NULL;
	}
	return p;
}

static void drop_eqos(struct sm *sm, const char *why)
{
	if (!sm->eqos_policy)
		return;
	LOG_I("POL-0011", "enhanced QoS off (%s): ports keep the rate limits last written", why);
	eqos_policy_free(sm->eqos_policy);
	sm->eqos_policy = NULL;
}

/* Loads opt->enhanced_qos_policy_file (under -Q) into sm->eqos_policy; a file that cannot be
 * taken keeps the policy in force (POL-0012, FILE:LINE:COL). */
static int load_enhanced_qos(struct sm *sm)
{
	const char *path = sm->opt->enhanced_qos_policy_file;
	if (eqos_off(path)) {
		drop_eqos(sm, "enhanced_qos_policy_file not set");
		return 0;
	}
	if (!sm->opt->qos) {
		if (sm->eqos_policy)
			drop_eqos(sm, "QoS is off");
		else
			LOG_W("POL-0015", "enhanced_qos_policy_file %s is not read: enhanced QoS needs QoS "
			      "on (-Q, qos TRUE), as NVIDIA's SM", path);
		return 0;
	}
	GError *err = NULL;
	struct eqos_policy *np = read_eqos(sm, path, &err);
	if (!np) {
		LOG_E("POL-0012", "enhanced QoS policy file not taken, %s: %s", sm->eqos_policy ?
		      "the previous policy stays in force" : "no enhanced QoS policy is in force",
		      err ? err->message : path);
		g_clear_error(&err);
		return -1;
	}
	for (guint i = 0; i < np->notes->len; i++)
		LOG_I("POL-0013", "enhanced QoS policy: %s", (const char *)g_ptr_array_index(np->notes, i));
	LOG_I("POL-0014", "enhanced QoS policy read from %s: %u bandwidth names, BW_RULES %u rules%s, "
	      "VPORT_BW_RULES %u rules%s", path, np->names->len, np->port.rules->len,
	      np->port.def ? " and a default" : "", np->vport.rules->len,
	      np->vport.def ? " and a default" : "");
	eqos_policy_free(sm->eqos_policy);
	sm->eqos_policy = np;
	if (sm->vqos)
		vqos_memory_retry(sm->vqos); /* ports that refused are asked once more */
	return 0;
}

int policies_load_qos(struct sm *sm)
{
	int rc = load_qos_policy(sm);
	return load_enhanced_qos(sm) < 0 ? -1 : rc;
}

void policies_free(struct sm *sm)
{
	eqos_policy_free(sm->eqos_policy);
	sm->eqos_policy = NULL;
	vqos_memory_free(sm->vqos);
	sm->vqos = NULL;
	guid2mkey_free(sm->g2m);
	sm->g2m = NULL;
	report_partitions(sm->part_policy, NULL);
	if (sm->part_policy)
		part_policy_free(sm->part_policy);
	sm->part_policy = NULL;
	sm->sa_in.parts = NULL;
	sm->sa_in.qos = NULL;
	sa_publish(sm->sa, &sm->sa_in);
	if (sm->qos_policy)
		qos_policy_free(sm->qos_policy);
	sm->qos_policy = NULL;
}
