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

static unsigned partition_groups(struct mc_groups *g, const struct partition *part, int is_default,
				 uint8_t packet_life)
{
	unsigned n = 0;
	uint16_t pkey = (uint16_t)(part->pkey | 0x8000);
	const char *name = part->name && *part->name ? part->name : "(unnamed)";
	if (part->ipoib || is_default) {
		uint8_t scope = part->scope ? part->scope : DEFAULT_SCOPE;
		uint8_t mgid[16] = { 0xff, (uint8_t)(0x10 | (scope & 0xf)), 0x40, 0x1b,
				     (uint8_t)(pkey >> 8), (uint8_t)pkey, 0, 0, 0, 0, 0, 0,
				     0xff, 0xff, 0xff, 0xff };
		struct mc_params p = { .qkey = IPOIB_QKEY, .pkey = pkey, .scope = scope,
				       .mtu = part->mtu ? part->mtu : DEFAULT_MTU,
				       .rate = part->rate ? part->rate : DEFAULT_RATE,
				       .sl = part->sl, .packet_life = packet_life };
		n += make(g, mgid, &p, name);
	}
	for (guint i = 0; part->mgroups && i < part->mgroups->len; i++) {
		const struct part_mgroup *m = &g_array_index(part->mgroups, struct part_mgroup, i);
		struct mc_params p = { .qkey = m->qkey ? m->qkey : is_ipoib_mgid(m->mgid) ? IPOIB_QKEY : 0,
				       .pkey = pkey, .scope = m->mgid[1] & 0xf,
				       .mtu = m->mtu ? m->mtu : DEFAULT_MTU,
				       .rate = m->rate ? m->rate : DEFAULT_RATE, .sl = m->sl,
				       .tclass = m->tclass, .flow_label = m->flow_label,
				       .packet_life = packet_life };
		n += make(g, m->mgid, &p, name);
	}
	return n;
}

unsigned ipoib_groups_create(struct mc_groups *g, const struct part_policy *pp, uint8_t packet_life)
{
	if (!pp) {
		struct partition def = { .name = (char *)"Default", .pkey = 0x7fff };
		return partition_groups(g, &def, 1, packet_life);
	}
	unsigned n = 0;
	for (guint i = 0; i < pp->parts->len; i++) {
		const struct partition *part = pp->parts->pdata[i];
		n += partition_groups(g, part, part->pkey == 0x7fff, packet_life);
	}
	return n;
}
