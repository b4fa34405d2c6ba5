/* SPDX-License-Identifier: BSD-2-Clause */
/* console_perfmgr.c - the console's `perfmgr` command, with OpenSM 3.3.23's subcommands (status,
 * enable, disable, sweep_time, print_counters, print_errors, clear_counters, dump_counters) and
 * `sweep` (one perfmgr sweep now): what the performance manager has read, per port, as text and
 * as JSON (ibsm-cli --json). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "ops/console.h"
#include "perfmgr/perfmgr.h"

struct sel {
	const char *node;         /* NodeDescription or GUID; NULL: every node */
	uint64_t guid;
	int by_guid;
	int port;                 /* -1: every port */
	int errors_only;
	struct console_reply *r;
	GString *json;            /* the "ports" array */
	GString *file;            /* dump_counters: the file's text instead */
	int n;
};

static int selected(const struct sel *s, const struct perfmgr_port_view *v)
{
	if (s->node && (s->by_guid ? v->node_guid != s->guid : strcmp(v->desc ? v->desc : "", s->node)))
		return 0;
	if (s->port >= 0 && v->port != s->port)
		return 0;
	if (s->errors_only) {
		for (int c = 0; c < PM_N_ERROR_COUNTERS; c++)
			if (v->total[c])
				return 1;
		return 0;
	}
	return 1;
}

static void one_port(const struct perfmgr_port_view *v, void *data)
{
	struct sel *s = data;
	if (!selected(s, v))
		return;
	s->n++;
	char head[256];
	snprintf(head, sizeof(head), "\"%s\" 0x%016" PRIx64 " port %u (LID %u)%s", v->desc ? v->desc : "",
		 v->node_guid, v->port, v->lid, v->extended ? " extended" : "");
	if (s->file)
		g_string_append_printf(s->file, "%s\n", head);
	else
		console_printf(s->r, "%s", head);
	if (s->json) {
		if (s->json->len > 1)
			g_string_append_c(s->json, ',');
		g_string_append_printf(s->json, "{\"node_guid\":\"0x%016" PRIx64 "\",\"desc\":", v->node_guid);
		console_json_escape(s->json, v->desc ? v->desc : "");
		g_string_append_printf(s->json, ",\"port\":%u,\"lid\":%u,\"extended\":%s,\"total\":{", v->port,
				       v->lid, v->extended ? "true" : "false");
	}
	int first = 1;
	for (int c = 0; c < PM_N_COUNTERS; c++) {
		if (s->errors_only && (!perfmgr_counter_is_error(c) || !v->total[c]))
			continue;
		if (c >= PM_UNICAST_XMIT_PKTS && !v->extended)
			continue;
		char line[160];
		snprintf(line, sizeof(line), "    %-30s %20" PRIu64 "   (port shows %" PRIu64 ", last sweep +%" PRIu64 ")",
			 perfmgr_counter_name(c), v->total[c], v->last[c], v->delta[c]);
		if (s->file)
			g_string_append_printf(s->file, "%s\n", line);
		else
			console_printf(s->r, "%s", line);
		if (s->json) {
			g_string_append_printf(s->json, "%s\"%s\":%" PRIu64, first ? "" : ",",
					       perfmgr_counter_key(c), v->total[c]);
			first = 0;
		}
	}
	if (s->json) {
		g_string_append(s->json, "},\"last\":{");
		first = 1;
		for (int c = 0; c < PM_N_COUNTERS; c++) {
			if (s->errors_only && (!perfmgr_counter_is_error(c) || !v->total[c]))
				continue;
			if (c >= PM_UNICAST_XMIT_PKTS && !v->extended)
				continue;
			g_string_append_printf(s->json, "%s\"%s\":%" PRIu64, first ? "" : ",",
					       perfmgr_counter_key(c), v->last[c]);
			first = 0;
		}
		g_string_append(s->json, "}}");
	}
}

