/* SPDX-License-Identifier: BSD-2-Clause */
/* roots.c - where updn's up/down orientation starts: the root GUID file (-a, one switch GUID
 * per line, bad lines reported with file:line and skipped; the lines are read by
 * plugins/common/guid_file.c), OpenSM's hop-histogram root detection, and the deterministic
 * fall-back for fabrics where the histogram finds nothing (tori, meshes, irregular graphs):
 * the most central switches as candidates, and the search that picks one or several of them
 * by the balance of the routes they give (updn_search_roots; the routing itself is the
 * caller's, through a callback), never "give up". */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "updn.h"

#define MAX_HOPS 64 /* histogram bars; IB paths are at most 64 hops */
#define LOG_ROOTS_MAX 8

/* One line of the file (comment cut, not blank): 0 taken, 1 bad with *why, or -ENOMEM. */
static int take_line(void *ctx, char *s, const char **why)
{
	uint64_t v;
	if (guid_parse_hex(&s, &v, why) < 0)
		return 1;
	while (isspace((unsigned char)*s))
		s++;
	if (*s) {
		*why = "junk after the GUID";
		return 1;
	}
	if (v == 0) {
		*why = "GUID 0";
		return 1;
	}
	return guid_list_add(ctx, v);
}

int updn_guids_load(const struct ibsm_core *core, const char *path, int bad_level,
		    struct guid_list *g)
{
	guid_list_clear(g);
	struct guid_file_reader rd = { .bad_level = bad_level, .take = take_line, .ctx = g };
	int rc = guid_file_read(core, "root_guid_file", path, &rd);
	g->bad_lines = rd.bad_lines;
	if (rc == -ENOMEM) /* the reader said why for any other failure */
		guid_list_clear(g);
	return rc;
}

static int u64_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/* Appends "0x..., 0x..." (at most LOG_ROOTS_MAX) of the roots in component c to buf. */
static void root_list(const struct updn_graph *g, const uint8_t *is_root, uint32_t c,
		      char *buf, size_t len)
{
	size_t used = 0;
	unsigned n = 0, more = 0;
	buf[0] = 0;
	for (uint32_t s = 0; s < g->S; s++) {
		if (!is_root[s] || g->comp[s] != c)
			continue;
		if (n++ >= LOG_ROOTS_MAX) {
			more++;
			continue;
		}
		int w = snprintf(buf + used, len - used, "%s0x%016llx", used ? ", " : "",
				 (unsigned long long)g->guid[s]);
		if (w > 0 && (size_t)w < len - used)
			used += (size_t)w;
	}
	if (more && used < len)
		snprintf(buf + used, len - used, " and %u more", more);
}

struct centre_key {
	uint32_t s;
	uint32_t ecc;
	uint64_t sum;
	uint64_t guid;
};

static int centre_cmp(const void *x, const void *y)
{
	const struct centre_key *a = x, *b = y;
	if (a->ecc != b->ecc)
		return a->ecc < b->ecc ? -1 : 1;
	if (a->sum != b->sum)
		return a->sum < b->sum ? -1 : 1;
	return a->guid < b->guid ? -1 : a->guid > b->guid;
}

/* OpenSM's hop histogram over component c (cas CAs): the switches seeing more than 90% of
 * the CAs at one distance and no other distance above 5%. Returns how many there are, with
 * cand_bar[s] that distance (0xFF: not a candidate) and *best_bar the least of them. */
static uint32_t histogram_candidates(const struct updn_graph *g, const uint8_t *hops,
				     uint32_t c, uint64_t cas, uint8_t *cand_bar,
				     uint8_t *best_bar)
{
	uint32_t S = g->S, ncand = 0;
	double thd1 = (double)cas * 0.9, thd2 = (double)cas * 0.05;
	*best_bar = 0xFF;
	for (uint32_t s = 0; s < S; s++) {
		cand_bar[s] = 0xFF;
		if (g->comp[s] != c)
			continue;
		uint64_t hist[MAX_HOPS] = { 0 };
		const uint8_t *row = hops + (size_t)s * S;
		for (uint32_t t = 0; t < S; t++)
			if (g->ca_src[t] && row[t] < MAX_HOPS)
				hist[row[t]] += g->ca_src[t];
		unsigned over1 = 0, over2 = 0, bar = 0;
		for (unsigned h = 0; h < MAX_HOPS; h++) {
			if ((double)hist[h] > thd1) {
				over1++;
				bar = h;
			}
			over2 += (double)hist[h] > thd2;
		}
		if (over1 == 1 && over2 == 1) {
			cand_bar[s] = (uint8_t)bar;
			ncand++;
			if (bar < *best_bar)
				*best_bar = (uint8_t)bar;
		}
	}
	return ncand;
}

