/* SPDX-License-Identifier: BSD-2-Clause */
/* metrics.c - what a Prometheus user scrapes from ibsm (ops/metrics.h): the page is built from
 * the counters the SM keeps anyway (the loop's sweeps, the transport's SMPs, the phases of the
 * last sweep, the SA's answers, traps, the fabric generation, the perfmgr's ports) only when
 * asked for, so the metrics cost nothing between scrapes. Names: ibsm_ prefix, units in the
 * name, _total for counters (prometheus.io/docs/practices/naming). */
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include "base/log.h"
#include "mad/phase.h"
#include "ops/metrics.h"
#include "ops/metrics_http.h"
#include "perfmgr/perfmgr.h"
#include "sa/agent.h"
#include "sa/counters.h"
#include "sm/loop.h"
#include "sm/notify.h"
#include "sm/sminfo.h"
#include "sm/traps.h"

#define METRICS_PHASES 24 /* phase names kept for the totals */

/* The server and what the tick keeps between scrapes (main thread only). */
static struct {
	struct sm *sm;
	struct http_server *http;
	int port_wanted;          /* metrics_port the server was last (re)started for */
	int hooked;
	uint64_t heavy_seen;      /* loop_counts()->heavy when the phases were last added up */
	struct { const char *name; double seconds; uint64_t smps; } phase_total[METRICS_PHASES];
	int n_phase_total;
	guint64 scrapes;
} M;

