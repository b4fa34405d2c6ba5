/* fabric_fixture.h - small in-memory fabrics for unit tests, built through core/model.h
 * (lines, rings, 2D tori, fat trees), with simple LID assignment, a fake core services table
 * for running a routing engine, and an LFT walker that judges the tables it produced.
 * Linked into every unit test program (every tests/unit source not named test_...). */
#ifndef FABRIC_FIXTURE_H
#define FABRIC_FIXTURE_H

#include <glib.h>
#include <gmodule.h>
#include <stdint.h>
#include <ibsm/fabric.h>
#include <ibsm/routing.h>
#include "fabric/model.h"
#include "routing/deadlock.h"

/* ---- building ---------------------------------------------------------------------------
 * Node GUIDs: CAs FX_CA_GUID_BASE + 0x100 * n (port GUID = node GUID + port number),
 * switches FX_SWITCH_GUID_BASE + n (every switch port's GUID = node GUID). So after freezing,
 * CAs come before switches in node ids, and switch ids follow creation order. Every port
 * that exists is PRESENT, LinkUp and ACTIVE; sysimg_guid = node GUID (change it through
 * model_node(fx->b, idx) before fx_finish). Switch LinearFDBCap is 0xC000. */
#define FX_CA_GUID_BASE     0x0002c90000000000ull
#define FX_SWITCH_GUID_BASE 0x0002c90100000000ull

struct fx_builder {
	struct model_builder *b;
	uint32_t n_cas, n_switches;
};

void fx_builder_init(struct fx_builder *x);
/* Returns the builder index of the new node (for fx_link and model_node). */
uint32_t fx_add_switch(struct fx_builder *x, uint8_t nports, const char *desc);
uint32_t fx_add_ca(struct fx_builder *x, uint8_t nports, const char *desc);
void fx_link(struct fx_builder *x, uint32_t a, uint8_t pa, uint32_t b, uint8_t pb);
/* Freezes (generation 1), assigns LIDs with fx_assign_lids(lmc) and frees the builder. */
struct fabric *fx_finish(struct fx_builder *x, uint8_t lmc);

/* Sequential LIDs from 1 in port-id order: switch port 0 one LID (LMC 0), every CA port with
 * a link 2^lmc LIDs aligned to 2^lmc; then fabric_index_lids() and pub.lmc = lmc. */
void fx_assign_lids(struct fabric *f, uint8_t lmc);

/* Ready-made shapes; hosts are single-port CAs. Switch ids are creation order:
 * - line / ring of n switches: port 1 toward switch i-1, port 2 toward i+1 (a ring of 2 has
 *   two parallel links), hosts on ports 3 ..;
 * - torus2d x * y: switch id = j * x + i; ports 1 x-, 2 x+, 3 y-, 4 y+ (dimensions of size 1
 *   have no links, of size 2 parallel links), hosts on ports 5 ..;
 * - xgft(h; m[0..h-1]; w[0..h-1]): the extended generalized fat tree XGFT(h; m1..mh;
 *   w1..wh): prod(m) hosts with w1 ports each; level-l switches have m_l down ports (1 ..
 *   m_l, child a_l on port a_l + 1) and w_{l+1} up ports after them. Switch ids: level 1
 *   (leaves) first, then level 2, ... E.g. m = {16,16,64}, w = {1,16,16}: 16384 hosts,
 *   2304 switches;
 * - kary_ntree(k, n): xgft with m = {k,..,k}, w = {1,k,..,k}: k^n hosts, n * k^(n-1) switches. */
struct fabric *fx_line(unsigned n_switches, unsigned hosts_per_switch, uint8_t lmc);
struct fabric *fx_ring(unsigned n_switches, unsigned hosts_per_switch, uint8_t lmc);
struct fabric *fx_torus2d(unsigned x, unsigned y, unsigned hosts_per_switch, uint8_t lmc);
struct fabric *fx_xgft(unsigned h, const unsigned *m, const unsigned *w, uint8_t lmc);
struct fabric *fx_kary_ntree(unsigned k, unsigned n, uint8_t lmc);
/* f as the next generation (2) sees it with switch sw_id's first link gone (a repair's link
 * down), its LIDs assigned again with lmc. */
