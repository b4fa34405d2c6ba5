/* SPDX-License-Identifier: BSD-2-Clause */
/* console_report.c - the console's `report` command: `report html` answers the fabric report
 * (ops/report.h) as one HTML document (ibsm-cli report --html FILE writes it to FILE on the
 * client's side: the SM never writes files a console client names), `report quality` the
 * routing quality numbers alone, as text and JSON, for scripts. */
#include <errno.h>
#include <string.h>
#include "ops/console.h"
#include "ops/report.h"

/* A big fabric's report is computed on a thread of its own: not ready yet. */
static int busy(struct sm *sm, struct console_reply *r)
{
	console_printf(r, "error: the report of generation %u is being computed (a big fabric, off the "
		       "main thread): ask again in a few seconds", sm->live->f->pub.generation);
	return -EAGAIN;
}

static int report_quality_cmd(struct sm *sm, struct console_reply *r)
{
	if (!sm->live) {
		console_printf(r, "error: no routes yet");
		return -EAGAIN;
	}
	const struct report_data *d = report_data_current(sm);
	if (!d)
		return busy(sm, r);
	struct report_quality q = d->q;
	console_printf(r, "generation %u, engine %s", d->f->pub.generation, d->r->engine);
	console_printf(r, "CA ports %u, CA-to-CA routes %" G_GUINT64_FORMAT ", not delivered %"
		       G_GUINT64_FORMAT, q.ca_ports, q.routes, q.unrouted);
	console_printf(r, "directed switch-to-switch links %u, max link load %u, mean %.2f", q.links,
		       q.max_load, q.mean_load);
	console_printf(r, "shift permutations %u, worst k=%u with max link load %u", q.shifts,
		       q.worst_shift, q.worst_shift_load);
	console_printf(r, "VL mask 0x%04x (%u VLs), credit loops: %s%s", q.vl_mask, q.vls,
		       q.loop_channels ? "yes: " : "none", q.loop_channels ? q.cycle : "");
	console_json_int(r, "generation", d->f->pub.generation);
	console_json_str(r, "engine", d->r->engine);
	console_json_int(r, "ca_ports", q.ca_ports);
	console_json_int(r, "routes", (int64_t)q.routes);
	console_json_int(r, "unrouted", (int64_t)q.unrouted);
	console_json_int(r, "links", q.links);
	console_json_int(r, "max_load", q.max_load);
	console_json_double(r, "mean_load", q.mean_load);
	console_json_int(r, "shifts", q.shifts);
	console_json_int(r, "worst_shift", q.worst_shift);
	console_json_int(r, "worst_shift_load", q.worst_shift_load);
	console_json_int(r, "vl_mask", q.vl_mask);
	console_json_int(r, "credit_loop_channels", q.loop_channels);
	return 0;
}

static int cmd_report(struct sm *sm, int argc, char **argv, struct console_reply *r)
{
	if (argc == 2 && !strcmp(argv[1], "html")) {
		GString *html = report_html(sm);
		if (!html)
			return busy(sm, r);
		/* one text line per line of the document; JSON: the document as one string */
		if (html->len && html->str[html->len - 1] == '\n')
			g_string_truncate(html, html->len - 1);
		console_printf(r, "%s", html->str);
		console_json_str(r, "html", html->str);
		g_string_free(html, TRUE);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "quality"))
		return report_quality_cmd(sm, r);
	console_printf(r, "error: usage: report html|quality");
	return -EINVAL;
}

void console_report_register(void)
{
	console_command_add("report", "html|quality",
			    "the fabric report: html (one HTML document: topology, routed link load, "
			    "routing quality, partitions, multicast, error counters) or its quality numbers",
			    cmd_report);
}
