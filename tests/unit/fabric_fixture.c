/* fabric_fixture.c - builds small fabrics through the model builder, runs a routing engine
 * under a fake core, and judges its LFTs (delivery, hop counts, link load), so routing unit
 * tests need no simulator. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "fabric_fixture.h"
#include "fabric/patch.h"
#include "routing/services.h"

/* ---- building ---------------------------------------------------------------------------- */

void fx_builder_init(struct fx_builder *x)
{
	x->b = model_builder_new();
	x->n_cas = x->n_switches = 0;
}

static void fx_fill_ports(struct model_node_in *n, int is_switch)
{
	for (unsigned p = 0; p <= n->nports; p++) {
		struct model_port_in *port = &n->ports[p];
		if (!is_switch && p == 0)
			continue; /* a CA has no port 0 */
		port->guid = is_switch ? n->guid : n->guid + p;
		port->flags = IBSM_PORT_PRESENT | IBSM_PORT_LINKUP;
		port->state = IBSM_STATE_ACTIVE;
		port->phys_state = 5; /* LinkUp */
		port->width = 2;
		port->speed = 1;
		port->mtu_cap = 5;
		port->vl_cap = 4;
		port->oper_vls = 4;
	}
}

uint32_t fx_add_switch(struct fx_builder *x, uint8_t nports, const char *desc)
{
	uint64_t guid = FX_SWITCH_GUID_BASE + x->n_switches++;
	int idx = model_add_node(x->b, guid, IBSM_SWITCH, nports);
	g_assert_cmpint(idx, >=, 0);
	struct model_node_in *n = model_node(x->b, (uint32_t)idx);
	n->sysimg_guid = guid;
	g_strlcpy(n->desc, desc ? desc : "switch", sizeof(n->desc));
	n->lft_cap = 0xC000;
	n->have_switchinfo = 1;
	fx_fill_ports(n, 1);
	return (uint32_t)idx;
}

uint32_t fx_add_ca(struct fx_builder *x, uint8_t nports, const char *desc)
{
	uint64_t guid = FX_CA_GUID_BASE + 0x100ull * x->n_cas++;
	int idx = model_add_node(x->b, guid, IBSM_CA, nports);
	g_assert_cmpint(idx, >=, 0);
	struct model_node_in *n = model_node(x->b, (uint32_t)idx);
	n->sysimg_guid = guid;
	g_strlcpy(n->desc, desc ? desc : "host", sizeof(n->desc));
	fx_fill_ports(n, 0);
	return (uint32_t)idx;
}

void fx_link(struct fx_builder *x, uint32_t a, uint8_t pa, uint32_t b, uint8_t pb)
{
	model_link(x->b, a, pa, b, pb);
}

int fx_is_end_port(const struct ibsm_fabric *f, uint32_t port)
{
	const struct ibsm_port *p = &f->ports[port];
	if (f->nodes[p->node].type == IBSM_SWITCH)
		return p->num == 0;
	return p->num != 0 && p->peer != IBSM_NONE;
}

int fx_is_ca_port(const struct ibsm_fabric *f, uint32_t port)
{
	return f->nodes[f->ports[port].node].type != IBSM_SWITCH && fx_is_end_port(f, port);
}

void fx_assign_lids(struct fabric *f, uint8_t lmc)
{
	uint32_t next = 1;
	for (uint32_t p = 0; p < f->pub.n_ports; p++) {
		struct ibsm_port *port = &f->ports[p];
		port->lid = 0;
		port->lmc = 0;
		if (!fx_is_end_port(&f->pub, p))
			continue;
		if (f->nodes[port->node].type == IBSM_SWITCH) {
			port->lid = (uint16_t)next++;
			continue;
		}
		uint32_t n = 1u << lmc;
		next = (next + n - 1) & ~(n - 1);
		port->lid = (uint16_t)next;
		port->lmc = lmc;
		next += n;
	}
	g_assert_cmpuint(next, <=, 0xC000);
	fabric_index_lids(f);
	f->pub.lmc = lmc;
}

struct fabric *fx_finish(struct fx_builder *x, uint8_t lmc)
{
	GError *err = NULL;
	struct fabric *f = model_freeze(x->b, 1, &err);
	g_assert_no_error(err);
	g_assert_nonnull(f);
	model_builder_free(x->b);
	x->b = NULL;
	fx_assign_lids(f, lmc);
	return f;
}

