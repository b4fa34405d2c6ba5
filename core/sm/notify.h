/* SPDX-License-Identifier: BSD-2-Clause */
/* notify.h - telling systemd (Type=notify) that ibsm is ready, reloading or stopping. */
#ifndef IBSM_SM_NOTIFY_H
#define IBSM_SM_NOTIFY_H

/* The sd_notify(3) protocol: one AF_UNIX SOCK_DGRAM datagram to $NOTIFY_SOCKET (a path, or an
 * abstract name written "@name"). 1 when sent, 0 when NOTIFY_SOCKET is unset or empty (not
 * under systemd), negative errno on failure (worth a log line, never fatal). */
int service_notify_send(const char *state);
int service_notify_ready(const char *status);   /* "READY=1" [+ "\nSTATUS=<status>"] */
int service_notify_status(const char *status);  /* "STATUS=<status>" */
int service_notify_stopping(void);              /* "STOPPING=1" */
int service_notify_reloading(void);             /* "RELOADING=1\nMONOTONIC_USEC=<now>"; send
                                                 * service_notify_ready() again when the reload is done */


#endif
