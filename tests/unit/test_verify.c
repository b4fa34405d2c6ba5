/* test_verify.c - the core's walk of a routing step's tables (core/routing/verify.c): whole
 * tables pass with every (switch, LID) pair counted once, and each kind of hole an engine can
 * leave (no entry, a loop, a port without a link, the wrong port, a CA that is not the
 * destination) is found, counted for every switch whose walk crosses it, and named; the scope
 * limits what must be delivered; the two-thread split finds what one thread finds; a walk
 * since the last whole one (a repair's) finds what a whole walk finds; randomly broken tables
 * give what a plain walk without memo or tables gives. */
#include <string.h>
#include <glib.h>
#include <gmodule.h>
#include "fabric/patch.h"
#include "fabric_fixture.h"
#include "routing/result.h"
#include "routing/verify.h"

static const struct ibsm_engine *minhop;

struct routed {
	struct fabric *f;
	uint8_t *lft;      /* minhop's tables, a copy the test may break */
	uint32_t stride;
};

static void route(struct routed *t, struct fabric *f)
{
	struct fx_core c;
	struct fx_run r;
	fx_core_init(&c);
	g_assert_cmpint(fx_route(minhop, &c, &f->pub, NULL, &r), ==, 0);
	t->f = f;
	t->stride = r.routes.stride;
	t->lft = g_memdup2(r.routes.lft, (size_t)f->pub.n_switches * t->stride);
	fx_run_clear(&r);
	fx_core_clear(&c);
}

static void routed_clear(struct routed *t)
{
	g_free(t->lft);
	fabric_unref(t->f);
}

static uint8_t *entry(struct routed *t, uint32_t sw, uint32_t lid)
{
	return &t->lft[(size_t)sw * t->stride + lid];
}

/* The base LID of the nth CA port hanging off switch sw. */
static uint32_t host_lid(const struct fabric *f, uint32_t sw, unsigned nth)
{
	for (uint32_t lid = 1; lid <= f->pub.max_lid; lid++) {
		uint32_t p = f->pub.lid_port[lid];
		if (p == IBSM_NONE || f->ports[p].lid != lid || !fx_is_ca_port(&f->pub, p) ||
		    ibsm_port_switch(&f->pub, p) != sw)
			continue;
		if (nth-- == 0)
			return lid;
	}
	g_assert_not_reached();
	return 0;
}

static uint64_t verify(struct routed *t, const struct ibsm_scope *s, struct routing_holes *h)
{
	struct ibsm_scope all = fx_scope_all();
	return routing_verify(t->f, s ? s : &all, t->lft, t->stride, h);
}

/* Line of 4 switches (port 1 toward i-1, 2 toward i+1, hosts on 3 and 4): 4 + 8 LIDs. */
static void line(struct routed *t)
{
	route(t, fx_line(4, 2, 0));
	g_assert_cmpuint(t->f->pub.max_lid, ==, 12);
}

static void test_whole(void)
{
	struct routed t;
	line(&t);
	struct routing_holes h;
	g_assert_cmpuint(verify(&t, NULL, &h), ==, 0);
	g_assert_cmpuint(h.walks, ==, 4 * 12);
	char text[256];
	routing_hole_text(t.f, &h, text, sizeof(text));
	g_assert_cmpstr(text, ==, "no holes");
	routed_clear(&t);
}

/* One broken entry; the holes expected, the kind, the switches named. */
static void expect(struct routed *t, uint64_t holes, enum hole_kind kind, uint32_t from,
		   uint32_t lid, uint32_t at)
{
	struct routing_holes h;
	g_assert_cmpuint(verify(t, NULL, &h), ==, holes);
	g_assert_cmpuint(h.holes, ==, holes);
	g_assert_cmpuint(h.by_kind[kind], ==, holes);
	g_assert_cmpuint(h.first_kind, ==, kind);
	g_assert_cmpuint(h.first_switch, ==, from);
	g_assert_cmpuint(h.first_lid, ==, lid);
	g_assert_cmpuint(h.first_at, ==, at);
}

