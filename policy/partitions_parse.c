/* SPDX-License-Identifier: BSD-2-Clause */
/* partitions_parse.c - reads OpenSM's partitions.conf into a struct part_policy: a small
 * lexer (words, '=', ',', ':', ';', '#' comments) and a recursive-descent parser. Structural
 * errors reject the file (GError "FILE:LINE:COL: ..."); bad values skip one entry, logged. */
#include <arpa/inet.h>
#include <ctype.h>
#include <string.h>
#include <strings.h>
#include "policy/lines.h"
#include "policy/numbers.h"
#include "policy/partitions.h"

G_DEFINE_QUARK(ibsm-partitions-error-quark, part_error)

enum tok { T_EOF, T_WORD, T_EQ, T_COMMA, T_COLON, T_SEMI };

struct token {
	enum tok t;
	const char *s;      /* T_WORD: start in the text */
	size_t len;
	unsigned line, col;
	int nl_before;      /* a newline lies between the previous token and this one */
};

struct parser {
	const char *text;
	size_t len, pos;
	unsigned line, col;
	struct policy_report rep;
	struct token la;    /* lookahead */
	int have_la;
	struct part_policy *pol;
	GPtrArray *auto_parts;  /* partitions without P_Key (never merged) */
	GHashTable *by_key;     /* pkey -> struct partition * */
};

static int is_sep(char c)
{
	return c == '=' || c == ',' || c == ':' || c == ';' || c == '#' || isspace((unsigned char)c);
}

static void advance(struct parser *ps)
{
	if (ps->text[ps->pos] == '\n') {
		ps->line++;
		ps->col = 1;
	} else {
		ps->col++;
	}
	ps->pos++;
}

/* Skips blanks and comments; returns whether a newline was crossed. */
static int skip_space(struct parser *ps)
{
	int nl = 0;
	while (ps->pos < ps->len) {
		char c = ps->text[ps->pos];
		if (c == '#') {
			while (ps->pos < ps->len && ps->text[ps->pos] != '\n')
				advance(ps);
		} else if (isspace((unsigned char)c)) {
			if (c == '\n')
				nl = 1;
			advance(ps);
		} else {
			break;
		}
	}
	return nl;
}

static struct token lex(struct parser *ps, int gid)
{
	struct token k = { 0 };
	k.nl_before = skip_space(ps);
	k.line = ps->line;
	k.col = ps->col;
	if (ps->pos >= ps->len) {
		k.t = T_EOF;
		return k;
	}
	char c = ps->text[ps->pos];
	k.s = ps->text + ps->pos;
	if (gid && (isxdigit((unsigned char)c) || c == ':')) {
		while (ps->pos < ps->len && (isxdigit((unsigned char)ps->text[ps->pos]) ||
					     ps->text[ps->pos] == ':' || ps->text[ps->pos] == '.'))
			advance(ps);
		k.t = T_WORD;
		k.len = (size_t)(ps->text + ps->pos - k.s);
		return k;
	}
	switch (c) {
	case '=': k.t = T_EQ; break;
	case ',': k.t = T_COMMA; break;
	case ':': k.t = T_COLON; break;
	case ';': k.t = T_SEMI; break;
	default:
		while (ps->pos < ps->len && !is_sep(ps->text[ps->pos]))
			advance(ps);
		k.t = T_WORD;
		k.len = (size_t)(ps->text + ps->pos - k.s);
		return k;
	}
	k.len = 1;
	advance(ps);
	return k;
}

static const struct token *peek(struct parser *ps)
{
	if (!ps->have_la) {
		ps->la = lex(ps, 0);
		ps->have_la = 1;
	}
	return &ps->la;
}

static struct token next(struct parser *ps)
{
	peek(ps);
	ps->have_la = 0;
	return ps->la;
}

static const char *tok_name(const struct token *k)
{
	switch (k->t) {
	case T_EOF: return "end of file";
	case T_WORD: return "a word";
	case T_EQ: return "'='";
	case T_COMMA: return "','";
	case T_COLON: return "':'";
	default: return "';'";
	}
}

/* The file is refused at token k. */
#define fail(ps, k, ...) policy_fail(&(ps)->rep, (k)->line, (k)->col, __VA_ARGS__)
/* A bad value: remembered with its place in pol->skipped (the caller logs it), parsing goes on. */
#define skip_msg(ps, k, ...) \
	policy_message_add((ps)->pol->skipped, (ps)->rep.name, (k)->line, (k)->col, __VA_ARGS__)