static void family(GString *o, const char *name, const char *type, const char *help)
{
	g_string_append_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value escaped as the text format wants (backslash, double quote, newline). */
static void append_label_value(GString *o, const char *v)
{
	for (; v && *v; v++) {
		if (*v == '\\' || *v == '"')
			g_string_append_c(o, '\\');
		if (*v == '\n')
			g_string_append(o, "\\n");
		else
			g_string_append_c(o, *v);
	}
}

static void sample_u(GString *o, const char *name, uint64_t v)
{
	g_string_append_printf(o, "%s %" PRIu64 "\n", name, v);
}

static void sample_d(GString *o, const char *name, double v)
{
	g_string_append_printf(o, "%s %.9g\n", name, v);
}

/* ---- the SM ---------------------------------------------------------------------------------- */

static void render_state(struct sm *sm, GString *o)
{
	static const char *const names[] = { "notactive", "discovering", "standby", "master" };
	family(o, "ibsm_sm_state", "gauge", "The SM's state (IBA 14.4.1): 1 for the state it is in");
	for (int s = 0; s < 4; s++)
		g_string_append_printf(o, "ibsm_sm_state{state=\"%s\"} %d\n", names[s], (int)sm->state == s);
	family(o, "ibsm_subnet_up", "gauge", "1 when the last sweep as master completed (SUBNET UP)");
	sample_u(o, "ibsm_subnet_up", sm->state == IB_SM_MASTER && sm->subnet_up);
	family(o, "ibsm_sm_priority", "gauge", "The SM's priority (sm_priority, 0-15)");
	sample_u(o, "ibsm_sm_priority", sm->opt->sm_priority);
	family(o, "ibsm_sm_activity_count", "gauge", "SMInfo ActCount as other SMs read it (moves with every SMP sent)");
	sample_u(o, "ibsm_sm_activity_count", sminfo_act_count(sm));
	family(o, "ibsm_start_time_seconds", "gauge", "When the SM started, seconds since the epoch");
	sample_d(o, "ibsm_start_time_seconds", (double)g_get_real_time() / 1e6 - (phase_now() - sm->t_start));
}

static void render_sweeps(GString *o)
{
	static const char *const results[4] = { "up", "standby", "incomplete", "inactive" };
	const struct loop_counts *c = loop_counts();
	family(o, "ibsm_sweeps_total", "counter", "Sweeps run, by kind and result (light: whether it "
	       "found a change that asked for a heavy sweep)");
	for (int r = 0; r < 4; r++)
		g_string_append_printf(o, "ibsm_sweeps_total{kind=\"heavy\",result=\"%s\"} %" PRIu64 "\n",
				       results[r], c->heavy_by_result[r]);
	g_string_append_printf(o, "ibsm_sweeps_total{kind=\"heavy\",result=\"failed\"} %" PRIu64 "\n",
			       c->heavy_failed);
	g_string_append_printf(o, "ibsm_sweeps_total{kind=\"light\",result=\"unchanged\"} %" PRIu64 "\n",
			       c->light - c->light_changes);
	g_string_append_printf(o, "ibsm_sweeps_total{kind=\"light\",result=\"changed\"} %" PRIu64 "\n",
			       c->light_changes);
	family(o, "ibsm_last_heavy_sweep_duration_seconds", "gauge", "How long the last heavy sweep took");
	sample_d(o, "ibsm_last_heavy_sweep_duration_seconds", c->last_heavy_seconds);
	if (c->last_heavy_at > 0) {
		family(o, "ibsm_last_heavy_sweep_timestamp_seconds", "gauge",
		       "When the last heavy sweep ended, seconds since the epoch");
		sample_d(o, "ibsm_last_heavy_sweep_timestamp_seconds",
			 (double)g_get_real_time() / 1e6 - (phase_now() - c->last_heavy_at));
	}
}

/* The phases of the sweep that ended last are added to the totals once (the tick's job). */
static void add_phase_totals(const struct sm *sm)
{
	const struct phase_log *pl = &sm->phases;
	for (int i = 0; i < pl->n; i++) {
		int k = 0;
		while (k < M.n_phase_total && strcmp(M.phase_total[k].name, pl->phases[i].name))
			k++;
		if (k == M.n_phase_total) {
			if (k == METRICS_PHASES)
				continue;
			M.phase_total[k].name = pl->phases[i].name; /* string literals (mad/phase.h) */
			M.n_phase_total++;
		}
		M.phase_total[k].seconds += pl->phases[i].seconds;
		M.phase_total[k].smps += pl->phases[i].smps;
	}
}

static void render_phases(struct sm *sm, GString *o)
{
	const struct phase_log *pl = &sm->phases;
	family(o, "ibsm_sweep_phase_seconds", "gauge", "Seconds each phase of the last heavy sweep took");
	for (int i = 0; i < pl->n; i++) {
		g_string_append(o, "ibsm_sweep_phase_seconds{phase=\"");
		append_label_value(o, pl->phases[i].name);
		g_string_append_printf(o, "\"} %.9g\n", pl->phases[i].seconds);
	}
	family(o, "ibsm_sweep_phase_smps", "gauge", "SMPs each phase of the last heavy sweep sent");
	for (int i = 0; i < pl->n; i++) {
		g_string_append(o, "ibsm_sweep_phase_smps{phase=\"");
		append_label_value(o, pl->phases[i].name);
		g_string_append_printf(o, "\"} %" PRIu64 "\n", pl->phases[i].smps);
	}
	family(o, "ibsm_sweep_phase_seconds_total", "counter", "Seconds spent in each phase, all heavy sweeps");
	for (int k = 0; k < M.n_phase_total; k++) {
		g_string_append(o, "ibsm_sweep_phase_seconds_total{phase=\"");
		append_label_value(o, M.phase_total[k].name);
		g_string_append_printf(o, "\"} %.9g\n", M.phase_total[k].seconds);
	}
	family(o, "ibsm_sweep_phase_smps_total", "counter", "SMPs sent in each phase, all heavy sweeps");
	for (int k = 0; k < M.n_phase_total; k++) {
		g_string_append(o, "ibsm_sweep_phase_smps_total{phase=\"");
		append_label_value(o, M.phase_total[k].name);
		g_string_append_printf(o, "\"} %" PRIu64 "\n", M.phase_total[k].smps);
	}
}

static void render_smps(struct sm *sm, GString *o)
{
	if (!sm->t)
		return;
	const struct transport_stats *s = transport_stats(sm->t);
	uint64_t smps = 0;
	for (int i = 0; i < 64; i++)
		smps += s->by_attr[0][i] + s->by_attr[1][i];
	family(o, "ibsm_smps_sent_total", "counter", "SMP requests (Get, Set) sent, each retry counted");
	sample_u(o, "ibsm_smps_sent_total", smps);
	family(o, "ibsm_mads_sent_total", "counter", "Every MAD sent: SMP requests, answers (SMInfo, SA), "
	       "TrapRepress, PerfMgt queries");
	sample_u(o, "ibsm_mads_sent_total", s->sent);
	family(o, "ibsm_smps_received_total", "counter", "SMP answers received");
	sample_u(o, "ibsm_smps_received_total", s->received);
	family(o, "ibsm_smp_retries_total", "counter", "SMPs sent again after a timeout");
	sample_u(o, "ibsm_smp_retries_total", s->retries);
	family(o, "ibsm_smp_timeouts_total", "counter", "SMP attempts that timed out");
	sample_u(o, "ibsm_smp_timeouts_total", s->timeouts);
	family(o, "ibsm_smps_failed_total", "counter", "SMPs that failed for good (every retry lost)");
	sample_u(o, "ibsm_smps_failed_total", s->failed);
	family(o, "ibsm_smp_answers_dropped_total", "counter", "Answers dropped: stale (no request waiting) or short");
	g_string_append_printf(o, "ibsm_smp_answers_dropped_total{reason=\"stale\"} %" PRIu64 "\n",
			       s->dropped_stale);
	g_string_append_printf(o, "ibsm_smp_answers_dropped_total{reason=\"short\"} %" PRIu64 "\n",
			       s->dropped_short);
	family(o, "ibsm_smp_backoffs_total", "counter", "Back-offs after status 110 (dropped or unroutable SMPs)");
	sample_u(o, "ibsm_smp_backoffs_total", s->backoffs);
}

static void render_traps(GString *o)
{
	const struct trap_counts *tc = traps_counts();
	family(o, "ibsm_traps_received_total", "counter", "Traps (SM class Trap MADs) received");
	sample_u(o, "ibsm_traps_received_total", tc->received);
	family(o, "ibsm_trap_represses_sent_total", "counter", "TrapRepress MADs sent back");
	sample_u(o, "ibsm_trap_represses_sent_total", tc->represses_sent);
}

/* ---- the fabric ------------------------------------------------------------------------------ */

static void render_fabric(struct sm *sm, GString *o)
{
	const struct fabric *f = sm->fabric;
	if (!f)
		return;
	uint32_t by_type[4] = { 0 }, ports = 0, active = 0, links = 0;
	for (uint32_t n = 0; n < f->pub.n_nodes; n++)
		by_type[f->nodes[n].type < 4 ? f->nodes[n].type : 0]++;
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		const struct ibsm_port *pt = &f->ports[p];
		if (!(pt->flags & IBSM_PORT_PRESENT) || pt->num == 0)
			continue; /* physical ports only: not switch port 0 */
		ports++;
		active += pt->state == IBSM_STATE_ACTIVE;
		links += pt->peer != IBSM_NONE && pt->peer > p;
	}
	family(o, "ibsm_fabric_nodes", "gauge", "Nodes the last discovery found, by type");
	g_string_append_printf(o, "ibsm_fabric_nodes{type=\"ca\"} %u\n", by_type[IBSM_CA]);
	g_string_append_printf(o, "ibsm_fabric_nodes{type=\"switch\"} %u\n", by_type[IBSM_SWITCH]);
	g_string_append_printf(o, "ibsm_fabric_nodes{type=\"router\"} %u\n", by_type[IBSM_ROUTER]);
	family(o, "ibsm_fabric_ports", "gauge", "Physical ports of the discovered nodes (not switch port 0)");
	sample_u(o, "ibsm_fabric_ports", ports);
	family(o, "ibsm_fabric_ports_active", "gauge", "Physical ports ACTIVE as last read");
	sample_u(o, "ibsm_fabric_ports_active", active);
	family(o, "ibsm_fabric_links", "gauge", "Links (each cable once) the last discovery found");
	sample_u(o, "ibsm_fabric_links", links);
	family(o, "ibsm_fabric_max_lid", "gauge", "The highest LID assigned");
	sample_u(o, "ibsm_fabric_max_lid", f->pub.max_lid);
	family(o, "ibsm_fabric_generation", "gauge", "The fabric model's generation (one per sweep)");
	sample_u(o, "ibsm_fabric_generation", f->pub.generation);
}

