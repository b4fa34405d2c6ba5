/* SPDX-License-Identifier: BSD-2-Clause */
/* traps.c - traps from switches and CAs: TrapRepress, a heavy sweep when the fabric changed
 * (128 link state, 144 capability or description) or a port keeps reporting errors (129-131),
 * and OpenSM's babbling port policy: a port that reports the same error trap on and on is
 * disabled (osm_trap_rcv.c of OpenSM 3.3.23). */
#include <string.h>
#include <glib.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "fabric/dr.h"
#include "sa/agent.h"
#include "sm/traps.h"

/* Notice (the trap's SMP data): IsGeneric|Type, ProducerType (24 bits), TrapNumber, IssuerLID,
 * NoticeToggle|NoticeCount, DataDetails; of traps 129-131: 2 reserved bytes, LID, PortNum */
#define NOTICE_TRAP_NUMBER_OFF 4
#define NOTICE_ISSUER_LID_OFF  6
#define NOTICE_129_LID_OFF     12
#define NOTICE_129_PORT_OFF    14
#define TRAP_LINK_STATE        128
#define TRAP_CAPABILITY        144
#define TRAP_ERRORS_FIRST      129
#define TRAP_ERRORS_LAST       131
#define TRAP_LIDS_MAX          256 /* traps 128 kept for a repair; more: a heavy sweep */
#define PORT_STATE_DOWN        1
#define PHYS_STATE_DISABLED    3

static struct trap_counts counts;

/* The same error trap (reporting LID, port, whole notice) counted while it keeps coming: each
 * one restarts its aging (TRAP_SUPPRESS_US, TRAP_UNHEALTHY_US once the port is unhealthy). */
struct repeat {
	uint32_t seen;          /* traps so far, this one excluded */
	int64_t last_us;
	int unhealthy;
};
static GHashTable *repeats; /* uint64 key (port << 48 | LID << 32 | hash of the notice) */

