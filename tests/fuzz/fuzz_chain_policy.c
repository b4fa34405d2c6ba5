/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_chain_policy.c - fuzz target for the routing chain policy parsers (policy/topo_parse.c,
 * policy/chain_parse.c): any input, read as a topology policy and as a chain policy, must parse
 * or be refused with a FILE:LINE:COL error, never crash; what parses must hold together: ids
 * unique and above 0, groups and engines that are names, a fallback that points at a step which
 * points back, the run order sorted by id and free of fallbacks, the first step on topology 0
 * at path bit 0, notes naming the file; then each is checked, at every LMC and with a fixed
 * set of port groups, against a fixed file of the other kind (and a chain against none).
 * Built for libFuzzer by `make fuzz`; its corpus is replayed under ASan by the unit tests. */
#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "policy/chain_policy.h"

int fuzz_chain_policy(const uint8_t *data, size_t size);

static int fuzz_chain_group(const char *name, void *ctx)
{
	(void)ctx;
	static const char *const groups[] = { "ALL", "ALL_SWITCHES", "ALL_CAS", "ALL_ROUTERS",
					      "ys_switches", "ys_hosts", "grp1" };
	for (size_t i = 0; i < G_N_ELEMENTS(groups); i++)
		if (strcmp(name, groups[i]) == 0)
			return 1;
	return 0;
}

static void fuzz_chain_notes(const GPtrArray *notes, const char *prefix)
{
	for (guint i = 0; i < notes->len; i++)
		if (!g_str_has_prefix(notes->pdata[i], prefix))
			abort();
}

/* A value as the parser keeps it: not empty (unless allowed), no ':', '#', '\n' or NUL, no
 * surrounding blanks. */
static void fuzz_chain_value(const char *v, int empty_ok)
{
	size_t n = strlen(v);
	if ((!empty_ok && n == 0) || strpbrk(v, ":#\n"))
		abort();
	if (n && (strchr(" \t\r", v[0]) || strchr(" \t\r", v[n - 1])))
		abort();
}

static void fuzz_topo(const struct topo_policy *t)
{
	for (guint i = 0; i < t->topologies->len; i++) {
		const struct topo_def *d = t->topologies->pdata[i];
		if (d->id == 0 || topo_policy_find(t, d->id) != d || d->line < 1)
			abort();
		fuzz_chain_value(d->sw_grp, 0);
		fuzz_chain_value(d->hca_grp, 0);
		if (strchr(d->sw_grp, ',') || strchr(d->hca_grp, ','))
			abort();
		for (int q = 0; q < TOPO_Q_N; q++)
			if (d->at[q].line <= d->line || d->at[q].col < 1)
				abort();
	}
	fuzz_chain_notes(t->notes, "fuzz.topo:");
}

static void fuzz_step(const struct chain_policy *c, const struct chain_step *s)
{
	if (s->id == 0 || chain_policy_find(c, s->id) != s || s->path_bit > CHAIN_PATH_BIT_MAX)
		abort();
	static const char name_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					 "0123456789_-.+";
	size_t n = strlen(s->engine);
	if (n == 0 || n > CHAIN_ENGINE_NAME_MAX || s->engine[0] == '.' ||
	    strspn(s->engine, name_chars) != n)
		abort();
	fuzz_chain_value(s->use, 1);
	if (s->config)
		fuzz_chain_value(s->config, 0);
	if (!s->at[CHAIN_Q_ID].line || !s->at[CHAIN_Q_ENGINE].line ||
	    (!s->at[CHAIN_Q_TOPOLOGY].line && s->topology) ||
	    (!s->at[CHAIN_Q_PATH_BIT].line && s->path_bit) ||
	    (!s->at[CHAIN_Q_CONFIG].line != !s->config) ||
	    (!s->at[CHAIN_Q_FALLBACK_TO].line != !s->fallback_to))
		abort();
	if (s->fallback_to) {
		const struct chain_step *to = chain_policy_find(c, s->fallback_to);
		if (!to || to == s || to->fallback != s || to->fallback_to)
			abort();
	}
	if (s->fallback && (s->fallback->fallback_to != s->id || s->fallback_to))
		abort();
}

