/* SPDX-License-Identifier: BSD-2-Clause */
/* service.h - ServiceRecords (IBA 15.2.5.14): registered with Set, found with Get/GetTable by
 * component mask, removed with Delete or when their lease runs out (0xFFFFFFFF: never). A
 * service is identified by ServiceID, ServiceGID and ServiceP_Key; a second Set of the same
 * one replaces it and renews its lease. Kept across generations, each with who registered it
 * (its owner); at most SR_MAX_PER_PORT per requester port. */
#ifndef IBSM_SA_SERVICE_H
#define IBSM_SA_SERVICE_H

#include <glib.h>
#include <stdint.h>
#include "sa/compmask.h"

#define SR_SIZE 176
#define SR_LEASE_INFINITE 0xFFFFFFFFu
#define SR_MAX 16384            /* services registered at most (then NO_RESOURCES) */
/* Services one requester port may hold at once (then NO_RESOURCES). A host registers a few
 * (an SRP target, a storage or MPI daemon, each per port and partition; osmtest 7): 64 leaves
 * ample room, while no single port can take more than 1/256 of SR_MAX from the others. A
 * requester presenting the SM_Key is held to SR_MAX alone. */
#define SR_MAX_PER_PORT 64

enum { SR_ID, SR_GID, SR_PKEY, SR_RESV, SR_LEASE, SR_KEY, SR_NAME }; /* components 0-6 */

struct sa_services;

/* Who registered a service: the requester's port and node GUIDs (0: not known). */
struct sr_owner {
	uint64_t port, node;
};

struct sa_services *sa_services_new(void);
void sa_services_free(struct sa_services *s);
const struct sa_layout *sr_layout(void);
/* Set: rec (SR_SIZE bytes, mask) registered by owner at time now (seconds). A service with the
 * record's ServiceID, ServiceGID and ServiceP_Key (its bytes, whatever the mask) is replaced,
 * its owner kept, its lease renewed; a new one is refused NO_RESOURCES when owner->port holds
 * quota of them already (quota 0: no such limit) or SR_MAX are registered. *out the record as
 * answered (ServiceP_Key 0xFFFF when the mask does not name it, as OpenSM answers). Who may
 * register what is the caller's to judge first (sa/service_requests.c). 0 or an SA status. */
uint16_t sa_service_set(struct sa_services *s, const uint8_t *rec, uint64_t mask,
			const struct sr_owner *owner, unsigned quota, double now, uint8_t *out);
/* visible(ctx, rec, owner): may the requester see this service? */
typedef int (*sr_visible_fn)(void *ctx, const uint8_t *rec, const struct sr_owner *owner);
/* Get/GetTable: every live service matching (rec, mask) that visible (NULL: every one) lets
 * the requester see, appended to out (the lease shown is what remains of it). */
void sa_service_query(struct sa_services *s, const uint8_t *rec, uint64_t mask, double now,
		      sr_visible_fn visible, void *ctx, GByteArray *out);
/* judge(ctx, rec, owner): 0 when the requester may delete this service, else the SA status to
 * answer. */
typedef uint16_t (*sr_judge_fn)(void *ctx, const uint8_t *rec, const struct sr_owner *owner);
/* Delete, as OpenSM's: the one live service with the record's ServiceID, ServiceGID and
 * ServiceP_Key (its bytes, whatever the mask: a Delete names a service, never a pattern), if
 * judge (NULL: none) allows; appended to out. 0, NO_RECORDS when there is none, or judge's
 * status (nothing deleted). */
uint16_t sa_service_delete(struct sa_services *s, const uint8_t *rec, double now, sr_judge_fn judge,
			   void *ctx, GByteArray *out);
/* Services still registered (expired ones dropped first); those owner port holds. */
uint32_t sa_services_count(struct sa_services *s, double now);
uint32_t sa_services_held(struct sa_services *s, uint64_t port, double now);
/* Sets refused NO_RESOURCES so far (a port's quota or SR_MAX reached). */
uint64_t sa_services_refused(const struct sa_services *s);
/* What a restart keeps (sa/sa_db.c): fn for each live service with its record as registered
 * (the lease it was given, its ServiceKey), when it expires on the phase_now() clock (0:
 * never) and its owner. */
void sa_services_foreach(struct sa_services *s, double now,
			 void (*fn)(void *ctx, const uint8_t *rec, double expires,
				    const struct sr_owner *owner), void *ctx);
/* Registers rec as it was before a restart, expiring at `expires` (0: never): 0 added, 1 the
 * same service (ServiceID, ServiceGID, ServiceP_Key) is registered already and is kept, -1
 * SR_MAX are registered. */
int sa_service_restore(struct sa_services *s, const uint8_t *rec, double expires,
		       const struct sr_owner *owner);

#endif
