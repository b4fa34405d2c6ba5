/* SPDX-License-Identifier: BSD-2-Clause */
/* report_quality.c - the numbers the fabric report judges routes by: the routes between CA
 * ports counted on every directed switch-to-switch link (one pass per destination along the
 * forwarding forest its LFT entries make), the worst of up to 16 shift permutations, and the
 * credit-loop check of routing/deadlock.h with the engines' SLs and SL2VL tables. */
#include <string.h>
#include "ops/report.h"
#include "routing/deadlock.h"

/* A CA or router port with a link and a LID: a source and destination of data traffic. */
static int is_ca_port(const struct ibsm_fabric *f, uint32_t p)
{
	const struct ibsm_port *pt = ibsm_port_at(f, p);
	const struct ibsm_node *n = ibsm_node_at(f, pt->node);
	return n->type != IBSM_SWITCH && pt->num != 0 && pt->peer != IBSM_NONE;
}

/* The switch link port sw leaves by for lid, as a port id, or IBSM_NONE when the entry
 * leads nowhere or out of the switch fabric; *out gets the entry. */
static uint32_t next_switch(const struct ibsm_fabric *f, const uint8_t *lft, uint32_t stride,
			    uint32_t sw, uint16_t lid, uint8_t *out)
{
	const struct ibsm_node *n = ibsm_switch_node(f, sw);
	uint8_t o = lft[(size_t)sw * stride + lid];
	*out = o;
	if (o == IBSM_NO_PORT || o == 0 || o > n->nports)
		return IBSM_NONE;
	uint32_t peer = ibsm_port_at(f, n->port0 + o)->peer;
	if (peer == IBSM_NONE)
		return IBSM_NONE;
	const struct ibsm_node *pn = ibsm_node_at(f, ibsm_port_at(f, peer)->node);
	return pn->type == IBSM_SWITCH ? pn->sw : IBSM_NONE;
}

void report_link_load(const struct fabric *fab, const uint8_t *lft, uint32_t stride, uint32_t *load,
		      struct report_quality *q)
{
	const struct ibsm_fabric *f = &fab->pub;
	uint32_t S = f->n_switches;
	uint32_t *own = NULL;
	if (!load)
		load = own = g_new0(uint32_t, f->n_ports ? f->n_ports : 1);
	else
		memset(load, 0, (size_t)f->n_ports * sizeof(*load));
	q->links = f->n_adj;
	q->ca_ports = 0;
	q->routes = q->unrouted = 0;
	q->max_load = 0;
	q->mean_load = 0;
	/* sources per switch */
	uint32_t *hosts = g_new0(uint32_t, S + 1);
	for (uint32_t p = 0; p < f->n_ports; p++) {
		if (!is_ca_port(f, p) || !ibsm_port_at(f, p)->lid)
			continue;
		q->ca_ports++;
		uint32_t sw = ibsm_port_switch(f, p);
		if (sw != IBSM_NONE)
			hosts[sw]++;
	}
	uint32_t *carried = g_new(uint32_t, S + 1), *toward = g_new(uint32_t, S + 1);
	uint32_t *waiting = g_new(uint32_t, S + 1), *ready = g_new(uint32_t, S + 1);
	uint8_t *entry = g_new(uint8_t, S + 1);
	for (uint32_t dst = 0; dst < f->n_ports; dst++) {
		const struct ibsm_port *dp = ibsm_port_at(f, dst);
		if (!is_ca_port(f, dst) || !dp->lid || dp->lid >= stride)
			continue;
		uint32_t dsw = ibsm_port_switch(f, dst);
		uint64_t sources = q->ca_ports - 1;
		q->routes += sources;
		if (dsw == IBSM_NONE) {       /* CA to CA back to back: no switch routes */
			q->unrouted += sources;
			continue;
		}
		/* each switch hands what reaches it (its own hosts and what flows in) to the
		 * switch its entry leads to; a switch is done once all its inflows are */
		for (uint32_t s = 0; s < S; s++) {
			carried[s] = hosts[s] - (s == dsw);
			waiting[s] = 0;
		}
		for (uint32_t s = 0; s < S; s++) {
			toward[s] = next_switch(f, lft, stride, s, dp->lid, &entry[s]);
			if (toward[s] != IBSM_NONE)
				waiting[toward[s]]++;
		}
		uint32_t head = 0, tail = 0;
		for (uint32_t s = 0; s < S; s++)
			if (!waiting[s])
				ready[tail++] = s;
		while (head < tail) {
			uint32_t s = ready[head++], t = toward[s];
			if (t == IBSM_NONE)
				continue;
			load[ibsm_switch_node(f, s)->port0 + entry[s]] += carried[s];
			carried[t] += carried[s];
			if (--waiting[t] == 0)
				ready[tail++] = t;
		}
		/* delivered: what reached the destination's switch, if its entry leads to it */
		uint64_t delivered = 0;
		if (entry[dsw] == ibsm_port_at(f, dp->peer)->num)
			delivered = carried[dsw];
		q->unrouted += sources > delivered ? sources - delivered : 0;
	}
	uint64_t sum = 0;
	for (uint32_t s = 0; s < S; s++) {
		const struct ibsm_switch *sw = ibsm_switch_at(f, s);
		uint32_t p0 = ibsm_node_at(f, sw->node)->port0;
		for (uint32_t a = sw->adj0; a < sw->adj0 + sw->nadj; a++) {
			uint32_t v = load[p0 + ibsm_adj_at(f, a)->port];
			sum += v;
			if (v > q->max_load)
				q->max_load = v;
		}
	}
	q->mean_load = q->links ? (double)sum / q->links : 0;
	g_free(hosts);
	g_free(carried);
	g_free(toward);
	g_free(waiting);
	g_free(ready);
	g_free(entry);
	g_free(own);
}