static void fx_add_hosts(struct fx_builder *x, uint32_t sw, unsigned first_port, unsigned n)
{
	for (unsigned h = 0; h < n; h++) {
		char desc[64];
		snprintf(desc, sizeof(desc), "host-%u", x->n_cas);
		uint32_t ca = fx_add_ca(x, 1, desc);
		fx_link(x, sw, (uint8_t)(first_port + h), ca, 1);
	}
}

static struct fabric *fx_chain(unsigned n, unsigned hosts, uint8_t lmc, int ring)
{
	struct fx_builder x;
	fx_builder_init(&x);
	uint32_t *sw = g_new(uint32_t, n ? n : 1);
	for (unsigned i = 0; i < n; i++) {
		char desc[64];
		snprintf(desc, sizeof(desc), "%s-%u", ring ? "ring" : "line", i);
		sw[i] = fx_add_switch(&x, (uint8_t)(2 + hosts), desc);
	}
	for (unsigned i = 0; i + 1 < n; i++)
		fx_link(&x, sw[i], 2, sw[i + 1], 1);
	if (ring && n > 1)
		fx_link(&x, sw[n - 1], 2, sw[0], 1);
	for (unsigned i = 0; i < n; i++)
		fx_add_hosts(&x, sw[i], 3, hosts);
	g_free(sw);
	return fx_finish(&x, lmc);
}

struct fabric *fx_line(unsigned n_switches, unsigned hosts_per_switch, uint8_t lmc)
{
	return fx_chain(n_switches, hosts_per_switch, lmc, 0);
}

struct fabric *fx_ring(unsigned n_switches, unsigned hosts_per_switch, uint8_t lmc)
{
	return fx_chain(n_switches, hosts_per_switch, lmc, 1);
}

struct fabric *fx_torus2d(unsigned xs, unsigned ys, unsigned hosts, uint8_t lmc)
{
	struct fx_builder x;
	fx_builder_init(&x);
	unsigned n = xs * ys;
	uint32_t *sw = g_new(uint32_t, n ? n : 1);
	for (unsigned j = 0; j < ys; j++)
		for (unsigned i = 0; i < xs; i++) {
			char desc[64];
			snprintf(desc, sizeof(desc), "torus-%u-%u", i, j);
			sw[j * xs + i] = fx_add_switch(&x, (uint8_t)(4 + hosts), desc);
		}
	for (unsigned j = 0; j < ys; j++)
		for (unsigned i = 0; i < xs; i++) {
			if (xs > 1)
				fx_link(&x, sw[j * xs + i], 2, sw[j * xs + (i + 1) % xs], 1);
			if (ys > 1)
				fx_link(&x, sw[j * xs + i], 4, sw[((j + 1) % ys) * xs + i], 3);
		}
	for (unsigned i = 0; i < n; i++)
		fx_add_hosts(&x, sw[i], 5, hosts);
	g_free(sw);
	return fx_finish(&x, lmc);
}

struct fabric *fx_xgft(unsigned h, const unsigned *m, const unsigned *w, uint8_t lmc)
{
	g_assert_cmpuint(h, >=, 1);
	g_assert_cmpuint(h, <=, 8);
	/* A[l] = prod m[l+1..h] (the "which subtree" digits above level l), W[l] = prod w[1..l] */
	unsigned A[9], W[9], N[9];
	for (unsigned l = 0; l <= h; l++) {
		A[l] = 1;
		for (unsigned i = l + 1; i <= h; i++)
			A[l] *= m[i - 1];
		W[l] = 1;
		for (unsigned i = 1; i <= l; i++)
			W[l] *= w[i - 1];
		N[l] = A[l] * W[l];
	}
	struct fx_builder x;
	fx_builder_init(&x);
	uint32_t *ids[9];
	ids[0] = g_new(uint32_t, N[0]);
	for (unsigned i = 0; i < N[0]; i++) {
		char desc[64];
		snprintf(desc, sizeof(desc), "host-%u", i);
		ids[0][i] = fx_add_ca(&x, (uint8_t)w[0], desc);
	}
	for (unsigned l = 1; l <= h; l++) {
		unsigned up = l < h ? w[l] : 0;
		g_assert_cmpuint(m[l - 1] + up, <=, 254);
		ids[l] = g_new(uint32_t, N[l]);
		for (unsigned i = 0; i < N[l]; i++) {
			char desc[64];
			snprintf(desc, sizeof(desc), "L%u-%u", l, i);
			ids[l][i] = fx_add_switch(&x, (uint8_t)(m[l - 1] + up), desc);
		}
	}
	/* node (A', B') at level l-1 with A' = a + m_l * A links up to (A, B' + W_{l-1} * b) at
	 * level l for every b < w_l: its up port (down ports first) b + 1, their down port a + 1 */
	for (unsigned l = 1; l <= h; l++) {
		unsigned down_below = l >= 2 ? m[l - 2] : 0;
		for (unsigned i = 0; i < N[l - 1]; i++) {
			unsigned ap = i / W[l - 1], bp = i % W[l - 1];
			unsigned a = ap % m[l - 1], aa = ap / m[l - 1];
			for (unsigned b = 0; b < w[l - 1]; b++) {
				unsigned j = aa * W[l] + bp + W[l - 1] * b;
				fx_link(&x, ids[l - 1][i], (uint8_t)(down_below + b + 1), ids[l][j],
					(uint8_t)(a + 1));
			}
		}
	}
	for (unsigned l = 0; l <= h; l++)
		g_free(ids[l]);
	return fx_finish(&x, lmc);
}

