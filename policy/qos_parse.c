/* SPDX-License-Identifier: BSD-2-Clause */
/* qos_parse.c - reads OpenSM's QoS policy file (qos-policy.conf; OpenSM's doc/QoS_management_in_OpenSM.txt, NVIDIA's SM manual "Quality of Service Management in OpenSM") into a
 * struct qos_policy. It exists because OpenSM's own reader is a flex/bison pair with global
 * state that reports "line:col" to a log and half-builds its policy; this one is a small
 * hand-written line reader that refuses the whole file with "FILE:LINE:COL: what" (the
 * caller keeps the policy in force) and never crashes on any input.
 * How it reads: blank lines and '#' comments (outside double quotes) are dropped; a keyword
 * is the first word of a line; "key: value" takes the rest of the line, and a list goes on
 * over the next line when the line ends with ',' or the next one starts with ','. Section
 * and field keywords are lower case, ULP names and node types any case (OpenSM's lexer).
 * Port-group and QoS-level names are compared without case or blanks (OpenSM drops the
 * blanks of a name and looks names up with strcasecmp) and resolved at the end of the file,
 * so a rule may name a group defined further down. */
#include <string.h>
#include "policy/lines.h"
#include "policy/numbers.h"
#include "policy/qos_policy.h"

G_DEFINE_QUARK(ibsm-qos-policy-error-quark, qos_policy_error)

/* Service IDs of the qos-ulps lines (OpenSM's osm_qos_policy.h). The iSER default port is
 * OpenSM's 0x0CBC (3260); the QoS text first added to opensm(8) (2008) says 0x035C, which OpenSM never used. */
#define ULP_SDP_SID        0x0000000000010000ull
#define ULP_RDS_SID        0x0000000001060000ull
#define ULP_RDS_PORT       0x48CAull
#define ULP_ISER_SID       0x0000000001060000ull
#define ULP_ISER_PORT      0x0CBCull
#define IPOIB_DEFAULT_PKEY 0x7fff

/* ---- frames: the sections and blocks that open and close ------------------------------ */

enum frame {
	FR_TOP, FR_PORT_GROUPS, FR_PORT_GROUP, FR_QOS_SETUP, FR_VLARB_TABLES, FR_VLARB_SCOPE,
	FR_SL2VL_TABLES, FR_SL2VL_SCOPE, FR_QOS_LEVELS, FR_QOS_LEVEL, FR_MATCH_RULES,
	FR_MATCH_RULE, FR_ULPS, FR_N
};

static const struct {
	const char *name;
	enum frame parent;
} frames[FR_N] = {
	[FR_TOP] = { "top level", FR_TOP },
	[FR_PORT_GROUPS] = { "port-groups", FR_TOP },
	[FR_PORT_GROUP] = { "port-group", FR_PORT_GROUPS },
	[FR_QOS_SETUP] = { "qos-setup", FR_TOP },
	[FR_VLARB_TABLES] = { "vlarb-tables", FR_QOS_SETUP },
	[FR_VLARB_SCOPE] = { "vlarb-scope", FR_VLARB_TABLES },
	[FR_SL2VL_TABLES] = { "sl2vl-tables", FR_QOS_SETUP },
	[FR_SL2VL_SCOPE] = { "sl2vl-scope", FR_SL2VL_TABLES },
	[FR_QOS_LEVELS] = { "qos-levels", FR_TOP },
	[FR_QOS_LEVEL] = { "qos-level", FR_QOS_LEVELS },
	[FR_MATCH_RULES] = { "qos-match-rules", FR_TOP },
	[FR_MATCH_RULE] = { "qos-match-rule", FR_MATCH_RULES },
	[FR_ULPS] = { "qos-ulps", FR_TOP },
};

/* ---- fields: "key: value" lines and the blocks they belong to ---------------------------- */

enum field {
	FD_NAME, FD_USE, FD_PORT_GUID, FD_PORT_NAME, FD_PKEY, FD_PARTITION, FD_NODE_TYPE,
	FD_GROUP, FD_ACROSS, FD_VLARB_HIGH, FD_VLARB_LOW, FD_VL_HIGH_LIMIT, FD_TO, FD_FROM,
	FD_ACROSS_TO, FD_ACROSS_FROM, FD_SL2VL_TABLE, FD_SL, FD_MTU_LIMIT, FD_RATE_LIMIT,
	FD_PACKET_LIFE, FD_PATH_BITS, FD_QOS_CLASS, FD_SOURCE, FD_DESTINATION, FD_SERVICE_ID,
	FD_QOS_LEVEL_NAME
};

#define B(f) (1u << (f))
static const struct {
	const char *kw;
	enum field f;
	unsigned in;        /* B(frame) where it may appear */
} fields[] = {
	{ "name", FD_NAME, B(FR_PORT_GROUP) | B(FR_QOS_LEVEL) },
	{ "use", FD_USE, B(FR_PORT_GROUP) | B(FR_QOS_LEVEL) | B(FR_MATCH_RULE) },
	{ "port-guid", FD_PORT_GUID, B(FR_PORT_GROUP) },
	{ "port-name", FD_PORT_NAME, B(FR_PORT_GROUP) },
	{ "pkey", FD_PKEY, B(FR_PORT_GROUP) | B(FR_QOS_LEVEL) | B(FR_MATCH_RULE) },
	{ "partition", FD_PARTITION, B(FR_PORT_GROUP) },
	{ "node-type", FD_NODE_TYPE, B(FR_PORT_GROUP) },
	{ "group", FD_GROUP, B(FR_VLARB_SCOPE) | B(FR_SL2VL_SCOPE) },
	{ "across", FD_ACROSS, B(FR_VLARB_SCOPE) | B(FR_SL2VL_SCOPE) },
	{ "vlarb-high", FD_VLARB_HIGH, B(FR_VLARB_SCOPE) },
	{ "vlarb-low", FD_VLARB_LOW, B(FR_VLARB_SCOPE) },
	{ "vl-high-limit", FD_VL_HIGH_LIMIT, B(FR_VLARB_SCOPE) },
	{ "to", FD_TO, B(FR_SL2VL_SCOPE) },
	{ "from", FD_FROM, B(FR_SL2VL_SCOPE) },
	{ "across-to", FD_ACROSS_TO, B(FR_SL2VL_SCOPE) },
	{ "across-from", FD_ACROSS_FROM, B(FR_SL2VL_SCOPE) },
	{ "sl2vl-table", FD_SL2VL_TABLE, B(FR_SL2VL_SCOPE) },
	{ "sl", FD_SL, B(FR_QOS_LEVEL) },
	{ "mtu-limit", FD_MTU_LIMIT, B(FR_QOS_LEVEL) },
	{ "rate-limit", FD_RATE_LIMIT, B(FR_QOS_LEVEL) },
	{ "packet-life", FD_PACKET_LIFE, B(FR_QOS_LEVEL) },
	{ "path-bits", FD_PATH_BITS, B(FR_QOS_LEVEL) },
	{ "qos-class", FD_QOS_CLASS, B(FR_MATCH_RULE) },
	{ "source", FD_SOURCE, B(FR_MATCH_RULE) },
	{ "destination", FD_DESTINATION, B(FR_MATCH_RULE) },
	{ "service-id", FD_SERVICE_ID, B(FR_MATCH_RULE) },
	{ "qos-level-name", FD_QOS_LEVEL_NAME, B(FR_MATCH_RULE) },
};

/* What a number may be, for its messages. */
struct numspec {
	const char *what;
	uint64_t min, max;
	int hex;            /* print the bounds in hex */
};

static const struct numspec NS_GUID = { "port GUID", 0, UINT64_MAX, 1 };
static const struct numspec NS_PKEY = { "P_Key", 0, 0xffff, 1 };
static const struct numspec NS_SL = { "SL", 0, 15, 0 };
static const struct numspec NS_MTU = { "MTU limit", 1, 5, 0 };
/* OpenSM 3.3.23: IB_MIN_RATE (2, 2.5 Gb/s) to IB_MAX_RATE (18, 300 Gb/s) */
static const struct numspec NS_RATE = { "rate limit", 2, 18, 0 };
static const struct numspec NS_LIFE = { "packet life", 0, 31, 0 };
static const struct numspec NS_PATH_BITS = { "path bits", 0, 127, 0 };
static const struct numspec NS_QOS_CLASS = { "QoS class", 0, 0xfff, 0 };
static const struct numspec NS_SID = { "service ID", 0, UINT64_MAX, 1 };
static const struct numspec NS_VL = { "VL", 0, 15, 0 };
static const struct numspec NS_WEIGHT = { "weight", 0, 255, 0 };
static const struct numspec NS_HIGH_LIMIT = { "vl-high-limit", 0, 255, 0 };
/* OpenSM: OSM_QOS_POLICY_MAX_PORTS_ON_SWITCH (128) */
static const struct numspec NS_SW_PORT = { "switch port", 0, 127, 0 };
static const struct numspec NS_PORT_NUM = { "port number", 1, 254, 0 };
static const struct numspec NS_TCP_PORT = { "TCP port", 0, 0xffff, 0 };

