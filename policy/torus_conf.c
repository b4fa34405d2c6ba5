/* SPDX-License-Identifier: BSD-2-Clause */
/* torus_conf.c - reads torus-2QoS.conf (torus-2QoS.conf(5); OpenSM 3.3.23's opensm/osm_torus.c for the facts) into
 * a struct torus_conf. It exists because the torus-2QoS engine needs its topology and seeds
 * before it can discover anything, and because OpenSM's own reader (strtok and strtoul inside
 * the engine, messages to its log, half a configuration kept on error) reads "0x2g" as 0x2 and
 * a word as 0; this one is a pure line reader that refuses the whole file with
 * "FILE:LINE:COL: what", notes what it reads but ignores or assumes, and never crashes.
 * What it reads as OpenSM does: tokens split at space, tab and CR; a first token starting with
 * '#' makes the line a comment; tokens after a keyword's arguments are ignored; C numbers
 * (0x hex, leading 0 octal, else decimal); a radix of 2 is a mesh; only datelines need the
 * torus/mesh line before them (they are checked against the radix); keywords before it are
 * read with a note; a second torus/mesh line, an unknown keyword, a missing argument and a
 * dateline outside -radix < d < radix are errors; max_changes is read.
 * Where it is stricter than OpenSM: a number must be the whole token (a radix may end in one
 * of m M t T), GUIDs are not 0, ports in port_order are 0-254, portgroup_max_ports is not 0,
 * all links of a seed start at the same switch (OpenSM checks x against y and z only, and +
 * against - only in a radix-4 torus dimension), and a '#' token ends a port_order list (OpenSM
 * would read each of its words as port 0). */
#include <string.h>
#include "policy/lines.h"
#include "policy/numbers.h"
#include "policy/torus_conf.h"

G_DEFINE_QUARK(ibsm-torus-conf-error-quark, torus_conf_error)

static const char dim_name[TORUS_NDIMS] = { 'x', 'y', 'z' };
static const char dir_name[TORUS_NDIRS] = { 'p', 'm' };

enum kw { KW_TORUS, KW_MESH, KW_LINK, KW_DATELINE, KW_NEXT_SEED, KW_PORTGROUP, KW_PORT_ORDER,
	  KW_MAX_CHANGES };

static const struct {
	const char *name;
	enum kw kw;
	int dim, dir;
} keywords[] = {
	{ "torus", KW_TORUS, 0, 0 },
	{ "mesh", KW_MESH, 0, 0 },
	{ "xp_link", KW_LINK, TORUS_X, TORUS_PLUS },
	{ "xm_link", KW_LINK, TORUS_X, TORUS_MINUS },
	{ "yp_link", KW_LINK, TORUS_Y, TORUS_PLUS },
	{ "ym_link", KW_LINK, TORUS_Y, TORUS_MINUS },
	{ "zp_link", KW_LINK, TORUS_Z, TORUS_PLUS },
	{ "zm_link", KW_LINK, TORUS_Z, TORUS_MINUS },
	{ "x_dateline", KW_DATELINE, TORUS_X, 0 },
	{ "y_dateline", KW_DATELINE, TORUS_Y, 0 },
	{ "z_dateline", KW_DATELINE, TORUS_Z, 0 },
	{ "next_seed", KW_NEXT_SEED, 0, 0 },
	{ "portgroup_max_ports", KW_PORTGROUP, 0, 0 },
	{ "port_order", KW_PORT_ORDER, 0, 0 },
	{ "max_changes", KW_MAX_CHANGES, 0, 0 },
};

struct tok {
	const char *s;
	size_t n;
	unsigned col;
};

struct parser {
	const char *text;
	size_t len;
	struct policy_report rep;
	struct torus_conf *c;
	unsigned line;             /* the line being read: its number, */
	size_t ls, le, cur;        /* start, end (before '\n') and cursor */
	unsigned portgroup_line, port_order_line;   /* where they were last given (0: never) */
	int noted_early;           /* the "before the torus or mesh line" note was made */
};

