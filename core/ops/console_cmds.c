/* SPDX-License-Identifier: BSD-2-Clause */
/* console_cmds.c - the console's built-in commands: those of OpenSM 3.3.23's console that make
 * sense for ibsm (help, version, status, loglevel, priority, resweep, reroute, sweep,
 * portstatus, switchbalance, lidbalance, dump_conf, update_desc, querylid, dump_portguid,
 * logflush, quit). They run on the main
 * thread from the event loop's tick, possibly while a sweep waits for SMPs: they read what the
 * SM holds (generations by reference) and ask the loop for sweeps; they never sweep themselves. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "config/keys.h"
#include "ops/console.h"
#include "ops/console_int.h"
#include "sm/loop.h"
#include "sm/sminfo.h"
#include "sm/sweep.h"

static const char *sm_state_name(int s)
{
	switch (s) {
	case IB_SM_MASTER: return "MASTER";
	case IB_SM_STANDBY: return "STANDBY";
	case IB_SM_DISCOVERING: return "DISCOVERING";
	case IB_SM_NOTACTIVE: return "NOTACTIVE";
	default: return "UNKNOWN";
	}
}

static const char *result_name(int r)
{
	switch (r) {
	case SWEEP_UP: return "SUBNET UP";
	case SWEEP_STANDBY: return "STANDBY";
	case SWEEP_INCOMPLETE: return "incomplete";
	case SWEEP_INACTIVE: return "NOTACTIVE";
	case -1: return "failed";
	default: return "none yet";
	}
}

/* A number as OpenSM's console reads one (decimal, 0x or x hex): 0 or -1. */
static int parse_num(const char *s, unsigned long long max, unsigned long long *out)
{
	if (!s || !*s)
		return -1;
	if (s[0] == 'x' || s[0] == 'X') {
		char *tmp = g_strconcat("0x", s + 1, NULL);
		long long n;
		int rc = config_parse_number(tmp, 0, &n, out);
		g_free(tmp);
		return rc < 0 || *out > max ? -1 : 0;
	}
	long long n;
	if (config_parse_number(s, 0, &n, out) < 0 || *out > max)
		return -1;
	return 0;
}

static int usage_error(struct console_reply *r, const char *name, const char *usage)
{
	console_printf(r, "error: usage: %s %s", name, usage);
	return -EINVAL;
}

/* ---- help, version, quit ---- */

static int cmd_help(struct sm *sm, int argc, char **argv, struct console_reply *r)
{
	(void)sm;
	const char *name, *usage, *help;
	GString *arr = g_string_new("[");
	int found = 0;
	if (argc == 1)
		console_printf(r, "Commands (json CMD ...: the reply as a JSON object):");
	for (guint i = 0; console_command_at(i, &name, &usage, &help) == 0; i++) {
		if (argc > 1 && strcmp(argv[1], name))
			continue;
		found = 1;
		char *syn = *usage ? g_strdup_printf("%s %s", name, usage) : g_strdup(name);
		console_printf(r, "  %-36s %s", syn, help);
		if (arr->len > 1)
			g_string_append_c(arr, ',');
		console_json_escape(arr, name);
		g_free(syn);
	}
	g_string_append_c(arr, ']');
	console_json_raw(r, "commands", arr->str);
	g_string_free(arr, TRUE);
	if (!found) {
		console_printf(r, "error: no command '%s' (help lists them)", argv[1]);
		return -ENOENT;
	}
	return 0;
}

static int cmd_version(struct sm *sm, int argc, char **argv, struct console_reply *r)
{
	(void)sm; (void)argc; (void)argv;
	console_printf(r, "ibsm %s", console_version());
	console_json_str(r, "version", console_version());
	return 0;
}

static int cmd_quit(struct sm *sm, int argc, char **argv, struct console_reply *r)
{
	(void)sm; (void)argc; (void)argv; (void)r;
	return 0; /* the server closes the connection after the reply */
}

/* ---- status ---- */