/* ---- the parser's state ----------------------------------------------------------------- */

struct cur {            /* a place in a line */
	struct policy_line ln;  /* its text without comment and trailing blanks */
	size_t i;
};

struct item {           /* one element of a comma-separated list */
	const char *s;
	size_t n;
	unsigned line, col;
	int quoted;
};

struct ref {            /* a name a rule refers to, and where */
	char *name;
	unsigned line, col;
};

struct rule_src {       /* a rule being read, and what it names */
	struct qos_match_rule *r;
	GArray *src, *dst;              /* struct ref: port-group names (qos-match-rules) */
	struct qos_port_group *gen_src, *gen_dst;     /* generated groups (qos-ulps) */
	struct qos_level *level;        /* qos-ulps: its SL level */
	struct ref level_name;          /* qos-match-rules: its qos-level-name */
};

struct parser {
	const char *text;
	size_t len;
	struct policy_report rep;
	size_t pos;         /* the next line not read */
	unsigned line_no;   /* its number */
	struct qos_policy *pol;
	struct {
		enum frame f;
		unsigned line, col;
	} st[4];
	int depth;
	unsigned entries;   /* port-groups / qos-ulps: entries in the open section */
	struct qos_port_group *group;   /* the block being read */
	struct qos_level *level;
	struct rule_src *rule;
	int scope_groups, scope_table, seen_vl_limit;  /* the qos-setup scope being read */
	unsigned seen;      /* B(field) seen in the block being read */
	GPtrArray *gen_groups;          /* generated port groups (qos-ulps) */
	GPtrArray *rules;               /* struct rule_src: qos-match-rules */
	GPtrArray *ulps_rules;          /* struct rule_src: qos-ulps */
	struct qos_level *sl_levels[16];
	GHashTable *group_names, *level_names;   /* name key -> first line */
	int ulps_default;               /* -1: no "default : SL" */
	unsigned ulps_default_line, ulps_default_col;
};

/* ---- messages --------------------------------------------------------------------------- */

/* The file is refused, or a note taken, at line:col. */
#define fail(ps, line, col, ...) policy_fail(&(ps)->rep, line, col, __VA_ARGS__)
#define note(ps, line, col, ...) policy_note(&(ps)->rep, line, col, __VA_ARGS__)

/* ---- lines and cursors ------------------------------------------------------------------ */

/* Reads the line at pos (pos < len): its text ends at a '#' outside double quotes. -1 (error
 * set) on a NUL byte or a quote left open. */
static int read_line(struct parser *ps, size_t pos, unsigned no, struct policy_line *ln)
{
	if (policy_line_at(&ps->rep, ps->text, ps->len, pos, no, ln) < 0)
		return -1;
	size_t cut = SIZE_MAX, quote = SIZE_MAX;
	for (size_t i = pos; i < ln->end && cut == SIZE_MAX; i++) {
		if (ps->text[i] == '"')
			quote = quote == SIZE_MAX ? i : SIZE_MAX;
		else if (ps->text[i] == '#' && quote == SIZE_MAX)
			cut = i;
	}
	if (quote != SIZE_MAX) {
		fail(ps, no, policy_col(pos, quote), "'\"' not closed on its line");
		return -1;
	}
	if (cut != SIZE_MAX)
		ln->end = cut;
	while (ln->end > pos && policy_is_blank(ps->text[ln->end - 1]))
		ln->end--;
	return 0;
}

static void skip_blanks(const struct parser *ps, struct cur *c)
{
	while (c->i < c->ln.end && policy_is_blank(ps->text[c->i]))
		c->i++;
}

static int at_end(const struct cur *c)
{
	return c->i >= c->ln.end;
}

static unsigned col_of(const struct cur *c)
{
	return (unsigned)(c->i - c->ln.start + 1);
}

/* The next line with something on it, from ps->pos; 1 found, 0 end of file, -1 error.
 * Nothing is consumed: commit() does. */
static int peek_content_line(struct parser *ps, struct cur *c)
{
	size_t pos = ps->pos;
	unsigned no = ps->line_no;
	while (pos < ps->len) {
		if (read_line(ps, pos, no, &c->ln) < 0)
			return -1;
		c->i = c->ln.start;
		skip_blanks(ps, c);
		if (!at_end(c))
			return 1;
		pos = c->ln.next;
		no++;
	}
	return 0;
}

static void commit(struct parser *ps, const struct cur *c)
{
	ps->pos = c->ln.next;
	ps->line_no = c->ln.no + 1;
}

/* Where the file ends (for what is missing at its end). */
static void eof_pos(const struct parser *ps, unsigned *line, unsigned *col)
{
	unsigned l = 1, cl = 1;
	for (size_t i = 0; i < ps->len; i++) {
		if (ps->text[i] == '\n') {
			l++;
			cl = 1;
		} else {
			cl++;
		}
	}
	*line = l;
	*col = cl;
}

/* ---- lists ------------------------------------------------------------------------------ */

/* One item at c (c is on its first character): a quoted string, or text up to ',' / stop /
 * the end of the line. */
static int read_item(struct parser *ps, struct cur *c, char stop, struct item *it)
{
	const char *t = ps->text;
	it->line = c->ln.no;
	it->col = col_of(c);
	it->quoted = 0;
	if (t[c->i] == '"') {
		size_t close = c->i + 1;
		while (close < c->ln.end && t[close] != '"')
			close++;
		if (close >= c->ln.end) {       /* its close is past a '#': never, but be safe */
			fail(ps, it->line, it->col, "'\"' not closed on its line");
			return -1;
		}
		it->s = t + c->i + 1;
		it->n = close - c->i - 1;
		it->quoted = 1;
		c->i = close + 1;
		skip_blanks(ps, c);
		if (!at_end(c) && t[c->i] != ',' && t[c->i] != stop) {
			fail(ps, c->ln.no, col_of(c), "unexpected text after a quoted string");
			return -1;
		}
		return 0;
	}
	size_t b = c->i;
	while (c->i < c->ln.end && t[c->i] != ',' && t[c->i] != stop) {
		if (t[c->i] == '"') {
			fail(ps, c->ln.no, col_of(c), "'\"' inside a value (quote the whole item)");
			return -1;
		}
		c->i++;
	}
	size_t e = c->i;
	while (e > b && policy_is_blank(t[e - 1]))
		e--;
	it->s = t + b;
	it->n = e - b;
	return 0;
}

/* Reads a comma-separated list from c into items (struct item). With multi, a ',' at the
 * end of a line or at the start of the next one carries the list over (OpenSM's lexer ignores
 * line ends inside a list). Stops at the end of the line or at stop (c is left on it). */
static int read_items(struct parser *ps, struct cur *c, char stop, int multi, GArray *items)
{
	int need = 1;
	for (;;) {
		skip_blanks(ps, c);
		if (need) {
			if (at_end(c) && items->len > 0 && multi) {
				struct cur n;
				int r = peek_content_line(ps, &n);
				if (r < 0)
					return -1;
				if (r > 0) {
					commit(ps, &n);
					*c = n;
					continue;
				}
			}
			if (at_end(c) || ps->text[c->i] == ',' || ps->text[c->i] == stop) {
				fail(ps, c->ln.no, col_of(c), items->len ? "missing value after ','"
					 : "missing value");
				return -1;
			}
			struct item it;
			if (read_item(ps, c, stop, &it) < 0)
				return -1;
			g_array_append_val(items, it);
			need = 0;
			continue;
		}
		if (at_end(c)) {
			if (!multi)
				return 0;
			struct cur n;
			int r = peek_content_line(ps, &n);
			if (r < 0)
				return -1;
			if (r > 0 && ps->text[n.i] == ',') {
				commit(ps, &n);
				*c = n;
				continue;
			}
			return 0;
		}
		if (ps->text[c->i] == stop)
			return 0;
		c->i++;         /* the ',' */
		need = 1;
	}
}

