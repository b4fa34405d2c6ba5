/* SPDX-License-Identifier: BSD-2-Clause */
/* report.c - the fabric report as one HTML document: a summary, the topology drawn in inline
 * SVG with every switch-to-switch link coloured by the routes it carries (a summary by tier on
 * fabrics above max_switches_drawn switches), the routing quality table, the most loaded
 * links, partitions, multicast groups and the performance manager's error counters. Plain
 * HTML and CSS: it opens anywhere, offline, without script. Element ids and classes are what
 * tests and scripts read (doc/report.md). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "ops/report.h"
#include "perfmgr/perfmgr.h"
#include "policy/partitions.h"
#include "sa/mcast_groups.h"

/* Text escaped for HTML content and attribute values. */
static void put_text(GString *o, const char *s)
{
	/* NodeDescriptions are bytes off the wire: made valid UTF-8 first */
	char *v = g_utf8_make_valid(s ? s : "", -1);
	char *e = g_markup_escape_text(v, -1);
	g_string_append(o, e);
	g_free(e);
	g_free(v);
}

/* Heat colour of load against max: grey when nothing, green to red. */
static void put_heat(GString *o, uint32_t load, uint32_t max)
{
	if (!load || !max) {
		g_string_append(o, "#c8c8c8");
		return;
	}
	double x = (double)load / max;
	g_string_append_printf(o, "hsl(%d,85%%,%d%%)", (int)(120.0 * (1.0 - x)), 45 - (int)(10 * x));
}

static const char STYLE[] =
	"body{font-family:sans-serif;margin:1.5em;color:#222;background:#fff}"
	"h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}"
	"table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;"
	"text-align:left;font-size:.9em}th{background:#f0f0f0}td.n{text-align:right}"
	"svg{border:1px solid #ddd;background:#fafafa}"
	".sw rect{fill:#e8eef8;stroke:#3a5a8c;stroke-width:1}.sw text{font-size:9px;"
	"text-anchor:middle;fill:#123}.link{stroke-width:3;stroke-linecap:round}"
	".legend span{display:inline-block;width:2.2em;height:.8em;margin-right:2px}"
	".bad{color:#b00;font-weight:bold}.good{color:#070}";

/* ---- summary ----------------------------------------------------------------------------- */

static void summary(GString *o, const struct report_inputs *in, const struct report_data *d)
{
	const struct ibsm_fabric *f = &d->f->pub;
	uint32_t cas = 0, routers = 0, links = 0;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		uint8_t t = ibsm_node_at(f, n)->type;
		cas += t == IBSM_CA;
		routers += t == IBSM_ROUTER;
	}
	for (uint32_t p = 0; p < f->n_ports; p++) {
		const struct ibsm_port *pt = ibsm_port_at(f, p);
		if (pt->peer != IBSM_NONE && p < pt->peer)
			links++;
	}
	g_string_append(o, "<section id=\"summary\"><h2>Summary</h2><table id=\"summary-table\">");
	if (in->sm_state) {
		g_string_append(o, "<tr><th>SM state</th><td id=\"s-state\">");
		put_text(o, in->sm_state);
		g_string_append_printf(o, "%s</td></tr>", in->subnet_up ? " (SUBNET UP)" : "");
		g_string_append_printf(o, "<tr><th>SM port GUID</th><td>0x%016" G_GINT64_MODIFIER "x</td></tr>",
				       in->sm_guid);
	}
	g_string_append_printf(o,
		"<tr><th>generation</th><td class=\"n\" id=\"s-generation\">%u</td></tr>"
		"<tr><th>switches</th><td class=\"n\" id=\"s-switches\">%u</td></tr>"
		"<tr><th>CAs</th><td class=\"n\" id=\"s-cas\">%u</td></tr>"
		"<tr><th>routers</th><td class=\"n\" id=\"s-routers\">%u</td></tr>"
		"<tr><th>links</th><td class=\"n\" id=\"s-links\">%u</td></tr>"
		"<tr><th>switch-to-switch links</th><td class=\"n\" id=\"s-switch-links\">%u</td></tr>"
		"<tr><th>LMC</th><td class=\"n\">%u</td></tr><tr><th>max LID</th><td class=\"n\">%u</td></tr>",
		f->generation, f->n_switches, cas, routers, links, f->n_adj / 2, f->lmc, f->max_lid);
	if (d->r) {
		g_string_append(o, "<tr><th>routing engine</th><td id=\"s-engine\">");
		put_text(o, d->r->engine);
		g_string_append_printf(o, "</td></tr><tr><th>routing time</th><td class=\"n\">%.3f s</td></tr>",
				       d->r->seconds);
	}
	g_string_append_printf(o, "<tr><th>report computed in</th><td class=\"n\">%.3f s</td></tr>",
			       d->seconds);
	g_string_append(o, "</table></section>\n");
}