static int cmd_status(struct sm *sm, int argc, char **argv, struct console_reply *r)
{
	(void)argc; (void)argv;
	const struct loop_counts *lc = loop_counts();
	double now = phase_now();
	console_printf(r, "   ibsm version         : %s", console_version());
	console_printf(r, "   SM state             : %s", sm_state_name(sm->state));
	console_printf(r, "   SM priority          : %u", sm->opt->sm_priority);
	console_printf(r, "   SM port GUID         : 0x%016" PRIx64, sm->port_guid);
	if (sm->state == IB_SM_STANDBY && sm->master_guid)
		console_printf(r, "   Master               : 0x%016" PRIx64, sm->master_guid);
	console_printf(r, "   Subnet               : %s", sm->subnet_up ? "SUBNET UP" : "not up");
	console_printf(r, "   Heavy sweeps         : %" PRIu64 " (%" PRIu64 " up, %" PRIu64 " standby, %" PRIu64
		       " incomplete, %" PRIu64 " failed)", lc->heavy, lc->heavy_by_result[SWEEP_UP],
		       lc->heavy_by_result[SWEEP_STANDBY], lc->heavy_by_result[SWEEP_INCOMPLETE], lc->heavy_failed);
	console_printf(r, "   Light sweeps         : %" PRIu64 " (%" PRIu64 " found a change)", lc->light,
		       lc->light_changes);
	if (lc->last_heavy_at > 0)
		console_printf(r, "   Last heavy sweep     : %s, %.3f s, %.1f s ago", result_name(lc->last_result),
			       lc->last_heavy_seconds, now - lc->last_heavy_at);
	else
		console_printf(r, "   Last heavy sweep     : none yet");
	console_printf(r, "   Sweep in progress    : %s", loop_in_sweep() ? "yes" : "no");
	console_printf(r, "   Sweeping enabled     : %s", loop_sweeping(sm) ? "yes" : "no (console `sweep off`)");
	console_printf(r, "   Sweep interval (s)   : %d", sm->opt->sweep_interval);
	console_printf(r, "   Fabric               : %u nodes, %u switches, max LID %u, LMC %u",
		       sm->summary_nodes, sm->summary_switches, sm->summary_max_lid, sm->opt->lmc);
	console_printf(r, "   Routing engine       : %s", sm->summary_engine[0] ? sm->summary_engine : "-");
	console_printf(r, "   Configured engines   : %s", sm->opt->routing_engine);
	console_printf(r, "   ActCount             : %u", sminfo_act_count(sm));
	console_printf(r, "   Log flags            : 0x%02x", sm->opt->debug_flags);
	console_json_str(r, "version", console_version());
	console_json_str(r, "state", sm_state_name(sm->state));
	console_json_int(r, "priority", sm->opt->sm_priority);
	char guid[24];
	g_snprintf(guid, sizeof(guid), "0x%016" PRIx64, sm->port_guid);
	console_json_str(r, "port_guid", guid);
	g_snprintf(guid, sizeof(guid), "0x%016" PRIx64, sm->master_guid);
	console_json_str(r, "master_guid", sm->state == IB_SM_STANDBY ? guid : NULL);
	console_json_bool(r, "subnet_up", sm->subnet_up);
	console_json_int(r, "heavy_sweeps", (int64_t)lc->heavy);
	console_json_int(r, "heavy_sweeps_up", (int64_t)lc->heavy_by_result[SWEEP_UP]);
	console_json_int(r, "heavy_sweeps_incomplete", (int64_t)lc->heavy_by_result[SWEEP_INCOMPLETE]);
	console_json_int(r, "heavy_sweeps_failed", (int64_t)lc->heavy_failed);
	console_json_int(r, "light_sweeps", (int64_t)lc->light);
	console_json_str(r, "last_sweep_result", result_name(lc->last_result));
	console_json_double(r, "last_sweep_seconds", lc->last_heavy_seconds);
	console_json_double(r, "last_sweep_age_seconds", lc->last_heavy_at > 0 ? now - lc->last_heavy_at : -1);
	console_json_bool(r, "sweep_in_progress", loop_in_sweep());
	console_json_bool(r, "sweeping", loop_sweeping(sm));
	console_json_int(r, "sweep_interval", sm->opt->sweep_interval);
	console_json_int(r, "nodes", sm->summary_nodes);
	console_json_int(r, "switches", sm->summary_switches);
	console_json_int(r, "max_lid", sm->summary_max_lid);
	console_json_int(r, "lmc", sm->opt->lmc);
	console_json_str(r, "engine", sm->summary_engine);
	console_json_int(r, "act_count", sminfo_act_count(sm));
	console_json_int(r, "log_flags", sm->opt->debug_flags);
	if (sm->t) {
		const struct transport_stats *s = transport_stats(sm->t);
		console_printf(r, "   SMPs                 : %" PRIu64 " sent, %" PRIu64 " received, %" PRIu64
			       " retried, %" PRIu64 " timed out", s->sent, s->received, s->retries, s->timeouts);
		console_json_int(r, "smps_sent", (int64_t)s->sent);
		console_json_int(r, "smps_received", (int64_t)s->received);
		console_json_int(r, "smps_retried", (int64_t)s->retries);
		console_json_int(r, "smps_timed_out", (int64_t)s->timeouts);
	}
	return 0;
}

/* ---- loglevel, priority ---- */

static const struct { const char *name; unsigned bit; } log_bits[] = {
	{ "error", 0x01 }, { "info", 0x02 }, { "verbose", 0x04 }, { "debug", 0x08 },
	{ "funcs", 0x10 }, { "frames", 0x20 }, { "routing", 0x40 }, { "sys", 0x80 },
};

static int cmd_loglevel(struct sm *sm, int argc, char **argv, struct console_reply *r)
{
	if (argc > 2)
		return usage_error(r, argv[0], "[FLAGS]");
	if (argc == 2) {
		unsigned long long v = 0;
		if (parse_num(argv[1], 0xff, &v) < 0) {
			/* names: error,info,... (OpenSM takes numbers only) */
			char **names = g_strsplit(argv[1], ",", -1);
			v = 0;
			for (char **n = names; *n; n++) {
				size_t i;
				for (i = 0; i < G_N_ELEMENTS(log_bits); i++)
					if (!g_ascii_strcasecmp(*n, log_bits[i].name))
						break;
				if (i == G_N_ELEMENTS(log_bits)) {
					console_printf(r, "error: '%s' is not a log level: a number 0-0xff (0x1 error, 0x2 "
						       "info, 0x4 verbose, 0x8 debug, 0x40 routing) or names joined by ','", *n);
					g_strfreev(names);
					return -EINVAL;
				}
				v |= log_bits[i].bit;
			}
			g_strfreev(names);
		}
		unsigned old = sm->opt->debug_flags;
		sm->opt->debug_flags = (uint32_t)v;
		log_set_flags((unsigned)v);
		LOG_I("CCM-0001", "console: log flags 0x%02x -> 0x%02x", old, (unsigned)v);
		console_printf(r, "Setting log level to 0x%02x (was 0x%02x)", (unsigned)v, old);
	} else {
		console_printf(r, "Current log level is 0x%02x", sm->opt->debug_flags);
	}
	GString *names = g_string_new("[");
	for (size_t i = 0; i < G_N_ELEMENTS(log_bits); i++)
		if (sm->opt->debug_flags & log_bits[i].bit) {
			if (names->len > 1)
				g_string_append_c(names, ',');
			console_json_escape(names, log_bits[i].name);
		}
	g_string_append_c(names, ']');
	console_json_int(r, "log_flags", sm->opt->debug_flags);
	console_json_raw(r, "levels", names->str);
	g_string_free(names, TRUE);
	return 0;
}

