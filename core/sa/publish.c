/* SPDX-License-Identifier: BSD-2-Clause */
/* publish.c - the snapshot handed over, and what the SA derives from it (sa/publish.h). */
#include <glib.h>
#include "policy/partitions.h"
#include "routing/result.h"
#include "sa/index.h"
#include "sa/mcast_groups.h"
#include "sa/mcast_requests.h"
#include "sa/publish.h"
#include "sa/qos_match.h"
#include "sa/reports.h"
#include "sa/state.h"

/* The SL of each partition's paths (sl=), as OpenSM gives a path whose QoS level names none:
 * [0x8000], SL + 1 by the P_Key's low 15 bits; NULL when no partition names one, or QoS is off
 * (OpenSM's partition_create takes sl= as 0 without -Q). */
static uint8_t *partition_sls(const struct part_policy *pp, int qos_on)
{
	uint8_t *sl = NULL;
	for (guint i = 0; qos_on && pp && pp->parts && i < pp->parts->len; i++) {
		const struct partition *p = g_ptr_array_index(pp->parts, i);
		if (!p->sl)
			continue;
		if (!sl)
			sl = g_malloc0(0x8000);
		sl[p->pkey & 0x7fff] = (uint8_t)(p->sl + 1);
	}
	return sl;
}

void sa_publish(struct sa *sa, const struct sa_inputs *in)
{
	if (!sa)
		return;
	struct sa_inputs old = sa->in;
	sa_inputs_copy(&sa->in, in);
	if (sa->mc)
		mc_set_consolidate_snm(sa->mc, sa->in.consolidate_snm);
	const struct routing_result *r = sa->in.r;
	if (r != old.r) {
		/* a new generation: the end ports that came and went, members of ports gone */
		if (old.r && r && sa->in.master)
			sa_reports_generation(sa, old.r->f, r->f);
		/* its indexes, once for every query answered from it */
		sa_index_free(sa->ix);
		if (r && sa->ix_next && sa->ix_next_f == r->f) { /* built ahead (sa_publish_index) */
			sa->ix = sa->ix_next;
			sa->ix_next = NULL;
		} else {
			sa->ix = r ? sa_index_new(r->f) : NULL;
		}
		sa_index_free(sa->ix_next);
		sa->ix_next = NULL;
		if (r) {
			sa_mcast_limits(sa, r->f);
			sa_mcast_ports_gone(sa, r->f);
		}
	}
	if (sa->in.parts != old.parts || sa->in.qos_on != old.qos_on) {
		g_free(sa->part_sl);
		sa->part_sl = partition_sls(sa->in.parts, sa->in.qos_on);
	}
	/* the QoS policy: made anew when it or the partitions' names change, its port groups
	 * resolved again for a new generation or P_Key tables */
	if (sa->in.qos != old.qos || sa->in.parts != old.parts) {
		qos_match_free(sa->qos);
		sa->qos = sa->in.qos ? qos_match_new(sa->in.qos, sa->in.parts) : NULL;
		if (sa->qos)
			qos_match_compile(sa->qos, r ? r->f : NULL, sa->in.pk);
	} else if (sa->qos && (r != old.r || sa->in.pk != old.pk)) {
		qos_match_compile(sa->qos, r ? r->f : NULL, sa->in.pk);
	}
	sa_inputs_clear(&old);
}

void sa_publish_index(struct sa *sa, const struct fabric *f, struct sa_index *ix)
{
	if (!sa) {
		sa_index_free(ix);
		return;
	}
	sa_index_free(sa->ix_next);
	sa->ix_next = ix;
	sa->ix_next_f = f;
}

void sa_publish_release(struct sa *sa)
{
	sa_index_free(sa->ix_next);
	sa->ix_next = NULL;
	qos_match_free(sa->qos);
	sa->qos = NULL;
	sa_index_free(sa->ix);
	sa->ix = NULL;
	g_free(sa->part_sl);
	sa->part_sl = NULL;
	sa_inputs_clear(&sa->in);
}