/* ---- numbers ---------------------------------------------------------------------------- */

static int number(struct parser *ps, const char *s, size_t n, unsigned line, unsigned col,
		  const struct numspec *sp, uint64_t *out)
{
	int r = n ? policy_parse_u64(s, n, out) : -1;
	if (r == -1) {
		fail(ps, line, col, "bad number '%.*s' for %s (decimal, or hex with 0x)",
		     POLICY_SHOW(s, n), sp->what);
		return -1;
	}
	if (r == -2 || *out < sp->min || *out > sp->max) {
		if (sp->hex)
			fail(ps, line, col, "%s %.*s out of range (0x%llx-0x%llx)", sp->what,
			     POLICY_SHOW(s, n), (unsigned long long)sp->min,
			     (unsigned long long)sp->max);
		else
			fail(ps, line, col, "%s %.*s out of range (%llu-%llu)", sp->what,
			     POLICY_SHOW(s, n), (unsigned long long)sp->min,
			     (unsigned long long)sp->max);
		return -1;
	}
	return 0;
}

static void trim(const char **s, size_t *n, unsigned *col)
{
	while (*n && policy_is_blank(**s)) {
		(*s)++;
		(*n)--;
		(*col)++;
	}
	while (*n && policy_is_blank((*s)[*n - 1]))
		(*n)--;
}

/* "a" or "a-b" (b < a: swapped, with a note). */
static int item_range(struct parser *ps, const struct item *it, const struct numspec *sp,
		      struct qos_range *r)
{
	if (it->quoted) {
		fail(ps, it->line, it->col, "bad number '\"%.*s\"' for %s", POLICY_SHOW(it->s, it->n),
		     sp->what);
		return -1;
	}
	const char *dash = memchr(it->s, '-', it->n);
	if (!dash)
		return number(ps, it->s, it->n, it->line, it->col, sp, &r->lo) < 0 ? -1 :
		       (r->hi = r->lo, 0);
	const char *a = it->s, *b = dash + 1;
	size_t an = (size_t)(dash - it->s), bn = it->n - an - 1;
	unsigned acol = it->col, bcol = it->col + (unsigned)an + 1;
	trim(&a, &an, &acol);
	trim(&b, &bn, &bcol);
	if (!an || !bn) {       /* "-2", "1-": a negative number, half a range */
		fail(ps, it->line, it->col, "bad number '%.*s' for %s (decimal, or hex with 0x)",
		     POLICY_SHOW(it->s, it->n), sp->what);
		return -1;
	}
	if (number(ps, a, an, it->line, acol, sp, &r->lo) < 0 ||
	    number(ps, b, bn, it->line, bcol, sp, &r->hi) < 0)
		return -1;
	if (r->lo > r->hi) { /* OpenSM takes it, bounds swapped: so do we, and say so */
		note(ps, it->line, it->col, "range '%.*s' read as %" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT
		     " (the lower bound comes first)", POLICY_SHOW(it->s, it->n), (guint64)r->hi,
		     (guint64)r->lo);
		uint64_t t = r->lo;
		r->lo = r->hi;
		r->hi = t;
	}
	return 0;
}

/* A list of numbers and ranges appended to out. */
static int range_list(struct parser *ps, struct cur *c, char stop, int multi,
		      const struct numspec *sp, GArray *out)
{
	GArray *items = g_array_new(FALSE, FALSE, sizeof(struct item));
	int rc = read_items(ps, c, stop, multi, items);
	for (guint i = 0; rc == 0 && i < items->len; i++) {
		struct qos_range r;
		rc = item_range(ps, &g_array_index(items, struct item, i), sp, &r);
		if (rc == 0)
			g_array_append_val(out, r);
	}
	g_array_free(items, TRUE);
	return rc;
}

/* P_Keys: the 0x8000 (full member) bit is dropped; a range over 0x8000 becomes the 15-bit
 * keys it names. */
static void add_pkey_ranges(GArray *out, const GArray *raw)
{
	for (guint i = 0; i < raw->len; i++) {
		struct qos_range r = g_array_index(raw, struct qos_range, i);
		if ((r.lo & 0x8000) == (r.hi & 0x8000)) {
			struct qos_range m = { r.lo & 0x7fff, r.hi & 0x7fff };
			g_array_append_val(out, m);
		} else if ((r.hi & 0x7fff) + 1 >= r.lo) {
			struct qos_range m = { 0, 0x7fff };
			g_array_append_val(out, m);
		} else {
			struct qos_range m1 = { r.lo, 0x7fff }, m2 = { 0, r.hi & 0x7fff };
			g_array_append_val(out, m1);
			g_array_append_val(out, m2);
		}
	}
}

static int pkey_list(struct parser *ps, struct cur *c, char stop, int multi, GArray *out)
{
	GArray *raw = g_array_new(FALSE, FALSE, sizeof(struct qos_range));
	int rc = range_list(ps, c, stop, multi, &NS_PKEY, raw);
	if (rc == 0)
		add_pkey_ranges(out, raw);
	g_array_free(raw, TRUE);
	return rc;
}

/* One number filling the rest of the line. */
static int single_number(struct parser *ps, struct cur *c, const struct numspec *sp, uint64_t *v)
{
	unsigned col = col_of(c);
	const char *s = ps->text + c->i;
	size_t n = c->ln.end - c->i;
	c->i = c->ln.end;
	return number(ps, s, n, c->ln.no, col, sp, v);
}

/* ---- objects ---------------------------------------------------------------------------- */

static struct qos_port_group *group_new(unsigned line)
{
	struct qos_port_group *g = g_new0(struct qos_port_group, 1);
	g->guids = g_array_new(FALSE, FALSE, sizeof(struct qos_range));
	g->names = g_array_new(FALSE, FALSE, sizeof(struct qos_port_name));
	g->pkeys = g_array_new(FALSE, FALSE, sizeof(struct qos_range));
	g->partitions = g_ptr_array_new_with_free_func(g_free);
	g->line = line;
	return g;
}

static void group_free(gpointer data)
{
	struct qos_port_group *g = data;
	if (!g)
		return;
	g_free(g->name);
	g_free(g->use);
	g_array_free(g->guids, TRUE);
	for (guint i = 0; i < g->names->len; i++)
		g_free(g_array_index(g->names, struct qos_port_name, i).desc);
	g_array_free(g->names, TRUE);
	g_array_free(g->pkeys, TRUE);
	g_ptr_array_free(g->partitions, TRUE);
	g_free(g);
}

static struct qos_level *level_new(unsigned line)
{
	struct qos_level *l = g_new0(struct qos_level, 1);
	l->sl = l->mtu_limit = l->rate_limit = l->packet_life = -1;
	l->path_bits = g_array_new(FALSE, FALSE, sizeof(struct qos_range));
	l->pkeys = g_array_new(FALSE, FALSE, sizeof(struct qos_range));
	l->line = line;
	return l;
}

static void level_free(gpointer data)
{
	struct qos_level *l = data;
	if (!l)
		return;
	g_free(l->name);
	g_free(l->use);
	g_array_free(l->path_bits, TRUE);
	g_array_free(l->pkeys, TRUE);
	g_free(l);
}

static struct qos_match_rule *rule_new(unsigned line)
{
	struct qos_match_rule *r = g_new0(struct qos_match_rule, 1);
	r->qos_class = g_array_new(FALSE, FALSE, sizeof(struct qos_range));
	r->service_id = g_array_new(FALSE, FALSE, sizeof(struct qos_range));
	r->pkey = g_array_new(FALSE, FALSE, sizeof(struct qos_range));
	r->source = g_array_new(FALSE, FALSE, sizeof(guint));
	r->destination = g_array_new(FALSE, FALSE, sizeof(guint));
	r->line = line;
	return r;
}

static void rule_free(gpointer data)
{
	struct qos_match_rule *r = data;
	if (!r)
		return;
	g_free(r->use);
	g_array_free(r->qos_class, TRUE);
	g_array_free(r->service_id, TRUE);
	g_array_free(r->pkey, TRUE);
	g_array_free(r->source, TRUE);
	g_array_free(r->destination, TRUE);
	g_free(r);
}

static void refs_free(GArray *refs)
{
	for (guint i = 0; i < refs->len; i++)
		g_free(g_array_index(refs, struct ref, i).name);
	g_array_free(refs, TRUE);
}

