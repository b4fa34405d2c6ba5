/* SPDX-License-Identifier: BSD-2-Clause */
/* ipoib_groups.c - the groups partitions.conf asks for (ipoib_groups.h). */
#include <arpa/inet.h>
#include <string.h>
#include "base/log.h"
#include "sa/ipoib_groups.h"

#define DEFAULT_RATE 3  /* 10 Gb/s */
#define DEFAULT_MTU 4   /* 2048 */
#define DEFAULT_SCOPE 2 /* link-local */

static int is_ipoib_mgid(const uint8_t *mgid)
{
	return mgid[2] == 0x40 || mgid[2] == 0x60 ? mgid[3] == 0x1b : 0;
}

static unsigned make(struct mc_groups *g, const uint8_t mgid[16], const struct mc_params *p,
		     const char *part)
{
	if (mc_find(g, mgid))
		return 0;
	char text[INET6_ADDRSTRLEN];
	inet_ntop(AF_INET6, mgid, text, sizeof(text));
	struct mc_group *grp = mc_create(g, mgid, p, 1);
	if (!grp) {
		LOG_E("IPB-0001", "partition %s: group %s not created: no MLID left", part, text);
		return 0;
	}
	LOG_I("IPB-0002", "partition %s: group %s MLID 0x%04x (Q_Key 0x%08x, P_Key 0x%04x, MTU %u, "
	      "rate %u, SL %u)", part, text, grp->mlid, p->qkey, p->pkey, p->mtu, p->rate, p->sl);
	return 1;
}

/* One group per scope of mask (none: link-local), the MGID's scope nibble set to it; HopLimit
 * 0 in link-local scope, 255 beyond (OpenSM's osm_prtn_add_mcgroup). */
static unsigned per_scope(struct mc_groups *g, const uint8_t base[16], uint16_t mask,
			  struct mc_params p, const char *part)
{
	unsigned n = 0;
	if (!mask)
		mask = 1u << DEFAULT_SCOPE;
	for (unsigned scope = 1; scope < 16; scope++) {
		if (!(mask >> scope & 1))
			continue;
		uint8_t mgid[16];
		memcpy(mgid, base, 16);
		mgid[1] = (uint8_t)((mgid[1] & 0xf0) | scope);
		p.scope = (uint8_t)scope;
		p.hop_limit = scope == DEFAULT_SCOPE ? 0 : 0xff;
		n += make(g, mgid, &p, part);
	}
	return n;
}

static unsigned partition_groups(struct mc_groups *g, const struct partition *part, int is_default,
				 uint8_t packet_life, int qos)
{
	unsigned n = 0;
	uint16_t pkey = (uint16_t)(part->pkey | 0x8000);
	const char *name = part->name && *part->name ? part->name : "(unnamed)";
	/* without QoS the partition's SL is 0 (OpenSM's partition_create) */
	uint8_t part_sl = qos ? part->sl : 0;
	if (part->ipoib || is_default) {
		uint8_t mgid[16] = { 0xff, 0x12, 0x40, 0x1b, (uint8_t)(pkey >> 8), (uint8_t)pkey,
				     0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
		struct mc_params p = { .qkey = part->qkey ? part->qkey : IPOIB_QKEY, .pkey = pkey,
				       .mtu = part->mtu ? part->mtu : DEFAULT_MTU,
				       .rate = part->rate ? part->rate : DEFAULT_RATE,
				       .sl = part_sl, .tclass = part->tclass,
				       .flow_label = part->flow_label, .packet_life = packet_life };
		/* link-local whatever the header's scope= (OpenSM 3.3.23's partition_create gives
		 * the broadcast group no scope: the header's scopes reach the mgid= items only) */
		n += per_scope(g, mgid, 0, p, name);
	}
	for (guint i = 0; part->mgroups && i < part->mgroups->len; i++) {
		const struct part_mgroup *m = &g_array_index(part->mgroups, struct part_mgroup, i);
		struct mc_params p = { .qkey = m->qkey ? m->qkey : is_ipoib_mgid(m->mgid) ? IPOIB_QKEY : 0,
				       .pkey = pkey,
				       .mtu = m->mtu ? m->mtu : DEFAULT_MTU,
				       .rate = m->rate ? m->rate : DEFAULT_RATE,
				       .sl = m->sl_own || qos ? m->sl : 0,
				       .tclass = m->tclass, .flow_label = m->flow_label,
				       .packet_life = packet_life };
		n += per_scope(g, m->mgid, m->scope_mask, p, name);
	}
	return n;
}

unsigned ipoib_groups_create(struct mc_groups *g, const struct part_policy *pp, uint8_t packet_life,
			     int qos)
{
	if (!pp) {
		struct partition def = { .name = (char *)"Default", .pkey = 0x7fff };
		return partition_groups(g, &def, 1, packet_life, qos);
	}
	unsigned n = 0;
	for (guint i = 0; i < pp->parts->len; i++) {
		const struct partition *part = pp->parts->pdata[i];
		n += partition_groups(g, part, part->pkey == 0x7fff, packet_life, qos);
	}
	return n;
}
