/* SPDX-License-Identifier: BSD-2-Clause */
/* notify.c - systemd's readiness protocol (sd_notify(3)): one datagram to $NOTIFY_SOCKET, a few
 * lines instead of a libsystemd dependency; and the STATUS line kept in step with the SM's
 * state (a handover, a sweep failing and then SUBNET UP: systemctl status says what is). */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <glib.h>
#include "sm/notify.h"
#include "sm/sm.h"
#include "sm/sweep.h"

int service_notify_send(const char *state)
{
	const char *name = getenv("NOTIFY_SOCKET");
	if (!name || !*name)
		return 0;
	if (name[0] != '/' && name[0] != '@')
		return -EAFNOSUPPORT; /* e.g. "vsock:..." (VMs): not needed on an SM host */

	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	size_t len = strlen(name);
	if (len >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	memcpy(addr.sun_path, name, len);
	socklen_t addr_len;
	if (name[0] == '@') {
		addr.sun_path[0] = '\0'; /* abstract: exactly len bytes, no terminating NUL */
		addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	} else {
		addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1);
	}

	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	size_t n = strlen(state);
	ssize_t sent = sendto(fd, state, n, MSG_NOSIGNAL, (struct sockaddr *)&addr, addr_len);
	int e = sent < 0 ? errno : (size_t)sent != n ? EMSGSIZE : 0;
	close(fd);
	return e ? -e : 1;
}

int service_notify_ready(const char *status)
{
	if (!status)
		return service_notify_send("READY=1");
	gchar *msg = g_strdup_printf("READY=1\nSTATUS=%s", status);
	int r = service_notify_send(msg);
	g_free(msg);
	return r;
}

int service_notify_status(const char *status)
{
	gchar *msg = g_strdup_printf("STATUS=%s", status ? status : "");
	int r = service_notify_send(msg);
	g_free(msg);
	return r;
}

int service_notify_stopping(void)
{
	return service_notify_send("STOPPING=1");
}

int service_notify_reloading(void)
{
	/* systemd >= 253 wants the CLOCK_MONOTONIC time of the reload request beside
	 * RELOADING=1; older versions ignore the extra line. */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	char msg[64];
	g_snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%" PRIu64,
		   (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u);
	return service_notify_send(msg);
}

void service_status_text(const struct sm *sm, int last_result, char *buf, size_t len)
{
	switch (sm->state) {
	case IB_SM_MASTER:
		if (sm->handover_to && !sm->handover_acked)
			g_snprintf(buf, len, "MASTER: handing over to 0x%016" PRIx64, sm->handover_to);
		else if (sm->subnet_up)
			g_snprintf(buf, len, "MASTER: SUBNET UP (%u nodes, %u switches)", sm->summary_nodes,
				   sm->summary_switches);
		else if (last_result == -1)
			g_snprintf(buf, len, "MASTER: sweep failed, retrying");
		else if (sm->sweep_failures)
			g_snprintf(buf, len, "MASTER: sweep incomplete, retrying (%u SMPs lost or ports "
				   "not ACTIVE)", sm->sweep_failures);
		else if (last_result == -2 || last_result == SWEEP_UP)
			g_snprintf(buf, len, "MASTER: bringing the subnet up");
		else
			g_snprintf(buf, len, "MASTER: sweep incomplete, retrying");
		break;
	case IB_SM_STANDBY:
		g_snprintf(buf, len, "STANDBY: master 0x%016" PRIx64, sm->master_guid);
		break;
	case IB_SM_DISCOVERING:
		g_snprintf(buf, len, "DISCOVERING");
		break;
	default:
		g_snprintf(buf, len, "%s", sm->opt && sm->opt->sm_inactive ? "NOTACTIVE (sm_inactive)" :
			   "starting");
		break;
	}
}

int service_notify_state(const struct sm *sm, int last_result)
{
	static char last[160];
	static int under_systemd = -1;
	if (under_systemd < 0) {
		const char *name = getenv("NOTIFY_SOCKET");
		under_systemd = name && *name;
	}
	if (!under_systemd)
		return 0;
	char now[sizeof(last)];
	service_status_text(sm, last_result, now, sizeof(now));
	if (!strcmp(now, last))
		return 0;
	int r = service_notify_status(now);
	if (r >= 0)
		memcpy(last, now, sizeof(last));
	return r;
}