/* ---- messages --------------------------------------------------------------------------- */

/* The file is refused, or a note taken, at column col of the line being read. */
#define fail(ps, col, ...) policy_fail(&(ps)->rep, (ps)->line, col, __VA_ARGS__)
#define note(ps, col, ...) policy_note(&(ps)->rep, (ps)->line, col, __VA_ARGS__)

/* A token quoted in a message. */
#define SHOW(t) POLICY_SHOW((t)->s, (t)->n)

/* ---- tokens and numbers ----------------------------------------------------------------- */

static int is_sep(char c)
{
	return c == ' ' || c == '\t' || c == '\r';    /* OpenSM's " \n\t\015" */
}

static int next_tok(struct parser *ps, struct tok *t)
{
	while (ps->cur < ps->le && is_sep(ps->text[ps->cur]))
		ps->cur++;
	if (ps->cur >= ps->le)
		return 0;
	size_t b = ps->cur;
	while (ps->cur < ps->le && !is_sep(ps->text[ps->cur]))
		ps->cur++;
	t->s = ps->text + b;
	t->n = ps->cur - b;
	t->col = (unsigned)(b - ps->ls + 1);
	return 1;
}

/* The column just after the last token of the line: where a missing argument was wanted. */
static unsigned end_col(const struct parser *ps)
{
	size_t e = ps->le;
	while (e > ps->ls && is_sep(ps->text[e - 1]))
		e--;
	return (unsigned)(e - ps->ls + 1);
}

/* ---- the model -------------------------------------------------------------------------- */

static struct torus_conf *conf_new(const char *name)
{
	struct torus_conf *c = g_new0(struct torus_conf, 1);
	c->source = g_strdup(name);
	c->seeds = g_array_new(FALSE, TRUE, sizeof(struct torus_conf_seed));
	c->portgroup_max_ports = TORUS_CONF_PORTGROUP_DEFAULT;
	c->max_changes = TORUS_CONF_MAX_CHANGES;
	c->port_order = g_array_new(FALSE, FALSE, sizeof(guint8));
	c->notes = g_ptr_array_new_with_free_func(g_free);
	return c;
}

void torus_conf_free(struct torus_conf *c)
{
	if (!c)
		return;
	g_free(c->source);
	g_array_free(c->seeds, TRUE);
	g_array_free(c->port_order, TRUE);
	g_ptr_array_free(c->notes, TRUE);
	g_free(c);
}

static struct torus_conf_seed *new_seed(struct parser *ps)
{
	struct torus_conf_seed s = { .line = ps->line };
	g_array_append_val(ps->c->seeds, s);
	return &g_array_index(ps->c->seeds, struct torus_conf_seed, ps->c->seeds->len - 1);
}

/* The seed link and dateline keywords add to: the last one, the first one made on demand. */
static struct torus_conf_seed *cur_seed(struct parser *ps)
{
	if (ps->c->seeds->len == 0)
		return new_seed(ps);
	return &g_array_index(ps->c->seeds, struct torus_conf_seed, ps->c->seeds->len - 1);
}

/* ---- keywords --------------------------------------------------------------------------- */

/* "4", "4t", "3M": 0 and the radix and its mesh flag (unchanged without a suffix), or -1. */
static int radix_arg(struct parser *ps, const struct tok *t, int d, unsigned *radix, int *mesh)
{
	uint64_t v;
	size_t used;
	unsigned base;
	int r = policy_scan_c_u64(t->s, t->n, &v, &used, &base);
	if (r < 0 || t->n - used > 1 || (used < t->n && !strchr("mMtT", t->s[used]))) {
		fail(ps, t->col, "bad %c radix '%.*s': a number, optionally followed by m or M "
		     "(mesh) or t or T (torus)", dim_name[d], SHOW(t));
		return -1;
	}
	if (v == 0) {
		fail(ps, t->col, "%c radix 0: a radix is at least 1 (1 leaves the dimension out)",
		     dim_name[d]);
		return -1;
	}
	if (v > TORUS_CONF_MAX_SWITCHES) {
		fail(ps, t->col, "%c radix %.*s: more than %u switches", dim_name[d], SHOW(t),
		     TORUS_CONF_MAX_SWITCHES);
		return -1;
	}
	*radix = (unsigned)v;
	if (used < t->n)
		*mesh = t->s[used] == 'm' || t->s[used] == 'M';
	return 0;
}

