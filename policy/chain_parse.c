/* SPDX-License-Identifier: BSD-2-Clause */
/* chain_parse.c - reads NVIDIA's routing chain policy (rch_policy_file; NVIDIA's SM manual, "Routing Chains") into a struct
 * chain_policy (its stanzas read by policy/chain_stanza.c, as the topology policy's), and checks
 * it against the topology policy, the port groups and the LMC. It exists so that a chain is
 * refused whole, with "FILE:LINE:COL: what", before any engine is loaded for it.
 * Choices where the documents leave room (NVIDIA's SM manual, "Defining Routing Chain Policy"; the Mellanox OFED and UFM manuals):
 *  - steps run in ascending id order, not file order (so the manuals say); a note says so
 *    when the file lists them otherwise. The step that
 *    runs first must route the whole fabric (topology 0) at path bit 0: that is the lowest id
 *    (the manuals' rule), the lowest id that is not a fallback (the first that really runs)
 *    and that one's fallback (it would run in its place);
 *  - fallback-to may name a step further down the file (the order is the ids', not the
 *    file's). Where NVIDIA's SM ignores a step (a fallback-to naming no step, or naming a
 *    fallback) ibsm refuses the file: a chain that silently loses a step is worse than one
 *    that does not load. A step has at most one fallback; fallback-to 0 and a step's own id are
 *    errors; a fallback of a fallback is refused, so no cycle can form. A fallback that
 *    routes another topology or path bit than the step it replaces is read with a note;
 *  - id: 1 to 2^32-1 (the manuals allow any size_t but 0; the core keeps a uint32 step id);
 *    topology: 0 to 2^32-1, 0 (the default) the whole fabric; path-bit: 0 to 127;
 *  - engine: any plugin file name the loader would take ([A-Za-z0-9_.+-], not starting with
 *    '.', under 64 bytes); NVIDIA's SM takes minhop, ftree and updn only, and a note says when
 *    another is named; whether the plugin exists is the caller's check;
 *  - use may be empty (""); config is a path, kept as written (relative paths are the
 *    caller's to resolve). */
#include <string.h>
#include "policy/chain_policy.h"
#include "policy/messages.h"

G_DEFINE_QUARK(ibsm-chain-policy-error-quark, chain_policy_error)

/* ---- the chain policy: the steps -------------------------------------------------------- */

_Static_assert(CHAIN_Q_N <= CHAIN_STANZA_MAX_QUALIFIERS, "a stanza holds every qualifier");

static const char *const chain_qualifiers[CHAIN_Q_N] = {
	[CHAIN_Q_ID] = "id", [CHAIN_Q_ENGINE] = "engine", [CHAIN_Q_USE] = "use",
	[CHAIN_Q_CONFIG] = "config", [CHAIN_Q_TOPOLOGY] = "topology",
	[CHAIN_Q_FALLBACK_TO] = "fallback-to", [CHAIN_Q_PATH_BIT] = "path-bit",
};

/* The engines NVIDIA's SM accepts in a chain (NVIDIA's SM manual, "Routing Chains": "in the current version"). */
static const char *const nvidia_engines[] = { "minhop", "ftree", "updn" };

struct chain_parser {
	struct policy_report rep;  /* the chain file's */
	struct chain_policy *c;
	GHashTable *by_id;         /* step id -> struct chain_step * */
};

static const char *chain_src(const char *name)
{
	return name ? name : "<rch_policy_file>";
}

/* The file is refused, or a note taken, at `at` (a struct chain_at). */
#define chain_fail(ps, at, ...) policy_fail(&(ps)->rep, (at).line, (at).col, __VA_ARGS__)
#define chain_note(ps, at, ...) policy_note(&(ps)->rep, (at).line, (at).col, __VA_ARGS__)

static void step_free(gpointer p)
{
	struct chain_step *s = p;
	g_free(s->engine);
	g_free(s->use);
	g_free(s->config);
	g_free(s);
}

