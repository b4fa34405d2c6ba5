/* SPDX-License-Identifier: BSD-2-Clause */
/* ibsm/routing.h - the routing-engine ABI. An engine is a shared object exporting one symbol,
 * "ibsm_engine", a const struct ibsm_engine. Engines are pure: fabric + scope in, LFT rows out.
 *
 * Versions. IBSM_ABI_MAJOR changes break engines: the loader refuses another major.
 * IBSM_ABI_MINOR grows when fields are appended; the loader takes an engine of any minor up
 * to its own (ABI 1.0 engines load in a 1.1 core) and refuses a newer one, naming both.
 * Every struct the core hands over starts with its size, so an engine can tell which fields
 * exist; an engine's own struct ibsm_engine says its size the same way.
 *
 * Lifetime and threads (what the core promises, what an engine must keep to):
 *  - The core opens NAME.so (RTLD_NOW, local symbols) when a routing chain names it, and
 *    keeps it loaded for the life of the process (static data a plugin registers, e.g. a
 *    GLib quark, stays valid); instances are torn down and results freed as below.
 *  - setup() runs on the core's main thread, once per chain step, when the chain is built:
 *    at start-up and again whenever a configuration reload (SIGHUP) is applied. The core
 *    pointer it gets stays valid until teardown(), and so do the strings config() returns.
 *  - route() runs on the core's routing thread, never on the thread that does MAD I/O, and
 *    never twice at once for one instance; it may run while queries on results of earlier
 *    generations of the same instance run on other threads. Engines may start their own
 *    threads inside route() and must join them before it returns.
 *  - The fabric and scope are valid only during route(): copy into the result what queries
 *    need later, never keep a pointer into the fabric.
 *  - result is immutable once route() returns. path_sl, sl2vl, vlarb and mcast may be called
 *    on it from any thread, concurrently, for as long as the fabric generation it was
 *    computed for is live (the SA answers from it while the next sweep routes). result_free()
 *    is called once, on any thread, after the last query.
 *  - teardown() is called on the main thread after every result of the instance was freed.
 *  - cancelled() may be called from any thread inside route(); non-zero means SIGTERM or a
 *    newer sweep request: return -ECANCELED soon, leaving out->lft as it is.
 *  - log() is thread-safe; one line per call, no trailing newline needed. */
#ifndef IBSM_ROUTING_H
#define IBSM_ROUTING_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ibsm/fabric.h>

#define IBSM_ABI_MAJOR 1 /* incompatible change: the loader refuses other majors */
#define IBSM_ABI_MINOR 4 /* fields appended: older engines still load (1.2: the orchestrator,
			  * ibsm/orchestrator.h; 1.3: the core's file reader, read_file;
			  * 1.4: the rows of the last route(), last_rows;
			  * struct ibsm_engine is as in 1.1) */

/* Put before the engine's table so it is exported from a -fvisibility=hidden build. */
#define IBSM_ENGINE_EXPORT __attribute__((visibility("default")))

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
	uint8_t path_bit_first, path_bit_count; /* LID offsets [first, first+count) of each port;
						  * count 0: every LID of the port */
};

/* Is the link of directed adjacency a (from switch sw) usable in this scope? */
static inline int ibsm_scope_link(const struct ibsm_fabric *f, const struct ibsm_scope *s,
				  uint32_t sw, const struct ibsm_adj *a)
{
	uint32_t p0 = ibsm_switch_node(f, sw)->port0;
	uint32_t q0 = ibsm_switch_node(f, a->peer_sw)->port0;
	return ibsm_bit(&s->ports, p0 + a->port) && ibsm_bit(&s->ports, q0 + a->peer_port);
}

/* ABI 1.1. The LID offsets [*first, *end) of end port p that the scope routes: its path bits,
 * cut short at the first LID that is not in a table of `stride` entries or not owned by p.
 * Returns 0 when there are none (p not a destination in scope, no LID, or a bad LMC). */
static inline int ibsm_scope_lid_offsets(const struct ibsm_fabric *f, const struct ibsm_scope *s,
					 uint32_t stride, uint32_t p, unsigned *first, unsigned *end)
{
	const struct ibsm_port *port = ibsm_port_at(f, p);
	if (!ibsm_bit(&s->dests, p) || port->lid == 0 || port->lmc > 7)
		return 0;
	unsigned nl = 1u << port->lmc;
	unsigned k = s->path_bit_first;
	unsigned e = s->path_bit_count ? k + s->path_bit_count : nl;
	if (e > nl)
		e = nl;
	while (k < e && port->lid + k <= f->max_lid && port->lid + k < stride && f->lid_port &&
	       f->lid_port[port->lid + k] == p)
		k++;
	*first = s->path_bit_first;
	*end = k;
	return *first < *end;
}

