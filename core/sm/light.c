/* SPDX-License-Identifier: BSD-2-Clause */
/* light.c - the light sweep: every switch's SwitchInfo.PortStateChange and our own port's
 * state, so a link change whose trap was lost is still noticed within a sweep interval; and a
 * rotating check of the linked ports' PortInfo against the last generation, so a change made
 * by a PortInfo Set from another program (which raises no PortStateChange) is noticed too. */
#include <inttypes.h>
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric/dr.h"
#include "sm/light.h"
#include "sm/sweep.h"

#define LIGHT_LOG_MAX 8 /* LSW-0002 lines per light sweep */
#define LIGHT_PSC_MAX 64 /* switches with PortStateChange a repair reads first; more: heavy */

enum { L_SWITCHINFO, L_OUR_PORT, L_PORT };

struct port_seen {
	uint32_t port;
	uint8_t pi[SMP_DATA_SIZE];
};

struct light {
	const struct fabric *f;
	uint32_t changed, failed;     /* PortStateChange / our port; switches not answering */
	uint32_t ports_read, ports_changed, ports_failed;
	GArray *seen;                 /* struct port_seen: switch ports whose reading replaces f's */
	uint32_t psc_switches[LIGHT_PSC_MAX]; /* switch ids that showed PortStateChange */
	uint32_t n_psc;
};

static const char *phys_name(unsigned s)
{
	static const char *const names[] = { "NoChange", "Sleep", "Polling", "Disabled",
					     "PortConfigurationTraining", "LinkUp", "LinkErrorRecovery",
					     "PhyTest" };
	return s < G_N_ELEMENTS(names) ? names[s] : "?";
}

static const char *state_name(unsigned s)
{
	static const char *const names[] = { "NoChange", "DOWN", "INIT", "ARMED", "ACTIVE" };
	return s < G_N_ELEMENTS(names) ? names[s] : "?";
}

/* Is port id p of f one the port check reads: switch port 0, or a switch, CA or router port
 * the generation has linked, read and present (not our own port: checked on its own)? */
static int watched(const struct fabric *f, uint32_t p)
{
	const struct ibsm_port *port = &f->ports[p];
	if (p == f->pub.sm_port || !(port->flags & IBSM_PORT_PRESENT) || !f->px[p].have_portinfo)
		return 0;
	if (f->nodes[port->node].type == IBSM_SWITCH && port->num == 0)
		return 1;
	return port->peer != IBSM_NONE;
}

/* What differs between port p's PortInfo `pi` and what f holds for it, as text (empty: the
 * same). A linked port must still be LinkUp and in at least the state f has; an end port must
 * hold the LID and LMC f gave it. */
static void port_diff(const struct fabric *f, uint32_t p, const uint8_t *pi, char *out, size_t len)
{
	const struct ibsm_port *port = &f->ports[p];
	int sw_port0 = f->nodes[port->node].type == IBSM_SWITCH && port->num == 0;
	int end_port = f->nodes[port->node].type != IBSM_SWITCH || sw_port0;
	unsigned phys = mad_get_field((void *)pi, 0, IB_PORT_PHYS_STATE_F);
	unsigned state = mad_get_field((void *)pi, 0, IB_PORT_STATE_F);
	unsigned lid = mad_get_field((void *)pi, 0, IB_PORT_LID_F);
	unsigned lmc = mad_get_field((void *)pi, 0, IB_PORT_LMC_F);
	GString *s = g_string_new(NULL);
	if (!sw_port0) {
		if (phys != IB_PHYS_LINKUP && f->px[p].phys_state == IB_PHYS_LINKUP)
			g_string_append_printf(s, ", PortPhysicalState LinkUp -> %s", phys_name(phys));
		if (state < port->state)
			g_string_append_printf(s, ", PortState %s -> %s", state_name(port->state),
					       state_name(state));
	}
	if (end_port && port->lid && lid != port->lid)
		g_string_append_printf(s, ", LID %u, not the %u this SM gave it", lid, port->lid);
	if (end_port && port->lid && lmc != port->lmc)
		g_string_append_printf(s, ", LMC %u, not %u", lmc, port->lmc);
	g_strlcpy(out, s->len ? s->str + 2 : "", len);
	g_string_free(s, TRUE);
}

static void on_reply(struct transport *t, const struct smp_req *r, int status,
		     const uint8_t *data, void *ctx)
{
	(void)t;
	struct light *l = ctx;
	int kind = smp_cookie_kind(r->cookie);
	if (kind == L_PORT) {
		/* a read that failed is not a change: the port is read again next cycle */
		if (status != 0) {
			l->ports_failed++;
			return;
		}
		uint32_t p = smp_cookie_id(r->cookie);
		char what[256];
		port_diff(l->f, p, data, what, sizeof(what));
		if (!what[0])
			return;
		const struct ibsm_port *port = &l->f->ports[p];
		const struct ibsm_node *n = &l->f->nodes[port->node];
		if (l->ports_changed++ < LIGHT_LOG_MAX)
			LOG_I("LSW-0002", "port %u of %s 0x%016" PRIx64 " (%s) changed behind this SM's "
			      "back (no PortStateChange): %s", port->num, n->type == IBSM_SWITCH ? "switch" :
			      "node", n->guid, n->desc, what);
		if (n->type == IBSM_SWITCH && port->num) {
			struct port_seen ps = { .port = p };
			memcpy(ps.pi, data, SMP_DATA_SIZE);
			g_array_append_val(l->seen, ps);
		}
		return;
	}
	if (status != 0)
		l->failed++;
	else if (kind == L_SWITCHINFO && mad_get_field((void *)data, 0, IB_SW_STATE_CHANGE_F)) {
		l->changed++;
		l->psc_switches[l->n_psc < LIGHT_PSC_MAX ? l->n_psc : LIGHT_PSC_MAX - 1] =
			smp_cookie_id(r->cookie);
		l->n_psc++;
	}
	else if (kind == L_OUR_PORT && mad_get_field((void *)data, 0, IB_PORT_STATE_F) != IBSM_STATE_ACTIVE)
		l->changed++;
}