static struct rule_src *rule_src_new(unsigned line)
{
	struct rule_src *rs = g_new0(struct rule_src, 1);
	rs->r = rule_new(line);
	rs->src = g_array_new(FALSE, FALSE, sizeof(struct ref));
	rs->dst = g_array_new(FALSE, FALSE, sizeof(struct ref));
	return rs;
}

static void rule_src_free(gpointer data)
{
	struct rule_src *rs = data;
	if (!rs)
		return;
	rule_free(rs->r);
	refs_free(rs->src);
	refs_free(rs->dst);
	g_free(rs->level_name.name);
	g_free(rs);
}

/* Names compare as OpenSM compares them: blanks dropped (its lexer skips them), no case. */
static char *name_key(const char *s)
{
	GString *k = g_string_new(NULL);
	for (; *s; s++)
		if (!policy_is_blank(*s))
			g_string_append_c(k, g_ascii_tolower(*s));
	return g_string_free(k, FALSE);
}

/* ---- field values ----------------------------------------------------------------------- */

/* The rest of the line as one text (a quoted one loses its quotes). */
static char *rest_text(struct parser *ps, struct cur *c, const char *key, int one_name)
{
	const char *s = ps->text + c->i;
	size_t n = c->ln.end - c->i;
	unsigned col = col_of(c);
	c->i = c->ln.end;
	if (n >= 2 && s[0] == '"' && s[n - 1] == '"' && !memchr(s + 1, '"', n - 2)) {
		s++;
		n -= 2;
	}
	if (one_name) {
		const char *comma = memchr(s, ',', n);
		if (comma) {
			fail(ps, c->ln.no, col + (unsigned)(comma - s), "'%s' takes one name, not a list",
			     key);
			return NULL;
		}
		if (!n) {
			fail(ps, c->ln.no, col, "missing value after '%s:'", key);
			return NULL;
		}
	}
	return g_strndup(s, n);
}

/* A list of names (partitions, port groups). */
static int name_list(struct parser *ps, struct cur *c, GArray *refs_out, GPtrArray *names_out)
{
	GArray *items = g_array_new(FALSE, FALSE, sizeof(struct item));
	int rc = read_items(ps, c, 0, 1, items);
	for (guint i = 0; rc == 0 && i < items->len; i++) {
		const struct item *it = &g_array_index(items, struct item, i);
		if (!it->n) {
			fail(ps, it->line, it->col, "empty name");
			rc = -1;
		} else if (refs_out) {
			struct ref r = { g_strndup(it->s, it->n), it->line, it->col };
			g_array_append_val(refs_out, r);
		} else if (names_out) {
			g_ptr_array_add(names_out, g_strndup(it->s, it->n));
		}
	}
	g_array_free(items, TRUE);
	return rc;
}

/* "node description/P<n>": the port number follows the last '/'. 0 when it is none (no
 * message) or a bad one (with message), 1 when it is one (added to out, if out). */
static int port_name(struct parser *ps, const char *s, size_t n, unsigned line, unsigned col,
		     GArray *out)
{
	unsigned c0 = col;
	trim(&s, &n, &c0);
	const char *slash = n ? memrchr(s, '/', n) : NULL;
	size_t dn = slash ? (size_t)(slash - s) : 0;
	if (!slash || dn == 0 || n - dn < 3 || (slash[1] != 'P' && slash[1] != 'p')) {
		if (out)
			fail(ps, line, c0, "bad port name '%.*s' (node description/P<port number>)",
			     POLICY_SHOW(s, n));
		return 0;
	}
	uint64_t port;
	if (!out)
		return policy_parse_u64(slash + 2, n - dn - 2, &port) == 0 && port >= NS_PORT_NUM.min &&
		       port <= NS_PORT_NUM.max;
	if (number(ps, slash + 2, n - dn - 2, line, c0 + (unsigned)dn + 2, &NS_PORT_NUM, &port) < 0)
		return 0;
	struct qos_port_name pn = { g_strndup(s, dn), (unsigned)port };
	g_array_append_val(out, pn);
	return 1;
}

/* A quoted item with commas: each piece a port name? */
static int quoted_is_list(struct parser *ps, const struct item *it)
{
	const char *s = it->s, *end = it->s + it->n;
	for (;;) {
		const char *comma = memchr(s, ',', (size_t)(end - s));
		const char *e = comma ? comma : end;
		if (!port_name(ps, s, (size_t)(e - s), 0, 0, NULL))
			return 0;
		if (!comma)
			return 1;
		s = comma + 1;
	}
}

/* port-name: a list; an item in quotes keeps its blanks and commas, except that a quoted
 * list of port names (NVIDIA's manual writes one) is read as that list. */
static int port_names(struct parser *ps, struct cur *c, GArray *out)
{
	GArray *items = g_array_new(FALSE, FALSE, sizeof(struct item));
	int rc = read_items(ps, c, 0, 1, items);
	for (guint i = 0; rc == 0 && i < items->len; i++) {
		const struct item *it = &g_array_index(items, struct item, i);
		if (!it->quoted || !memchr(it->s, ',', it->n) || !quoted_is_list(ps, it)) {
			rc = port_name(ps, it->s, it->n, it->line, it->col + (unsigned)it->quoted,
				       out) ? 0 : -1;
			continue;
		}
		note(ps, it->line, it->col, "port-name: the quoted list is read as comma-separated "
		     "names; OpenSM 3.3.23 reads it as one name");
		const char *s = it->s, *end = it->s + it->n;
		while (rc == 0 && s <= end) {
			const char *comma = memchr(s, ',', (size_t)(end - s));
			const char *e = comma ? comma : end;
			rc = port_name(ps, s, (size_t)(e - s), it->line,
				       it->col + 1 + (unsigned)(s - it->s), out) ? 0 : -1;
			s = e + 1;
		}
	}
	g_array_free(items, TRUE);
	return rc;
}

static int node_types(struct parser *ps, struct cur *c, unsigned *out)
{
	static const struct {
		const char *name;
		unsigned flags;
	} types[] = {
		{ "CA", QOS_NT_CA }, { "SWITCH", QOS_NT_SWITCH }, { "ROUTER", QOS_NT_ROUTER },
		{ "SELF", QOS_NT_SELF }, { "ALL", QOS_NT_CA | QOS_NT_SWITCH | QOS_NT_ROUTER },
	};
	GArray *items = g_array_new(FALSE, FALSE, sizeof(struct item));
	int rc = read_items(ps, c, 0, 1, items);
	for (guint i = 0; rc == 0 && i < items->len; i++) {
		const struct item *it = &g_array_index(items, struct item, i);
		size_t j;
		for (j = 0; j < G_N_ELEMENTS(types); j++)
			if (!it->quoted && policy_word_is_nocase(it->s, it->n, types[j].name))
				break;
		if (j == G_N_ELEMENTS(types)) {
			fail(ps, it->line, it->col, "bad node type '%.*s' (CA, SWITCH, ROUTER, ALL or SELF)",
			     POLICY_SHOW(it->s, it->n));
			rc = -1;
		} else {
			*out |= types[j].flags;
		}
	}
	g_array_free(items, TRUE);
	return rc;
}

/* vlarb-high / vlarb-low: "VL:weight" pairs. */
static int vlarb_pairs(struct parser *ps, struct cur *c)
{
	GArray *items = g_array_new(FALSE, FALSE, sizeof(struct item));
	int rc = read_items(ps, c, 0, 1, items);
	for (guint i = 0; rc == 0 && i < items->len; i++) {
		const struct item *it = &g_array_index(items, struct item, i);
		const char *colon = it->quoted ? NULL : memchr(it->s, ':', it->n);
		if (!colon) {
			fail(ps, it->line, it->col, "bad VL arbitration entry '%.*s' (VL:weight)",
			     POLICY_SHOW(it->s, it->n));
			rc = -1;
			break;
		}
		const char *a = it->s, *b = colon + 1;
		size_t an = (size_t)(colon - it->s), bn = it->n - an - 1;
		unsigned acol = it->col, bcol = it->col + (unsigned)an + 1;
		uint64_t v;
		trim(&a, &an, &acol);
		trim(&b, &bn, &bcol);
		rc = number(ps, a, an, it->line, acol, &NS_VL, &v) < 0 ||
		     number(ps, b, bn, it->line, bcol, &NS_WEIGHT, &v) < 0 ? -1 : 0;
	}
	g_array_free(items, TRUE);
	return rc;
}

