/* SPDX-License-Identifier: BSD-2-Clause */
/* enhanced_qos_parse.c - reads NVIDIA's enhanced QoS policy file into a struct eqos_policy
 * (policy/enhanced_qos.h). Choices where NVIDIA's manual leaves room (doc/enhanced-qos.md):
 *  - one rule or name per line; '#' starts a comment; blanks around words are free; section
 *    names (BW_NAMES, BW_RULES, VPORT_BW_RULES) in any case, each at most once;
 *  - a bandwidth name is used after the BW_NAMES line that defines it; "all" and "default"
 *    are no names (they are the keywords of the rules);
 *  - rate limits are decimal Mbps up to 1048575 (the 20 bits QoSConfigSL carries);
 *  - a target is "default", a GUID (0x... or decimal, not 0), or (BW_RULES only) a port group
 *    name, each at most once per section; an SL is 0-15 or SL0-SL15, each at most once per
 *    rule, and "all" at most once. Any of these broken refuses the whole file: NVIDIA's manual
 *    calls a file that does not parse "undefined behaviour", ibsm keeps the policy in force. */
#include <string.h>
#include "policy/enhanced_qos.h"
#include "policy/lines.h"
#include "policy/numbers.h"

G_DEFINE_QUARK(ibsm-enhanced-qos-policy-error-quark, eqos_policy_error)

enum section { SEC_NONE, SEC_NAMES, SEC_PORT, SEC_VPORT };

struct reader {
	struct policy_report r;
	struct eqos_policy *p;
	enum section sec;
	const char *text;
	struct policy_line ln;
	unsigned names_line;       /* of the BW_NAMES header, 0: not yet */
};

static void rule_free(gpointer q)
{
	struct eqos_rule *r = q;
	if (!r)
		return;
	g_free(r->group);
	g_free(r);
}

static void name_free(gpointer q)
{
	struct eqos_bw_name *n = q;
	g_free(n->name);
	g_free(n);
}

void eqos_policy_free(struct eqos_policy *p)
{
	if (!p)
		return;
	g_free(p->source);
	g_ptr_array_free(p->names, TRUE);
	rule_free(p->port.def);
	rule_free(p->vport.def);
	g_ptr_array_free(p->port.rules, TRUE);
	g_ptr_array_free(p->vport.rules, TRUE);
	g_ptr_array_free(p->notes, TRUE);
	g_free(p);
}

/* text[*s, *e) without blanks at either end. */
static void trim(const char *text, size_t *s, size_t *e)
{
	while (*s < *e && policy_is_blank(text[*s]))
		(*s)++;
	while (*e > *s && policy_is_blank(text[*e - 1]))
		(*e)--;
}

static unsigned col_of(const struct reader *rd, size_t i)
{
	return policy_col(rd->ln.start, i);
}

#define FAIL(rd, i, ...) (policy_fail(&(rd)->r, (rd)->ln.no, col_of(rd, i), __VA_ARGS__), -1)

static const struct eqos_bw_name *find_name(const struct eqos_policy *p, const char *s, size_t n)
{
	for (guint i = 0; i < p->names->len; i++) {
		const struct eqos_bw_name *b = p->names->pdata[i];
		if (policy_word_is(s, n, b->name))
			return b;
	}
	return NULL;
}

static int is_name_char(char c)
{
	return g_ascii_isalnum(c) || c == '_' || c == '-' || c == '.';
}

static int section_header(struct reader *rd, size_t s, size_t e)
{
	const char *w = rd->text + s;
	size_t n = e - s;
	enum section sec = policy_word_is_nocase(w, n, "BW_NAMES") ? SEC_NAMES :
			   policy_word_is_nocase(w, n, "BW_RULES") ? SEC_PORT :
			   policy_word_is_nocase(w, n, "VPORT_BW_RULES") ? SEC_VPORT : SEC_NONE;
	if (sec == SEC_NONE)
		return FAIL(rd, s, "'%.*s' is neither a section (BW_NAMES, BW_RULES, VPORT_BW_RULES) "
			    "nor a line NAME = VALUE", POLICY_SHOW(w, n));
	struct eqos_section *target = sec == SEC_PORT ? &rd->p->port : sec == SEC_VPORT ? &rd->p->vport : NULL;
	if (sec == SEC_NAMES && rd->names_line)
		return FAIL(rd, s, "section %.*s again (first on line %u)", POLICY_SHOW(w, n), rd->names_line);
	if (sec == SEC_NAMES)
		rd->names_line = rd->ln.no;
	if (target && target->present)
		return FAIL(rd, s, "section %.*s again (first on line %u)", POLICY_SHOW(w, n), target->line);
	if (target) {
		target->present = 1;
		target->line = rd->ln.no;
	}
	rd->sec = sec;
	return 0;
}

