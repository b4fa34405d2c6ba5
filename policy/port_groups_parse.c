/* SPDX-License-Identifier: BSD-2-Clause */
/* port_groups_parse.c - reads a port groups policy file (NVIDIA's pgrp_policy_file; the SM manual's "Defining Port Groups")
 * into a struct pgrp_policy, refusing the whole file with "FILE:LINE:COL: what" and noting
 * what it assumes. OpenSM 3.3.23 has no such file; this reader is written from the documents.
 * How it reads (the decisions the documents leave open):
 *  - A '#' starts a comment to the end of the line; blanks (space, tab, CR, VT, FF) around a
 *    line are dropped; blank lines are ignored.
 *  - "port-group" and "end-port-group" are lines of their own (text after them is an error).
 *    A qualifier is a word (letters, digits, '-', '_') followed by ':' (blanks may come
 *    between); its value is the rest of the line. Qualifier names are case-sensitive.
 *  - Any other line continues the value of the qualifier before it, joined with one blank:
 *    the manual's examples, as its PDF edition prints them, are wrapped ("port-guid: 0x281" / ", 0x282"; "hca_idx=1"
 *    on a line of its own). Outside a stanza, or before a stanza's first qualifier, such a
 *    line is an error.
 *  - A ':' anywhere in a value is an error (the documents: a colon only ends a qualifier); so
 *    the older manuals' "port-regexp: SW*:3" and "(?:...)" in a regular expression are refused.
 *  - name: one word of visible characters (no blanks, no control bytes) without ','; group
 *    names are case-sensitive; given twice in a stanza it
 *    is an error; use: any text, given twice the last counts (with a note).
 *  - port-guid: GUIDs separated by ','; a GUID is hex with 0x or decimal, never 0; after '@'
 *    a port list of numbers and ranges (0-254) separated by '/'; blanks may stand around
 *    ',', '@', '/' and '-'. A GUID listed twice in one qualifier gets its ports merged (note).
 *    The old manual's "0x289/6/8/12" (no '@') is refused.
 *  - port-guid-range: exactly one LOW-HIGH, LOW <= HIGH; a list or '@' ports are errors.
 *  - port-name: entries separated by ','; an entry's items (hostname=, port=, hca_idx=, keys
 *    case-sensitive, each at most once, hostname required) are separated by ';' or blanks;
 *    port is 1-254 (port-name selects CA and router ports, which start at 1), hca_idx 0-65535.
 *  - node-name: a regular expression (GLib's, PCRE syntax, bytes not UTF-8); when the value
 *    ends in '@' and digits, those digits are one port (0-254) and the rest is the
 *    expression; any other '@' belongs to the expression. The expression is matched from the
 *    start of the NodeDescription (anchored at the start, not at the end): "SW.*" and "^SW"
 *    select descriptions beginning with SW, as the documents' example intends; write ".*ib4"
 *    to find ib4 anywhere. port-regexp, the older manuals' name for it, is read as node-name
 *    (with a note).
 *  - union-rule and subtract-rule: exactly two group names separated by ','.
 *  - A stanza needs a name and at least one rule; a stanza still open at the end of the file
 *    is an error at its "port-group" line. A file without stanzas is valid (with a note).
 *  - Names, redefinitions and references: see port_groups.h. References are resolved after
 *    the whole file: unknown names, then cycles, each reported at the reference. */
#include <string.h>
#include "policy/lines.h"
#include "policy/numbers.h"
#include "policy/port_groups.h"

G_DEFINE_QUARK(ibsm-pgrp-policy-error-quark, pgrp_policy_error)

#define MAX_HCA_IDX 65535
#define CYCLE_SHOWN 10          /* names of a reference cycle spelled out in its message */

static const char *const predefined_names[PGRP_N_PREDEFINED] = {
	[PGRP_ALL] = "ALL",
	[PGRP_ALL_SWITCHES] = "ALL_SWITCHES",
	[PGRP_ALL_CAS] = "ALL_CAS",
	[PGRP_ALL_ROUTERS] = "ALL_ROUTERS",
};

const char *pgrp_predefined_name(enum pgrp_predefined p)
{
	return (unsigned)p < PGRP_N_PREDEFINED ? predefined_names[p] : NULL;
}

int pgrp_predefined_lookup(const char *name)
{
	for (int i = 0; i < PGRP_N_PREDEFINED; i++)
		if (strcmp(name, predefined_names[i]) == 0)
			return i;
	return -1;
}

enum qual { Q_NAME, Q_USE, Q_PORT_GUID, Q_GUID_RANGE, Q_PORT_NAME, Q_NODE_NAME, Q_PORT_REGEXP,
	    Q_UNION, Q_SUBTRACT };

static const struct {
	const char *kw;
	enum qual q;
} qualifiers[] = {
	{ "name", Q_NAME },
	{ "use", Q_USE },
	{ "port-guid", Q_PORT_GUID },
	{ "port-guid-range", Q_GUID_RANGE },
	{ "port-name", Q_PORT_NAME },
	{ "node-name", Q_NODE_NAME },
	{ "port-regexp", Q_PORT_REGEXP },
	{ "union-rule", Q_UNION },
	{ "subtract-rule", Q_SUBTRACT },
};

struct pos {
	unsigned line, col;
};

/* A qualifier's value: its text (continuation lines joined with one blank) and where each of
 * its bytes was in the file. */