struct fabric *fx_first_link_gone(const struct fabric *f, uint32_t sw_id, uint8_t lmc);

/* Id lookups on a frozen fabric. */
uint32_t fx_switch_port(const struct ibsm_fabric *f, uint32_t sw, uint8_t num); /* port id */
uint32_t fx_ca_port(const struct ibsm_fabric *f, uint32_t nth_ca, uint8_t num); /* port id */
int fx_is_end_port(const struct ibsm_fabric *f, uint32_t port);   /* switch port 0, linked CA port */
int fx_is_ca_port(const struct ibsm_fabric *f, uint32_t port);    /* linked non-switch port */
uint16_t fx_ca_lid(const struct fabric *f, uint32_t nth_ca);      /* base LID of its port 1 */
uint16_t fx_switch_lid(const struct fabric *f, uint32_t sw);      /* LID of its port 0 */

/* ---- bit sets for scopes ------------------------------------------------------------------ */
struct ibsm_bits fx_bits_new(uint32_t nbits);            /* all clear */
void fx_bits_set(struct ibsm_bits *b, uint32_t i);
void fx_bits_free(struct ibsm_bits *b);
struct ibsm_scope fx_scope_all(void);                    /* everything, all path bits */

/* ---- a fake core ------------------------------------------------------------------------- */
struct fx_core {
	struct ibsm_core core;   /* handed to engines; cookie points back here */
	GHashTable *config;      /* key -> value (fx_core_set) */
	GPtrArray *log;          /* "E|I|V|D message" lines */
	int cancel;              /* cancelled() returns this */
	unsigned cancel_calls, hops_calls, read_calls;
	GHashTable *asked;       /* keys config() was asked for (a set) */
	GMutex asked_lock;       /* config() may be called from an engine's threads */
	const uint8_t *rows;     /* last_rows() (once fx_core_keep_rows set it): not owned */
	uint32_t rows_s, rows_stride, rows_calls;
};

void fx_core_init(struct fx_core *c);
void fx_core_clear(struct fx_core *c);
void fx_core_set(struct fx_core *c, const char *key, const char *value);
/* Lends the engine the ABI 1.4 last_rows() service from now on, answering rows (S rows of
 * stride bytes; NULL: none kept), as the core answers with what it programmed. */
void fx_core_keep_rows(struct fx_core *c, const uint8_t *rows, uint32_t S, uint32_t stride);
/* Number of log lines containing needle (and, if level >= 0, of that level). */
unsigned fx_core_logged(const struct fx_core *c, int level, const char *needle);
/* The keys c was asked for that e->config_keys does not declare, as "a, b" (g_free), or
 * NULL when every key asked is declared. */
char *fx_core_undeclared(struct fx_core *c, const struct ibsm_engine *e);
/* e->config_keys' entry for key, or NULL when e does not declare it. */
const struct ibsm_config_key *fx_engine_key(const struct ibsm_engine *e, const char *key);
/* Asserts the ABI 1.1 declarations of e after c routed with it: e is of this minor, has a
 * one-line summary, one-line help for every key, and declares every key c was asked for. */
void fx_check_declared(struct fx_core *c, const struct ibsm_engine *e);

/* All-pairs switch hops over the scope's usable links by plain BFS (the fixture's
 * switch_hops service; independent of core/hops.c). hops[a * S + b], 0xFF unreachable. */
int fx_switch_hops(const struct ibsm_fabric *f, const struct ibsm_scope *s, uint8_t *hops);
/* Same over every link, newly allocated (g_free). */
uint8_t *fx_switch_hops_all(const struct ibsm_fabric *f);
/* Links on a shortest path from end port src to end port dst (CA links count), -1 if none. */
int fx_end_hops(const struct ibsm_fabric *f, const uint8_t *hops, uint32_t src, uint32_t dst);

