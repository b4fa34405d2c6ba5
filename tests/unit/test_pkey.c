/* test_pkey.c - P_Key programming: the index rules, block diffing, which ports get a
 * table and whose, the PKeyTable attribute modifier, the enforcement bits of the switch-port
 * PortInfo Set payload, capacity limits and the policy reload rules; and the skip of tables
 * whose inputs did not change (a pass over a fake fabric). */
#include <string.h>
#include <unistd.h>
#include <infiniband/mad.h>
#include <glib/gstdio.h>
#include "fabric_fixture.h"
#include "fake_sma.h"
#include "program/pkey.h"
#include "program/portinfo.h"
#include "sm/policies.h"


static struct port_pkeys mk(uint16_t indx0, uint32_t n, const uint16_t *keys)
{
	struct port_pkeys p = { .n = n, .keys = (uint16_t *)keys, .indx0_key = indx0 };
	return p;
}

static void test_indx0(void)
{
	const uint16_t keys[] = { 0x7fff, 0x8010, 0x8020 };
	struct port_pkeys w = mk(0x8020, 3, keys);
	uint16_t cur[8] = { 0 }, out[8];
	g_assert_cmpuint(pkey_layout(cur, 8, &w, out), ==, 0);
	g_assert_cmphex(out[0], ==, 0x8020);
	g_assert_cmphex(out[1], ==, 0x7fff);
	g_assert_cmphex(out[2], ==, 0x8010);
	g_assert_cmphex(out[3], ==, 0);
	/* an indx0 key displaces whatever held index 0 (the default key moves) */
	uint16_t cur2[8] = { 0x7fff, 0, 0x8010 };
	pkey_layout(cur2, 8, &w, out);
	g_assert_cmphex(out[0], ==, 0x8020);
	g_assert_cmphex(out[2], ==, 0x8010);
	g_assert_cmphex(out[1], ==, 0x7fff);
	/* an indx0 key this port does not hold: the default key takes index 0 */
	const uint16_t other[] = { 0x8010, 0x7fff };
	struct port_pkeys wo = mk(0x8020, 2, other);
	uint16_t empty[8] = { 0 };
	pkey_layout(empty, 8, &wo, out);
	g_assert_cmphex(out[0], ==, 0x7fff);
	g_assert_cmphex(out[1], ==, 0x8010);
}

static void test_default_at_0(void)
{
	const uint16_t keys[] = { 0x8010, 0xffff };
	struct port_pkeys w = mk(0, 2, keys);
	uint16_t cur[8] = { 0x8010, 0, 0, 0xffff }, out[8];
	g_assert_cmpuint(pkey_layout(cur, 8, &w, out), ==, 0);
	g_assert_cmphex(out[0], ==, 0xffff);
	g_assert_cmphex(out[1], ==, 0x8010);
	g_assert_cmphex(out[3], ==, 0);
	/* limited default member: 0x7fff at 0 */
	const uint16_t lim[] = { 0x8010, 0x7fff };
	struct port_pkeys wl = mk(0, 2, lim);
	uint16_t empty[8] = { 0 };
	pkey_layout(empty, 8, &wl, out);
	g_assert_cmphex(out[0], ==, 0x7fff);
	g_assert_cmphex(out[1], ==, 0x8010);
}

static void test_kept_and_lowest_free(void)
{
	const uint16_t keys[] = { 0xffff, 0x8010, 0x8030, 0x8040, 0x8050 };
	struct port_pkeys w = mk(0, 5, keys);
	/* 0x0030 is the same key as 0x8030 with the other membership: keeps index 3 too;
	 * 0x8099 is no longer wanted and its index is freed */
	uint16_t cur[8] = { 0xffff, 0x8099, 0, 0x0030, 0, 0x8010 }, out[8];
	g_assert_cmpuint(pkey_layout(cur, 8, &w, out), ==, 0);
	g_assert_cmphex(out[0], ==, 0xffff);
	g_assert_cmphex(out[5], ==, 0x8010);
	g_assert_cmphex(out[3], ==, 0x8030);
	g_assert_cmphex(out[1], ==, 0x8040);
	g_assert_cmphex(out[2], ==, 0x8050);
	g_assert_cmphex(out[4], ==, 0);
	/* "both": two entries; an exact match is not stolen by the other membership */
	const uint16_t both[] = { 0xffff, 0x0020, 0x8020 };
	struct port_pkeys wb = mk(0, 3, both);
	uint16_t curb[8] = { 0xffff, 0, 0x8020 };
	pkey_layout(curb, 8, &wb, out);
	g_assert_cmphex(out[2], ==, 0x8020);
	g_assert_cmphex(out[1], ==, 0x0020);
	/* duplicates and invalid keys are not placed twice */
	const uint16_t dup[] = { 0xffff, 0x8010, 0x8010, 0x0000, 0x8000 };
	struct port_pkeys wd = mk(0, 5, dup);
	uint16_t empty[8] = { 0 };
	g_assert_cmpuint(pkey_layout(empty, 8, &wd, out), ==, 0);
	g_assert_cmphex(out[1], ==, 0x8010);
	g_assert_cmphex(out[2], ==, 0);
}