static void test_no_entry(void)
{
	struct routed t;
	line(&t);
	uint32_t lid = host_lid(t.f, 3, 0);
	*entry(&t, 1, lid) = IBSM_NO_PORT;
	/* switches 0 and 1 walk into switch 1's missing entry; 2 and 3 deliver */
	expect(&t, 2, HOLE_NO_ENTRY, 0, lid, 1);
	char text[256];
	struct routing_holes h;
	verify(&t, NULL, &h);
	routing_hole_text(t.f, &h, text, sizeof(text));
	g_test_message("%s", text);
	char *want = g_strdup_printf("2 of 48 (switch, LID) pairs not delivered, e.g. switch "
				     "0x%016" G_GINT64_MODIFIER "x (line-0) to LID %u: no entry at switch "
				     "0x%016" G_GINT64_MODIFIER "x (line-1)",
				     t.f->nodes[t.f->switches[0].node].guid, lid,
				     t.f->nodes[t.f->switches[1].node].guid);
	g_assert_cmpstr(text, ==, want);
	g_free(want);
	routed_clear(&t);
}

static void test_loop(void)
{
	struct routed t;
	line(&t);
	uint32_t lid = host_lid(t.f, 3, 1);
	*entry(&t, 2, lid) = 1; /* back toward switch 1, which sends it on to 2 */
	expect(&t, 3, HOLE_LOOP, 0, lid, 1);
	routed_clear(&t);
}

static void test_dead_port(void)
{
	struct routed t;
	line(&t);
	uint32_t lid = host_lid(t.f, 3, 0);
	*entry(&t, 0, lid) = 1; /* switch 0's port 1 has no link */
	expect(&t, 1, HOLE_DEAD_PORT, 0, lid, 0);
	*entry(&t, 0, lid) = 2;
	*entry(&t, 2, lid) = 9; /* beyond the switch's ports */
	expect(&t, 3, HOLE_DEAD_PORT, 0, lid, 2);
	routed_clear(&t);
}

static void test_wrong_port(void)
{
	struct routed t;
	line(&t);
	uint32_t lid = host_lid(t.f, 3, 0);
	/* at the destination's switch, the other host's port */
	*entry(&t, 3, lid) = *entry(&t, 3, host_lid(t.f, 3, 1));
	expect(&t, 4, HOLE_WRONG_PORT, 0, lid, 3);
	*entry(&t, 3, lid) = *entry(&t, 3, host_lid(t.f, 3, 1)) == 3 ? 4 : 3;
	struct routing_holes h;
	g_assert_cmpuint(verify(&t, NULL, &h), ==, 0);
	/* on the way, a host port: the CA is not the destination */
	*entry(&t, 1, lid) = 3;
	expect(&t, 2, HOLE_WRONG_PORT, 0, lid, 1);
	*entry(&t, 1, lid) = 2;
	/* a switch's own LID must end on its port 0 */
	uint32_t own = fx_switch_lid(t.f, 2);
	*entry(&t, 2, own) = 3;
	expect(&t, 4, HOLE_WRONG_PORT, 0, own, 2);
	*entry(&t, 2, own) = 0;
	/* port 0 of a switch that is not the destination */
	*entry(&t, 1, lid) = 0;
	expect(&t, 2, HOLE_WRONG_PORT, 0, lid, 1);
	routed_clear(&t);
}

static void test_kinds_add_up(void)
{
	struct routed t;
	line(&t);
	*entry(&t, 0, host_lid(t.f, 3, 0)) = IBSM_NO_PORT;
	*entry(&t, 1, host_lid(t.f, 0, 0)) = 9;
	*entry(&t, 3, host_lid(t.f, 2, 1)) = 2; /* switch 3's port 2 has no link */
	struct routing_holes h;
	g_assert_cmpuint(verify(&t, NULL, &h), ==, 1 + 3 + 1);
	g_assert_cmpuint(h.by_kind[HOLE_NO_ENTRY], ==, 1);
	g_assert_cmpuint(h.by_kind[HOLE_DEAD_PORT], ==, 4);
	g_assert_cmpuint(h.walks, ==, 48);
	routed_clear(&t);
}