static int word_is(const struct token *k, const char *w)
{
	return k->t == T_WORD && policy_word_is_nocase(k->s, k->len, w);
}

/* Decimal, or hex with 0x; the whole word (up to a NUL byte in it, and at most 40 bytes) must
 * be the number. */
static int parse_num(const struct token *k, uint64_t max, uint64_t *out)
{
	uint64_t v;
	if (k->t != T_WORD || k->len > 40 ||
	    policy_parse_u64(k->s, strnlen(k->s, k->len), &v) < 0 || v > max)
		return -1;
	*out = v;
	return 0;
}

static struct partition *partition_new(const char *name, size_t nlen, unsigned line)
{
	struct partition *p = g_new0(struct partition, 1);
	p->name = g_strndup(name ? name : "", nlen);
	p->defmember = PART_LIMITED;
	p->members = g_array_new(FALSE, FALSE, sizeof(struct part_member));
	p->mgroups = g_array_new(FALSE, FALSE, sizeof(struct part_mgroup));
	p->line = line;
	return p;
}

static void partition_free(gpointer data)
{
	struct partition *p = data;
	if (!p)
		return;
	g_free(p->name);
	g_array_free(p->members, TRUE);
	g_array_free(p->mgroups, TRUE);
	g_free(p);
}

/* ---- header: [Name][=PKey][,flag[=value]]* ':' ----------------------------------------- */

enum { F_NONE, F_RATE, F_MTU, F_SL, F_SCOPE, F_QKEY, F_TCLASS, F_FLOW };

static const struct {
	const char *name;
	int which;
	uint64_t max, min;
} value_flags[] = {
	{ "rate", F_RATE, 22, 2 },  { "mtu", F_MTU, 5, 1 },       { "sl", F_SL, 15, 0 },
	{ "scope", F_SCOPE, 15, 1 }, { "qkey", F_QKEY, 0xffffffffu, 0 },
	{ "q_key", F_QKEY, 0xffffffffu, 0 }, { "tclass", F_TCLASS, 255, 0 },
	{ "flowlabel", F_FLOW, 0xfffff, 0 }, { "flow_label", F_FLOW, 0xfffff, 0 },
};

static int value_flag(const struct token *k, int mgroup, size_t *idx)
{
	for (size_t i = 0; i < G_N_ELEMENTS(value_flags); i++) {
		(void)mgroup; /* the header takes the same flags as an mgid= item (OpenSM) */
		if (word_is(k, value_flags[i].name)) {
			*idx = i;
			return 1;
		}
	}
	return 0;
}

/* Reads "= value" after a value flag; 0 and *v on success, -1 after a logged bad value,
 * -2 after a structural error. */
static int flag_value(struct parser *ps, const struct token *flag, size_t i, uint64_t *v)
{
	if (peek(ps)->t != T_EQ) {
		skip_msg(ps, flag, "flag '%.*s' needs a value, ignored", (int)flag->len, flag->s);
		return -1;
	}
	next(ps);
	struct token val = next(ps);
	if (val.t != T_WORD) {
		fail(ps, &val, "expected a value after '%.*s=', found %s", (int)flag->len, flag->s,
		     tok_name(&val));
		return -2;
	}
	if (parse_num(&val, value_flags[i].max, v) < 0 || *v < value_flags[i].min) {
		skip_msg(ps, &val, "bad %s value '%.*s' (%llu..%llu), ignored", value_flags[i].name,
			 (int)val.len, val.s, (unsigned long long)value_flags[i].min,
			 (unsigned long long)value_flags[i].max);
		return -1;
	}
	return 0;
}

static uint8_t membership_of(struct parser *ps, const struct token *v)
{
	if (word_is(v, "full"))
		return PART_FULL;
	if (word_is(v, "limited"))
		return PART_LIMITED;
	if (word_is(v, "both"))
		return PART_BOTH;
	policy_note(&ps->rep, v->line, v->col, "membership '%.*s' not recognized, limited assumed",
		    (int)v->len, v->s);
	return PART_LIMITED;
}

/* "defmember" already read; reads "= full|limited|both". Returns -2 on structural error. */
static int defmember_value(struct parser *ps, const struct token *flag, uint8_t *out)
{
	if (peek(ps)->t != T_EQ) {
		skip_msg(ps, flag, "defmember needs a value, ignored");
		return 0;
	}
	next(ps);
	struct token v = next(ps);
	if (v.t != T_WORD) {
		fail(ps, &v, "expected full, limited or both after 'defmember=', found %s",
		     tok_name(&v));
		return -2;
	}
	*out = membership_of(ps, &v);
	return 0;
}