/* ---- running an engine ------------------------------------------------------------------- */
/* g_module_open(path, G_MODULE_BIND_LOCAL) and its "ibsm_engine"; NULL (and a test message)
 * on failure. */
const struct ibsm_engine *fx_engine_open(const char *path, GModule **module);

struct fx_run {
	const struct ibsm_engine *engine;
	struct ibsm_routes routes; /* lft [n_switches * stride] prefilled IBSM_NO_PORT */
	void *inst, *result;
	int rc;                    /* setup's, or else route's return value */
};

/* setup() then route() on f with scope s (NULL: fx_scope_all()). Returns run->rc. */
int fx_route(const struct ibsm_engine *e, struct fx_core *c, const struct ibsm_fabric *f,
	     const struct ibsm_scope *s, struct fx_run *run);
void fx_run_clear(struct fx_run *run);
/* The LFT entry of switch sw for lid that the run wrote. */
uint8_t fx_run_entry(const struct fx_run *run, uint32_t sw, uint32_t lid);

/* ---- judging tables ---------------------------------------------------------------------- */
enum fx_walk { FX_DELIVERED = 0, FX_LOOP, FX_BLACK_HOLE, FX_WRONG_PORT };

/* Follows the LFTs from end port src toward dlid; *hops = links crossed (CA links count). */
enum fx_walk fx_walk(const struct ibsm_fabric *f, const uint8_t *lft, uint32_t stride,
		     uint32_t src, uint16_t dlid, unsigned *hops);

struct fx_walk_stats {
	unsigned pairs, delivered, loops, black_holes, wrong;
	unsigned longer;    /* delivered, but over more links than the shortest path */
	unsigned max_hops;
};
/* Every end port (linked CA ports, switch port 0) to every assigned LID. */
void fx_walk_all(const struct ibsm_fabric *f, const uint8_t *lft, uint32_t stride,
		 struct fx_walk_stats *st);

/* Routes of all CA-port pairs (base LIDs) per directed switch-to-switch link, the link load of
 * the routing comparisons in bench/results/: load[port id of the sending switch port] (array
 * [n_ports], zeroed here; may be NULL). Returns max / mean over all directed switch-to-switch
 * links, *max the maximum. */
double fx_switch_link_load(const struct ibsm_fabric *f, const uint8_t *lft, uint32_t stride,
			   uint32_t *load, uint32_t *max);


/* ---- credit loops --------------------------------------------------------------------------
 * routing/deadlock.h's check of the tables a run produced, with the engine's own result hooks:
 * the SL of each route path_sl(result, 0, slid, dlid) (no hook: SL 0) and the VL at each hop
 * sl2vl(result, in, out, vl) (no hook, or < 0: VL = SL). The (channel, VL) dependency graph
 * over the switch-to-switch links; returns the channels on cycles, 0 when free of credit
 * loops (rep->cycle names one cycle by switch, port and VL). f is the fabric run routed.
 * fx_deadlock_check: every end port to every LID (switch port 0 too, as OpenSM's dfsssp,
 * lash and nue route them); fx_deadlock_check_ca: routes between CA ports only. */
uint32_t fx_deadlock_check(const struct fabric *f, const struct fx_run *run,
			   struct deadlock_report *rep);
uint32_t fx_deadlock_check_ca(const struct fabric *f, const struct fx_run *run,
			      struct deadlock_report *rep);
/* The same on any tables (e.g. merged ones), with engine e's hooks on its result (both may be
 * NULL: SL 0, VL = SL); flags as deadlock_check_flags() (DEADLOCK_CA_ROUTES). */
uint32_t fx_deadlock_check_tables(const struct fabric *f, const uint8_t *lft, uint32_t stride,
				  const struct ibsm_engine *e, const void *result, unsigned flags,
				  struct deadlock_report *rep);

#endif
