/* SPDX-License-Identifier: BSD-2-Clause */
/* dump.h - the files OpenSM 3.3.23 leaves in OSM_TMP_DIR (opensm-subnet.lst, opensm.fdbs,
 * opensm.mcfdbs, opensm-lfts.dump, opensm-lid-matrix.dump), byte for byte in its formats, so
 * ibdmchk and existing scripts read ours. Every file is written to a temp file and renamed.
 *
 * Conventions shared by all writers:
 * - dir is the directory (OSM_TMP_DIR); the file name is fixed, as in OpenSM.
 * - Switches and nodes are listed in OpenSM's order: ascending by the GUID read as a
 *   little-endian integer of its network-order bytes (OpenSM's maps are keyed by the raw
 *   network-order GUID), so the node whose GUID ends in 0x00 comes first.
 * - lft is the final table, [n_switches * stride] with stride >= max_lid + 1, indexed
 *   lft[switch id * stride + LID], IBSM_NO_PORT = no route.
 * - ibsm_port.width and .speed are read as PortInfo.LinkWidthActive (1 = 1x, 2 = 4x, 4 = 8x,
 *   8 = 12x) and LinkSpeedActive (1 = 2.5, 2 = 5, 4 = 10 Gb/s); LinkSpeedExtActive and
 *   CapabilityMask come from the raw PortInfo (port_extra) when it was read.
 * - Hop counts (fdbs, lid matrix) are OpenSM's min-hop matrix: switch-to-switch BFS over all
 *   switch links of the generation; port 0 holds the least hop count.
 * Return 0, or a negative errno with *err set (G_FILE_ERROR for I/O, naming the path). */
#ifndef IBSM_DUMP_H
#define IBSM_DUMP_H

#include <glib.h>
#include <stdint.h>
#include "fabric/model.h"

#define DUMP_SUBNET_LST "opensm-subnet.lst"
#define DUMP_FDBS       "opensm.fdbs"
#define DUMP_MCFDBS     "opensm.mcfdbs"
#define DUMP_LFTS       "opensm-lfts.dump"
#define DUMP_LID_MATRIX "opensm-lid-matrix.dump"

/* A part of the fabric, for a routing chain step's own files (NVIDIA's SM manual, "Routing
 * Chains", "Dump Files per Routing Engine"): tag "ID.ENGINE" goes into the file name
 * (opensm-lfts.2.ftree.dump, opensm.fdbs.2.ftree, opensm-subnet.2.ftree.lst) and only the
 * scope's switches, usable ports and routed LIDs are written. NULL: the whole fabric under
 * OpenSM's names. */
struct dump_part {
	const char *tag;
	const struct ibsm_scope *scope;
};

/* One line per (port, linked peer port) in both directions; ports without a link skipped. */
int dump_subnet_lst(const struct fabric *f, const struct dump_part *part, const char *dir,
		    GError **err);

/* Per switch: every LID 1..max_lid with its out port, hops and whether that is minimal. */
int dump_fdbs(const struct fabric *f, const uint8_t *lft, uint32_t stride,
	      const struct dump_part *part, const char *dir, GError **err);

/* Multicast forwarding tables. OpenSM prints a switch's header only above its first MFT
 * entry, so a fabric without multicast groups gives an empty file. */
int dump_mcfdbs(const struct fabric *f, const char *dir, GError **err);

/* The same with groups: mlids[g] (0xC000..0xFFFE) and its tree egress[g][s], bit p of the four
 * words = port p of switch id s forwards MLID mlids[g]. Groups are printed by MLID. */
int dump_mcfdbs_groups(const struct fabric *f, uint32_t n_groups, const uint16_t *mlids,
		       const uint64_t (*const *egress)[4], const char *dir, GError **err);

/* Per switch: every LID whose entry is a real port (< NumPorts + 1), with its destination. */
int dump_lfts(const struct fabric *f, const uint8_t *lft, uint32_t stride,
	      const struct dump_part *part, const char *dir, GError **err);

/* Per switch: hop count through each port (0 .. NumPorts) to every reachable switch LID. */
int dump_lid_matrix(const struct fabric *f, const struct dump_part *part, const char *dir,
		    GError **err);

#endif
