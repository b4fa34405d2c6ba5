/* SPDX-License-Identifier: BSD-2-Clause */
/* chain_stanza.c - reads the stanzas of a routing chain policy file (policy/chain_stanza.h
 * says the grammar): the one reader of the topology and routing chain policies, so that a
 * wrong line is refused the same way, "FILE:LINE:COL: what", in both. */
#include <string.h>
#include "policy/chain_stanza.h"
#include "policy/lines.h"

struct reader {
	const char *text;
	size_t len;
	const struct chain_stanza_spec *spec;
	struct policy_report rep;
	unsigned line;
	size_t ls;                 /* where the line starts */
	GArray *stanzas;
	int open;                  /* a stanza is open: the last element of stanzas */
};

/* The blanks of these files: space, tab and CR (a VT or FF is text). */
static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static unsigned col_of(const struct reader *rd, const char *p)
{
	return policy_col(rd->ls, (size_t)(p - rd->text));
}

/* The file is refused at p, on the line being read. */
#define fail_at(rd, p, ...) policy_fail(&(rd)->rep, (rd)->line, col_of(rd, p), __VA_ARGS__)

/* The stanza words of the three routing chain files, for "belongs in another file". */
static const struct {
	const char *word, *file;
} stanza_words[] = {
	{ "port-group", "pgrp_policy_file" }, { "end-port-group", "pgrp_policy_file" },
	{ "topology", "topo_policy_file" }, { "end-topology", "topo_policy_file" },
	{ "unicast-step", "rch_policy_file" }, { "end-unicast-step", "rch_policy_file" },
};

static int qualifier_index(const struct chain_stanza_spec *spec, const char *s, size_t n)
{
	for (unsigned q = 0; q < spec->n_qualifiers; q++)
		if (policy_word_is_nocase(s, n, spec->qualifiers[q]))
			return (int)q;
	return -1;
}

static void stanza_open(struct reader *rd, const char *w)
{
	if (rd->open) {
		const struct chain_stanza *s = &g_array_index(rd->stanzas, struct chain_stanza,
							      rd->stanzas->len - 1);
		fail_at(rd, w, "'%s' inside the %s stanza opened on line %u: '%s' is missing "
			"before it", rd->spec->open, rd->spec->open, s->at.line, rd->spec->close);
		return;
	}
	struct chain_stanza s = { .at = { rd->line, col_of(rd, w) } };
	g_array_append_val(rd->stanzas, s);
	rd->open = 1;
}

static void stanza_close(struct reader *rd, const char *w)
{
	if (!rd->open) {
		fail_at(rd, w, "'%s' without a '%s' before it", rd->spec->close, rd->spec->open);
		return;
	}
	rd->open = 0;
}

/* A line without ':' (s, n: the line without comment and surrounding blanks). */
static void word_line(struct reader *rd, const char *s, size_t n)
{
	const struct chain_stanza_spec *spec = rd->spec;
	size_t w = 0;
	while (w < n && !is_blank(s[w]))
		w++;
	if (w == n && policy_word_is_nocase(s, n, spec->open)) {
		stanza_open(rd, s);
		return;
	}
	if (w == n && policy_word_is_nocase(s, n, spec->close)) {
		stanza_close(rd, s);
		return;
	}
	if (policy_word_is_nocase(s, w, spec->open) || policy_word_is_nocase(s, w, spec->close)) {
		size_t x = w;
		while (is_blank(s[x]))   /* the line ends in a non-blank: x < n */
			x++;
		fail_at(rd, s + x, "'%.*s' stands alone on its line", POLICY_SHOW(s, w));
		return;
	}
	/* "topology 1" in a unicast-step is a qualifier without its ':'; "topology" alone, the
	 * other file's stanza */
	int qualifier = qualifier_index(spec, s, w) >= 0;
	for (size_t i = 0; i < G_N_ELEMENTS(stanza_words) && !(qualifier && w < n); i++)
		if (policy_word_is_nocase(s, w, stanza_words[i].word)) {
			fail_at(rd, s, "'%.*s' belongs in the %s, not here (this file holds '%s' "
				"stanzas)", POLICY_SHOW(s, w), stanza_words[i].file, spec->open);
			return;
		}
	if (qualifier) {
		fail_at(rd, s + w, "'%.*s' wants a ':' after it (qualifier: value)",
			POLICY_SHOW(s, w));
		return;
	}
	fail_at(rd, s, "'%.*s' is neither '%s', '%s' nor a qualifier (qualifier: value)",
		POLICY_SHOW(s, n), spec->open, spec->close);
}