static int cmd_priority(struct sm *sm, int argc, char **argv, struct console_reply *r)
{
	if (argc > 2)
		return usage_error(r, argv[0], "[0-15]");
	if (argc == 2) {
		unsigned long long v;
		if (parse_num(argv[1], 15, &v) < 0) {
			console_printf(r, "error: invalid sm-priority '%s'; must be between 0 and 15", argv[1]);
			return -EINVAL;
		}
		unsigned old = sm->opt->sm_priority;
		sm->opt->sm_priority = (uint8_t)v;
		LOG_I("CCM-0002", "console: SM priority %u -> %u", old, (unsigned)v);
		console_printf(r, "Setting sm-priority to %u (was %u)", (unsigned)v, old);
		/* SMInfo answers carry it from now on; a light sweep asks the other SMs again */
		if (old != v && sm->state == IB_SM_MASTER)
			loop_request(sm, LOOP_REQ_LIGHT);
	} else {
		console_printf(r, "Current sm-priority is %u", sm->opt->sm_priority);
	}
	console_json_int(r, "priority", sm->opt->sm_priority);
	return 0;
}

/* ---- resweep, reroute, sweep, update_desc ---- */

static int cmd_resweep(struct sm *sm, int argc, char **argv, struct console_reply *r)
{
	int heavy = 0;
	if (argc > 2 || (argc == 2 && strcmp(argv[1], "heavy") && strcmp(argv[1], "light")))
		return usage_error(r, argv[0], "[heavy|light]");
	heavy = argc == 2 && !strcmp(argv[1], "heavy");
	if (!heavy && sm->state != IB_SM_MASTER) {
		console_printf(r, "error: a light sweep is a master's; this SM is %s (resweep heavy sweeps)",
			       sm_state_name(sm->state));
		return -EAGAIN;
	}
	loop_request(sm, heavy ? LOOP_REQ_HEAVY : LOOP_REQ_LIGHT);
	LOG_I("CCM-0003", "console: %s sweep requested", heavy ? "heavy" : "light");
	console_printf(r, "%s sweep requested (heavy sweeps so far: %" PRIu64 ")", heavy ? "heavy" : "light",
		       loop_counts()->heavy);
	console_json_str(r, "sweep", heavy ? "heavy" : "light");
	console_json_int(r, "heavy_sweeps", (int64_t)loop_counts()->heavy);
	return 0;
}

static int cmd_reroute(struct sm *sm, int argc, char **argv, struct console_reply *r)
{
	if (argc > 1)
		return usage_error(r, argv[0], "");
	loop_request(sm, LOOP_REQ_REROUTE);
	LOG_I("CCM-0004", "console: reroute requested (a heavy sweep that routes anew)");
	console_printf(r, "reroute requested: a heavy sweep computes the routes anew");
	console_json_int(r, "heavy_sweeps", (int64_t)loop_counts()->heavy);
	return 0;
}

static int cmd_sweep(struct sm *sm, int argc, char **argv, struct console_reply *r)
{
	if (argc > 2 || (argc == 2 && strcmp(argv[1], "on") && strcmp(argv[1], "off")))
		return usage_error(r, argv[0], "[on|off]");
	if (argc == 2) {
		int on = !strcmp(argv[1], "on");
		int was = loop_set_sweeping(sm, on);
		if (was != on)
			LOG_I("CCM-0005", "console: sweeping %s", on ? "enabled" : "disabled (no periodic or trap sweeps)");
	}
	console_printf(r, "sweeping %s", loop_sweeping(sm) ? "enabled" : "disabled");
	console_json_bool(r, "sweeping", loop_sweeping(sm));
	return 0;
}

static int cmd_update_desc(struct sm *sm, int argc, char **argv, struct console_reply *r)
{
	if (argc > 1)
		return usage_error(r, argv[0], "");
	loop_request(sm, LOOP_REQ_UPDATE_DESC);
	LOG_I("CCM-0006", "console: NodeDescriptions to be read again (a heavy sweep)");
	console_printf(r, "every NodeDescription is read again at the next heavy sweep (requested)");
	return 0;
}

/* ---- portstatus ---- */

static uint32_t pi_field(const struct fabric *f, uint32_t port, enum MAD_FIELDS fld)
{
	return (uint32_t)mad_get_field((void *)f->px[port].portinfo, 0, fld);
}

struct port_list {
	GString *text, *json;
	unsigned n;
};