/* ---- topology ---------------------------------------------------------------------------- */

static uint32_t hosts_of(const struct ibsm_fabric *f, uint32_t sw)
{
	const struct ibsm_node *n = ibsm_switch_node(f, sw);
	uint32_t h = 0;
	for (uint8_t p = 1; p <= n->nports; p++) {
		uint32_t peer = ibsm_port_at(f, n->port0 + p)->peer;
		if (peer != IBSM_NONE && ibsm_node_at(f, ibsm_port_at(f, peer)->node)->type != IBSM_SWITCH)
			h++;
	}
	return h;
}

/* One line per physical link (both directions' loads in its title, coloured by the larger);
 * parallel links side by side. */
static void draw_links(GString *o, const struct ibsm_fabric *f, const struct report_layout *l,
		       const uint32_t *load, uint32_t max)
{
	g_string_append(o, "<g class=\"links\">");
	for (uint32_t s = 0; s < f->n_switches; s++) {
		const struct ibsm_switch *sw = ibsm_switch_at(f, s);
		uint32_t p0 = ibsm_node_at(f, sw->node)->port0;
		for (uint32_t i = 0; i < sw->nadj; i++) {
			const struct ibsm_adj *a = ibsm_adj_at(f, sw->adj0 + i);
			uint32_t t = a->peer_sw;
			if (t < s || (t == s && a->peer_port < a->port))
				continue;   /* drawn from the other end */
			uint32_t q0 = ibsm_switch_node(f, t)->port0;
			uint32_t ab = load ? load[p0 + a->port] : 0, ba = load ? load[q0 + a->peer_port] : 0;
			/* parallel links: the how-many-th between these two */
			unsigned nth = 0, all = 0;
			for (uint32_t j = 0; j < sw->nadj; j++) {
				const struct ibsm_adj *b = ibsm_adj_at(f, sw->adj0 + j);
				if (b->peer_sw == t) {
					nth += j < i;
					all++;
				}
			}
			double off = ((double)nth - (all - 1) / 2.0) * 5;
			double x1 = l->x[s] + off, y1 = l->y[s], x2 = l->x[t] + off, y2 = l->y[t];
			/* a torus's wrap-around link (more than one cell apart): an arc bowing out
			 * above its row or left of its column */
			int wraps = l->grid && (fabs(x1 - x2) > 1.5 * l->cell_w || fabs(y1 - y2) > 1.5 * l->cell_h);
			g_string_append_printf(o, "<%s class=\"link%s\" data-a=\"0x%016" G_GINT64_MODIFIER "x\" "
					       "data-a-port=\"%u\" data-b=\"0x%016" G_GINT64_MODIFIER "x\" "
					       "data-b-port=\"%u\" data-load-ab=\"%u\" data-load-ba=\"%u\" ",
					       wraps ? "path" : "line", wraps ? " wrap" : "", ibsm_switch_node(f, s)->guid,
					       a->port, ibsm_switch_node(f, t)->guid, a->peer_port, ab, ba);
			if (wraps) {
				double bx = fabs(y1 - y2) > fabs(x1 - x2) ? -0.45 * l->cell_w : 0;
				double by = bx ? 0 : -0.45 * l->cell_h;
				g_string_append_printf(o, "fill=\"none\" d=\"M%.1f %.1fC%.1f %.1f %.1f %.1f %.1f %.1f\" "
						       "stroke=\"", x1, y1, x1 + bx, y1 + by, x2 + bx, y2 + by, x2, y2);
			} else
				g_string_append_printf(o, "x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"",
						       x1, y1, x2, y2);
			put_heat(o, MAX(ab, ba), max);
			g_string_append(o, "\"><title>");
			put_text(o, ibsm_switch_node(f, s)->desc);
			g_string_append_printf(o, " port %u -&gt; ", a->port);
			put_text(o, ibsm_switch_node(f, t)->desc);
			g_string_append_printf(o, " port %u: %u routes; back: %u routes</title></%s>\n",
					       a->peer_port, ab, ba, wraps ? "path" : "line");
		}
	}
	g_string_append(o, "</g>");
}

