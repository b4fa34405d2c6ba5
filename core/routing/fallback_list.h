/* SPDX-License-Identifier: BSD-2-Clause */
/* fallback_list.h - the engines a routing run may use, each set up once as a step instance:
 * the "-R a,b,c[,no_fallback]" list (tried in order, then minhop unless no_fallback), or the
 * orchestrator that routes in its place (routing chains, routing/orch.h). Built at start-up
 * and again on every configuration reload; a step lives on while any result it computed is
 * in use. */
#ifndef IBSM_ROUTING_FALLBACK_LIST_H
#define IBSM_ROUTING_FALLBACK_LIST_H

#include <glib.h>
#include <ibsm/routing.h>
#include "config/options.h"
#include "routing/loader.h"
#include "routing/step.h"

#define ROUTING_FALLBACK "minhop" /* tried last unless the list says no_fallback */
#define ROUTING_ORCHESTRATOR "chain" /* the orchestrator rch_policy_file selects by default */

struct orch;

struct fallback_list {
	char *spec;                  /* "-R" as given ("minhop" when empty) */
	GPtrArray *candidates;       /* struct routing_step *, in the order they are tried; with an
				      * orchestrator, the steps it opened (its handles) */
	struct orch *orch;           /* the orchestrator that routes, or NULL: the -R list does */
	guint n_named;               /* candidates named by spec; the rest is the fallback */
	char *fallback_error;        /* why the fallback could not be loaded, or NULL */
	int no_fallback;             /* spec says no_fallback */
	guint n_skipped;             /* named engines that could not be loaded */
	GString *skipped;            /* "name: why; ..." of those (and of a missing orchestrator) */
	GString *skipped_names;      /* "name, ..." */
};

/* Parses spec "a,b,c[,no_fallback]" (NULL or "": minhop), loads every named engine, then the
 * fallback, and sets up one instance of each with its services (configuration from o). A name
 * that does not load (missing, refused, another ABI) is a failed engine, never a failed start:
 * loudly, but not fatally: an ERROR naming it, why and the directories searched (CHN-0003, at
 * start and on every reload, which call this again), and it is skipped, as OpenSM skips an
 * engine it cannot set up (osm_opensm.c) and falls back to minhop unless no_fallback
 * (osm_ucast_mgr.c). When no engine is left (no_fallback, or minhop missing too) the list is
 * empty (CHN-0005): every routing run fails with the reasons, and the SM keeps running
 * without routing, as OpenSM does. A spec naming an orchestrator (ABI 1.2; alone, or with
 * no_fallback), or o->rch_policy_file set (the default orchestrator "chain" unless the spec
 * names one), builds an orchestrator list instead: its setup() reads its policy and opens its
 * steps (the default one missing: CHN-0004, and the -R list routes). NULL with *err only for
 * what is the configuration's fault: a list naming no engine, an orchestrator not alone, an
 * orchestrator that refuses its policy. */
struct fallback_list *fallback_list_new(const char *spec, const struct sm_options *o, GError **err);
void fallback_list_free(struct fallback_list *c);
/* What every step's cancelled() reports from now on (any thread). */
void fallback_list_cancel(struct fallback_list *c, int on);

#endif
