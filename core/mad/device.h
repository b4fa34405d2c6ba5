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
/* The transport I/O over this device. */
void smdev_io(struct smdev *d, struct transport_io *io);

#endif