/* The next slice of the port check from ls->next on (every watched port without ls). */
static void check_ports(struct sm *sm, struct light *l, struct light_state *ls)
{
	const struct fabric *f = l->f;
	uint32_t n = f->pub.n_ports, watch = 0;
	for (uint32_t p = 0; p < n; p++)
		watch += (uint32_t)watched(f, p);
	uint32_t budget = !ls || watch <= LIGHT_PORTS_MIN ? watch :
			  MAX(LIGHT_PORTS_MIN, (watch + LIGHT_CYCLE - 1) / LIGHT_CYCLE);
	uint32_t p = ls && ls->next < n ? ls->next : 0;
	for (uint32_t seen = 0; seen < n && l->ports_read < budget; seen++, p = p + 1 < n ? p + 1 : 0) {
		if (!watched(f, p))
			continue;
		struct smp_req r;
		if (fabric_smp_to_port(&r, f, p, IB_MAD_METHOD_GET, IB_ATTR_PORT_INFO, f->ports[p].num,
				       on_reply, l, smp_cookie(L_PORT, p, 0)) < 0)
			continue;
		transport_submit(sm->t, &r);
		l->ports_read++;
	}
	if (ls)
		ls->next = p;
}

/* Switch ports read changed: the generation takes the reading (the next heavy sweep reuses a
 * quiet switch's ports from it), once the dump thread no longer reads the generation. */
static void take_readings(struct sm *sm, struct light *l)
{
	if (!l->seen->len)
		return;
	sweep_join_dumps(sm);
	struct fabric *f = sm->fabric;
	for (guint i = 0; i < l->seen->len; i++) {
		const struct port_seen *ps = &g_array_index(l->seen, struct port_seen, i);
		memcpy(f->px[ps->port].portinfo, ps->pi, SMP_DATA_SIZE);
		f->px[ps->port].phys_state = (uint8_t)mad_get_field((void *)ps->pi, 0, IB_PORT_PHYS_STATE_F);
		f->ports[ps->port].state = (uint8_t)mad_get_field((void *)ps->pi, 0, IB_PORT_STATE_F);
	}
}

/* What a repair needs (sm/repair.h): the switches that showed PortStateChange, as traps 128 of
 * their port 0 LIDs would; anything else seen (a switch not answering, our own port, a port
 * changed behind our back, too many switches) asks for a heavy sweep. */
static void note_changes(struct sm *sm, const struct light *l)
{
	if (!l->changed && !l->failed && !l->ports_changed)
		return;
	if (l->failed || l->ports_changed || l->n_psc != l->changed || l->n_psc > LIGHT_PSC_MAX) {
		sm->trap_full = 1;
		return;
	}
	if (!sm->trap_lids)
		sm->trap_lids = g_array_new(FALSE, FALSE, sizeof(struct trap_lid));
	for (uint32_t i = 0; i < l->n_psc; i++) {
		const struct fabric *f = l->f;
		struct trap_lid e = { .lid = f->ports[f->nodes[f->switches[l->psc_switches[i]].node].port0].lid,
				      .seq = ++sm->trap_seq };
		g_array_append_val(sm->trap_lids, e);
	}
}

int light_sweep(struct sm *sm, struct light_state *ls)
{
	struct fabric *f = sm->fabric;
	if (!f)
		return 1;
	struct light l = { .f = f, .seen = g_array_new(FALSE, FALSE, sizeof(struct port_seen)) };
	struct smp_req r;
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		fabric_smp_to_node(&r, f, f->switches[s].node, IB_MAD_METHOD_GET, IB_ATTR_SWITCH_INFO, 0,
				   on_reply, &l, smp_cookie(L_SWITCHINFO, s, 0));
		transport_submit(sm->t, &r);
	}
	if (f->pub.sm_port != IBSM_NONE) {
		const struct ibsm_port *p = &f->ports[f->pub.sm_port];
		fabric_smp_to_node(&r, f, p->node, IB_MAD_METHOD_GET, IB_ATTR_PORT_INFO, p->num, on_reply,
				   &l, smp_cookie(L_OUR_PORT, 0, 0));
		transport_submit(sm->t, &r);
	}
	check_ports(sm, &l, ls);
	transport_drain(sm->t, &sm->stop);
	take_readings(sm, &l);
	g_array_free(l.seen, TRUE);
	note_changes(sm, &l);
	if (l.changed || l.failed || l.ports_changed)
		LOG_I("LSW-0001", "light sweep: %u port state changes, %u switches not answering, %u of %u "
		      "ports read changed behind this SM's back (%u reads failed): heavy sweep", l.changed,
		      l.failed, l.ports_changed, l.ports_read, l.ports_failed);
	return l.changed || l.failed || l.ports_changed;
}