static void test_overflow(void)
{
	const uint16_t keys[] = { 0x8010, 0x8020, 0x7fff, 0x8030 };
	struct port_pkeys w = mk(0, 4, keys);
	uint16_t cur[2] = { 0 }, out[2];
	g_assert_cmpuint(pkey_layout(cur, 2, &w, out), ==, 2);
	g_assert_cmphex(out[0], ==, 0x7fff);
	g_assert_cmphex(out[1], ==, 0x8010);
	/* a key the port holds keeps its index even if an earlier new key then does not fit */
	uint16_t cur2[2] = { 0x7fff, 0x8030 };
	g_assert_cmpuint(pkey_layout(cur2, 2, &w, out), ==, 2);
	g_assert_cmphex(out[1], ==, 0x8030);
	/* capacity 0: nothing fits */
	g_assert_cmpuint(pkey_layout(cur, 0, &w, out), ==, 4);
}

static void test_diff_blocks(void)
{
	uint16_t held[70] = { 0 }, want[70] = { 0 };
	uint8_t ch[3];
	held[0] = want[0] = 0xffff;
	g_assert_cmpuint(pkey_diff_blocks(held, want, 70, ch), ==, 0);
	g_assert_cmpuint(ch[0] + ch[1] + ch[2], ==, 0);
	want[40] = 0x8010;
	g_assert_cmpuint(pkey_diff_blocks(held, want, 70, ch), ==, 1);
	g_assert_cmpuint(ch[0], ==, 0);
	g_assert_cmpuint(ch[1], ==, 1);
	g_assert_cmpuint(ch[2], ==, 0);
	/* the last, partial block: only entries below cap count */
	want[69] = 0x8020;
	g_assert_cmpuint(pkey_diff_blocks(held, want, 70, ch), ==, 2);
	g_assert_cmpuint(ch[2], ==, 1);
	g_assert_cmpuint(pkey_diff_blocks(held, want, 69, ch), ==, 1);
}

/* two switches in a line, two hosts each; every port has a PortInfo */
static struct fabric *line_fabric(uint16_t ca_cap, uint16_t sp0_cap, uint16_t enf_cap)
{
	struct fabric *f = fx_line(2, 2, 0);
	for (uint32_t p = 0; p < f->pub.n_ports; p++)
		f->px[p].have_portinfo = 1;
	for (uint32_t n = 0; n < f->pub.n_nodes; n++) {
		int sw = f->nodes[n].type == IBSM_SWITCH;
		f->nx[n].partition_cap = sw ? sp0_cap : ca_cap;
		f->nx[n].pkey_enf_cap = sw ? enf_cap : 0;
	}
	return f;
}