/* Shift permutations: the most loaded link of each, the worst kept. */
static void shifts(const struct fabric *fab, const uint8_t *lft, uint32_t stride,
		   struct report_quality *q)
{
	const struct ibsm_fabric *f = &fab->pub;
	GArray *cas = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	for (uint32_t p = 0; p < f->n_ports; p++)   /* port ids are in GUID order */
		if (is_ca_port(f, p) && ibsm_port_at(f, p)->lid && ibsm_port_at(f, p)->lid < stride)
			g_array_append_val(cas, p);
	uint32_t n = cas->len;
	q->shifts = q->worst_shift = q->worst_shift_load = 0;
	if (n < 2) {
		g_array_free(cas, TRUE);
		return;
	}
	uint32_t *load = g_new(uint32_t, f->n_ports);
	uint32_t count = n - 1 < REPORT_SHIFTS ? n - 1 : REPORT_SHIFTS;
	for (uint32_t j = 0; j < count; j++) {
		uint32_t k = count == n - 1 ? j + 1 : 1 + (uint32_t)((uint64_t)j * (n - 2) / (count - 1));
		memset(load, 0, (size_t)f->n_ports * sizeof(*load));
		uint32_t mx = 0;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t src = g_array_index(cas, uint32_t, i);
			uint32_t dst = g_array_index(cas, uint32_t, (i + k) % n);
			uint16_t lid = ibsm_port_at(f, dst)->lid;
			uint32_t s = ibsm_port_switch(f, src);
			for (unsigned hop = 0; s != IBSM_NONE && hop < 64; hop++) {
				uint8_t e;
				uint32_t t = next_switch(f, lft, stride, s, lid, &e);
				if (t == IBSM_NONE)
					break;
				uint32_t lp = ibsm_switch_node(f, s)->port0 + e;
				if (++load[lp] > mx)
					mx = load[lp];
				s = t;
			}
		}
		q->shift_k[q->shifts] = k;
		q->shift_load[q->shifts] = mx;
		q->shifts++;
		if (mx > q->worst_shift_load || !q->worst_shift) {
			q->worst_shift_load = mx;
			q->worst_shift = k;
		}
	}
	g_free(load);
	g_array_free(cas, TRUE);
}

static uint8_t check_path_sl(const void *ctx, uint16_t slid, uint16_t dlid)
{
	return routing_path_sl(ctx, 0, slid, dlid);
}

static int check_sl2vl(const void *ctx, uint32_t in_port, uint32_t out_port, uint8_t vl[16])
{
	return routing_sl2vl(ctx, in_port, out_port, vl);
}

void report_quality(const struct routing_result *r, uint32_t *load, struct report_quality *q)
{
	memset(q, 0, sizeof(*q));
	report_link_load(r->f, r->lft, r->stride, load, q);
	shifts(r->f, r->lft, r->stride, q);
	struct deadlock_report dr;
	memset(&dr, 0, sizeof(dr));
	q->loop_channels = deadlock_check_flags(r->f, r->lft, r->stride, check_path_sl, check_sl2vl,
						r, DEADLOCK_CA_ROUTES, &dr);
	q->checked = 1;
	q->vl_mask = dr.vl_mask;
	for (unsigned v = 0; v < 16; v++)
		q->vls += !!(dr.vl_mask & (1u << v));
	g_strlcpy(q->cycle, dr.cycle, sizeof(q->cycle));
}