struct fabric *fx_kary_ntree(unsigned k, unsigned n, uint8_t lmc)
{
	unsigned m[8], w[8];
	g_assert_cmpuint(n, >=, 1);
	g_assert_cmpuint(n, <=, 8);
	for (unsigned i = 0; i < n; i++) {
		m[i] = k;
		w[i] = i ? k : 1;
	}
	return fx_xgft(n, m, w, lmc);
}

uint32_t fx_switch_port(const struct ibsm_fabric *f, uint32_t sw, uint8_t num)
{
	g_assert_cmpuint(sw, <, f->n_switches);
	const struct ibsm_node *n = &f->nodes[f->switches[sw].node];
	g_assert_cmpuint(num, <=, n->nports);
	return n->port0 + num;
}

uint32_t fx_ca_port(const struct ibsm_fabric *f, uint32_t nth_ca, uint8_t num)
{
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		if (f->nodes[i].type == IBSM_SWITCH)
			continue;
		if (nth_ca-- == 0) {
			g_assert_cmpuint(num, >=, 1);
			g_assert_cmpuint(num, <=, f->nodes[i].nports);
			return f->nodes[i].port0 + num;
		}
	}
	g_assert_not_reached();
	return IBSM_NONE;
}

uint16_t fx_ca_lid(const struct fabric *f, uint32_t nth_ca)
{
	return f->ports[fx_ca_port(&f->pub, nth_ca, 1)].lid;
}

uint16_t fx_switch_lid(const struct fabric *f, uint32_t sw)
{
	return f->ports[fx_switch_port(&f->pub, sw, 0)].lid;
}

/* ---- bit sets ---------------------------------------------------------------------------- */

struct ibsm_bits fx_bits_new(uint32_t nbits)
{
	struct ibsm_bits b = { g_new0(uint64_t, (nbits + 63) / 64 + 1), nbits };
	return b;
}

void fx_bits_set(struct ibsm_bits *b, uint32_t i)
{
	g_assert_nonnull(b->w);
	g_assert_cmpuint(i, <, b->nbits);
	((uint64_t *)b->w)[i >> 6] |= 1ull << (i & 63);
}

void fx_bits_free(struct ibsm_bits *b)
{
	g_free((uint64_t *)b->w);
	b->w = NULL;
	b->nbits = 0;
}

struct ibsm_scope fx_scope_all(void)
{
	struct ibsm_scope s = { .size = sizeof(struct ibsm_scope) };
	return s;
}

/* ---- the fake core ----------------------------------------------------------------------- */

static struct fx_core *fx_of(const struct ibsm_core *core)
{
	return core->cookie;
}

static void fx_log(const struct ibsm_core *core, int level, const char *fmt, ...)
{
	static const char tag[] = "EIVD";
	va_list ap;
	va_start(ap, fmt);
	char *msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	char t = level >= 0 && level <= 3 ? tag[level] : '?';
	g_ptr_array_add(fx_of(core)->log, g_strdup_printf("%c %s", t, msg));
	if (level <= IBSM_LOG_INFO)
		g_test_message("engine log: %c %s", t, msg);
	g_free(msg);
}