static void test_targets(void)
{
	struct fabric *f = line_fabric(16, 8, 64);
	GArray *t = pkey_targets(f);
	/* 4 CA ports, 2 switch port 0, 4 switch ports facing CAs; the 2 switch-to-switch ports
	 * only read (src none) */
	g_assert_cmpuint(t->len, ==, 12);
	uint32_t n_ca = 0, n_sp0 = 0, n_ext = 0, n_isl = 0;
	for (uint32_t i = 0; i < t->len; i++) {
		const struct pkey_target *e = &g_array_index(t, struct pkey_target, i);
		const struct ibsm_port *p = &f->ports[e->port];
		int sw = f->nodes[p->node].type == IBSM_SWITCH;
		if (!sw) {
			n_ca++;
			g_assert_cmpuint(e->src, ==, e->port);
			g_assert_cmpuint(e->cap, ==, 16);
		} else if (p->num == 0) {
			n_sp0++;
			g_assert_cmpuint(e->src, ==, e->port);
			g_assert_cmpuint(e->cap, ==, 8);
		} else if (e->src == IBSM_NONE) {
			n_isl++;
			g_assert_cmpuint(f->nodes[f->ports[p->peer].node].type, ==, IBSM_SWITCH);
			g_assert_cmpuint(e->cap, ==, 64);
		} else {
			n_ext++;
			/* the switch port's table is the one of the CA port it faces */
			g_assert_cmpuint(e->src, ==, p->peer);
			g_assert_cmpuint(f->nodes[f->ports[e->src].node].type, !=, IBSM_SWITCH);
			g_assert_cmpuint(e->cap, ==, 64);
			g_assert_cmpuint(p->num, >=, 3);
		}
	}
	g_assert_cmpuint(n_ca, ==, 4);
	g_assert_cmpuint(n_sp0, ==, 2);
	g_assert_cmpuint(n_ext, ==, 4);
	g_assert_cmpuint(n_isl, ==, 2);
	g_array_free(t, TRUE);
	fabric_unref(f);
	/* no PartitionEnforcementCap: switch external ports get no table */
	f = line_fabric(16, 8, 0);
	t = pkey_targets(f);
	g_assert_cmpuint(t->len, ==, 6);
	g_array_free(t, TRUE);
	fabric_unref(f);
}

static void test_same_table_capacity(void)
{
	/* a switch port (64 entries) and its CA (4 entries) lay out the same keys, the CA drops
	 * what does not fit */
	const uint16_t keys[] = { 0x7fff, 0x8010, 0x8020, 0x0020, 0x8030, 0x8040 };
	struct port_pkeys w = mk(0, 6, keys);
	uint16_t cur[64] = { 0 }, ca[4], sw[64];
	g_assert_cmpuint(pkey_layout(cur, 4, &w, ca), ==, 2);
	g_assert_cmpuint(pkey_layout(cur, 64, &w, sw), ==, 0);
	g_assert_cmpmem(ca, sizeof(ca), sw, sizeof(ca));
	g_assert_cmphex(sw[4], ==, 0x8030);
	g_assert_cmphex(sw[5], ==, 0x8040);
}

static void test_attr_mod(void)
{
	struct fabric *f = line_fabric(16, 8, 64);
	uint32_t sp3 = fx_switch_port(&f->pub, 0, 3);
	uint32_t sp0 = fx_switch_port(&f->pub, 0, 0);
	uint32_t ca = fx_ca_port(&f->pub, 0, 1);
	g_assert_cmphex(pkey_attr_mod(f, sp3, 1), ==, 0x30001);
	g_assert_cmphex(pkey_attr_mod(f, sp0, 1), ==, 1);
	g_assert_cmphex(pkey_attr_mod(f, ca, 0), ==, 0);
	fabric_unref(f);
}

static void test_enforcement_bits(void)
{
	struct fabric *f = line_fabric(16, 8, 64);
	uint32_t to_ca = fx_switch_port(&f->pub, 0, 3);
	uint32_t to_sw = fx_switch_port(&f->pub, 0, 2);
	g_assert_cmpuint(f->nodes[f->ports[f->ports[to_ca].peer].node].type, !=, IBSM_SWITCH);
	g_assert_cmpuint(f->nodes[f->ports[f->ports[to_sw].peer].node].type, ==, IBSM_SWITCH);
	uint8_t pi[64];
	/* no policy in force: no bits */
	memset(pi, 0, sizeof(pi));
	portinfo_enforcement_bits(f, to_ca, 0, pi);
	g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_PART_EN_INB_F), ==, 0);
	memset(pi, 0, sizeof(pi));
	mad_set_field(pi, 0, IB_PORT_OPER_VLS_F, 4);
	portinfo_enforcement_bits(f, to_ca, PART_ENFORCE_IN | PART_ENFORCE_OUT, pi);
	g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_PART_EN_INB_F), ==, 1);
	g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_PART_EN_OUTB_F), ==, 1);
	g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_OPER_VLS_F), ==, 4);
	/* part_enforce in / out: one direction each */
	memset(pi, 0, sizeof(pi));
	portinfo_enforcement_bits(f, to_ca, PART_ENFORCE_IN, pi);
	g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_PART_EN_INB_F), ==, 1);
	g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_PART_EN_OUTB_F), ==, 0);
	memset(pi, 0, sizeof(pi));
	portinfo_enforcement_bits(f, to_ca, PART_ENFORCE_OUT, pi);
	g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_PART_EN_INB_F), ==, 0);
	g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_PART_EN_OUTB_F), ==, 1);
	/* a switch-to-switch port and a CA port stay as they were */
	memset(pi, 0, sizeof(pi));
	portinfo_enforcement_bits(f, to_sw, PART_ENFORCE_IN | PART_ENFORCE_OUT, pi);
	g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_PART_EN_INB_F), ==, 0);
	g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_PART_EN_OUTB_F), ==, 0);
	portinfo_enforcement_bits(f, fx_ca_port(&f->pub, 0, 1), PART_ENFORCE_IN | PART_ENFORCE_OUT, pi);
	g_assert_cmpuint(mad_get_field(pi, 0, IB_PORT_PART_EN_OUTB_F), ==, 0);
	fabric_unref(f);
}