/* ---- the SA ---------------------------------------------------------------------------------- */

static void attr_label(GString *o, uint16_t attr)
{
	const char *n = attr == 0xffff ? "other" : sa_counters_attr_name(attr);
	if (n)
		g_string_append(o, n);
	else
		g_string_append_printf(o, "0x%04x", attr);
}

static void render_sa(struct sm *sm, GString *o)
{
	if (!sm->sa)
		return;
	const struct sa_counters *c = sa_counters(sm->sa);
	family(o, "ibsm_sa_requests_total", "counter", "SA requests answered, by attribute, method and MAD status");
	for (int i = 0; i <= SA_CNT_ATTRS; i++) {
		const struct sa_cnt_attr *a = &c->a[i];
		if (!a->used)
			continue;
		for (int m = 0; m < SA_CNT_METHODS; m++)
			for (int s = 0; s < SA_CNT_STATUSES; s++) {
				if (!a->n[m][s])
					continue;
				g_string_append(o, "ibsm_sa_requests_total{attribute=\"");
				attr_label(o, a->attr);
				g_string_append_printf(o, "\",method=\"%s\",status=\"%s\"} %" PRIu64 "\n",
						       sa_counters_method_name(m), sa_counters_status_name(s),
						       a->n[m][s]);
			}
	}
	family(o, "ibsm_sa_request_duration_seconds", "histogram",
	       "Seconds from an SA request's arrival to its answer, by attribute");
	for (int i = 0; i <= SA_CNT_ATTRS; i++) {
		const struct sa_cnt_attr *a = &c->a[i];
		if (!a->used)
			continue;
		uint64_t cum = 0;
		for (int b = 0; b < SA_CNT_BUCKETS; b++) {
			cum += a->bucket[b];
			g_string_append(o, "ibsm_sa_request_duration_seconds_bucket{attribute=\"");
			attr_label(o, a->attr);
			if (isinf(sa_cnt_bucket_le[b]))
				g_string_append_printf(o, "\",le=\"+Inf\"} %" PRIu64 "\n", cum);
			else
				g_string_append_printf(o, "\",le=\"%g\"} %" PRIu64 "\n", sa_cnt_bucket_le[b], cum);
		}
		g_string_append(o, "ibsm_sa_request_duration_seconds_sum{attribute=\"");
		attr_label(o, a->attr);
		g_string_append_printf(o, "\"} %.9g\n", a->sum_s);
		g_string_append(o, "ibsm_sa_request_duration_seconds_count{attribute=\"");
		attr_label(o, a->attr);
		g_string_append_printf(o, "\"} %" PRIu64 "\n", a->count);
	}
	const struct sa_stats *st = sa_stats(sm->sa);
	family(o, "ibsm_sa_requests_received_total", "counter", "SA MADs received (answered or not)");
	sample_u(o, "ibsm_sa_requests_received_total", st->requests);
	family(o, "ibsm_sa_requests_dropped_total", "counter", "SA requests not answered, by reason");
	g_string_append_printf(o, "ibsm_sa_requests_dropped_total{reason=\"not_master\"} %" PRIu64 "\n",
			       st->not_master);
	g_string_append_printf(o, "ibsm_sa_requests_dropped_total{reason=\"bad_sm_key\"} %" PRIu64 "\n",
			       st->bad_key);
	family(o, "ibsm_sa_queue_max", "gauge", "The most SA requests that waited at once");
	sample_u(o, "ibsm_sa_queue_max", st->queued_max);
	family(o, "ibsm_sa_subscriptions", "gauge", "InformInfo subscriptions held");
	sample_u(o, "ibsm_sa_subscriptions", st->subscriptions);
	family(o, "ibsm_sa_multicast_groups", "gauge", "Multicast groups");
	sample_u(o, "ibsm_sa_multicast_groups", st->mcast_groups);
	family(o, "ibsm_sa_reports_sent_total", "counter", "Reports (traps 64/65 ...) sent to subscribers, resends included");
	sample_u(o, "ibsm_sa_reports_sent_total", st->reports_sent);
}

