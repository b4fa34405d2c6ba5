/* SPDX-License-Identifier: BSD-2-Clause */
/* merge.c - a step's rows enter the final LFTs only inside the step's scope, so an engine can
 * never write what is not its own. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "base/log.h"
#include "routing/merge.h"

#define MERGE_LOG_MAX 5 /* refused entries logged one by one, then counted */

int routing_merge(const struct fabric *f, const struct ibsm_scope *scope,
		  const struct ibsm_routes *step, uint8_t *final_lft, uint32_t stride,
		  uint8_t *lid_owner, uint8_t owner)
{
	if (!f || !scope || !step || !step->lft || !final_lft || step->stride != stride)
		return -EINVAL;
	uint32_t nl = MIN(stride, f->pub.max_lid + 1);
	/* LIDs this step may write: destination in scope, path bits in range */
	uint8_t *lid_ok = g_malloc0(nl ? nl : 1);
	for (uint32_t l = 1; l < nl; l++) {
		lid_ok[l] = (uint8_t)ibsm_scope_routes_lid(&f->pub, scope, l);
		if (lid_ok[l] && lid_owner)
			lid_owner[l] = owner;
	}
	uint32_t refused = 0;
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		if (!ibsm_bit(&scope->switches, s))
			continue;
		const struct ibsm_node *node = &f->nodes[f->switches[s].node];
		const uint8_t *src = step->lft + (size_t)s * stride;
		uint8_t *dst = final_lft + (size_t)s * stride;
		for (uint32_t l = 1; l < nl; l++) {
			uint8_t port = src[l];
			if (port == IBSM_NO_PORT || !lid_ok[l])
				continue;
			if (port > node->nports) {
				if (refused < MERGE_LOG_MAX)
					LOG_E("MRG-0001", "routing step %u: switch 0x%016" PRIx64 " LID %u: "
					      "exit port %u beyond its %u ports; entry refused",
					      scope->step, node->guid, l, port, node->nports);
				refused++;
				continue;
			}
			dst[l] = port;
		}
	}
	if (refused > MERGE_LOG_MAX)
		LOG_E("MRG-0002", "routing step %u: %u LFT entries refused in all (exit port beyond "
		      "the switch's ports)", scope->step, refused);
	g_free(lid_ok);
	return (int)MIN(refused, (uint32_t)G_MAXINT);
}

int routing_merge_in_place(const struct fabric *f, const struct ibsm_scope *scope,
			   struct ibsm_routes *step)
{
	if (!f || !scope || !step || !step->lft)
		return -EINVAL;
	uint32_t stride = step->stride;
	uint32_t nl = MIN(stride, f->pub.max_lid + 1);
	uint8_t *lid_ok = g_malloc0(nl ? nl : 1);
	for (uint32_t l = 1; l < nl; l++)
		lid_ok[l] = (uint8_t)ibsm_scope_routes_lid(&f->pub, scope, l);
	uint32_t refused = 0;
	for (uint32_t s = 0; s < f->pub.n_switches; s++) {
		uint8_t *row = step->lft + (size_t)s * stride;
		if (!ibsm_bit(&scope->switches, s)) {
			memset(row, IBSM_NO_PORT, stride);
			continue;
		}
		const struct ibsm_node *node = &f->nodes[f->switches[s].node];
		if (stride)
			row[0] = IBSM_NO_PORT;
		for (uint32_t l = 1; l < nl; l++) {
			uint8_t port = row[l];
			if (port == IBSM_NO_PORT)
				continue;
			if (!lid_ok[l]) {
				row[l] = IBSM_NO_PORT;
				continue;
			}
			if (port > node->nports) {
				if (refused < MERGE_LOG_MAX)
					LOG_E("MRG-0001", "routing step %u: switch 0x%016" PRIx64 " LID %u: "
					      "exit port %u beyond its %u ports; entry refused",
					      scope->step, node->guid, l, port, node->nports);
				refused++;
				row[l] = IBSM_NO_PORT;
			}
		}
		if (nl < stride)
			memset(row + nl, IBSM_NO_PORT, stride - nl);
	}
	if (refused > MERGE_LOG_MAX)
		LOG_E("MRG-0002", "routing step %u: %u LFT entries refused in all (exit port beyond "
		      "the switch's ports)", scope->step, refused);
	g_free(lid_ok);
	return (int)MIN(refused, (uint32_t)G_MAXINT);
}