/* Only the scope's switches must deliver, only its destinations, over its links. */
static void test_scope(void)
{
	struct routed t;
	line(&t);
	const struct ibsm_fabric *pf = &t.f->pub;
	uint32_t far = host_lid(t.f, 3, 0), near = host_lid(t.f, 0, 0);
	*entry(&t, 3, far) = IBSM_NO_PORT;  /* breaks 4 walks */
	*entry(&t, 2, near) = IBSM_NO_PORT; /* breaks the walks from 2 and 3 */
	struct routing_holes h;
	g_assert_cmpuint(verify(&t, NULL, &h), ==, 6);

	/* switches 0 and 1: far's switch is outside, so far is no one's to deliver; the walks
	 * toward near start at 0 and 1 only */
	struct ibsm_scope s = fx_scope_all();
	s.switches = fx_bits_new(pf->n_switches);
	fx_bits_set(&s.switches, 0);
	fx_bits_set(&s.switches, 1);
	g_assert_cmpuint(verify(&t, &s, &h), ==, 0);
	g_assert_cmpuint(h.walks, ==, 2 * 6); /* 2 switches x (2 switch LIDs + 4 host LIDs) */
	/* 1 and 2: the walk from 2 toward near is broken; from 1 it is not */
	fx_bits_free(&s.switches);
	s.switches = fx_bits_new(pf->n_switches);
	fx_bits_set(&s.switches, 1);
	fx_bits_set(&s.switches, 2);
	g_assert_cmpuint(verify(&t, &s, &h), ==, 0); /* near hangs off switch 0, outside */
	fx_bits_free(&s.switches);

	/* destinations: only near */
	s = fx_scope_all();
	s.dests = fx_bits_new(pf->n_ports);
	fx_bits_set(&s.dests, pf->lid_port[near]);
	g_assert_cmpuint(verify(&t, &s, &h), ==, 2);
	g_assert_cmpuint(h.walks, ==, 4);
	fx_bits_free(&s.dests);

	/* without the link 1-2, switches 2 and 3 cannot reach near, 0 and 1 cannot reach far */
	s = fx_scope_all();
	s.ports = fx_bits_new(pf->n_ports);
	for (uint32_t p = 0; p < pf->n_ports; p++)
		fx_bits_set(&s.ports, p);
	uint32_t p12 = fx_switch_port(pf, 1, 2), p21 = fx_switch_port(pf, 2, 1);
	((uint64_t *)s.ports.w)[p12 >> 6] &= ~(1ull << (p12 & 63));
	((uint64_t *)s.ports.w)[p21 >> 6] &= ~(1ull << (p21 & 63));
	g_assert_cmpuint(verify(&t, &s, &h), ==, 2); /* far from 2 and 3 */
	g_assert_cmpuint(h.walks, ==, 2 * 12);
	fx_bits_free(&s.ports);
	routed_clear(&t);
}

/* Enough work for the second thread: holes on both sides of the split are all found. */
static void test_two_threads(void)
{
	struct routed t;
	route(&t, fx_kary_ntree(16, 3, 1)); /* 768 switches, 4096 hosts, 8960 LIDs */
	const struct fabric *f = t.f;
	g_assert_cmpuint((uint64_t)f->pub.n_switches * f->pub.max_lid, >=, 4000000);
	struct routing_holes h;
	g_assert_cmpuint(verify(&t, NULL, &h), ==, 0);
	g_assert_cmpuint(h.walks, ==, (uint64_t)768 * (768 + 2 * 4096));
	/* a leaf's entry for its own host's LID: only that leaf's walk breaks; one low LID and
	 * one high one */
	uint32_t lo = 0, hi = 0;
	for (uint32_t lid = 1; lid <= f->pub.max_lid; lid++) {
		uint32_t p = f->pub.lid_port[lid];
		if (p != IBSM_NONE && fx_is_ca_port(&f->pub, p)) {
			if (!lo)
				lo = lid;
			hi = lid;
		}
	}
	g_assert_cmpuint(hi, >, f->pub.max_lid / 2 + 64);
	*entry(&t, ibsm_port_switch(&f->pub, f->pub.lid_port[lo]), lo) = IBSM_NO_PORT;
	*entry(&t, ibsm_port_switch(&f->pub, f->pub.lid_port[hi]), hi) = IBSM_NO_PORT;
	g_assert_cmpuint(verify(&t, NULL, &h), ==, 2 * 768);
	g_assert_cmpuint(h.first_lid, ==, lo);
	g_assert_cmpuint(h.by_kind[HOLE_NO_ENTRY], ==, 2 * 768);
	routed_clear(&t);
}

/* routing_verify_since: h2 (with the memo) must say what a whole walk says of the same
 * tables on the same fabric. */