static void test_policy_reload(void)
{
	char *dir = g_dir_make_tmp("pkeyXXXXXX", NULL);
	char *path = g_build_filename(dir, "partitions.conf", NULL);
	struct sm_options o;
	options_defaults(&o);
	g_free(o.partition_config_file);
	o.partition_config_file = g_strdup(path);
	/* the copy of the last policy that loaded goes to the cache directory: the test's own, never
	 * the machine's /var/cache/ibsm (an SM run there earlier leaves a copy the "fresh" load
	 * below would take) */
	g_free(o.cache_dir);
	o.cache_dir = g_strdup(dir);
	struct sm sm = { .opt = &o };
	/* missing file: the default policy */
	g_assert_cmpint(policies_load_partitions(&sm), ==, 0);
	g_assert_nonnull(sm.part_policy);
	g_assert_null(sm.part_policy->source);
	/* a good file is taken */
	const char *good = "Default=0x7fff : ALL=full ;\nx=0x10 : ALL ;\n";
	g_assert_true(g_file_set_contents(path, good, -1, NULL));
	g_assert_cmpint(policies_load_partitions(&sm), ==, 0);
	struct part_policy *taken = sm.part_policy;
	g_assert_cmpstr(taken->source, ==, path);
	/* a structurally broken file keeps the policy in force */
	g_assert_true(g_file_set_contents(path, "p1=0x10 : ALL=full\nBAD\n", -1, NULL));
	g_assert_cmpint(policies_load_partitions(&sm), ==, -1);
	g_assert_true(sm.part_policy == taken);
	/* ... an SM starting with it (nothing in force yet) takes the copy of the last policy
	 * that loaded, kept in the cache directory */
	struct sm fresh = { .opt = &o };
	g_assert_cmpint(policies_load_partitions(&fresh), ==, -1);
	g_assert_nonnull(fresh.part_policy);
	g_assert_nonnull(fresh.part_policy->source);
	g_assert_true(g_str_has_suffix(fresh.part_policy->source, PART_SAVED_FILE));
	policies_free(&fresh);
	/* ... and with no such copy either, the default one */
	char *saved = g_build_filename(dir, PART_SAVED_FILE, NULL);
	g_assert_cmpint(g_unlink(saved), ==, 0);
	g_free(saved);
	struct sm bare = { .opt = &o };
	g_assert_cmpint(policies_load_partitions(&bare), ==, -1);
	g_assert_nonnull(bare.part_policy);
	g_assert_null(bare.part_policy->source);
	policies_free(&bare);
	/* removed file: back to the default */
	g_unlink(path);
	g_assert_cmpint(policies_load_partitions(&sm), ==, 0);
	g_assert_null(sm.part_policy->source);
	policies_free(&sm);
	options_free(&o);
	g_rmdir(dir);
	g_free(path);
	g_free(dir);
}

/* ---- the skip of unchanged tables (a pass over the fake fabric) ------------------------------ */

struct skip_bed {
	struct fsma_bed b;
	struct pkey_memory *mem;
	struct pkey_stats st;
	uint32_t mark;             /* fsma records before the last pass */
};

static struct part_policy *skip_policy(const struct fabric *f, int red)
{
	/* blue: the second CA port by GUID (the first is the SM's); red (variant 1): every CA */
	char *text = g_strdup_printf("Default=0x7fff : ALL=full ;\nblue=0x0011 : 0x%016" G_GINT64_MODIFIER
				     "x=full ;\n%s", f->ports[fx_ca_port(&f->pub, 1, 1)].guid,
				     red ? "red=0x0012 : ALL_CAS ;\n" : "");
	GError *err = NULL;
	struct part_policy *p = part_policy_parse_text(text, strlen(text), "skip.conf", &err);
	g_assert_no_error(err);
	g_free(text);
	return p;
}

