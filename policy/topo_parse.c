/* SPDX-License-Identifier: BSD-2-Clause */
/* topo_parse.c - reads NVIDIA's topology policy (topo_policy_file; NVIDIA's SM manual, "Defining Topology Policy") into a struct
 * topo_policy: the parts of the fabric a routing chain's steps may route, each named by a
 * number and made of a switch port group and a CA port group. Its stanzas are read by
 * policy/chain_stanza.c, as the routing chain policy's. Choices where the documents leave room:
 *  - id: 1 to 2^32-1 ("any positive value", unique). "id: 0" is an error, not a no-op: topology
 *    0 is the whole fabric, predefined and implicit, and a file that defines it again would
 *    make a step's "topology: 0" mean two things;
 *  - sw-grp and hca-grp name one port group each, kept as written (whether it exists is
 *    chain_policy_check's question); a ',' in them is refused (a list of groups is a
 *    union-rule group of the port group policy);
 *  - a file without any topology is read, with a note: only topology 0 exists then. */
#include <string.h>
#include "policy/chain_policy.h"
#include "policy/messages.h"

G_DEFINE_QUARK(ibsm-topo-policy-error-quark, topo_policy_error)

_Static_assert(TOPO_Q_N <= CHAIN_STANZA_MAX_QUALIFIERS, "a stanza holds every qualifier");

static const char *const topo_qualifiers[TOPO_Q_N] = {
	[TOPO_Q_ID] = "id", [TOPO_Q_SW_GRP] = "sw-grp", [TOPO_Q_HCA_GRP] = "hca-grp",
};

static const char *topo_src(const char *name)
{
	return name ? name : "<topo_policy_file>";
}

/* The file (named name) is refused at `at` (a struct chain_at): -1. */
#define topo_fail(err, name, at, ...) policy_error(err, TOPO_POLICY_ERROR, \
	TOPO_POLICY_ERROR_SYNTAX, topo_src(name), (at).line, (at).col, __VA_ARGS__)

static void topo_def_free(gpointer p)
{
	struct topo_def *d = p;
	g_free(d->sw_grp);
	g_free(d->hca_grp);
	g_free(d);
}

void topo_policy_free(struct topo_policy *t)
{
	if (!t)
		return;
	g_free(t->source);
	g_ptr_array_free(t->topologies, TRUE);
	g_ptr_array_free(t->notes, TRUE);
	g_free(t);
}

const struct topo_def *topo_policy_find(const struct topo_policy *t, uint32_t id)
{
	for (guint i = 0; t && id && i < t->topologies->len; i++) {
		const struct topo_def *d = t->topologies->pdata[i];
		if (d->id == id)
			return d;
	}
	return NULL;
}

static int topo_id(const struct topo_policy *t, struct topo_def *d,
		   const struct chain_stanza_value *v, GError **err)
{
	uint64_t x;
	const char *src = t->source;
	int r = chain_stanza_decimal(v, G_MAXUINT32, &x);
	if (r == -1)
		return topo_fail(err, src, v->at, "topology id '%.*s' is not a decimal number",
				 POLICY_SHOW(v->s, v->n));
	if (r == -2)
		return topo_fail(err, src, v->at, "topology id %.*s is out of range (1 to %u)",
				 POLICY_SHOW(v->s, v->n), G_MAXUINT32);
	if (x == 0)
		return topo_fail(err, src, v->at, "topology id 0 is the whole fabric, which is "
				 "predefined: a topology of this file has an id from 1");
	const struct topo_def *other = topo_policy_find(t, (uint32_t)x);
	if (other)
		return topo_fail(err, src, v->at, "topology id %" G_GUINT64_FORMAT " is already "
				 "the id of the topology on line %u", x, other->line);
	d->id = (uint32_t)x;
	return 0;
}

static int topo_group(const struct topo_policy *t, char **out, const struct chain_stanza_value *v,
		      const char *what, GError **err)
{
	const char *comma = memchr(v->s, ',', v->n);
	if (comma) {
		struct chain_at at = { v->at.line, v->at.col + (unsigned)(comma - v->s) };
		return topo_fail(err, t->source, at, "%s names one port group ('%.*s' holds a "
				 "','); for several, define a union-rule group in the port group "
				 "policy", what, POLICY_SHOW(v->s, v->n));
	}
	*out = g_strndup(v->s, v->n);
	return 0;
}

static int add_topology(struct topo_policy *t, const struct chain_stanza *sz, GError **err)
{
	const struct chain_stanza_value *v = sz->v;
	for (int q = 0; q < TOPO_Q_N; q++)
		if (!v[q].s)
			return topo_fail(err, t->source, sz->at, "topology without '%s:' (id, "
					 "sw-grp and hca-grp are mandatory)", topo_qualifiers[q]);
	struct topo_def *d = g_new0(struct topo_def, 1);
	d->line = sz->at.line;
	for (int q = 0; q < TOPO_Q_N; q++)
		d->at[q] = v[q].at;
	if (topo_id(t, d, &v[TOPO_Q_ID], err) < 0 ||
	    topo_group(t, &d->sw_grp, &v[TOPO_Q_SW_GRP], "sw-grp", err) < 0 ||
	    topo_group(t, &d->hca_grp, &v[TOPO_Q_HCA_GRP], "hca-grp", err) < 0) {
		topo_def_free(d);
		return -1;
	}
	g_ptr_array_add(t->topologies, d);
	return 0;
}

static const struct chain_stanza_spec topo_spec = {
	.open = "topology", .close = "end-topology",
	.qualifiers = topo_qualifiers, .n_qualifiers = TOPO_Q_N,
	.code = TOPO_POLICY_ERROR_SYNTAX,
};

struct topo_policy *topo_policy_parse_text(const char *text, size_t len, const char *name,
					   GError **err)
{
	struct chain_stanza_spec spec = topo_spec;
	spec.domain = TOPO_POLICY_ERROR;
	GArray *stanzas = chain_stanza_read(text, len, topo_src(name), &spec, err);
	if (!stanzas)
		return NULL;
	struct topo_policy *t = g_new0(struct topo_policy, 1);
	t->source = g_strdup(name);
	t->topologies = g_ptr_array_new_with_free_func(topo_def_free);
	t->notes = g_ptr_array_new_with_free_func(g_free);
	int failed = 0;
	for (guint i = 0; i < stanzas->len && !failed; i++)
		failed = add_topology(t, &g_array_index(stanzas, struct chain_stanza, i), err) < 0;
	g_array_free(stanzas, TRUE);
	if (failed) {
		topo_policy_free(t);
		return NULL;
	}
	if (t->topologies->len == 0)
		policy_message_add(t->notes, topo_src(name), 1, 1, "no topology in the file: only "
				   "topology 0, the whole fabric, exists");
	return t;
}