static void same_as_whole(const struct fabric *f, const uint8_t *lft, uint32_t stride,
			  const struct routing_holes *h2, uint64_t holes2)
{
	struct ibsm_scope all = fx_scope_all();
	struct routing_holes h;
	g_assert_cmpuint(routing_verify(f, &all, lft, stride, &h), ==, holes2);
	g_assert_cmpuint(h.holes, ==, h2->holes);
	for (int k = 0; k < 5; k++)
		g_assert_cmpuint(h.by_kind[k], ==, h2->by_kind[k]);
	if (h.holes) {
		g_assert_cmpuint(h.first_kind, ==, h2->first_kind);
		g_assert_cmpuint(h.first_switch, ==, h2->first_switch);
		g_assert_cmpuint(h.first_lid, ==, h2->first_lid);
		g_assert_cmpuint(h.first_at, ==, h2->first_at);
	}
}

static uint64_t lids_held(const struct fabric *f)
{
	uint64_t n = 0;
	for (uint32_t lid = 1; lid <= f->pub.max_lid; lid++)
		n += f->pub.lid_port[lid] != IBSM_NONE;
	return n;
}

/* The same tables again: nothing walked; each kind of broken entry after a whole walk: found
 * as a whole walk finds it, the memo dropped. */
static void test_since_entries(void)
{
	struct routed t;
	route(&t, fx_kary_ntree(4, 3, 1));
	const struct fabric *f = t.f;
	struct ibsm_scope all = fx_scope_all();
	struct verify_memo *memo = NULL;
	struct routing_holes h;
	g_assert_cmpuint(routing_verify_since(f, &all, t.lft, t.stride, &h, &memo), ==, 0);
	uint64_t whole = h.walks;
	g_assert_cmpuint(h.lids_kept, ==, 0);
	g_assert_nonnull(memo);
	g_assert_cmpuint(routing_verify_since(f, &all, t.lft, t.stride, &h, &memo), ==, 0);
	g_assert_cmpuint(h.walks, ==, 0);
	g_assert_cmpuint(h.lids_kept, ==, lids_held(f));
	g_assert_nonnull(memo);
	uint32_t lid = host_lid(f, 0, 1), own = fx_switch_lid(f, f->pub.n_switches - 1);
	uint32_t sw = f->pub.n_switches - 1; /* a top switch: not the host's */
	uint8_t keep = *entry(&t, sw, lid), keep_own = *entry(&t, 0, own);
	const uint8_t breaks[] = { IBSM_NO_PORT, 0, 250 };
	for (unsigned i = 0; i < G_N_ELEMENTS(breaks) + 1; i++) {
		if (i < G_N_ELEMENTS(breaks))
			*entry(&t, sw, lid) = breaks[i];
		else
			*entry(&t, 0, own) = keep_own == 1 ? 2 : 1; /* a loop or a detour */
		uint64_t holes = routing_verify_since(f, &all, t.lft, t.stride, &h, &memo);
		same_as_whole(f, t.lft, t.stride, &h, holes);
		g_assert_cmpuint(h.walks, <, whole);
		if (i < G_N_ELEMENTS(breaks)) {
			g_assert_cmpuint(holes, >, 0);
			g_assert_null(memo);
		}
		*entry(&t, sw, lid) = keep;
		*entry(&t, 0, own) = keep_own;
		g_assert_cmpuint(routing_verify_since(f, &all, t.lft, t.stride, &h, &memo), ==, 0);
		g_assert_nonnull(memo);
	}
	/* a step of a chain walks its own scope whole, and the memo no longer holds */
	struct ibsm_scope part = all;
	part.path_bit_count = 1;
	g_assert_cmpuint(routing_verify_since(f, &part, t.lft, t.stride, &h, &memo), ==, 0);
	g_assert_cmpuint(h.lids_kept, ==, 0);
	g_assert_null(memo);
	routed_clear(&t);
}

/* VERIFY_KEEP_BORROW (-R: the walked buffer becomes the result's): a memo not adopted is not
 * used; adopted, it is used, and it references the result's tables (never the result) until
 * the next walk replaces it or it is freed: the result can go first, its tables stay. */