/* Roots of component c by the histogram: the candidates seeing the CAs at the fewest hops.
 * Returns UPDN_ROOT_HISTOGRAM, or 0 when there is no candidate (or no memory). */
static uint8_t histogram_roots(const struct ibsm_core *core, const struct updn_graph *g,
			       const uint8_t *hops, uint32_t c, uint64_t cas, uint32_t members,
			       uint8_t *is_root)
{
	uint8_t *cand_bar = malloc(g->S ? g->S : 1), best_bar;
	if (!cand_bar)
		return 0;
	uint32_t ncand = histogram_candidates(g, hops, c, cas, cand_bar, &best_bar), nroots = 0;
	for (uint32_t s = 0; ncand && s < g->S; s++)
		if (g->comp[s] == c && cand_bar[s] == best_bar) {
			is_root[s] = 1;
			nroots++;
		}
	free(cand_bar);
	if (!ncand)
		return 0;
	char list[512];
	root_list(g, is_root, c, list, sizeof(list));
	core->log(core, IBSM_LOG_INFO,
		  "roots by hop histogram: %u of %u switches see over 90%% of the %llu CAs "
		  "at one distance; the %u seeing them at %u hops are the roots: %s",
		  ncand, members, (unsigned long long)cas, nroots, best_bar, list);
	return UPDN_ROOT_HISTOGRAM;
}

/* The switches of component c by centrality: least eccentricity toward the CA switches (all
 * switches when the component has no CA), then least total CA distance, then GUID. Returns
 * the sorted keys (malloc'd, *nk of them), NULL without memory. */
static struct centre_key *central_keys(const struct updn_graph *g, const uint8_t *hops,
				       uint32_t c, uint32_t *nk)
{
	uint32_t S = g->S, n = 0;
	uint64_t cas = 0;
	for (uint32_t t = 0; t < S; t++)
		if (g->comp[t] == c) {
			cas += g->ca_src[t];
			n++;
		}
	struct centre_key *k = malloc((n ? n : 1) * sizeof(*k));
	*nk = 0;
	if (!k)
		return NULL;
	for (uint32_t s = 0; s < S; s++) {
		if (g->comp[s] != c)
			continue;
		const uint8_t *row = hops + (size_t)s * S;
		uint32_t ecc = 0;
		uint64_t sum = 0;
		for (uint32_t t = 0; t < S; t++) {
			if (g->comp[t] != c || row[t] == 0xFF || (cas && !g->ca_src[t]))
				continue;
			if (row[t] > ecc)
				ecc = row[t];
			sum += (uint64_t)row[t] * (cas ? g->ca_src[t] : 1);
		}
		k[(*nk)++] = (struct centre_key){ .s = s, .ecc = ecc, .sum = sum, .guid = g->guid[s] };
	}
	qsort(k, *nk, sizeof(*k), centre_cmp);
	return k;
}

uint32_t updn_central(const struct updn_graph *g, const uint8_t *hops, uint32_t c,
		      uint32_t *out, uint32_t max)
{
	uint32_t nk;
	struct centre_key *k = central_keys(g, hops, c, &nk);
	if (!k)
		return 0;
	uint32_t n = nk < max ? nk : max;
	for (uint32_t i = 0; i < n; i++)
		out[i] = k[i].s;
	free(k);
	return n;
}

/* The fall-back root of component c: the most central switch (central_keys); the best
 * max_centre candidates go to centre[] if it is still empty. Returns UPDN_ROOT_CENTRE, or 0
 * without memory. */
static uint8_t centre_root(const struct ibsm_core *core, const struct updn_graph *g,
			   const uint8_t *hops, uint32_t c, uint64_t cas, uint32_t members,
			   uint8_t *is_root, uint32_t *centre, uint32_t *ncentre,
			   uint32_t max_centre, int centre_only)
{
	uint32_t nk;
	struct centre_key *k = central_keys(g, hops, c, &nk);
	if (!k || !nk) {
		free(k);
		return 0;
	}
	is_root[k[0].s] = 1;
	if (centre && ncentre && *ncentre == 0) {
		for (uint32_t i = 0; i < nk && i < max_centre; i++)
			centre[i] = k[i].s;
		*ncentre = nk < max_centre ? nk : max_centre;
	}
	core->log(core, IBSM_LOG_INFO,
		  "roots: %s among %u switches (%llu CAs); root by least eccentricity (%u hops), "
		  "least total distance, then GUID: 0x%016llx",
		  centre_only ? "one central root" : "the hop histogram finds none", members,
		  (unsigned long long)cas, k[0].ecc, (unsigned long long)k[0].guid);
	free(k);
	return UPDN_ROOT_CENTRE;
}

