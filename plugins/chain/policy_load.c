/* SPDX-License-Identifier: BSD-2-Clause */
/* policy_load.c - setup() of the default orchestrator: reads pgrp_policy_file,
 * topo_policy_file and rch_policy_file (parsers in policy/), checks them against each other
 * and the LMC, and opens every unicast step through the core. Any error refuses the whole
 * chain, so on a reload the previous one stays in force. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chain.h"

/* The file's text (free()), or NULL with why naming key and path. The core reads it: a FIFO,
 * a device or a file over 16 MiB is refused at once, so a reload (SIGHUP) never blocks. */
static char *read_policy(const struct ibsm_orch_core *core, const char *key, const char *path,
			 size_t *len, char *why, size_t why_len)
{
	char *text = NULL;
	if (ibsm_orch_read_file(core, key, path, &text, len, why, why_len) < 0)
		return NULL;
	if (memchr(text, 0, *len)) {
		snprintf(why, why_len, "%s %s: not a text file (it holds a NUL byte)", key, path);
		free(text);
		return NULL;
	}
	return text;
}

static void log_notes(const struct chain_inst *ci, GPtrArray *notes)
{
	for (guint i = 0; notes && i < notes->len; i++)
		ci->core->log(ci->core, IBSM_LOG_INFO, "%s", (const char *)g_ptr_array_index(notes, i));
}

static int group_exists(const char *name, void *ctx)
{
	return pgrp_policy_has(ctx, name);
}

static int fail(char *why, size_t why_len, GError *err)
{
	snprintf(why, why_len, "%s", err->message);
	g_error_free(err);
	return -EINVAL;
}

/* Does routing_engine ("a,b,no_fallback") say no_fallback? */
static int says_no_fallback(const char *spec)
{
	int yes = 0;
	gchar **v = g_strsplit(spec ? spec : "", ",", -1);
	for (gchar **p = v; *p; p++)
		yes |= !strcmp(g_strstrip(*p), "no_fallback");
	g_strfreev(v);
	return yes;
}

int chain_policies_load(struct chain_inst *ci, char *why, size_t why_len)
{
	const struct ibsm_orch_core *core = ci->core;
	const char *rch = core->config(core, "rch_policy_file");
	const char *topo = core->config(core, "topo_policy_file");
	const char *pgrp = core->config(core, "pgrp_policy_file");
	GError *err = NULL;
	size_t len;
	char *text;
	if (!rch || !*rch) {
		snprintf(why, why_len, "rch_policy_file is not set: a routing chain needs its policy");
		return -EINVAL;
	}
	if (pgrp && *pgrp) {
		if (!(text = read_policy(core, "pgrp_policy_file", pgrp, &len, why, why_len)))
			return -EINVAL;
		ci->groups = pgrp_policy_parse_text(text, len, pgrp, &err);
		free(text);
		if (!ci->groups)
			return fail(why, why_len, err);
		log_notes(ci, ci->groups->notes);
	}
	if (topo && *topo) {
		if (!(text = read_policy(core, "topo_policy_file", topo, &len, why, why_len)))
			return -EINVAL;
		ci->topos = topo_policy_parse_text(text, len, topo, &err);
		free(text);
		if (!ci->topos)
			return fail(why, why_len, err);
		log_notes(ci, ci->topos->notes);
	}
	if (!(text = read_policy(core, "rch_policy_file", rch, &len, why, why_len)))
		return -EINVAL;
	ci->chain = chain_policy_parse_text(text, len, rch, &err);
	free(text);
	if (!ci->chain)
		return fail(why, why_len, err);
	log_notes(ci, ci->chain->notes);
	const char *lmc_text = core->config(core, "lmc");
	unsigned lmc = lmc_text ? (unsigned)strtoul(lmc_text, NULL, 0) : 0;
	if (chain_policy_check(ci->chain, ci->topos, group_exists, ci->groups, lmc, &err) < 0)
		return fail(why, why_len, err);
	ci->no_fallback = says_no_fallback(core->config(core, "routing_engine"));
	/* every step, fallbacks too. An engine that cannot be loaded is a failed engine, not a
	 * failed policy: said now (at start and on every reload), and the step is skipped at each
	 * run like one that failed (its fallback-to step routes its part). A step's configuration
	 * file that is wrong refuses the policy. */
	uint32_t max_id = 0;
	for (guint i = 0; i < ci->chain->steps->len; i++) {
		const struct chain_step *st = g_ptr_array_index(ci->chain->steps, i);
		char ewhy[400] = "";
		int h = core->step_open(core, st->id, st->engine, st->config, ewhy, sizeof(ewhy));
		max_id = MAX(max_id, st->id);
		if (h == -ENOENT) {
			const struct chain_at *at = &st->at[CHAIN_Q_ENGINE];
			core->log(core, IBSM_LOG_ERROR, "%s:%u:%u: step %u: engine %s cannot be used: %s; "
				  "the step is skipped%s", rch, at->line, at->col, st->id, st->engine,
				  ewhy, st->fallback ? " and its fallback-to step routes its part" : "");
			g_hash_table_insert(ci->unloaded, GUINT_TO_POINTER(st->id), g_strdup(ewhy));
			continue;
		}
		if (h < 0) {
			const struct chain_at *at = &st->at[st->config && strstr(ewhy, st->config) == ewhy ?
							    CHAIN_Q_CONFIG : CHAIN_Q_ENGINE];
			snprintf(why, why_len, "%s:%u:%u: step %u (%s): %s", rch, at->line, at->col, st->id,
				 st->engine, ewhy);
			return -EINVAL;
		}
		g_hash_table_insert(ci->handles, GUINT_TO_POINTER(st->id), GINT_TO_POINTER(h + 1));
	}
	/* the last resort when the first step and its fallback both fail, as minhop is for -R */
	ci->last_resort = -1;
	if (!ci->no_fallback) {
		char ewhy[400] = "";
		ci->last_resort_id = max_id + 1;
		ci->last_resort = core->step_open(core, ci->last_resort_id, "minhop", NULL, ewhy,
						  sizeof(ewhy));
		if (ci->last_resort < 0)
			core->log(core, IBSM_LOG_ERROR, "no last-resort minhop step: %s", ewhy);
	}
	core->log(core, IBSM_LOG_INFO, "%s: %u unicast step%s (%u in the chain's order), %u "
		  "topolog%s, %u port group%s", rch, ci->chain->steps->len,
		  ci->chain->steps->len == 1 ? "" : "s", ci->chain->order->len,
		  ci->topos ? ci->topos->topologies->len : 0,
		  ci->topos && ci->topos->topologies->len == 1 ? "y" : "ies",
		  ci->groups ? ci->groups->groups->len : 0,
		  ci->groups && ci->groups->groups->len == 1 ? "" : "s");
	return 0;
}

void chain_policies_free(struct chain_inst *ci)
{
	pgrp_policy_free(ci->groups);
	topo_policy_free(ci->topos);
	chain_policy_free(ci->chain);
	ci->groups = NULL;
	ci->topos = NULL;
	ci->chain = NULL;
}