static int sl2vl_table(struct parser *ps, struct cur *c, unsigned line, unsigned col)
{
	GArray *items = g_array_new(FALSE, FALSE, sizeof(struct item));
	int rc = read_items(ps, c, 0, 1, items);
	for (guint i = 0; rc == 0 && i < items->len; i++) {
		const struct item *it = &g_array_index(items, struct item, i);
		uint64_t v;
		rc = number(ps, it->s, it->n, it->line, it->col, &NS_VL, &v);
	}
	if (rc == 0 && items->len != 16) {
		fail(ps, line, col, "sl2vl-table has %u VLs, not 16 (one per SL)", items->len);
		rc = -1;
	}
	g_array_free(items, TRUE);
	return rc;
}

/* from / to: '*' or switch port numbers and ranges. */
static int port_selection(struct parser *ps, struct cur *c)
{
	if (ps->text[c->i] == '*') {
		struct cur after = *c;
		after.i++;
		skip_blanks(ps, &after);
		if (at_end(&after)) {
			*c = after;
			return 0;
		}
	}
	GArray *r = g_array_new(FALSE, FALSE, sizeof(struct qos_range));
	int rc = range_list(ps, c, 0, 1, &NS_SW_PORT, r);
	g_array_free(r, TRUE);
	return rc;
}

/* ---- blocks ----------------------------------------------------------------------------- */

/* A name for a port group or QoS level: unique (first line kept in names). */
static int set_name(struct parser *ps, struct cur *c, GHashTable *names, const char *what,
		    char **out)
{
	unsigned col = col_of(c), line = c->ln.no;
	char *v = rest_text(ps, c, "name", 1);
	if (!v)
		return -1;
	char *key = name_key(v);
	gpointer first = g_hash_table_lookup(names, key);
	if (first) {
		fail(ps, line, col, "duplicate %s name '%s' (first defined on line %u)", what, v,
		     GPOINTER_TO_UINT(first));
		g_free(key);
		g_free(v);
		return -1;
	}
	g_hash_table_insert(names, key, GUINT_TO_POINTER(line));
	*out = v;
	return 0;
}

static int level_number(struct parser *ps, struct cur *c, const struct numspec *sp, int *out)
{
	uint64_t v;
	if (single_number(ps, c, sp, &v) < 0)
		return -1;
	*out = (int)v;
	return 0;
}

static int group_field(struct parser *ps, enum field f, struct cur *c)
{
	struct qos_port_group *g = ps->group;
	switch (f) {
	case FD_NAME:
		return set_name(ps, c, ps->group_names, "port-group", &g->name);
	case FD_USE:
		return (g->use = rest_text(ps, c, "use", 0)) ? 0 : -1;
	case FD_PORT_GUID:
		return range_list(ps, c, 0, 1, &NS_GUID, g->guids);
	case FD_PORT_NAME:
		return port_names(ps, c, g->names);
	case FD_PKEY:
		return pkey_list(ps, c, 0, 1, g->pkeys);
	case FD_PARTITION:
		return name_list(ps, c, NULL, g->partitions);
	case FD_NODE_TYPE:
		return node_types(ps, c, &g->node_types);
	default:
		return -1;
	}
}

static int level_field(struct parser *ps, enum field f, struct cur *c)
{
	struct qos_level *l = ps->level;
	switch (f) {
	case FD_NAME:
		return set_name(ps, c, ps->level_names, "qos-level", &l->name);
	case FD_USE:
		return (l->use = rest_text(ps, c, "use", 0)) ? 0 : -1;
	case FD_SL:
		return level_number(ps, c, &NS_SL, &l->sl);
	case FD_MTU_LIMIT:
		return level_number(ps, c, &NS_MTU, &l->mtu_limit);
	case FD_RATE_LIMIT:
		return level_number(ps, c, &NS_RATE, &l->rate_limit);
	case FD_PACKET_LIFE:
		return level_number(ps, c, &NS_LIFE, &l->packet_life);
	case FD_PATH_BITS:
		return range_list(ps, c, 0, 1, &NS_PATH_BITS, l->path_bits);
	case FD_PKEY:
		return pkey_list(ps, c, 0, 1, l->pkeys);
	default:
		return -1;
	}
}

static int rule_field(struct parser *ps, enum field f, struct cur *c)
{
	struct rule_src *rs = ps->rule;
	unsigned line = c->ln.no, col = col_of(c);
	switch (f) {
	case FD_USE:
		return (rs->r->use = rest_text(ps, c, "use", 0)) ? 0 : -1;
	case FD_QOS_CLASS:
		return range_list(ps, c, 0, 1, &NS_QOS_CLASS, rs->r->qos_class);
	case FD_SOURCE:
		return name_list(ps, c, rs->src, NULL);
	case FD_DESTINATION:
		return name_list(ps, c, rs->dst, NULL);
	case FD_SERVICE_ID:
		return range_list(ps, c, 0, 1, &NS_SID, rs->r->service_id);
	case FD_PKEY:
		return pkey_list(ps, c, 0, 1, rs->r->pkey);
	case FD_QOS_LEVEL_NAME:
		rs->level_name.name = rest_text(ps, c, "qos-level-name", 1);
		rs->level_name.line = line;
		rs->level_name.col = col;
		return rs->level_name.name ? 0 : -1;
	default:
		return -1;
	}
}

/* qos-setup: read and checked, never applied. */
static int setup_field(struct parser *ps, enum field f, struct cur *c)
{
	unsigned line = c->ln.no, col = col_of(c);
	uint64_t v;
	switch (f) {
	case FD_GROUP:
	case FD_ACROSS:
	case FD_ACROSS_TO:
	case FD_ACROSS_FROM:
		ps->scope_groups = 1;
		return name_list(ps, c, NULL, NULL);
	case FD_VLARB_HIGH:
	case FD_VLARB_LOW:
		return vlarb_pairs(ps, c);
	case FD_VL_HIGH_LIMIT:
		return single_number(ps, c, &NS_HIGH_LIMIT, &v);
	case FD_TO:
	case FD_FROM:
		return port_selection(ps, c);
	case FD_SL2VL_TABLE:
		ps->scope_table = 1;
		return sl2vl_table(ps, c, line, col);
	default:
		return -1;
	}
}

/* Fields that a block may hold once (OpenSM: "has multiple '...' tags"). */
static int once_only(enum frame fr, enum field f)
{
	switch (f) {
	case FD_NAME:
	case FD_USE:
	case FD_SL:
	case FD_MTU_LIMIT:
	case FD_RATE_LIMIT:
	case FD_PACKET_LIFE:
	case FD_QOS_LEVEL_NAME:
		return 1;
	case FD_SL2VL_TABLE:
		return fr == FR_SL2VL_SCOPE;
	default:
		return 0;
	}
}

static int parse_field(struct parser *ps, size_t fi, struct cur *c, unsigned kcol)
{
	enum frame top = ps->st[ps->depth - 1].f;
	enum field f = fields[fi].f;
	unsigned line = c->ln.no;
	if (!(fields[fi].in & B(top))) {
		if (top == FR_TOP)
			fail(ps, line, kcol, "'%s' outside of any section", fields[fi].kw);
		else
			fail(ps, line, kcol, "'%s' is not allowed in %s", fields[fi].kw,
			     frames[top].name);
		return -1;
	}
	skip_blanks(ps, c);
	if (at_end(c) || ps->text[c->i] != ':') {
		fail(ps, line, col_of(c), "missing ':' after '%s'", fields[fi].kw);
		return -1;
	}
	c->i++;
	skip_blanks(ps, c);
	if (at_end(c)) {
		fail(ps, line, col_of(c), "missing value after '%s:'", fields[fi].kw);
		return -1;
	}
	if (once_only(top, f) && (ps->seen & B(f))) {
		fail(ps, line, kcol, "'%s' given twice in this %s", fields[fi].kw, frames[top].name);
		return -1;
	}
	ps->seen |= B(f);
	switch (top) {
	case FR_PORT_GROUP:
		return group_field(ps, f, c);
	case FR_QOS_LEVEL:
		return level_field(ps, f, c);
	case FR_MATCH_RULE:
		return rule_field(ps, f, c);
	default:
		return setup_field(ps, f, c);
	}
}