static void kw_topology(struct parser *ps, const struct tok *kw, int mesh_kw)
{
	struct torus_conf *c = ps->c;
	if (c->topology_given) {
		fail(ps, kw->col, "a second '%.*s' line: the topology was given on line %u",
		     SHOW(kw), c->topology_line);
		return;
	}
	unsigned radix[TORUS_NDIMS];
	int mesh[TORUS_NDIMS];
	uint64_t switches = 1;
	for (int d = 0; d < TORUS_NDIMS; d++) {
		struct tok t;
		if (!next_tok(ps, &t)) {
			fail(ps, end_col(ps), "'%.*s' wants three radices (x y z): the %c radix "
			     "is missing", SHOW(kw), dim_name[d]);
			return;
		}
		mesh[d] = mesh_kw;
		if (radix_arg(ps, &t, d, &radix[d], &mesh[d]) < 0)
			return;
		switches *= radix[d];
	}
	if (switches > TORUS_CONF_MAX_SWITCHES) {
		fail(ps, kw->col, "a %ux%ux%u %.*s has more than %u switches", radix[0], radix[1],
		     radix[2], SHOW(kw), TORUS_CONF_MAX_SWITCHES);
		return;
	}
	for (int d = 0; d < TORUS_NDIMS; d++) {
		if (radix[d] == 2 && !mesh[d]) {
			note(ps, kw->col, "the %c dimension of radix 2 is a mesh (as in OpenSM: a "
			     "radix-2 torus is a mesh with parallel links)", dim_name[d]);
			mesh[d] = 1;
		}
		c->radix[d] = radix[d];
		c->mesh[d] = mesh[d];
	}
	c->topology_given = 1;
	c->topology_line = ps->line;
}

/* A switch GUID argument ("from" or "to"): 0 and the GUID, or -1. */
static int guid_arg(struct parser *ps, const struct tok *kw, const char *which, uint64_t *v,
		    unsigned *col)
{
	struct tok t;
	if (!next_tok(ps, &t)) {
		fail(ps, end_col(ps), "'%.*s' wants two switch node GUIDs (from, to): the %s GUID "
		     "is missing", SHOW(kw), which);
		return -1;
	}
	size_t used;
	unsigned base;
	*col = t.col;
	int r = policy_scan_c_u64(t.s, t.n, v, &used, &base);
	if (r == -2) {
		fail(ps, t.col, "switch GUID '%.*s' has more than 64 bits", SHOW(&t));
		return -1;
	}
	if (r < 0 || used != t.n) {
		fail(ps, t.col, "bad switch GUID '%.*s': a number (0x... for hex)", SHOW(&t));
		return -1;
	}
	if (*v == 0) {
		fail(ps, t.col, "switch GUID 0: no node has GUID 0");
		return -1;
	}
	if (base != 16)
		note(ps, t.col, "switch GUID '%.*s' read as %s, 0x%" G_GINT64_MODIFIER "x (as "
		     "OpenSM reads it); write 0x... for hex", SHOW(&t),
		     base == 8 ? "octal" : "decimal", *v);
	return 0;
}

static void note_early(struct parser *ps, const struct tok *kw)
{
	if (ps->c->topology_given || ps->noted_early)
		return;
	ps->noted_early = 1;
	note(ps, kw->col, "'%.*s' before the torus or mesh line, which torus-2QoS.conf(5) wants "
	     "first: read anyway, as OpenSM does", SHOW(kw));
}

