/* SPDX-License-Identifier: BSD-2-Clause */
/* enhanced_qos.c - the enhanced QoS step of a sweep (sm/enhanced_qos.h): which rule each CA
 * port falls under (its GUID, else the first BW_RULES port group of the QoS policy file that
 * holds it, else default), the Sets, and the dump of what each port was given. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "base/log.h"
#include "policy/enhanced_qos.h"
#include "program/portinfo.h"
#include "sa/qos_match.h"
#include "sm/enhanced_qos.h"

struct group_ctx {
	const struct qos_match *m;
	uint32_t port;
};

static int in_group(const char *group, void *ctx)
{
	const struct group_ctx *g = ctx;
	return g->m && qos_match_in_group(g->m, group, g->port);
}

struct vqos_want *eqos_wants(const struct eqos_policy *p, const struct qos_policy *qos,
			     const struct part_policy *parts, int vport0_unlimit,
			     const struct fabric *f, uint32_t *n)
{
	GArray *w = g_array_new(FALSE, TRUE, sizeof(struct vqos_want));
	struct qos_match *m = NULL;
	if (qos) {
		m = qos_match_new(qos, parts);
		qos_match_compile(m, f, NULL); /* P_Key tables unknown here: partition groups hold no port */
	}
	for (uint32_t port = 0; port < f->pub.n_ports; port++) {
		const struct ibsm_port *pp = &f->ports[port];
		if (f->nodes[pp->node].type != IBSM_CA || !portinfo_linked(f, port))
			continue;
		struct group_ctx gc = { m, port };
		struct vqos_want one = { .port = port };
		const struct eqos_rule *r = eqos_rule_for(&p->port, pp->guid, in_group, &gc);
		eqos_rates(&p->port, r, 0, one.rate);
		g_array_append_val(w, one);
		if (!p->vport.present)
			continue;
		struct vqos_want v0 = { .port = port, .mod = VQOS_MOD_VPORT | 0 };
		r = eqos_rule_for(&p->vport, pp->guid, NULL, NULL);
		eqos_rates(&p->vport, r, vport0_unlimit, v0.rate);
		g_array_append_val(w, v0);
	}
	qos_match_free(m);
	*n = w->len;
	return (struct vqos_want *)(void *)g_array_free(w, FALSE);
}

static const char *const outcome_name[] = {
	[VQOS_NOT_SENT] = "not-sent", [VQOS_TAKEN] = "taken", [VQOS_REFUSED] = "refused",
	[VQOS_UNCHANGED] = "unchanged", [VQOS_LEFT_ALONE] = "left-alone",
};

/* One line per want: GUID, port, target, the 16 limits (Mbps), what became of it. */
static void write_dump(const struct sm *sm, const struct fabric *f, const struct vqos_want *w,
		       uint32_t n)
{
	if (!sm->opt->tmp_dir)
		return;
	GString *s = g_string_new(NULL);
	g_string_append_printf(s, "# ibsm enhanced QoS: policy %s, generation %u; per-SL rate limits "
			       "in Mbps (0: unlimited), SL0..SL15\n", sm->eqos_policy->source, sm->generation);
	for (uint32_t i = 0; i < n; i++) {
		const struct ibsm_port *p = &f->ports[w[i].port];
		g_string_append_printf(s, "0x%016" PRIx64 " port %u %s", p->guid, p->num,
				       w[i].mod & VQOS_MOD_VPORT ? "vport0" : "port");
		for (int sl = 0; sl < VQOS_N_SL; sl++)
			g_string_append_printf(s, "%c%u", sl ? ',' : ' ', w[i].rate[sl]);
		g_string_append_printf(s, " %s\n", outcome_name[w[i].outcome]);
	}
	char *path = g_build_filename(sm->opt->tmp_dir, EQOS_DUMP_FILE, NULL);
	GError *err = NULL;
	if (!g_file_set_contents(path, s->str, (gssize)s->len, &err)) {
		LOG_E("EQS-0002", "the enhanced QoS dump is not written: %s", err->message);
		g_clear_error(&err);
	}
	g_free(path);
	g_string_free(s, TRUE);
}

void enhanced_qos_sweep(struct sm *sm, const struct fabric *f)
{
	if (!sm->eqos_policy || !sm->opt->qos || !sm->t || !f)
		return;
	if (!sm->vqos)
		sm->vqos = vqos_memory_new();
	uint32_t n = 0;
	struct vqos_want *w = eqos_wants(sm->eqos_policy, sm->qos_policy, sm->part_policy,
					 sm->opt->enhanced_qos_vport0_unlimit_default_rl, f, &n);
	struct vqos_stats st;
	vqos_program(sm->vqos, sm->t, &sm->stop, f, w, n, &st);
	if (st.sent)
		LOG_I("EQS-0001", "enhanced QoS: %u QoSConfigSL Sets sent (%u taken, %u refused), %u "
		      "unchanged, %u left alone (refused before)", st.sent, st.taken, st.refused,
		      st.unchanged, st.left_alone);
	write_dump(sm, f, w, n);
	g_free(w);
}