/* A block opens: its object. */
static void open_frame(struct parser *ps, enum frame f, unsigned line, unsigned col)
{
	ps->st[ps->depth].f = f;
	ps->st[ps->depth].line = line;
	ps->st[ps->depth].col = col;
	ps->depth++;
	ps->seen = 0;
	switch (f) {
	case FR_PORT_GROUPS:
	case FR_ULPS:
		ps->entries = 0;
		break;
	case FR_PORT_GROUP:
		ps->group = group_new(line);
		break;
	case FR_QOS_LEVEL:
		ps->level = level_new(line);
		break;
	case FR_MATCH_RULE:
		ps->rule = rule_src_new(line);
		break;
	case FR_VLARB_SCOPE:
	case FR_SL2VL_SCOPE:
		ps->scope_groups = ps->scope_table = 0;
		break;
	case FR_QOS_SETUP:
		note(ps, line, col, "qos-setup is parsed but not applied: SL2VL and VL arbitration "
		     "come from the qos_* options (as in OpenSM)");
		break;
	default:
		break;
	}
}

/* A block closes: checked and kept. */
static int close_frame(struct parser *ps, enum frame f, unsigned line, unsigned col)
{
	switch (f) {
	case FR_PORT_GROUPS:
	case FR_ULPS:
		if (!ps->entries) {
			fail(ps, line, col, "empty %s section (OpenSM wants at least one %s)",
			     frames[f].name, f == FR_ULPS ? "line" : "port-group");
			return -1;
		}
		break;
	case FR_PORT_GROUP:
		if (!ps->group->name) {
			fail(ps, line, col, "port-group (line %u) without 'name'", ps->group->line);
			return -1;
		}
		g_ptr_array_add(ps->pol->groups, ps->group);
		ps->group = NULL;
		ps->entries++;
		break;
	case FR_QOS_LEVEL:
		if (!ps->level->name) {
			fail(ps, line, col, "qos-level (line %u) without 'name'", ps->level->line);
			return -1;
		}
		if (ps->level->sl < 0) {
			fail(ps, line, col, "qos-level '%s' without 'sl'", ps->level->name);
			return -1;
		}
		g_ptr_array_add(ps->pol->levels, ps->level);
		ps->level = NULL;
		break;
	case FR_MATCH_RULE:
		if (!ps->rule->level_name.name) {
			fail(ps, line, col, "qos-match-rule (line %u) without 'qos-level-name'",
			     ps->rule->r->line);
			return -1;
		}
		g_ptr_array_add(ps->rules, ps->rule);
		ps->rule = NULL;
		break;
	case FR_VLARB_SCOPE:
		if (!ps->scope_groups) {
			fail(ps, line, col, "vlarb-scope without 'group' or 'across'");
			return -1;
		}
		break;
	case FR_SL2VL_SCOPE:
		if (!ps->scope_table) {
			fail(ps, line, col, "sl2vl-scope without 'sl2vl-table'");
			return -1;
		}
		if (!ps->scope_groups) {
			fail(ps, line, col, "sl2vl-scope without 'group', 'across', 'across-from' or "
			     "'across-to'");
			return -1;
		}
		break;
	default:
		break;
	}
	ps->depth--;
	ps->seen = 0;
	return 0;
}

/* ---- qos-ulps lines --------------------------------------------------------------------- */

enum ulp { U_DEFAULT, U_SDP, U_RDS, U_ISER, U_SRP, U_IPOIB, U_ANY, U_NONE };
static const char *const ulp_names[] = { "default", "sdp", "rds", "iser", "srp", "ipoib", "any" };

enum crit { C_NONE, C_PORT_NUM, C_SERVICE_ID, C_PKEY, C_TARGET, C_SOURCE, C_SOURCE_TARGET };
static const char *const crit_names[] = { "", "port-num", "service-id", "pkey", "target-port-guid",
					  "source-port-guid", "source-target-port-guid" };

static enum ulp ulp_of(const char *s, size_t n)
{
	for (size_t i = 0; i < G_N_ELEMENTS(ulp_names); i++)
		if (policy_word_is_nocase(s, n, ulp_names[i]))
			return (enum ulp)i;
	return U_NONE;
}

/* Which criterion a ULP takes (OpenSM's lexer: these pairs only). */
static int crit_allowed(enum ulp u, enum crit c)
{
	switch (u) {
	case U_SDP:
	case U_RDS:
	case U_ISER:
		return c == C_PORT_NUM;
	case U_SRP:
		return c == C_TARGET;
	case U_IPOIB:
		return c == C_PKEY;
	case U_ANY:
		return c == C_SERVICE_ID || c == C_PKEY || c == C_TARGET || c == C_SOURCE ||
		       c == C_SOURCE_TARGET;
	default:
		return 0;
	}
}

static const char *crit_hint(enum ulp u)
{
	switch (u) {
	case U_SDP:
	case U_RDS:
	case U_ISER:
		return "port-num";
	case U_SRP:
		return "target-port-guid";
	case U_IPOIB:
		return "pkey";
	default:
		return "service-id, pkey, target-port-guid, source-port-guid or "
		       "source-target-port-guid";
	}
}

static struct qos_level *sl_level(struct parser *ps, unsigned sl, unsigned line)
{
	if (!ps->sl_levels[sl]) {
		struct qos_level *l = level_new(line);
		l->name = g_strdup_printf("qos-ulps SL %u", sl);
		l->sl = (int)sl;
		l->from_ulps = 1;
		ps->sl_levels[sl] = l;
	}
	return ps->sl_levels[sl];
}

static struct qos_port_group *gen_group(struct parser *ps, const char *name, GArray *guids,
					unsigned line)
{
	struct qos_port_group *g = group_new(line);
	g->name = g_strdup(name);
	g->use = g_strdup("Generated from ULP rules");
	g->generated = 1;
	g_array_append_vals(g->guids, guids->data, guids->len);
	g_ptr_array_add(ps->gen_groups, g);
	return g;
}

/* The service IDs of sdp / rds / iser, bare (ports NULL) or with port numbers. */
static void ulp_service_ids(enum ulp u, const GArray *ports, GArray *out)
{
	uint64_t base = u == U_SDP ? ULP_SDP_SID : u == U_RDS ? ULP_RDS_SID : ULP_ISER_SID;
	if (!ports) {
		struct qos_range r;
		if (u == U_SDP)
			r = (struct qos_range){ ULP_SDP_SID, ULP_SDP_SID + 0xffff };
		else
			r.lo = r.hi = base + (u == U_RDS ? ULP_RDS_PORT : ULP_ISER_PORT);
		g_array_append_val(out, r);
		return;
	}
	for (guint i = 0; i < ports->len; i++) {
		struct qos_range p = g_array_index(ports, struct qos_range, i);
		struct qos_range r = { base + p.lo, base + p.hi };
		g_array_append_val(out, r);
	}
}

/* Builds the rule of one qos-ulps line. */
static void ulp_rule(struct parser *ps, enum ulp u, enum crit cr, GArray *list, unsigned sl,
		     const char *text, size_t tn, unsigned line)
{
	struct rule_src *rs = rule_src_new(line);
	struct qos_match_rule *r = rs->r;
	r->from_ulps = 1;
	r->use = g_strdup_printf("qos-ulps: %.*s", (int)tn, text);
	rs->level = sl_level(ps, sl, line);
	switch (u) {
	case U_SDP:
	case U_RDS:
	case U_ISER:
		ulp_service_ids(u, cr == C_PORT_NUM ? list : NULL, r->service_id);
		break;
	case U_SRP:
		rs->gen_dst = gen_group(ps, "_SRP_Targets_", list, line);
		break;
	case U_IPOIB:
		if (cr == C_NONE) {
			struct qos_range k = { IPOIB_DEFAULT_PKEY, IPOIB_DEFAULT_PKEY };
			g_array_append_val(r->pkey, k);
		} else {
			add_pkey_ranges(r->pkey, list);
		}
		g_array_append_vals(ps->pol->ipoib_pkeys, r->pkey->data, r->pkey->len);
		break;
	default:        /* any */
		if (cr == C_SERVICE_ID)
			g_array_append_vals(r->service_id, list->data, list->len);
		else if (cr == C_PKEY)
			add_pkey_ranges(r->pkey, list);
		else if (cr == C_TARGET)
			rs->gen_dst = gen_group(ps, "_ULP_Targets_", list, line);
		else if (cr == C_SOURCE)
			rs->gen_src = gen_group(ps, "_ULP_Sources_", list, line);
		else
			rs->gen_src = rs->gen_dst = gen_group(ps, "_ULP_Sources_Targets_", list, line);
		break;
	}
	g_ptr_array_add(ps->ulps_rules, rs);
}