static int bw_name(struct reader *rd, size_t ls, size_t le, size_t rs, size_t re)
{
	const char *t = rd->text;
	for (size_t i = ls; i < le; i++)
		if (!is_name_char(t[i]))
			return FAIL(rd, i, "a bandwidth name holds letters, digits, '_', '-' and '.' only "
				    "('%.*s')", POLICY_SHOW(t + ls, le - ls));
	if (policy_word_is_nocase(t + ls, le - ls, "all") || policy_word_is_nocase(t + ls, le - ls, "default"))
		return FAIL(rd, ls, "'%.*s' is a keyword of the rules, not a bandwidth name",
			    POLICY_SHOW(t + ls, le - ls));
	const struct eqos_bw_name *old = find_name(rd->p, t + ls, le - ls);
	if (old)
		return FAIL(rd, ls, "bandwidth name '%s' again (first on line %u)", old->name, old->line);
	if (rs == re)
		return FAIL(rd, rs, "bandwidth name '%.*s' without a rate limit (Mbps)",
			    POLICY_SHOW(t + ls, le - ls));
	uint64_t v;
	int rc = policy_parse_u64(t + rs, re - rs, &v);
	if (rc == -1 || (re - rs > 1 && (t[rs + 1] == 'x' || t[rs + 1] == 'X')))
		return FAIL(rd, rs, "rate limit '%.*s' is not a decimal number of Mbps",
			    POLICY_SHOW(t + rs, re - rs));
	if (rc == -2 || v > EQOS_RATE_MAX)
		return FAIL(rd, rs, "rate limit %.*s Mbps is more than %u (the 20 bits of QoSConfigSL's "
			    "RateLimit)", POLICY_SHOW(t + rs, re - rs), EQOS_RATE_MAX);
	struct eqos_bw_name *b = g_new0(struct eqos_bw_name, 1);
	b->name = g_strndup(t + ls, le - ls);
	b->mbps = (uint32_t)v;
	b->line = rd->ln.no;
	g_ptr_array_add(rd->p->names, b);
	return 0;
}

/* "<sl>" of one item: 0-15 or SL0-SL15 into *sl, or "all" (*sl = -1). */
static int item_sl(struct reader *rd, size_t s, size_t e, int *sl)
{
	const char *t = rd->text;
	if (policy_word_is_nocase(t + s, e - s, "all")) {
		*sl = -1;
		return 0;
	}
	size_t d = s;
	if (e - s > 2 && g_ascii_strncasecmp(t + s, "SL", 2) == 0)
		d += 2;
	uint64_t v;
	int ok = d < e;
	for (size_t i = d; i < e; i++)
		ok = ok && g_ascii_isdigit(t[i]);
	if (!ok || policy_parse_u64(t + d, e - d, &v) < 0 || v > 15)
		return FAIL(rd, s, "SL '%.*s' is not 0-15, SL0-SL15 or all", POLICY_SHOW(t + s, e - s));
	*sl = (int)v;
	return 0;
}