void chain_policy_free(struct chain_policy *c)
{
	if (!c)
		return;
	g_free(c->source);
	g_ptr_array_free(c->order, TRUE);
	g_ptr_array_free(c->steps, TRUE);
	g_ptr_array_free(c->notes, TRUE);
	g_free(c);
}

const struct chain_step *chain_policy_find(const struct chain_policy *c, uint32_t id)
{
	for (guint i = 0; c && i < c->steps->len; i++) {
		const struct chain_step *s = c->steps->pdata[i];
		if (s->id == id)
			return s;
	}
	return NULL;
}

/* A decimal qualifier value from min to max: 0, or -1 (error set). */
static int step_number(struct chain_parser *ps, const struct chain_stanza_value *v,
		       const char *what, uint64_t min, uint64_t max, uint64_t *out)
{
	int r = chain_stanza_decimal(v, max, out);
	if (r == -1)
		chain_fail(ps, v->at, "%s '%.*s' is not a decimal number", what,
			   POLICY_SHOW(v->s, v->n));
	else if (r == -2 || *out < min)
		chain_fail(ps, v->at, "%s %.*s is out of range (%" G_GUINT64_FORMAT " to %"
			   G_GUINT64_FORMAT ")", what, POLICY_SHOW(v->s, v->n), min, max);
	return r == 0 && *out >= min ? 0 : -1;
}