static void draw_switches(GString *o, const struct ibsm_fabric *f, const struct report_layout *l)
{
	g_string_append(o, "<g class=\"switches\">");
	for (uint32_t s = 0; s < f->n_switches; s++) {
		const struct ibsm_node *n = ibsm_switch_node(f, s);
		uint16_t lid = ibsm_port_at(f, n->port0)->lid;
		char label[48];
		char *valid = g_utf8_make_valid(n->desc, -1);
		g_utf8_strncpy(label, valid, 11);      /* 11 characters fit the box */
		g_free(valid);
		g_string_append_printf(o, "<g class=\"sw\" data-guid=\"0x%016" G_GINT64_MODIFIER "x\" "
				       "data-lid=\"%u\" data-tier=\"%u\"><rect x=\"%.1f\" y=\"%.1f\" "
				       "width=\"64\" height=\"24\" rx=\"3\"/><text x=\"%.1f\" y=\"%.1f\">",
				       n->guid, lid, l->tier[s], l->x[s] - 32, l->y[s] - 12, l->x[s], l->y[s] - 2);
		put_text(o, label);
		g_string_append_printf(o, "</text><text x=\"%.1f\" y=\"%.1f\">LID %u, %u hosts</text><title>",
				       l->x[s], l->y[s] + 9, lid, hosts_of(f, s));
		put_text(o, n->desc);
		g_string_append_printf(o, " (0x%016" G_GINT64_MODIFIER "x, LID %u, %u ports, %u hosts)"
				       "</title></g>\n", n->guid, lid, n->nports, hosts_of(f, s));
	}
	g_string_append(o, "</g>");
}

static void legend(GString *o, uint32_t max)
{
	g_string_append(o, "<p class=\"legend\">routes per link: <span style=\"background:");
	put_heat(o, 0, max);
	g_string_append(o, "\"></span>0 ");
	for (int i = 1; i <= 4; i++) {
		uint32_t v = (uint32_t)((uint64_t)max * (unsigned)i / 4);
		if (!v)
			continue;
		g_string_append(o, "<span style=\"background:");
		put_heat(o, v, max);
		g_string_append_printf(o, "\"></span>%u ", v);
	}
	g_string_append(o, "</p>");
}

/* Big fabrics: per tier, its switches and the load of the links going up from it; and a
 * histogram of the link loads. */