struct def {            /* one definition being read */
	struct partition *p;  /* fresh partition collecting this definition */
	int bad;              /* a bad P_Key: the whole definition is skipped */
	int has_key;
	uint8_t defmember;
	int in_mgroup;        /* the last item was mgid= (its flags may follow) */
};

static int parse_header(struct parser *ps, struct def *d)
{
	const struct token *k = peek(ps);
	struct token name = { 0 };
	if (k->t == T_WORD)
		name = next(ps);
	d->p = partition_new(name.s, name.len, k->line);
	d->defmember = PART_LIMITED;
	if (peek(ps)->t == T_EQ) {
		next(ps);
		struct token key = next(ps);
		if (key.t != T_WORD) {
			fail(ps, &key, "expected a P_Key after '=', found %s", tok_name(&key));
			return -1;
		}
		uint64_t v;
		if (parse_num(&key, 0xffff, &v) < 0 || (v & 0x7fff) == 0) {
			skip_msg(ps, &key, "bad P_Key '%.*s' (1..0x7fff, the 0x8000 bit ignored); "
				 "partition skipped", (int)key.len, key.s);
			d->bad = 1;
		} else {
			d->p->pkey = (uint16_t)(v & 0x7fff);
			d->has_key = 1;
		}
	}
	while (peek(ps)->t == T_COMMA) {
		next(ps);
		struct token flag = next(ps);
		size_t i;
		uint64_t v;
		if (flag.t != T_WORD) {
			fail(ps, &flag, "expected a partition flag after ',', found %s", tok_name(&flag));
			return -1;
		}
		if (word_is(&flag, "ipoib") || word_is(&flag, "indx0")) {
			if (word_is(&flag, "ipoib"))
				d->p->ipoib = 1;
			else
				d->p->indx0 = 1;
			if (peek(ps)->t == T_EQ) {
				struct token eq = next(ps);
				if (peek(ps)->t == T_WORD)
					next(ps);
				skip_msg(ps, &eq, "flag '%.*s' takes no value, value ignored",
					 (int)flag.len, flag.s);
			}
		} else if (word_is(&flag, "defmember")) {
			if (defmember_value(ps, &flag, &d->defmember) < 0)
				return -1;
			d->p->defmember = d->defmember;
		} else if (value_flag(&flag, 0, &i)) {
			int r = flag_value(ps, &flag, i, &v);
			if (r == -2)
				return -1;
			if (r == 0) {
				switch (value_flags[i].which) {
				case F_RATE: d->p->rate = (uint8_t)v; break;
				case F_MTU: d->p->mtu = (uint8_t)v; break;
				case F_SL: d->p->sl = (uint8_t)v; break;
				case F_QKEY: d->p->qkey = (uint32_t)v; break;
				case F_TCLASS: d->p->tclass = (uint8_t)v; break;
				case F_FLOW: d->p->flow_label = (uint32_t)v; break;
				default: /* every scope= adds one (OpenSM's scope mask) */
					if (!d->p->scope)
						d->p->scope = (uint8_t)v;
					d->p->scope_mask |= (uint16_t)(1u << v);
					break;
				}
			}
		} else {
			fail(ps, &flag, "unknown partition flag '%.*s'", (int)flag.len, flag.s);
			return -1;
		}
	}
	struct token c = next(ps);
	if (c.t != T_COLON) {
		fail(ps, &c, "expected ':' after the partition definition, found %s", tok_name(&c));
		return -1;
	}
	return 0;
}

/* ---- body: members and mgid= groups up to ';' ------------------------------------------- */

static const struct {
	const char *name;
	enum part_selector sel;
} keywords[] = {
	{ "ALL", PART_SEL_ALL },       { "ALL_CAS", PART_SEL_ALL_CAS },
	{ "ALL_VCAS", PART_SEL_ALL_VCAS }, { "ALL_SWITCHES", PART_SEL_ALL_SWITCHES },
	{ "ALL_ROUTERS", PART_SEL_ALL_ROUTERS }, { "SELF", PART_SEL_SELF },
};