/* [node [port]]: node a NodeDescription or a GUID (0x...) */
static int parse_sel(struct sel *s, int argc, char **argv, int i, struct console_reply *r)
{
	s->port = -1;
	if (argc > i) {
		s->node = argv[i];
		char *end;
		if (!g_ascii_strncasecmp(s->node, "0x", 2)) {
			s->guid = g_ascii_strtoull(s->node, &end, 16);
			s->by_guid = !*end;
		}
	}
	if (argc > i + 1) {
		char *end;
		long p = strtol(argv[i + 1], &end, 0);
		if (*end || p < 0 || p > 254) {
			console_printf(r, "error: '%s' is not a port number", argv[i + 1]);
			return -EINVAL;
		}
		s->port = (int)p;
	}
	if (argc > i + 2) {
		console_printf(r, "error: too many arguments");
		return -EINVAL;
	}
	return 0;
}

static int print_ports(struct sm *sm, int argc, char **argv, struct console_reply *r, int errors_only)
{
	struct sel s = { .r = r, .errors_only = errors_only, .json = g_string_new("[") };
	int rc = parse_sel(&s, argc, argv, 2, r);
	if (rc == 0) {
		perfmgr_foreach_port(sm->perfmgr, one_port, &s);
		g_string_append_c(s.json, ']');
		console_json_raw(r, "ports", s.json->str);
		console_json_int(r, "count", s.n);
		if (!s.n && s.node) {
			console_printf(r, "error: no port of '%s' read by the perfmgr%s", s.node,
				       perfmgr_cfg(sm->perfmgr)->enabled ? "" : " (it is disabled)");
			rc = -ENOENT;
		} else if (!s.n) {
			console_printf(r, errors_only ? "no error counter above 0" : "no port read yet%s",
				       perfmgr_cfg(sm->perfmgr)->enabled ? "" : " (the perfmgr is disabled)");
		}
	}
	g_string_free(s.json, TRUE);
	return rc;
}

static void status(struct sm *sm, struct console_reply *r)
{
	struct perfmgr_status st;
	perfmgr_status(sm->perfmgr, &st);
	const struct perfmgr_cfg *c = perfmgr_cfg(sm->perfmgr);
	console_printf(r, "Performance Manager state: %s%s", st.enabled ? "Enabled" : "Disabled",
		       st.sweeping ? " (sweeping)" : "");
	console_printf(r, "sweep time: %d s; max outstanding queries: %d; ignore CAs: %s; rm nodes: %s; "
		       "log errors: %s", c->sweep_time_s, c->max_outstanding, c->ignore_cas ? "yes" : "no",
		       c->rm_nodes ? "yes" : "no", c->log_errors ? "yes" : "no");
	console_printf(r, "sweeps: %" PRIu64 "; ports: %u; last sweep %.3f s; queries sent %" PRIu64
		       ", answered %" PRIu64 ", timed out %" PRIu64 ", errors %" PRIu64 "; counters cleared %"
		       PRIu64 "; outstanding %u", st.sweeps, st.ports, st.last_sweep_s, st.queries_sent,
		       st.answers, st.timeouts, st.errors, st.resets, st.outstanding);
	console_json_bool(r, "enabled", st.enabled);
	console_json_bool(r, "sweeping", st.sweeping);
	console_json_int(r, "sweep_time_s", c->sweep_time_s);
	console_json_int(r, "max_outstanding_queries", c->max_outstanding);
	console_json_int(r, "sweeps", (int64_t)st.sweeps);
	console_json_int(r, "ports", st.ports);
	console_json_double(r, "last_sweep_s", st.last_sweep_s);
	console_json_int(r, "queries_sent", (int64_t)st.queries_sent);
	console_json_int(r, "answers", (int64_t)st.answers);
	console_json_int(r, "timeouts", (int64_t)st.timeouts);
	console_json_int(r, "errors", (int64_t)st.errors);
	console_json_int(r, "counter_resets", (int64_t)st.resets);
}