static void tier_summary(GString *o, const struct ibsm_fabric *f, const struct report_layout *l,
			 const uint32_t *load, uint32_t max)
{
	g_string_append_printf(o, "<p id=\"topology-summary\">%u switches: more than can be drawn "
			       "one by one; by tier instead.</p><table id=\"tier-table\"><tr><th>tier</th>"
			       "<th>switches</th><th>links to the tier above</th><th>max routes up</th>"
			       "<th>max routes down</th></tr>", f->n_switches);
	for (uint32_t t = 0; t < l->n_tiers; t++) {
		uint32_t n = 0, up = 0, mu = 0, md = 0;
		for (uint32_t s = 0; s < f->n_switches; s++) {
			if (l->tier[s] != t)
				continue;
			n++;
			const struct ibsm_switch *sw = ibsm_switch_at(f, s);
			uint32_t p0 = ibsm_node_at(f, sw->node)->port0;
			for (uint32_t i = 0; i < sw->nadj; i++) {
				const struct ibsm_adj *a = ibsm_adj_at(f, sw->adj0 + i);
				if (l->tier[a->peer_sw] != t + 1)
					continue;
				up++;
				uint32_t q0 = ibsm_switch_node(f, a->peer_sw)->port0;
				mu = MAX(mu, load ? load[p0 + a->port] : 0);
				md = MAX(md, load ? load[q0 + a->peer_port] : 0);
			}
		}
		g_string_append_printf(o, "<tr class=\"tier\"><td class=\"n\">%u</td><td class=\"n\">%u</td>"
				       "<td class=\"n\">%u</td><td class=\"n\">%u</td><td class=\"n\">%u"
				       "</td></tr>", t, n, up, mu, md);
	}
	g_string_append(o, "</table>");
	/* histogram: 20 bins of load */
	enum { BINS = 20 };
	uint32_t bin[BINS] = { 0 }, top = 1;
	for (uint32_t s = 0; load && s < f->n_switches; s++) {
		const struct ibsm_switch *sw = ibsm_switch_at(f, s);
		uint32_t p0 = ibsm_node_at(f, sw->node)->port0;
		for (uint32_t i = 0; i < sw->nadj; i++) {
			uint32_t v = load[p0 + ibsm_adj_at(f, sw->adj0 + i)->port];
			unsigned b = max ? (unsigned)((uint64_t)v * (BINS - 1) / max) : 0;
			top = MAX(top, ++bin[b]);
		}
	}
	g_string_append(o, "<svg id=\"load-histogram\" width=\"640\" height=\"180\" "
			"viewBox=\"0 0 640 180\" xmlns=\"http://www.w3.org/2000/svg\">");
	for (unsigned b = 0; b < BINS; b++) {
		double h = 150.0 * bin[b] / top;
		g_string_append_printf(o, "<rect class=\"bin\" x=\"%u\" y=\"%.1f\" width=\"28\" height=\"%.1f\" "
				       "fill=\"", 10 + b * 31, 160 - h, h);
		put_heat(o, (uint32_t)((uint64_t)max * b / (BINS - 1)), max);
		g_string_append_printf(o, "\"><title>%u links</title></rect>", bin[b]);
	}
	g_string_append_printf(o, "<text x=\"10\" y=\"175\" font-size=\"10\">0</text><text x=\"600\" "
			       "y=\"175\" font-size=\"10\">%u routes</text></svg>", max);
}

