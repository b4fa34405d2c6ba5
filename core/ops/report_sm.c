/* SPDX-License-Identifier: BSD-2-Clause */
/* report_sm.c - the fabric report of the running SM. What the routes say (report_data: link
 * loads, shifts, credit loops; seconds on big fabrics) is computed once per generation of
 * routes on a thread of its own, never on the main thread that serves the SA, unless the
 * fabric is small enough to take a few milliseconds; report_html() then adds what the SM holds
 * (partitions, the SA's multicast groups, the perfmgr's counters) on the main thread. With
 * fabric_report_file the report is written after each heavy sweep that brought new routes,
 * while master (atomically: FILE.tmp, then rename). All of it runs from the event loop's tick. */
#include "base/mad_cpu.h"
#include "base/log.h"
#include "ops/report.h"
#include "sa/agent.h"
#include "sm/loop.h"
#include "sm/sm.h"

/* Below this many (end ports x switches) the data is computed on the spot (well under 10 ms). */
#define REPORT_SYNC_WORK (1u << 20)

static struct {
	struct report_data *data;        /* for data->r (referenced): the routes last computed */
	GThread *job;                    /* computing for job_r */
	struct routing_result *job_r;    /* a reference, owned by the job while it runs */
	struct report_data *job_out;     /* set by the job (under lock) */
	GMutex lock;
	int wanted;                      /* someone asked (the console) or the file is configured */
	unsigned serial, written;        /* of data; of the data the file was last written from */
} S;

static const char *state_name(enum ib_sm_state s)
{
	switch (s) {
	case IB_SM_MASTER: return "MASTER";
	case IB_SM_STANDBY: return "STANDBY";
	case IB_SM_DISCOVERING: return "DISCOVERING";
	case IB_SM_NOTACTIVE: return "NOTACTIVE";
	default: return "UNKNOWN";
	}
}

static gpointer job_main(gpointer arg)
{
	struct routing_result *r = arg;
	struct report_data *d = report_data_compute(r, r->f);
	g_mutex_lock(&S.lock);
	S.job_out = d;
	g_mutex_unlock(&S.lock);
	return NULL;
}

static void set_data(struct report_data *d)
{
	report_data_free(S.data);
	S.data = d;
	S.serial++;
}

/* A finished job's data becomes the current one. */
static void job_collect(int wait)
{
	if (!S.job)
		return;
	g_mutex_lock(&S.lock);
	struct report_data *d = S.job_out;
	g_mutex_unlock(&S.lock);
	if (!d && !wait)
		return;
	g_thread_join(S.job);
	S.job = NULL;
	d = S.job_out;
	S.job_out = NULL;
	routing_result_unref(S.job_r);
	S.job_r = NULL;
	set_data(d);
}

/* IBSM_REPORT_SYNC_WORK (doc/report.md) moves the line; 0: always on a thread. */
static int small(const struct routing_result *r)
{
	static uint64_t limit = UINT64_MAX;
	if (limit == UINT64_MAX) {
		const char *e = g_getenv("IBSM_REPORT_SYNC_WORK");
		limit = e && *e ? g_ascii_strtoull(e, NULL, 0) : REPORT_SYNC_WORK;
		if (limit == UINT64_MAX)
			limit--;
	}
	return (uint64_t)r->f->pub.n_ports * r->f->pub.n_switches < limit;
}

static struct report_inputs sm_inputs(struct sm *sm)
{
	struct report_inputs in = {
		.parts = sm->part_policy,
		.mc = sm->sa ? sa_mcast_groups(sm->sa) : NULL,
		.pm = sm->perfmgr,
		.sm_state = state_name(sm->state),
		.sm_guid = sm->port_guid,
		.subnet_up = sm->subnet_up,
		.sweeps = sm->generation,
	};
	return in;
}

const struct report_data *report_data_current(struct sm *sm)
{
	job_collect(0);
	if (!sm->live)
		return NULL;
	if (!S.data || S.data->r != sm->live) {
		S.wanted = 1;
		if (!small(sm->live))
			return NULL;         /* the tick starts the job */
		set_data(report_data_compute(sm->live, sm->live->f));
	}
	return S.data;
}

GString *report_html(struct sm *sm)
{
	struct report_inputs in = sm_inputs(sm);
	if (!sm->live) {
		/* no routes yet: the fabric alone, cheap */
		struct report_data *d = report_data_compute(NULL, sm->fabric);
		GString *o = report_render(d, &in);
		report_data_free(d);
		return o;
	}
	const struct report_data *d = report_data_current(sm);
	return d ? report_render(d, &in) : NULL;
}

static void write_file(struct sm *sm, const char *path)
{
	double t0 = g_get_monotonic_time() / 1e6;
	struct report_inputs in = sm_inputs(sm);
	GString *html = report_render(S.data, &in);
	GError *err = NULL;
	if (report_write_file(path, html, &err) < 0) {
		LOG_E("FRP-0001", "fabric report: cannot write %s: %s", path, err->message);
		g_error_free(err);
	} else
		LOG_I("FRP-0002", "fabric report of generation %u written to %s (%zu bytes; computed in "
		      "%.3f s off the main thread or on it when small, written in %.3f s)",
		      S.data->f->pub.generation, path, html->len, S.data->seconds,
		      g_get_monotonic_time() / 1e6 - t0);
	g_string_free(html, TRUE);
}

static void report_tick(struct sm *sm, void *data)
{
	(void)data;
	const char *path = sm->opt->fabric_report_file;
	int want_file = path && path[0];
	job_collect(0);
	if (!sm->live || S.job || (!want_file && !S.wanted))
		return;
	if (!S.data || S.data->r != sm->live) {
		if (small(sm->live))
			set_data(report_data_compute(sm->live, sm->live->f));
		else {
			S.job_r = routing_result_ref(sm->live);
			S.job = mad_cpu_thread_new("ibsm-report", job_main, S.job_r);
			return;
		}
	}
	S.wanted = 0;
	if (want_file && sm->state == IB_SM_MASTER && S.written != S.serial) {
		S.written = S.serial;
		write_file(sm, path);
	}
}

void report_file_start(struct sm *sm)
{
	loop_tick_add(sm, report_tick, NULL);
}

void report_file_stop(void)
{
	loop_tick_remove(report_tick, NULL);
	job_collect(1);
	set_data(NULL);
	S.written = S.serial;
}
