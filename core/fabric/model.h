/* SPDX-License-Identifier: BSD-2-Clause */
/* model.h - the core's fabric model. Discovery and the fabric-file loader fill a mutable
 * builder; model_freeze() turns it into one generation of flat arrays (sorted by GUID, so ids
 * do not depend on discovery order), which is what engines, the programmer and dumps read.
 * A generation is reference-counted: the sweep that made it, the routes computed for it and
 * (later) the SA each hold a reference, so it lives as long as anyone answers from it. */
#ifndef IBSM_FABRIC_MODEL_H
#define IBSM_FABRIC_MODEL_H

#include <glib.h>
#include "mad/mkey_derive.h"
#include <stdint.h>
#include <ibsm/fabric.h>
#include "mad/ib.h"

#define MODEL_DR_MAX SMP_DR_PATH_MAX /* DR path bytes: path[1..hops] are the exit ports */

struct model_port_in {
	uint64_t guid;
	uint16_t lid;
	uint8_t lmc, state, phys_state, width, speed, mtu_cap, vl_cap, oper_vls;
	uint16_t flags;             /* IBSM_PORT_* */
	uint64_t peer_node_guid;    /* 0: no link known */
	uint8_t peer_port;
	uint8_t have_portinfo;
	uint8_t reused;             /* portinfo taken from the last generation (quiet switch) */
	uint8_t reread;             /* a port taken from the last generation, read after all */
	uint8_t portinfo[64];       /* raw PortInfo attribute as last read */
};

struct model_node_in {
	uint64_t guid, sysimg_guid;
	char desc[65];
	uint8_t type, nports;
	uint32_t vendor_id;         /* 24 bits */
	uint16_t device_id, partition_cap;
	uint32_t revision;
	uint8_t local_port;         /* NodeInfo.LocalPortNum of the first contact */
	uint64_t mkey;              /* M_Key of its management port (switch port 0, the CA port of
				     * first contact), 0 when M_Key protection is off */
	/* switches */
	uint16_t lft_cap, lft_top, pkey_enf_cap, mft_cap;
	uint8_t have_switchinfo, enhanced_sp0;
	uint8_t switchinfo[64];     /* raw SwitchInfo as last read */
	/* directed route from the SM port: path[1..dr_hops] */
	uint8_t dr_hops;
	uint8_t dr_path[MODEL_DR_MAX];
	uint8_t missed;             /* consecutive sweeps that could not reach it (carried over) */
	struct model_port_in *ports; /* [nports + 1], owned by the builder */
};

struct model_builder;

struct model_builder *model_builder_new(void);
void model_builder_free(struct model_builder *b);
/* Adds a node (copied; ports allocated zeroed with nports + 1 entries). Returns its index,
 * or -EEXIST if the GUID is already there. */
int model_add_node(struct model_builder *b, uint64_t guid, uint8_t type, uint8_t nports);
struct model_node_in *model_node(struct model_builder *b, uint32_t idx);
int model_find_node(const struct model_builder *b, uint64_t guid); /* index or -1 */
uint32_t model_count(const struct model_builder *b);
/* Records a link between (node a, port pa) and (node b, port pb), both directions. */
void model_link(struct model_builder *b, uint32_t a, uint8_t pa, uint32_t bn, uint8_t pb);

/* Per-node and per-port data the core keeps beside the public view. */
struct node_extra {
	uint32_t vendor_id;
	uint16_t device_id, partition_cap;
	uint32_t revision;
	uint16_t lft_cap, lft_top, pkey_enf_cap, mft_cap;
	uint8_t have_switchinfo, enhanced_sp0, local_port, dr_hops;
	uint8_t found_empty;        /* a switch found without LID or LinearFDBTop: new or reset, it
				     * holds no tables (as discovered; programming changes neither) */
	uint8_t missed;             /* not reached by the last `missed` sweeps through SMP errors:
				     * carried over from the generation before (fabric/carry.h) */
	uint8_t switchinfo[64];
	uint8_t dr_path[MODEL_DR_MAX];
};

struct port_extra {
	uint64_t mkey;              /* the M_Key SMPs to this management port present (CA ports,
				     * switch port 0; mad/mkey_derive.h), 0 when protection is off */
	uint8_t phys_state, have_portinfo;
	uint8_t portinfo[64];
};

/* One generation. pub points into the arrays below. Immutable once LIDs are assigned, but for
 * what the programmer reads back (px[].portinfo, ports[].state) on the sweep's own thread. */
struct fabric {
	struct ibsm_fabric pub;
	gint refs;                     /* fabric_ref() / fabric_unref() */
	struct ibsm_node *nodes;
	struct ibsm_port *ports;
	struct ibsm_switch *switches;
	struct ibsm_adj *adj;
	uint32_t *lid_port;            /* [max_lid + 1] */
	struct node_extra *nx;         /* [n_nodes] */
	struct port_extra *px;         /* [n_ports] */
	GHashTable *node_by_guid;      /* uint64 guid -> node id + 1 */
	GHashTable *port_by_guid;      /* uint64 port guid -> port id + 1 (CA ports, SP0) */
	int any_mkey;                  /* some px[].mkey is not 0 (fabric_set_mkeys) */
	GStringChunk *strings;
};

/* Freezes the builder (which stays valid and unchanged). Links whose peer is unknown are
 * dropped. Returns NULL with *err set on inconsistent input; else a generation holding one
 * reference, the caller's. */
struct fabric *model_freeze(const struct model_builder *b, uint32_t generation, GError **err);
struct fabric *fabric_ref(struct fabric *f);  /* one more reference; thread-safe */
void fabric_unref(struct fabric *f);          /* drops one; the last frees it. NULL: nothing */

/* Node / port lookups on a generation; IBSM_NONE when absent. */
uint32_t fabric_node_by_guid(const struct fabric *f, uint64_t guid);
uint32_t fabric_port_by_guid(const struct fabric *f, uint64_t port_guid);
/* Is port id an end port (CA/router port with a link, or switch port 0)? */
int fabric_is_end_port(const struct fabric *f, uint32_t port);
/* Directed route to one port: a switch's ports and our own node use the node's path; a CA
 * (or router) port is reached through its own switch, because a CA applies attributes such as
 * PortInfo and P_KeyTable to the port an SMP enters by. Returns 0, or -ENOENT if unreachable.
 * fabric/dr.h sets these routes on SMP requests. */
int fabric_port_dr_path(const struct fabric *f, uint32_t port, uint8_t *hops,
			uint8_t path[MODEL_DR_MAX]);
/* A value that changes when any link, node or port number changes (not LIDs or states). */
uint64_t fabric_topology_signature(const struct fabric *f);
/* px[].mkey of every management port (switch port 0, CA and router ports): the key the port
 * holds as far as we know: the one its PortInfo showed, else the one the last generation
 * presented, else the one c derives for it (the programming pass writes that one). */
void fabric_set_mkeys(struct fabric *f, const struct mkey_cfg *c, const struct fabric *prev);
/* Rebuilds lid_port and max_lid from ports[].lid / lmc (after LID assignment). */
void fabric_index_lids(struct fabric *f);

/* GHashTable hash/equal for keys that point to a uint64_t GUID. */
guint model_guid_hash(gconstpointer key);
gboolean model_guid_equal(gconstpointer a, gconstpointer b);

#define MODEL_ERROR model_error_quark()
GQuark model_error_quark(void);

#endif