static void topology(GString *o, const struct report_inputs *in, const struct report_data *d)
{
	const struct ibsm_fabric *f = &d->f->pub;
	const struct report_layout *l = &d->layout;
	const uint32_t *load = d->load;
	uint32_t max = d->q.max_load;
	uint32_t limit = in->max_switches_drawn ? in->max_switches_drawn : REPORT_MAX_SWITCHES_DRAWN;
	g_string_append(o, "<section id=\"topology\"><h2>Topology and routed load</h2>");
	if (l->grid)
		g_string_append_printf(o, "<p id=\"layout\" data-layout=\"grid\">%s %u x %u x %u "
				       "(switches drawn by their coordinates; z slices side by side)</p>",
				       l->wrap[0] || l->wrap[1] || l->wrap[2] ? "torus" : "mesh",
				       l->dims[0], l->dims[1], l->dims[2]);
	else
		g_string_append_printf(o, "<p id=\"layout\" data-layout=\"tiers\">%u tiers by hops from the "
				       "switches with CAs (tier 0 at the bottom)</p>", l->n_tiers);
	if (f->n_switches > limit) {
		tier_summary(o, f, l, load, max);
	} else if (f->n_switches) {
		g_string_append_printf(o, "<svg id=\"topo\" xmlns=\"http://www.w3.org/2000/svg\" "
				       "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n",
				       l->width, l->height, l->width, l->height);
		draw_links(o, f, l, load, max);
		draw_switches(o, f, l);
		g_string_append(o, "</svg>");
		legend(o, max);
	} else
		g_string_append(o, "<p>No switches.</p>");
	g_string_append(o, "</section>\n");
}

/* ---- quality ------------------------------------------------------------------------------- */

static void quality(GString *o, const struct report_quality *q)
{
	g_string_append(o, "<section id=\"quality\"><h2>Routing quality</h2><table id=\"quality-table\">");
	g_string_append_printf(o,
		"<tr><th>CA ports</th><td class=\"n\" id=\"q-ca-ports\">%u</td></tr>"
		"<tr><th>CA-to-CA routes</th><td class=\"n\" id=\"q-routes\">%" G_GUINT64_FORMAT "</td></tr>"
		"<tr><th>routes not delivered</th><td class=\"n%s\" id=\"q-unrouted\">%" G_GUINT64_FORMAT "</td></tr>"
		"<tr><th>directed switch-to-switch links</th><td class=\"n\" id=\"q-links\">%u</td></tr>"
		"<tr><th>max link load (routes)</th><td class=\"n\" id=\"q-max-load\">%u</td></tr>"
		"<tr><th>mean link load (routes)</th><td class=\"n\" id=\"q-mean-load\">%.2f</td></tr>"
		"<tr><th>max / mean</th><td class=\"n\" id=\"q-ratio\">%.2f</td></tr>",
		q->ca_ports, q->routes, q->unrouted ? " bad" : "", q->unrouted, q->links, q->max_load,
		q->mean_load, q->mean_load > 0 ? q->max_load / q->mean_load : 0);
	g_string_append_printf(o,
		"<tr><th>shift permutations tried</th><td class=\"n\" id=\"q-shifts\">%u</td></tr>"
		"<tr><th>worst shift (k)</th><td class=\"n\" id=\"q-worst-shift\">%u</td></tr>"
		"<tr><th>worst shift's max link load</th><td class=\"n\" id=\"q-worst-shift-load\">%u</td></tr>",
		q->shifts, q->worst_shift, q->worst_shift_load);
	g_string_append(o, "<tr><th>each shift: k (max link load)</th><td id=\"q-shift-list\">");
	for (uint32_t i = 0; i < q->shifts; i++)
		g_string_append_printf(o, "%s%u (%u)", i ? ", " : "", q->shift_k[i], q->shift_load[i]);
	g_string_append(o, "</td></tr>");
	if (q->checked) {
		g_string_append(o, "<tr><th>VLs used</th><td id=\"q-vls\">");
		int first = 1;
		for (unsigned v = 0; v < 16; v++)
			if (q->vl_mask & (1u << v)) {
				g_string_append_printf(o, "%s%u", first ? "" : ",", v);
				first = 0;
			}
		g_string_append_printf(o, "</td></tr><tr><th>credit loops</th><td id=\"q-credit-loops\" "
				       "class=\"%s\" data-channels=\"%u\">",
				       q->loop_channels ? "bad" : "good", q->loop_channels);
		if (q->loop_channels == UINT32_MAX)
			g_string_append(o, "not checked: out of memory");
		else if (q->loop_channels) {
			g_string_append_printf(o, "%u channels (link, VL) on cycles, e.g. ", q->loop_channels);
			put_text(o, q->cycle);
		} else
			g_string_append(o, "none");
		g_string_append(o, "</td></tr>");
	}
	g_string_append(o, "</table></section>\n");
}