static const char *fx_config(const struct ibsm_core *core, const char *key)
{
	struct fx_core *c = fx_of(core);
	g_mutex_lock(&c->asked_lock);
	g_hash_table_add(c->asked, g_strdup(key));
	g_mutex_unlock(&c->asked_lock);
	return g_hash_table_lookup(c->config, key);
}

static int fx_cancelled(const struct ibsm_core *core)
{
	struct fx_core *c = fx_of(core);
	c->cancel_calls++;
	return c->cancel;
}

static int fx_core_switch_hops(const struct ibsm_core *core, const struct ibsm_fabric *f,
			       const struct ibsm_scope *s, uint8_t *hops)
{
	fx_of(core)->hops_calls++;
	return fx_switch_hops(f, s, hops);
}

/* The core's own reader, as routing/services.c lends it (ABI 1.3). */
static int fx_read_file(const struct ibsm_core *core, const char *key, const char *path,
			char **text, size_t *len, char *why, size_t why_len)
{
	fx_of(core)->read_calls++;
	return services_read_file(key, path, text, len, why, why_len);
}

static const uint8_t *fx_last_rows(const struct ibsm_core *core, uint32_t *S, uint32_t *stride)
{
	struct fx_core *c = fx_of(core);
	c->rows_calls++;
	*S = c->rows ? c->rows_s : 0;
	*stride = c->rows ? c->rows_stride : 0;
	return c->rows;
}

void fx_core_keep_rows(struct fx_core *c, const uint8_t *rows, uint32_t S, uint32_t stride)
{
	c->core.last_rows = fx_last_rows;
	c->rows = rows;
	c->rows_s = S;
	c->rows_stride = stride;
}

struct fabric *fx_first_link_gone(const struct fabric *f, uint32_t sw_id, uint8_t lmc)
{
	const struct ibsm_switch *sw = &f->switches[sw_id];
	g_assert_cmpuint(sw->nadj, >, 0);
	struct model_builder *b = patch_builder_from(f);
	patch_unlink(b, sw->node, f->adj[sw->adj0].port);
	GError *err = NULL;
	struct fabric *f2 = model_freeze(b, 2, &err);
	g_assert_no_error(err);
	model_builder_free(b);
	fx_assign_lids(f2, lmc);
	return f2;
}

void fx_core_init(struct fx_core *c)
{
	memset(c, 0, sizeof(*c));
	c->core.size = sizeof(c->core);
	c->core.cookie = c;
	c->core.log = fx_log;
	c->core.config = fx_config;
	c->core.switch_hops = fx_core_switch_hops;
	c->core.cancelled = fx_cancelled;
	c->core.read_file = fx_read_file;
	c->config = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	c->log = g_ptr_array_new_with_free_func(g_free);
	c->asked = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_mutex_init(&c->asked_lock);
}

void fx_core_clear(struct fx_core *c)
{
	if (c->config)
		g_hash_table_destroy(c->config);
	if (c->log)
		g_ptr_array_free(c->log, TRUE);
	if (c->asked) {
		g_hash_table_destroy(c->asked);
		g_mutex_clear(&c->asked_lock);
	}
	c->config = NULL;
	c->log = NULL;
	c->asked = NULL;
}

const struct ibsm_config_key *fx_engine_key(const struct ibsm_engine *e, const char *key)
{
	for (const struct ibsm_config_key *k = e->config_keys; k && k->name; k++)
		if (!strcmp(k->name, key))
			return k;
	return NULL;
}

void fx_check_declared(struct fx_core *c, const struct ibsm_engine *e)
{
	g_assert_cmpuint(e->abi_minor, ==, IBSM_ABI_MINOR);
	g_assert_nonnull(e->summary);
	g_assert_cmpuint(strlen(e->summary), >, 10);
	g_assert_null(strchr(e->summary, '\n'));
	g_assert_nonnull(e->config_keys);
	for (const struct ibsm_config_key *k = e->config_keys; k->name; k++) {
		g_assert_nonnull(k->help);
		g_assert_null(strchr(k->help, '\n'));
	}
	g_assert_cmpuint(g_hash_table_size(c->asked), >, 0);
	char *undeclared = fx_core_undeclared(c, e);
	if (undeclared)
		g_test_message("%s reads undeclared keys: %s", e->name, undeclared);
	g_assert_null(undeclared);
}