static void test_since_borrowed(void)
{
	struct routed t;
	route(&t, fx_kary_ntree(4, 3, 1));
	struct fabric *f = t.f;
	struct ibsm_scope all = fx_scope_all();
	struct verify_memo *memo = NULL;
	struct routing_holes h;
	size_t bytes = (size_t)f->pub.n_switches * t.stride;
	struct routing_result *r = routing_result_new_untabled(f);
	r->lft = routing_tables_new(bytes);
	memcpy(r->lft, t.lft, bytes);
	uint8_t *other = routing_tables_new(bytes);
	memcpy(other, t.lft, bytes);
	g_assert_cmpuint(routing_verify_keep(f, &all, r->lft, t.stride, &h, &memo, VERIFY_KEEP_BORROW), ==, 0);
	g_assert_nonnull(memo);
	/* not the buffer walked: not adopted, no reference taken */
	verify_memo_adopt(memo, other);
	g_assert_cmpint(routing_tables_refs(other), ==, 1);
	g_assert_cmpuint(routing_verify_keep(f, &all, r->lft, t.stride, &h, &memo, VERIFY_KEEP_BORROW), ==, 0);
	g_assert_cmpuint(h.lids_kept, ==, 0); /* not adopted: walked whole */
	verify_memo_adopt(memo, r->lft);
	g_assert_cmpint(routing_tables_refs(r->lft), ==, 2);
	g_assert_cmpint(r->refs, ==, 1); /* the tables referenced, not the result */
	g_assert_cmpuint(routing_verify_keep(f, &all, t.lft, t.stride, &h, &memo, VERIFY_KEEP_COPY), ==, 0);
	g_assert_cmpuint(h.walks, ==, 0);
	g_assert_cmpuint(h.lids_kept, ==, lids_held(f)); /* the adopted tables, compared */
	g_assert_cmpint(routing_tables_refs(r->lft), ==, 1); /* let go by the walk that replaced them */
	g_assert_cmpuint(routing_verify_keep(f, &all, r->lft, t.stride, &h, &memo, VERIFY_KEEP_BORROW), ==, 0);
	verify_memo_adopt(memo, r->lft);
	/* the result goes first (a sweep's result let go of): the memo's tables stay and are
	 * compared whole by the next walk (freed under it, ASan would say so) */
	routing_result_unref(r);
	g_assert_cmpuint(routing_verify_keep(f, &all, other, t.stride, &h, &memo, VERIFY_KEEP_BORROW), ==, 0);
	g_assert_cmpuint(h.walks, ==, 0);
	g_assert_cmpuint(h.lids_kept, ==, lids_held(f));
	verify_memo_adopt(memo, other);
	g_assert_cmpint(routing_tables_refs(other), ==, 2);
	verify_memo_free(memo);
	g_assert_cmpint(routing_tables_refs(other), ==, 1);
	routing_tables_unref(other);
	routed_clear(&t);
}

/* A link between the top two levels goes away: the last tables, unchanged, lead into it (a
 * port without a link), found as a whole walk finds them although no entry changed; the
 * tables routed for the new fabric walk clean, the LIDs whose entries and links did not
 * change not walked again. */
static void test_since_link(void)
{
	struct routed t, t2;
	route(&t, fx_kary_ntree(4, 3, 1));
	struct fabric *f1 = t.f;
	uint32_t top = f1->pub.n_switches - 1;
	struct fabric *f2 = fx_first_link_gone(f1, top, 1);
	route(&t2, f2);
	g_assert_cmpuint(t2.stride, ==, t.stride);
	struct ibsm_scope all = fx_scope_all();
	struct verify_memo *memo = NULL;
	struct routing_holes h;
	g_assert_cmpuint(routing_verify_since(f1, &all, t.lft, t.stride, &h, &memo), ==, 0);
	uint64_t old_on_new = routing_verify_since(f2, &all, t.lft, t.stride, &h, &memo);
	same_as_whole(f2, t.lft, t.stride, &h, old_on_new);
	g_assert_cmpuint(old_on_new, >, 0);
	g_assert_cmpuint(h.by_kind[HOLE_DEAD_PORT], ==, old_on_new);
	g_assert_null(memo);
	g_assert_cmpuint(routing_verify_since(f1, &all, t.lft, t.stride, &h, &memo), ==, 0);
	g_assert_cmpuint(routing_verify_since(f2, &all, t2.lft, t2.stride, &h, &memo), ==, 0);
	same_as_whole(f2, t2.lft, t2.stride, &h, 0);
	g_assert_cmpuint(h.lids_kept, >, 0);
	g_assert_cmpuint(h.lids_kept, <, lids_held(f2));
	g_test_message("link down: %" G_GUINT64_FORMAT " LIDs kept of %" G_GUINT64_FORMAT,
		       h.lids_kept, lids_held(f2));
	verify_memo_free(memo);
	routed_clear(&t);
	routed_clear(&t2);
}