static void render_self(GString *o)
{
	unsigned long long sent, dropped;
	log_syslog_counts(&sent, &dropped);
	family(o, "ibsm_log_write_failures_total", "counter", "Log lines the log file did not take");
	sample_u(o, "ibsm_log_write_failures_total", log_write_failures());
	family(o, "ibsm_syslog_lines_total", "counter", "Lines sent to syslog, and dropped (the socket was full or absent)");
	g_string_append_printf(o, "ibsm_syslog_lines_total{result=\"sent\"} %llu\n", sent);
	g_string_append_printf(o, "ibsm_syslog_lines_total{result=\"dropped\"} %llu\n", dropped);
	family(o, "ibsm_metrics_scrapes_total", "counter", "Pages of metrics served (this one included)");
	sample_u(o, "ibsm_metrics_scrapes_total", M.scrapes);
}

void metrics_render(struct sm *sm, GString *out)
{
	M.scrapes++;
	render_state(sm, out);
	render_sweeps(out);
	render_phases(sm, out);
	render_smps(sm, out);
	render_traps(out);
	render_fabric(sm, out);
	render_sa(sm, out);
	if (sm->perfmgr)
		perfmgr_prometheus(sm->perfmgr, out);
	render_self(out);
}

/* ---- the server ------------------------------------------------------------------------------ */