static const struct numspec *crit_spec(enum crit cr)
{
	switch (cr) {
	case C_PORT_NUM:
		return &NS_TCP_PORT;
	case C_SERVICE_ID:
		return &NS_SID;
	case C_PKEY:
		return &NS_PKEY;
	default:
		return &NS_GUID;
	}
}

/* "<ulp>[, <criterion> <list>] : <SL>" */
static int parse_ulp_line(struct parser *ps, struct cur *c, size_t wn)
{
	unsigned line = c->ln.no, col = col_of(c);
	const char *text = ps->text + c->i;
	size_t tn = c->ln.end - c->i;
	enum ulp u = ulp_of(text, wn);
	if (u == U_NONE) {
		fail(ps, line, col, "bad qos-ulps line: unknown ULP '%.*s' (default, sdp, rds, iser, "
		     "srp, ipoib or any)", POLICY_SHOW(text, wn));
		return -1;
	}
	c->i += wn;
	skip_blanks(ps, c);
	enum crit cr = C_NONE;
	GArray *list = g_array_new(FALSE, FALSE, sizeof(struct qos_range));
	int rc = 0;
	if (!at_end(c) && ps->text[c->i] == ',' && u == U_DEFAULT) {
		fail(ps, line, col_of(c), "bad qos-ulps line: 'default' takes no criterion");
		rc = -1;
	} else if (!at_end(c) && ps->text[c->i] == ',') {
		c->i++;
		skip_blanks(ps, c);
		size_t b = c->i;
		unsigned ccol = col_of(c);
		while (c->i < c->ln.end && !policy_is_blank(ps->text[c->i]) &&
		       ps->text[c->i] != ':' && ps->text[c->i] != ',')
			c->i++;
		for (size_t i = 1; i < G_N_ELEMENTS(crit_names); i++)
			if (policy_word_is(ps->text + b, c->i - b, crit_names[i]))
				cr = (enum crit)i;
		if (cr == C_NONE || !crit_allowed(u, cr)) {
			fail(ps, line, ccol, "bad qos-ulps line: '%s' takes %s, not '%.*s'", ulp_names[u],
			     crit_hint(u), POLICY_SHOW(ps->text + b, c->i - b));
			rc = -1;
		} else if (cr == C_PKEY) {
			GArray *raw = g_array_new(FALSE, FALSE, sizeof(struct qos_range));
			rc = range_list(ps, c, ':', 0, &NS_PKEY, raw);
			g_array_free(list, TRUE);
			list = raw;
		} else {
			rc = range_list(ps, c, ':', 0, crit_spec(cr), list);
		}
	} else if (u == U_SRP || u == U_ANY) {
		fail(ps, line, col_of(c), "bad qos-ulps line: '%s' needs ', %s <list>'", ulp_names[u],
		     u == U_SRP ? "target-port-guid" : "<criterion>");
		rc = -1;
	}
	if (rc == 0 && (at_end(c) || ps->text[c->i] != ':')) {
		fail(ps, line, col_of(c), "bad qos-ulps line: missing ': <SL>'");
		rc = -1;
	}
	uint64_t sl = 0;
	if (rc == 0) {
		c->i++;
		skip_blanks(ps, c);
		if (at_end(c)) {
			fail(ps, line, col_of(c), "bad qos-ulps line: missing SL after ':'");
			rc = -1;
		} else {
			rc = single_number(ps, c, &NS_SL, &sl);
		}
	}
	if (rc == 0 && u == U_DEFAULT) {
		if (ps->ulps_default >= 0)
			note(ps, line, col, "qos-ulps 'default' given again: SL %u replaces SL %d (as "
			     "in OpenSM)", (unsigned)sl, ps->ulps_default);
		ps->ulps_default = (int)sl;
		ps->ulps_default_line = line;
		ps->ulps_default_col = col;
	} else if (rc == 0) {
		ulp_rule(ps, u, cr, list, (unsigned)sl, text, tn, line);
	}
	g_array_free(list, TRUE);
	if (rc == 0)
		ps->entries++;
	return rc;
}

/* ---- lines ------------------------------------------------------------------------------ */

static int open_keyword(struct parser *ps, enum frame f, struct cur *c, unsigned kcol)
{
	enum frame top = ps->st[ps->depth - 1].f;
	unsigned line = c->ln.no;
	if (top != frames[f].parent) {
		if (frames[f].parent == FR_TOP)
			fail(ps, line, kcol, "'%s' inside %s (line %u): 'end-%s' missing", frames[f].name,
			     frames[top].name, ps->st[ps->depth - 1].line, frames[top].name);
		else
			fail(ps, line, kcol, "'%s' outside of %s", frames[f].name,
			     frames[frames[f].parent].name);
		return -1;
	}
	open_frame(ps, f, line, kcol);
	return 0;
}

static int close_keyword(struct parser *ps, enum frame f, struct cur *c, unsigned kcol)
{
	unsigned line = c->ln.no;
	enum frame top = ps->st[ps->depth - 1].f;
	if (top == f)
		return close_frame(ps, f, line, kcol);
	for (int d = ps->depth - 1; d > 0; d--)
		if (ps->st[d].f == f) {
			fail(ps, line, kcol, "'end-%s' while %s (line %u) is still open", frames[f].name,
			     frames[top].name, ps->st[ps->depth - 1].line);
			return -1;
		}
	fail(ps, line, kcol, "'end-%s' without '%s'", frames[f].name, frames[f].name);
	return -1;
}

/* A section or block keyword: 1 handled, 0 not one, -1 error. */
static int frame_keyword(struct parser *ps, struct cur *c, size_t wn, unsigned kcol)
{
	const char *w = ps->text + c->i;
	for (int f = 1; f < FR_N; f++) {
		int close = wn > 4 && !memcmp(w, "end-", 4) &&
			    policy_word_is(w + 4, wn - 4, frames[f].name);
		if (!close && !policy_word_is(w, wn, frames[f].name))
			continue;
		c->i += wn;
		skip_blanks(ps, c);
		if (!at_end(c)) {
			fail(ps, c->ln.no, col_of(c), "unexpected text after '%.*s'",
			     POLICY_SHOW(w, wn));
			return -1;
		}
		if (ps->st[ps->depth - 1].f == FR_ULPS && !(close && f == FR_ULPS)) {
			fail(ps, c->ln.no, kcol, "'%.*s' inside qos-ulps (line %u): 'end-qos-ulps' missing",
			     POLICY_SHOW(w, wn), ps->st[ps->depth - 1].line);
			return -1;
		}
		return (close ? close_keyword(ps, (enum frame)f, c, kcol)
			      : open_keyword(ps, (enum frame)f, c, kcol)) < 0 ? -1 : 1;
	}
	return 0;
}

static int parse_line(struct parser *ps, struct cur *c)
{
	const char *t = ps->text;
	size_t b = c->i;
	unsigned kcol = col_of(c);
	while (c->i < c->ln.end && !policy_is_blank(t[c->i]) && t[c->i] != ':' && t[c->i] != ',')
		c->i++;
	size_t wn = c->i - b;
	c->i = b;
	int r = frame_keyword(ps, c, wn, kcol);
	if (r)
		return r < 0 ? -1 : 0;
	if (ps->st[ps->depth - 1].f == FR_ULPS)
		return wn ? parse_ulp_line(ps, c, wn) :
		       (fail(ps, c->ln.no, kcol, "bad qos-ulps line: no ULP before '%c'", t[b]), -1);
	for (size_t i = 0; i < G_N_ELEMENTS(fields); i++)
		if (policy_word_is(t + b, wn, fields[i].kw)) {
			c->i += wn;
			return parse_field(ps, i, c, kcol);
		}
	if (wn && ulp_of(t + b, wn) != U_NONE) {
		fail(ps, c->ln.no, kcol, "'%.*s' is a qos-ulps line outside of qos-ulps",
		     POLICY_SHOW(t + b, wn));
		return -1;
	}
	if (!wn) {
		fail(ps, c->ln.no, kcol, "unexpected '%c' at the start of a line", t[b]);
		return -1;
	}
	fail(ps, c->ln.no, kcol, "unknown keyword '%.*s'%s", POLICY_SHOW(t + b, wn),
	     g_ascii_isupper(t[b]) ? " (keywords are lower case, as in OpenSM)" : "");
	return -1;
}

/* ---- the end of the file: DEFAULT, names resolved, the model assembled ------------------ */

static int find_index(GPtrArray *a, gconstpointer p, guint *out)
{
	return g_ptr_array_find(a, p, out) ? 0 : -1;
}