static int skip_prepared; /* the pass's decisions made beforehand on a job, as a sweep does */

static void skip_pass(struct skip_bed *s, const struct part_policy *pol)
{
	struct pass g = { .t = s->b.t, .pkey_mem = s->mem, .stop = &s->b.stop, .f = s->b.f, .o = &s->b.o };
	s->mark = fsma_nrec(s->b.fk);
	if (skip_prepared)
		pkey_prepare_start(&g, pol);
	pkey_program(&g, pol, &s->st);
	pkey_prepare_drop(&g); /* what the tables hold, remembered beside the next phases */
	g_assert_cmpuint(s->st.tables, >, 0);
}

static uint32_t pk_smps(const struct skip_bed *s, uint32_t method, uint32_t node)
{
	return fsma_count(s->b.fk, s->mark, method, IB_ATTR_PKEY_TBL, node);
}

static void test_skip_unchanged(void)
{
	struct skip_bed s = { .mem = pkey_memory_new() };
	struct fabric *shape = fx_line(2, 3, 0);
	struct program_report rep;
	fsma_bed_init(&s.b, shape, fx_ca_port(&shape->pub, 0, 1), 20);
	fsma_bed_discover(&s.b);
	g_assert_cmpint(fsma_bed_program(&s.b, NULL, 1, &rep), ==, 0); /* links ACTIVE, routes */
	fsma_bed_discover(&s.b);
	struct part_policy *pa = skip_policy(s.b.f, 0), *pb = skip_policy(s.b.f, 1);
	/* first pass: every table looked at (read), none skipped */
	skip_pass(&s, pa);
	g_assert_cmpuint(s.st.skipped, ==, 0);
	g_assert_cmpuint(pk_smps(&s, IB_MAD_METHOD_GET, FSMA_ANY), >, 0);
	uint32_t tables = s.st.tables;
	uint64_t v1 = pkey_memory_version(s.mem, s.b.f);
	g_assert_cmpuint(v1, !=, 0);
	/* a new generation of the same fabric, the same policy: every table skipped, no SMP, and
	 * what the memory answers for every port id is the same (the version stays) */
	fsma_bed_discover(&s.b);
	g_assert_cmpuint(pkey_memory_version(s.mem, s.b.f), ==, 0); /* no pass on it yet */
	skip_pass(&s, pa);
	g_assert_cmpuint(s.st.tables, ==, tables);
	g_assert_cmpuint(s.st.skipped, ==, tables);
	g_assert_cmpuint(fsma_count(s.b.fk, s.mark, FSMA_ANY, IB_ATTR_PKEY_TBL, FSMA_ANY), ==, 0);
	g_assert_cmpuint(pkey_memory_version(s.mem, s.b.f), ==, v1);
	uint32_t ca = fx_ca_port(&s.b.f->pub, 0, 1), cap = 0;
	g_assert_nonnull(pkey_memory_table(s.mem, s.b.f, ca, &cap));
	g_assert_cmpuint(cap, >, 0);
	/* a changed policy: every table laid out again (nothing skipped), the CAs' tables and the
	 * switch ports facing them written, nothing read (the memory is trusted) */
	fsma_bed_discover(&s.b);
	skip_pass(&s, pb);
	g_assert_cmpuint(s.st.skipped, ==, 0);
	g_assert_cmpuint(pk_smps(&s, IB_MAD_METHOD_GET, FSMA_ANY), ==, 0);
	g_assert_cmpuint(pk_smps(&s, IB_MAD_METHOD_SET, FSMA_ANY), ==, 2 * 6);
	g_assert_cmpuint(pkey_memory_version(s.mem, s.b.f), !=, v1);
	/* unchanged again */
	fsma_bed_discover(&s.b);
	skip_pass(&s, pb);
	g_assert_cmpuint(s.st.skipped, ==, tables);
	/* a changed peer: two CAs on switch 0 (not the SM's) swap identities (as if their cables were
	 * swapped): their ports and the switch ports facing them are looked at again, and the
	 * switch ports now facing a CA of other partitions are written; the rest is skipped */
	fsma_bed_discover(&s.b);
	struct fabric *f = s.b.f;
	uint32_t c0 = fx_ca_port(&f->pub, 1, 1), c1 = fx_ca_port(&f->pub, 2, 1);
	g_assert_cmpuint(f->ports[f->ports[c0].peer].node, ==, f->ports[f->ports[c1].peer].node);
	uint32_t n0 = f->ports[c0].node, n1 = f->ports[c1].node;
	uint64_t g = f->nodes[n0].guid, pg = f->ports[c0].guid;
	f->nodes[n0].guid = f->nodes[n1].guid;
	f->ports[c0].guid = f->ports[c1].guid;
	f->nodes[n1].guid = g;
	f->ports[c1].guid = pg;
	uint32_t sw = f->ports[f->ports[c0].peer].node;
	skip_pass(&s, pb);
	g_assert_cmpuint(s.st.skipped, ==, tables - 4);
	/* blue moved from c0 to c1: the two switch ports facing them each get one block Set */
	g_assert_cmpuint(pk_smps(&s, IB_MAD_METHOD_SET, sw), ==, 2);
	g_assert_cmpuint(pk_smps(&s, IB_MAD_METHOD_SET, FSMA_ANY), ==, 2);
	/* the identities back (the next pass sees them changed again), then one port new: a CA
	 * port and the switch port facing it hidden from a pass are read and programmed in the
	 * next one, every other table skipped */
	fsma_bed_discover(&s.b);
	skip_pass(&s, pb);
	g_assert_cmpuint(s.st.skipped, ==, tables - 4);
	fsma_bed_discover(&s.b);
	f = s.b.f;
	uint32_t h = fx_ca_port(&f->pub, 4, 1), hs = f->ports[h].peer;
	f->ports[h].peer = IBSM_NONE;
	f->ports[hs].peer = IBSM_NONE;
	skip_pass(&s, pb);
	g_assert_cmpuint(s.st.tables, ==, tables - 2);
	g_assert_cmpuint(s.st.skipped, ==, tables - 2);
	f->ports[h].peer = hs;
	f->ports[hs].peer = h;
	fsma_bed_discover(&s.b);
	skip_pass(&s, pb);
	g_assert_cmpuint(s.st.tables, ==, tables);
	g_assert_cmpuint(s.st.skipped, ==, tables - 2);
	g_assert_cmpuint(pk_smps(&s, IB_MAD_METHOD_GET, s.b.f->ports[h].node), >, 0);
	/* a port that is not ACTIVE (it came back, or is coming up) is not trusted: read again */
	f = s.b.f;
	uint32_t c3 = fx_ca_port(&f->pub, 3, 1);
	fsma_set_port_state(s.b.fk, c3, IBSM_STATE_INIT);
	fsma_bed_discover(&s.b);
	g_assert_cmpuint(s.b.f->ports[c3].state, ==, IBSM_STATE_INIT);
	skip_pass(&s, pb);
	g_assert_cmpuint(s.st.skipped, <=, tables - 1);
	g_assert_cmpuint(pk_smps(&s, IB_MAD_METHOD_GET, s.b.f->ports[c3].node), >, 0);
	/* forgotten (another SM was master): everything read again */
	pkey_memory_forget(s.mem);
	fsma_bed_discover(&s.b);
	skip_pass(&s, pb);
	g_assert_cmpuint(s.st.skipped, ==, 0);
	g_assert_cmpuint(s.st.blocks_read, >=, tables);
	part_policy_free(pa);
	part_policy_free(pb);
	pkey_memory_free(s.mem);
	fsma_bed_clear(&s.b);
}

/* The same passes with their decisions made beforehand (pkey_prepare_start, a job beside the
 * SMPs of the phases before) and what the tables hold remembered by a job: the same SMPs, the
 * same skips, the same memory. */
static void test_skip_unchanged_prepared(void)
{
	skip_prepared = 1;
	test_skip_unchanged();
	skip_prepared = 0;
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/pkey/indx0", test_indx0);
	g_test_add_func("/pkey/default_at_0", test_default_at_0);
	g_test_add_func("/pkey/kept_and_lowest_free", test_kept_and_lowest_free);
	g_test_add_func("/pkey/overflow", test_overflow);
	g_test_add_func("/pkey/diff_blocks", test_diff_blocks);
	g_test_add_func("/pkey/targets", test_targets);
	g_test_add_func("/pkey/same_table_capacity", test_same_table_capacity);
	g_test_add_func("/pkey/attr_mod", test_attr_mod);
	g_test_add_func("/pkey/enforcement_bits", test_enforcement_bits);
	g_test_add_func("/pkey/policy_reload", test_policy_reload);
	g_test_add_func("/pkey/skip_unchanged", test_skip_unchanged);
	g_test_add_func("/pkey/skip_unchanged_prepared", test_skip_unchanged_prepared);
	return g_test_run();
}