static int parse_mgid(struct parser *ps, struct def *d, const struct token *kw)
{
	if (peek(ps)->t != T_EQ) {
		fail(ps, kw, "expected '=' after mgid");
		return -1;
	}
	next(ps);
	struct token g = lex(ps, 1);
	if (g.t != T_WORD) {
		fail(ps, &g, "expected a GID after 'mgid=', found %s", tok_name(&g));
		return -1;
	}
	char buf[64];
	/* the header's flags first (all but TClass, as OpenSM's mgroup_create) */
	struct part_mgroup m = { .rate = d->p->rate, .mtu = d->p->mtu, .sl = d->p->sl,
				 .qkey = d->p->qkey, .flow_label = d->p->flow_label,
				 .scope_mask = d->p->scope_mask };
	m.line = g.line;
	int ok = g.len < sizeof(buf);
	if (ok) {
		memcpy(buf, g.s, g.len);
		buf[g.len] = 0;
		ok = inet_pton(AF_INET6, buf, m.mgid) == 1 && m.mgid[0] == 0xff;
	}
	if (!ok) {
		skip_msg(ps, &g, "bad multicast GID '%.*s', group skipped", (int)g.len, g.s);
		d->in_mgroup = -1; /* its flags are still read, then dropped */
		return 0;
	}
	g_array_append_val(d->p->mgroups, m);
	d->in_mgroup = 1;
	return 0;
}

static int parse_mgroup_flag(struct parser *ps, struct def *d, const struct token *flag, size_t i)
{
	uint64_t v;
	int r = flag_value(ps, flag, i, &v);
	if (r == -2)
		return -1;
	if (r < 0 || d->in_mgroup < 0)
		return 0;
	struct part_mgroup *m = &g_array_index(d->p->mgroups, struct part_mgroup,
					       d->p->mgroups->len - 1);
	switch (value_flags[i].which) {
	case F_RATE: m->rate = (uint8_t)v; break;
	case F_MTU: m->mtu = (uint8_t)v; break;
	case F_SL: m->sl = (uint8_t)v; m->sl_own = 1; break;
	case F_QKEY: m->qkey = (uint32_t)v; break;
	case F_TCLASS: m->tclass = (uint8_t)v; break;
	case F_FLOW: m->flow_label = (uint32_t)v; break;
	default: /* scope: one group per scope given (added to the header's) */
		m->scope = (uint8_t)v;
		m->scope_mask |= (uint16_t)(1u << v);
		break;
	}
	return 0;
}

static int parse_item(struct parser *ps, struct def *d, int first)
{
	struct token w = next(ps);
	size_t i;
	if (word_is(&w, "mgid"))
		return parse_mgid(ps, d, &w);
	if (d->in_mgroup && value_flag(&w, 1, &i))
		return parse_mgroup_flag(ps, d, &w, i);
	d->in_mgroup = 0;
	if (word_is(&w, "defmember")) {
		/* "Name : defmember=X : members" as well as "defmember=X" amid the members: the
		 * default membership of what follows in this definition */
		if (defmember_value(ps, &w, &d->defmember) < 0)
			return -1;
		if (first && peek(ps)->t == T_COLON) {
			next(ps);
			return 1; /* a separator was read */
		}
		return 0;
	}
	struct part_member m = { 0 };
	m.line = w.line;
	m.col = w.col;
	int bad = 0;
	if (isdigit((unsigned char)w.s[0])) {
		m.sel = PART_SEL_GUID;
		if (parse_num(&w, UINT64_MAX, &m.guid) < 0 || m.guid == 0) {
			skip_msg(ps, &w, "bad port GUID '%.*s', member skipped", (int)w.len, w.s);
			bad = 1;
		}
	} else {
		size_t j;
		for (j = 0; j < G_N_ELEMENTS(keywords); j++)
			if (word_is(&w, keywords[j].name))
				break;
		if (j == G_N_ELEMENTS(keywords)) {
			fail(ps, &w, "unknown keyword '%.*s' in the member list", (int)w.len, w.s);
			return -1;
		}
		m.sel = keywords[j].sel;
	}
	m.membership = d->defmember;
	if (peek(ps)->t == T_EQ) {
		next(ps);
		struct token v = next(ps);
		if (v.t != T_WORD) {
			fail(ps, &v, "expected full, limited or both after '=', found %s", tok_name(&v));
			return -1;
		}
		m.membership = membership_of(ps, &v);
	}
	if (!bad)
		g_array_append_val(d->p->members, m);
	return 0;
}

