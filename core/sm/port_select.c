/* SPDX-License-Identifier: BSD-2-Clause */
/* port_select.c - chooses the local IB port the SM binds to: -g GUID, -g 0 (list and ask),
 * or the first CA port in INIT/ARMED/ACTIVE, else the first IB port, whose link the SM then
 * waits for (as OpenSM does); a clear hint when there is no IB port at all. */
#include <endian.h>
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "mad/smp.h"
#include "sm/port_select.h"

#define LINK_POLL_MS 1000 /* the local port's state is read this often while its link is down */

static const char *state_name(int state)
{
	static const char *names[] = { "?", "DOWN", "INIT", "ARMED", "ACTIVE" };
	return state >= 1 && state <= 4 ? names[state] : "?";
}


static int list_ports(struct local_port *out, int max)
{
	char names[UMAD_MAX_DEVICES][UMAD_CA_NAME_LEN];
	int n = umad_get_cas_names(names, UMAD_MAX_DEVICES);
	int k = 0;
	for (int i = 0; i < n && k < max; i++) {
		umad_ca_t ca;
		if (umad_get_ca(names[i], &ca) < 0)
			continue;
		for (int p = 1; p <= ca.numports && k < max; p++) {
			umad_port_t *up = ca.ports[p];
			if (!up || !strcmp(up->link_layer, "Ethernet"))
				continue;
			g_strlcpy(out[k].ca, names[i], sizeof(out[k].ca));
			out[k].port = p;
			out[k].guid = be64toh(up->port_guid);
			out[k].state = up->state;
			k++;
		}
		umad_release_ca(&ca);
	}
	return k;
}

int choose_port(struct sm_options *o, struct local_port *chosen)
{
	struct local_port ports[64];
	int n = list_ports(ports, 64);
	if (n <= 0) {
		LOG_SYS_E("PORT-0004", "no InfiniBand port found on this machine. To use a simulated "
			  "fabric, start ibsim and run ibsm with LD_PRELOAD=/usr/lib/x86_64-linux-gnu/"
			  "umad2sim/libumad2sim.so (Debian packages ibsim-utils, libumad2sim0), or route "
			  "a fabric file offline with --fabric FILE");
		return -1;
	}
	if (o->guid_given && o->guid == 0) {
		printf("Available ports:\n");
		for (int i = 0; i < n; i++)
			printf("  %d: %s port %d GUID 0x%016" PRIx64 " %s\n", i + 1, ports[i].ca,
			       ports[i].port, ports[i].guid, state_name(ports[i].state));
		printf("Enter choice (1-%d): ", n);
		fflush(stdout);
		char line[64];
		if (!fgets(line, sizeof(line), stdin)) {
			LOG_SYS_E("PORT-0005", "-g 0: no choice read");
			return -1;
		}
		int c = atoi(line);
		if (c < 1 || c > n) {
			LOG_SYS_E("PORT-0005", "-g 0: invalid choice '%s'", g_strstrip(line));
			return -1;
		}
		*chosen = ports[c - 1];
		return 0;
	}
	if (o->guid_given) {
		for (int i = 0; i < n; i++)
			if (ports[i].guid == o->guid) {
				*chosen = ports[i];
				return 0;
			}
		GString *have = g_string_new(NULL);
		for (int i = 0; i < n; i++)
			g_string_append_printf(have, "%s%s port %d GUID 0x%016" PRIx64, i ? ", " : "",
					       ports[i].ca, ports[i].port, ports[i].guid);
		LOG_SYS_E("PORT-0006", "-g 0x%016" PRIx64 ": no local port has this GUID; local ports: %s",
			  o->guid, have->str);
		g_string_free(have, TRUE);
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (port_link_up(ports[i].state)) {
			*chosen = ports[i];
			return 0;
		}
	*chosen = ports[0]; /* every link is down: the first port, whose link port_wait_link() awaits */
	return 0;
}

struct link_probe {
	int done, status, state;
};

static void on_local_portinfo(struct transport *t, const struct smp_req *r, int status,
			      const uint8_t *data, void *ctx)
{
	(void)t; (void)r;
	struct link_probe *p = ctx;
	p->done = 1;
	p->status = status;
	if (status == 0)
		p->state = (int)mad_get_field((void *)data, 0, IB_PORT_STATE_F);
}

/* The local port's state from its own SMA: a 0-hop directed-route PortInfo Get, which the
 * HCA answers whatever its link does (sysfs may be a snapshot, e.g. under umad2sim).
 * IBSM_STATE_* or 0 when unanswered. */
static int read_local_state(struct transport *t, const struct local_port *lp)
{
	struct link_probe p = { 0 };
	struct smp_req r;
	smp_req_init(&r, IB_MAD_METHOD_GET, IB_ATTR_PORT_INFO, (uint32_t)lp->port, on_local_portinfo, &p, 0);
	transport_submit(t, &r);
	transport_drain(t, NULL); /* to its end (p is ours): one local SMP, answered or timed out */
	return p.done && p.status == 0 ? p.state : 0;
}

int port_wait_link(struct transport *t, const struct local_port *lp, volatile int *stop)
{
	int state = read_local_state(t, lp);
	if (port_link_up(state))
		return 0;
	LOG_I("PORT-0001", "the link of %s port %d (GUID 0x%016" PRIx64 ") is down (%s): waiting for it "
	      "to come up", lp->ca, lp->port, lp->guid, state ? state_name(state) : "its PortInfo unanswered");
	gint64 t0 = g_get_monotonic_time();
	while (!*stop) {
		/* serve what comes in (SMInfo of another SM) while waiting; a signal ends it at once */
		for (int waited = 0; waited < LINK_POLL_MS && !*stop; waited += 100)
			transport_poll(t, 100, 0);
		if (*stop)
			break;
		state = read_local_state(t, lp);
		if (port_link_up(state)) {
			LOG_I("PORT-0002", "the link of %s port %d is up (%s) after %.0f s: bringing the "
			      "subnet up", lp->ca, lp->port, state_name(state),
			      (double)(g_get_monotonic_time() - t0) / 1e6);
			return 0;
		}
	}
	LOG_I("PORT-0003", "stop signal while waiting for the link of %s port %d", lp->ca, lp->port);
	return 1;
}

