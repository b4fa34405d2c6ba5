/* SPDX-License-Identifier: BSD-2-Clause */
/* ibsm/routing.h - the routing-engine ABI. An engine is a shared object exporting one symbol,
 * "ibsm_engine", a const struct ibsm_engine. Engines are pure: fabric + scope in, LFT rows out. */
#ifndef IBSM_ROUTING_H
#define IBSM_ROUTING_H

#include <stddef.h>
#include <stdint.h>
#include <ibsm/fabric.h>

#define IBSM_ABI_MAJOR 1 /* incompatible change: the loader refuses other majors */
#define IBSM_ABI_MINOR 0 /* fields appended: older engines still load */

enum ibsm_log_level { IBSM_LOG_ERROR = 0, IBSM_LOG_INFO = 1, IBSM_LOG_VERBOSE = 2, IBSM_LOG_DEBUG = 3 };

/* A bit set over dense ids. w == NULL means "all". */
struct ibsm_bits {
	const uint64_t *w;
	uint32_t nbits;
};

static inline int ibsm_bit(const struct ibsm_bits *b, uint32_t i)
{
	return b->w == NULL || (i < b->nbits && ((b->w[i >> 6] >> (i & 63)) & 1));
}

struct ibsm_scope {
	uint32_t size, step;        /* sizeof(struct ibsm_scope); chain step id */
	struct ibsm_bits switches;  /* switch rows the engine may write (switch ids) */
	struct ibsm_bits ports;     /* usable ports (port ids): a link counts if both ends set */
	struct ibsm_bits dests;     /* end ports (CA ports, switch port 0) to route to (port ids) */
	uint8_t path_bit_first, path_bit_count; /* LID offsets [first, first+count) of each port */
};

/* Is the link of directed adjacency a (from switch s) usable in this scope? */
static inline int ibsm_scope_link(const struct ibsm_fabric *f, const struct ibsm_scope *s,
				  uint32_t sw, const struct ibsm_adj *a)
{
	uint32_t p0 = f->nodes[f->switches[sw].node].port0;
	uint32_t q0 = f->nodes[f->switches[a->peer_sw].node].port0;
	return ibsm_bit(&s->ports, p0 + a->port) && ibsm_bit(&s->ports, q0 + a->peer_port);
}

struct ibsm_routes {
	uint32_t size, stride;  /* sizeof; bytes per switch row (= max_lid + 1) */
	uint8_t *lft;           /* [n_switches * stride], prefilled IBSM_NO_PORT */
	char why[256];          /* on failure: the rule broken and where */
};

struct ibsm_core {
	uint32_t size;
	void *cookie;           /* the core's own */
	void (*log)(const struct ibsm_core *, int level, const char *fmt, ...)
		__attribute__((format(printf, 3, 4)));
	/* Configuration value by OpenSM option name (e.g. "port_prof_ignore_file"), or NULL. */
	const char *(*config)(const struct ibsm_core *, const char *key);
	/* All-pairs switch hop counts over the scope's usable links: hops[a * n_switches + b],
	 * 0xFF when unreachable. Returns 0 or a negative errno. */
	int (*switch_hops)(const struct ibsm_core *, const struct ibsm_fabric *,
			   const struct ibsm_scope *, uint8_t *hops);
	int (*cancelled)(const struct ibsm_core *); /* non-zero: stop routing, return < 0 */
};

#define IBSM_CAP_LMC 0x1 /* can spread 2^LMC paths over several path bits */

struct ibsm_engine {
	uint16_t abi_major, abi_minor;
	uint32_t size;          /* sizeof(struct ibsm_engine) the engine was built with */
	const char *name;
	uint32_t caps;
	int (*setup)(const struct ibsm_core *core, void **inst); /* once per chain step */
	void (*teardown)(void *inst);
	/* Fill out->lft rows for the scope; < 0: cannot route (why says so). */
	int (*route)(void *inst, const struct ibsm_fabric *f, const struct ibsm_scope *s,
		     struct ibsm_routes *out, void **result);
	void (*result_free)(void *result); /* result is immutable; queries below are thread-safe */
	uint8_t (*path_sl)(const void *result, uint8_t sl_hint, uint16_t slid, uint16_t dlid);
	int (*sl2vl)(const void *result, uint32_t in_port, uint32_t out_port, uint8_t vl[16]);
	int (*vlarb)(const void *result, uint32_t port, uint8_t high[64][2], uint8_t low[64][2]);
	int (*mcast)(const void *result, const struct ibsm_fabric *f, uint16_t mlid,
		     uint32_t n_members, const uint32_t *members, uint64_t (*egress)[4]);
	int (*dump)(const void *result, const char *dir, const char *suffix);
};

#define IBSM_ENGINE_INIT(engine_name) \
	.abi_major = IBSM_ABI_MAJOR, .abi_minor = IBSM_ABI_MINOR, \
	.size = sizeof(struct ibsm_engine), .name = (engine_name)

#endif