static int page(const char *path, GString *body, const char **type, void *ctx)
{
	struct sm *sm = ctx;
	if (!strcmp(path, "/metrics")) {
		metrics_render(sm, body);
		*type = "text/plain; version=0.0.4; charset=utf-8";
		return 200;
	}
	if (!strcmp(path, "/")) {
		g_string_append(body, "ibsm: the metrics are at /metrics (Prometheus text format)\n");
		return 200;
	}
	return 404;
}

/* (Re)starts or stops the server for metrics_port as it is now (SIGHUP may change it). */
static void follow_port(struct sm *sm)
{
	int want = sm->opt->metrics_port;
	if (want == M.port_wanted)
		return;
	M.port_wanted = want;
	http_server_free(M.http);
	M.http = NULL;
	if (!want) {
		LOG_I("MET-0002", "metrics server stopped (metrics_port 0)");
		return;
	}
	int err = 0;
	M.http = http_server_new(want, page, sm, &err);
	if (!M.http)
		LOG_E("MET-0001", "metrics: cannot listen on 127.0.0.1:%d: %s; no metrics are served "
		      "(the SM runs on)", want, g_strerror(err));
	else
		LOG_I("MET-0003", "metrics served on http://127.0.0.1:%d/metrics", want);
}

static void tick(struct sm *sm, void *data)
{
	(void)data;
	const struct loop_counts *c = loop_counts();
	if (c->heavy != M.heavy_seen) { /* the tick right after heavy(): its phases are whole */
		M.heavy_seen = c->heavy;
		add_phase_totals(sm);
	}
	follow_port(sm);
	if (M.http)
		http_server_service(M.http);
	service_notify_state(sm, c->last_result); /* systemd's STATUS follows the state */
}

void metrics_start(struct sm *sm)
{
	if (M.hooked)
		return;
	M.sm = sm;
	M.hooked = 1;
	loop_tick_add(sm, tick, NULL);
}

void metrics_stop(void)
{
	if (!M.hooked)
		return;
	loop_tick_remove(tick, NULL);
	http_server_free(M.http);
	M.http = NULL;
	M.port_wanted = 0;
	M.hooked = 0;
}