/* ABI 1.1. Does the scope route LID lid (its port is a destination in scope, and its offset
 * from the port's base LID is among the scope's path bits)? */
static inline int ibsm_scope_routes_lid(const struct ibsm_fabric *f, const struct ibsm_scope *s,
					uint32_t lid)
{
	if (lid == 0 || lid > f->max_lid || !f->lid_port)
		return 0;
	uint32_t p = f->lid_port[lid];
	if (p == IBSM_NONE || p >= f->n_ports || !ibsm_bit(&s->dests, p))
		return 0;
	uint32_t off = lid - ibsm_port_at(f, p)->lid;
	return !s->path_bit_count ||
	       (off >= s->path_bit_first && off < (uint32_t)s->path_bit_first + s->path_bit_count);
}

struct ibsm_routes {
	uint32_t size, stride;  /* sizeof; bytes per switch row (>= max_lid + 1) */
	uint8_t *lft;           /* [n_switches * stride], prefilled IBSM_NO_PORT */
	char why[256];          /* on failure: the rule broken and where */
};

struct ibsm_core {
	uint32_t size;
	void *cookie;           /* the core's own */
	void (*log)(const struct ibsm_core *, int level, const char *fmt, ...)
		__attribute__((format(printf, 3, 4)));
	/* The value of configuration key `key` for this chain step, or NULL when it is unset.
	 * Looked up in the step's own file (routing chains), then the main configuration (the
	 * YAML file or opensm.conf, and the command line), then the engine's declared default.
	 * Any key works; an engine lists the ones it reads in ibsm_engine.config_keys. */
	const char *(*config)(const struct ibsm_core *, const char *key);
	/* All-pairs switch hop counts over the scope's usable links: hops[a * n_switches + b],
	 * 0xFF when unreachable. Returns 0 or a negative errno. */
	int (*switch_hops)(const struct ibsm_core *, const struct ibsm_fabric *,
			   const struct ibsm_scope *, uint8_t *hops);
	int (*cancelled)(const struct ibsm_core *); /* non-zero: stop routing, return < 0 */
	/* ---- ABI 1.3 (check size, or call ibsm_read_file() below, which does) ---- */
	/* Reads the file at path, named by configuration key `key` (for messages: the key, or
	 * where the name came from), the way the core reads its own: only a regular file (a
	 * symlink to one is fine) of at most 16 MiB, opened without blocking, so a FIFO, a
	 * device such as /dev/zero, a directory or a larger file is refused at once, whole,
	 * and never hangs the thread that asks. Returns 0 with *text (NUL-terminated, *len bytes
	 * without the NUL; release it with free()), or a negative errno (-ENOENT missing,
	 * -EISDIR, -EINVAL not a regular file, -EFBIG too big, open()'s or read()'s) with why
	 * (why_len bytes) naming key and path: "torus_config /etc/t.conf: a FIFO, not a regular
	 * file: not read". The core logs nothing: the engine says what it does without the
	 * file. Any thread, setup() and route() alike. */
	int (*read_file)(const struct ibsm_core *, const char *key, const char *path, char **text,
			 size_t *len, char *why, size_t why_len);
	/* ---- ABI 1.4 (check with IBSM_CORE_HAS) ---- */
	/* The rows the last route() of this instance left, as the core keeps them: the tables it
	 * programmed from them, *n_switches rows of *stride bytes in the switch order of the
	 * fabric that route() got. Entries the core's merge clears are IBSM_NO_PORT there (LID 0,
	 * LIDs no port holds). NULL when the core keeps none: no route() yet, or the last one
	 * failed, was refused (holes, entries naming ports a switch lacks) or was merged with other
	 * steps' rows (a routing chain). Read-only; only inside route(), valid until it returns.
	 * An engine that copies the rows whose inputs did not change (minhop after a link change)
	 * reads them here instead of keeping a copy of its own. */
	const uint8_t *(*last_rows)(const struct ibsm_core *, uint32_t *n_switches, uint32_t *stride);
};

/* ABI 1.3: non-zero when the struct core points to (of type, core->size bytes) is long enough
 * to hold member field and fills it: a service appended after ABI 1.0 is there to call. */
#define IBSM_CORE_HAS(core, type, field) \
	((core)->size >= offsetof(type, field) + sizeof(((type *)0)->field) && (core)->field)

/* ABI 1.3: core->read_file() when the core lends it; from an older core (or NULL path),
 * -ENOSYS (-ENOENT) with why saying so, naming key and path, and nothing read. */
