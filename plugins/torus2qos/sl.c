/* SPDX-License-Identifier: BSD-2-Clause */
/* sl.c - what torus-2QoS answers after route(): the path SL (bit d: the shorter way between
 * the two switches' coordinates in ring d crosses its dateline; bit 3: the QoS level asked
 * for) and the SL2VL tables the core programs under -Q (torus-2QoS(8), UNICAST ROUTING):
 *   switch port towards a torus link: VL bit 0 = SL bit (the dimension the output points in),
 *     VL bit 1 = a y-x, z-x or z-y turn (input dimension above the output's), VL bit 2 = SL
 *     bit 3 (VLs 0-3 one QoS level, 4-7 the other);
 *   any other port (CA ports, switch ports to CAs, port 0): VL = SL bit 3.
 * The core fits every VL to the port's OperVLs afterwards (fewer VLs drop the upper bits, as
 * OpenSM's data-VL checks do). Also the warnings of torus-2QoS(8), QUALITY OF SERVICE
 * CONFIGURATION. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy/qos_options.h"
#include "sl.h"

int torus2qos_result_fill(struct torus2qos_result *r, const struct ibsm_fabric *f, const struct torus2qos_topo *t)
{
	r->generation = f->generation;
	memcpy(r->radix, t->radix, sizeof(r->radix));
	memcpy(r->ring, t->ring, sizeof(r->ring));
	r->max_lid = f->max_lid;
	r->n_ports = f->n_ports;
	r->lid_pos = malloc(((size_t)f->max_lid + 1) * sizeof(*r->lid_pos));
	r->port_dir = malloc((size_t)f->n_ports + 1);
	r->root_pos = IBSM_NONE;
	r->root_sw = IBSM_NONE;
	if (!r->lid_pos || !r->port_dir)
		return -1;
	for (uint32_t l = 0; l <= f->max_lid; l++) {
		uint32_t p = f->lid_port ? f->lid_port[l] : IBSM_NONE;
		uint32_t s = p == IBSM_NONE || p >= f->n_ports ? IBSM_NONE : ibsm_port_switch(f, p);
		r->lid_pos[l] = s == IBSM_NONE ? IBSM_NONE : t->pos[s];
	}
	for (uint32_t p = 0; p < f->n_ports; p++) {
		const struct ibsm_node *n = ibsm_node_at(f, ibsm_port_at(f, p)->node);
		r->port_dir[p] = n->type == IBSM_SWITCH ? TORUS2QOS_PORT_SW : TORUS2QOS_PORT_END;
	}
	for (uint32_t s = 0; s < f->n_switches; s++) {
		uint32_t pos = t->pos[s], p0 = ibsm_switch_node(f, s)->port0;
		if (pos == IBSM_NONE)
			continue;
		for (unsigned dir = 0; dir < TORUS2QOS_NDIRS; dir++) {
			size_t at = (size_t)pos * TORUS2QOS_NDIRS + dir;
			for (unsigned k = 0; k < t->nlinks[at]; k++)
				r->port_dir[p0 + t->links[at * t->pgmax + k]] = (uint8_t)dir;
		}
	}
	return 0;
}

void torus2qos_result_free(void *result)
{
	struct torus2qos_result *r = result;
	if (!r)
		return;
	free(r->lid_pos);
	free(r->port_dir);
	free(r->mc_parent);
	free(r->mc_up);
	free(r->mc_down);
	free(r);
}

uint8_t torus2qos_path_sl(const void *result, uint8_t sl_hint, uint16_t slid, uint16_t dlid)
{
	const struct torus2qos_result *r = result;
	uint8_t sl = sl_hint & 0x8;
	if (slid > r->max_lid || dlid > r->max_lid)
		return sl;
	uint32_t a = r->lid_pos[slid], b = r->lid_pos[dlid];
	if (a == IBSM_NONE || b == IBSM_NONE || a == b)
		return sl;
	uint32_t stride = 1;
	for (unsigned d = 0; d < TORUS2QOS_DIMS; d++) {
		unsigned ca = a / stride % r->radix[d], cb = b / stride % r->radix[d];
		if (r->ring[d])
			sl |= (uint8_t)(torus2qos_crosses(ca, cb, r->radix[d]) << d);
		stride *= r->radix[d];
	}
	return sl;
}

int torus2qos_sl2vl(const void *result, uint32_t in_port, uint32_t out_port, uint8_t vl[16])
{
	const struct torus2qos_result *r = result;
	if (in_port >= r->n_ports || out_port >= r->n_ports)
		return -1;
	unsigned od = r->port_dir[out_port], id = r->port_dir[in_port];
	for (unsigned sl = 0; sl < 16; sl++) {
		unsigned qos = sl >> 3;
		if (od < TORUS2QOS_NDIRS) {
			unsigned v = (sl >> (od / 2)) & 1;
			if (id < TORUS2QOS_NDIRS && id / 2 > od / 2)
				v |= 2;
			vl[sl] = (uint8_t)(v | qos << 2);
		} else {
			vl[sl] = (uint8_t)qos;
		}
	}
	return 0;
}

/* Is a VL arbitration table fair for torus-2QoS? Switch external ports carry VLs 0-3 for one
 * QoS level and 4-7 for the other: each VL of a half the same total weight as the others of
 * its half. End ports (CA, router, switch port 0) carry VL 0 and 1 only (the QoS bit): equal
 * weights for the two, none for VLs 2-7. A VL missing counts as weight 0. */