static int engine_name_ok(const char *s, size_t n)
{
	if (n == 0 || n > CHAIN_ENGINE_NAME_MAX || s[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!g_ascii_isalnum(s[i]) && !strchr("_-.+", s[i]))
			return 0;
	return 1;
}

static int step_engine(struct chain_parser *ps, struct chain_step *st,
		       const struct chain_stanza_value *v)
{
	if (!engine_name_ok(v->s, v->n)) {
		chain_fail(ps, v->at, "engine '%.*s' is not an engine name (a plugin file name "
			   "without .so: letters, digits, '_', '-', '.', '+', not starting with "
			   "'.', at most %d bytes)", POLICY_SHOW(v->s, v->n),
			   CHAIN_ENGINE_NAME_MAX);
		return -1;
	}
	st->engine = g_strndup(v->s, v->n);
	size_t k = 0;
	while (k < G_N_ELEMENTS(nvidia_engines) && strcmp(st->engine, nvidia_engines[k]) != 0)
		k++;
	if (k == G_N_ELEMENTS(nvidia_engines))
		chain_note(ps, v->at, "engine '%s': NVIDIA's SM takes only minhop, ftree and updn "
			   "in a chain; ibsm takes any engine plugin (loaded when the chain is "
			   "built)", st->engine);
	return 0;
}

static int step_id(struct chain_parser *ps, struct chain_step *st,
		   const struct chain_stanza_value *v)
{
	uint64_t x;
	if (chain_stanza_decimal(v, G_MAXUINT32, &x) == 0 && x == 0) {
		chain_fail(ps, v->at, "step id 0: step ids start at 1");
		return -1;
	}
	if (step_number(ps, v, "step id", 1, G_MAXUINT32, &x) < 0)
		return -1;
	const struct chain_step *other = g_hash_table_lookup(ps->by_id, GUINT_TO_POINTER((guint)x));
	if (other) {
		chain_fail(ps, v->at, "step id %" G_GUINT64_FORMAT " is already the id of the step "
			   "on line %u", x, other->line);
		return -1;
	}
	st->id = (uint32_t)x;
	return 0;
}

/* The numbers and names of one stanza into st: 0, or -1 (error set). */
static int step_values(struct chain_parser *ps, struct chain_step *st,
		       const struct chain_stanza *sz)
{
	const struct chain_stanza_value *v = sz->v;
	uint64_t x;
	if (!v[CHAIN_Q_ID].s || !v[CHAIN_Q_ENGINE].s) {
		chain_fail(ps, sz->at, "unicast-step without '%s:' (id and engine are mandatory)",
			   v[CHAIN_Q_ID].s ? "engine" : "id");
		return -1;
	}
	if (step_id(ps, st, &v[CHAIN_Q_ID]) < 0 || step_engine(ps, st, &v[CHAIN_Q_ENGINE]) < 0)
		return -1;
	st->use = g_strndup(v[CHAIN_Q_USE].s ? v[CHAIN_Q_USE].s : "", v[CHAIN_Q_USE].n);
	if (v[CHAIN_Q_CONFIG].s)
		st->config = g_strndup(v[CHAIN_Q_CONFIG].s, v[CHAIN_Q_CONFIG].n);
	if (v[CHAIN_Q_TOPOLOGY].s) {
		if (step_number(ps, &v[CHAIN_Q_TOPOLOGY], "topology", 0, G_MAXUINT32, &x) < 0)
			return -1;
		st->topology = (uint32_t)x;
	}
	if (v[CHAIN_Q_FALLBACK_TO].s) {
		const struct chain_stanza_value *f = &v[CHAIN_Q_FALLBACK_TO];
		if (chain_stanza_decimal(f, G_MAXUINT32, &x) == 0 && x == 0) {
			chain_fail(ps, f->at, "fallback-to 0: no step has id 0 (leave fallback-to "
				   "out for a step that is not a fallback)");
			return -1;
		}
		if (step_number(ps, f, "fallback-to", 1, G_MAXUINT32, &x) < 0)
			return -1;
		st->fallback_to = (uint32_t)x;
	}
	if (v[CHAIN_Q_PATH_BIT].s) {
		if (step_number(ps, &v[CHAIN_Q_PATH_BIT], "path-bit", 0, CHAIN_PATH_BIT_MAX,
				&x) < 0)
			return -1;
		st->path_bit = (uint8_t)x;
	}
	return 0;
}

static void add_step(struct chain_parser *ps, const struct chain_stanza *sz)
{
	struct chain_step *st = g_new0(struct chain_step, 1);
	st->line = sz->at.line;
	for (int q = 0; q < CHAIN_Q_N; q++)
		st->at[q] = sz->v[q].at;
	if (step_values(ps, st, sz) < 0) {
		step_free(st);
		return;
	}
	g_ptr_array_add(ps->c->steps, st);
	g_hash_table_insert(ps->by_id, GUINT_TO_POINTER((guint)st->id), st);
}

/* ---- the chain policy: fallbacks, order, the first step ---------------------------------- */

/* Why st's fallback-to cannot stand (a message), or NULL; to: the step it names, or NULL. */
static char *fallback_wrong(const struct chain_step *st, const struct chain_step *to)
{
	if (!to)
		return g_strdup_printf("fallback-to %u: no unicast-step has id %u", st->fallback_to,
				       st->fallback_to);
	if (to == st)
		return g_strdup_printf("step %u is named as its own fallback", st->id);
	if (to->fallback_to == st->id)
		return g_strdup_printf("steps %u and %u name each other in fallback-to: a fallback "
				       "cycle", st->id, to->id);
	if (to->fallback_to)
		return g_strdup_printf("fallback-to %u: step %u (line %u) is itself the "
				       "fallback of step %u, and a fallback of a fallback never "
				       "runs (NVIDIA's SM ignores such a step)", to->id, to->id,
				       to->line, to->fallback_to);
	if (to->fallback)
		return g_strdup_printf("fallback-to %u: step %u already has a fallback, step %u "
				       "(line %u); a step has at most one", to->id, to->id,
				       to->fallback->id, to->fallback->line);
	return NULL;
}

static void link_fallback(struct chain_parser *ps, struct chain_step *st)
{
	struct chain_at at = st->at[CHAIN_Q_FALLBACK_TO];
	struct chain_step *to = g_hash_table_lookup(ps->by_id,
						    GUINT_TO_POINTER((guint)st->fallback_to));
	char *why = fallback_wrong(st, to);
	if (why) {
		chain_fail(ps, at, "%s", why);
		g_free(why);
		return;
	}
	to->fallback = st;
	if (st->topology != to->topology || st->path_bit != to->path_bit)
		chain_note(ps, at, "step %u, the fallback of step %u, routes topology %u at path "
			   "bit %u, and step %u topology %u at path bit %u: when step %u fails, "
			   "another part of the fabric is routed in its place", st->id, to->id,
			   st->topology, st->path_bit, to->id, to->topology, to->path_bit, to->id);
}

static gint by_id(gconstpointer a, gconstpointer b)
{
	const struct chain_step *x = *(const struct chain_step *const *)a;
	const struct chain_step *y = *(const struct chain_step *const *)b;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* A step that takes the first turn must route topology 0 at path bit 0 (why: its reason). */
static void first_rule(struct chain_parser *ps, const struct chain_step *st, const char *why)
{
	if (st->topology != 0)
		chain_fail(ps, st->at[CHAIN_Q_TOPOLOGY], "step %u %s, so it routes the whole "
			   "fabric: topology %u here, 0 wanted (or leave topology out)", st->id,
			   why, st->topology);
	else if (st->path_bit != 0)
		chain_fail(ps, st->at[CHAIN_Q_PATH_BIT], "step %u %s, so its path bit is 0 and "
			   "cannot be changed: path-bit %u here", st->id, why, st->path_bit);
}

static void order_steps(struct chain_parser *ps)
{
	struct chain_policy *c = ps->c;
	GPtrArray *all = g_ptr_array_new();
	for (guint i = 0; i < c->steps->len; i++) {
		g_ptr_array_add(all, c->steps->pdata[i]);
		if (!((struct chain_step *)c->steps->pdata[i])->fallback_to)
			g_ptr_array_add(c->order, c->steps->pdata[i]);
	}
	g_ptr_array_sort(all, by_id);
	g_ptr_array_sort(c->order, by_id);
	for (guint i = 0; i < all->len; i++) {
		const struct chain_step *st = all->pdata[i], *later = c->steps->pdata[i];
		if (st != later) {
			chain_note(ps, st->at[CHAIN_Q_ID], "steps are taken in ascending id order, "
				   "not in file order: step %u (line %u) comes before step %u "
				   "(line %u)", st->id, st->line, later->id, later->line);
			break;
		}
	}
	first_rule(ps, all->pdata[0], "has the lowest id");
	/* there is a step that is not a fallback: the target of any fallback is one */
	const struct chain_step *first = c->order->pdata[0];
	if (first != all->pdata[0])
		first_rule(ps, first, "runs first (the lowest id that is not a fallback)");
	if (first->fallback)
		first_rule(ps, first->fallback, "replaces the first step when it fails");
	g_ptr_array_free(all, TRUE);
}

static const struct chain_stanza_spec chain_spec = {
	.open = "unicast-step", .close = "end-unicast-step",
	.qualifiers = chain_qualifiers, .n_qualifiers = CHAIN_Q_N,
	.empty_ok = 1u << CHAIN_Q_USE,
	.code = CHAIN_POLICY_ERROR_SYNTAX,
};

struct chain_policy *chain_policy_parse_text(const char *text, size_t len, const char *name,
					     GError **err)
{
	struct chain_stanza_spec spec = chain_spec;
	spec.domain = CHAIN_POLICY_ERROR;
	GArray *stanzas = chain_stanza_read(text, len, chain_src(name), &spec, err);
	if (!stanzas)
		return NULL;
	struct chain_parser ps = { .rep = { .name = chain_src(name), .domain = CHAIN_POLICY_ERROR,
					    .code = CHAIN_POLICY_ERROR_SYNTAX, .err = err } };
	ps.c = g_new0(struct chain_policy, 1);
	ps.c->source = g_strdup(name);
	ps.c->steps = g_ptr_array_new_with_free_func(step_free);
	ps.c->order = g_ptr_array_new();
	ps.c->notes = ps.rep.notes = g_ptr_array_new_with_free_func(g_free);
	ps.by_id = g_hash_table_new(g_direct_hash, g_direct_equal);
	for (guint i = 0; i < stanzas->len && !ps.rep.failed; i++)
		add_step(&ps, &g_array_index(stanzas, struct chain_stanza, i));
	if (!ps.rep.failed && ps.c->steps->len == 0)
		policy_fail(&ps.rep, 1, 1, "no unicast-step: a routing chain has at least one "
			    "step");
	for (guint i = 0; i < ps.c->steps->len && !ps.rep.failed; i++) {
		struct chain_step *st = ps.c->steps->pdata[i];
		if (st->fallback_to)
			link_fallback(&ps, st);
	}
	if (!ps.rep.failed)
		order_steps(&ps);
	g_hash_table_destroy(ps.by_id);
	g_array_free(stanzas, TRUE);
	if (ps.rep.failed) {
		chain_policy_free(ps.c);
		return NULL;
	}
	return ps.c;
}

/* ---- the two files together ------------------------------------------------------------- */

/* The two files do not agree: *err "name:LINE:COL: what" at `at`; -1. */
#define check_fail(err, name, at, ...) policy_error(err, CHAIN_POLICY_ERROR, \
	CHAIN_POLICY_ERROR_CHECK, name, (at).line, (at).col, __VA_ARGS__)

/* The smallest LMC whose 2^lmc LID offsets include b. */
static unsigned lmc_for(unsigned b)
{
	unsigned l = 0;
	while ((1u << l) <= b)
		l++;
	return l;
}

static int check_step(const struct chain_policy *c, const struct chain_step *st,
		      const struct topo_policy *t, unsigned lmc, GError **err)
{
	const char *name = chain_src(c->source);
	if (st->topology && !t)
		return check_fail(err, name, st->at[CHAIN_Q_TOPOLOGY], "topology %u of step %u, "
				  "but there is no topo_policy_file: only topology 0 (the whole "
				  "fabric) exists", st->topology, st->id);
	if (st->topology && !topo_policy_find(t, st->topology))
		return check_fail(err, name, st->at[CHAIN_Q_TOPOLOGY], "topology %u of step %u is "
				  "not defined in %s", st->topology, st->id,
				  t->source ? t->source : "the topo_policy_file");
	if (lmc < 7 && st->path_bit >= (1u << lmc))
		return check_fail(err, name, st->at[CHAIN_Q_PATH_BIT], "path-bit %u of step %u "
				  "needs lmc %u or more in the main configuration (a port has "
				  "2^lmc LIDs, offsets 0 to 2^lmc - 1), and lmc is %u",
				  st->path_bit, st->id, lmc_for(st->path_bit), lmc);
	return 0;
}

static int check_group(const struct topo_policy *t, const struct topo_def *d, int q,
		       int (*group_exists)(const char *name, void *ctx), void *ctx, GError **err)
{
	const char *group = q == TOPO_Q_SW_GRP ? d->sw_grp : d->hca_grp;
	if (group_exists(group, ctx))
		return 0;
	return check_fail(err, t->source ? t->source : "<topo_policy_file>", d->at[q], "%s '%s' "
			  "of topology %u is not a port group", q == TOPO_Q_SW_GRP ? "sw-grp" :
			  "hca-grp", group, d->id);
}

int chain_policy_check(const struct chain_policy *c, const struct topo_policy *t,
		       int (*group_exists)(const char *name, void *ctx), void *ctx, unsigned lmc,
		       GError **err)
{
	g_return_val_if_fail(c && group_exists, -1);
	for (guint i = 0; i < c->steps->len; i++)
		if (check_step(c, c->steps->pdata[i], t, lmc, err) < 0)
			return -1;
	for (guint i = 0; t && i < t->topologies->len; i++) {
		const struct topo_def *d = t->topologies->pdata[i];
		if (check_group(t, d, TOPO_Q_SW_GRP, group_exists, ctx, err) < 0 ||
		    check_group(t, d, TOPO_Q_HCA_GRP, group_exists, ctx, err) < 0)
			return -1;
	}
	return 0;
}

int chain_step_key_allowed(const char *key)
{
	if (!key)
		return 0;
	return !(strcmp(key, "qos") == 0 || g_str_has_prefix(key, "qos_") ||
		 strcmp(key, "lmc") == 0 || strcmp(key, "routing_engine") == 0);
}