static void unknown_qualifier(struct reader *rd, const char *s, size_t n)
{
	GString *known = g_string_new(NULL);
	for (unsigned q = 0; q < rd->spec->n_qualifiers; q++)
		g_string_append_printf(known, "%s%s", q ? ", " : "", rd->spec->qualifiers[q]);
	/* the manuals' example for the step id reads "is: 1" */
	const char *hint = policy_word_is_nocase(s, n, "is") &&
			   qualifier_index(rd->spec, "id", 2) >= 0 ?
			   " ('is: 1' in the manuals' example means 'id: 1')" : "";
	fail_at(rd, s, "unknown qualifier '%.*s' in a %s stanza (%s knows %s)%s",
		POLICY_SHOW(s, n), rd->spec->open, rd->spec->open, known->str, hint);
	g_string_free(known, TRUE);
}

/* "name: value" (s, n: the line without comment and surrounding blanks; colon in it). */
static void qualifier_line(struct reader *rd, const char *s, size_t n, const char *colon)
{
	size_t kn = (size_t)(colon - s);
	while (kn > 0 && is_blank(s[kn - 1]))
		kn--;
	if (kn == 0) {
		fail_at(rd, colon, "':' without a qualifier name before it");
		return;
	}
	int q = qualifier_index(rd->spec, s, kn);
	if (q < 0) {
		unknown_qualifier(rd, s, kn);
		return;
	}
	if (!rd->open) {
		fail_at(rd, s, "'%s:' outside a %s stanza (%s ... %s)", rd->spec->qualifiers[q],
			rd->spec->open, rd->spec->open, rd->spec->close);
		return;
	}
	struct chain_stanza *st = &g_array_index(rd->stanzas, struct chain_stanza,
						 rd->stanzas->len - 1);
	struct chain_stanza_value *v = &st->v[q];
	if (v->s) {
		fail_at(rd, s, "'%s:' given twice in one %s stanza (first on line %u)",
			rd->spec->qualifiers[q], rd->spec->open, v->at.line);
		return;
	}
	const char *b = colon + 1, *e = s + n;
	while (b < e && is_blank(*b))
		b++;
	const char *second = memchr(b, ':', (size_t)(e - b));
	if (second) {
		fail_at(rd, second, "':' inside the value of '%s:' (a colon only ends a "
			"qualifier's name; one qualifier per line)", rd->spec->qualifiers[q]);
		return;
	}
	if (b == e && !(rd->spec->empty_ok & (1u << q))) {
		fail_at(rd, colon + 1, "'%s:' wants a value", rd->spec->qualifiers[q]);
		return;
	}
	v->s = b;
	v->n = (size_t)(e - b);
	v->at.line = rd->line;
	v->at.col = col_of(rd, b);
}

static void read_line(struct reader *rd, size_t le)
{
	const char *s = rd->text + rd->ls, *e = rd->text + le;
	const char *hash = memchr(s, '#', (size_t)(e - s));
	if (hash)
		e = hash;
	while (s < e && is_blank(*s))
		s++;
	while (e > s && is_blank(e[-1]))
		e--;
	if (s == e)
		return;
	const char *colon = memchr(s, ':', (size_t)(e - s));
	if (colon)
		qualifier_line(rd, s, (size_t)(e - s), colon);
	else
		word_line(rd, s, (size_t)(e - s));
}

GArray *chain_stanza_read(const char *text, size_t len, const char *name,
			  const struct chain_stanza_spec *spec, GError **err)
{
	struct reader rd = { .text = text ? text : "", .len = text ? len : 0, .spec = spec,
			     .rep = { .name = name, .domain = spec->domain, .code = spec->code,
				      .err = err } };
	rd.stanzas = g_array_new(FALSE, TRUE, sizeof(struct chain_stanza));
	struct policy_line ln = { .next = 0 };
	while (!rd.rep.failed &&
	       policy_line_at(&rd.rep, rd.text, rd.len, ln.next, rd.line + 1, &ln) > 0) {
		rd.line = ln.no;
		rd.ls = ln.start;
		read_line(&rd, ln.end);
	}
	if (!rd.rep.failed && rd.open) {
		const struct chain_stanza *s = &g_array_index(rd.stanzas, struct chain_stanza,
							      rd.stanzas->len - 1);
		policy_fail(&rd.rep, s->at.line, s->at.col, "the %s stanza opened here is not "
			    "closed: '%s' is missing", spec->open, spec->close);
	}
	if (rd.rep.failed) {
		g_array_free(rd.stanzas, TRUE);
		return NULL;
	}
	return rd.stanzas;
}

int chain_stanza_decimal(const struct chain_stanza_value *v, uint64_t max, uint64_t *out)
{
	uint64_t x = 0;
	if (v->n == 0)
		return -1;
	for (size_t i = 0; i < v->n; i++) {
		if (v->s[i] < '0' || v->s[i] > '9')
			return -1;
		x = x * 10 + (uint64_t)(v->s[i] - '0');
		if (x > max)
			return -2;
	}
	*out = x;
	return 0;
}
