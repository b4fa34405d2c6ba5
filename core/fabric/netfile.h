/* SPDX-License-Identifier: BSD-2-Clause */
/* netfile.h - the offline fabric-file loader behind `ibsm --fabric FILE`: reads an ibsim /
 * ibnetdiscover "net" file into a model builder, numbering GUIDs exactly as ibsim 0.10 does
 * for the same file, so offline and simulated runs agree on GUIDs, roots and guid2lid.
 *
 * The grammar is ibsim's (records "Switch N "name"", "Hca"/"Ca", "Rt", port lines
 * `[p] "peer"[q]` with ibnetdiscover's annotations, `switchguid=`/`caguid=`/`rtguid=`
 * counter bases (also `+N`, relative to the last base), `sysimgguid=`/`vendid=` for the
 * next node, `devid=`, `width=`, `speed=`, `extspeed=`, `module=`, `include "file"`).
 * Differences from ibsim, all on input ibsim would misread or refuse anyway:
 *  - a link may be declared on one side only (ibsim 0.10 insists on both sides);
 *  - lines ibsim silently ignores or swallows are errors: unknown records, port lines
 *    outside a record, a record header right after a port line (ibsim drops it);
 *  - aliases (`@`) and console commands (`do ...`) are refused, and so are two end ports
 *    with one port GUID (ibsim only checks node GUIDs);
 *  - a relative include path is taken relative to the including file (ibsim: the cwd).
 * Port attributes are those ibsim reports before any SM ran: linked ports INIT/LinkUp,
 * unlinked ports DOWN/Polling, switch port 0 ACTIVE/LinkUp; 4x SDR unless the file says
 * otherwise; MTU cap 2048 (switch port 0: 1024); VL cap and operational VLs VL0-7; LIDs
 * only where the file gives them (ibnetdiscover's "lid N" annotations). */
#ifndef IBSM_NETFILE_H
#define IBSM_NETFILE_H

#include <glib.h>
#include "fabric/model.h"

#define NETFILE_ERROR netfile_error_quark()
GQuark netfile_error_quark(void);

enum netfile_error_code {
	NETFILE_ERROR_OPEN,  /* the file (or an included one) cannot be read: missing, not a regular
			      * file, or over FILE_CAP_FABRIC with its includes (base/file_read.h) */
	NETFILE_ERROR_PARSE, /* bad syntax: "file:line: problem" */
	NETFILE_ERROR_LINK,  /* bad or conflicting link, unknown peer: "file:line: problem" */
	NETFILE_ERROR_MODEL, /* the builder refused a node (GUID already in it) */
};

/* ibsim 0.10 defaults the loader reports (measured: Debian's ibsim 0.10 without -L says
 * LinearFDBCap 30720; -L changes it, newer upstream ibsim defaults to 49152). */
#define NETFILE_LFT_CAP      30720
#define NETFILE_MFT_CAP      1024
#define NETFILE_PKEY_ENF_CAP 64

/* Parses path and adds its nodes and links to b. Returns 0, or -1 with *err set; on error
 * b is left unchanged unless the builder itself refused a node (NETFILE_ERROR_MODEL). */
int netfile_load(const char *path, struct model_builder *b, GError **err);

#endif
