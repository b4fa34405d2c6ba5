/* SPDX-License-Identifier: BSD-2-Clause */
/* sa_db.c - the SA's state written to and read from opensm-sa.dump (sa/sa_db.h), so that
 * ServiceRecords, multicast groups and subscriptions survive a restart or a failover. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/file_read.h"
#include "base/log.h"
#include "mad/phase.h"
#include "sa/inform.h"
#include "sa/mcast_groups.h"
#include "sa/sa_db.h"
#include "sa/service.h"
#include "sa/state.h"
#include "sa/wire.h"

#define LEASE_FOREVER 0xFFFFFFFFu
#define REPORT_QKEY 0x80010000u  /* QP1's well-known Q_Key: where Reports go */

/* What this SA last wrote or loaded (a digest of the text): a dump is written when it differs,
 * as OpenSM writes only when its SA is "dirty". One SA per process. */
static const struct sa *last_sa;
static char *last_digest;

static void remember(const struct sa *sa, const char *text)
{
	g_free(last_digest);
	last_digest = g_compute_checksum_for_string(G_CHECKSUM_SHA256, text, -1);
	last_sa = sa;
}

static uint64_t be_n(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static void put_n(uint8_t *p, int n, uint64_t v)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

/* Wall-clock seconds minus phase_now()'s, taken once: a service's modified_time stays the same
 * from one dump to the next. */
static double wall_offset(void)
{
	static double off;
	static int have;
	if (!have) {
		off = (double)g_get_real_time() / 1e6 - phase_now();
		have = 1;
	}
	return off;
}

/* ---- writing ---- */

static int mgid_cmp(gconstpointer a, gconstpointer b)
{
	const struct mc_group *x = *(const struct mc_group *const *)a;
	const struct mc_group *y = *(const struct mc_group *const *)b;
	return memcmp(x->mgid, y->mgid, 16);
}

static void collect_group(struct mc_group *grp, void *ctx)
{
	g_ptr_array_add(ctx, grp);
}

static void gid_text(GString *s, const char *name, const uint8_t *gid)
{
	g_string_append_printf(s, " %s=0x%016" PRIx64 ":0x%016" PRIx64, name, be_n(gid, 8), be_n(gid + 8, 8));
}

static void write_group(GString *s, const struct mc_group *grp)
{
	static const uint8_t zero[16];
	const struct mc_member *first = grp->members->len ?
					&g_array_index(grp->members, struct mc_member, 0) : NULL;
	const struct mc_params *p = &grp->p;
	g_string_append_printf(s, "MC Group 0x%04x %s:", grp->mlid, grp->persistent ? " (well known)" : "");
	gid_text(s, "mgid", grp->mgid);
	gid_text(s, "port_gid", first ? first->gid : zero);
	g_string_append_printf(s, " qkey=0x%08x mlid=0x%04x mtu=0x%02x tclass=0x%02x pkey=0x%04x rate=0x%02x"
			       " pkt_life=0x%02x sl_flow_hop=0x%08x scope_state=0x%02x proxy_join=0x0\n\n",
			       p->qkey, grp->mlid, 0x80 | (p->mtu & 0x3f), p->tclass, p->pkey,
			       0x80 | (p->rate & 0x3f), 0x80 | (p->packet_life & 0x3f),
			       (uint32_t)(p->sl & 0xf) << 28 | (p->flow_label & 0xfffff) << 8 | p->hop_limit,
			       (p->scope & 0xf) << 4 | MC_FULL);
	for (guint i = 0; i < grp->members->len; i++) {
		const struct mc_member *m = &g_array_index(grp->members, struct mc_member, i);
		g_string_append(s, "mcm_port:");
		gid_text(s, "port_gid", m->gid);
		g_string_append_printf(s, " scope_state=0x%02x proxy_join=0x%x\n\n",
				       (p->scope & 0xf) << 4 | (m->join_state & 0xf), m->proxy ? 1 : 0);
	}
}

static void write_sub(void *ctx, const struct sa_inform_sub *x)
{
	GString *s = ctx;
	const uint8_t *ii = x->ii;
	uint8_t gid[16];
	sa_put_gid(gid, x->prefix, x->guid);
	g_string_append(s, "InformInfo Record:");
	gid_text(s, "subscriber_gid", gid);
	g_string_append_printf(s, " subscriber_enum=0x%x InformInfo:", x->enumv);
	gid_text(s, "gid", ii);
	g_string_append_printf(s, " lid_range_begin=0x%x lid_range_end=0x%x is_generic=0x%x subscribe=0x%x"
			       " trap_type=0x%x trap_num=0x%x qpn_resp_time_val=0x%x node_type=0x%06x"
			       " rep_addr: lid=0x%04x path_bits=0x00 static_rate=0x00 remote_qp=0x%08x"
			       " remote_qkey=0x%08x pkey_ix=0x0000 sl=0x00\n\n",
			       (unsigned)be_n(ii + 16, 2), (unsigned)be_n(ii + 18, 2), ii[22], ii[23],
			       (unsigned)be_n(ii + 24, 2), (unsigned)be_n(ii + 26, 2),
			       (unsigned)be_n(ii + 28, 4), (unsigned)be_n(ii + 33, 3), x->lid, x->qpn,
			       REPORT_QKEY);
}

static void hex_bytes(GString *s, const uint8_t *p, int n)
{
	for (int i = 0; i < n; i++)
		g_string_append_printf(s, "%02x", p[i]);
}

/* "NAME=0xAAAA:0xBBBB", the halves of n bytes */
static void halves(GString *s, const char *name, const uint8_t *p, int n)
{
	g_string_append_printf(s, " %s=0x", name);
	hex_bytes(s, p, n / 2);
	g_string_append(s, ":0x");
	hex_bytes(s, p + n / 2, n / 2);
}

static void write_service(void *ctx, const uint8_t *rec, double expires, const struct sr_owner *owner)
{
	(void)owner;
	GString *s = ctx;
	uint32_t lease = (uint32_t)be_n(rec + 28, 4);
	char name[65];
	memcpy(name, rec + 48, 64);
	name[64] = 0;
	uint32_t modified = expires ? (uint32_t)(wall_offset() + expires - (double)lease + 0.5) :
			    (uint32_t)(wall_offset() + phase_now());
	g_string_append_printf(s, "Service Record: id=0x%016" PRIx64, be_n(rec, 8));
	gid_text(s, "gid", rec + 8);
	g_string_append_printf(s, " pkey=0x%x lease=0x%x", (unsigned)be_n(rec + 24, 2), lease);
	halves(s, "key", rec + 32, 16);
	g_string_append_printf(s, " name='%s'", name);
	halves(s, "data8", rec + 112, 16);
	halves(s, "data16", rec + 128, 16);
	halves(s, "data32", rec + 144, 16);
	halves(s, "data64", rec + 160, 16);
	/* an everlasting service: its modified_time is no part of what makes the file differ */
	g_string_append_printf(s, " modified_time=0x%x lease_period=0x%x\n\n", expires ? modified : 0,
			       expires ? lease : LEASE_FOREVER);
}

char *sa_db_text(struct sa *sa)
{
	GString *s = g_string_new(NULL);
	GPtrArray *groups = g_ptr_array_new();
	mc_foreach(sa->mc, collect_group, groups);
	g_ptr_array_sort(groups, mgid_cmp);
	for (guint i = 0; i < groups->len; i++)
		write_group(s, g_ptr_array_index(groups, i));
	g_ptr_array_free(groups, TRUE);
	sa_inform_foreach(sa->inform, write_sub, s);
	sa_services_foreach(sa->svc, phase_now(), write_service, s);
	return g_string_free(s, FALSE);
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int sa_db_dump(struct sa *sa, const char *dir, int force)
{
	char *text = sa_db_text(sa);
	char *digest = g_compute_checksum_for_string(G_CHECKSUM_SHA256, text, -1);
	int same = last_sa == sa && last_digest && !strcmp(digest, last_digest);
	g_free(digest);
	char *path = g_build_filename(dir, SA_DB_FILE, NULL);
	if (same && !force && g_file_test(path, G_FILE_TEST_EXISTS)) {
		g_free(path);
		g_free(text);
		return 1;
	}
	char *tmp = g_strconcat(path, ".tmp", NULL);
	int rc = -1;
	const char *step = "create";
	(void)g_mkdir_with_parents(dir, 0755);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		step = "write";
		if (write_all(fd, text, strlen(text)) == 0 && (step = "sync", fsync(fd) == 0)) {
			step = "close";
			if (close(fd) == 0) {
				step = "rename";
				rc = rename(tmp, path);
			}
			fd = -1;
		}
		if (fd >= 0)
			close(fd);
	}
	if (rc < 0) {
		LOG_E("SDB-0004", "cannot %s the SA database dump %s: %s", step, tmp, g_strerror(errno));
		unlink(tmp);
	} else {
		LOG_V("SDB-0006", "SA database written to %s", path);
		remember(sa, text);
	}
	g_free(tmp);
	g_free(path);
	g_free(text);
	return rc < 0 ? -1 : 0;
}

/* ---- reading ---- */

struct loader {
	struct sa *sa;
	const char *path;
	const struct fabric *f;
	struct sa_db_stats *st;
	unsigned line;
	int partial;
	struct mc_group *grp;  /* the group whose mcm_port lines follow (NULL: none) */
	int grp_new;           /* it was made by this load (deleted if no full member joins it) */
};

/* TAG's value after *cur (found anywhere further on the line, as OpenSM looks for it): hex up to
 * BITS bits, followed by a blank, ':' or the end. Moves *cur past it. */
static int field(const char **cur, const char *tag, unsigned bits, uint64_t *v, const char **what)
{
	const char *p = strstr(*cur, tag);
	if (!p) {
		*what = "missing";
		return -1;
	}
	p += strlen(tag);
	char *end;
	errno = 0;
	unsigned long long x = strtoull(p, &end, 16);
	if (end == p || errno || (bits < 64 && x >> bits) ||
	    (*end && *end != ' ' && *end != '\t' && *end != ':' && *end != '\r')) {
		*what = "not a hex number of its size";
		return -1;
	}
	*v = x;
	*cur = end;
	return 0;
}

#define FIELD(tag, bits, var) do { uint64_t v_; if (field(&cur, tag, bits, &v_, &what) < 0) { bad = tag; goto bad; } var = v_; } while (0)

static void group_done(struct loader *l)
{
	struct mc_group *grp = l->grp;
	l->grp = NULL;
	if (!grp || !l->grp_new || grp->n_full || grp->persistent)
		return;
	/* as OpenSM: a group none of whose full members came back is closed */
	mc_delete(l->sa->mc, grp);
	l->st->groups--;
	l->st->dropped_groups++;
}

static void refused(struct loader *l, const char *fmt, const char *detail)
{
	LOG_W("SDB-0005", "%s:%u: %s%s: not restored", l->path, l->line, fmt, detail ? detail : "");
	l->st->refused++;
	l->partial = 1;
}

static int load_group(struct loader *l, const char *cur)
{
	const char *what = NULL, *bad = NULL;
	uint8_t mgid[16];
	uint64_t mlid, hi, lo, qkey, mtu, tclass, pkey, rate, life, sfh, ss;
	FIELD(" 0x", 16, mlid);
	FIELD(" mgid=0x", 64, hi);
	FIELD(":0x", 64, lo);
	put_n(mgid, 8, hi);
	put_n(mgid + 8, 8, lo);
	FIELD(" port_gid=0x", 64, hi);
	FIELD(":0x", 64, lo);
	FIELD(" qkey=0x", 32, qkey);
	FIELD(" mlid=0x", 16, hi);
	FIELD(" mtu=0x", 8, mtu);
	FIELD(" tclass=0x", 8, tclass);
	FIELD(" pkey=0x", 16, pkey);
	FIELD(" rate=0x", 8, rate);
	FIELD(" pkt_life=0x", 8, life);
	FIELD(" sl_flow_hop=0x", 32, sfh);
	FIELD(" scope_state=0x", 8, ss);
	FIELD(" proxy_join=0x", 8, lo);
	struct mc_params p = {
		.qkey = (uint32_t)qkey, .pkey = (uint16_t)pkey, .tclass = (uint8_t)tclass,
		.mtu = (uint8_t)(mtu & 0x3f), .rate = (uint8_t)(rate & 0x3f),
		.packet_life = (uint8_t)(life & 0x3f), .sl = (uint8_t)(sfh >> 28),
		.flow_label = (uint32_t)(sfh >> 8) & 0xfffff, .hop_limit = (uint8_t)sfh,
		.scope = (uint8_t)(ss >> 4),
	};
	int existed;
	l->grp = mc_restore(l->sa->mc, mgid, (uint16_t)mlid, &p, &existed);
	l->grp_new = l->grp && !existed;
	if (!l->grp) {
		refused(l, "multicast group: its MLID is out of range or another group's, or its MGID has "
			"another MLID", NULL);
		return 0;
	}
	if (existed)
		l->st->kept++;
	else
		l->st->groups++;
	return 0;
bad:
	LOG_E("SDB-0002", "%s:%u: MC Group: %s after \"%s\": line skipped", l->path, l->line, what, bad);
	return -1;
}

static int load_member(struct loader *l, const char *cur)
{
	const char *what = NULL, *bad = NULL;
	uint64_t hi, lo, ss, proxy;
	FIELD(" port_gid=0x", 64, hi);
	FIELD(":0x", 64, lo);
	FIELD(" scope_state=0x", 8, ss);
	FIELD(" proxy_join=0x", 8, proxy);
	uint8_t gid[16];
	put_n(gid, 8, hi);
	put_n(gid + 8, 8, lo);
	if (!l->grp)
		return 0; /* its group was not restored (said already) */
	if (l->f && fabric_port_by_guid(l->f, lo) == IBSM_NONE) {
		l->st->refused++; /* a port gone: nothing of it to register again */
		LOG_V("SDB-0007", "%s:%u: port 0x%016" PRIx64 " is not in the fabric: no member of MLID 0x%04x",
		      l->path, l->line, lo, l->grp->mlid);
		return 0;
	}
	if (!(ss & MC_STATES)) {
		refused(l, "multicast member without a join state", NULL);
		return 0;
	}
	if (mc_member(l->grp, lo)) {
		l->st->kept++;
		return 0;
	}
	mc_join(l->sa->mc, l->grp, lo, gid, (uint8_t)(ss & MC_STATES), proxy != 0);
	l->st->members++;
	return 0;
bad:
	LOG_E("SDB-0002", "%s:%u: mcm_port: %s after \"%s\": line skipped", l->path, l->line, what, bad);
	return -1;
}

static int load_sub(struct loader *l, const char *cur)
{
	const char *what = NULL, *bad = NULL;
	uint64_t prefix, guid, en, hi, lo, begin, end, generic, sub, type, trap, qrt, prod, lid, v, qp;
	FIELD(" subscriber_gid=0x", 64, prefix);
	FIELD(":0x", 64, guid);
	FIELD(" subscriber_enum=0x", 16, en);
	FIELD(" gid=0x", 64, hi);
	FIELD(":0x", 64, lo);
	FIELD(" lid_range_begin=0x", 16, begin);
	FIELD(" lid_range_end=0x", 16, end);
	FIELD(" is_generic=0x", 8, generic);
	FIELD(" subscribe=0x", 8, sub);
	FIELD(" trap_type=0x", 16, type);
	FIELD(" trap_num=0x", 16, trap);
	FIELD(" qpn_resp_time_val=0x", 32, qrt);
	FIELD(" node_type=0x", 32, prod);
	FIELD(" rep_addr: lid=0x", 16, lid);
	FIELD(" path_bits=0x", 8, v);
	FIELD(" static_rate=0x", 8, v);
	FIELD(" remote_qp=0x", 32, qp);
	FIELD(" remote_qkey=0x", 32, v);
	FIELD(" pkey_ix=0x", 16, v);
	FIELD(" sl=0x", 8, v);
	(void)v; /* the rest of OpenSM's report address: ibsm reports to LID and QPN on QP1's Q_Key */
	uint8_t ii[II_SIZE] = { 0 };
	put_n(ii, 8, hi);
	put_n(ii + 8, 8, lo);
	put_n(ii + 16, 2, begin);
	put_n(ii + 18, 2, end);
	ii[22] = (uint8_t)generic;
	ii[23] = (uint8_t)sub;
	put_n(ii + 24, 2, type);
	put_n(ii + 26, 2, trap);
	put_n(ii + 28, 4, qrt);
	put_n(ii + 33, 3, prod);
	if (sub != 1 || generic > 1 || !lid) {
		refused(l, "InformInfo: not a subscription (Subscribe 1, IsGeneric 0 or 1, a LID to "
			"report to)", NULL);
		return 0;
	}
	struct sa_inform_sub x = { .guid = guid, .prefix = prefix, .lid = (uint16_t)lid,
				   .enumv = (uint16_t)en, .qpn = (uint32_t)qp & 0xffffff, .ii = ii };
	int rc = sa_inform_restore(l->sa->inform, &x);
	if (rc < 0)
		refused(l, "InformInfo: the SA holds as many subscriptions as it takes", NULL);
	else if (rc)
		l->st->kept++;
	else
		l->st->subscriptions++;
	return 0;
bad:
	LOG_E("SDB-0002", "%s:%u: InformInfo Record: %s after \"%s\": line skipped", l->path, l->line,
	      what, bad);
	return -1;
}

/* 'TEXT' (or "TEXT", or up to a blank) after " name=" into 64 bytes, NUL-padded. */
static int name_field(const char **cur, uint8_t *out)
{
	const char *p = strstr(*cur, " name=");
	if (!p)
		return -1;
	p += 6;
	char delim = ' ';
	if (*p == '\'' || *p == '"')
		delim = *p++;
	const char *e = p;
	while (*e && *e != delim && *e != '\n')
		e++;
	if (delim != ' ' && *e != delim)
		return -1;
	memset(out, 0, 64);
	memcpy(out, p, (size_t)MIN(e - p, 63));
	*cur = *e ? e + 1 : e;
	return 0;
}

static int load_service(struct loader *l, const char *cur)
{
	const char *what = NULL, *bad = NULL;
	uint8_t rec[SR_SIZE] = { 0 };
	uint64_t v, w, modified, period;
	static const struct { const char *tag; int at; } pairs[] = {
		{ " key=0x", 32 }, { " data8=0x", 112 }, { " data16=0x", 128 }, { " data32=0x", 144 },
		{ " data64=0x", 160 },
	};
	FIELD(" id=0x", 64, v);
	put_n(rec, 8, v);
	FIELD(" gid=0x", 64, v);
	FIELD(":0x", 64, w);
	put_n(rec + 8, 8, v);
	put_n(rec + 16, 8, w);
	FIELD(" pkey=0x", 16, v);
	put_n(rec + 24, 2, v);
	FIELD(" lease=0x", 32, v);
	put_n(rec + 28, 4, v);
	for (size_t i = 0; i < G_N_ELEMENTS(pairs); i++) {
		if (i == 1 && name_field(&cur, rec + 48) < 0) {
			what = "missing or unterminated";
			bad = " name=";
			goto bad;
		}
		FIELD(pairs[i].tag, 64, v);
		FIELD(":0x", 64, w);
		put_n(rec + pairs[i].at, 8, v);
		put_n(rec + pairs[i].at + 8, 8, w);
	}
	FIELD(" modified_time=0x", 32, modified);
	FIELD(" lease_period=0x", 32, period);
	double expires = 0;
	if (period != LEASE_FOREVER) {
		double left = (double)period - ((double)g_get_real_time() / 1e6 - (double)modified);
		if (left <= 0) {
			LOG_V("SDB-0007", "%s:%u: ServiceRecord 0x%016" PRIx64 ": its lease ran out: not restored",
			      l->path, l->line, be_n(rec, 8));
			return 0;
		}
		expires = phase_now() + left;
	}
	/* the owner: the port of its ServiceGID (OpenSM's file does not say who registered it) */
	struct sr_owner owner = { .port = be_n(rec + 16, 8) };
	int rc = sa_service_restore(l->sa->svc, rec, expires, &owner);
	if (rc < 0)
		refused(l, "ServiceRecord: the SA holds as many services as it takes", NULL);
	else if (rc)
		l->st->kept++;
	else
		l->st->services++;
	return 0;
bad:
	LOG_E("SDB-0002", "%s:%u: Service Record: %s after \"%s\": line skipped", l->path, l->line, what, bad);
	return -1;
}

int sa_db_load(struct sa *sa, const char *path, const struct fabric *f, struct sa_db_stats *st)
{
	struct sa_db_stats dummy;
	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	char *text = NULL;
	size_t len = 0;
	GError *err = NULL;
	if (file_read_setting("sa_db_file", path, FILE_CAP_TEXT, &text, &len, &err) < 0) {
		LOG_E("SDB-0003", "%s: the SA database is not restored", err->message);
		g_error_free(err);
		return -1;
	}
	struct loader l = { .sa = sa, .path = path, .f = f, .st = st };
	char *save = NULL;
	/* line by line, counting empty ones: strtok_r would skip them */
	for (char *line = text; line; line = save) {
		save = strchr(line, '\n');
		if (save)
			*save++ = 0;
		l.line++;
		const char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#' || *p == '\r')
			continue;
		int rc = 0;
		if (!strncmp(p, "MC Group", 8)) {
			group_done(&l);
			rc = load_group(&l, p + 8);
		} else if (!strncmp(p, "mcm_port", 8)) {
			rc = load_member(&l, p + 8);
		} else if (!strncmp(p, "InformInfo Record:", 18)) {
			group_done(&l);
			rc = load_sub(&l, p + 18);
		} else if (!strncmp(p, "Service Record:", 15)) {
			group_done(&l);
			rc = load_service(&l, p + 15);
		} else if (!strncmp(p, "GUIDInfo Record:", 16)) {
			group_done(&l); /* alias GUIDs: ibsm assigns none */
		} else {
			LOG_E("SDB-0002", "%s:%u: not a record of an SA database dump: line skipped", path, l.line);
			rc = -1;
		}
		if (rc < 0) {
			st->bad_lines++;
			l.partial = 1;
		}
	}
	group_done(&l);
	g_free(text);
	LOG_I("SDB-0001", "SA database %s restored: %u multicast groups (%u members), %u ServiceRecords, "
	      "%u subscriptions; %u already there, %u not restored, %u lines skipped, %u groups closed "
	      "without a full member", path, st->groups, st->members, st->services, st->subscriptions,
	      st->kept, st->refused, st->bad_lines, st->dropped_groups);
	char *now = sa_db_text(sa);
	remember(sa, now);
	g_free(now);
	return l.partial ? 1 : 0;
}