struct value {
	GString *s;
	GArray *pos;               /* struct pos, one per byte of s */
	struct pos start;          /* just after the qualifier's ':' (for an empty value) */
	struct pos end;            /* just after the last byte read */
};

struct parser {
	const char *text;
	size_t len;
	struct policy_report rep;
	struct pgrp_policy *p;
	struct pgrp_group *g;      /* the stanza open, or NULL */
	unsigned use_line;         /* where the open stanza's use: was given (0: not yet) */
	int pending;               /* a qualifier whose value is being read */
	enum qual q;
	struct pos q_pos;          /* where its name is */
	const char *q_kw;
	struct value v;
	GHashTable *latest;        /* name -> index + 1 of its latest definition */
};

/* ---- messages --------------------------------------------------------------------------- */

/* The file is refused (with PGRP_POLICY_ERROR_SYNTAX, or code), or a note taken, at where (a
 * struct pos). */
#define fail(ps, where, ...) policy_fail(&(ps)->rep, (where).line, (where).col, __VA_ARGS__)
#define fail_code(ps, code, where, ...) \
	policy_fail_code(&(ps)->rep, code, (where).line, (where).col, __VA_ARGS__)
#define note(ps, where, ...) policy_note(&(ps)->rep, (where).line, (where).col, __VA_ARGS__)

/* A whole string quoted in a message (at most 60 bytes of it). */
#define SHOWS(str) POLICY_SHOW(str, strlen(str))

static struct pos at(unsigned line, unsigned col)
{
	return (struct pos){ line, col };
}

/* ---- the model -------------------------------------------------------------------------- */

static void name_clear(gpointer data)
{
	g_free(((struct pgrp_name *)data)->hostname);
}

static void rule_free(gpointer data)
{
	struct pgrp_rule *r = data;
	if (r->guids)
		g_array_free(r->guids, TRUE);
	if (r->names)
		g_array_free(r->names, TRUE);
	g_free(r->pattern);
	if (r->regex)
		g_regex_unref(r->regex);
	g_free(r->ref[0].name);
	g_free(r->ref[1].name);
	g_free(r);
}

static void group_free(gpointer data)
{
	struct pgrp_group *g = data;
	if (!g)
		return;
	g_free(g->name);
	g_free(g->use);
	g_ptr_array_free(g->rules, TRUE);
	g_free(g);
}

void pgrp_policy_free(struct pgrp_policy *p)
{
	if (!p)
		return;
	g_free(p->source);
	g_ptr_array_free(p->groups, TRUE);
	g_array_free(p->order, TRUE);
	g_ptr_array_free(p->notes, TRUE);
	g_free(p);
}

static struct pgrp_rule *rule_new(struct parser *ps, enum pgrp_rule_kind kind)
{
	struct pgrp_rule *r = g_new0(struct pgrp_rule, 1);
	r->kind = kind;
	r->line = ps->q_pos.line;
	r->col = ps->q_pos.col;
	r->port = -1;
	for (int i = 0; i < 2; i++)
		r->ref[i].group = r->ref[i].predefined = -1;
	return r;
}

const struct pgrp_group *pgrp_policy_find(const struct pgrp_policy *p, const char *name)
{
	if (!p || !name)
		return NULL;
	for (guint i = p->groups->len; i-- > 0;) {
		const struct pgrp_group *g = p->groups->pdata[i];
		if (strcmp(g->name, name) == 0)
			return g;
	}
	return NULL;
}

int pgrp_policy_has(const struct pgrp_policy *p, const char *name)
{
	return name && (pgrp_predefined_lookup(name) >= 0 || pgrp_policy_find(p, name) != NULL);
}

/* ---- values ----------------------------------------------------------------------------- */

static int is_word(char c)
{
	return g_ascii_isalnum(c) || c == '-' || c == '_';
}

/* Where byte i of the value was (its end for i past the last byte). */
static struct pos vpos(const struct value *v, size_t i)
{
	if (i < v->pos->len)
		return g_array_index(v->pos, struct pos, i);
	return v->end;
}

/* Appends text[b, e) read on line `line` from column col. */
static void value_append(struct parser *ps, size_t b, size_t e, unsigned line, unsigned col)
{
	struct value *v = &ps->v;
	if (b >= e)
		return;
	if (v->s->len > 0) {
		struct pos p = at(line, col);
		g_string_append_c(v->s, ' ');
		g_array_append_val(v->pos, p);
	}
	g_string_append_len(v->s, ps->text + b, (gssize)(e - b));
	for (size_t i = b; i < e; i++) {
		struct pos p = at(line, col + (unsigned)(i - b));
		g_array_append_val(v->pos, p);
	}
	v->end = at(line, col + (unsigned)(e - b));
}

static void skip_vblanks(const struct value *v, size_t *i)
{
	while (*i < v->s->len && policy_is_blank(v->s->str[*i]))
		(*i)++;
}

/* A token of a GUID list: a word (a run of bytes that are neither blanks nor punct), or one
 * punct byte; p is that byte, or 0 for a word; at the end b == e == the value's length. */
struct vtok {
	size_t b, e;
	char p;
};

static void vt_next(const struct value *v, size_t *i, const char *punct, struct vtok *t)
{
	const char *s = v->s->str;
	skip_vblanks(v, i);
	t->b = *i;
	t->p = 0;
	if (*i >= v->s->len) {
		t->e = *i;
		return;
	}
	if (strchr(punct, s[*i])) {
		t->p = s[*i];
		t->e = ++(*i);
		return;
	}
	while (*i < v->s->len && !policy_is_blank(s[*i]) && !strchr(punct, s[*i]))
		(*i)++;
	t->e = *i;
}

