/* SPDX-License-Identifier: BSD-2-Clause */
/* mcast_groups.h - the multicast groups the SA keeps (across generations, like services):
 * each one's MGID, MLID and parameters (what its creator asked: Q_Key, P_Key, MTU, rate, SL,
 * ...) and its members, a port each with the OR of its join states (IBA 15.2.5.17: full
 * member 1, non-member 2, send-only non-member 4, send-only full member 8; every member, of
 * any state, is in the group's MFT tree, as on OpenSM 3.3.23). A group lives while it has a
 * full member (bit 1), or for good when it is persistent (the IPoIB groups partitions.conf
 * asks for); its MLID then goes back to the pool. The wire side (MCMemberRecord
 * Set/Delete/Get) comes on top. */
#ifndef IBSM_SA_MCAST_GROUPS_H
#define IBSM_SA_MCAST_GROUPS_H

#include <glib.h>
#include <stdint.h>

enum { MC_FULL = 1, MC_NON_MEMBER = 2, MC_SEND_ONLY = 4, MC_SEND_ONLY_FULL = 8, MC_STATES = 0xf };

struct mc_params {
	uint32_t qkey, flow_label;
	uint16_t pkey;
	uint8_t mtu, rate, packet_life, sl, tclass, hop_limit, scope;
};

struct mc_member {
	uint64_t port_guid;
	uint8_t gid[16];
	uint8_t join_state;
	uint8_t proxy;          /* joined on its behalf by another port */
};

struct mc_group {
	uint8_t mgid[16];
	uint16_t mlid;
	struct mc_params p;
	int persistent;
	GArray *members;        /* of struct mc_member */
	unsigned n_full;
	struct mc_group *mlid_next; /* the next group sharing this MLID (consolidate_ipv6_snm_req) */
};

struct mc_groups;

struct mc_groups *mc_groups_new(void);
void mc_groups_free(struct mc_groups *g);
struct mc_group *mc_find(struct mc_groups *g, const uint8_t mgid[16]);
struct mc_group *mc_find_mlid(struct mc_groups *g, uint16_t mlid);
/* A new group with the lowest free MLID; NULL when the MGID exists or no MLID is left up to
 * the limit (mc_set_mlid_limit). With mc_set_consolidate_snm on, an IPv6 solicited-node
 * MGID (ff1x:601b:<P_Key>:0000:0000:0001:ffxx:xxxx, as OpenSM's get_new_mlid tests it) whose
 * first 10 bytes are those of an existing group's MGID gets that group's MLID: the groups keep
 * their own MGIDs and members, and share the MLID (and one MFT tree: mc_find_mlid gives the
 * first, mlid_next the others); the MLID goes back to the pool with the last of them. */
struct mc_group *mc_create(struct mc_groups *g, const uint8_t mgid[16], const struct mc_params *p,
			   int persistent);
/* Adds the join states STATE for the port (a member from now on); its join state after. */
uint8_t mc_join(struct mc_groups *g, struct mc_group *grp, uint64_t port_guid, const uint8_t gid[16],
		uint8_t state, int proxy);
/* The groups port_guid is a member of (any join state). */
unsigned mc_memberships(const struct mc_groups *g, uint64_t port_guid);
/* The highest MLID a new group may get: 0xC000 + the least MulticastFDBCap of the switches - 1
 * (groups the switches cannot hold are refused, as OpenSM refuses them); existing groups keep
 * theirs. Clamped to 0xC000..0xFFFE. */
void mc_set_mlid_limit(struct mc_groups *g, uint16_t last);
/* OpenSM's consolidate_ipv6_snm_req (see mc_create). */
void mc_set_consolidate_snm(struct mc_groups *g, int on);
uint16_t mc_mlid_limit(const struct mc_groups *g);
/* Removes the join states STATE of the port, as OpenSM 3.3.23's osm_mgrp_remove_port: the port
 * stays a member with the states left if one is full membership or another full member
 * remains, else it goes (with none left it goes in any case). A group left without a full
 * member is deleted unless persistent (1 then: GRP is freed); a persistent one loses every
 * member with its last full member (OpenSM empties a well-known group so). -1 when the port
 * is not a member. */
int mc_leave(struct mc_groups *g, struct mc_group *grp, uint64_t port_guid, uint8_t state);
/* A port gone from the fabric leaves every group; the number of groups deleted so. */
unsigned mc_port_gone(struct mc_groups *g, uint64_t port_guid);
void mc_delete(struct mc_groups *g, struct mc_group *grp);
const struct mc_member *mc_member(const struct mc_group *grp, uint64_t port_guid);
unsigned mc_count(const struct mc_groups *g);
/* Calls fn for each group, in MLID order. */
void mc_foreach(struct mc_groups *g, void (*fn)(struct mc_group *grp, void *ctx), void *ctx);
unsigned mc_mlids_in_use(const struct mc_groups *g);
/* A number not handed out before by this registry (for MGIDs the SA makes up). */
uint32_t mc_next_serial(struct mc_groups *g);
/* A group as it was before a restart (sa/sa_db.c): MGID with MLID taken from the pool, no
 * members yet. The group already there with this MGID and MLID is returned (*existed 1); NULL
 * when the MGID has another MLID, or the MLID is out of range or another group's. */
struct mc_group *mc_restore(struct mc_groups *g, const uint8_t mgid[16], uint16_t mlid,
			    const struct mc_params *p, int *existed);

#endif
