/* SPDX-License-Identifier: BSD-2-Clause */
/* multipath_record.c - MultiPathRecord answers as PathRecord queries (sa/multipath_record.h). */
#include <string.h>
#include "sa/multipath_record.h"
#include "sa/compmask.h"
#include "sa/wire.h"

/* Bit offset and width of each component (IBA 15.2.5.20; GIDs follow at byte 24) */
static const uint8_t off[MPR_N] = { 0, 1, 4, 24, 32, 40, 41, 48, 64, 76, 80, 82, 88, 90, 96, 98,
				     104, 112, 114, 120, 128, 136 };
static const uint8_t width[MPR_N] = { 1, 3, 20, 8, 8, 1, 7, 16, 12, 4, 2, 6, 2, 6, 2, 6,
				       8, 2, 6, 8, 8, 56 };

/* The PathRecord component each MultiPathRecord component becomes (-1: none) */
static const int8_t as_pr[MPR_N] = {
	[MPR_RAW] = PR_RAW, [MPR_RESV0] = -1, [MPR_FLOW] = PR_FLOW, [MPR_HOPLIMIT] = PR_HOPLIMIT,
	[MPR_TCLASS] = PR_TCLASS, [MPR_REVERSIBLE] = PR_REVERSIBLE, [MPR_NUMBPATH] = -1,
	[MPR_PKEY] = PR_PKEY, [MPR_QOS] = PR_QOS, [MPR_SL] = PR_SL, [MPR_MTU_SEL] = PR_MTU_SEL,
	[MPR_MTU] = PR_MTU, [MPR_RATE_SEL] = PR_RATE_SEL, [MPR_RATE] = PR_RATE,
	[MPR_LIFE_SEL] = PR_LIFE_SEL, [MPR_LIFE] = PR_LIFE, [MPR_SID_MSB] = -1,
	[MPR_INDEP_SEL] = -1, [MPR_RESV1] = -1, [MPR_SGID_COUNT] = -1, [MPR_DGID_COUNT] = -1,
	[MPR_SID_LSB] = -1,
};

static uint64_t field(const uint8_t *req, int comp)
{
	return sa_bits(req, off[comp], width[comp]);
}

uint16_t mpr_query(const struct sa_view *v, const struct pr_env *env, const uint8_t *req,
		   size_t len, uint64_t mask, GByteArray *out)
{
	if (!(mask >> MPR_SGID_COUNT & 1) || !(mask >> MPR_DGID_COUNT & 1))
		return SA_ERR_REQ_INSUFFICIENT_COMPONENTS;
	unsigned ns = (unsigned)field(req, MPR_SGID_COUNT), nd = (unsigned)field(req, MPR_DGID_COUNT);
	if (!ns || !nd)
		return SA_ERR_REQ_INSUFFICIENT_COMPONENTS;
	if (ns + nd > MPR_MAX_GIDS || MPR_FIXED + (ns + nd) * 16 > len)
		return SA_ERR_REQ_INVALID;
	unsigned cap = mask >> MPR_NUMBPATH & 1 ? (unsigned)field(req, MPR_NUMBPATH) : 0;
	unsigned per_pair = cap ? cap : 1;

	/* the PathRecord query every pair shares */
	uint8_t q[PR_SIZE] = { 0 };
	uint64_t pmask = 1ULL << PR_SGID | 1ULL << PR_DGID | 1ULL << PR_NUMBPATH;
	for (int c = 0; c < MPR_N; c++)
		if (as_pr[c] >= 0 && (mask >> c & 1)) {
			pr_put(q, as_pr[c], field(req, c));
			pmask |= 1ULL << as_pr[c];
		}
	if (mask & (1ULL << MPR_SID_MSB | 1ULL << MPR_SID_LSB)) { /* echoed in the answers */
		uint64_t sid = field(req, MPR_SID_MSB) << 56 | field(req, MPR_SID_LSB);
		pr_put(q, PR_SID_MSB, sid >> 32);
		pr_put(q, PR_SID_LSB, sid & 0xffffffffu);
		pmask |= 1ULL << PR_SID_MSB | 1ULL << PR_SID_LSB;
	}
	pr_put(q, PR_NUMBPATH, per_pair);

	/* every pair's paths, then taken round by round; an unknown GID is INVALID_GID */
	struct pr_env strict = *env;
	strict.strict = 1;
	unsigned npairs = ns * nd;
	GByteArray **paths = g_new0(GByteArray *, npairs);
	uint16_t st = 0;
	for (unsigned i = 0; i < ns && !st; i++)
		for (unsigned j = 0; j < nd && !st; j++) {
			memcpy(q + 24, req + MPR_FIXED + i * 16, 16);      /* SGID */
			memcpy(q + 8, req + MPR_FIXED + (ns + j) * 16, 16); /* DGID */
			GByteArray *p = paths[i * nd + j] = g_byte_array_new();
			st = pr_query(v, &strict, q, pmask, 1, p);
		}
	unsigned total = cap ? cap : npairs, made = 0;
	for (unsigned round = 0; !st && round < per_pair && made < total; round++)
		for (unsigned k = 0; k < npairs && made < total; k++)
			if (paths[k] && paths[k]->len >= (round + 1) * PR_SIZE) {
				g_byte_array_append(out, paths[k]->data + round * PR_SIZE, PR_SIZE);
				made++;
			}
	for (unsigned k = 0; k < npairs; k++)
		if (paths[k])
			g_byte_array_free(paths[k], TRUE);
	g_free(paths);
	return st;
}