/* FNV-1a: the identity of a notice's bytes (OpenSM keys them by a CRC-32; any hash will do) */
static uint32_t notice_hash(const uint8_t *b, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

static uint64_t repeat_key(const uint8_t *notice)
{
	uint16_t lid = (uint16_t)((notice[NOTICE_129_LID_OFF] << 8) | notice[NOTICE_129_LID_OFF + 1]);
	uint8_t port = notice[NOTICE_129_PORT_OFF];
	uint32_t crc = notice_hash(notice, TRAP_NOTICE_BYTES);
	return ((uint64_t)port << 48) | ((uint64_t)lid << 32) | crc;
}

enum trap_repeat traps_repeat(const uint8_t *notice, int64_t now_us, int babbling_policy, uint32_t *prev)
{
	if (!repeats)
		repeats = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
	uint64_t key = repeat_key(notice);
	struct repeat *r = g_hash_table_lookup(repeats, &key);
	if (r && now_us - r->last_us > (r->unhealthy ? TRAP_UNHEALTHY_US : TRAP_SUPPRESS_US)) {
		r->seen = 0; /* aged out: a new series */
		r->unhealthy = 0;
	}
	if (!r) {
		uint64_t *k = g_new(uint64_t, 1);
		*k = key;
		r = g_new0(struct repeat, 1);
		g_hash_table_insert(repeats, k, r);
	}
	uint32_t n = r->seen++;
	r->last_us = now_us;
	if (prev)
		*prev = n;
	if (n <= TRAP_REPEAT_IGNORE)
		return TRAP_REPEAT_NEW;
	if (babbling_policy && n >= TRAP_BABBLING_DISABLE)
		return TRAP_REPEAT_DISABLE;
	if (!r->unhealthy) {
		r->unhealthy = 1;
		return TRAP_REPEAT_UNHEALTHY;
	}
	return TRAP_REPEAT_IGNORED;
}

void traps_repeat_reset(void)
{
	if (repeats)
		g_hash_table_destroy(repeats);
	repeats = NULL;
}

static void on_disabled(struct transport *t, const struct smp_req *r, int status, const uint8_t *data,
			void *ctx)
{
	(void)t; (void)data; (void)ctx;
	if (status) {
		char why[64];
		smp_status_text(status, why, sizeof(why));
		LOG_E("TRP-0005", "babbling port: PortInfo Set (Disabled) of port %u failed: %s",
		      (unsigned)r->mod, why);
	}
}

/* OpenSM's disable_port(): the port of the link nearer to this SM, PortState Down and
 * PortPhysicalState Disabled, the rest as last read. 0 when the Set was sent. */
static int disable_port(struct sm *sm, uint16_t lid, uint8_t num, uint32_t times)
{
	const struct fabric *f = sm->fabric;
	if (!f || !sm->t || sm->state != IB_SM_MASTER) /* only the master writes PortInfo */
		return -1;
	if (lid > f->pub.max_lid || f->lid_port[lid] == IBSM_NONE)
		return -1;
	const struct ibsm_node *n = &f->nodes[f->ports[f->lid_port[lid]].node];
	if (num > n->nports)
		return -1;
	uint32_t p = n->port0 + num;
	uint32_t peer = f->ports[p].peer;
	if (peer != IBSM_NONE && f->nx[f->ports[peer].node].dr_hops < f->nx[f->ports[p].node].dr_hops)
		p = peer;
	if (!f->px[p].have_portinfo)
		return -1;
	struct smp_req r;
	if (fabric_smp_to_port(&r, f, p, IB_MAD_METHOD_SET, IB_ATTR_PORT_INFO, f->ports[p].num, on_disabled,
			       NULL, 0) < 0)
		return -1;
	memcpy(r.data, f->px[p].portinfo, SMP_DATA_SIZE);
	mad_set_field(r.data, 0, IB_PORT_STATE_F, PORT_STATE_DOWN);
	mad_set_field(r.data, 0, IB_PORT_PHYS_STATE_F, PHYS_STATE_DISABLED);
	const struct ibsm_node *pn = &f->nodes[f->ports[p].node];
	LOG_SYS_E("TRP-0003", "babbling port: LID %u port %u reported the same error trap %u times in a "
		  "row: disabling port %u of 0x%016" PRIx64 " (%s) (babbling_port_policy)",
		  lid, num, times + 1, f->ports[p].num, pn->guid, pn->desc);
	transport_submit(sm->t, &r);
	return 0;
}

int traps_want_sweep(uint16_t number)
{
	return number == TRAP_LINK_STATE || number == TRAP_CAPABILITY;
}

static void on_trap(struct dispatch *d, const struct mad_in *m, void *ctx)
{
	struct sm *sm = ctx;
	const uint8_t *notice = m->mad + IB_SMP_DATA_OFFS;
	uint16_t number = (uint16_t)((notice[NOTICE_TRAP_NUMBER_OFF] << 8) | notice[NOTICE_TRAP_NUMBER_OFF + 1]);
	uint16_t issuer = (uint16_t)((notice[NOTICE_ISSUER_LID_OFF] << 8) | notice[NOTICE_ISSUER_LID_OFF + 1]);
	counts.received++;
	LOG_I("TRP-0001", "trap %u from LID %u received", number, issuer);
	dispatch_respond(d, m, IB_MAD_METHOD_TRAP_REPRESS, 0, NULL, 0, 0);
	counts.represses_sent++;
	sa_report_trap(sm->sa, notice); /* to the subscribers of this trap */
	if (number == TRAP_CAPABILITY)
		sm->reread_desc = 1; /* the description may have changed */
	int want = traps_want_sweep(number);
	if (number >= TRAP_ERRORS_FIRST && number <= TRAP_ERRORS_LAST) {
		uint32_t prev = 0;
		enum trap_repeat rep = traps_repeat(notice, g_get_monotonic_time(), sm->opt->babbling_port_policy,
						    &prev);
		uint16_t lid = (uint16_t)((notice[NOTICE_129_LID_OFF] << 8) | notice[NOTICE_129_LID_OFF + 1]);
		uint8_t num = notice[NOTICE_129_PORT_OFF];
		if (rep == TRAP_REPEAT_DISABLE && disable_port(sm, lid, num, prev) == 0)
			return;
		if (rep == TRAP_REPEAT_UNHEALTHY || rep == TRAP_REPEAT_DISABLE)
			LOG_W("TRP-0004", "trap %u about LID %u port %u received %u times in a row", number,
			      lid, num, prev + 1);
		if (rep == TRAP_REPEAT_UNHEALTHY) {
			LOG_I("TRP-0002", "LID %u port %u is unhealthy: heavy sweep", lid, num);
			want = 1;
		}
	}
	/* sweep_on_trap FALSE: no trap starts a sweep; the next periodic (light) sweep finds the change */
	if (!want || !sm->opt->sweep_on_trap)
		return;
	sm->trap_pending = 1;
	if (number != TRAP_LINK_STATE) {
		sm->trap_full = 1; /* a heavy sweep, not a repair */
		return;
	}
	/* the switch (or port) to read first when the change is repaired (sm/repair.h) */
	if (!sm->trap_lids)
		sm->trap_lids = g_array_new(FALSE, FALSE, sizeof(struct trap_lid));
	struct trap_lid e = { .lid = issuer, .seq = ++sm->trap_seq };
	if (sm->trap_lids->len < TRAP_LIDS_MAX)
		g_array_append_val(sm->trap_lids, e);
	else
		sm->trap_full = 1; /* a storm of them: a heavy sweep reads everything anyway */
}

void traps_agent_register(struct sm *sm)
{
	dispatch_register(sm->dispatch, IB_SMI_CLASS, IB_MAD_METHOD_TRAP, DISPATCH_ANY_ATTR, on_trap, sm);
	dispatch_register(sm->dispatch, IB_SMI_DIRECT_CLASS, IB_MAD_METHOD_TRAP, DISPATCH_ANY_ATTR, on_trap, sm);
}

void traps_agent_unregister(struct sm *sm)
{
	if (sm->dispatch) {
		dispatch_register(sm->dispatch, IB_SMI_CLASS, IB_MAD_METHOD_TRAP, DISPATCH_ANY_ATTR, NULL, NULL);
		dispatch_register(sm->dispatch, IB_SMI_DIRECT_CLASS, IB_MAD_METHOD_TRAP, DISPATCH_ANY_ATTR, NULL, NULL);
	}
	traps_repeat_reset();
}

const struct trap_counts *traps_counts(void)
{
	return &counts;
}
