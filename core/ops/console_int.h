/* SPDX-License-Identifier: BSD-2-Clause */
/* console_int.h - what the console's own files share (not for other modules). */
#ifndef IBSM_OPS_CONSOLE_INT_H
#define IBSM_OPS_CONSOLE_INT_H

/* The version console_start() was given ("?" before; NULL forgets it). */
void console_set_version(const char *v);
const char *console_version(void);

#include <glib.h>

/* Appends reply (text lines) to out framed as the socket protocol sends it: a line starting
 * with '.' gets one more, then ".OK" (rc >= 0) or ".ERR rc". */
void console_frame(GString *out, const char *reply, int rc);

#endif