/* Two switches changed in one LID's column, the lower one still delivering (another up port
 * of a leaf), the higher one broken: found as a whole walk finds it. */
static void test_since_two(void)
{
	struct routed t;
	route(&t, fx_kary_ntree(4, 3, 1));
	const struct fabric *f = t.f;
	uint32_t first = 0, lid = 0;
	for (uint32_t l = 1; l <= f->pub.max_lid; l++) {
		uint32_t p = f->pub.lid_port[l];
		if (p == IBSM_NONE || !fx_is_ca_port(&f->pub, p))
			continue;
		if (!first)
			first = l;
		lid = l;
	}
	uint32_t a = ibsm_port_switch(&f->pub, f->pub.lid_port[first]);
	g_assert_cmpuint(ibsm_port_switch(&f->pub, f->pub.lid_port[lid]), !=, a);
	struct ibsm_scope all = fx_scope_all();
	struct verify_memo *memo = NULL;
	struct routing_holes h;
	g_assert_cmpuint(routing_verify_since(f, &all, t.lft, t.stride, &h, &memo), ==, 0);
	/* a's other up port (every switch port of a leaf of a k-ary n-tree is a min-hop way) */
	const struct ibsm_node *node = &f->nodes[f->switches[a].node];
	uint8_t other = 0;
	for (uint8_t q = 1; q <= node->nports && !other; q++) {
		uint32_t peer = f->ports[node->port0 + q].peer;
		if (q != *entry(&t, a, lid) && peer != IBSM_NONE &&
		    f->nodes[f->ports[peer].node].type == IBSM_SWITCH)
			other = q;
	}
	g_assert_cmpuint(other, !=, 0);
	*entry(&t, a, lid) = other;
	struct routing_holes w;
	g_assert_cmpuint(routing_verify(f, &all, t.lft, t.stride, &w), ==, 0); /* still delivered */
	g_assert_cmpuint(routing_verify_since(f, &all, t.lft, t.stride, &h, &memo), ==, 0);
	g_assert_nonnull(memo);
	/* a changed again (another up port than the memo's) and a switch its walk does not
	 * cross, above it in id, broken */
	for (uint8_t q = 1; q <= node->nports; q++) {
		uint32_t peer = f->ports[node->port0 + q].peer;
		if (q != other && peer != IBSM_NONE && f->nodes[f->ports[peer].node].type == IBSM_SWITCH) {
			*entry(&t, a, lid) = q;
			break;
		}
	}
	g_assert_cmpuint(*entry(&t, a, lid), !=, other);
	uint8_t *on_path = g_new0(uint8_t, f->pub.n_switches);
	for (uint32_t u = a, hops = 0; u != IBSM_NONE && hops < 16; hops++) {
		on_path[u] = 1;
		const struct ibsm_node *un = &f->nodes[f->switches[u].node];
		uint32_t peer = f->ports[un->port0 + *entry(&t, u, lid)].peer;
		u = peer == IBSM_NONE ? IBSM_NONE : f->nodes[f->ports[peer].node].sw;
	}
	uint32_t b = f->pub.n_switches - 1;
	while (b > a && on_path[b])
		b--;
	g_free(on_path);
	g_assert_cmpuint(b, >, a);
	*entry(&t, b, lid) = IBSM_NO_PORT;
	uint64_t holes = routing_verify_since(f, &all, t.lft, t.stride, &h, &memo);
	same_as_whole(f, t.lft, t.stride, &h, holes);
	g_assert_cmpuint(holes, >, 0);
	verify_memo_free(memo);
	routed_clear(&t);
}

/* A host leaves (its node dropped: every port id after it moves, the LIDs stay): the tables
 * routed without it walk clean, as a whole walk finds them, the LIDs whose entries did not
 * change not walked again although their ports' ids did. */
