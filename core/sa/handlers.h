/* SPDX-License-Identifier: BSD-2-Clause */
/* handlers.h - the one table of what the SA serves: for every attribute, the record bytes a
 * request must carry before any of its fields is read, the size of the records answered, the
 * methods allowed (any other is UNSUP_METHOD_ATTR) and the handler that answers; the record
 * kinds of sa/records.h among them. sa_compute() (sa/agent.c) finds every handler here. */
#ifndef IBSM_SA_HANDLERS_H
#define IBSM_SA_HANDLERS_H

#include <stddef.h>
#include <stdint.h>

struct sa;
struct sa_answer;
struct sa_kind;
struct sa_request;
struct sa_view;

/* Answers rq into a (a->rec_size, a->table and a->method already set, a->recs empty) from the
 * view v of the published snapshot; now in seconds of a monotonic clock. */
typedef void (*sa_handler_fn)(struct sa *sa, const struct sa_request *rq, const struct sa_view *v,
			      double now, struct sa_answer *a);

/* (not "struct sa_handler": <signal.h> defines that name as a macro) */
struct sa_attr_handler {
	uint16_t attr;
	uint32_t methods;          /* SA_METHOD_BIT() of each method allowed */
	size_t need;               /* request record bytes read (0: none); a kind's: its size */
	size_t rec_size;           /* of the records answered; a kind's: its size */
	sa_handler_fn handle;      /* NULL for a kind: answered by sa_kind_answer() */
	struct sa_kind *kind;      /* a record kind of sa/records.h, or NULL */
};

/* The bit of method m (SA_GET, ...) in sa_attr_handler.methods; methods from 32 up are none. */
#define SA_METHOD_BIT(m) ((m) < 32 ? 1u << (m) : 0u)

/* Initializes the kinds' layouts and checks them against the table: 0, or -1 with the name
 * of the first that does not add up (or names another attribute) in *bad. Once, before
 * anything else here (sa_new). */
int sa_handlers_check(const char **bad);
/* The entry of attribute attr, or NULL (not served). */
const struct sa_attr_handler *sa_handler_of(uint16_t attr);
/* The record bytes a request for attr must carry (0: attributes read no record, or are not
 * served: answered without a look at it). */
size_t sa_handler_need(uint16_t attr);
/* The record size h answers with. */
size_t sa_handler_rec_size(const struct sa_attr_handler *h);
/* The kind serving attribute attr, or NULL. */
const struct sa_kind *sa_kind_of(uint16_t attr);
/* Answers rq with h (its handler, or its kind). */
void sa_handler_answer(const struct sa_attr_handler *h, struct sa *sa, const struct sa_request *rq,
		       const struct sa_view *v, double now, struct sa_answer *a);

#endif