/* A link whose from-switch differs from another link of its seed: 0, or -1 (error set). */
static int same_from(struct parser *ps, const struct torus_conf_seed *s, int dim, int dir,
		     uint64_t from, unsigned col)
{
	for (int d = 0; d < TORUS_NDIMS; d++)
		for (int r = 0; r < TORUS_NDIRS; r++) {
			const struct torus_conf_link *l = &s->link[d][r];
			if ((d == dim && r == dir) || !l->given || l->from == from)
				continue;
			fail(ps, col, "link from switch 0x%" G_GINT64_MODIFIER "x, but the %c%c_link "
			     "of seed %u (line %u) is from 0x%" G_GINT64_MODIFIER "x: all links of a "
			     "seed start at the same switch", from, dim_name[d], dir_name[r],
			     ps->c->seeds->len, l->line, l->from);
			return -1;
		}
	return 0;
}

static void kw_link(struct parser *ps, const struct tok *kw, int dim, int dir)
{
	uint64_t from, to;
	unsigned from_col, to_col;
	if (guid_arg(ps, kw, "from", &from, &from_col) < 0 || guid_arg(ps, kw, "to", &to, &to_col) < 0)
		return;
	note_early(ps, kw);
	struct torus_conf_seed *s = cur_seed(ps);
	if (same_from(ps, s, dim, dir, from, from_col) < 0)
		return;
	struct torus_conf_link *l = &s->link[dim][dir];
	if (l->given)
		note(ps, kw->col, "%.*s given again in seed %u (first on line %u): this one counts",
		     SHOW(kw), ps->c->seeds->len, l->line);
	l->from = from;
	l->to = to;
	l->given = 1;
	l->line = ps->line;
}

static void kw_dateline(struct parser *ps, const struct tok *kw, int dim)
{
	if (!ps->c->topology_given) {
		fail(ps, kw->col, "'%.*s' before the torus or mesh line: a dateline is checked "
		     "against its dimension's radix", SHOW(kw));
		return;
	}
	struct tok t;
	if (!next_tok(ps, &t)) {
		fail(ps, end_col(ps), "'%.*s' wants a position (a signed integer)", SHOW(kw));
		return;
	}
	size_t skip = t.n > 0 && (t.s[0] == '-' || t.s[0] == '+');
	uint64_t v;
	size_t used;
	unsigned base;
	int r = policy_scan_c_u64(t.s + skip, t.n - skip, &v, &used, &base);
	if (r < 0 || used != t.n - skip) {
		fail(ps, t.col, "bad dateline '%.*s': a signed integer", SHOW(&t));
		return;
	}
	unsigned radix = ps->c->radix[dim];
	if (v >= radix) {
		fail(ps, t.col, "%.*s %.*s out of range: -%u < position < %u for radix %u",
		     SHOW(kw), SHOW(&t), radix, radix, radix);
		return;
	}
	struct torus_conf_seed *s = cur_seed(ps);
	if (s->dateline_given[dim])
		note(ps, kw->col, "%.*s given again in seed %u: this one counts", SHOW(kw),
		     ps->c->seeds->len);
	s->dateline[dim] = t.s[0] == '-' ? -(int)v : (int)v;
	s->dateline_given[dim] = 1;
}

static void kw_portgroup(struct parser *ps, const struct tok *kw)
{
	struct tok t;
	uint64_t v;
	if (!next_tok(ps, &t)) {
		fail(ps, end_col(ps), "'%.*s' wants a number of ports", SHOW(kw));
		return;
	}
	if (policy_parse_c_u64(t.s, t.n, UINT64_MAX, &v) < 0) {
		fail(ps, t.col, "bad port count '%.*s': a number from 1", SHOW(&t));
		return;
	}
	if (v == 0) {
		fail(ps, t.col, "portgroup_max_ports 0: a port group holds at least 1 port");
		return;
	}
	note_early(ps, kw);
	if (ps->portgroup_line)
		note(ps, kw->col, "portgroup_max_ports given again (line %u before): the last one "
		     "counts", ps->portgroup_line);
	if (v > TORUS_CONF_MAX_PORT) {
		note(ps, t.col, "portgroup_max_ports %.*s: a switch has at most %u ports; %u is "
		     "used", SHOW(&t), TORUS_CONF_MAX_PORT, TORUS_CONF_MAX_PORT);
		v = TORUS_CONF_MAX_PORT;
	}
	ps->c->portgroup_max_ports = (unsigned)v;
	ps->portgroup_line = ps->line;
}

