/* SPDX-License-Identifier: BSD-2-Clause */
/* port_select.c - chooses the local IB port the SM binds to: -g GUID, -g 0 (list and ask),
 * or the first CA port in INIT/ARMED/ACTIVE; a clear hint when there is no IB port at all. */
#include <endian.h>
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sm/port_select.h"


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
		fprintf(stderr, "ibsm: no InfiniBand port found on this machine.\n"
			"      To use a simulated fabric, start ibsim and run ibsm with\n"
			"      LD_PRELOAD=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so\n"
			"      (Debian packages ibsim-utils, libumad2sim0), or route a fabric\n"
			"      file offline with --fabric FILE.\n");
		return -1;
	}
	static const char *states[] = { "?", "DOWN", "INIT", "ARMED", "ACTIVE" };
	if (o->guid_given && o->guid == 0) {
		printf("Available ports:\n");
		for (int i = 0; i < n; i++)
			printf("  %d: %s port %d GUID 0x%016" PRIx64 " %s\n", i + 1, ports[i].ca,
			       ports[i].port, ports[i].guid,
			       ports[i].state >= 1 && ports[i].state <= 4 ? states[ports[i].state] : "?");
		printf("Enter choice (1-%d): ", n);
		fflush(stdout);
		char line[64];
		if (!fgets(line, sizeof(line), stdin)) {
			fprintf(stderr, "ibsm: no choice read\n");
			return -1;
		}
		int c = atoi(line);
		if (c < 1 || c > n) {
			fprintf(stderr, "ibsm: invalid choice '%s'\n", g_strstrip(line));
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
		fprintf(stderr, "ibsm: -g 0x%016" PRIx64 ": no local port has this GUID; local ports:\n", o->guid);
		for (int i = 0; i < n; i++)
			fprintf(stderr, "  %s port %d GUID 0x%016" PRIx64 "\n", ports[i].ca, ports[i].port,
				ports[i].guid);
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (ports[i].state >= 2 && ports[i].state <= 4) {
			*chosen = ports[i];
			return 0;
		}
	fprintf(stderr, "ibsm: no local port is in INIT, ARMED or ACTIVE state (is the link up?)\n");
	return -1;
}

