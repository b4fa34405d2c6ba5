/* SPDX-License-Identifier: BSD-2-Clause */
/* traps.c - traps from switches and CAs: TrapRepress, and a heavy sweep when the fabric changed
 * (128 link state, 144 capability or description) or a port keeps reporting errors (129-131). */
#include <string.h>
#include <glib.h>
#include <infiniband/mad.h>
#include "base/log.h"
#include "sa/agent.h"
#include "sm/traps.h"

/* Notice (the trap's SMP data): IsGeneric|Type, ProducerType (24 bits), TrapNumber, IssuerLID */
#define NOTICE_TRAP_NUMBER_OFF 4
#define NOTICE_ISSUER_LID_OFF  6
#define TRAP_LINK_STATE        128
#define TRAP_CAPABILITY        144
#define TRAP_ERRORS_FIRST      129
#define TRAP_ERRORS_LAST       131
#define TRAP_LIDS_MAX          256 /* traps 128 kept for a repair; more: a heavy sweep */

static struct trap_counts counts;
static GHashTable *error_reports; /* issuer LID -> count of 129-131 */

int traps_want_sweep(uint16_t number, uint16_t issuer)
{
	if (number == TRAP_LINK_STATE || number == TRAP_CAPABILITY)
		return 1;
	if (number < TRAP_ERRORS_FIRST || number > TRAP_ERRORS_LAST)
		return 0;
	if (!error_reports)
		error_reports = g_hash_table_new(NULL, NULL);
	guint n = GPOINTER_TO_UINT(g_hash_table_lookup(error_reports, GUINT_TO_POINTER(issuer))) + 1;
	if (n >= TRAP_UNHEALTHY_COUNT) {
		LOG_I("TRP-0002", "LID %u reported %u error traps: unhealthy, sweeping", issuer, n);
		g_hash_table_remove(error_reports, GUINT_TO_POINTER(issuer));
		return 1;
	}
	g_hash_table_insert(error_reports, GUINT_TO_POINTER(issuer), GUINT_TO_POINTER(n));
	return 0;
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
	if (!traps_want_sweep(number, issuer))
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
	if (error_reports)
		g_hash_table_destroy(error_reports);
	error_reports = NULL;
}

const struct trap_counts *traps_counts(void)
{
	return &counts;
}