static int parse_body(struct parser *ps, struct def *d)
{
	int first = 1, need_sep = 0;
	for (;;) {
		const struct token *k = peek(ps);
		switch (k->t) {
		case T_SEMI:
			next(ps);
			return 0;
		case T_COMMA:
			next(ps);
			need_sep = 0;
			continue;
		case T_WORD:
			if (need_sep && !k->nl_before) {
				fail(ps, k, "expected ',' or ';' before '%.*s'", (int)k->len, k->s);
				return -1;
			}
			int r = parse_item(ps, d, first);
			if (r < 0)
				return -1;
			first = 0;
			need_sep = r == 0;
			continue;
		case T_EOF:
			fail(ps, k, "missing ';' at the end of the partition begun on line %u",
			     d->p->line);
			return -1;
		default:
			fail(ps, k, "unexpected %s in the member list", tok_name(k));
			return -1;
		}
	}
}

/* ---- merging and finishing ------------------------------------------------------------- */

static void merge(struct partition *into, struct partition *from)
{
	g_array_append_vals(into->members, from->members->data, from->members->len);
	g_array_append_vals(into->mgroups, from->mgroups->data, from->mgroups->len);
	into->ipoib |= from->ipoib;
	into->indx0 |= from->indx0;
	if (!into->rate)
		into->rate = from->rate;
	if (!into->mtu)
		into->mtu = from->mtu;
	if (!into->sl)
		into->sl = from->sl;
	if (!into->scope)
		into->scope = from->scope;
	if (!into->qkey)
		into->qkey = from->qkey;
	if (!into->tclass)
		into->tclass = from->tclass;
	if (!into->flow_label)
		into->flow_label = from->flow_label;
	into->scope_mask |= from->scope_mask;
	partition_free(from);
}

static void add_definition(struct parser *ps, struct def *d)
{
	if (d->bad) {
		partition_free(d->p);
		return;
	}
	if (!d->has_key) {
		g_ptr_array_add(ps->auto_parts, d->p);
		g_ptr_array_add(ps->pol->parts, d->p);
		return;
	}
	struct partition *old = g_hash_table_lookup(ps->by_key, GUINT_TO_POINTER(d->p->pkey));
	if (old) {
		merge(old, d->p);
		return;
	}
	g_hash_table_insert(ps->by_key, GUINT_TO_POINTER(d->p->pkey), d->p);
	g_ptr_array_add(ps->pol->parts, d->p);
}

/* IPoIB groups (ff1x:401b / 601b), as OpenSM's mgroup_create: the P_Key field must be zero or
 * the partition's 15-bit key (the broadcast MGID ff12:401b:ffff::ffff:ffff passes as it is) and
 * is then the key with its full bit; the rate and MTU must be the partition's. Any other is
 * skipped (pol->skipped). */
static void fill_mgid_keys(struct part_policy *pol, struct partition *p)
{
	static const uint8_t bcast[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0,
					   0xff, 0xff, 0xff, 0xff };
	for (guint i = 0; i < p->mgroups->len; i++) {
		struct part_mgroup *m = &g_array_index(p->mgroups, struct part_mgroup, i);
		int ipoib = m->mgid[3] == 0x1b && (m->mgid[2] == 0x40 || m->mgid[2] == 0x60);
		if (!ipoib)
			continue;
		unsigned field = (unsigned)m->mgid[4] << 8 | m->mgid[5];
		const char *why = NULL;
		if (memcmp(m->mgid, bcast, 16) != 0 && field != 0 && field != p->pkey)
			why = "its P_Key field is neither 0 nor the partition's P_Key (without the 0x8000 bit)";
		else if ((m->rate ? m->rate : 3) != (p->rate ? p->rate : 3))
			why = "its rate is not the partition's";
		else if ((m->mtu ? m->mtu : 4) != (p->mtu ? p->mtu : 4))
			why = "its mtu is not the partition's";
		if (why) {
			char text[INET6_ADDRSTRLEN];
			inet_ntop(AF_INET6, m->mgid, text, sizeof(text));
			g_ptr_array_add(pol->skipped, g_strdup_printf("%s:%u: IPoIB group %s of partition "
				"0x%04x skipped: %s (as OpenSM)", pol->source ? pol->source : "<partitions>",
				m->line, text, p->pkey, why));
			g_array_remove_index(p->mgroups, i--);
			continue;
		}
		m->mgid[4] = (uint8_t)((p->pkey | PART_FULL_BIT) >> 8);
		m->mgid[5] = (uint8_t)(p->pkey & 0xff);
	}
}