static void port_list_add(struct port_list *l, const struct fabric *f, uint32_t port)
{
	const struct ibsm_port *p = &f->ports[port];
	const struct ibsm_node *n = &f->nodes[p->node];
	g_string_append_printf(l->text, "      0x%016" PRIx64 " %u (%s)\n", n->guid, p->num, n->desc);
	if (l->json->len > 1)
		g_string_append_c(l->json, ',');
	g_string_append_printf(l->json, "{\"node_guid\":\"0x%016" PRIx64 "\",\"port\":%u,\"desc\":", n->guid, p->num);
	console_json_escape(l->json, n->desc);
	g_string_append_c(l->json, '}');
	l->n++;
}

static int cmd_portstatus(struct sm *sm, int argc, char **argv, struct console_reply *r)
{
	int type = 0;
	if (argc > 2)
		return usage_error(r, argv[0], "[ca|switch|router]");
	if (argc == 2) {
		type = !strcmp(argv[1], "ca") ? IBSM_CA : !strcmp(argv[1], "switch") ? IBSM_SWITCH :
		       !strcmp(argv[1], "router") ? IBSM_ROUTER : -1;
		if (type < 0)
			return usage_error(r, argv[0], "[ca|switch|router]");
	}
	struct fabric *f = sm->fabric ? fabric_ref(sm->fabric) : NULL;
	if (!f) {
		console_printf(r, "error: no fabric discovered yet");
		return -EAGAIN;
	}
	uint64_t nodes = 0, ports = 0, down = 0, active = 0, other = 0;
	uint64_t width[5] = { 0 }, speed[7] = { 0 }; /* 1x 4x 8x 12x ?; sdr ddr qdr fdr edr hdr ? */
	struct port_list dis = { g_string_new(NULL), g_string_new("["), 0 };
	struct port_list rw = { g_string_new(NULL), g_string_new("["), 0 };
	struct port_list rs = { g_string_new(NULL), g_string_new("["), 0 };
	for (uint32_t i = 0; i < f->pub.n_nodes; i++) {
		const struct ibsm_node *n = &f->nodes[i];
		if (type && n->type != type)
			continue;
		nodes++;
		/* extended speeds: switch port 0's CapabilityMask, else the port's own */
		uint32_t p0 = n->port0;
		for (uint32_t pn = 1; pn <= n->nports; pn++) {
			uint32_t pid = n->port0 + pn;
			const struct ibsm_port *p = &f->ports[pid];
			if (!(p->flags & IBSM_PORT_PRESENT) || !f->px[pid].have_portinfo)
				continue;
			ports++;
			if (p->state == IBSM_STATE_DOWN)
				down++;
			else if (p->state == IBSM_STATE_ACTIVE)
				active++;
			else
				other++;
			if (f->px[pid].phys_state == 3) /* PortPhysicalState Disabled */
				port_list_add(&dis, f, pid);
			if (p->state == IBSM_STATE_DOWN)
				continue; /* width and speed of a link that is down mean nothing */
			uint32_t we = pi_field(f, pid, IB_PORT_LINK_WIDTH_ENABLED_F);
			uint32_t wa = p->width;
			width[wa == 1 ? 0 : wa == 2 ? 1 : wa == 4 ? 2 : wa == 8 ? 3 : 4]++;
			if ((we ^ wa) > wa) /* a wider width is enabled than the one active */
				port_list_add(&rw, f, pid);
			uint32_t se = pi_field(f, pid, IB_PORT_LINK_SPEED_ENABLED_F);
			uint32_t sa = p->speed;
			int reduced = (se ^ sa) > sa;
			int k = sa == 1 ? 0 : sa == 2 ? 1 : sa == 4 ? 2 : 6;
			uint32_t cap_port = (n->type == IBSM_SWITCH && f->px[p0].have_portinfo) ? p0 : pid;
			if (sa == 4 && (pi_field(f, cap_port, IB_PORT_CAPMASK_F) & (1u << 14))) { /* IsExtendedSpeedsSupported */
				uint32_t xa = pi_field(f, pid, IB_PORT_LINK_SPEED_EXT_ACTIVE_F);
				uint32_t xe = pi_field(f, pid, IB_PORT_LINK_SPEED_EXT_ENABLED_F);
				if (xa) {
					k = xa == 1 ? 3 : xa == 2 ? 4 : xa == 4 ? 5 : 6;
					reduced = xe != 0 && xe != 0x1e && xe != 0x1f && (xe ^ xa) > xa;
				}
			}
			speed[k]++;
			if (reduced)
				port_list_add(&rs, f, pid);
		}
	}
	fabric_unref(f);
	console_printf(r, "\"%s\" port status:", type == IBSM_CA ? "CA" : type == IBSM_SWITCH ? "Switch" :
		       type == IBSM_ROUTER ? "Router" : "ALL");
	console_printf(r, "   %" PRIu64 " port(s) scanned on %" PRIu64 " nodes", ports, nodes);
	if (down)
		console_printf(r, "   %" PRIu64 " down", down);
	if (active)
		console_printf(r, "   %" PRIu64 " active", active);
	if (other)
		console_printf(r, "   %" PRIu64 " init or armed", other);
	static const char *wn[] = { "1X", "4X", "8X", "12X", "unknown width" };
	static const char *sn[] = { "2.5 Gbps", "5.0 Gbps", "10.0 Gbps", "14.0625 Gbps", "25.78125 Gbps",
				    "53.125 Gbps", "unknown speed" };
	for (int i = 0; i < 5; i++)
		if (width[i])
			console_printf(r, "   %" PRIu64 " at %s", width[i], wn[i]);
	for (int i = 0; i < 7; i++)
		if (speed[i])
			console_printf(r, "   %" PRIu64 " at %s", speed[i], sn[i]);
	if (dis.n + rs.n + rw.n)
		console_printf(r, "\nPossible issues:");
	if (dis.n)
		console_printf(r, "   %u disabled\n%s", dis.n, dis.text->str);
	if (rs.n)
		console_printf(r, "   %u with reduced speed\n%s", rs.n, rs.text->str);
	if (rw.n)
		console_printf(r, "   %u with reduced width\n%s", rw.n, rw.text->str);
	console_json_str(r, "type", type == IBSM_CA ? "ca" : type == IBSM_SWITCH ? "switch" :
			 type == IBSM_ROUTER ? "router" : "all");
	console_json_int(r, "nodes", (int64_t)nodes);
	console_json_int(r, "ports", (int64_t)ports);
	console_json_int(r, "down", (int64_t)down);
	console_json_int(r, "active", (int64_t)active);
	static const char *wk[] = { "1x", "4x", "8x", "12x", "unknown" };
	static const char *sk[] = { "sdr", "ddr", "qdr", "fdr", "edr", "hdr", "unknown" };
	GString *o = g_string_new("{");
	for (int i = 0; i < 5; i++)
		g_string_append_printf(o, "%s\"%s\":%" PRIu64, i ? "," : "", wk[i], width[i]);
	g_string_append_c(o, '}');
	console_json_raw(r, "width", o->str);
	g_string_assign(o, "{");
	for (int i = 0; i < 7; i++)
		g_string_append_printf(o, "%s\"%s\":%" PRIu64, i ? "," : "", sk[i], speed[i]);
	g_string_append_c(o, '}');
	console_json_raw(r, "speed", o->str);
	g_string_free(o, TRUE);
	struct port_list *lists[] = { &dis, &rs, &rw };
	const char *keys[] = { "disabled", "reduced_speed", "reduced_width" };
	for (int i = 0; i < 3; i++) {
		g_string_append_c(lists[i]->json, ']');
		console_json_raw(r, keys[i], lists[i]->json->str);
		g_string_free(lists[i]->text, TRUE);
		g_string_free(lists[i]->json, TRUE);
	}
	return 0;
}

