/* SPDX-License-Identifier: BSD-2-Clause */
/* service.h - ServiceRecords (IBA 15.2.5.14): registered with Set, found with Get/GetTable by
 * component mask, removed with Delete or when their lease runs out (0xFFFFFFFF: never). A
 * service is identified by ServiceID, ServiceGID and ServiceP_Key; a second Set of the same
 * one replaces it and renews its lease. Kept across generations. */
#ifndef IBSM_SA_SERVICE_H
#define IBSM_SA_SERVICE_H

#include <glib.h>
#include <stdint.h>
#include "sa/compmask.h"

#define SR_SIZE 176
#define SR_LEASE_INFINITE 0xFFFFFFFFu
#define SR_MAX 16384            /* services registered at most (then NO_RESOURCES) */

enum { SR_ID, SR_GID, SR_PKEY, SR_RESV, SR_LEASE, SR_KEY, SR_NAME }; /* components 0-6 */

struct sa_services;

struct sa_services *sa_services_new(void);
void sa_services_free(struct sa_services *s);
const struct sa_layout *sr_layout(void);
/* Set: rec (SR_SIZE bytes, mask) registered at time now (seconds); *out the record as kept.
 * gid_known says whether ServiceGID names a port of the fabric. 0 or an SA status. */
uint16_t sa_service_set(struct sa_services *s, const uint8_t *rec, uint64_t mask, int gid_known,
			double now, uint8_t *out);
/* Get/GetTable: every live service matching (rec, mask), appended to out (the lease shown is
 * what remains of it). */
void sa_service_query(struct sa_services *s, const uint8_t *rec, uint64_t mask, double now,
		      GByteArray *out);
/* Delete: removes every live service matching; they are appended to out. */
void sa_service_delete(struct sa_services *s, const uint8_t *rec, uint64_t mask, double now,
		       GByteArray *out);
/* Services still registered (expired ones dropped first). */
uint32_t sa_services_count(struct sa_services *s, double now);

#endif