/* Component c without a root: OpenSM's histogram, else the most central switch. */
static uint8_t pick_component(const struct ibsm_core *core, const struct updn_graph *g,
			      const uint8_t *hops, uint32_t c, uint8_t *is_root, uint32_t *centre,
			      uint32_t *ncentre, uint32_t max_centre, int centre_only)
{
	uint64_t cas = 0;
	uint32_t members = 0;
	for (uint32_t t = 0; t < g->S; t++)
		if (g->comp[t] == c) {
			cas += g->ca_src[t];
			members++;
		}
	if (cas > 0 && !centre_only) {
		uint8_t how = histogram_roots(core, g, hops, c, cas, members, is_root);
		if (how)
			return how;
	}
	return centre_root(core, g, hops, c, cas, members, is_root, centre, ncentre, max_centre,
			   centre_only);
}

uint32_t updn_pick_roots(const struct ibsm_core *core, const struct updn_graph *g,
			 const uint8_t *hops, const struct guid_list *file, uint8_t *is_root,
			 uint8_t *how, uint32_t *centre, uint32_t *ncentre, uint32_t max_centre,
			 int centre_only)
{
	uint32_t S = g->S;
	memset(is_root, 0, S);
	memset(how, 0, g->ncomp);
	if (ncentre)
		*ncentre = 0;
	if (file && file->n) {
		/* binary search of the sorted file GUIDs for every switch */
		uint64_t *sorted = malloc((size_t)file->n * sizeof(*sorted));
		uint8_t *hit = calloc(file->n, 1);
		if (sorted && hit) {
			memcpy(sorted, file->v, (size_t)file->n * sizeof(*sorted));
			qsort(sorted, file->n, sizeof(*sorted), u64_cmp);
			for (uint32_t s = 0; s < S; s++) {
				uint64_t *p = bsearch(&g->guid[s], sorted, file->n, sizeof(*sorted),
						      u64_cmp);
				if (!p)
					continue;
				/* mark every copy of a duplicated GUID as found */
				while (p > sorted && p[-1] == g->guid[s])
					p--;
				for (; p < sorted + file->n && *p == g->guid[s]; p++)
					hit[p - sorted] = 1;
				is_root[s] = 1;
				how[g->comp[s]] = UPDN_ROOT_FILE;
			}
			uint32_t unknown = 0;
			for (uint32_t i = 0; i < file->n; i++) {
				if (hit[i] || (i > 0 && sorted[i] == sorted[i - 1]))
					continue;
				if (unknown++ < LOG_ROOTS_MAX)
					core->log(core, IBSM_LOG_INFO,
						  "root GUID 0x%016llx is no switch of this fabric "
						  "(scope); ignored", (unsigned long long)sorted[i]);
			}
			if (unknown > LOG_ROOTS_MAX)
				core->log(core, IBSM_LOG_INFO,
					  "%u root GUIDs in all are no switch of this fabric", unknown);
		}
		free(sorted);
		free(hit);
		for (uint32_t c = 0; c < g->ncomp; c++) {
			if (how[c] != UPDN_ROOT_FILE)
				continue;
			char list[512];
			uint32_t n = 0;
			for (uint32_t s = 0; s < S; s++)
				n += is_root[s] && g->comp[s] == c;
			root_list(g, is_root, c, list, sizeof(list));
			core->log(core, IBSM_LOG_INFO, "roots from the root GUID file: %u: %s", n,
				  list);
		}
	}
	for (uint32_t c = 0; c < g->ncomp; c++)
		if (!how[c] && g->outside && g->outside[c]) {
			for (uint32_t s = 0; s < S; s++)
				if (g->comp[s] == c) {
					is_root[s] = 1;
					break;
				}
			how[c] = UPDN_ROOT_CENTRE;
		}
	for (uint32_t c = 0; c < g->ncomp; c++)
		if (!how[c])
			how[c] = pick_component(core, g, hops, c, is_root, centre, ncentre,
						max_centre, centre_only);
	uint32_t n = 0;
	for (uint32_t s = 0; s < S; s++)
		n += is_root[s] && !(g->outside && g->outside[g->comp[s]]);
	return n;
}