char *fx_core_undeclared(struct fx_core *c, const struct ibsm_engine *e)
{
	GString *s = g_string_new(NULL);
	GHashTableIter it;
	gpointer key;
	g_mutex_lock(&c->asked_lock);
	g_hash_table_iter_init(&it, c->asked);
	while (g_hash_table_iter_next(&it, &key, NULL))
		if (!fx_engine_key(e, key))
			g_string_append_printf(s, "%s%s", s->len ? ", " : "", (const char *)key);
	g_mutex_unlock(&c->asked_lock);
	return g_string_free(s, s->len == 0);
}

void fx_core_set(struct fx_core *c, const char *key, const char *value)
{
	if (value)
		g_hash_table_insert(c->config, g_strdup(key), g_strdup(value));
	else
		g_hash_table_remove(c->config, key);
}

unsigned fx_core_logged(const struct fx_core *c, int level, const char *needle)
{
	static const char tag[] = "EIVD";
	unsigned n = 0;
	for (guint i = 0; i < c->log->len; i++) {
		const char *line = g_ptr_array_index(c->log, i);
		if (level >= 0 && level <= 3 && line[0] != tag[level])
			continue;
		if (strstr(line + 2, needle))
			n++;
	}
	return n;
}

/* ---- hops -------------------------------------------------------------------------------- */

int fx_switch_hops(const struct ibsm_fabric *f, const struct ibsm_scope *s, uint8_t *hops)
{
	uint32_t S = f->n_switches;
	uint32_t *queue = g_new(uint32_t, S ? S : 1);
	memset(hops, 0xFF, (size_t)S * S);
	for (uint32_t src = 0; src < S; src++) {
		uint8_t *row = hops + (size_t)src * S;
		uint32_t head = 0, tail = 0;
		row[src] = 0;
		queue[tail++] = src;
		while (head < tail) {
			uint32_t u = queue[head++];
			const struct ibsm_switch *sw = &f->switches[u];
			for (uint32_t a = sw->adj0; a < sw->adj0 + sw->nadj; a++) {
				const struct ibsm_adj *adj = &f->adj[a];
				if (row[adj->peer_sw] != 0xFF || !ibsm_scope_link(f, s, u, adj))
					continue;
				row[adj->peer_sw] = (uint8_t)(row[u] + 1);
				queue[tail++] = adj->peer_sw;
			}
		}
	}
	g_free(queue);
	return 0;
}

uint8_t *fx_switch_hops_all(const struct ibsm_fabric *f)
{
	struct ibsm_scope all = fx_scope_all();
	uint8_t *hops = g_malloc((size_t)f->n_switches * f->n_switches + 1);
	fx_switch_hops(f, &all, hops);
	return hops;
}

int fx_end_hops(const struct ibsm_fabric *f, const uint8_t *hops, uint32_t src, uint32_t dst)
{
	if (src == dst)
		return 0;
	uint32_t a = ibsm_port_switch(f, src), b = ibsm_port_switch(f, dst);
	if (a == IBSM_NONE || b == IBSM_NONE)
		return -1;
	uint8_t h = hops[(size_t)a * f->n_switches + b];
	if (h == 0xFF)
		return -1;
	return h + fx_is_ca_port(f, src) + fx_is_ca_port(f, dst);
}

/* ---- running an engine ------------------------------------------------------------------- */

const struct ibsm_engine *fx_engine_open(const char *path, GModule **module)
{
	*module = g_module_open(path, G_MODULE_BIND_LOCAL);
	if (!*module) {
		g_test_message("cannot open %s: %s", path, g_module_error());
		return NULL;
	}
	gpointer sym = NULL;
	if (!g_module_symbol(*module, "ibsm_engine", &sym) || !sym) {
		g_test_message("%s has no ibsm_engine: %s", path, g_module_error());
		g_module_close(*module);
		*module = NULL;
		return NULL;
	}
	return sym;
}

int fx_route(const struct ibsm_engine *e, struct fx_core *c, const struct ibsm_fabric *f,
	     const struct ibsm_scope *s, struct fx_run *run)
{
	struct ibsm_scope all = fx_scope_all();
	memset(run, 0, sizeof(*run));
	run->engine = e;
	run->routes.size = sizeof(run->routes);
	run->routes.stride = f->max_lid + 1;
	size_t n = (size_t)f->n_switches * run->routes.stride;
	run->routes.lft = g_malloc(n + 1);
	memset(run->routes.lft, IBSM_NO_PORT, n + 1);
	run->rc = e->setup(&c->core, &run->inst);
	if (run->rc < 0)
		return run->rc;
	run->rc = e->route(run->inst, f, s ? s : &all, &run->routes, &run->result);
	return run->rc;
}

