/* SPDX-License-Identifier: BSD-2-Clause */
/* publish.h - the snapshot handed over to the SA (sa/inputs.h), whole: the SA answers from it
 * until the next one, and derives from it what does not change between them (the QoS policy
 * compiled for the generation, the partitions' SLs); a new generation also reports the end
 * ports that came and went (traps 64/65) and takes the members of ports gone out of their
 * multicast groups. */
#ifndef IBSM_SA_PUBLISH_H
#define IBSM_SA_PUBLISH_H

#include "sa/inputs.h"

struct sa;

/* From now on the SA answers from a copy of in (references taken to its generation and
 * P_Key tables; sa NULL: nothing). Handing over the same snapshot again changes nothing. */
void sa_publish(struct sa *sa, const struct sa_inputs *in);
/* The indexes of generation f (sa/index.h), built ahead by the caller (sa_index_new is pure:
 * e.g. on a thread of its own, tens of ms at 50 000 ports) and taken over: the next
 * sa_publish of a snapshot of f uses them instead of building its own. */
struct sa_index;
struct fabric;
void sa_publish_index(struct sa *sa, const struct fabric *f, struct sa_index *ix);
/* For sa_free: drops the snapshot and what was derived from it. */
void sa_publish_release(struct sa *sa);

#endif