static int resolve_groups(struct parser *ps, GArray *refs, GArray *out)
{
	for (guint i = 0; i < refs->len; i++) {
		const struct ref *rf = &g_array_index(refs, struct ref, i);
		char *key = name_key(rf->name);
		guint j;
		for (j = 0; j < ps->pol->groups->len; j++) {
			const struct qos_port_group *g = ps->pol->groups->pdata[j];
			char *gk = name_key(g->name);
			int same = !g->generated && !strcmp(gk, key);
			g_free(gk);
			if (same)
				break;
		}
		g_free(key);
		if (j == ps->pol->groups->len) {
			fail(ps, rf->line, rf->col, "unknown port group '%s'", rf->name);
			return -1;
		}
		g_array_append_val(out, j);
	}
	return 0;
}

static int resolve_level(struct parser *ps, const struct ref *rf, guint *out)
{
	char *key = name_key(rf->name);
	int rc = -1;
	for (guint j = 0; j < ps->pol->levels->len; j++) {
		const struct qos_level *l = ps->pol->levels->pdata[j];
		char *lk = name_key(l->name);
		/* the ulps SL levels are no names of the file (DEFAULT is at 0) */
		int same = (j == 0 || !l->from_ulps) && !strcmp(lk, key);
		g_free(lk);
		if (same) {
			*out = j;
			rc = 0;
			break;
		}
	}
	g_free(key);
	if (rc < 0)
		fail(ps, rf->line, rf->col, "unknown qos-level '%s'", rf->name);
	return rc;
}

/* DEFAULT to levels[0]: the file's own, else the one "default : SL" makes (OpenSM: a
 * qos-levels DEFAULT wins over the qos-ulps default). */
static int place_default(struct parser *ps)
{
	GPtrArray *lv = ps->pol->levels;
	for (guint i = 0; i < lv->len; i++) {
		struct qos_level *l = lv->pdata[i];
		char *k = name_key(l->name);
		int is_def = !strcmp(k, "default");
		g_free(k);
		if (!is_def)
			continue;
		g_ptr_array_steal_index(lv, i);
		g_ptr_array_insert(lv, 0, l);
		if (ps->ulps_default >= 0)
			note(ps, ps->ulps_default_line, ps->ulps_default_col, "qos-ulps 'default' not "
			     "used: qos-level '%s' (line %u) is the DEFAULT level (as in OpenSM)",
			     l->name, l->line);
		return 0;
	}
	if (ps->ulps_default < 0) {
		unsigned line, col;
		eof_pos(ps, &line, &col);
		fail(ps, line, col, "no DEFAULT qos-level (a qos-level named DEFAULT, or 'default : "
		     "<SL>' in qos-ulps)");
		return -1;
	}
	struct qos_level *d = level_new(ps->ulps_default_line);
	d->name = g_strdup("DEFAULT");
	d->use = g_strdup("qos-ulps default");
	d->sl = ps->ulps_default;
	d->from_ulps = 1;
	g_ptr_array_insert(lv, 0, d);
	return 0;
}

static int finish(struct parser *ps)
{
	if (ps->depth > 1) {
		unsigned line, col;
		eof_pos(ps, &line, &col);
		enum frame top = ps->st[ps->depth - 1].f;
		fail(ps, line, col, "end of file inside %s (line %u): 'end-%s' missing",
		     frames[top].name, ps->st[ps->depth - 1].line, frames[top].name);
		return -1;
	}
	if (place_default(ps) < 0)
		return -1;
	for (unsigned sl = 0; sl < 16; sl++)
		if (ps->sl_levels[sl]) {
			g_ptr_array_add(ps->pol->levels, ps->sl_levels[sl]);
			ps->sl_levels[sl] = NULL;
		}
	for (guint i = 0; i < ps->gen_groups->len; i++)
		g_ptr_array_add(ps->pol->groups, ps->gen_groups->pdata[i]);
	g_ptr_array_set_free_func(ps->gen_groups, NULL);
	for (int pass = 0; pass < 2; pass++) {
		GPtrArray *rules = pass ? ps->ulps_rules : ps->rules;
		for (guint i = 0; i < rules->len; i++) {
			struct rule_src *rs = rules->pdata[i];
			struct qos_match_rule *r = rs->r;
			guint gi;
			if (rs->level ? find_index(ps->pol->levels, rs->level, &r->level) :
			    resolve_level(ps, &rs->level_name, &r->level))
				return -1;
			if (resolve_groups(ps, rs->src, r->source) < 0 ||
			    resolve_groups(ps, rs->dst, r->destination) < 0)
				return -1;
			if (rs->gen_src && find_index(ps->pol->groups, rs->gen_src, &gi) == 0)
				g_array_append_val(r->source, gi);
			if (rs->gen_dst && find_index(ps->pol->groups, rs->gen_dst, &gi) == 0)
				g_array_append_val(r->destination, gi);
			g_ptr_array_add(ps->pol->rules, r);
			rs->r = NULL;
		}
	}
	return 0;
}

/* ---- entry points ----------------------------------------------------------------------- */

static struct qos_policy *policy_new(const char *name)
{
	struct qos_policy *p = g_new0(struct qos_policy, 1);
	p->source = g_strdup(name);
	p->groups = g_ptr_array_new_with_free_func(group_free);
	p->levels = g_ptr_array_new_with_free_func(level_free);
	p->rules = g_ptr_array_new_with_free_func(rule_free);
	p->ipoib_pkeys = g_array_new(FALSE, FALSE, sizeof(struct qos_range));
	p->notes = g_ptr_array_new_with_free_func(g_free);
	return p;
}

static void parser_done(struct parser *ps)
{
	group_free(ps->group);
	level_free(ps->level);
	rule_src_free(ps->rule);
	for (unsigned sl = 0; sl < 16; sl++)
		level_free(ps->sl_levels[sl]);
	g_ptr_array_free(ps->gen_groups, TRUE);
	g_ptr_array_free(ps->rules, TRUE);
	g_ptr_array_free(ps->ulps_rules, TRUE);
	g_hash_table_destroy(ps->group_names);
	g_hash_table_destroy(ps->level_names);
}

struct qos_policy *qos_policy_parse_text(const char *text, size_t len, const char *name,
					 GError **err)
{
	struct parser ps = { .text = text ? text : "", .len = text ? len : 0,
			     .rep = { .name = name ? name : "<qos-policy>",
				      .domain = QOS_POLICY_ERROR, .code = QOS_POLICY_ERROR_SYNTAX,
				      .err = err },
			     .line_no = 1, .depth = 1, .ulps_default = -1 };
	ps.st[0].f = FR_TOP;
	ps.pol = policy_new(name);
	ps.rep.notes = ps.pol->notes;
	ps.gen_groups = g_ptr_array_new_with_free_func(group_free);
	ps.rules = g_ptr_array_new_with_free_func(rule_src_free);
	ps.ulps_rules = g_ptr_array_new_with_free_func(rule_src_free);
	ps.group_names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	ps.level_names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	while (!ps.rep.failed) {
		struct cur c;
		int r = peek_content_line(&ps, &c);
		if (r <= 0)
			break;
		commit(&ps, &c);
		if (parse_line(&ps, &c) < 0)
			break;
		skip_blanks(&ps, &c);
		if (!ps.rep.failed && !at_end(&c))
			fail(&ps, c.ln.no, col_of(&c), "unexpected text '%.*s'",
			     POLICY_SHOW(ps.text + c.i, c.ln.end - c.i));
	}
	if (!ps.rep.failed)
		finish(&ps);
	parser_done(&ps);
	if (ps.rep.failed) {
		qos_policy_free(ps.pol);
		return NULL;
	}
	return ps.pol;
}

void qos_policy_free(struct qos_policy *p)
{
	if (!p)
		return;
	g_free(p->source);
	g_ptr_array_free(p->rules, TRUE);
	g_ptr_array_free(p->groups, TRUE);
	g_ptr_array_free(p->levels, TRUE);
	g_array_free(p->ipoib_pkeys, TRUE);
	g_ptr_array_free(p->notes, TRUE);
	g_free(p);
}

int qos_ranges_have(const GArray *ranges, uint64_t v)
{
	if (!ranges)
		return 0;
	for (guint i = 0; i < ranges->len; i++) {
		const struct qos_range *r = &g_array_index(ranges, struct qos_range, i);
		if (v >= r->lo && v <= r->hi)
			return 1;
	}
	return 0;
}
