/* SPDX-License-Identifier: BSD-2-Clause */
/* reports.h - the SA's Reports (IBA 15.2.3, SubnAdmReport of a Notice on QP1) to the ports that
 * subscribed (sa/inform.h keeps the subscriptions): the traps the SM receives, traps 64/65 for
 * end ports that came or went between two generations, the notices the SA raises (traps 66/67,
 * sa/mcast_requests.c); each sent again until its ReportResp, on a timer. */
#ifndef IBSM_SA_REPORTS_H
#define IBSM_SA_REPORTS_H

#include <stdint.h>

struct sa;
struct fabric;

/* A trap the SM received (its SMP data: the Notice without IssuerGID), reported to the
 * subscribers it matches (only by a master, from a published generation). */
void sa_report_trap(struct sa *sa, const uint8_t *smp_notice);

/* For the SA's own files. */
/* The subscriptions, and (with a dispatch) the ReportResps and the resend timer. */
void sa_reports_init(struct sa *sa);
void sa_reports_fini(struct sa *sa);
/* A subnet-management notice about no port in particular (traps 66/67: data details, 54 bytes)
 * from this SM's port in the published generation to every subscriber it matches; none
 * without a generation. Returns the number of Reports sent. */
unsigned sa_reports_notice(struct sa *sa, uint16_t trap, const uint8_t *details, double now);
/* Traps 64 and 65 for the end ports that came or went between generations old and now (now
 * the one published); the subscriptions of ports gone go with them. */
void sa_reports_generation(struct sa *sa, const struct fabric *old, const struct fabric *now);

#endif