/* Auto keys: in file order, the lowest key from 0x0001 used by no other partition (0x7fff
 * excluded). The default partition goes first and always holds ALL=limited, SELF=full ahead
 * of whatever the file adds to it (OpenSM's default partition once a file exists). */
static void finish(struct part_policy *pol, GHashTable *by_key, GPtrArray *auto_parts)
{
	uint16_t next_key = 1;
	for (guint i = 0; i < auto_parts->len; i++) {
		struct partition *p = auto_parts->pdata[i];
		while (next_key < PART_DEFAULT_PKEY &&
		       g_hash_table_contains(by_key, GUINT_TO_POINTER(next_key)))
			next_key++;
		if (next_key >= PART_DEFAULT_PKEY) {
			g_ptr_array_add(pol->skipped, g_strdup_printf("%s:%u: no P_Key left for partition "
								      "'%s', skipped", pol->source ? pol->source :
								      "<partitions>", p->line, p->name));
			g_ptr_array_remove(pol->parts, p);
			continue;
		}
		p->pkey = next_key;
		g_hash_table_insert(by_key, GUINT_TO_POINTER(next_key), p);
	}
	struct partition *def = g_hash_table_lookup(by_key, GUINT_TO_POINTER(PART_DEFAULT_PKEY));
	guint at;
	if (def && g_ptr_array_find(pol->parts, def, &at)) {
		g_ptr_array_steal_index(pol->parts, at);
	} else {
		def = partition_new("Default", 7, 0);
		def->pkey = PART_DEFAULT_PKEY;
	}
	struct part_member implicit[2] = {
		{ .sel = PART_SEL_ALL, .membership = PART_LIMITED },
		{ .sel = PART_SEL_SELF, .membership = PART_FULL },
	};
	g_array_prepend_vals(def->members, implicit, 2);
	g_ptr_array_insert(pol->parts, 0, def);
	for (guint i = 0; i < pol->parts->len; i++)
		fill_mgid_keys(pol, pol->parts->pdata[i]);
}

static struct part_policy *policy_new(const char *source)
{
	struct part_policy *pol = g_new0(struct part_policy, 1);
	pol->source = g_strdup(source);
	pol->parts = g_ptr_array_new_with_free_func(partition_free);
	pol->skipped = g_ptr_array_new_with_free_func(g_free);
	pol->notes = g_ptr_array_new_with_free_func(g_free);
	return pol;
}

struct part_policy *part_policy_parse_text(const char *text, size_t len, const char *name,
					   GError **err)
{
	struct parser ps = { .text = text ? text : "", .len = text ? len : 0, .line = 1, .col = 1,
			     .rep = { .name = name ? name : "<partitions>", .domain = PART_ERROR,
				      .code = PART_ERROR_SYNTAX, .err = err } };
	ps.pol = policy_new(name);
	ps.rep.notes = ps.pol->notes;
	ps.auto_parts = g_ptr_array_new();
	ps.by_key = g_hash_table_new(NULL, NULL);
	while (!ps.rep.failed && peek(&ps)->t != T_EOF) {
		struct def d = { 0 };
		if (parse_header(&ps, &d) < 0 || parse_body(&ps, &d) < 0) {
			partition_free(d.p);
			break;
		}
		add_definition(&ps, &d);
	}
	if (ps.rep.failed) {
		g_ptr_array_free(ps.auto_parts, TRUE);
		g_hash_table_destroy(ps.by_key);
		part_policy_free(ps.pol);
		return NULL;
	}
	finish(ps.pol, ps.by_key, ps.auto_parts);
	g_ptr_array_free(ps.auto_parts, TRUE);
	g_hash_table_destroy(ps.by_key);
	return ps.pol;
}

struct part_policy *part_policy_restricted_default(void)
{
	return part_policy_parse_text("", 0, NULL, NULL);
}

struct part_policy *part_policy_default(void)
{
	struct part_policy *p = part_policy_restricted_default();
	struct partition *def = p->parts->pdata[0];
	/* ALL, the implicit first member: full, as OpenSM's default partition without a file */
	g_array_index(def->members, struct part_member, 0).membership = PART_FULL;
	return p;
}

void part_policy_free(struct part_policy *p)
{
	if (!p)
		return;
	g_free(p->source);
	g_ptr_array_free(p->parts, TRUE);
	g_ptr_array_free(p->skipped, TRUE);
	g_ptr_array_free(p->notes, TRUE);
	g_free(p);
}