static int vt_end(const struct value *v, const struct vtok *t)
{
	return t->b >= v->s->len;
}

/* The number value[b, e) for `what`, at most max: 0, or -1 (error set). */
static int vnumber(struct parser *ps, size_t b, size_t e, const char *what, uint64_t min,
		   uint64_t max, uint64_t *out)
{
	const char *s = ps->v.s->str + b;
	size_t n = e - b;
	int r = policy_parse_u64(s, n, out);
	if (r == -1) {
		fail(ps, vpos(&ps->v, b), "bad %s '%.*s' (decimal, or hex with 0x)", what,
		     POLICY_SHOW(s, n));
		return -1;
	}
	if (r == -2 || *out < min || *out > max) {
		fail(ps, vpos(&ps->v, b), "%s '%.*s' out of range (%llu-%llu)", what,
		     POLICY_SHOW(s, n), (unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	return 0;
}

static int vguid(struct parser *ps, const struct vtok *t, uint64_t *out)
{
	const char *s = ps->v.s->str + t->b;
	size_t n = t->e - t->b;
	int r = policy_parse_u64(s, n, out);
	if (r == -1) {
		fail(ps, vpos(&ps->v, t->b), "bad GUID '%.*s' (hex with 0x, or decimal)",
		     POLICY_SHOW(s, n));
		return -1;
	}
	if (r == -2) {
		fail(ps, vpos(&ps->v, t->b), "GUID '%.*s' has more than 64 bits",
		     POLICY_SHOW(s, n));
		return -1;
	}
	if (*out == 0) {
		fail(ps, vpos(&ps->v, t->b), "GUID 0: no node or port has GUID 0");
		return -1;
	}
	return 0;
}

/* What a token is, for messages: "'x'" or "the end of the value". */
static char *vt_show(const struct value *v, const struct vtok *t)
{
	if (vt_end(v, t))
		return g_strdup("the end of the value");
	return g_strdup_printf("'%.*s'", POLICY_SHOW(v->s->str + t->b, t->e - t->b));
}

__attribute__((format(printf, 3, 4)))
static void fail_tok(struct parser *ps, const struct vtok *t, const char *fmt, ...)
{
	if (ps->rep.failed)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *what = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	char *shown = vt_show(&ps->v, t);
	fail(ps, vpos(&ps->v, t->b), "%s, not %s", what, shown);
	g_free(shown);
	g_free(what);
}

/* ---- names ------------------------------------------------------------------------------ */

/* A group name at value[b, e) (trimmed): 0, or -1 (error set). */
static int check_group_name(struct parser *ps, size_t b, size_t e, const char *what)
{
	const char *s = ps->v.s->str;
	if (b == e) {
		fail(ps, vpos(&ps->v, b), "%s: a port group name is missing", what);
		return -1;
	}
	for (size_t i = b; i < e; i++)
		if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f || s[i] == ',') {
			fail(ps, vpos(&ps->v, b), "bad port group name '%.*s': one word of visible "
			     "characters, without ','", POLICY_SHOW(s + b, e - b));
			return -1;
		}
	return 0;
}

static void q_name(struct parser *ps)
{
	struct pgrp_group *g = ps->g;
	const struct value *v = &ps->v;
	if (g->name) {
		fail(ps, ps->q_pos, "a second 'name:' in this port-group (the first on line %u)",
		     g->name_line);
		return;
	}
	if (check_group_name(ps, 0, v->s->len, "'name:'") < 0)
		return;
	if (pgrp_predefined_lookup(v->s->str) >= 0) {
		fail(ps, vpos(v, 0), "'%s' is a predefined port group: it cannot be defined",
		     v->s->str);
		return;
	}
	g->name = g_strdup(v->s->str);
	g->name_line = vpos(v, 0).line;
	g->name_col = vpos(v, 0).col;
}

static void q_use(struct parser *ps)
{
	struct pgrp_group *g = ps->g;
	if (ps->use_line)
		note(ps, ps->q_pos, "'use:' given again in this port-group (first on line %u): the "
		     "last one counts", ps->use_line);
	g_free(g->use);
	g->use = g_strdup(ps->v.s->str);
	ps->use_line = ps->q_pos.line;
}

/* ---- port-guid and port-guid-range ------------------------------------------------------ */

/* A port list after '@' ("1", "2-5/7/9-13"): adds to *set; leaves in *t the token that ends
 * it. 0, or -1 (error set). */
static int port_list(struct parser *ps, size_t *i, struct pgrp_port_set *set, struct vtok *t)
{
	const struct value *v = &ps->v;
	for (;;) {
		uint64_t lo, hi;
		vt_next(v, i, ",@/-", t);
		if (t->p || vt_end(v, t)) {
			fail_tok(ps, t, "a port number was expected");
			return -1;
		}
		size_t lo_b = t->b;
		if (vnumber(ps, t->b, t->e, "port", 0, PGRP_MAX_PORT, &lo) < 0)
			return -1;
		hi = lo;
		vt_next(v, i, ",@/-", t);
		if (t->p == '-') {
			vt_next(v, i, ",@/-", t);
			if (t->p || vt_end(v, t)) {
				fail_tok(ps, t, "the last port of a range was expected");
				return -1;
			}
			if (vnumber(ps, t->b, t->e, "port", 0, PGRP_MAX_PORT, &hi) < 0)
				return -1;
			if (hi < lo) {
				fail(ps, vpos(v, lo_b), "port range %u-%u: the first port is "
				     "larger than the last", (unsigned)lo, (unsigned)hi);
				return -1;
			}
			vt_next(v, i, ",@/-", t);
		}
		for (uint64_t p = lo; p <= hi; p++)
			set->bits[p / 64] |= 1ull << (p % 64);
		if (t->p != '/')
			return 0;
	}
}

static void add_guid(struct parser *ps, struct pgrp_rule *r, const struct pgrp_guid *item)
{
	for (guint k = 0; k < r->guids->len; k++) {
		struct pgrp_guid *old = &g_array_index(r->guids, struct pgrp_guid, k);
		if (old->guid != item->guid)
			continue;
		note(ps, at(item->line, item->col), "GUID 0x%" G_GINT64_MODIFIER "x listed again "
		     "in this port-guid (first at line %u column %u): its ports are merged",
		     item->guid, old->line, old->col);
		old->all_ports |= item->all_ports;
		for (int w = 0; w < 4; w++)
			old->ports.bits[w] = old->all_ports ? 0 :
					     old->ports.bits[w] | item->ports.bits[w];
		return;
	}
	g_array_append_val(r->guids, *item);
}

static void q_port_guid(struct parser *ps)
{
	const struct value *v = &ps->v;
	struct pgrp_rule *r = rule_new(ps, PGRP_RULE_PORT_GUID);
	r->guids = g_array_new(FALSE, TRUE, sizeof(struct pgrp_guid));
	size_t i = 0;
	struct vtok t;
	for (;;) {
		vt_next(v, &i, ",@/-", &t);
		if (t.p || vt_end(v, &t)) {
			fail_tok(ps, &t, "a GUID was expected");
			goto out;
		}
		struct pgrp_guid item = { .all_ports = 1, .line = vpos(v, t.b).line,
					  .col = vpos(v, t.b).col };
		if (vguid(ps, &t, &item.guid) < 0)
			goto out;
		vt_next(v, &i, ",@/-", &t);
		if (t.p == '@') {
			item.all_ports = 0;
			if (port_list(ps, &i, &item.ports, &t) < 0)
				goto out;
		} else if (t.p == '/' || t.p == '-') {
			fail(ps, vpos(v, t.b), "'%c' after a GUID: its ports follow '@' "
			     "(GUID@1/3-5)", t.p);
			goto out;
		}
		if (t.p != ',' && !vt_end(v, &t)) {
			fail_tok(ps, &t, "',' (between GUIDs) or the end of the list was expected");
			goto out;
		}
		add_guid(ps, r, &item);
		if (vt_end(v, &t))
			break;
	}
	g_ptr_array_add(ps->g->rules, r);
	return;
out:
	rule_free(r);
}

static void q_guid_range(struct parser *ps)
{
	const struct value *v = &ps->v;
	struct pgrp_rule *r = rule_new(ps, PGRP_RULE_GUID_RANGE);
	size_t i = 0;
	struct vtok t, lo_t;
	vt_next(v, &i, ",@-", &lo_t);
	if (lo_t.p || vt_end(v, &lo_t)) {
		fail_tok(ps, &lo_t, "a GUID range LOW-HIGH was expected");
		goto out;
	}
	if (vguid(ps, &lo_t, &r->lo) < 0)
		goto out;
	vt_next(v, &i, ",@-", &t);
	if (t.p != '-') {
		if (t.p == ',')
			fail(ps, vpos(v, t.b), "',' in port-guid-range: it takes one range "
			     "LOW-HIGH, not a list (write one port-guid-range per range)");
		else if (t.p == '@')
			fail(ps, vpos(v, t.b), "'@' in port-guid-range: a range of GUIDs has no "
			     "port list (use port-guid: GUID@PORTS)");
		else
			fail_tok(ps, &t, "'-' and the last GUID of the range were expected");
		goto out;
	}
	vt_next(v, &i, ",@-", &t);
	if (t.p || vt_end(v, &t)) {
		fail_tok(ps, &t, "the last GUID of the range was expected");
		goto out;
	}
	if (vguid(ps, &t, &r->hi) < 0)
		goto out;
	vt_next(v, &i, ",@-", &t);
	if (t.p == ',') {
		fail(ps, vpos(v, t.b), "a list of ranges: port-guid-range takes one range LOW-HIGH "
		     "(write one port-guid-range per range)");
		goto out;
	}
	if (t.p == '@') {
		fail(ps, vpos(v, t.b), "'@' in port-guid-range: a range of GUIDs has no port list "
		     "(use port-guid: GUID@PORTS)");
		goto out;
	}
	if (!vt_end(v, &t)) {
		fail_tok(ps, &t, "the end of the range was expected");
		goto out;
	}
	if (r->lo > r->hi) {
		fail(ps, vpos(v, lo_t.b), "GUID range 0x%" G_GINT64_MODIFIER "x-0x%"
		     G_GINT64_MODIFIER "x: the first GUID is larger than the last", r->lo, r->hi);
		goto out;
	}
	g_ptr_array_add(ps->g->rules, r);
	return;
out:
	rule_free(r);
}

/* ---- port-name -------------------------------------------------------------------------- */

static int name_item_end(char c)
{
	return policy_is_blank(c) || c == ';' || c == ',' || c == '=';
}

/* One item "key=value" of a port-name entry at *i: 0, or -1 (error set). */
static int name_item(struct parser *ps, size_t *i, struct pgrp_name *e, unsigned *seen)
{
	const struct value *v = &ps->v;
	const char *s = v->s->str;
	size_t n = v->s->len, kb = *i;
	while (*i < n && !name_item_end(s[*i]))
		(*i)++;
	size_t ke = *i;
	skip_vblanks(v, i);
	if (kb == ke || *i >= n || s[*i] != '=') {
		fail(ps, vpos(v, kb), "'%.*s' in port-name: an item is hostname=NAME, port=N or "
		     "hca_idx=N", POLICY_SHOW(s + kb, (kb == ke ? 1 : ke - kb)));
		return -1;
	}
	(*i)++;
	skip_vblanks(v, i);
	size_t vb = *i;
	while (*i < n && !name_item_end(s[*i]))
		(*i)++;
	size_t ve = *i;
	static const char *const keys[] = { "hostname", "port", "hca_idx" };
	unsigned k = 0;
	while (k < G_N_ELEMENTS(keys) && !policy_word_is(s + kb, ke - kb, keys[k]))
		k++;
	if (k == G_N_ELEMENTS(keys)) {
		fail(ps, vpos(v, kb), "unknown port-name item '%.*s' (hostname, port or hca_idx)",
		     POLICY_SHOW(s + kb, ke - kb));
		return -1;
	}
	if (*seen & (1u << k)) {
		fail(ps, vpos(v, kb), "'%s' given twice in one port-name entry", keys[k]);
		return -1;
	}
	*seen |= 1u << k;
	if (vb == ve) {
		fail(ps, vpos(v, vb), "'%s=' wants a value", keys[k]);
		return -1;
	}
	uint64_t x;
	if (k == 0) {
		e->hostname = g_strndup(s + vb, ve - vb);
	} else if (k == 1) {
		if (vnumber(ps, vb, ve, "port", 1, PGRP_MAX_PORT, &x) < 0)
			return -1;
		e->port = (int)x;
	} else {
		if (vnumber(ps, vb, ve, "hca_idx", 0, MAX_HCA_IDX, &x) < 0)
			return -1;
		e->hca_idx = (int)x;
	}
	return 0;
}

static void q_port_name(struct parser *ps)
{
	const struct value *v = &ps->v;
	const char *s = v->s->str;
	size_t n = v->s->len, i = 0;
	struct pgrp_rule *r = rule_new(ps, PGRP_RULE_PORT_NAME);
	r->names = g_array_new(FALSE, TRUE, sizeof(struct pgrp_name));
	g_array_set_clear_func(r->names, name_clear);
	for (;;) {
		skip_vblanks(v, &i);
		struct pos ep = vpos(v, i);
		struct pgrp_name e = { .port = -1, .hca_idx = -1, .line = ep.line, .col = ep.col };
		unsigned seen = 0;
		for (;;) {
			while (i < n && (policy_is_blank(s[i]) || s[i] == ';'))
				i++;
			if (i >= n || s[i] == ',')
				break;
			if (name_item(ps, &i, &e, &seen) < 0) {
				g_free(e.hostname);
				goto out;
			}
		}
		if (!seen) {
			fail(ps, vpos(v, i), r->names->len ? "an entry is missing after ','" :
			     "'port-name:' wants entries hostname=NAME [port=N] [hca_idx=N]");
			goto out;
		}
		if (!e.hostname) {
			fail(ps, ep, "a port-name entry without hostname= (the hostname is "
			     "required)");
			goto out;
		}
		g_array_append_val(r->names, e);
		if (i >= n)
			break;
		i++;            /* the ',' */
	}
	g_ptr_array_add(ps->g->rules, r);
	return;
out:
	rule_free(r);
}

/* ---- node-name -------------------------------------------------------------------------- */

static void q_node_name(struct parser *ps)
{
	const struct value *v = &ps->v;
	const char *s = v->s->str;
	size_t n = v->s->len, pe = n;
	if (ps->q == Q_PORT_REGEXP)
		note(ps, ps->q_pos, "'port-regexp:' is the older manuals' name of 'node-name:': "
		     "read as node-name");
	if (n == 0) {
		fail(ps, v->start, "'%s:' wants a regular expression", ps->q_kw);
		return;
	}
	struct pgrp_rule *r = rule_new(ps, PGRP_RULE_NODE_NAME);
	const char *atsign = g_strrstr(s, "@");
	if (atsign) {
		size_t a = (size_t)(atsign - s), d = a + 1, de;
		skip_vblanks(v, &d);
		de = d;
		while (de < n && g_ascii_isdigit(s[de]))
			de++;
		if (de > d && de == n) {
			uint64_t port;
			if (vnumber(ps, d, de, "port", 0, PGRP_MAX_PORT, &port) < 0)
				goto out;
			r->port = (int)port;
			pe = a;
			while (pe > 0 && policy_is_blank(s[pe - 1]))
				pe--;
			if (pe == 0) {
				fail(ps, vpos(v, 0), "no regular expression before '@'");
				goto out;
			}
		}
	}
	r->pattern = g_strndup(s, pe);
	GError *rerr = NULL;
	r->regex = g_regex_new(r->pattern, G_REGEX_RAW | G_REGEX_ANCHORED, 0, &rerr);
	if (!r->regex) {
		fail(ps, vpos(v, 0), "bad regular expression '%.*s': %s", POLICY_SHOW(s, pe),
		     rerr ? rerr->message : "?");
		g_clear_error(&rerr);
		goto out;
	}
	g_ptr_array_add(ps->g->rules, r);
	return;
out:
	rule_free(r);
}

/* ---- union-rule and subtract-rule ------------------------------------------------------- */

static void q_two_groups(struct parser *ps)
{
	const struct value *v = &ps->v;
	const char *s = v->s->str;
	size_t n = v->s->len, i = 0;
	struct pgrp_rule *r = rule_new(ps, ps->q == Q_UNION ? PGRP_RULE_UNION : PGRP_RULE_SUBTRACT);
	unsigned count = 0;
	for (;;) {
		skip_vblanks(v, &i);
		size_t b = i;
		while (i < n && s[i] != ',')
			i++;
		size_t e = i;
		while (e > b && policy_is_blank(s[e - 1]))
			e--;
		if (b == e) {
			fail(ps, vpos(v, b), "'%s:' wants two port groups, 'A, B': %s", ps->q_kw,
			     count == 0 ? "none is given" : "a name is missing");
			goto out;
		}
		if (count == 2) {
			fail(ps, vpos(v, b), "a third port group in '%s:': it takes exactly two "
			     "(define a group of two, then use that)", ps->q_kw);
			goto out;
		}
		if (check_group_name(ps, b, e, ps->q_kw) < 0)
			goto out;
		struct pgrp_ref *ref = &r->ref[count++];
		ref->name = g_strndup(s + b, e - b);
		ref->line = vpos(v, b).line;
		ref->col = vpos(v, b).col;
		if (i >= n)
			break;
		i++;            /* the ',' */
	}
	if (count < 2) {
		fail(ps, v->end, "'%s:' wants two port groups, 'A, B': the second is missing",
		     ps->q_kw);
		goto out;
	}
	g_ptr_array_add(ps->g->rules, r);
	return;
out:
	rule_free(r);
}

/* ---- qualifiers and stanzas ------------------------------------------------------------- */

static void finish_qualifier(struct parser *ps)
{
	if (!ps->pending || ps->rep.failed)
		return;
	ps->pending = 0;
	const char *colon = memchr(ps->v.s->str, ':', ps->v.s->len);
	if (colon) {
		fail(ps, vpos(&ps->v, (size_t)(colon - ps->v.s->str)), "':' inside the value of "
		     "'%s:' (a colon only ends a qualifier's name)", ps->q_kw);
		return;
	}
	switch (ps->q) {
	case Q_NAME:
		q_name(ps);
		break;
	case Q_USE:
		q_use(ps);
		break;
	case Q_PORT_GUID:
		q_port_guid(ps);
		break;
	case Q_GUID_RANGE:
		q_guid_range(ps);
		break;
	case Q_PORT_NAME:
		q_port_name(ps);
		break;
	case Q_NODE_NAME:
	case Q_PORT_REGEXP:
		q_node_name(ps);
		break;
	case Q_UNION:
	case Q_SUBTRACT:
		q_two_groups(ps);
		break;
	}
}

static void begin_group(struct parser *ps, unsigned line)
{
	if (ps->g) {
		fail(ps, at(line, 1), "'port-group' inside the port-group opened on line %u "
		     "(end-port-group missing)", ps->g->line);
		return;
	}
	ps->g = g_new0(struct pgrp_group, 1);
	ps->g->line = line;
	ps->g->rules = g_ptr_array_new_with_free_func(rule_free);
	ps->g->previous = -1;
	ps->use_line = 0;
}

static void end_group(struct parser *ps, unsigned line)
{
	struct pgrp_group *g = ps->g;
	if (!g) {
		fail(ps, at(line, 1), "'end-port-group' without a 'port-group' before it");
		return;
	}
	if (!g->name) {
		fail(ps, at(g->line, 1), "port-group without a name (a 'name:' qualifier is "
		     "required)");
		return;
	}
	if (g->rules->len == 0) {
		fail(ps, at(g->line, 1), "port-group '%.*s' has no rule (port-guid, "
		     "port-guid-range, port-name, node-name, union-rule or subtract-rule)",
		     SHOWS(g->name));
		return;
	}
	if (!g->use)
		g->use = g_strdup("");
	guint idx = ps->p->groups->len;
	gpointer prev = g_hash_table_lookup(ps->latest, g->name);
	if (prev) {
		struct pgrp_group *old = ps->p->groups->pdata[GPOINTER_TO_UINT(prev) - 1];
		g->previous = (int)GPOINTER_TO_UINT(prev) - 1;
		old->final = 0;
		note(ps, at(g->name_line, g->name_col), "port group '%.*s' defined again (before "
		     "on line %u): this definition replaces it, and '%.*s' inside it means the "
		     "one before", SHOWS(g->name), old->line, SHOWS(g->name));
	}
	g->final = 1;
	g_ptr_array_add(ps->p->groups, g);
	g_hash_table_insert(ps->latest, g->name, GUINT_TO_POINTER(idx + 1));
	ps->g = NULL;
}

/* A qualifier "kw:" whose name is text[b, e); its value starts at v; ls: where the line starts. */
static void begin_qualifier(struct parser *ps, unsigned line, size_t b, size_t e, size_t v,
			    size_t ls)
{
	const char *t = ps->text + b;
	size_t n = e - b;
	struct pos qp = at(line, (unsigned)(b - ls + 1));
	if (policy_word_is(t, n, "port-group") || policy_word_is(t, n, "end-port-group")) {
		fail(ps, qp, "'%.*s' stands alone on its line, without ':'", (int)n, t);
		return;
	}
	size_t k = 0;
	while (k < G_N_ELEMENTS(qualifiers) && !policy_word_is(t, n, qualifiers[k].kw))
		k++;
	if (k == G_N_ELEMENTS(qualifiers)) {
		fail(ps, qp, "unknown qualifier '%.*s:'", POLICY_SHOW(t, n));
		return;
	}
	if (!ps->g) {
		fail(ps, qp, "qualifier '%s:' outside a port-group ('port-group' must come first)",
		     qualifiers[k].kw);
		return;
	}
	ps->pending = 1;
	ps->q = qualifiers[k].q;
	ps->q_kw = qualifiers[k].kw;
	ps->q_pos = qp;
	g_string_truncate(ps->v.s, 0);
	g_array_set_size(ps->v.pos, 0);
	ps->v.start = ps->v.end = at(line, (unsigned)(v - ls + 1));
}

/* One line with something on it: text[b, e), trimmed, comment cut; ls: where the line starts. */
static void handle_line(struct parser *ps, unsigned line, size_t ls, size_t b, size_t e)
{
	const char *t = ps->text;
	size_t w = b, k;
	while (w < e && is_word(t[w]))
		w++;
	k = w;
	while (k < e && policy_is_blank(t[k]))
		k++;
	int qualifier = w > b && k < e && t[k] == ':';
	int begin = policy_word_is(t + b, w - b, "port-group");
	int end = policy_word_is(t + b, w - b, "end-port-group");
	if (!qualifier && (begin || end)) {
		finish_qualifier(ps);
		if (ps->rep.failed)
			return;
		if (w < e) {
			fail(ps, at(line, (unsigned)(k - ls + 1)), "unexpected text after '%s'",
			     begin ? "port-group" : "end-port-group");
			return;
		}
		if (begin)
			begin_group(ps, line);
		else
			end_group(ps, line);
		return;
	}
	if (qualifier) {
		finish_qualifier(ps);
		if (ps->rep.failed)
			return;
		begin_qualifier(ps, line, b, w, k + 1, ls);
		if (ps->rep.failed)
			return;
		size_t vb = k + 1;
		while (vb < e && policy_is_blank(t[vb]))
			vb++;
		value_append(ps, vb, e, line, (unsigned)(vb - ls + 1));
		return;
	}
	if (!ps->g) {
		fail(ps, at(line, (unsigned)(b - ls + 1)), "'%.*s' outside a port-group",
		     POLICY_SHOW(t + b, e - b));
		return;
	}
	if (!ps->pending) {
		fail(ps, at(line, (unsigned)(b - ls + 1)), "'%.*s' is not a qualifier (want "
		     "'name: value')", POLICY_SHOW(t + b, e - b));
		return;
	}
	value_append(ps, b, e, line, (unsigned)(b - ls + 1));
}

/* ---- references ------------------------------------------------------------------------- */

static int resolve_ref(struct parser *ps, guint gi, struct pgrp_ref *ref)
{
	const struct pgrp_group *g = ps->p->groups->pdata[gi];
	ref->predefined = pgrp_predefined_lookup(ref->name);
	if (ref->predefined >= 0)
		return 0;
	if (strcmp(ref->name, g->name) == 0) {
		if (g->previous < 0) {
			fail_code(ps, PGRP_POLICY_ERROR_REFERENCE, at(ref->line, ref->col),
				  "port group '%.*s' refers to itself and has no earlier "
				  "definition to mean: a reference cycle (%.*s -> %.*s)",
				  SHOWS(g->name), SHOWS(g->name), SHOWS(g->name));
			return -1;
		}
		ref->group = g->previous;
		return 0;
	}
	gpointer latest = g_hash_table_lookup(ps->latest, ref->name);
	if (!latest) {
		fail_code(ps, PGRP_POLICY_ERROR_REFERENCE, at(ref->line, ref->col),
			  "unknown port group '%.*s'", SHOWS(ref->name));
		return -1;
	}
	ref->group = (int)GPOINTER_TO_UINT(latest) - 1;
	return 0;
}

static int resolve_refs(struct parser *ps)
{
	for (guint gi = 0; gi < ps->p->groups->len; gi++) {
		struct pgrp_group *g = ps->p->groups->pdata[gi];
		for (guint ri = 0; ri < g->rules->len; ri++) {
			struct pgrp_rule *r = g->rules->pdata[ri];
			if (r->kind != PGRP_RULE_UNION && r->kind != PGRP_RULE_SUBTRACT)
				continue;
			for (int k = 0; k < 2; k++)
				if (resolve_ref(ps, gi, &r->ref[k]) < 0)
					return -1;
		}
	}
	return 0;
}

/* The k-th reference of group g that names a definition, or NULL past the last. */
static const struct pgrp_ref *group_edge(const struct pgrp_group *g, guint k)
{
	for (guint ri = 0; ri < g->rules->len; ri++) {
		const struct pgrp_rule *r = g->rules->pdata[ri];
		if (r->kind != PGRP_RULE_UNION && r->kind != PGRP_RULE_SUBTRACT)
			continue;
		for (int j = 0; j < 2; j++)
			if (r->ref[j].group >= 0 && k-- == 0)
				return &r->ref[j];
	}
	return NULL;
}

struct dfs_frame {
	int g;
	guint next;                /* the next edge of g to follow */
};

/* A definition in a cycle's message: its name, and its line when the name has several. */
static void append_def(GString *path, const struct pgrp_group *g)
{
	g_string_append_printf(path, "%.*s", SHOWS(g->name));
	if (g->previous >= 0 || !g->final)
		g_string_append_printf(path, " (line %u)", g->line);
}

static void fail_cycle(struct parser *ps, const GArray *stack, int target,
		       const struct pgrp_ref *ref)
{
	const struct pgrp_policy *p = ps->p;
	guint from = stack->len - 1;
	while (from > 0 && g_array_index(stack, struct dfs_frame, from).g != target)
		from--;
	guint len = stack->len - from;
	GString *path = g_string_new(NULL);
	for (guint i = from; i < stack->len; i++) {
		if (i - from == CYCLE_SHOWN && len > CYCLE_SHOWN + 1) {
			g_string_append_printf(path, "... (%u groups) -> ", len);
			i = stack->len - 1;
		}
		append_def(path, p->groups->pdata[g_array_index(stack, struct dfs_frame, i).g]);
		g_string_append(path, " -> ");
	}
	append_def(path, p->groups->pdata[target]);
	fail_code(ps, PGRP_POLICY_ERROR_REFERENCE, at(ref->line, ref->col),
		  "reference cycle: %s", path->str);
	g_string_free(path, TRUE);
}

/* Depth first over the definitions: a cycle is an error; p->order gets each definition after
 * those it refers to. Iterative: a chain of many groups needs no deep C stack. */
static int order_groups(struct parser *ps)
{
	struct pgrp_policy *p = ps->p;
	guint n = p->groups->len;
	guint8 *state = g_new0(guint8, n);     /* 0 not seen, 1 on the stack, 2 done */
	GArray *stack = g_array_new(FALSE, FALSE, sizeof(struct dfs_frame));
	int rc = 0;
	for (guint s = 0; s < n && rc == 0; s++) {
		if (state[s])
			continue;
		struct dfs_frame f = { (int)s, 0 };
		g_array_append_val(stack, f);
		state[s] = 1;
		while (stack->len && rc == 0) {
			struct dfs_frame *top = &g_array_index(stack, struct dfs_frame,
							       stack->len - 1);
			const struct pgrp_ref *ref = group_edge(p->groups->pdata[top->g],
								top->next);
			if (!ref) {
				state[top->g] = 2;
				g_array_append_val(p->order, top->g);
				g_array_set_size(stack, stack->len - 1);
				continue;
			}
			top->next++;
			if (state[ref->group] == 1) {
				fail_cycle(ps, stack, ref->group, ref);
				rc = -1;
			} else if (state[ref->group] == 0) {
				struct dfs_frame nf = { ref->group, 0 };
				state[ref->group] = 1;
				g_array_append_val(stack, nf);
			}
		}
	}
	g_array_free(stack, TRUE);
	g_free(state);
	return rc;
}

/* ---- the file --------------------------------------------------------------------------- */

static void read_lines(struct parser *ps)
{
	struct policy_line ln = { .next = 0 };
	int r = 0;
	while (!ps->rep.failed &&
	       (r = policy_line_at(&ps->rep, ps->text, ps->len, ln.next, ln.no + 1, &ln)) > 0) {
		size_t ls = ln.start;
		const char *hash = memchr(ps->text + ls, '#', ln.end - ls);
		size_t b = ls, e = hash ? (size_t)(hash - ps->text) : ln.end;
		while (b < e && policy_is_blank(ps->text[b]))
			b++;
		while (e > b && policy_is_blank(ps->text[e - 1]))
			e--;
		if (b < e)
			handle_line(ps, ln.no, ls, b, e);
	}
	if (r < 0)
		return;
	finish_qualifier(ps);
	if (!ps->rep.failed && ps->g)
		fail(ps, at(ps->g->line, 1), "port-group not closed: end-port-group is missing "
		     "before the end of the file");
}

struct pgrp_policy *pgrp_policy_parse_text(const char *text, size_t len, const char *name,
					   GError **err)
{
	struct parser ps = { .text = text ? text : "", .len = text ? len : 0,
			     .rep = { .name = name ? name : "<port-groups>",
				      .domain = PGRP_POLICY_ERROR, .code = PGRP_POLICY_ERROR_SYNTAX,
				      .err = err } };
	ps.p = g_new0(struct pgrp_policy, 1);
	ps.p->source = g_strdup(name);
	ps.p->groups = g_ptr_array_new_with_free_func(group_free);
	ps.p->order = g_array_new(FALSE, FALSE, sizeof(int));
	ps.p->notes = ps.rep.notes = g_ptr_array_new_with_free_func(g_free);
	ps.v.s = g_string_new(NULL);
	ps.v.pos = g_array_new(FALSE, FALSE, sizeof(struct pos));
	ps.latest = g_hash_table_new(g_str_hash, g_str_equal);
	read_lines(&ps);
	if (!ps.rep.failed && ps.p->groups->len == 0)
		note(&ps, at(1, 1), "no port group is defined: only the predefined ones exist");
	if (!ps.rep.failed)
		resolve_refs(&ps);
	if (!ps.rep.failed)
		order_groups(&ps);
	g_hash_table_destroy(ps.latest);
	g_string_free(ps.v.s, TRUE);
	g_array_free(ps.v.pos, TRUE);
	group_free(ps.g);
	if (ps.rep.failed) {
		pgrp_policy_free(ps.p);
		return NULL;
	}
	return ps.p;
}