void fx_run_clear(struct fx_run *run)
{
	if (run->result && run->engine->result_free)
		run->engine->result_free(run->result);
	if (run->inst && run->engine->teardown)
		run->engine->teardown(run->inst);
	g_free(run->routes.lft);
	memset(run, 0, sizeof(*run));
}

uint8_t fx_run_entry(const struct fx_run *run, uint32_t sw, uint32_t lid)
{
	return run->routes.lft[(size_t)sw * run->routes.stride + lid];
}

/* ---- judging ----------------------------------------------------------------------------- */

enum fx_walk fx_walk(const struct ibsm_fabric *f, const uint8_t *lft, uint32_t stride,
		     uint32_t src, uint16_t dlid, unsigned *hops)
{
	*hops = 0;
	uint32_t dst = dlid <= f->max_lid ? f->lid_port[dlid] : IBSM_NONE;
	if (src == dst)
		return FX_DELIVERED;
	const struct ibsm_port *sp = &f->ports[src];
	uint32_t node = sp->node;
	if (f->nodes[node].type != IBSM_SWITCH) {
		if (sp->peer == IBSM_NONE)
			return FX_BLACK_HOLE;
		(*hops)++;
		node = f->ports[sp->peer].node;
		if (f->nodes[node].type != IBSM_SWITCH)
			return sp->peer == dst ? FX_DELIVERED : FX_WRONG_PORT;
	}
	for (uint32_t visits = 0; visits <= f->n_switches; visits++) {
		const struct ibsm_node *n = &f->nodes[node];
		if (dlid >= stride)
			return FX_BLACK_HOLE;
		uint8_t out = lft[(size_t)n->sw * stride + dlid];
		if (out == IBSM_NO_PORT || out > n->nports)
			return FX_BLACK_HOLE;
		if (out == 0)
			return n->port0 == dst ? FX_DELIVERED : FX_WRONG_PORT;
		uint32_t peer = f->ports[n->port0 + out].peer;
		if (peer == IBSM_NONE)
			return FX_BLACK_HOLE;
		(*hops)++;
		node = f->ports[peer].node;
		if (f->nodes[node].type != IBSM_SWITCH)
			return peer == dst ? FX_DELIVERED : FX_WRONG_PORT;
	}
	return FX_LOOP;
}

void fx_walk_all(const struct ibsm_fabric *f, const uint8_t *lft, uint32_t stride,
		 struct fx_walk_stats *st)
{
	memset(st, 0, sizeof(*st));
	uint8_t *hops = fx_switch_hops_all(f);
	for (uint32_t src = 0; src < f->n_ports; src++) {
		if (!fx_is_end_port(f, src))
			continue;
		for (uint32_t lid = 1; lid <= f->max_lid; lid++) {
			uint32_t dst = f->lid_port[lid];
			if (dst == IBSM_NONE)
				continue;
			unsigned h;
			st->pairs++;
			switch (fx_walk(f, lft, stride, src, (uint16_t)lid, &h)) {
			case FX_DELIVERED:
				st->delivered++;
				if (h > st->max_hops)
					st->max_hops = h;
				if ((int)h > fx_end_hops(f, hops, src, dst))
					st->longer++;
				break;
			case FX_LOOP:
				st->loops++;
				break;
			case FX_BLACK_HOLE:
				st->black_holes++;
				break;
			case FX_WRONG_PORT:
				st->wrong++;
				break;
			}
		}
	}
	g_free(hops);
}