static void fuzz_chain(const struct chain_policy *c)
{
	if (c->steps->len == 0 || c->order->len == 0 || c->order->len > c->steps->len)
		abort();
	const struct chain_step *lowest = NULL;
	for (guint i = 0; i < c->steps->len; i++) {
		const struct chain_step *s = c->steps->pdata[i];
		fuzz_step(c, s);
		if (!lowest || s->id < lowest->id)
			lowest = s;
	}
	for (guint i = 0; i < c->order->len; i++) {
		const struct chain_step *s = c->order->pdata[i];
		const struct chain_step *before = i ? c->order->pdata[i - 1] : NULL;
		if (s->fallback_to || (before && s->id <= before->id))
			abort();
	}
	const struct chain_step *first = c->order->pdata[0];
	if (lowest->topology || lowest->path_bit || first->topology || first->path_bit ||
	    (first->fallback && (first->fallback->topology || first->fallback->path_bit)))
		abort();
	fuzz_chain_notes(c->notes, "fuzz.rch:");
}

static void fuzz_check(const struct chain_policy *c, const struct topo_policy *t)
{
	for (unsigned lmc = 0; lmc <= 8; lmc++) {
		GError *err = NULL;
		int r = chain_policy_check(c, t, fuzz_chain_group, NULL, lmc, &err);
		if ((r == 0) != (err == NULL) || (r != 0 && r != -1))
			abort();
		if (err && !g_str_has_prefix(err->message, "fuzz.rch:") &&
		    !g_str_has_prefix(err->message, "fuzz.topo:"))
			abort();
		g_clear_error(&err);
	}
}

/* The fixed other file of each check: topologies 1-3 (one with a missing group), and a chain
 * over topologies 0, 1, 2 and 7 at path bits up to 3. */
static const char fuzz_topo_text[] =
	"topology\nid: 1\nsw-grp: ys_switches\nhca-grp: ys_hosts\nend-topology\n"
	"topology\nid: 2\nsw-grp: ALL_SWITCHES\nhca-grp: nobody\nend-topology\n"
	"topology\nid: 3\nsw-grp: grp1\nhca-grp: ALL_CAS\nend-topology\n";
static const char fuzz_chain_text[] =
	"unicast-step\nid: 1\nengine: minhop\nend-unicast-step\n"
	"unicast-step\nid: 2\nengine: ftree\ntopology: 1\npath-bit: 1\nend-unicast-step\n"
	"unicast-step\nid: 3\nengine: updn\ntopology: 2\npath-bit: 3\nend-unicast-step\n"
	"unicast-step\nid: 4\nengine: minhop\ntopology: 7\nend-unicast-step\n";

int fuzz_chain_policy(const uint8_t *data, size_t size)
{
	GError *err = NULL;
	struct topo_policy *t = topo_policy_parse_text((const char *)data, size, "fuzz.topo", &err);
	if ((t == NULL) == (err == NULL) || (err && !g_str_has_prefix(err->message, "fuzz.topo:")))
		abort();
	g_clear_error(&err);
	struct chain_policy *c = chain_policy_parse_text((const char *)data, size, "fuzz.rch",
							 &err);
	if ((c == NULL) == (err == NULL) || (err && !g_str_has_prefix(err->message, "fuzz.rch:")))
		abort();
	g_clear_error(&err);
	struct topo_policy *fixed_t = topo_policy_parse_text(fuzz_topo_text, sizeof(fuzz_topo_text)
							     - 1, "fuzz.topo", NULL);
	struct chain_policy *fixed_c = chain_policy_parse_text(fuzz_chain_text,
							       sizeof(fuzz_chain_text) - 1,
							       "fuzz.rch", NULL);
	if (!fixed_t || !fixed_c)
		abort();
	if (t) {
		fuzz_topo(t);
		fuzz_check(fixed_c, t);
	}
	if (c) {
		fuzz_chain(c);
		fuzz_check(c, fixed_t);
		fuzz_check(c, NULL);
	}
	topo_policy_free(fixed_t);
	chain_policy_free(fixed_c);
	topo_policy_free(t);
	chain_policy_free(c);
	return 0;
}

#ifdef IBSM_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_chain_policy(data, size);
}
#endif
