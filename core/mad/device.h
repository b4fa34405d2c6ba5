/* SPDX-License-Identifier: BSD-2-Clause */
/* device.h - the SM's umad port: opened once, with the SMI classes (LID-routed and directed
 * route) and the SA class registered on one fd, and the port's issm device held open, which is
 * what sets IsSM in our PortInfo and makes the fabric send us traps, SMInfo and SA requests. */
#ifndef IBSM_MAD_DEVICE_H
#define IBSM_MAD_DEVICE_H

#include <stddef.h>
#include "mad/transport.h"

struct smdev;

/* Opens port `port` of CA `ca`; NULL with err filled ("is another SM running?") on failure. */
struct smdev *smdev_open(const char *ca, int port, char *err, size_t errlen);
void smdev_close(struct smdev *d);
/* At the SM's exit (core/ops/main.c ends with _exit right after): the issm device is closed
 * and d freed, the umad port is left to the process's end. Under libumad2sim a MAD arriving
 * after umad_close_port() crashes its receiver thread (the closed fd's queue is freed, the
 * class still maps to it), and one arriving while its atexit cleanup runs deadlocks it (the
 * cleanup holds the mutex the thread waits for while it joins that thread): a standby's
 * SMInfo, a late PerfMgt answer, a client's SA query can come at any moment. */
void smdev_release_at_exit(struct smdev *d);
/* The transport I/O over this device. */
void smdev_io(struct smdev *d, struct transport_io *io);

#endif
