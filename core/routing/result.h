/* SPDX-License-Identifier: BSD-2-Clause */
/* result.h - the routes of one fabric generation: the final LFTs and the engine results they
 * came from, reference-counted with the generation, so the SA and the QoS code can ask the
 * engines for path SLs, SL2VL, VL arbitration and multicast trees on the live generation
 * while the next sweep routes. */
#ifndef IBSM_ROUTING_RESULT_H
#define IBSM_ROUTING_RESULT_H

#include <glib.h>
#include <stdint.h>
#include "fabric/model.h"
#include "routing/step.h"
#include "routing/loader.h"
#include "routing/tables.h"

#define ROUTING_NO_PART 0xFF

/* What one step's route() returned: the step instance (a reference) and its result. Shared
 * (reference-counted) when the unicast cache carries routes over to a new generation. */
struct routing_part {
	gint refs;
	struct routing_step *step;
	void *result;              /* the engine's, freed with its result_free() */
};

/* What one routing chain step routed, for its own dump files (routing log flags on): its
 * scope (bit sets copied) and its rows as route() left them, merged or not. */
struct routing_step_dump {
	char tag[ENGINE_NAME_MAX + 16];   /* "ID.ENGINE", as in opensm-lfts.ID.ENGINE.dump */
	int failed;                       /* declined or left holes: not merged */
	struct ibsm_scope scope;
	uint64_t *bits;                   /* the scope's bit sets, one allocation */
	uint8_t *lft;                     /* [n_switches * stride] */
};

struct routing_result {
	gint refs;
	struct fabric *f;          /* the generation routed (a reference) */
	uint32_t n_switches;
	uint32_t stride;           /* max_lid + 1 bytes per switch row */
	uint8_t *lft;              /* final tables [n_switches * stride], IBSM_NO_PORT = none */
	char engine[ENGINE_NAME_MAX]; /* who routed: engine name, or "cache" */
	GPtrArray *parts;          /* struct routing_part * */
	uint8_t *lid_part;         /* [stride]: index into parts of the part routing each LID */
	uint32_t rejected;         /* entries the merge refused */
	GPtrArray *step_dumps;     /* struct routing_step_dump *: a chain's steps, in the order
				    * they ran, when the routing log flags ask for dumps; else NULL */
	double seconds;            /* routing time */
};

/* Routes for generation f (referenced): tables all IBSM_NO_PORT, no parts. */
struct routing_result *routing_result_new(struct fabric *f);
/* The same with no tables (lft NULL): its caller hands it the buffer it routed into (one
 * from routing_tables_new). */
struct routing_result *routing_result_new_untabled(struct fabric *f);
struct routing_result *routing_result_ref(struct routing_result *r);
void routing_result_unref(struct routing_result *r);   /* NULL: nothing */
/* Adds what step returned (both referenced / taken over); returns the part index. */
uint8_t routing_result_add(struct routing_result *r, struct routing_step *step, void *result);
/* Carries the parts of `from` over to r (the unicast cache kept from's routes). */
void routing_result_inherit(struct routing_result *r, const struct routing_result *from);

/* Records step s's routes (routes->lft) over scope for its own dump files. */
void routing_result_add_step_dump(struct routing_result *r, const struct routing_step *s,
				  const struct ibsm_scope *scope, const uint8_t *lft, int failed);

/* Queries on the engine results, thread-safe (engines' results are immutable). */
/* SL of the path slid -> dlid: the engine routing dlid decides (sl_hint when it has no say). */
uint8_t routing_path_sl(const struct routing_result *r, uint8_t sl_hint, uint16_t slid, uint16_t dlid);
/* SL2VL of (in port, out port) ids: the first engine that has one; < 0 when none does. */
int routing_sl2vl(const struct routing_result *r, uint32_t in_port, uint32_t out_port, uint8_t vl[16]);
/* Which of the VL hooks some part's engine has: bit 0 sl2vl, bit 1 vlarb (0: none; r NULL: 0). */
unsigned routing_vl_hooks(const struct routing_result *r);
/* VL arbitration of port id: the first engine that has one; < 0 when none does. */
int routing_vlarb(const struct routing_result *r, uint32_t port, uint8_t high[64][2], uint8_t low[64][2]);
/* Multicast tree of mlid over member port ids: the first engine that builds one; < 0 if none. */
int routing_mcast(const struct routing_result *r, uint16_t mlid, uint32_t n_members,
		  const uint32_t *members, uint64_t (*egress)[4]);
/* Every engine's own dump files in dir (suffix per step once chains have several). Returns
 * the number of engines that failed to write. */
int routing_dump(const struct routing_result *r, const char *dir);

#endif