struct link_rank {
	uint32_t load, sw, port;
};

static int by_load(const void *a, const void *b)
{
	const struct link_rank *x = a, *y = b;
	if (x->load != y->load)
		return x->load > y->load ? -1 : 1;
	if (x->sw != y->sw)
		return x->sw < y->sw ? -1 : 1;
	return x->port < y->port ? -1 : x->port > y->port;
}

static void top_links(GString *o, const struct ibsm_fabric *f, const uint32_t *load)
{
	GArray *a = g_array_new(FALSE, FALSE, sizeof(struct link_rank));
	for (uint32_t s = 0; s < f->n_switches; s++) {
		const struct ibsm_switch *sw = ibsm_switch_at(f, s);
		uint32_t p0 = ibsm_node_at(f, sw->node)->port0;
		for (uint32_t i = 0; i < sw->nadj; i++) {
			struct link_rank k = { load[p0 + ibsm_adj_at(f, sw->adj0 + i)->port], s, sw->adj0 + i };
			g_array_append_val(a, k);
		}
	}
	g_array_sort(a, by_load);
	g_string_append_printf(o, "<section id=\"links\"><h2>Most loaded links</h2><table id=\"links-table\">"
			       "<tr><th>from</th><th>port</th><th>to</th><th>port</th><th>routes</th></tr>");
	for (guint i = 0; i < a->len && i < REPORT_TOP_LINKS; i++) {
		const struct link_rank *k = &g_array_index(a, struct link_rank, i);
		const struct ibsm_adj *ad = ibsm_adj_at(f, k->port);
		g_string_append(o, "<tr class=\"hot\"><td>");
		put_text(o, ibsm_switch_node(f, k->sw)->desc);
		g_string_append_printf(o, "</td><td class=\"n\">%u</td><td>", ad->port);
		put_text(o, ibsm_switch_node(f, ad->peer_sw)->desc);
		g_string_append_printf(o, "</td><td class=\"n\">%u</td><td class=\"n\">%u</td></tr>",
				       ad->peer_port, k->load);
	}
	g_string_append(o, "</table></section>\n");
	g_array_free(a, TRUE);
}

/* ---- partitions, multicast, counters ---------------------------------------------------- */

static void partitions(GString *o, const struct report_inputs *in, const struct fabric *fab)
{
	g_string_append(o, "<section id=\"partitions\"><h2>Partitions</h2>");
	if (!in->parts) {
		g_string_append(o, "<p>No partition policy known.</p></section>\n");
		return;
	}
	const struct ibsm_fabric *f = &fab->pub;
	struct port_pkeys *pk = part_policy_expand(in->parts, f, f->sm_port);
	g_string_append(o, "<table id=\"partitions-table\"><tr><th>name</th><th>P_Key</th>"
			"<th>IPoIB</th><th>full members</th><th>limited members</th></tr>");
	for (guint i = 0; i < in->parts->parts->len && i < REPORT_MAX_ROWS; i++) {
		const struct partition *p = g_ptr_array_index(in->parts->parts, i);
		uint32_t full = 0, limited = 0;
		for (uint32_t port = 0; pk && port < f->n_ports; port++)
			for (uint32_t k = 0; k < pk[port].n; k++)
				if ((pk[port].keys[k] & 0x7fff) == p->pkey) {
					if (pk[port].keys[k] & 0x8000)
						full++;
					else
						limited++;
				}
		g_string_append(o, "<tr class=\"partition\"><td>");
		put_text(o, p->name && p->name[0] ? p->name : "(unnamed)");
		g_string_append_printf(o, "</td><td>0x%04x</td><td>%s</td><td class=\"n\">%u</td>"
				       "<td class=\"n\">%u</td></tr>", p->pkey, p->ipoib ? "yes" : "no",
				       full, limited);
	}
	g_string_append(o, "</table>");
	if (in->parts->parts->len > REPORT_MAX_ROWS)
		g_string_append_printf(o, "<p>The first %u of %u partitions.</p>", REPORT_MAX_ROWS,
				       in->parts->parts->len);
	g_string_append(o, "</section>\n");
	if (pk)
		part_pkeys_free(pk, f->n_ports);
}