/* ---- switchbalance, lidbalance: from the LFTs in force ---- */

static int parse_guid_arg(const char *s, uint64_t *guid)
{
	unsigned long long v;
	if (parse_num(s, UINT64_MAX, &v) < 0 || !v)
		return -1;
	*guid = v;
	return 0;
}

/* The switch id of guid in r's generation, or IBSM_NONE. */
static uint32_t switch_of(const struct routing_result *r, uint64_t guid)
{
	uint32_t n = fabric_node_by_guid(r->f, guid);
	return n == IBSM_NONE ? IBSM_NONE : r->f->nodes[n].sw;
}

/* Is port pn of switch node n linked to another switch? */
static int to_switch(const struct fabric *f, const struct ibsm_node *n, uint32_t pn)
{
	uint32_t peer = f->ports[n->port0 + pn].peer;
	return peer != IBSM_NONE && f->nodes[f->ports[peer].node].type == IBSM_SWITCH;
}

static void balance_one(const struct routing_result *rr, uint32_t sw, int verbose, struct console_reply *r,
			GString *json)
{
	const struct fabric *f = rr->f;
	const struct ibsm_node *n = &f->nodes[f->switches[sw].node];
	const uint8_t *row = rr->lft + (size_t)sw * rr->stride;
	uint32_t count[256] = { 0 };
	/* the LIDs of CA and router ports (switch LIDs are not counted, as OpenSM does not) */
	for (uint32_t lid = 1; lid < rr->stride && lid <= f->pub.max_lid; lid++) {
		uint32_t pid = f->lid_port[lid];
		if (pid == IBSM_NONE || f->nodes[f->ports[pid].node].type == IBSM_SWITCH)
			continue;
		if (row[lid] != IBSM_NO_PORT)
			count[row[lid]]++;
	}
	uint32_t mn = UINT32_MAX, mx = 0;
	for (uint32_t pn = 1; pn <= n->nports; pn++) {
		if (!to_switch(f, n, pn))
			continue;
		mn = MIN(mn, count[pn]);
		mx = MAX(mx, count[pn]);
	}
	if (mx == 0 && mn == UINT32_MAX)
		mn = 0;
	int unbalanced = mx - mn > 1;
	if (json->len > 1)
		g_string_append_c(json, ',');
	g_string_append_printf(json, "{\"guid\":\"0x%016" PRIx64 "\",\"desc\":", n->guid);
	console_json_escape(json, n->desc);
	g_string_append_printf(json, ",\"unbalanced\":%s,\"min\":%u,\"max\":%u,\"ports\":{",
			       unbalanced ? "true" : "false", mn, mx);
	int first = 1;
	for (uint32_t pn = 1; pn <= n->nports; pn++)
		if (to_switch(f, n, pn)) {
			g_string_append_printf(json, "%s\"%u\":%u", first ? "" : ",", pn, count[pn]);
			first = 0;
		}
	g_string_append(json, "}}");
	if (!verbose && !unbalanced)
		return;
	console_printf(r, "%s: 0x%016" PRIx64 " (%s)", unbalanced ? "Unbalanced Switch" : "Switch", n->guid, n->desc);
	for (uint32_t pn = 1; pn <= n->nports; pn++)
		if (to_switch(f, n, pn))
			console_printf(r, "Port %u: %u", pn, count[pn]);
}