double fx_switch_link_load(const struct ibsm_fabric *f, const uint8_t *lft, uint32_t stride,
			   uint32_t *load, uint32_t *max)
{
	uint32_t S = f->n_switches;
	uint32_t *own = NULL;
	if (!load)
		load = own = g_new0(uint32_t, f->n_ports ? f->n_ports : 1);
	else
		memset(load, 0, f->n_ports * sizeof(*load));
	uint32_t *nca = g_new0(uint32_t, S + 1), *cnt = g_new(uint32_t, S + 1);
	uint32_t *next = g_new(uint32_t, S + 1), *indeg = g_new(uint32_t, S + 1);
	uint32_t *queue = g_new(uint32_t, S + 1);
	uint8_t *outp = g_new(uint8_t, S + 1);
	for (uint32_t p = 0; p < f->n_ports; p++)
		if (fx_is_ca_port(f, p) && ibsm_port_switch(f, p) != IBSM_NONE)
			nca[ibsm_port_switch(f, p)]++;
	for (uint32_t dst = 0; dst < f->n_ports; dst++) {
		if (!fx_is_ca_port(f, dst) || !f->ports[dst].lid || f->ports[dst].lid >= stride)
			continue;
		uint16_t lid = f->ports[dst].lid;
		uint32_t dsw = ibsm_port_switch(f, dst);
		/* one pass per destination: sources flow along the forwarding forest */
		for (uint32_t s = 0; s < S; s++) {
			next[s] = IBSM_NONE;
			indeg[s] = 0;
			cnt[s] = nca[s] - (s == dsw);
		}
		for (uint32_t s = 0; s < S; s++) {
			const struct ibsm_node *n = &f->nodes[f->switches[s].node];
			uint8_t out = lft[(size_t)s * stride + lid];
			outp[s] = out;
			if (out == IBSM_NO_PORT || out == 0 || out > n->nports)
				continue;
			uint32_t peer = f->ports[n->port0 + out].peer;
			if (peer == IBSM_NONE || f->nodes[f->ports[peer].node].type != IBSM_SWITCH)
				continue;
			next[s] = f->nodes[f->ports[peer].node].sw;
			indeg[next[s]]++;
		}
		uint32_t head = 0, tail = 0;
		for (uint32_t s = 0; s < S; s++)
			if (!indeg[s])
				queue[tail++] = s;
		while (head < tail) {
			uint32_t s = queue[head++], t = next[s];
			if (t == IBSM_NONE)
				continue;
			load[f->nodes[f->switches[s].node].port0 + outp[s]] += cnt[s];
			cnt[t] += cnt[s];
			if (--indeg[t] == 0)
				queue[tail++] = t;
		}
	}
	uint64_t sum = 0;
	uint32_t links = 0, mx = 0;
	for (uint32_t s = 0; s < S; s++) {
		const struct ibsm_switch *sw = &f->switches[s];
		uint32_t p0 = f->nodes[sw->node].port0;
		for (uint32_t a = sw->adj0; a < sw->adj0 + sw->nadj; a++) {
			uint32_t v = load[p0 + f->adj[a].port];
			sum += v;
			links++;
			if (v > mx)
				mx = v;
		}
	}
	g_free(nca);
	g_free(cnt);
	g_free(next);
	g_free(indeg);
	g_free(queue);
	g_free(outp);
	g_free(own);
	if (max)
		*max = mx;
	return links && sum ? (double)mx / ((double)sum / links) : 0.0;
}

/* ---- credit loops ---- */

struct fx_hooks {
	const struct ibsm_engine *e;
	const void *result;
};

static uint8_t fx_path_sl(const void *ctx, uint16_t slid, uint16_t dlid)
{
	const struct fx_hooks *h = ctx;
	return h->e->path_sl(h->result, 0, slid, dlid);
}

static int fx_sl2vl(const void *ctx, uint32_t in_port, uint32_t out_port, uint8_t vl[16])
{
	const struct fx_hooks *h = ctx;
	return h->e->sl2vl(h->result, in_port, out_port, vl);
}

uint32_t fx_deadlock_check_tables(const struct fabric *f, const uint8_t *lft, uint32_t stride,
				  const struct ibsm_engine *e, const void *result, unsigned flags,
				  struct deadlock_report *rep)
{
	struct fx_hooks h = { e, result };
	return deadlock_check_flags(f, lft, stride, e && e->path_sl ? fx_path_sl : NULL,
				    e && e->sl2vl ? fx_sl2vl : NULL, &h, flags, rep);
}

uint32_t fx_deadlock_check(const struct fabric *f, const struct fx_run *run,
			   struct deadlock_report *rep)
{
	return fx_deadlock_check_tables(f, run->routes.lft, run->routes.stride, run->engine,
					run->result, 0, rep);
}

uint32_t fx_deadlock_check_ca(const struct fabric *f, const struct fx_run *run,
			      struct deadlock_report *rep)
{
	return fx_deadlock_check_tables(f, run->routes.lft, run->routes.stride, run->engine,
					run->result, DEADLOCK_CA_ROUTES, rep);
}