static int has_port(const GArray *a, guint8 p)
{
	for (guint i = 0; i < a->len; i++)
		if (g_array_index(a, guint8, i) == p)
			return 1;
	return 0;
}

static void kw_port_order(struct parser *ps, const struct tok *kw)
{
	GArray *order = g_array_new(FALSE, FALSE, sizeof(guint8));
	struct tok t;
	while (next_tok(ps, &t)) {
		uint64_t v;
		if (t.s[0] == '#') {
			note(ps, t.col, "port_order ends at '#': the rest of the line is a comment "
			     "(OpenSM would read its words as port 0)");
			break;
		}
		if (policy_parse_c_u64(t.s, t.n, TORUS_CONF_MAX_PORT, &v) < 0) {
			fail(ps, t.col, "bad port '%.*s' in port_order: a port number from 0 to %u",
			     SHOW(&t), TORUS_CONF_MAX_PORT);
			g_array_free(order, TRUE);
			return;
		}
		guint8 p = (guint8)v;
		if (has_port(order, p)) {
			note(ps, t.col, "port %u repeated in port_order: ignored", p);
			continue;
		}
		g_array_append_val(order, p);
	}
	note_early(ps, kw);
	if (ps->port_order_line)
		note(ps, kw->col, "port_order given again (line %u before): the last one counts",
		     ps->port_order_line);
	g_array_free(ps->c->port_order, TRUE);
	ps->c->port_order = order;
	ps->port_order_line = ps->line;
}

static void kw_max_changes(struct parser *ps, const struct tok *kw)
{
	struct tok t;
	uint64_t v;
	if (!next_tok(ps, &t)) {
		fail(ps, end_col(ps), "'%.*s' wants a number", SHOW(kw));
		return;
	}
	if (policy_parse_c_u64(t.s, t.n, G_MAXUINT, &v) < 0) {
		fail(ps, t.col, "bad max_changes '%.*s': a number", SHOW(&t));
		return;
	}
	note_early(ps, kw);
	ps->c->max_changes = (unsigned)v;
}

/* ---- lines ------------------------------------------------------------------------------ */

static void parse_line(struct parser *ps)
{
	struct tok kw;
	if (!next_tok(ps, &kw) || kw.s[0] == '#')
		return;
	size_t k = 0;
	while (k < G_N_ELEMENTS(keywords) && !policy_word_is(kw.s, kw.n, keywords[k].name))
		k++;
	if (k == G_N_ELEMENTS(keywords)) {
		fail(ps, kw.col, "unknown keyword '%.*s'", SHOW(&kw));
		return;
	}
	switch (keywords[k].kw) {
	case KW_TORUS:
	case KW_MESH:
		kw_topology(ps, &kw, keywords[k].kw == KW_MESH);
		break;
	case KW_LINK:
		kw_link(ps, &kw, keywords[k].dim, keywords[k].dir);
		break;
	case KW_DATELINE:
		kw_dateline(ps, &kw, keywords[k].dim);
		break;
	case KW_NEXT_SEED:
		note_early(ps, &kw);
		new_seed(ps);
		break;
	case KW_PORTGROUP:
		kw_portgroup(ps, &kw);
		break;
	case KW_PORT_ORDER:
		kw_port_order(ps, &kw);
		break;
	case KW_MAX_CHANGES:
		kw_max_changes(ps, &kw);
		break;
	}
}