struct groups_ctx {
	GString *o;
	unsigned rows;
};

static void one_group(struct mc_group *g, void *data)
{
	struct groups_ctx *c = data;
	GString *o = c->o;
	if (c->rows++ >= REPORT_MAX_ROWS)
		return;
	char mgid[48];
	unsigned len = 0;
	for (unsigned i = 0; i < 16; i += 2)
		len += (unsigned)g_snprintf(mgid + len, sizeof(mgid) - len, "%s%02x%02x", i ? ":" : "",
					    g->mgid[i], g->mgid[i + 1]);
	unsigned send_only = 0;
	for (guint i = 0; i < g->members->len; i++)
		send_only += !!(g_array_index(g->members, struct mc_member, i).join_state & MC_SEND_ONLY);
	g_string_append_printf(o, "<tr class=\"mcgroup\"><td>%s</td><td>0x%04x</td><td>0x%04x</td>"
			       "<td class=\"n\">%u</td><td class=\"n\">%u</td><td class=\"n\">%u</td>"
			       "<td>%s</td></tr>", mgid, g->mlid, g->p.pkey, g->members->len, g->n_full,
			       send_only, g->persistent ? "yes" : "no");
}

static void multicast(GString *o, const struct report_inputs *in)
{
	g_string_append(o, "<section id=\"multicast\"><h2>Multicast groups</h2>");
	if (!in->mc) {
		g_string_append(o, "<p>No multicast groups known.</p></section>\n");
		return;
	}
	g_string_append_printf(o, "<p>%u groups.</p><table id=\"multicast-table\"><tr><th>MGID</th>"
			       "<th>MLID</th><th>P_Key</th><th>members</th><th>full</th><th>send-only</th>"
			       "<th>persistent</th></tr>", mc_count(in->mc));
	struct groups_ctx c = { o, 0 };
	mc_foreach(in->mc, one_group, &c);
	g_string_append(o, "</table>");
	if (c.rows > REPORT_MAX_ROWS)
		g_string_append_printf(o, "<p>The first %u groups (in MLID order).</p>", REPORT_MAX_ROWS);
	g_string_append(o, "</section>\n");
}

struct counters_ctx {
	GString *o;
	unsigned rows, ports;
};

static void one_port(const struct perfmgr_port_view *v, void *data)
{
	struct counters_ctx *c = data;
	c->ports++;
	if (!v->valid)
		return;
	uint64_t any = 0;
	for (int i = 0; i < PM_N_ERROR_COUNTERS; i++)
		any |= v->total[i];
	if (!any || c->rows >= REPORT_MAX_ROWS)
		return;
	c->rows++;
	g_string_append(c->o, "<tr class=\"pmport\"><td>");
	put_text(c->o, v->desc);
	g_string_append_printf(c->o, "</td><td>0x%016" G_GINT64_MODIFIER "x</td><td class=\"n\">%u</td>",
			       v->node_guid, v->port);
	for (int i = 0; i < PM_N_ERROR_COUNTERS; i++)
		g_string_append_printf(c->o, "<td class=\"n%s\">%" G_GUINT64_FORMAT "</td>",
				       v->total[i] ? " bad" : "", v->total[i]);
	g_string_append(c->o, "</tr>");
}

