/* SPDX-License-Identifier: BSD-2-Clause */
/* notify.h - telling systemd (Type=notify) that ibsm is ready, reloading or stopping, and
 * what state the SM is in (STATUS=, kept current on every state change). */
#ifndef IBSM_SM_NOTIFY_H
#define IBSM_SM_NOTIFY_H

#include <stddef.h>

/* The sd_notify(3) protocol: one AF_UNIX SOCK_DGRAM datagram to $NOTIFY_SOCKET (a path, or an
 * abstract name written "@name"). 1 when sent, 0 when NOTIFY_SOCKET is unset or empty (not
 * under systemd), negative errno on failure (worth a log line, never fatal). */
int service_notify_send(const char *state);
int service_notify_ready(const char *status);   /* "READY=1" [+ "\nSTATUS=<status>"] */
int service_notify_status(const char *status);  /* "STATUS=<status>" */
int service_notify_stopping(void);              /* "STOPPING=1" */
int service_notify_reloading(void);             /* "RELOADING=1\nMONOTONIC_USEC=<now>"; send
                                                 * service_notify_ready() again when the reload is done */

struct sm;
/* The SM's state in words, as systemctl status shows it: "MASTER: SUBNET UP (12 nodes, 3
 * switches)", "MASTER: sweep incomplete, retrying (...)", "MASTER: sweep failed, retrying",
 * "MASTER: handing over to 0x...", "STANDBY: master 0x...", "DISCOVERING", "NOTACTIVE
 * (sm_inactive)", "starting". last_result: the last heavy sweep's SWEEP_* (sm/sweep.h), -1
 * failed, -2 none yet. */
void service_status_text(const struct sm *sm, int last_result, char *buf, size_t len);
/* STATUS=<that text> when it differs from the last one this sent: 1 sent, 0 nothing to say
 * (unchanged, or not under systemd), negative errno. Called every pass of the event loop (the
 * metrics module's tick, ops/metrics.c): every state change reaches systemd within one pass. */
int service_notify_state(const struct sm *sm, int last_result);


#endif