static int fair(const struct qos_vlarb_entry *e, int endport)
{
	unsigned w[16] = { 0 };
	for (unsigned i = 0; i < QOS_VLARB_MAX; i++)
		if (e[i].vl < 16)
			w[e[i].vl] += e[i].weight;
	if (endport) {
		for (unsigned v = 2; v < 8; v++)
			if (w[v])
				return 0;
		return w[0] == w[1];
	}
	for (unsigned h = 0; h < 8; h += 4)
		for (unsigned v = h + 1; v < h + 4; v++)
			if (w[v] != w[h])
				return 0;
	return 1;
}

void torus2qos_qos_warnings(const struct ibsm_core *core)
{
	char *vals[QOS_N_SCOPES][QOS_N_PARAMS];
	for (int s = 0; s < QOS_N_SCOPES; s++)
		for (int p = 0; p < QOS_N_PARAMS; p++) {
			if (p == QOS_P_HIGH_LIMIT) {
				vals[s][p] = NULL;
				continue;
			}
			const char *v = core->config(core, qos_option_key(s, p));
			vals[s][p] = v && *v && strcmp(v, "(null)") && !qos_option_check(p, v, NULL)
					     ? (char *)v : NULL;
		}
	static const struct { enum qos_scope s; const char *name; unsigned need_vls; } types[] = {
		{ QOS_S_CA, "qos_ca", 2 }, { QOS_S_RTR, "qos_rtr", 2 }, { QOS_S_SW0, "qos_sw0", 2 },
		{ QOS_S_SWE, "qos_swe", 8 },
	};
	char unfair[64] = "";
	if (vals[QOS_S_ALL][QOS_P_SL2VL])
		core->log(core, IBSM_LOG_INFO, "warning: qos_sl2vl is ignored: torus-2QoS sets every "
			  "SL2VL table to keep its routes free of credit loops");
	for (unsigned i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		struct qos_port_config cfg;
		qos_config_resolve(vals, types[i].s, &cfg);
		const char *name = types[i].name;
		if (vals[types[i].s][QOS_P_SL2VL])
			core->log(core, IBSM_LOG_INFO, "warning: %s_sl2vl is ignored: torus-2QoS sets "
				  "every SL2VL table to keep its routes free of credit loops", name);
		if (cfg.max_vls < types[i].need_vls)
			core->log(core, IBSM_LOG_INFO, "warning: %s max_vls %u: full torus-2QoS needs "
				  "%u data VLs", name, cfg.max_vls, types[i].need_vls);
		int ep = types[i].s != QOS_S_SWE;
		if (!fair(cfg.high, ep) || !fair(cfg.low, ep))
			snprintf(unfair + strlen(unfair), sizeof(unfair) - strlen(unfair), "%s%s",
				 *unfair ? ", " : "", name + 4);
	}
	if (*unfair)
		core->log(core, IBSM_LOG_INFO, "warning: VL arbitration of %s ports does not suit "
			  "torus-2QoS (switch links: each of VLs 0-3 and each of VLs 4-7 the same "
			  "weight; end ports: VLs 0 and 1 the same, 2-7 none, in qos_*vlarb_high and "
			  "_low): paths would not get equal service", unfair);
}