static struct routing_result *live_routes(struct sm *sm, struct console_reply *r)
{
	if (!sm->live || !sm->live->lft) {
		console_printf(r, "error: no routes in force yet");
		return NULL;
	}
	return routing_result_ref(sm->live);
}

static int cmd_switchbalance(struct sm *sm, int argc, char **argv, struct console_reply *r)
{
	int verbose = 0, a = 1;
	uint64_t guid = 0;
	if (a < argc && !strcmp(argv[a], "verbose"))
		verbose = 1, a++;
	if (a < argc && parse_guid_arg(argv[a++], &guid) < 0) {
		console_printf(r, "error: invalid guid '%s'", argv[a - 1]);
		return -EINVAL;
	}
	if (a < argc)
		return usage_error(r, argv[0], "[verbose] [guid]");
	struct routing_result *rr = live_routes(sm, r);
	if (!rr)
		return -EAGAIN;
	GString *json = g_string_new("[");
	int rc = 0;
	if (guid) {
		uint32_t sw = switch_of(rr, guid);
		if (sw == IBSM_NONE) {
			console_printf(r, "error: switch 0x%016" PRIx64 " not found", guid);
			rc = -ENOENT;
		} else {
			balance_one(rr, sw, verbose, r, json);
		}
	} else {
		for (uint32_t sw = 0; sw < rr->n_switches; sw++)
			balance_one(rr, sw, verbose, r, json);
	}
	g_string_append_c(json, ']');
	console_json_raw(r, "switches", json->str);
	g_string_free(json, TRUE);
	routing_result_unref(rr);
	return rc;
}

/* For each CA/router port: through which ports of switch sw, and to which neighbours, its
 * 2^LMC LIDs go; printed when uneven by more than one (OpenSM's lidbalance). */
static void lidbalance_one(const struct routing_result *rr, uint32_t sw, struct console_reply *r, unsigned *lines)
{
	const struct fabric *f = rr->f;
	const struct ibsm_node *n = &f->nodes[f->switches[sw].node];
	const uint8_t *row = rr->lft + (size_t)sw * rr->stride;
	for (uint32_t pid = 0; pid < f->pub.n_ports; pid++) {
		const struct ibsm_port *p = &f->ports[pid];
		const struct ibsm_node *pnode = &f->nodes[p->node];
		if (pnode->type == IBSM_SWITCH || !p->lid || !(p->flags & IBSM_PORT_PRESENT))
			continue;
		uint32_t port_count[256] = { 0 };
		uint32_t rem_node[256], rem_count[256], n_rem = 0;
		uint32_t nl = 1u << p->lmc;
		for (uint32_t k = 0; k < nl; k++) {
			uint32_t lid = p->lid + k;
			if (lid >= rr->stride || row[lid] == IBSM_NO_PORT || row[lid] > n->nports)
				continue;
			uint32_t peer = f->ports[n->port0 + row[lid]].peer;
			if (peer == IBSM_NONE)
				continue;
			uint32_t rn = f->ports[peer].node, i;
			for (i = 0; i < n_rem && rem_node[i] != rn; i++)
				;
			if (i == n_rem) {
				rem_node[n_rem] = rn;
				rem_count[n_rem++] = 0;
			}
			rem_count[i]++;
			port_count[row[lid]]++;
		}
		if (!n_rem)
			continue;
		uint32_t rmin = UINT32_MAX, rmax = 0, pmin = UINT32_MAX, pmax = 0;
		for (uint32_t i = 0; i < n_rem; i++)
			rmin = MIN(rmin, rem_count[i]), rmax = MAX(rmax, rem_count[i]);
		for (uint32_t i = 1; i <= n->nports; i++)
			if (port_count[i])
				pmin = MIN(pmin, port_count[i]), pmax = MAX(pmax, port_count[i]);
		const char *kind = pnode->type == IBSM_CA ? "CA" : "Router";
		if (rmax - rmin > 1) {
			GString *g = g_string_new(NULL);
			for (uint32_t i = 0; i < n_rem; i++)
				g_string_append_printf(g, "Dest 0x%016" PRIx64 " (%s) - %u ", f->nodes[rem_node[i]].guid,
						       f->nodes[rem_node[i]].desc, rem_count[i]);
			console_printf(r, "Unbalanced Remote Forwarding: Switch 0x%016" PRIx64 " (%s): %s 0x%016" PRIx64
				       " (%s): %s", n->guid, n->desc, kind, pnode->guid, pnode->desc, g->str);
			g_string_free(g, TRUE);
			(*lines)++;
		}
		if (pmax - pmin > 1 && pmin != UINT32_MAX) {
			GString *g = g_string_new(NULL);
			for (uint32_t i = 1; i <= n->nports; i++)
				if (port_count[i])
					g_string_append_printf(g, "Port %u - %u: ", i, port_count[i]);
			console_printf(r, "Unbalanced Port Forwarding: Switch 0x%016" PRIx64 " (%s): %s 0x%016" PRIx64
				       " (%s): %s", n->guid, n->desc, kind, pnode->guid, pnode->desc, g->str);
			g_string_free(g, TRUE);
			(*lines)++;
		}
	}
}