static void test_since_host(void)
{
	struct routed t, t2;
	route(&t, fx_kary_ntree(4, 3, 1));
	struct fabric *f1 = t.f;
	uint32_t lid0 = 0;
	for (uint32_t l = 1; l <= f1->pub.max_lid && !lid0; l++)
		if (f1->pub.lid_port[l] != IBSM_NONE && fx_is_ca_port(&f1->pub, f1->pub.lid_port[l]))
			lid0 = l;
	uint64_t gone = f1->nodes[f1->ports[f1->pub.lid_port[lid0]].node].guid;
	struct model_builder *b = patch_builder_from(f1);
	uint8_t *reached = g_malloc(model_count(b));
	memset(reached, 1, model_count(b));
	reached[model_find_node(b, gone)] = 0;
	uint32_t dropped = 0;
	struct model_builder *b2 = patch_reachable(b, reached, &dropped);
	g_assert_cmpuint(dropped, ==, 1);
	model_builder_free(b);
	g_free(reached);
	GError *err = NULL;
	struct fabric *f2 = model_freeze(b2, 2, &err);
	g_assert_no_error(err);
	model_builder_free(b2);
	for (uint32_t p = 0; p < f2->pub.n_ports; p++) { /* the LIDs the ports had */
		uint32_t n1 = fabric_node_by_guid(f1, f2->nodes[f2->ports[p].node].guid);
		g_assert_cmpuint(n1, !=, IBSM_NONE);
		const struct ibsm_port *q = &f1->ports[f1->nodes[n1].port0 + f2->ports[p].num];
		f2->ports[p].lid = q->lid;
		f2->ports[p].lmc = q->lmc;
	}
	fabric_index_lids(f2);
	f2->pub.lmc = f1->pub.lmc;
	g_assert_cmpuint(f2->pub.max_lid, ==, f1->pub.max_lid);
	g_assert_cmpuint(f2->pub.lid_port[lid0], ==, IBSM_NONE);
	route(&t2, f2);
	struct ibsm_scope all = fx_scope_all();
	struct verify_memo *memo = NULL;
	struct routing_holes h, whole;
	g_assert_cmpuint(routing_verify_since(f1, &all, t.lft, t.stride, &h, &memo), ==, 0);
	g_assert_cmpuint(routing_verify(f2, &all, t2.lft, t2.stride, &whole), ==, 0);
	g_assert_cmpuint(routing_verify_since(f2, &all, t2.lft, t2.stride, &h, &memo), ==, 0);
	same_as_whole(f2, t2.lft, t2.stride, &h, 0);
	g_assert_cmpuint(h.lids_kept, >, 0);
	g_assert_cmpuint(h.walks, <, whole.walks);
	g_test_message("host gone: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " LIDs kept, %"
		       G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " pairs walked", h.lids_kept,
		       lids_held(f2), h.walks, whole.walks);
	verify_memo_free(memo);
	routed_clear(&t);
	routed_clear(&t2);
}

/* The walk written the plain way, for /verify/reference: from every switch, every routed LID,
 * entries followed one by one (no memo, no table) until delivered, a hole, or more steps than
 * there are switches (a loop: the first switch seen twice is where it went wrong). */
static void reference_walk(const struct fabric *f, const uint8_t *lft, uint32_t stride,
			   struct routing_holes *h)
{
	uint32_t n = f->pub.n_switches;
	*h = (struct routing_holes){ 0 };
	uint32_t *seen = g_new(uint32_t, n);
	for (uint32_t lid = 1; lid <= f->pub.max_lid && lid < stride; lid++) {
		uint32_t dest = f->pub.lid_port[lid];
		if (dest == IBSM_NONE)
			continue;
		uint32_t t = ibsm_port_switch(&f->pub, dest);
		if (t == IBSM_NONE)
			continue;
		uint8_t want = f->ports[dest].node == f->switches[t].node ? 0 :
			       f->ports[f->ports[dest].peer].num;
		for (uint32_t s = 0; s < n; s++) {
			memset(seen, 0, n * sizeof(*seen));
			uint32_t u = s, kind = 0, step = 0;
			for (;;) {
				if (seen[u]) {
					kind = HOLE_LOOP;
					break;
				}
				seen[u] = ++step;
				const struct ibsm_node *node = &f->nodes[f->switches[u].node];
				uint8_t out = lft[(size_t)u * stride + lid];
				if (out == IBSM_NO_PORT) {
					kind = HOLE_NO_ENTRY;
					break;
				}
				if (u == t) {
					kind = out == want ? 0 : out > node->nports ? HOLE_DEAD_PORT : HOLE_WRONG_PORT;
					break;
				}
				if (out == 0 || out > node->nports) {
					kind = out ? HOLE_DEAD_PORT : HOLE_WRONG_PORT;
					break;
				}
				uint32_t q = f->ports[node->port0 + out].peer;
				if (q == IBSM_NONE) {
					kind = HOLE_DEAD_PORT;
					break;
				}
				if (f->nodes[f->ports[q].node].sw == IBSM_NONE) {
					kind = HOLE_WRONG_PORT;
					break;
				}
				u = f->nodes[f->ports[q].node].sw;
			}
			h->walks++;
			if (!kind)
				continue;
			if (!h->holes++) {
				h->first_switch = s;
				h->first_lid = lid;
				h->first_at = u;
				h->first_kind = kind;
			}
			h->by_kind[kind]++;
		}
	}
	g_free(seen);
}