/* Links in a dimension of radix 1 are read but never used. */
static void note_unused_links(struct parser *ps)
{
	const struct torus_conf *c = ps->c;
	for (guint i = 0; i < c->seeds->len; i++) {
		const struct torus_conf_seed *s = &g_array_index(c->seeds, struct torus_conf_seed, i);
		for (int d = 0; d < TORUS_NDIMS; d++)
			for (int r = 0; r < TORUS_NDIRS; r++)
				if (c->topology_given && c->radix[d] == 1 && s->link[d][r].given)
					policy_note(&ps->rep, s->link[d][r].line, 1, "%c%c_link "
						    "of seed %u: dimension %c has radix 1, the "
						    "link is not used", dim_name[d], dir_name[r],
						    i + 1, dim_name[d]);
	}
}

struct torus_conf *torus_conf_parse_text(const char *text, size_t len, const char *name,
					 GError **err)
{
	struct parser ps = { .text = text ? text : "", .len = text ? len : 0,
			     .rep = { .name = name ? name : "<torus-2QoS.conf>",
				      .domain = TORUS_CONF_ERROR, .code = TORUS_CONF_ERROR_SYNTAX,
				      .err = err } };
	ps.c = conf_new(name);
	ps.rep.notes = ps.c->notes;
	struct policy_line ln = { .next = 0 };
	while (!ps.rep.failed &&
	       policy_line_at(&ps.rep, ps.text, ps.len, ln.next, ps.line + 1, &ln) > 0) {
		ps.line = ln.no;
		ps.ls = ps.cur = ln.start;
		ps.le = ln.end;
		parse_line(&ps);
	}
	if (ps.rep.failed) {
		torus_conf_free(ps.c);
		return NULL;
	}
	note_unused_links(&ps);
	return ps.c;
}

/* ---- do the seeds suffice? -------------------------------------------------------------- */

/* What seed s lacks (a message), or NULL. */
static char *seed_lacks(const struct torus_conf *c, const struct torus_conf_seed *s)
{
	for (int d = 0; d < TORUS_NDIMS; d++) {
		if (c->radix[d] <= 1)
			continue;
		int p = s->link[d][TORUS_PLUS].given, m = s->link[d][TORUS_MINUS].given;
		char n = dim_name[d];
		if (!p && !m)
			return g_strdup_printf("dimension %c (radix %u) has neither %cp_link nor "
					       "%cm_link", n, c->radix[d], n, n);
		if (c->radix[d] == 4 && !c->mesh[d] && !(p && m))
			return g_strdup_printf("torus dimension %c of radix 4 needs both %cp_link "
					       "and %cm_link (discovery cannot place a radix-4 ring "
					       "otherwise): %c%c_link is missing", n, n, n, n,
					       p ? 'm' : 'p');
	}
	return NULL;
}

int torus_conf_check_seeds(const struct torus_conf *c, GError **err)
{
	const char *name = c->source ? c->source : "<torus-2QoS.conf>";
	if (!c->topology_given) {
		g_set_error(err, TORUS_CONF_ERROR, TORUS_CONF_ERROR_SEEDS, "%s: no torus or mesh "
			    "line: the topology is not configured", name);
		return -1;
	}
	if (c->seeds->len == 0) {
		struct torus_conf_seed none = { 0 };
		char *why = seed_lacks(c, &none);
		if (!why)
			return 0;
		g_set_error(err, TORUS_CONF_ERROR, TORUS_CONF_ERROR_SEEDS, "%s:%u: no seed: %s",
			    name, c->topology_line, why);
		g_free(why);
		return -1;
	}
	for (guint i = 0; i < c->seeds->len; i++) {
		const struct torus_conf_seed *s = &g_array_index(c->seeds, struct torus_conf_seed, i);
		char *why = seed_lacks(c, s);
		if (!why)
			continue;
		g_set_error(err, TORUS_CONF_ERROR, TORUS_CONF_ERROR_SEEDS, "%s:%u: seed %u: %s",
			    name, s->line, i + 1, why);
		g_free(why);
		return -1;
	}
	return 0;
}