static int cmd_lidbalance(struct sm *sm, int argc, char **argv, struct console_reply *r)
{
	uint64_t guid = 0;
	if (argc > 2)
		return usage_error(r, argv[0], "[switchguid]");
	if (argc == 2 && parse_guid_arg(argv[1], &guid) < 0) {
		console_printf(r, "error: invalid switchguid '%s'", argv[1]);
		return -EINVAL;
	}
	struct routing_result *rr = live_routes(sm, r);
	if (!rr)
		return -EAGAIN;
	unsigned lines = 0;
	int rc = 0;
	if (guid) {
		uint32_t sw = switch_of(rr, guid);
		if (sw == IBSM_NONE) {
			console_printf(r, "error: switchguid 0x%016" PRIx64 " not found", guid);
			rc = -ENOENT;
		} else {
			lidbalance_one(rr, sw, r, &lines);
		}
	} else {
		for (uint32_t sw = 0; sw < rr->n_switches; sw++)
			lidbalance_one(rr, sw, r, &lines);
	}
	if (!rc && !lines)
		console_printf(r, "LIDs are forwarded evenly (no port or neighbour more than one LID over another)");
	console_json_int(r, "unbalanced", lines);
	routing_result_unref(rr);
	return rc;
}

/* ---- querylid, dump_portguid, logflush ---- */

static const char *node_type_name(int t)
{
	return t == IBSM_CA ? "Channel Adapter" : t == IBSM_SWITCH ? "Switch" : t == IBSM_ROUTER ? "Router" : "?";
}

static const char *port_state_name(int s)
{
	switch (s) {
	case IBSM_STATE_DOWN: return "DOWN";
	case IBSM_STATE_INIT: return "INIT";
	case IBSM_STATE_ARMED: return "ARMED";
	case IBSM_STATE_ACTIVE: return "ACTIVE";
	default: return "?";
	}
}

static int cmd_querylid(struct sm *sm, int argc, char **argv, struct console_reply *r)
{
	unsigned long long lid;
	if (argc != 2 || parse_num(argv[1], 0xbfff, &lid) < 0 || !lid) {
		if (argc == 2)
			console_printf(r, "error: invalid lid '%s' (1-0xbfff)", argv[1]);
		return argc == 2 ? -EINVAL : usage_error(r, argv[0], "LID");
	}
	struct fabric *f = sm->fabric ? fabric_ref(sm->fabric) : NULL;
	if (!f) {
		console_printf(r, "error: no fabric discovered yet");
		return -EAGAIN;
	}
	uint32_t pid = lid <= f->pub.max_lid ? f->lid_port[lid] : IBSM_NONE;
	if (pid == IBSM_NONE) {
		console_printf(r, "error: LID %llu is not assigned", lid);
		fabric_unref(f);
		return -ENOENT;
	}
	const struct ibsm_port *p = &f->ports[pid];
	const struct ibsm_node *n = &f->nodes[p->node];
	console_printf(r, "Query results for LID %llu", lid);
	console_printf(r, "   Port GUID           : 0x%016" PRIx64, p->guid);
	console_printf(r, "   Node GUID           : 0x%016" PRIx64, n->guid);
	console_printf(r, "   Node Desc           : %s", n->desc);
	console_printf(r, "   Node Type           : %s", node_type_name(n->type));
	console_printf(r, "   Num Ports           : %u", n->nports);
	console_printf(r, "   Base LID, LMC       : %u, %u", p->lid, p->lmc);
	char g[24];
	g_snprintf(g, sizeof(g), "0x%016" PRIx64, p->guid);
	console_json_str(r, "port_guid", g);
	g_snprintf(g, sizeof(g), "0x%016" PRIx64, n->guid);
	console_json_str(r, "node_guid", g);
	console_json_str(r, "desc", n->desc);
	console_json_str(r, "type", n->type == IBSM_CA ? "ca" : n->type == IBSM_SWITCH ? "switch" : "router");
	console_json_int(r, "port", p->num);
	GString *ports = g_string_new("[");
	for (uint32_t pn = n->type == IBSM_SWITCH ? 0 : 1; pn <= n->nports; pn++) {
		const struct ibsm_port *q = &f->ports[n->port0 + pn];
		if (!(q->flags & IBSM_PORT_PRESENT))
			continue;
		uint32_t peer = q->peer;
		console_printf(r, "   Port %-3u            : %s%s%s", pn, port_state_name(q->state),
			       peer != IBSM_NONE ? " -> " : "", peer != IBSM_NONE ? f->nodes[f->ports[peer].node].desc : "");
		g_string_append_printf(ports, "%s{\"port\":%u,\"state\":\"%s\"}", ports->len > 1 ? "," : "", pn,
				       port_state_name(q->state));
	}
	g_string_append_c(ports, ']');
	console_json_raw(r, "ports", ports->str);
	g_string_free(ports, TRUE);
	fabric_unref(f);
	return 0;
}