/* Tables broken at random (no entry, port 0, ports past the last, ports to CAs, loops made
 * by pointing back): the walk finds what the plain walk finds, hole for hole. */
static void test_reference(void)
{
	struct routed t;
	route(&t, fx_kary_ntree(8, 3, 0)); /* 192 switches, 512 hosts */
	const struct fabric *f = t.f;
	uint8_t *good = g_memdup2(t.lft, (size_t)f->pub.n_switches * t.stride);
	GRand *rng = g_rand_new_with_seed(29);
	for (int round = 0; round < 12; round++) {
		memcpy(t.lft, good, (size_t)f->pub.n_switches * t.stride);
		/* from none to a fifth of the entries broken */
		uint32_t share = round == 0 ? 0 : 1u << (round % 6);
		for (uint32_t u = 0; share && u < f->pub.n_switches; u++) {
			uint8_t np = f->nodes[f->switches[u].node].nports;
			for (uint32_t lid = 1; lid <= f->pub.max_lid; lid++) {
				if (g_rand_int_range(rng, 0, 160) >= (gint32)share)
					continue;
				uint8_t *e = entry(&t, u, lid);
				switch (g_rand_int_range(rng, 0, 4)) {
				case 0: *e = IBSM_NO_PORT; break;
				case 1: *e = 0; break;
				case 2: *e = (uint8_t)(np + g_rand_int_range(rng, 1, 3)); break;
				default: *e = (uint8_t)g_rand_int_range(rng, 1, np + 1); break;
				}
			}
		}
		struct routing_holes want, got;
		reference_walk(f, t.lft, t.stride, &want);
		g_assert_cmpuint(verify(&t, NULL, &got), ==, want.holes);
		g_assert_cmpuint(got.walks, ==, want.walks);
		for (int k = 0; k < 5; k++)
			g_assert_cmpuint(got.by_kind[k], ==, want.by_kind[k]);
		if (share)
			g_assert_cmpuint(want.holes, >, 0);
		if (want.holes) {
			g_assert_cmpuint(got.first_lid, ==, want.first_lid);
			g_assert_cmpuint(got.first_switch, ==, want.first_switch);
			g_assert_cmpuint(got.first_kind, ==, want.first_kind);
			g_assert_cmpuint(got.first_at, ==, want.first_at);
		}
	}
	g_rand_free(rng);
	g_free(good);
	routed_clear(&t);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	GModule *m = NULL;
	minhop = fx_engine_open(TEST_PLUGIN_DIR "/minhop.so", &m);
	g_assert_nonnull(minhop); /* make check builds it first: a failure, not a skip */
	g_test_add_func("/verify/whole", test_whole);
	g_test_add_func("/verify/no-entry", test_no_entry);
	g_test_add_func("/verify/loop", test_loop);
	g_test_add_func("/verify/dead-port", test_dead_port);
	g_test_add_func("/verify/wrong-port", test_wrong_port);
	g_test_add_func("/verify/kinds-add-up", test_kinds_add_up);
	g_test_add_func("/verify/scope", test_scope);
	g_test_add_func("/verify/two-threads", test_two_threads);
	g_test_add_func("/verify/since-entries", test_since_entries);
	g_test_add_func("/verify/since-borrowed", test_since_borrowed);
	g_test_add_func("/verify/since-link", test_since_link);
	g_test_add_func("/verify/since-two", test_since_two);
	g_test_add_func("/verify/since-host", test_since_host);
	g_test_add_func("/verify/reference", test_reference);
	int rc = g_test_run();
	g_module_close(m);
	return rc;
}