static inline int ibsm_read_file(const struct ibsm_core *core, const char *key, const char *path,
				 char **text, size_t *len, char *why, size_t why_len)
{
	*text = NULL;
	*len = 0;
	if (!path || !*path) {
		if (why_len)
			snprintf(why, why_len, "%s: no file named", key);
		return -ENOENT;
	}
	if (!IBSM_CORE_HAS(core, struct ibsm_core, read_file)) {
		if (why_len)
			snprintf(why, why_len, "%s %s: not read: this ibsm lends its engines no file "
				 "reader (core of ABI 1.2 or older)", key, path);
		return -ENOSYS;
	}
	return core->read_file(core, key, path, text, len, why, why_len);
}

/* ABI 1.1: a configuration key an engine reads. --create-config lists them; a key in a
 * configuration file that neither the core nor any engine found declares is an error. */
struct ibsm_config_key {
	const char *name;          /* e.g. "minhop_threads"; NULL ends the list */
	const char *default_value; /* as a file would spell it; NULL: unset */
	const char *help;          /* one line */
};

/* ABI 1.1: key's value as an unsigned number (decimal or 0x hex), def when unset or bad. */
static inline unsigned long ibsm_config_ulong(const struct ibsm_core *core, const char *key,
					      unsigned long def)
{
	const char *v = core->config ? core->config(core, key) : NULL;
	char *end;
	if (!v || !*v)
		return def;
	unsigned long n = strtoul(v, &end, 0);
	return *end ? def : n;
}

/* ABI 1.1: key's value as a boolean (TRUE/true/yes/1 or FALSE/false/no/0), def otherwise. */
static inline int ibsm_config_bool(const struct ibsm_core *core, const char *key, int def)
{
	const char *v = core->config ? core->config(core, key) : NULL;
	if (!v)
		return def;
	if (!strcmp(v, "TRUE") || !strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "1"))
		return 1;
	if (!strcmp(v, "FALSE") || !strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "0"))
		return 0;
	return def;
}

#define IBSM_CAP_LMC 0x1 /* can spread 2^LMC paths over several path bits */
/* The tables are the administrator's, loaded as given (OpenSM's file engine ignores topology
 * changes): the core programs them even where its walk finds routes not delivered, and logs
 * those (SRN-0002, a WARN) instead of failing the step. A core older than 1.3 ignores it. */
#define IBSM_CAP_AS_LOADED 0x2

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
	/* The SL of path slid -> dlid: sl_hint is the SL the core would give (asked for by the
	 * query, else its QoS level's); return it, or the SL the engine's routes need. */
	uint8_t (*path_sl)(const void *result, uint8_t sl_hint, uint16_t slid, uint16_t dlid);
	/* Under -Q, the SL-to-VL map the core writes (vl[sl], 15 drops the SL): vl holds the
	 * qos_* option value for the port's type; change it and return 0 to override, < 0 to
	 * leave it. A switch table: in_port and out_port are port ids of the switch's ports (its
	 * port 0 included); a CA or router port's table: in_port == out_port == that port's id.
	 * The core fits every VL to the output port's OperVLs afterwards. */
	int (*sl2vl)(const void *result, uint32_t in_port, uint32_t out_port, uint8_t vl[16]);
	/* Under -Q, the VL arbitration of port id `port` (a switch external port, an enhanced
	 * switch port 0, a CA or router port): (VL, weight) entries, prefilled from the options;
	 * return 0 to override, < 0 to leave them. Entries beyond the port's caps are not written. */
	int (*vlarb)(const void *result, uint32_t port, uint8_t high[64][2], uint8_t low[64][2]);
	/* The spanning tree of multicast group mlid: members are end-port ids (CA ports, switch
	 * port 0); egress[s] (one per switch id, zeroed by the core) gets bit p set for every
	 * port p switch s forwards the group's packets to (members' ports and tree links; port 0
	 * for a switch member). The tree must be loop-free and reach every member once; the
	 * core floods out of every set port but the ingress. Return 0 when filled, < 0 to leave
	 * the group to the core's default tree (rooted at a central switch). */
	int (*mcast)(const void *result, const struct ibsm_fabric *f, uint16_t mlid,
		     uint32_t n_members, const uint32_t *members, uint64_t (*egress)[4]);
	int (*dump)(const void *result, const char *dir, const char *suffix);
	/* ---- ABI 1.1 ---- */
	const struct ibsm_config_key *config_keys; /* the keys it reads, or NULL */
	const char *summary;                       /* one line for listings, or NULL */
};

#define IBSM_ENGINE_INIT(engine_name) \
	.abi_major = IBSM_ABI_MAJOR, .abi_minor = IBSM_ABI_MINOR, \
	.size = sizeof(struct ibsm_engine), .name = (engine_name)

#endif