static int cmd_dump_portguid(struct sm *sm, int argc, char **argv, struct console_reply *r)
{
	if (argc < 2)
		return usage_error(r, argv[0], "REGEXP...");
	if (!strcmp(argv[1], "file")) {
		console_printf(r, "error: dump_portguid does not write files here (redirect ibsm-cli's output)");
		return -EINVAL;
	}
	GPtrArray *res = g_ptr_array_new_with_free_func((GDestroyNotify)g_regex_unref);
	for (int i = 1; i < argc; i++) {
		GError *err = NULL;
		GRegex *re = g_regex_new(argv[i], G_REGEX_OPTIMIZE, 0, &err);
		if (!re) {
			console_printf(r, "error: cannot parse regular expression '%s': %s", argv[i], err->message);
			g_error_free(err);
			g_ptr_array_free(res, TRUE);
			return -EINVAL;
		}
		g_ptr_array_add(res, re);
	}
	struct fabric *f = sm->fabric ? fabric_ref(sm->fabric) : NULL;
	if (!f) {
		g_ptr_array_free(res, TRUE);
		console_printf(r, "error: no fabric discovered yet");
		return -EAGAIN;
	}
	GString *arr = g_string_new("[");
	for (uint32_t i = 0; i < f->pub.n_nodes; i++) {
		const struct ibsm_node *n = &f->nodes[i];
		guint k;
		for (k = 0; k < res->len; k++)
			if (g_regex_match(g_ptr_array_index(res, k), n->desc, 0, NULL))
				break;
		if (k == res->len)
			continue;
		/* the end ports: switch port 0, CA and router ports */
		for (uint32_t pn = n->type == IBSM_SWITCH ? 0 : 1; pn <= (n->type == IBSM_SWITCH ? 0u : n->nports); pn++) {
			const struct ibsm_port *p = &f->ports[n->port0 + pn];
			if (!(p->flags & IBSM_PORT_PRESENT) || !p->guid)
				continue;
			console_printf(r, "0x%016" PRIx64, p->guid);
			g_string_append_printf(arr, "%s\"0x%016" PRIx64 "\"", arr->len > 1 ? "," : "", p->guid);
		}
	}
	g_string_append_c(arr, ']');
	console_json_raw(r, "port_guids", arr->str);
	g_string_free(arr, TRUE);
	fabric_unref(f);
	g_ptr_array_free(res, TRUE);
	return 0;
}

static int cmd_logflush(struct sm *sm, int argc, char **argv, struct console_reply *r)
{
	(void)sm; (void)argc; (void)argv;
	console_printf(r, "every log line is written at once: nothing to flush");
	return 0;
}

/* ---- dump_conf ---- */

static int cmd_dump_conf(struct sm *sm, int argc, char **argv, struct console_reply *r)
{
	(void)argv;
	if (argc > 1)
		return usage_error(r, argv[0], "");
	size_t n;
	const struct config_key *ks = config_keys(&n);
	GString *obj = g_string_new("{");
	console_printf(r, "# ibsm %s: the configuration in force%s%s", console_version(),
		       sm->opt->config_file ? " (read from " : "", sm->opt->config_file ? sm->opt->config_file : "");
	if (sm->opt->config_file)
		console_printf(r, "#   (console changes since: priority, loglevel)");
	for (size_t i = 0; i < n; i++) {
		char *v = config_format(sm->opt, &ks[i]);
		console_printf(r, "%s %s", ks[i].key, v ? v : "(null)");
		if (obj->len > 1)
			g_string_append_c(obj, ',');
		console_json_escape(obj, ks[i].key);
		g_string_append_c(obj, ':');
		if (v)
			console_json_escape(obj, v);
		else
			g_string_append(obj, "null");
		g_free(v);
	}
	g_string_append_c(obj, '}');
	console_json_raw(r, "config", obj->str);
	g_string_free(obj, TRUE);
	return 0;
}

void console_builtin_register(void)
{
	console_command_add("help", "[command]", "the commands, or one command's usage", cmd_help);
	console_command_add("quit", "", "close this console connection (the SM runs on)", cmd_quit);
	console_command_add("exit", "", "the same as quit", cmd_quit);
	console_command_add("version", "", "ibsm's version", cmd_version);
	console_command_add("status", "", "SM state, priority, sweeps, fabric size, engine, SMP counts", cmd_status);
	console_command_add("loglevel", "[FLAGS]", "show or set the log flags (OpenSM's -D: 0x1 error, 0x2 info, "
			    "0x4 verbose, 0x8 debug, 0x40 routing; or names: info,verbose)", cmd_loglevel);
	console_command_add("priority", "[0-15]", "show or set the SM priority SMInfo answers", cmd_priority);
	console_command_add("resweep", "[heavy|light]", "ask for a sweep (default light)", cmd_resweep);
	console_command_add("reroute", "", "a heavy sweep that computes the routes anew", cmd_reroute);
	console_command_add("sweep", "[on|off]", "show, enable or inhibit sweeping (periodic, traps)", cmd_sweep);
	console_command_add("portstatus", "[ca|switch|router]", "summarize port states, widths, speeds, issues",
			    cmd_portstatus);
	console_command_add("switchbalance", "[verbose] [guid]", "CA LIDs routed per inter-switch port",
			    cmd_switchbalance);
	console_command_add("lidbalance", "[switchguid]", "uneven forwarding of a port's LIDs", cmd_lidbalance);
	console_command_add("dump_conf", "", "the configuration in force, one key per line", cmd_dump_conf);
	console_command_add("update_desc", "", "read every NodeDescription again (a heavy sweep)", cmd_update_desc);
	console_command_add("querylid", "LID", "the port and node a LID leads to, with its ports' states", cmd_querylid);
	console_command_add("dump_portguid", "REGEXP...", "port GUIDs of the nodes whose description matches",
			    cmd_dump_portguid);
	console_command_add("logflush", "", "flush the log (ibsm writes every line at once)", cmd_logflush);
}