/* One "<sl>:<name>" item at text[s, e) into rule q. */
static int rule_item(struct reader *rd, struct eqos_rule *q, size_t s, size_t e)
{
	const char *t = rd->text;
	trim(t, &s, &e);
	if (s == e)
		return FAIL(rd, s, "empty item in the rule (SL:NAME expected between commas)");
	const char *colon = memchr(t + s, ':', e - s);
	if (!colon)
		return FAIL(rd, s, "'%.*s' is not SL:NAME", POLICY_SHOW(t + s, e - s));
	size_t c = (size_t)(colon - t), ss = s, se = c, ns = c + 1, ne = e;
	trim(t, &ss, &se);
	trim(t, &ns, &ne);
	int sl;
	if (ss == se)
		return FAIL(rd, s, "'%.*s' has no SL before ':'", POLICY_SHOW(t + s, e - s));
	if (item_sl(rd, ss, se, &sl) < 0)
		return -1;
	if (ns == ne)
		return FAIL(rd, c, "'%.*s' has no bandwidth name after ':'", POLICY_SHOW(t + s, e - s));
	const struct eqos_bw_name *b = find_name(rd->p, t + ns, ne - ns);
	if (!b)
		return FAIL(rd, ns, "bandwidth name '%.*s' is not defined in BW_NAMES (above this line)",
			    POLICY_SHOW(t + ns, ne - ns));
	if (sl < 0 && q->has_all)
		return FAIL(rd, ss, "'all' twice in one rule");
	if (sl >= 0 && (q->named & (1u << sl)))
		return FAIL(rd, ss, "SL %d twice in one rule", sl);
	if (sl < 0) {
		q->has_all = 1;
		q->all_rate = b->mbps;
	} else {
		q->named |= (uint16_t)(1u << sl);
		q->rate[sl] = b->mbps;
	}
	return 0;
}

static const struct eqos_rule *find_target(const struct eqos_section *sec, const struct eqos_rule *q)
{
	if (q->kind == EQOS_T_DEFAULT)
		return sec->def;
	for (guint i = 0; i < sec->rules->len; i++) {
		const struct eqos_rule *o = sec->rules->pdata[i];
		if (o->kind == q->kind && (q->kind == EQOS_T_GUID ? o->guid == q->guid : !strcmp(o->group, q->group)))
			return o;
	}
	return NULL;
}

static int rule_target(struct reader *rd, struct eqos_rule *q, size_t ls, size_t le)
{
	const char *t = rd->text;
	if (policy_word_is_nocase(t + ls, le - ls, "default")) {
		q->kind = EQOS_T_DEFAULT;
		return 0;
	}
	if (g_ascii_isdigit(t[ls])) {
		uint64_t g;
		int rc = policy_parse_u64(t + ls, le - ls, &g);
		if (rc < 0)
			return FAIL(rd, ls, "'%.*s' is not a GUID (0x and up to 16 hex digits)",
				    POLICY_SHOW(t + ls, le - ls));
		if (g == 0)
			return FAIL(rd, ls, "GUID 0 names no port");
		q->kind = EQOS_T_GUID;
		q->guid = g;
		return 0;
	}
	if (rd->sec == SEC_VPORT)
		return FAIL(rd, ls, "VPORT_BW_RULES names virtual port GUIDs or default, not port groups "
			    "('%.*s')", POLICY_SHOW(t + ls, le - ls));
	for (size_t i = ls; i < le; i++)
		if (!is_name_char(t[i]))
			return FAIL(rd, i, "'%.*s' is neither default, a GUID nor a port group name",
				    POLICY_SHOW(t + ls, le - ls));
	q->kind = EQOS_T_GROUP;
	q->group = g_strndup(t + ls, le - ls);
	return 0;
}

static int rule(struct reader *rd, size_t ls, size_t le, size_t rs, size_t re)
{
	struct eqos_section *sec = rd->sec == SEC_PORT ? &rd->p->port : &rd->p->vport;
	struct eqos_rule *q = g_new0(struct eqos_rule, 1);
	q->line = rd->ln.no;
	q->col = col_of(rd, ls);
	const char *t = rd->text;
	int rc = rule_target(rd, q, ls, le);
	if (rc == 0 && rs == re)
		rc = FAIL(rd, rs, "rule without SL:NAME items");
	for (size_t s = rs; rc == 0 && s <= re;) {
		const char *comma = memchr(t + s, ',', re - s);
		size_t e = comma ? (size_t)(comma - t) : re;
		rc = rule_item(rd, q, s, e);
		s = e + 1;
	}
	const struct eqos_rule *old = rc == 0 ? find_target(sec, q) : NULL;
	if (old)
		rc = FAIL(rd, ls, "a rule for '%.*s' again in this section (first on line %u)",
			  POLICY_SHOW(t + ls, le - ls), old->line);
	if (rc < 0) {
		rule_free(q);
		return -1;
	}
	if (q->kind == EQOS_T_DEFAULT)
		sec->def = q;
	else
		g_ptr_array_add(sec->rules, q);
	return 0;
}