/* ---- the fall-back roots, chosen by the routes they give ---- */

int updn_eval_better(const struct updn_eval *a, const struct updn_eval *b)
{
	if (a->connected != b->connected)
		return a->connected > b->connected;
	if (a->max != b->max)
		return a->max < b->max;
	return a->sumsq < b->sumsq;
}

static uint32_t count_set(const uint8_t *set, uint32_t n)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++)
		k += set[i] != 0;
	return k;
}

uint32_t updn_search_roots(const struct ibsm_core *core, const struct updn_graph *g,
			   const uint32_t *pool, uint32_t npool, uint32_t max_evals,
			   updn_eval_fn eval, void *ctx, uint8_t *is_root,
			   struct updn_search *st)
{
	uint32_t S = g->S, sz = S ? S : 1;
	uint8_t *best = malloc(sz), *trial = malloc(sz), *in_pool = calloc(sz, 1);
	uint8_t *base = malloc(sz); /* eval() may write into is_root: work on a copy */
	memset(st, 0, sizeof(*st));
	if (!best || !trial || !in_pool || !base || !npool) {
		free(best);
		free(trial);
		free(in_pool);
		free(base);
		return 0;
	}
	memcpy(base, is_root, S);
	for (uint32_t i = 0; i < npool; i++)
		in_pool[pool[i]] = 1;
	/* the detection's choice first: what every other set has to beat */
	struct updn_eval cur, e;
	memcpy(best, base, S);
	eval(ctx, best, &cur);
	st->detected = cur;
	st->evals = 1;
	/* each candidate alone (the other components keep their roots) */
	uint32_t first = UINT32_MAX;
	for (uint32_t i = 0; i < npool && st->evals < max_evals; i++) {
		memcpy(trial, base, S);
		for (uint32_t s = 0; s < S; s++)
			if (in_pool[s])
				trial[s] = 0;
		trial[pool[i]] = UPDN_ROOT;
		eval(ctx, trial, &e);
		st->evals++;
		if (updn_eval_better(&e, &cur)) {
			cur = e;
			memcpy(best, trial, S);
			first = pool[i];
		}
	}
	st->singles = st->evals - 1;
	st->single = cur;
	if (first == UINT32_MAX) /* the detection's root stays first */
		for (uint32_t i = 0; i < npool && first == UINT32_MAX; i++)
			if (base[pool[i]])
				first = pool[i];
	/* then several together: add the candidate that helps most, while one helps; equal
	 * ranks ordered by GUID, or by the distance from the first root (which keeps a group
	 * of roots connected) */
	while (first != UINT32_MAX && st->evals < max_evals) {
		struct updn_eval step = cur;
		uint32_t pick = UINT32_MAX;
		int pick_dist = 0;
		for (uint32_t i = 0; i < npool && st->evals < max_evals; i++) {
			if (best[pool[i]])
				continue;
			for (int dist = 0; dist < 2 && st->evals < max_evals; dist++) {
				memcpy(trial, best, S);
				trial[pool[i]] = UPDN_ROOT;
				trial[first] = dist ? UPDN_FIRST_ROOT : UPDN_ROOT;
				eval(ctx, trial, &e);
				st->evals++;
				if (updn_eval_better(&e, &step)) {
					step = e;
					pick = i;
					pick_dist = dist;
				}
			}
		}
		if (pick == UINT32_MAX)
			break;
		best[pool[pick]] = UPDN_ROOT;
		best[first] = pick_dist ? UPDN_FIRST_ROOT : UPDN_ROOT;
		cur = step;
		st->added++;
		core->log(core, IBSM_LOG_VERBOSE,
			  "roots: adding 0x%016llx (%u roots, equal ranks by %s): busiest switch "
			  "link %llu CA routes", (unsigned long long)g->guid[pool[pick]],
			  count_set(best, S), pick_dist ? "distance from the first root" : "GUID",
			  (unsigned long long)cur.max);
	}
	st->chosen = cur;
	st->by_distance = first != UINT32_MAX && best[first] == UPDN_FIRST_ROOT;
	memcpy(is_root, best, S);
	free(base);
	free(best);
	free(trial);
	free(in_pool);
	return count_set(is_root, S);
}
