/* SPDX-License-Identifier: BSD-2-Clause */
/* step_run.c - one step on one fabric generation: route(), the merge under its scope over
 * what earlier steps left, the walk of the merged tables; the -R list and the orchestrator
 * both run their steps through it. */
#include <errno.h>
#include <string.h>
#include "base/log.h"
#include "routing/merge.h"
#include "routing/services.h"
#include "routing/step_run.h"
#include "routing/verify.h"

/* The step's rows merged over what earlier steps left (r->lft) into scratch, then walked:
 * holes make the step a failure whatever route() returned (but for an engine whose tables are
 * loaded as given, IBSM_CAP_AS_LOADED: logged). 0, or -EHOSTUNREACH with why. */
static int merge_and_verify(struct routing_step *s, struct fabric *f, const struct ibsm_scope *scope,
			    struct ibsm_routes *routes, struct routing_result *r, uint8_t *scratch,
			    char *why, size_t why_len)
{
	size_t bytes = (size_t)r->n_switches * r->stride;
	int refused;
	/* -R: the walked buffer becomes r->lft as it is (routing_step_try), so the walk's memo
	 * borrows it and adopts those tables then (a reference to them); a chain's merged tables
	 * are copied into r->lft and its joins may be rewritten later: the memo keeps a copy */
	enum verify_keep keep = scratch ? VERIFY_KEEP_COPY : VERIFY_KEEP_BORROW;
	if (scratch) {
		memcpy(scratch, r->lft, bytes);
		refused = routing_merge(f, scope, routes, scratch, r->stride, NULL, 0);
	} else {
		/* nothing routed before this step: merged over no route, in place */
		refused = routing_merge_in_place(f, scope, routes);
		scratch = routes->lft;
	}
	r->rejected = refused > 0 ? (uint32_t)refused : 0;
	struct routing_holes h;
	gint64 t0 = g_get_monotonic_time();
	uint64_t holes = routing_verify_keep(f, scope, scratch, r->stride, &h, &s->verify_memo, keep);
	LOG_V("SRN-0001", "tables of %s walked: %" G_GUINT64_FORMAT " (switch, LID) pairs, %"
	      G_GUINT64_FORMAT " not delivered, %" G_GUINT64_FORMAT " LIDs as last walked, %.3f s",
	      s->engine->name, h.walks, holes, h.lids_kept,
	      (double)(g_get_monotonic_time() - t0) / 1e6);
	if (holes) {
		char text[320];
		routing_hole_text(f, &h, text, sizeof(text));
		if (s->engine->ops->caps & IBSM_CAP_AS_LOADED) {
			LOG_W("SRN-0002", "the tables %s loaded leave holes, programmed as loaded (topology "
			      "changes are not followed): %s", s->engine->name, text);
			return 0;
		}
		if (r->rejected)
			g_snprintf(why, why_len, "its tables leave holes: %s; %u of its entries name ports "
				   "the switches do not have", text, r->rejected);
		else
			g_snprintf(why, why_len, "its tables leave holes: %s", text);
		return -EHOSTUNREACH;
	}
	return 0;
}

int routing_step_try(struct routing_step *s, struct fabric *f, const struct ibsm_scope *scope,
		     struct ibsm_routes *routes, struct routing_result *r, uint8_t *scratch,
		     char *why, size_t why_len)
{
	const struct ibsm_engine *ops = s->engine->ops;
	memset(routes->lft, IBSM_NO_PORT, (size_t)f->pub.n_switches * routes->stride);
	if (s->setup_rc < 0) {
		g_snprintf(why, why_len, "setup failed: %s", g_strerror(-s->setup_rc));
		return s->setup_rc;
	}
	void *result = NULL;
	routes->why[0] = 0;
	int rc = ops->route(s->inst, &f->pub, scope, routes, &result);
	routes->why[sizeof(routes->why) - 1] = 0;
	if (rc < 0) {
		g_strlcpy(why, s->core->cancelled(s->core) ? "cancelled" :
			  routes->why[0] ? routes->why : "no reason given", why_len);
		if (result && ops->result_free)
			ops->result_free(result);
		services_keep_rows(s->core, NULL, 0, 0); /* last_rows(): not this route()'s */
		return rc;
	}
	rc = merge_and_verify(s, f, scope, routes, r, scratch, why, why_len);
	if (rc < 0) {
		if (result && ops->result_free)
			ops->result_free(result);
		services_keep_rows(s->core, NULL, 0, 0);
		return rc;
	}
	if (scratch) {
		memcpy(r->lft, scratch, (size_t)r->n_switches * r->stride);
	} else {
		/* the merged tables change hands: r->lft (no route anywhere, or NULL) goes back */
		uint8_t *blank = r->lft;
		r->lft = routes->lft;
		routes->lft = blank;
		/* the buffer it walked, now r's: the memo keeps the tables, not r (which holds s) */
		verify_memo_adopt(s->verify_memo, r->lft);
	}
	/* last_rows() (ABI 1.4): the engine's rows as programmed, when nothing but the merge's
	 * clearing of what no LID needs touched them (-R, no entry refused); a chain's are merged
	 * with other steps' */
	if (!scratch && !r->rejected)
		services_keep_rows(s->core, r->lft, r->n_switches, r->stride);
	else
		services_keep_rows(s->core, NULL, 0, 0);
	uint8_t part = routing_result_add(r, s, result);
	for (uint32_t lid = 1; lid < r->stride; lid++)
		if (ibsm_scope_routes_lid(&f->pub, scope, lid))
			r->lid_part[lid] = part;
	g_strlcpy(r->engine, s->engine->name, sizeof(r->engine));
	return 0;
}