static void counters(GString *o, const struct report_inputs *in)
{

	g_string_append(o, "<section id=\"perfmgr\"><h2>Error counters (performance manager)</h2>");
	if (!in->pm) {
		g_string_append(o, "<p>The performance manager is not running (perfmgr).</p></section>\n");
		return;
	}
	g_string_append(o, "<table id=\"perfmgr-table\"><tr><th>node</th><th>GUID</th><th>port</th>");
	for (int i = 0; i < PM_N_ERROR_COUNTERS; i++)
		g_string_append_printf(o, "<th>%s</th>", perfmgr_counter_name(i));
	g_string_append(o, "</tr>");
	struct counters_ctx c = { o, 0, 0 };
	perfmgr_foreach_port(in->pm, one_port, &c);
	g_string_append_printf(o, "</table><p id=\"perfmgr-summary\">%u ports with error counts above "
			       "0%s, of %u ports known.</p></section>\n", c.rows,
			       c.rows >= REPORT_MAX_ROWS ? " (the first ones shown)" : "", c.ports);
}

/* ---- the document ------------------------------------------------------------------------- */

struct report_data *report_data_compute(struct routing_result *r, struct fabric *f)
{
	double t0 = g_get_monotonic_time() / 1e6;
	struct report_data *d = g_new0(struct report_data, 1);
	if (r && f && r->f != f)
		r = NULL;                    /* routes of another generation: none for this one */
	d->f = fabric_ref(f ? f : r ? r->f : NULL);
	d->r = routing_result_ref(r);
	if (d->f)
		report_layout(d->f, &d->layout);
	if (d->r) {
		d->load = g_new0(uint32_t, d->f->pub.n_ports + 1);
		report_quality(d->r, d->load, &d->q);
	}
	d->seconds = g_get_monotonic_time() / 1e6 - t0;
	return d;
}

void report_data_free(struct report_data *d)
{
	if (!d)
		return;
	report_layout_clear(&d->layout);
	g_free(d->load);
	routing_result_unref(d->r);
	fabric_unref(d->f);
	g_free(d);
}

GString *report_render(const struct report_data *d, const struct report_inputs *in)
{
	const struct fabric *fab = d->f;
	GString *o = g_string_sized_new(64 * 1024);
	g_string_append_printf(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
			       "<title>ibsm fabric report</title><style>%s</style></head><body>\n"
			       "<h1>ibsm fabric report</h1>\n", STYLE);
	if (!fab) {
		g_string_append(o, "<p id=\"no-fabric\">No fabric discovered yet.</p></body></html>\n");
		return o;
	}
	const struct ibsm_fabric *f = &fab->pub;
	summary(o, in, d);
	topology(o, in, d);
	if (d->r) {
		quality(o, &d->q);
		top_links(o, f, d->load);
	} else
		g_string_append(o, "<section id=\"quality\"><h2>Routing quality</h2><p>No routes for this "
				"generation yet.</p></section>\n");
	partitions(o, in, fab);
	multicast(o, in);
	counters(o, in);
	g_string_append(o, "</body></html>\n");
	return o;
}

GString *report_build(const struct report_inputs *in)
{
	struct report_data *d = report_data_compute((struct routing_result *)in->r, (struct fabric *)in->f);
	GString *o = report_render(d, in);
	report_data_free(d);
	return o;
}

int report_write_file(const char *path, const GString *html, GError **err)
{
	char *tmp = g_strdup_printf("%s.tmp", path);
	GError *e = NULL;
	if (!g_file_set_contents(tmp, html->str, (gssize)html->len, &e)) {
		g_set_error(err, G_FILE_ERROR, e->code, "%s", e->message);
		g_error_free(e);
		g_free(tmp);
		return -EIO;
	}
	if (rename(tmp, path) < 0) {
		int rc = -errno;
		g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(errno), "rename %s to %s: %s",
			    tmp, path, g_strerror(errno));
		unlink(tmp);
		g_free(tmp);
		return rc;
	}
	g_free(tmp);
	return 0;
}