static int one_line(struct reader *rd)
{
	const char *t = rd->text;
	size_t s = rd->ln.start, e = rd->ln.end;
	const char *hash = memchr(t + s, '#', e - s);
	if (hash)
		e = (size_t)(hash - t);
	trim(t, &s, &e);
	if (s == e)
		return 0;
	const char *eq = memchr(t + s, '=', e - s);
	if (!eq)
		return section_header(rd, s, e);
	size_t ls = s, le = (size_t)(eq - t), rs = le + 1, re = e;
	trim(t, &ls, &le);
	trim(t, &rs, &re);
	if (rd->sec == SEC_NONE)
		return FAIL(rd, s, "a line before any section (BW_NAMES, BW_RULES or VPORT_BW_RULES)");
	if (ls == le)
		return FAIL(rd, s, "nothing before '='");
	if (memchr(t + rs, '=', re - rs))
		return FAIL(rd, (size_t)((const char *)memchr(t + rs, '=', re - rs) - t), "a second '=' on the line");
	return rd->sec == SEC_NAMES ? bw_name(rd, ls, le, rs, re) : rule(rd, ls, le, rs, re);
}

struct eqos_policy *eqos_policy_parse_text(const char *text, size_t len, const char *name,
					   GError **err)
{
	struct eqos_policy *p = g_new0(struct eqos_policy, 1);
	p->source = g_strdup(name ? name : "<enhanced_qos_policy_file>");
	p->names = g_ptr_array_new_with_free_func(name_free);
	p->port.rules = g_ptr_array_new_with_free_func(rule_free);
	p->vport.rules = g_ptr_array_new_with_free_func(rule_free);
	p->notes = g_ptr_array_new_with_free_func(g_free);
	struct reader rd = { .r = { .name = p->source, .domain = EQOS_POLICY_ERROR,
				    .code = EQOS_POLICY_ERROR_SYNTAX, .err = err, .notes = p->notes },
			     .p = p, .sec = SEC_NONE, .text = text };
	size_t pos = 0;
	for (unsigned no = 1; !rd.r.failed; no++) {
		int rc = policy_line_at(&rd.r, text, len, pos, no, &rd.ln);
		if (rc <= 0)
			break;
		one_line(&rd);
		pos = rd.ln.next;
	}
	if (rd.r.failed) {
		eqos_policy_free(p);
		return NULL;
	}
	if (!p->port.present && !p->vport.present)
		policy_message_add(p->notes, p->source, 1, 1, "no BW_RULES or VPORT_BW_RULES section: "
				   "every SL of every port unlimited");
	return p;
}

const struct eqos_rule *eqos_rule_for(const struct eqos_section *s, uint64_t guid,
				      int (*in_group)(const char *group, void *ctx), void *ctx)
{
	for (guint i = 0; s->rules && i < s->rules->len; i++) {
		const struct eqos_rule *r = s->rules->pdata[i];
		if (r->kind == EQOS_T_GUID && r->guid == guid)
			return r;
	}
	for (guint i = 0; in_group && s->rules && i < s->rules->len; i++) {
		const struct eqos_rule *r = s->rules->pdata[i];
		if (r->kind == EQOS_T_GROUP && in_group(r->group, ctx))
			return r;
	}
	return NULL;
}

/* What rule r alone gives SL sl: 1 and *v when it names it (or has "all"), else 0. */
static int rule_gives(const struct eqos_rule *r, int sl, uint32_t *v)
{
	if (!r)
		return 0;
	if (r->named & (1u << sl)) {
		*v = r->rate[sl];
		return 1;
	}
	if (r->has_all) {
		*v = r->all_rate;
		return 1;
	}
	return 0;
}

void eqos_rates(const struct eqos_section *s, const struct eqos_rule *r, int no_default,
		uint32_t out[EQOS_N_SL])
{
	for (int sl = 0; sl < EQOS_N_SL; sl++) {
		uint32_t v = 0;
		if (!rule_gives(r, sl, &v) && !no_default)
			(void)rule_gives(s->def, sl, &v);
		out[sl] = v;
	}
}