static int dump_counters(struct sm *sm, int argc, char **argv, struct console_reply *r)
{
	struct sel s = { .r = r, .port = -1, .file = g_string_new(NULL) };
	if (argc > 3 || (argc == 3 && strcmp(argv[2], "mach"))) {
		console_printf(r, "error: usage: perfmgr dump_counters [mach]");
		g_string_free(s.file, TRUE);
		return -EINVAL;
	}
	perfmgr_foreach_port(sm->perfmgr, one_port, &s);
	const char *dir = sm->opt->tmp_dir ? sm->opt->tmp_dir : "/var/log";
	char *path = sm->opt->event_db_dump_file ? g_strdup(sm->opt->event_db_dump_file) :
		     g_build_filename(dir, "opensm_port_counters.log", NULL);
	GError *err = NULL;
	int rc = 0;
	if (!g_file_set_contents(path, s.file->str, (gssize)s.file->len, &err)) { /* tmp + rename */
		console_printf(r, "error: cannot write %s: %s", path, err->message);
		g_error_free(err);
		rc = -EIO;
	} else {
		console_printf(r, "%d ports written to %s", s.n, path);
		console_json_str(r, "file", path);
		console_json_int(r, "count", s.n);
	}
	g_free(path);
	g_string_free(s.file, TRUE);
	return rc;
}

static int cmd_perfmgr(struct sm *sm, int argc, char **argv, struct console_reply *r)
{
	if (!sm->perfmgr) {
		console_printf(r, "error: no performance manager (offline)");
		return -ENODEV;
	}
	const char *sub = argc > 1 ? argv[1] : "status";
	if (!strcmp(sub, "status")) {
		status(sm, r);
		return 0;
	}
	if (!strcmp(sub, "enable") || !strcmp(sub, "disable")) {
		perfmgr_enable(sm->perfmgr, sub[0] == 'e');
		console_printf(r, "perfmgr %sd", sub);
		console_json_bool(r, "enabled", sub[0] == 'e');
		return 0;
	}
	if (!strcmp(sub, "sweep_time")) {
		char *end = NULL;
		long n = argc == 3 ? strtol(argv[2], &end, 10) : 0;
		if (argc != 3 || *end || n < 1 || n > 86400) {
			console_printf(r, "error: usage: perfmgr sweep_time SECONDS (1-86400)");
			return -EINVAL;
		}
		struct perfmgr_cfg c = *perfmgr_cfg(sm->perfmgr);
		c.sweep_time_s = (int)n;
		perfmgr_set_cfg(sm->perfmgr, &c);
		console_printf(r, "perfmgr sweep time: %ld s", n);
		console_json_int(r, "sweep_time_s", n);
		return 0;
	}
	if (!strcmp(sub, "sweep")) {
		perfmgr_sweep_now(sm->perfmgr);
		console_printf(r, "perfmgr sweep requested%s", perfmgr_cfg(sm->perfmgr)->enabled ? "" :
			       " (the perfmgr is disabled: none will run)");
		return 0;
	}
	if (!strcmp(sub, "print_counters") || !strcmp(sub, "pc"))
		return print_ports(sm, argc, argv, r, 0);
	if (!strcmp(sub, "print_errors") || !strcmp(sub, "pe"))
		return print_ports(sm, argc, argv, r, 1);
	if (!strcmp(sub, "clear_counters")) {
		perfmgr_clear_counters(sm->perfmgr);
		console_printf(r, "perfmgr running totals cleared");
		return 0;
	}
	if (!strcmp(sub, "dump_counters"))
		return dump_counters(sm, argc, argv, r);
	console_printf(r, "error: unknown perfmgr subcommand '%s' (status, enable, disable, sweep_time N, sweep, "
		       "print_counters [node [port]], print_errors [node [port]], clear_counters, dump_counters)", sub);
	return -EINVAL;
}

void console_perfmgr_register(void)
{
	console_command_add("perfmgr", "[status|enable|disable|sweep_time N|sweep|print_counters [node [port]]|"
			    "print_errors [node [port]]|clear_counters|dump_counters [mach]]",
			    "the performance manager: its state, switch it, the port counters it read", cmd_perfmgr);
}
